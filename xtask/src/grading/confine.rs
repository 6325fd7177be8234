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
//! folders are closed to others (mode 0700) and the builds run as `nobody`
//! too, not only the tests: root's compiler would read a closed folder if a
//! spelling the source check missed named one. Such a build needs a Rust
//! toolchain and cargo home `nobody` can read (the autograder's `setup.sh`
//! installs Rust so), and the target folder is lent to `nobody` for the
//! build alone, never while the student's code runs. Where none of it is
//! possible, the grade says so and the source check stands alone.

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
    /// How the builds run as that user too, where no namespace hides the
    /// folders from them ([`Confinement::check_builds`]).
    builder: Option<Builder>,
}

/// What a process runs as: the grader's own helper, a build, or a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The grader's own code (the sealed runner), in the namespace.
    Grader,
    /// cargo and the compiler, where the student's macros and constants run.
    Build,
    /// A test of the student's code.
    Test,
}

/// A build as `nobody`: the toolchain it runs, found where the grader's
/// own cargo is, so the build compiles alike.
#[derive(Debug, Clone)]
struct Builder {
    cargo_home: PathBuf,
    /// The compiler beside the grader's cargo, when there is one there:
    /// rustup's proxies on `PATH` may live in a folder `nobody` cannot open.
    rustc: Option<PathBuf>,
}

/// The cargo the grader builds with: the one that started it, else the one
/// on `PATH`.
pub fn cargo() -> std::ffi::OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
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
    /// Without `namespaces`, it grades as a machine that gives none would
    /// (`cargo xtask grade --no-namespace`, and the check of that case).
    pub fn probe(hidden: &[PathBuf], namespaces: bool) -> Confinement {
        let hidden: Vec<PathBuf> = hidden.iter().filter(|dir| dir.is_dir()).cloned().collect();
        let root = is_root();
        let user = if root { nobody() } else { None };
        let mut confinement = Confinement {
            hidden,
            mount: None,
            user,
            builder: None,
        };
        let ways: &[Namespace] = match (namespaces, root) {
            (false, _) => &[],
            (true, true) => &[Namespace::Root],
            (true, false) => &[Namespace::Mapped],
        };
        for &way in ways {
            confinement.mount = Some(way);
            let works = confinement
                .command("true", Role::Grader)
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
            builder: None,
        }
    }

    /// Only the user switch: the runner's confinement, already inside the
    /// namespace the grader made ([`crate::grading::runner`]).
    pub fn user_only(user: Option<(u32, u32)>) -> Confinement {
        Confinement {
            hidden: Vec::new(),
            mount: None,
            user: user.map(|(uid, gid)| User { uid, gid }),
            builder: None,
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

    /// A command running `program` confined in its `role`: in the
    /// namespace where the held-back folders are empty, and, for a test, as
    /// the unprivileged user; without a namespace, a build runs as that user
    /// too when it can ([`Confinement::check_builds`]). The caller adds the
    /// program's arguments.
    pub fn command(&self, program: impl AsRef<OsStr>, role: Role) -> Command {
        let user = self.user.filter(|_| role == Role::Test);
        let Some(namespace) = self.mount else {
            let builder = self.builder.as_ref().filter(|_| role == Role::Build);
            let user = user.or(builder.and(self.user));
            let mut command = Command::new(program);
            if let Some(builder) = builder {
                command.env("CARGO_HOME", &builder.cargo_home);
                if let Some(rustc) = &builder.rustc {
                    command.env("RUSTC", rustc);
                }
            }
            // Only ever found on Unix (`nobody`).
            #[cfg(unix)]
            if let Some(user) = user {
                use std::os::unix::process::CommandExt;
                // std drops root's supplementary groups with the switch.
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
            .command(binary, Role::Test)
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

    /// Where no namespace hides the held-back folders but the grader is
    /// root, whether the builds can run as `nobody` (its cargo reads the
    /// workspace and the cargo home, and its compiler starts). If not, they
    /// run as the grader (and [`Confinement::describe`] says so).
    pub fn check_builds(&mut self, workspace: &Path) {
        if self.mount.is_some() || self.user.is_none() || !self.hides() {
            return;
        }
        let cargo = cargo();
        let cargo_home = std::env::var_os("CARGO_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")));
        let Some(cargo_home) = cargo_home else {
            return;
        };
        let rustc = Path::new(&cargo)
            .parent()
            .map(|bin| bin.join("rustc"))
            .filter(|rustc| rustc.is_absolute() && rustc.is_file());
        self.builder = Some(Builder {
            cargo_home,
            rustc: rustc.clone(),
        });
        let runs = |mut command: Command| {
            command
                .current_dir(workspace)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|status| status.success())
        };
        let lent = self.lend(&[workspace]);
        let mut metadata = self.command(&cargo, Role::Build);
        metadata.args(["metadata", "--offline", "--format-version", "1"]);
        let mut version = self.command(
            rustc.map_or("rustc".into(), PathBuf::into_os_string),
            Role::Build,
        );
        version.arg("-vV");
        let builds = lent.is_ok() && runs(metadata) && runs(version);
        if lent.and_then(Lent::give_back).is_err() || !builds {
            self.builder = None;
        }
    }

    /// Lends `folders` (the workspace, whose `Cargo.lock` cargo may
    /// rewrite, and the target folder) to the user the builds run as, if
    /// they run as one, until [`Lent::give_back`]. Never while the
    /// student's code runs: a test that could write the target folder could
    /// leave a compiled macro there for the next build to load.
    pub fn lend(&self, folders: &[&Path]) -> Result<Lent, String> {
        let mut lent = Lent {
            folders: Vec::new(),
        };
        #[cfg(unix)]
        if let (Some(user), Some(_)) = (self.user, &self.builder) {
            use std::os::unix::fs::MetadataExt;
            for folder in folders {
                fs::create_dir_all(folder).map_err(|e| format!("{}: {e}", folder.display()))?;
                let meta =
                    fs::metadata(folder).map_err(|e| format!("{}: {e}", folder.display()))?;
                lent.folders
                    .push((folder.to_path_buf(), meta.uid(), meta.gid()));
                own(folder, user.uid, user.gid)?;
            }
        }
        #[cfg(not(unix))]
        let _ = folders;
        Ok(lent)
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
            (true, None) if self.user.is_some() && self.builder.is_some() => format!(
                "{SEALED_BUILD} ran as `nobody`, who cannot read the held-back folders, closed to others (this machine gives no mount namespace)"
            ),
            (true, None) if self.user.is_some() => format!(
                "out of reach of the code graded when it runs: the held-back folders are closed to others{user} (its build ran as the grader, kept from them by the source check alone: this machine gives no mount namespace, and `nobody` cannot run its Rust toolchain; install Rust where others can read it, as the autograder's setup.sh does)"
            ),
            (true, None) => "kept from the code graded by the source check alone: this machine gives no mount namespace, and the tests cannot run as `nobody` (the grader is not root, or `nobody` cannot reach the test binary)".to_owned(),
        }
    }
}

/// Whether the grader runs as root: the owner of its own `/proc/self`
/// (Linux; elsewhere there is none, and nothing is switched).
#[cfg(unix)]
pub fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    fs::metadata("/proc/self").is_ok_and(|meta| meta.uid() == 0)
}

/// Never, off Unix: nothing is switched.
#[cfg(not(unix))]
pub fn is_root() -> bool {
    false
}

/// Whether `nobody` can run the compiler beside the grader's cargo, where
/// the grader is root: `None` elsewhere, where no build switches users.
pub fn nobody_runs_rustc() -> Option<bool> {
    let user = nobody().filter(|_| is_root())?;
    let rustc = Path::new(&cargo()).with_file_name("rustc");
    let mut command = Command::new(rustc);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        command.uid(user.uid).gid(user.gid);
    }
    Some(
        command
            .arg("-vV")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success()),
    )
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

/// Folders lent to `nobody` while a build as `nobody` writes to them.
#[derive(Debug)]
pub struct Lent {
    /// Each folder lent, with its owner before.
    folders: Vec<(PathBuf, u32, u32)>,
}

impl Lent {
    /// Gives the folders back to their owners, with all the build wrote
    /// there.
    pub fn give_back(mut self) -> Result<(), String> {
        self.folders
            .drain(..)
            .try_for_each(|(folder, uid, gid)| own(&folder, uid, gid))
    }
}

impl Drop for Lent {
    /// Given back on every path out, an error's too.
    fn drop(&mut self) {
        for (folder, uid, gid) in self.folders.drain(..) {
            let _ = own(&folder, uid, gid);
        }
    }
}

/// Makes `uid:gid` the owner of `path` and of everything under it, links
/// themselves, not what they point to.
#[cfg(unix)]
fn own(path: &Path, uid: u32, gid: u32) -> Result<(), String> {
    std::os::unix::fs::lchown(path, Some(uid), Some(gid))
        .map_err(|e| format!("cannot change the owner of {}: {e}", path.display()))?;
    let meta = fs::symlink_metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if meta.is_dir() {
        for entry in fs::read_dir(path).map_err(|e| format!("{}: {e}", path.display()))? {
            let entry = entry.map_err(|e| format!("{}: {e}", path.display()))?;
            own(&entry.path(), uid, gid)?;
        }
    }
    Ok(())
}

#[cfg(not(unix))]
fn own(_: &Path, _: u32, _: u32) -> Result<(), String> {
    Ok(())
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

    /// A folder lent to `nobody` for a build is `nobody`'s, all it holds
    /// too, and goes back to its owner when given back or dropped, what the
    /// build wrote included.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_lent_folder_goes_back_to_its_owner() {
        use std::os::unix::fs::MetadataExt;
        let Some(user) = nobody().filter(|_| is_root()) else {
            eprintln!("not root: nothing is lent");
            return;
        };
        let dir = std::env::temp_dir().join(format!("lend-test-{}", std::process::id()));
        fs::create_dir_all(dir.join("deps")).unwrap();
        fs::write(dir.join("deps/lib.rlib"), "").unwrap();
        let confinement = Confinement {
            hidden: vec![dir.clone()],
            mount: None,
            user: Some(user),
            builder: Some(Builder {
                cargo_home: dir.clone(),
                rustc: None,
            }),
        };
        let owner = |path: &Path| fs::symlink_metadata(path).unwrap().uid();
        for give_back in [true, false] {
            let lent = confinement.lend(&[&dir]).unwrap();
            assert_eq!(owner(&dir.join("deps/lib.rlib")), user.uid);
            fs::write(dir.join("deps/written.rlib"), "").unwrap();
            if give_back {
                lent.give_back().unwrap();
            } else {
                drop(lent);
            }
            for path in [
                &dir,
                &dir.join("deps/lib.rlib"),
                &dir.join("deps/written.rlib"),
            ] {
                assert_eq!(owner(path), 0, "{}", path.display());
            }
        }
        // Nothing is lent where the builds run as the grader.
        let lent = Confinement::user_only(Some((user.uid, user.gid)))
            .lend(&[&dir])
            .unwrap();
        assert_eq!(owner(&dir), 0);
        lent.give_back().unwrap();
        fs::remove_dir_all(&dir).unwrap();
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
        let confinement = Confinement::probe(std::slice::from_ref(&secret), true);
        let root = is_root();
        assert!(
            confinement.mount.is_some() || !root,
            "root, yet no mount namespace: {}",
            confinement.describe()
        );
        if confinement.mount.is_some() {
            let listed = confinement
                .command("ls", Role::Build)
                .arg("-A")
                .arg(&secret)
                .output()
                .unwrap();
            assert!(listed.status.success(), "{listed:?}");
            assert_eq!(String::from_utf8_lossy(&listed.stdout), "");
            assert!(confinement.describe().starts_with(SEALED_BUILD));
            // A test, as `nobody` where the grader is root, reads nothing.
            let read = confinement
                .command("cat", Role::Test)
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
