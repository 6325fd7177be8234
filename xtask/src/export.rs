//! `cargo xtask export-student DIR`: the student edition, a standalone
//! repository without the answers.
//!
//! It holds the starter as the crate students edit, the shared suite
//! byte for byte, LAB.md without its instructors' part, the demo running on
//! the starter, the tools students use (`test`, `progress`, `grade`) and a
//! `Cargo.lock` trimmed to what is left; `student/` supplies the files only
//! the student edition has (README, justfile, cargo aliases, the grading
//! workflow, the tools' `main.rs`). It leaves out `solution/`, `mistakes/`,
//! the benchmarks (they measure the solution), the instructors' tools and
//! this repository's history. [`crate::leak`] then proves that no line of
//! reference code made it in, and the result is committed once in a fresh
//! git repository.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::leak;
use crate::root;
use crate::scratch::copy_tree;

/// The tools' modules a student edition needs; the others generate the
/// starter or check the solution, and some of them quote its markers.
const STUDENT_TOOLS: &[&str] = &[
    "filter.rs",
    "grade.rs",
    "held_back.rs",
    "hint.rs",
    "lab.rs",
    "progress.rs",
    "report.rs",
    "scoreboard.rs",
    "scratch.rs",
    "suite.rs",
    "test.rs",
    "weights.rs",
    "workspace_root.rs",
];

/// LAB.md paragraphs that mention any of these point at what the student
/// edition does not have, so they are left out.
const INSTRUCTOR_ONLY: &[&str] = &[
    "solution/",
    "mistakes/",
    "check-mistakes",
    "check-starter",
    "sync-starter",
    "test-solution",
    "accept-snapshots",
];

pub(crate) fn export_student(args: &[String]) -> Result<(), String> {
    let [dir] = args else {
        return Err("usage: cargo xtask export-student DIR".to_owned());
    };
    let dir = Path::new(dir);
    export(dir)?;
    println!(
        "Student edition written to {}: one commit, no answers.",
        dir.display()
    );
    println!(
        "Check it: cd {} && just test   (or: cargo test --test lab)",
        dir.display()
    );
    Ok(())
}

/// Writes the student edition into `dir`, which must not exist or be empty.
pub(crate) fn export(dir: &Path) -> Result<(), String> {
    let root = root();
    if dir.exists()
        && fs::read_dir(dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?
            .next()
            .is_some()
    {
        return Err(format!(
            "{} is not empty; export into a new folder",
            dir.display()
        ));
    }
    let file = |path: &str| fs::read_to_string(root.join(path)).map_err(|e| format!("{path}: {e}"));
    let put = |path: &str, text: &str| -> Result<(), String> {
        let target = dir.join(path);
        fs::create_dir_all(target.parent().expect("a file has a folder"))
            .map_err(|e| e.to_string())?;
        fs::write(&target, text).map_err(|e| format!("{path}: {e}"))
    };

    // The shared suite, untouched, and the student's crate.
    copy_tracked(&root, "tests", &dir.join("tests"))?;
    copy_tracked(&root, "starter", &dir.join("starter"))?;
    let lib = dir.join("starter/src/lib.rs");
    let text = fs::read_to_string(&lib).map_err(|e| e.to_string())?;
    fs::write(
        &lib,
        text.replace(
            " Generated from the solution by `cargo xtask sync-starter`.",
            "",
        ),
    )
    .map_err(|e| e.to_string())?;

    // The workspace around it: the façade with the starter alone, the demo
    // on the starter, the students' tools.
    put("Cargo.toml", &manifest(&file("Cargo.toml")?, Member::Root)?)?;
    copy_tracked(&root, "demo/src", &dir.join("demo/src"))?;
    put(
        "demo/Cargo.toml",
        &manifest(&file("demo/Cargo.toml")?, Member::Demo)?,
    )?;
    put("xtask/Cargo.toml", &file("xtask/Cargo.toml")?)?;
    for tool in STUDENT_TOOLS {
        put(
            &format!("xtask/src/{tool}"),
            &file(&format!("xtask/src/{tool}"))?,
        )?;
    }
    put("grading/weights.toml", &file("grading/weights.toml")?)?;
    copy_tracked(&root, "hints", &dir.join("hints"))?;
    put("LAB.md", &handout(&file("LAB.md")?))?;
    copy_tracked(&root, "student", dir)?;
    put("Cargo.lock", &file("Cargo.lock")?)?;
    trim_lock(dir)?;

    let answers = leak::answers(&root.join("solution/src"))?;
    let total = answers.len();
    let answers = leak::to_check(answers, &root.join("starter/src"))?;
    let leaks = leak::leaks(dir, &answers.lines)?;
    if !leaks.is_empty() {
        return Err(format!(
            "the student edition in {} would reveal answers:\n  {}",
            dir.display(),
            leaks.join("\n  ")
        ));
    }
    println!(
        "checked: the solution's TODO regions hold {total} lines of code; {} are too plain to \
         count, {} are in the starter anyway, {} shown on purpose; none of the other {}, and no \
         generator marker, is in the export",
        answers.trivial,
        answers.given,
        answers.shown_on_purpose,
        answers.lines.len()
    );
    commit(dir)
}

/// Copies the files of `folder` that git tracks (with their working-tree
/// contents) into `to`, so nothing a run left behind goes out: a pending
/// snapshot, a proptest file from a failing run. Without git, the whole
/// folder.
fn copy_tracked(root: &Path, folder: &str, to: &Path) -> Result<(), String> {
    let listed = Command::new("git")
        .current_dir(root)
        .args(["ls-files", "-z", "--", folder])
        .output();
    let files = match listed {
        Ok(output) if output.status.success() && !output.stdout.is_empty() => output.stdout,
        _ => return copy_tree(&root.join(folder), to),
    };
    for file in files
        .split(|byte| *byte == 0)
        .filter(|file| !file.is_empty())
    {
        let file = String::from_utf8_lossy(file).into_owned();
        let inside = Path::new(&file)
            .strip_prefix(folder)
            .map_err(|e| e.to_string())?;
        let target = to.join(inside);
        fs::create_dir_all(target.parent().expect("a file has a folder"))
            .map_err(|e| e.to_string())?;
        fs::copy(root.join(&file), &target).map_err(|e| format!("{file}: {e}"))?;
    }
    Ok(())
}

/// Which manifest to rewrite for the student edition.
#[derive(Clone, Copy)]
enum Member {
    Root,
    Demo,
}

/// A manifest without the solution: the starter becomes a plain dependency,
/// the workspace keeps the members that are exported, and the features that
/// chose between starter and solution go (the demo's is on by default).
fn manifest(kit: &str, member: Member) -> Result<String, String> {
    let mut out: Vec<String> = Vec::new();
    let mut section = String::new();
    for line in kit.lines() {
        if line.starts_with('[') {
            section = line.trim().to_owned();
            if section == "[features]" {
                if let Member::Demo = member {
                    out.push("[features]".into());
                    out.push("# The demo runs on your crate, the starter.".into());
                    out.push("default = [\"starter\"]".into());
                    out.push("starter = []".into());
                }
                continue;
            }
            if section == "[package]" {
                // The comment above it explained the kit's façade.
                while out.last().is_some_and(|line| line.starts_with('#')) {
                    out.pop();
                }
                if let Member::Root = member {
                    out.push("# The root package is a thin façade: the shared test suite in `tests/` is its".into());
                    out.push(
                        "# integration suite, and it re-exports your starter crate under one name."
                            .into(),
                    );
                }
            }
        } else if section == "[features]" || line.contains("retry-breaker-solution") {
            continue;
        }
        let line = if line.starts_with("members = ") {
            "members = [\".\", \"starter\", \"xtask\", \"demo\"]".to_owned()
        } else if let (Member::Root, true) = (member, line.starts_with("description = ")) {
            "description = \"Façade over the starter crate, so the shared suite tests it.\""
                .to_owned()
        } else if line.starts_with("retry-breaker-starter = ") {
            line.replace(", optional = true", "")
        } else {
            line.to_owned()
        };
        out.push(line);
    }
    let text = out.join("\n") + "\n";
    if text.contains("solution") {
        return Err(
            "the exported manifest still mentions the solution; update export.rs".to_owned(),
        );
    }
    Ok(text)
}

/// LAB.md for students: without the instructors' section, and without the
/// paragraphs that point at what only the kit has.
fn handout(lab: &str) -> String {
    let mut sections: Vec<&str> = Vec::new();
    let mut start = 0;
    for (at, _) in lab.match_indices("\n## ") {
        sections.push(&lab[start..at + 1]);
        start = at + 1;
    }
    sections.push(&lab[start..]);
    let kept: String = sections
        .into_iter()
        .filter(|section| !section.starts_with("## For instructors"))
        .collect();
    let paragraphs: Vec<&str> = kept
        .split("\n\n")
        .filter(|paragraph| !INSTRUCTOR_ONLY.iter().any(|word| paragraph.contains(word)))
        .collect();
    paragraphs.join("\n\n").trim_end().to_owned() + "\n"
}

/// Trims the kit's `Cargo.lock` to the exported workspace: cargo drops the
/// packages nothing uses any more (the benchmarks' peers) and keeps every
/// version, so the student builds exactly what the kit was tested with.
fn trim_lock(dir: &Path) -> Result<(), String> {
    let metadata = |offline: bool| {
        let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        command
            .current_dir(dir)
            .args(["metadata", "--format-version", "1", "--quiet"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        if offline {
            command.arg("--offline");
        }
        command.status().is_ok_and(|status| status.success())
    };
    if metadata(true) || metadata(false) {
        Ok(())
    } else {
        Err("cargo metadata failed on the exported workspace".to_owned())
    }
}

/// A fresh repository with the export as its one commit.
fn commit(dir: &Path) -> Result<(), String> {
    // An instructor's own name goes on the commit if git knows it.
    let mut identity = vec!["-c".to_owned(), "commit.gpgsign=false".to_owned()];
    for (key, fallback) in [
        ("user.name", "Instructor"),
        ("user.email", "instructor@example.invalid"),
    ] {
        let known = Command::new("git")
            .args(["config", key])
            .output()
            .is_ok_and(|output| output.status.success());
        if !known {
            identity.extend(["-c".to_owned(), format!("{key}={fallback}")]);
        }
    }
    let git = |args: &[&str]| -> Result<(), String> {
        let output = Command::new("git")
            .current_dir(dir)
            .args(&identity)
            .args(args)
            .output()
            .map_err(|e| format!("cannot run git: {e}"))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(format!(
                "git {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&output.stderr)
            ))
        }
    };
    git(&["init", "--quiet"])?;
    git(&["add", "--all"])?;
    git(&["commit", "--quiet", "-m", "The retry-breaker lab"])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_handout_drops_the_instructors_section_and_kit_only_paragraphs() {
        let lab = "# Lab\n\nIntro.\n\n## Step 1\n\nDo it.\n\nSee `mistakes/`.\n\n## For instructors\n\nSecrets.\n\n## After\n\nMore.\n";
        assert_eq!(
            handout(lab),
            "# Lab\n\nIntro.\n\n## Step 1\n\nDo it.\n\n## After\n\nMore.\n"
        );
    }

    #[test]
    fn the_root_manifest_keeps_the_starter_alone() {
        let kit = "[workspace]\nmembers = [\".\", \"solution\", \"starter\", \"bench\"]\n\n# façade\n[package]\ndescription = \"x\"\n\n[features]\ndefault = [\"starter\"]\nsolution = [\"dep:retry-breaker-solution\"]\n\n[dependencies]\nretry-breaker-starter = { path = \"starter\", optional = true }\nretry-breaker-solution = { path = \"solution\", optional = true }\n";
        let out = manifest(kit, Member::Root).unwrap();
        assert!(out.contains("members = [\".\", \"starter\", \"xtask\", \"demo\"]"));
        assert!(out.contains("retry-breaker-starter = { path = \"starter\" }\n"));
        assert!(!out.contains("[features]") && !out.contains("solution"));
    }
}
