//! `cargo xtask check-mistakes`: every typical mistake in `mistakes/` is
//! caught.

use std::fs;
use std::path::{Path, PathBuf};

use crate::scratch::copy_suite_workspace;
use crate::{root, suite};

/// What the suite made of one mistake.
enum Verdict {
    /// Tests failed: all of them, and what the first one said.
    Caught(Vec<String>, String),
    /// The suite did not build: the first compiler error.
    CaughtByCompiler(String),
    Missed,
}

/// Applies every patch in `mistakes/` (or those whose name contains
/// `only`) to a scratch copy of the solution, runs the suite against it,
/// and prints one line per mistake. Every mistake must be caught.
pub(crate) fn check_mistakes(only: Option<&str>) -> Result<(), String> {
    let root = root();
    let mut patches: Vec<PathBuf> = fs::read_dir(root.join("mistakes"))
        .map_err(|e| format!("cannot read mistakes/: {e}"))?
        .filter_map(|entry| Some(entry.ok()?.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "patch"))
        .filter(|path| only.is_none_or(|only| path.to_string_lossy().contains(only)))
        .collect();
    patches.sort();
    let scratch = root.join("target/check-mistakes");
    let workspace = scratch.join("workspace");
    let mut missed = Vec::new();
    for patch in &patches {
        let name = patch
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if workspace.exists() {
            fs::remove_dir_all(&workspace).map_err(|e| e.to_string())?;
        }
        fs::create_dir_all(&workspace).map_err(|e| e.to_string())?;
        copy_suite_workspace(&root, &workspace)?;
        // The scratch copy lives inside this repository's target folder;
        // its own repository makes `git apply` patch it, not ignore it.
        std::process::Command::new("git")
            .current_dir(&workspace)
            .args(["init", "--quiet"])
            .status()
            .map_err(|e| format!("cannot run git init: {e}"))?;
        let applied = std::process::Command::new("git")
            .current_dir(&workspace)
            .args(["apply", "--whitespace=nowarn"])
            .arg(patch)
            .output()
            .map_err(|e| format!("cannot run git apply: {e}"))?;
        if !applied.status.success() {
            return Err(format!(
                "{name}: the patch no longer applies to the solution; regenerate it:\n{}",
                String::from_utf8_lossy(&applied.stderr)
            ));
        }
        let verdict = judge(&workspace, &scratch.join("target"))?;
        match &verdict {
            Verdict::Caught(tests, why) => {
                println!(
                    "caught  {name:<40} by {:>2} test(s), first {}: {why}",
                    tests.len(),
                    tests[0]
                );
                if std::env::var_os("MISTAKES_VERBOSE").is_some() {
                    for test in tests {
                        println!("          {test}");
                    }
                }
            }
            Verdict::CaughtByCompiler(error) => {
                println!("caught  {name:<44} by the compiler: {error}")
            }
            Verdict::Missed => {
                println!("MISSED  {name}");
                missed.push(name);
            }
        }
    }
    println!(
        "\n{} mistake(s), {} caught, {} missed",
        patches.len(),
        patches.len() - missed.len(),
        missed.len()
    );
    if missed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the suite let these mistakes pass: {}",
            missed.join(", ")
        ))
    }
}

/// Runs the suite against the (patched) solution in `workspace`.
fn judge(workspace: &Path, target: &Path) -> Result<Verdict, String> {
    let flags = [
        "--no-default-features",
        "--features",
        "retry-breaker/solution",
    ];
    match suite::run_lab(workspace, Some(target), &flags) {
        Ok(results) => {
            let failed: Vec<_> = results
                .iter()
                .filter(|(_, outcome)| !outcome.passed)
                .collect();
            // Name a real test first; the suite stopping early comes last.
            let mut failed = failed;
            failed.sort_by_key(|(test, _)| test.starts_with('('));
            Ok(match failed.first() {
                None => Verdict::Missed,
                Some((_, outcome)) => Verdict::Caught(
                    failed.iter().map(|(test, _)| (*test).clone()).collect(),
                    suite::reason(&outcome.output),
                ),
            })
        }
        Err(output) => {
            let error = output
                .lines()
                .find(|line| line.starts_with("error"))
                .unwrap_or("the suite did not build")
                .to_owned();
            Ok(Verdict::CaughtByCompiler(error))
        }
    }
}
