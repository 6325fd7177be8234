//! What a submission hands in, and what of it the grader takes.
//!
//! Only the student's `starter/src/*.rs` is ever graded; the grader builds
//! it with its own manifests, its own suite and its own tools. Anything else
//! a student repository changed is listed as not graded, so that an edited
//! manifest, a `build.rs`, an edited test or a file the crate could include
//! is seen by the instructor and can change nothing.

use std::fs;
use std::path::{Path, PathBuf};

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
        let graded = shown == "starter/src" && name.ends_with(".rs");
        if graded {
            continue;
        }
        let why = match fs::read(ours.join(&name)) {
            Ok(kit) if fs::read(&path).is_ok_and(|bytes| bytes == kit) => continue,
            Ok(_) => "edited; the grader uses its own copy",
            Err(_) if shown.starts_with("starter/src") => "only starter/src/*.rs is graded",
            Err(_) => "not in the handout; the grader uses its own files",
        };
        ignored.push(format!("{label}: {why}"));
    }
    Ok(())
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
                "starter/src/deep/more.rs: only starter/src/*.rs is graded",
                "starter/src/notes.txt: only starter/src/*.rs is graded",
                "tests/lab/step1.rs: edited; the grader uses its own copy",
            ]
        );
        fs::remove_dir_all(&scratch).unwrap();
    }
}
