//! What a submission hands in, and what of it the grader takes.
//!
//! Only the student's `starter/src/*.rs` is ever graded; the grader builds
//! it with its own manifests, its own suite and its own tools. Anything else
//! a student repository changed is listed as not graded, so that an edited
//! manifest, a `build.rs`, an edited test or a file the crate could include
//! is seen by the instructor and can change nothing.

use std::fs;
use std::path::{Path, PathBuf};

/// The first line of a provided file of the starter (one with nothing of
/// the student's in it): a grade takes the kit's copy of such a file, and a
/// student's edit to it is listed as not graded ([`provided`]).
pub const PROVIDED_FILE: &str = "// PROVIDED FILE:";

/// Folders of a student repository that are never looked at: build output
/// and git's own files.
const SKIPPED: &[&str] = &["target", ".git"];

/// The sources to grade and what was handed in beside them.
pub struct Submission {
    /// The folder whose `*.rs` files are graded.
    pub src: PathBuf,
    /// How the report names that folder (`starter/src`).
    pub shown: String,
    /// Files handed in that the grader does not use, each with why.
    pub ignored: Vec<String>,
}

/// Reads the submission at `dir`: a student repository (its `starter/src`),
/// or a crate of the lab's API (its `src`, as for the solution), checked
/// against the kit at `root`.
pub fn read(dir: &Path, root: &Path) -> Result<Submission, String> {
    if dir.join("starter/src/lib.rs").is_file() {
        let mut ignored = Vec::new();
        audit(
            &dir.join("starter"),
            &root.join("starter"),
            "starter",
            &mut ignored,
        )?;
        audit(
            &dir.join("tests"),
            &root.join("tests"),
            "tests",
            &mut ignored,
        )?;
        for file in ["build.rs", "starter/build.rs"] {
            if dir.join(file).exists() && !ignored.iter().any(|line| line.starts_with(file)) {
                ignored.push(format!("{file}: build scripts are not run"));
            }
        }
        ignored.sort();
        return Ok(Submission {
            src: dir.join("starter/src"),
            shown: "starter/src".to_owned(),
            ignored,
        });
    }
    if dir.join("src/lib.rs").is_file() {
        return Ok(Submission {
            src: dir.join("src"),
            shown: "src".to_owned(),
            ignored: Vec::new(),
        });
    }
    Err(format!(
        "{} has neither starter/src/lib.rs nor src/lib.rs: grade a student repository made by `just export-student`",
        dir.display()
    ))
}

/// Lists in `ignored` every file under `theirs` that differs from the same
/// file under `ours`, except the graded `src/*.rs` directly in `starter`.
fn audit(theirs: &Path, ours: &Path, shown: &str, ignored: &mut Vec<String>) -> Result<(), String> {
    if !theirs.is_dir() {
        return Ok(());
    }
    let mut entries: Vec<_> = fs::read_dir(theirs)
        .map_err(|e| format!("cannot read {}: {e}", theirs.display()))?
        .filter_map(Result::ok)
        .collect();
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        if SKIPPED.contains(&name.as_str()) {
            continue;
        }
        let path = entry.path();
        let label = format!("{shown}/{name}");
        if path.is_dir() {
            audit(&path, &ours.join(&name), &label, ignored)?;
            continue;
        }
        let in_src = shown == "starter/src" || shown.starts_with("starter/src/");
        let graded = in_src && name.ends_with(".rs");
        if graded {
            continue;
        }
        let why = match fs::read(ours.join(&name)) {
            Ok(kit) if fs::read(&path).is_ok_and(|bytes| bytes == kit) => continue,
            Ok(_) => "edited; the grader uses its own copy",
            Err(_) if in_src => "only the `.rs` files under starter/src are graded",
            Err(_) => "not in the handout; the grader uses its own files",
        };
        ignored.push(format!("{label}: {why}"));
    }
    Ok(())
}

/// The sources a grade compiles, laid out in `into`: the submission's
/// `*.rs` files in `src`, except that every provided file of the kit's
/// starter (`kit_src`, each opening with [`PROVIDED_FILE`]) is the kit's
/// copy. Returns what was set aside: each provided file the submission
/// changed, as a line for "Not graded".
pub fn assemble(
    src: &Path,
    shown: &str,
    kit_src: &Path,
    into: &Path,
) -> Result<Vec<String>, String> {
    if into.exists() {
        fs::remove_dir_all(into).map_err(|e| format!("{}: {e}", into.display()))?;
    }
    fs::create_dir_all(into).map_err(|e| format!("{}: {e}", into.display()))?;
    let mut replaced = Vec::new();
    for (name, file) in sources(src)? {
        match file {
            Source::Link => replaced.push(format!(
                "{shown}/{name}: a symbolic link; only files are graded"
            )),
            Source::File => {
                let text = fs::read(src.join(&name)).map_err(|e| format!("{name}: {e}"))?;
                let to = into.join(&name);
                if let Some(folder) = to.parent() {
                    fs::create_dir_all(folder).map_err(|e| e.to_string())?;
                }
                fs::write(&to, text).map_err(|e| e.to_string())?;
            }
        }
    }
    for (name, kit) in provided(kit_src)? {
        let theirs = fs::read_to_string(into.join(&name)).ok();
        if theirs.as_deref() != Some(kit.as_str()) {
            replaced.push(format!(
                "{shown}/{name}: {}; the grader uses the kit's copy",
                if theirs.is_some() {
                    "a provided file, edited"
                } else {
                    "a provided file, missing"
                }
            ));
            crate::scratch::write_file(into, &name, &kit)?;
        }
    }
    replaced.sort();
    Ok(replaced)
}

/// The provided files of the kit's starter sources `kit_src`, by name,
/// with their text.
pub fn provided(kit_src: &Path) -> Result<Vec<(String, String)>, String> {
    let mut found = Vec::new();
    for name in crate::scratch::rs_files(kit_src)? {
        let text = fs::read_to_string(kit_src.join(&name)).map_err(|e| format!("{name}: {e}"))?;
        if text.starts_with(PROVIDED_FILE) {
            found.push((name, text));
        }
    }
    Ok(found)
}

/// What a `.rs` path of a submission is.
#[derive(Debug, PartialEq, Eq)]
enum Source {
    File,
    /// A symbolic link, to a file or a folder: never followed, since a link
    /// could make any file of the grading machine a file of the crate.
    Link,
}

/// Every `.rs` file of the submission's `src` and of its folders, by its
/// path from `src` (`breaker/circuit.rs`), sorted, and every symbolic link
/// there, which is listed and never followed.
fn sources(src: &Path) -> Result<Vec<(String, Source)>, String> {
    fn walk(dir: &Path, prefix: &str, out: &mut Vec<(String, Source)>) -> Result<(), String> {
        let entries =
            fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        for entry in entries.filter_map(Result::ok) {
            let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
            // The entry's own type, not its target's.
            let file_type = entry.file_type().map_err(|e| e.to_string())?;
            if file_type.is_symlink() {
                out.push((name, Source::Link));
            } else if file_type.is_dir() {
                walk(&entry.path(), &format!("{name}/"), out)?;
            } else if file_type.is_file() && name.ends_with(".rs") {
                out.push((name, Source::File));
            }
        }
        Ok(())
    }
    let mut found = Vec::new();
    walk(src, "", &mut found)?;
    found.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_starter_src_rs_is_taken_and_every_other_change_is_listed() {
        let scratch = std::env::temp_dir().join(format!("xtask-submission-{}", std::process::id()));
        let (kit, student) = (scratch.join("kit"), scratch.join("student"));
        for (dir, manifest, test) in [
            (&kit, "[package]\n", "#[test] fn t() {}\n"),
            (
                &student,
                "[package]\nbuild = \"build.rs\"\n",
                "#[test] fn t() { return; }\n",
            ),
        ] {
            fs::create_dir_all(dir.join("starter/src/deep")).unwrap();
            fs::create_dir_all(dir.join("tests/lab")).unwrap();
            fs::write(dir.join("starter/Cargo.toml"), manifest).unwrap();
            fs::write(dir.join("starter/src/lib.rs"), "// lib\n").unwrap();
            fs::write(dir.join("tests/lab/step1.rs"), test).unwrap();
            fs::write(dir.join("tests/lab/same.rs"), "same\n").unwrap();
        }
        fs::write(student.join("starter/src/lib.rs"), "// the student's own\n").unwrap();
        fs::write(student.join("starter/build.rs"), "fn main() {}\n").unwrap();
        fs::write(student.join("starter/src/deep/more.rs"), "\n").unwrap();
        fs::write(student.join("starter/src/notes.txt"), "\n").unwrap();
        fs::create_dir_all(student.join("target/debug")).unwrap();
        fs::write(student.join("target/debug/x"), "\n").unwrap();
        let submission = read(&student, &kit).unwrap();
        assert_eq!(submission.src, student.join("starter/src"));
        assert_eq!(
            submission.ignored,
            [
                "starter/Cargo.toml: edited; the grader uses its own copy",
                "starter/build.rs: not in the handout; the grader uses its own files",
                "starter/src/notes.txt: only the `.rs` files under starter/src are graded",
                "tests/lab/step1.rs: edited; the grader uses its own copy",
            ]
        );
        fs::remove_dir_all(&scratch).unwrap();
    }

    #[test]
    fn a_provided_file_is_always_the_kits_and_an_edit_to_it_is_listed() {
        let scratch = std::env::temp_dir().join(format!("xtask-assemble-{}", std::process::id()));
        let (kit, theirs, into) = (
            scratch.join("kit"),
            scratch.join("theirs"),
            scratch.join("into"),
        );
        fs::create_dir_all(&kit).unwrap();
        fs::create_dir_all(&theirs).unwrap();
        let clock = format!("{PROVIDED_FILE} the kit's\npub struct Clock;\n");
        let state =
            format!("{PROVIDED_FILE} the kit's\n#[derive(PartialEq)]\npub enum State {{}}\n");
        fs::write(kit.join("clock.rs"), &clock).unwrap();
        fs::write(kit.join("state.rs"), &state).unwrap();
        fs::write(kit.join("circuit.rs"), "// TODO(1): yours\n").unwrap();
        fs::create_dir_all(kit.join("time")).unwrap();
        fs::create_dir_all(theirs.join("time")).unwrap();
        fs::write(kit.join("time/sleeper.rs"), &clock).unwrap();
        fs::write(theirs.join("time/sleeper.rs"), "// edited\n").unwrap();
        fs::create_dir_all(theirs.join("breaker")).unwrap();
        fs::write(theirs.join("breaker/helpers.rs"), "// theirs too\n").unwrap();
        fs::write(theirs.join("clock.rs"), &clock).unwrap();
        fs::write(
            theirs.join("state.rs"),
            "impl PartialEq for State { fn eq(&self, _: &Self) -> bool { true } }\n",
        )
        .unwrap();
        fs::write(theirs.join("circuit.rs"), "// done\n").unwrap();
        fs::write(theirs.join("helpers.rs"), "// theirs\n").unwrap();
        let replaced = assemble(&theirs, "starter/src", &kit, &into).unwrap();
        assert_eq!(
            replaced,
            [
                "starter/src/state.rs: a provided file, edited; the grader uses the kit's copy",
                "starter/src/time/sleeper.rs: a provided file, edited; the grader uses the kit's copy",
            ]
        );
        assert_eq!(fs::read_to_string(into.join("state.rs")).unwrap(), state);
        assert_eq!(
            fs::read_to_string(into.join("time/sleeper.rs")).unwrap(),
            clock
        );
        assert_eq!(
            fs::read_to_string(into.join("breaker/helpers.rs")).unwrap(),
            "// theirs too\n"
        );
        assert_eq!(
            fs::read_to_string(into.join("circuit.rs")).unwrap(),
            "// done\n"
        );
        assert_eq!(
            fs::read_to_string(into.join("helpers.rs")).unwrap(),
            "// theirs\n"
        );
        fs::remove_file(theirs.join("clock.rs")).unwrap();
        let replaced = assemble(&theirs, "starter/src", &kit, &into).unwrap();
        assert_eq!(replaced.len(), 3, "{replaced:?}");
        assert_eq!(fs::read_to_string(into.join("clock.rs")).unwrap(), clock);
        fs::remove_dir_all(&scratch).unwrap();
    }

    /// A link in the submission could make any file of the grading machine
    /// (a held-back test, say) a source of the crate, and its lines would
    /// show in the compiler's errors as the student's own.
    #[cfg(unix)]
    #[test]
    fn a_linked_source_is_never_graded_and_is_listed() {
        let scratch = std::env::temp_dir().join(format!("xtask-links-{}", std::process::id()));
        let (kit, theirs, into, secret) = (
            scratch.join("kit"),
            scratch.join("theirs"),
            scratch.join("into"),
            scratch.join("secret.rs"),
        );
        fs::create_dir_all(&kit).unwrap();
        fs::create_dir_all(&theirs).unwrap();
        fs::write(&secret, "fn held_back_case() {}\n").unwrap();
        std::os::unix::fs::symlink(&secret, theirs.join("circuit.rs")).unwrap();
        // A linked folder is not entered either: its files would be the
        // linked place's.
        std::os::unix::fs::symlink(&scratch, theirs.join("breaker")).unwrap();
        let replaced = assemble(&theirs, "starter/src", &kit, &into).unwrap();
        assert_eq!(
            replaced,
            [
                "starter/src/breaker: a symbolic link; only files are graded",
                "starter/src/circuit.rs: a symbolic link; only files are graded",
            ]
        );
        assert!(!into.join("circuit.rs").exists());
        assert!(!into.join("breaker").exists());
        fs::remove_dir_all(&scratch).unwrap();
    }
}
