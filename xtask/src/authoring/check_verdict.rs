//! `cargo xtask check-verdict [RUNS]`: the suite's verdict is a function of
//! the code alone (E9). A student crate with one wrong step-8 answer is
//! judged again and again, through `just`'s environment and through a plain
//! `cargo test` from a shell that sets `RUST_BACKTRACE`: every run must fail
//! the same tests, step 8 among them, and no run may change a file of the
//! workspace.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;
use std::process::Command;

use crate::scratch::copy_suite_workspace;
use crate::{authoring::starter, root, suite};

/// The wrong answer: `run_until_cancelled` around the sleep with no check
/// of the token before it, so a cancelled call still asks the sleeper.
const MISTAKE: &str = "mistakes/22-sleep-despite-cancellation.mistake";

pub(crate) fn check_verdict(runs: Option<&str>) -> Result<(), String> {
    let runs: usize = runs
        .map_or(Ok(20), str::parse)
        .map_err(|_| "RUNS is a number")?;
    let root = root();
    let scratch = root.join("target/check-verdict");
    let workspace = scratch.join("workspace");
    if workspace.exists() {
        fs::remove_dir_all(&workspace).map_err(|e| e.to_string())?;
    }
    fs::create_dir_all(&workspace).map_err(|e| e.to_string())?;
    copy_suite_workspace(&root, &workspace)?;
    student_with_mistake(&root, &workspace)?;

    let target = crate::scratch::worker_target(&root, 0);
    // Build first: the scratch copy leaves the demo and the benchmarks out
    // of the workspace, so its first build rewrites Cargo.lock. That is the
    // copy's doing, not a test run's.
    let built = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(&workspace)
        .args(["test", "--quiet", "--test", "lab", "--no-run"])
        .env("CARGO_TARGET_DIR", &target)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !built.success() {
        return Err("the student crate with the mistake did not build".to_owned());
    }
    let before = fingerprint(&workspace)?;
    // The races' verdicts may change from run to run, which is why no grade
    // runs them; the verdict held to one is the rest of the suite's.
    let races = crate::lab::races()?;
    let mut verdicts: BTreeMap<BTreeSet<String>, Vec<String>> = BTreeMap::new();
    for run in 1..=runs {
        let (route, mut failed) = if run % 2 == 1 {
            (
                "just test",
                failing(&suite::run_lab(&workspace, Some(&target), &[])?),
            )
        } else {
            ("cargo test", plain_cargo_test(&workspace, &target)?)
        };
        failed.retain(|test| !races.contains_key(test));
        println!(
            "run {run:>2} ({route:<10}): {} failing test(s)",
            failed.len()
        );
        verdicts
            .entry(failed)
            .or_default()
            .push(format!("run {run} ({route})"));
    }
    let after = fingerprint(&workspace)?;

    let mut problems = Vec::new();
    if verdicts.len() != 1 {
        for (failed, runs) in &verdicts {
            problems.push(format!("{}: {failed:?}", runs.join(", ")));
        }
        problems.insert(0, "the verdict changed from run to run:".to_owned());
    } else if let Some(failed) = verdicts.keys().next() {
        println!("\nevery run failed the same tests:");
        for test in failed {
            println!("  {test}");
        }
        if !failed.iter().any(|test| test.starts_with("step08_")) {
            problems.push("no step 8 test caught the wrong step-8 answer".to_owned());
        }
    }
    let changed: Vec<&String> = after
        .iter()
        .filter(|(path, hash)| before.get(*path) != Some(hash))
        .map(|(path, _)| path)
        .chain(before.keys().filter(|path| !after.contains_key(*path)))
        .collect();
    if !changed.is_empty() {
        problems.push(format!(
            "the runs changed files of the workspace: {changed:?}"
        ));
    }
    if problems.is_empty() {
        println!("\ncheck-verdict: {runs} runs, one verdict, no file changed");
        Ok(())
    } else {
        Err(format!("check-verdict:\n  {}", problems.join("\n  ")))
    }
}

/// Makes the scratch starter a finished lab with the one wrong answer.
fn student_with_mistake(root: &Path, workspace: &Path) -> Result<(), String> {
    let mistake = crate::authoring::mistake::Mistake::read(&root.join(MISTAKE))?;
    crate::authoring::mistake::apply(&mistake, &workspace.join("solution/src"))
        .map_err(|why| format!("{MISTAKE} does not apply: {why}"))?;
    let finished = starter::generate(&workspace.join("solution/src"), u32::MAX)?;
    let src = workspace.join("starter/src");
    fs::remove_dir_all(&src).map_err(|e| e.to_string())?;
    fs::create_dir_all(&src).map_err(|e| e.to_string())?;
    for (name, text) in &finished.files {
        crate::scratch::write_file(&src, name, text)?;
    }
    Ok(())
}

/// The suite as a student runs it without `just`: nothing set but what a
/// shell commonly sets.
fn plain_cargo_test(workspace: &Path, target: &Path) -> Result<BTreeSet<String>, String> {
    let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(workspace)
        .args([
            "test", "--quiet", "--test", "lab", "--", "--format", "pretty",
        ])
        .env("CARGO_TARGET_DIR", target)
        .env("RUST_BACKTRACE", "1")
        .env_remove("INSTA_UPDATE")
        .env_remove("PROPTEST_CASES")
        .env_remove("PROPTEST_DISABLE_FAILURE_PERSISTENCE")
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    let results = suite::parse(&String::from_utf8_lossy(&output.stdout));
    if results.is_empty() {
        return Err(format!(
            "the suite did not run:\n{}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(failing(&results))
}

fn failing(results: &suite::Results) -> BTreeSet<String> {
    results
        .iter()
        .filter(|(_, outcome)| !outcome.passed)
        .map(|(test, _)| test.clone())
        .collect()
}

/// Every file of the workspace but its `.git`, with a hash of its contents.
fn fingerprint(dir: &Path) -> Result<BTreeMap<String, u64>, String> {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut files = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in fs::read_dir(&folder).map_err(|e| e.to_string())? {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.file_name().is_some_and(|name| name == ".git") {
                continue;
            }
            if path.is_dir() {
                pending.push(path);
            } else {
                let mut hasher = DefaultHasher::new();
                fs::read(&path)
                    .map_err(|e| e.to_string())?
                    .hash(&mut hasher);
                let name = path
                    .strip_prefix(dir)
                    .unwrap_or(&path)
                    .display()
                    .to_string();
                files.insert(name, hasher.finish());
            }
        }
    }
    Ok(files)
}
