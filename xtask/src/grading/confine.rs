//! Confinement: what the processes that run a student's code can reach.
//!
//! The source check refuses every spelling of the file system the lab never
//! needs, but a list of names is only as good as its last entry. So a grade
//! also keeps the held-back tests out of reach whatever the spelling: the
//! student's crate is built before any held-back test is in the grading
//! workspace, the copies are removed again once the suite is built, and
//! every process that runs the student's code (that first build, where
//! macros and constants run, and each test) runs in a mount namespace in
//! which the kit's held-back folders are empty: a read-only `tmpfs` lies
//! over each (the build has one of its own; the tests share the sealed
//! run's, [`crate::grading::runner`]). As root, each test then runs as
//! `nobody`, who can neither lift those mounts nor read a folder closed to
//! others.
//!
//! The namespace needs `unshare` (util-linux) and the right to mount: root,
//! or a kernel that lets users make their own namespaces. Where neither is
//! there but the grader is root (a container without `CAP_SYS_ADMIN`), the
//! folders are closed to others (mode 0700) and the tests run as `nobody`;
//! where none of it is possible, the grade says so and the source check
//! stands alone.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// How [`Confinement::describe`] begins when the student's build and tests
/// ran where no held-back test can be reached.
pub const SEALED_BUILD: &str = "out of reach of the code graded: its build and tests";

/// How a grade keeps the held-back tests from the code it grades.
#[derive(Debug, Clone)]
pub struct Confinement {
    /// The folders the code must not see.
    hidden: Vec<PathBuf>,
    /// How to enter a mount namespace that hides them, if the machine has
    /// one to give.
    mount: Option<Namespace>,
    /// The user each test runs as, when the grader is root.
    user: Option<User>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Namespace {
    /// The grader is root: a mount namespace of its own.
    Root,
    /// A user namespace first, mapping the grader's user to root inside.
    Mapped,
}

impl Namespace {
    fn args(self) -> &'static [&'static str] {
        match self {
            Namespace::Root => &["--mount", "--propagation", "private"],
            Namespace::Mapped => &[
                "--user",
                "--map-root-user",
                "--mount",
                "--propagation",
                "private",
            ],
        }
    }
}

/// An unprivileged user: `nobody`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct User {
    uid: u32,
    gid: u32,
}

impl Confinement {
    /// What this machine allows, for the folders of `hidden` that exist.
    pub fn probe(hidden: &[PathBuf]) -> Confinement {
        let hidden: Vec<PathBuf> = hidden.iter().filter(|dir| dir.is_dir()).cloned().collect();
        let root = is_root();
        let user = if root { nobody() } else { None };
        let mut confinement = Confinement {
            hidden,
            mount: None,
            user,
        };
        let ways: &[Namespace] = if root {
            &[Namespace::Root]
        } else {
            &[Namespace::Mapped]
        };
        for &way in ways {
            confinement.mount = Some(way);
            let works = confinement
                .command("true", false)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|status| status.success());
            if works {
                return confinement;
            }
        }
        confinement.mount = None;
        confinement
    }

    /// Nothing hidden, nobody switched: the grade of a tree without
    /// held-back tests, and the unit tests' grades.
    pub fn none() -> Confinement {
        Confinement {
            hidden: Vec::new(),
            mount: None,
            user: None,
        }
    }

    /// Only the user switch: the runner's confinement, already inside the
    /// namespace the grader made ([`crate::grading::runner`]).
    pub fn user_only(user: Option<(u32, u32)>) -> Confinement {
        Confinement {
            hidden: Vec::new(),
            mount: None,
            user: user.map(|(uid, gid)| User { uid, gid }),
        }
    }

    /// Whether the processes it starts enter a mount namespace.
    pub fn namespaced(&self) -> bool {
        self.mount.is_some()
    }

    /// The user each test runs as, `(uid, gid)`, if it switches users.
    pub fn test_user(&self) -> Option<(u32, u32)> {
        self.user.map(|user| (user.uid, user.gid))
    }

    /// The folders to hide, if the grade hides any.
    pub fn hides(&self) -> bool {
        !self.hidden.is_empty()
    }

    /// Closes the hidden folders to other users when only the user switch
    /// keeps them out of reach (no namespace to hide them in).
    pub fn close(&self) -> Result<(), String> {
        if self.mount.is_some() || self.user.is_none() {
            return Ok(());
        }
        #[cfg(unix)]
        for dir in &self.hidden {
            use std::os::unix::fs::PermissionsExt;
            let mut permissions = fs::metadata(dir)
                .map_err(|e| format!("{}: {e}", dir.display()))?
                .permissions();
            permissions.set_mode(0o700);
            fs::set_permissions(dir, permissions)
                .map_err(|e| format!("cannot close {} to others: {e}", dir.display()))?;
        }
        Ok(())
    }

    /// A command running `program` confined: in the namespace where the
    /// held-back folders are empty, and, for a test (`as_test`), as the
    /// unprivileged user. The caller adds the program's arguments.
    pub fn command(&self, program: impl AsRef<OsStr>, as_test: bool) -> Command {
        let user = self.user.filter(|_| as_test);
        let Some(namespace) = self.mount else {
            let mut command = Command::new(program);
            // Only ever found on Unix (`nobody`).
            #[cfg(unix)]
            if let Some(user) = user {
                use std::os::unix::process::CommandExt;
                command.uid(user.uid).gid(user.gid);
            }
            return command;
        };
        // In the namespace: each folder covered, then the user dropped (after
        // the mounts, which need root), then the program in this process's
        // place, so its process group and its exit are the command's.
        let mut script = String::from("set -e\n");
        for dir in &self.hidden {
            script.push_str(&format!(
                "mount -t tmpfs -o ro,mode=000,size=4k held-back {}\n",
                quoted(dir)
            ));
        }
        match user {
            Some(user) => script.push_str(&format!(
                "exec setpriv --reuid={} --regid={} --clear-groups -- \"$@\"\n",
                user.uid, user.gid
            )),
            None => script.push_str("exec \"$@\"\n"),
        }
        let mut command = Command::new("unshare");
        command
            .args(namespace.args())
            .args(["--", "sh", "-c", &script, "confined"])
            .arg(program);
        command
    }

    /// Whether `binary` runs as a test would, confined: the user switch
    /// needs every folder above it open to others. If it does not run, the
    /// tests run as the grader's own user (and [`Confinement::describe`]
    /// says so).
    pub fn check_runs(&mut self, binary: &Path, workspace: &Path) {
        if self.user.is_none() {
            return;
        }
        let runs = self
            .command(binary, true)
            .current_dir(workspace)
            .args(["--list", "--format", "terse"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success());
        if !runs {
            self.user = None;
        }
    }

    /// One line for the grade's summary: how the held-back tests were kept
    /// from the code graded.
    pub fn describe(&self) -> String {
        let user = if self.user.is_some() {
            "; each test ran as `nobody`"
        } else {
            ""
        };
        match (self.hides(), self.mount) {
            (false, _) => "no held-back tests to hide".to_owned(),
            (true, Some(_)) => format!(
                "{SEALED_BUILD} ran in a mount namespace where the held-back folders are empty{user}"
            ),
            (true, None) if self.user.is_some() => format!(
                "out of reach of the code graded when it runs: the held-back folders are closed to others{user} (its build is kept from them by the source check alone: this machine gives no mount namespace)"
            ),
            (true, None) => "kept from the code graded by the source check alone: this machine gives no mount namespace, and the tests cannot run as `nobody` (the grader is not root, or `nobody` cannot reach the test binary)".to_owned(),
        }
    }
}

/// Whether the grader runs as root: the owner of its own `/proc/self`
/// (Linux; elsewhere there is none, and nothing is switched).
#[cfg(unix)]
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    fs::metadata("/proc/self").is_ok_and(|meta| meta.uid() == 0)
}

/// Never, off Unix: nothing is switched.
#[cfg(not(unix))]
fn is_root() -> bool {
    false
}

/// `nobody`'s user and group, from `/etc/passwd`.
fn nobody() -> Option<User> {
    let passwd = fs::read_to_string("/etc/passwd").ok()?;
    let line = passwd.lines().find(|line| line.starts_with("nobody:"))?;
    let mut fields = line.split(':').skip(2);
    let uid = fields.next()?.parse().ok()?;
    let gid = fields.next()?.parse().ok()?;
    (uid != 0).then_some(User { uid, gid })
}

/// `path` in single quotes for `sh`.
fn quoted(path: &Path) -> String {
    format!("'{}'", path.to_string_lossy().replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_quoted_for_the_shell_whatever_it_holds() {
        assert_eq!(quoted(Path::new("/a b/c")), "'/a b/c'");
        assert_eq!(quoted(Path::new("/it's")), "'/it'\\''s'");
    }

    /// Where the machine gives a namespace, a confined process finds the
    /// hidden folder empty, and one outside still sees its file.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_confined_process_finds_the_hidden_folder_empty() {
        let dir = std::env::temp_dir().join(format!("confine-test-{}", std::process::id()));
        let secret = dir.join("held-back");
        fs::create_dir_all(&secret).unwrap();
        fs::write(secret.join("step01.rs"), "secret").unwrap();
        let confinement = Confinement::probe(std::slice::from_ref(&secret));
        let root = is_root();
        assert!(
            confinement.mount.is_some() || !root,
            "root, yet no mount namespace: {}",
            confinement.describe()
        );
        if confinement.mount.is_some() {
            let listed = confinement
                .command("ls", false)
                .arg("-A")
                .arg(&secret)
                .output()
                .unwrap();
            assert!(listed.status.success(), "{listed:?}");
            assert_eq!(String::from_utf8_lossy(&listed.stdout), "");
            assert!(confinement.describe().starts_with(SEALED_BUILD));
            // A test, as `nobody` where the grader is root, reads nothing.
            let read = confinement
                .command("cat", true)
                .arg(secret.join("step01.rs"))
                .output()
                .unwrap();
            assert!(!read.status.success(), "{read:?}");
            assert!(!String::from_utf8_lossy(&read.stdout).contains("secret"));
        } else {
            eprintln!(
                "no mount namespace on this machine: {}",
                confinement.describe()
            );
        }
        assert!(secret.join("step01.rs").is_file());
        fs::remove_dir_all(&dir).unwrap();
    }
}
