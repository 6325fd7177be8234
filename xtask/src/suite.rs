//! Running the shared suite and reading its results.
//!
//! libtest's stable output is plain text: a `test NAME ... ok` line per test,
//! then a `---- NAME stdout ----` section per failure holding its panic
//! message. That is all the progress view and the starter check need.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// One test's result.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub passed: bool,
    /// What the test printed, with its panic message, if it failed.
    pub output: String,
}

/// Every test of one run, by full name (`step3_half_open::b4_...`).
pub type Results = BTreeMap<String, Outcome>;

/// Environment for runs that must never accept a snapshot or write a
/// proptest regression file, so that a wrong answer stays red.
pub const STUDENT_ENV: &[(&str, &str)] = &[
    ("INSTA_UPDATE", "no"),
    ("INSTA_FORCE_PASS", "0"),
    ("PROPTEST_DISABLE_FAILURE_PERSISTENCE", "1"),
    ("PROPTEST_CASES", "64"),
    ("RUST_BACKTRACE", "0"),
];

/// Runs `cargo test --test lab` in `workspace` and collects the results.
/// Fails if the suite did not even build.
pub fn run_lab(
    workspace: &Path,
    target_dir: Option<&Path>,
    extra: &[&str],
) -> Result<Results, String> {
    run_lab_with(workspace, target_dir, extra, &[])
}

/// [`run_lab`], with more environment variables (after [`STUDENT_ENV`]).
pub fn run_lab_with(
    workspace: &Path,
    target_dir: Option<&Path>,
    extra: &[&str],
    env: &[(&str, &str)],
) -> Result<Results, String> {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command
        .current_dir(workspace)
        .args(["test", "--quiet", "--test", "lab"])
        .args(extra)
        .args(["--", "--format", "pretty", "--test-threads", "2"])
        .envs(STUDENT_ENV.iter().copied())
        .envs(env.iter().copied())
        .env("CARGO_TERM_COLOR", "never");
    if let Some(dir) = target_dir {
        command.env("CARGO_TARGET_DIR", dir);
    }
    let output = command
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut results = parse(&stdout);
    if !results.is_empty() && !stdout.contains("test result:") {
        // The suite stopped before it finished (a watchdog, a crash): that
        // is a failure in itself, and stderr says why.
        let stderr = format!("{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
        let why = stderr
            .lines()
            .rev()
            .find(|line| line.starts_with("watchdog"))
            .unwrap_or("the test binary died");
        results.insert(
            "(the suite stopped early)".to_owned(),
            Outcome {
                passed: false,
                output: format!("{why}\n"),
            },
        );
    }
    if results.is_empty() {
        return Err(format!(
            "the suite did not run (a compile error?):\n{}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(results)
}

/// The names of every test `run_lab` would run, from libtest's `--list`:
/// what a run that stopped early never reported is still known.
pub fn list_lab(
    workspace: &Path,
    target_dir: Option<&Path>,
    extra: &[&str],
) -> Result<Vec<String>, String> {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command
        .current_dir(workspace)
        .args(["test", "--quiet", "--test", "lab"])
        .args(extra)
        .args(["--", "--list", "--format", "terse"])
        .envs(STUDENT_ENV.iter().copied())
        .env("CARGO_TERM_COLOR", "never");
    if let Some(dir) = target_dir {
        command.env("CARGO_TARGET_DIR", dir);
    }
    let output = command
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    Ok(String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        .map(str::to_owned)
        .collect())
}

/// Reads libtest's plain output.
pub fn parse(stdout: &str) -> Results {
    let mut results = Results::new();
    for line in stdout.lines() {
        let Some(rest) = line.strip_prefix("test ") else {
            continue;
        };
        let Some((name, verdict)) = rest.rsplit_once(" ... ") else {
            continue;
        };
        let passed = match verdict.trim() {
            "ok" => true,
            "FAILED" => false,
            _ => continue,
        };
        results.insert(
            name.to_owned(),
            Outcome {
                passed,
                output: String::new(),
            },
        );
    }
    // Failure sections: from `---- NAME stdout ----` to the next section or
    // the closing `failures:` list.
    let mut current: Option<String> = None;
    for line in stdout.lines() {
        if let Some(name) = line
            .strip_prefix("---- ")
            .and_then(|rest| rest.strip_suffix(" stdout ----"))
        {
            current = Some(name.to_owned());
            continue;
        }
        if line == "failures:" || line.starts_with("test result:") {
            current = None;
            continue;
        }
        if let Some(outcome) = current.as_ref().and_then(|name| results.get_mut(name)) {
            outcome.output.push_str(line);
            outcome.output.push('\n');
        }
    }
    results
}

/// The lab step a test belongs to, from its module `stepN_name`.
pub fn step_of(test: &str) -> Option<u32> {
    let module = test.split("::").next()?;
    let number = module.strip_prefix("step")?.split('_').next()?;
    number.parse().ok()
}

/// The first line of a failure that says why (the panic message), short
/// enough for a scoreboard.
pub fn reason(output: &str) -> String {
    let mut lines = output
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty());
    let mut reason = String::new();
    while let Some(line) = lines.next() {
        if line.starts_with("thread '") && line.contains("panicked at") {
            reason = lines.next().unwrap_or_default().to_owned();
            break;
        }
    }
    if reason.is_empty() {
        reason = output
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty() && !line.starts_with("thread '"))
            .unwrap_or("(no message: the test process stopped before printing one)")
            .to_owned();
    }
    reason
}

/// The TODO numbers a failure's output names, such as `TODO(3)`.
pub fn todos_named(output: &str) -> Vec<u32> {
    output
        .match_indices("TODO(")
        .filter_map(|(at, _)| {
            let rest = &output[at + 5..];
            rest[..rest.find(')')?].parse().ok()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUN: &str = "
running 3 tests
test step1_closed::a ... ok
test step2_open::b ... FAILED
test toolkit::c ... ok

failures:

---- step2_open::b stdout ----

thread 'step2_open::b' (12) panicked at starter/src/circuit.rs:96:17:
not yet implemented: TODO(2): refuse the attempt
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    step2_open::b

test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s
";

    #[test]
    fn reads_verdicts_and_failure_messages() {
        let results = parse(RUN);
        assert_eq!(results.len(), 3);
        assert!(results["step1_closed::a"].passed);
        let failed = &results["step2_open::b"];
        assert!(!failed.passed);
        assert_eq!(
            reason(&failed.output),
            "not yet implemented: TODO(2): refuse the attempt"
        );
        assert_eq!(todos_named(&failed.output), [2]);
        assert_eq!(step_of("step2_open::b"), Some(2));
        assert_eq!(step_of("toolkit::c"), None);
    }
}
