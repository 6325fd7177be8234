//! Running the shared suite and reading its results.
//!
//! libtest's stable output is plain text: a `test NAME ... ok` line per test,
//! then a `---- NAME stdout ----` section per failure holding its panic
//! message. That is all the progress view and the starter check need.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

/// One test's result.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub passed: bool,
    /// What the test printed, with its panic message, if it failed.
    pub output: String,
}

/// Every test of one run, by full name (`step3_half_open::b4_...`).
pub type Results = BTreeMap<String, Outcome>;

/// Environment for student runs (`cargo xtask test`, `cargo xtask progress`)
/// and the instructors' checks: never accept a snapshot, so that a wrong
/// answer stays red, and no backtraces, whatever the student's shell says,
/// so that a failure stays short. (The property tests need nothing here:
/// the suite seeds them itself and never writes their regression file.)
pub const STUDENT_ENV: &[(&str, &str)] = &[
    ("INSTA_UPDATE", "no"),
    ("INSTA_FORCE_PASS", "0"),
    ("RUST_BACKTRACE", "0"),
    ("RUST_LIB_BACKTRACE", "0"),
];

/// Whether a run shows cargo's build progress on the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Build {
    /// Nothing from cargo; for the instructors' checks, which run the suite
    /// many times over.
    Quiet,
    /// Cargo's usual progress (its progress bar on a terminal) and compiler
    /// errors go straight to stderr while the suite builds; for students.
    Shown,
}

/// Runs `cargo test --test lab` in `workspace` and collects the results.
/// Fails if the suite did not even build.
pub fn run_lab(
    workspace: &Path,
    target_dir: Option<&Path>,
    extra: &[&str],
) -> Result<Results, String> {
    run_lab_with(workspace, target_dir, extra, &[])
}

/// [`run_lab`], with more environment variables (after [`STUDENT_ENV`]),
/// such as an instructor's `LAB_SEED` for grading.
pub fn run_lab_with(
    workspace: &Path,
    target_dir: Option<&Path>,
    extra: &[&str],
    env: &[(&str, &str)],
) -> Result<Results, String> {
    run(workspace, target_dir, extra, None, Build::Quiet, env)
}

/// Runs the suite's tests that match `filter` (all of them for `None`) and
/// collects the results.
///
/// With [`Build::Shown`], the suite is first built by a separate
/// `cargo test --no-run` whose stderr is the terminal's, so that a student
/// sees the build progress and any compile error as cargo prints them; the
/// run itself is then captured, so that its output can be summarized.
pub fn run(
    workspace: &Path,
    target_dir: Option<&Path>,
    extra: &[&str],
    filter: Option<&str>,
    build: Build,
    env: &[(&str, &str)],
) -> Result<Results, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let base = |command: &mut Command| {
        command
            .current_dir(workspace)
            .envs(STUDENT_ENV.iter().copied())
            .envs(env.iter().copied());
        if let Some(dir) = target_dir {
            command.env("CARGO_TARGET_DIR", dir);
        }
    };
    if build == Build::Shown {
        let mut command = Command::new(&cargo);
        base(&mut command);
        let status = command
            .args(["test", "--test", "lab", "--no-run"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .status()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        if !status.success() {
            return Err(
                "the suite did not build: the compiler's messages above say why".to_owned(),
            );
        }
    }
    // The suite's tests, with libtest's plain output and `libtest` options.
    let lab = |libtest: &[&str]| {
        let mut command = Command::new(&cargo);
        base(&mut command);
        command
            .args(["test", "--quiet", "--test", "lab"])
            .args(extra)
            .args(["--", "--format", "pretty", "--color", "never"])
            .args(libtest)
            .env("CARGO_TERM_COLOR", "never")
            .output()
            .map_err(|e| format!("cannot run cargo: {e}"))
    };
    let mut first = vec!["--test-threads", "2"];
    first.extend(filter);
    let output = lab(&first)?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let mut results = parse(&stdout);
    if stdout.contains("running ") && !stdout.contains("test result:") {
        // The test process died before it finished: a test aborted it (a
        // panic while another panic unwinds, say in a destructor) or a
        // watchdog stopped it. Which tests had reported by then depends on
        // how the threads were scheduled, so the verdict would too: finish
        // the run one test at a time instead, so that every test gets a
        // verdict of its own and only the one that dies is blamed.
        let pending: Vec<String> = list_lab(workspace, target_dir, extra)?
            .into_iter()
            .filter(|test| filter.is_none_or(|filter| test.contains(filter)))
            .filter(|test| !results.contains_key(test))
            .collect();
        finish_one_at_a_time(&mut results, pending, |tests| {
            let mut serially = vec!["--test-threads", "1", "--exact"];
            serially.extend(tests.iter().map(String::as_str));
            lab(&serially)
        })?;
        // libtest prints what a failing test said only at the end of the
        // run, so a run that died never did: ask each failure again, alone.
        for (test, outcome) in results.iter_mut() {
            if !outcome.passed && outcome.output.is_empty() {
                let rerun = lab(&["--exact", test])?;
                let said = parse(&String::from_utf8_lossy(&rerun.stdout));
                if let Some(again) = said.get(test).filter(|again| !again.passed) {
                    outcome.output.clone_from(&again.output);
                }
            }
        }
    }
    if results.is_empty() {
        if stdout.contains("test result:") {
            return Err(format!("no test matches `{}`", filter.unwrap_or_default()));
        }
        return Err(format!(
            "the suite did not run (a compile error?):\n{}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(results)
}

/// Runs the `pending` tests through `run_serially` (one test at a time, in
/// one process) until each has a verdict. A test that kills its process
/// fails with why, and the run goes on after it; when the process dies
/// without naming the test it was in (it never does, one test at a time),
/// the tests still pending fail under [`STOPPED_EARLY`].
fn finish_one_at_a_time(
    results: &mut Results,
    mut pending: Vec<String>,
    mut run_serially: impl FnMut(&[String]) -> Result<std::process::Output, String>,
) -> Result<(), String> {
    let mut stderr = String::new();
    while !pending.is_empty() {
        let output = run_serially(&pending)?;
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        results.extend(parse(&stdout));
        if stdout.contains("test result:") {
            return Ok(());
        }
        stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        match in_flight(&stdout) {
            Some(test) if pending.contains(&test) => {
                let why = died(&stderr, Some(&test));
                results.insert(
                    test,
                    Outcome {
                        passed: false,
                        output: format!("{why}\n"),
                    },
                );
            }
            _ => break,
        }
        pending.retain(|test| !results.contains_key(test));
    }
    if !pending.is_empty() {
        results.insert(
            STOPPED_EARLY.to_owned(),
            Outcome {
                passed: false,
                output: format!("{}\n", died(&stderr, None)),
            },
        );
    }
    Ok(())
}

/// The test a run was in when its process died: the last `test NAME ... `
/// line that has no verdict after it.
fn in_flight(stdout: &str) -> Option<String> {
    let line = stdout
        .lines()
        .rev()
        .find(|line| line.starts_with("test "))?;
    let (name, verdict) = line.strip_prefix("test ")?.rsplit_once(" ...")?;
    match verdict.trim() {
        "ok" | "FAILED" | "ignored" => None,
        _ => Some(name.to_owned()),
    }
}

/// Why a test process died, in one line for the student: a watchdog's own
/// message, or what to run to see the panic that aborted it.
pub fn died(stderr: &str, test: Option<&str>) -> String {
    if let Some(watchdog) = stderr
        .lines()
        .rev()
        .find(|line| line.starts_with("watchdog"))
    {
        return watchdog.to_owned();
    }
    let see = format!(
        "to see it: cargo test --test lab -- --exact {} --nocapture",
        test.unwrap_or("NAME")
    );
    if stderr.contains("non-unwinding panic") || stderr.contains("panicked while") {
        return format!(
            "the test process aborted while this test ran: a panic while another panic was \
             unwinding, probably in a destructor (a permit dropped by a panic reports to the \
             breaker, and that report must not panic); {see}"
        );
    }
    format!("the test process died while this test ran; {see}")
}

/// The name under which a run that stopped before libtest's summary is
/// recorded as a failure.
pub const STOPPED_EARLY: &str = "(the suite stopped early)";

/// The names of every test `run_lab` would run, from libtest's `--list`:
/// what a run that stopped early never reported is still known. Ignored
/// tests (the helpers that other tests run in a child process) are left out.
pub fn list_lab(
    workspace: &Path,
    target_dir: Option<&Path>,
    extra: &[&str],
) -> Result<Vec<String>, String> {
    let list = |ignored: bool| -> Result<Vec<String>, String> {
        let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        command
            .current_dir(workspace)
            .args(["test", "--quiet", "--test", "lab"])
            .args(extra)
            .args(["--", "--list", "--format", "terse"])
            .args(ignored.then_some("--ignored"))
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
        Ok(listed(&String::from_utf8_lossy(&output.stdout)))
    };
    Ok(runnable(list(false)?, &list(true)?))
}

/// The test names in libtest's `--list --format terse` output.
pub fn listed(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        .map(str::to_owned)
        .collect()
}

/// The listed tests that a run runs: all but the `ignored` ones, which are
/// helpers that other tests start in a child process.
pub fn runnable(all: Vec<String>, ignored: &[String]) -> Vec<String> {
    all.into_iter()
        .filter(|test| !ignored.contains(test))
        .collect()
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

/// The order in which a student reads tests: by name, with the numbers in
/// them compared as numbers, so rule B2's tests come before B11's.
pub fn lab_order(test: &str) -> Vec<(String, u64)> {
    let mut key = Vec::new();
    let mut text = String::new();
    let mut chars = test.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            let mut number = u64::from(c as u8 - b'0');
            while let Some(d) = chars.peek().and_then(|d| d.to_digit(10)) {
                number = number.saturating_mul(10).saturating_add(u64::from(d));
                chars.next();
            }
            key.push((std::mem::take(&mut text), number));
        } else {
            text.push(c);
        }
    }
    key.push((text, 0));
    key
}

/// The lab step a test belongs to, from its module `stepN_name`.
pub fn step_of(test: &str) -> Option<u32> {
    let module = test.split("::").next()?;
    let number = module.strip_prefix("step")?.split('_').next()?;
    number.parse().ok()
}

/// One panic message in a failure's output: the thread that panicked and
/// the message's lines.
#[derive(Debug, PartialEq, Eq)]
struct Panic<'a> {
    thread: &'a str,
    message: Vec<&'a str>,
}

/// The panics in a failure's output, in the order they were printed: a
/// `thread 'NAME' panicked at FILE:LINE:COL:` line, then the message up to
/// the next blank line.
fn panics(output: &str) -> Vec<Panic<'_>> {
    let mut found = Vec::new();
    let mut lines = output.lines().peekable();
    while let Some(line) = lines.next() {
        let Some(thread) = line
            .strip_prefix("thread '")
            .filter(|_| line.contains("panicked at"))
            .and_then(|rest| rest.split_once('\'').map(|(name, _)| name))
        else {
            continue;
        };
        let mut message = Vec::new();
        while let Some(next) = lines.next_if(|next| !next.trim().is_empty()) {
            message.push(next.trim_end());
        }
        found.push(Panic { thread, message });
    }
    found
}

/// One line that says why a test failed, for a scoreboard, chosen so that
/// it does not depend on the order in which threads happened to panic:
///
/// - the panic message that names the lowest TODO (the one to do first);
/// - or else the last panic of the test's own thread (named after the test;
///   earlier ones may be panics the test provoked on purpose);
/// - or else the last panic at all.
///
/// A bare `assertion `left == right` failed` gets its `left:` and `right:`
/// lines.
pub fn reason(output: &str) -> String {
    let panics = panics(output);
    let lowest_todo = panics
        .iter()
        .filter_map(|panic| {
            let first = panic.message.first()?;
            Some((*todos_named(first).iter().min()?, panic))
        })
        .min_by_key(|(todo, _)| *todo)
        .map(|(_, panic)| panic);
    let chosen = lowest_todo
        .or_else(|| {
            panics
                .iter()
                .rev()
                .find(|panic| panic.thread.contains("::"))
        })
        .or(panics.last())
        .filter(|panic| !panic.message.is_empty());
    if let Some(panic) = chosen {
        let first = panic.message[0].trim();
        if first.starts_with("assertion `left") && first.ends_with("failed") {
            let mut parts = vec![first.to_owned()];
            parts.extend(
                panic.message[1..]
                    .iter()
                    .map(|line| line.trim())
                    .take_while(|line| line.starts_with("left:") || line.starts_with("right:"))
                    .map(str::to_owned),
            );
            return parts.join("; ");
        }
        return first.to_owned();
    }
    // No panic in libtest's format (a custom panic hook, a crash): the line
    // naming the lowest TODO, or else the first line that says anything.
    let lines: Vec<&str> = output
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with("thread '") && !is_noise(line))
        .collect();
    lines
        .iter()
        .filter_map(|line| Some((*todos_named(line).iter().min()?, *line)))
        .min_by_key(|(todo, _)| *todo)
        .map(|(_, line)| line)
        .or(lines.first().copied())
        .unwrap_or("(no message: the test process stopped before printing one)")
        .to_owned()
}

/// libtest's and the panic hook's hints that say nothing about the failure.
fn is_noise(line: &str) -> bool {
    line.starts_with("note: run with `RUST_BACKTRACE=")
        || line.starts_with("note: Some details are omitted")
}

/// A failure's output as a student should read it, deterministic from run
/// to run: thread ids dropped from `thread 'NAME' (ID) panicked at`, the
/// backtrace hint dropped, runs of blank lines squeezed, and a paragraph
/// repeated back to back (the same panic, once per generated case) printed
/// once with a count. At most `max_lines` lines: the head and the tail
/// (where a counterexample ends up) are kept.
pub fn readable(output: &str, max_lines: usize) -> Vec<String> {
    let mut paragraphs: Vec<Vec<String>> = vec![Vec::new()];
    for line in output.lines().filter(|line| !is_noise(line.trim())) {
        let line = without_thread_id(line.trim_end());
        if line.is_empty() {
            paragraphs.push(Vec::new());
        } else if let Some(last) = paragraphs.last_mut() {
            last.push(line);
        }
    }
    paragraphs.retain(|paragraph| !paragraph.is_empty());
    // Threads the test spawned have no name, and the scheduler decides the
    // order of their panics: a run of them is sorted, so that it reads the
    // same every time.
    let mut index = 0;
    while index < paragraphs.len() {
        let end = index
            + paragraphs[index..]
                .iter()
                .take_while(|paragraph| paragraph[0].starts_with("thread '<unnamed>' panicked"))
                .count();
        paragraphs[index..end].sort();
        index = end.max(index + 1);
    }
    let mut lines: Vec<String> = Vec::new();
    let mut index = 0;
    while index < paragraphs.len() {
        let paragraph = &paragraphs[index];
        let repeats = paragraphs[index + 1..]
            .iter()
            .take_while(|next| *next == paragraph)
            .count();
        if !lines.is_empty() {
            lines.push(String::new());
        }
        lines.extend(paragraph.iter().cloned());
        if repeats > 0 {
            lines.push(format!(
                "(the same {} more time{})",
                repeats,
                if repeats == 1 { "" } else { "s" }
            ));
        }
        index += repeats + 1;
    }
    if lines.len() > max_lines && max_lines >= 4 {
        let tail = max_lines / 2;
        let head = max_lines - tail - 1;
        let cut = lines.len() - head - tail;
        lines.splice(
            head..head + cut,
            [format!("... ({cut} lines left out) ...")],
        );
    }
    lines
}

/// `thread 'NAME' (123) panicked at` without its `(123)`, which changes
/// from run to run.
fn without_thread_id(line: &str) -> String {
    if let Some(rest) = line.strip_prefix("thread '") {
        if let Some((name, after)) = rest.split_once("' (") {
            if let Some((id, tail)) = after.split_once(')') {
                if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) {
                    return format!("thread '{name}'{tail}");
                }
            }
        }
    }
    line.to_owned()
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
test step01_closed::a ... ok
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
    fn rule_numbers_sort_as_numbers() {
        let mut tests = ["s::b11_x", "s::b2_x", "s::b1_y", "s::b10_a"];
        tests.sort_by_key(|test| lab_order(test));
        assert_eq!(tests, ["s::b1_y", "s::b2_x", "s::b10_a", "s::b11_x"]);
    }

    #[test]
    fn reads_verdicts_and_failure_messages() {
        let results = parse(RUN);
        assert_eq!(results.len(), 3);
        assert!(results["step01_closed::a"].passed);
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

    /// What a process that dies says, one test at a time: the tests before
    /// the killer, then the killer's name with no verdict.
    fn died_in(tests: &[(&str, &str)], killer: &str) -> std::process::Output {
        let mut stdout = format!("\nrunning {} tests\n", tests.len() + 1);
        for (test, verdict) in tests {
            stdout.push_str(&format!("test {test} ... {verdict}\n"));
        }
        stdout.push_str(&format!("test {killer} ... "));
        output(&stdout, "thread caused non-unwinding panic. aborting.\n")
    }

    fn output(stdout: &str, stderr: &str) -> std::process::Output {
        use std::os::unix::process::ExitStatusExt;
        std::process::Output {
            status: std::process::ExitStatus::from_raw(0),
            stdout: stdout.as_bytes().to_vec(),
            stderr: stderr.as_bytes().to_vec(),
        }
    }

    #[test]
    fn the_test_a_process_died_in_is_the_last_one_without_a_verdict() {
        assert_eq!(
            in_flight("test a ... ok\ntest b ... FAILED\ntest c ... "),
            Some("c".to_owned())
        );
        assert_eq!(
            in_flight("test a ... ok\ntest c ... thread caused non-unwinding panic. aborting."),
            Some("c".to_owned())
        );
        assert_eq!(in_flight("test a ... ok\ntest b ... FAILED\n"), None);
    }

    #[test]
    fn after_a_crash_every_test_gets_a_verdict_and_only_the_killer_is_blamed() {
        let mut results = parse("running 4 tests\ntest s1::a ... ok\n");
        let pending: Vec<String> = ["s1::b", "s2::c", "s9::d"].map(str::to_owned).into();
        let mut runs: Vec<Vec<String>> = Vec::new();
        finish_one_at_a_time(&mut results, pending, |tests| {
            runs.push(tests.to_vec());
            Ok(match runs.len() {
                // b passes, then c kills the process.
                1 => died_in(&[("s1::b", "ok")], "s2::c"),
                // d runs on after it and fails as it would have.
                _ => output(
                    "running 1 test\ntest s9::d ... FAILED\n\ntest result: FAILED. 0 passed; 1 failed\n",
                    "",
                ),
            })
        })
        .unwrap();
        assert_eq!(runs, [vec!["s1::b", "s2::c", "s9::d"], vec!["s9::d"]]);
        assert!(results["s1::a"].passed && results["s1::b"].passed);
        assert!(!results["s9::d"].passed);
        let killer = &results["s2::c"];
        assert!(!killer.passed);
        assert!(
            killer.output.contains("aborted while this test ran"),
            "{}",
            killer.output
        );
        assert!(killer.output.contains("--exact s2::c"), "{}", killer.output);
        assert!(!results.contains_key(STOPPED_EARLY));
    }

    #[test]
    fn a_watchdog_says_why_in_its_own_words() {
        let mut results = Results::new();
        finish_one_at_a_time(&mut results, vec!["s1::a".to_owned()], |_| {
            let mut died = died_in(&[], "s1::a");
            died.stderr =
                b"\nwatchdog: s1::a was still running after 5s; probably a deadlock\n".to_vec();
            Ok(died)
        })
        .unwrap();
        assert_eq!(
            results["s1::a"].output,
            "watchdog: s1::a was still running after 5s; probably a deadlock\n"
        );
    }

    #[test]
    fn a_process_that_dies_without_naming_a_test_fails_the_rest_as_stopped_early() {
        let mut results = Results::new();
        let pending: Vec<String> = ["s1::a", "s1::b"].map(str::to_owned).into();
        finish_one_at_a_time(&mut results, pending, |_| {
            Ok(output("running 2 tests\n", "Segmentation fault\n"))
        })
        .unwrap();
        assert!(!results[STOPPED_EARLY].passed);
        assert!(!results.contains_key("s1::a"));
        assert!(
            results[STOPPED_EARLY]
                .output
                .starts_with("the test process died while this test ran"),
            "{}",
            results[STOPPED_EARLY].output
        );
    }
}

#[cfg(test)]
mod reading {
    use super::*;

    #[test]
    fn the_reason_is_the_lowest_todo_whatever_the_order_of_the_panics() {
        let later_first = "
thread '<unnamed>' (7) panicked at starter/src/execute.rs:86:9:
not yet implemented: TODO(6): the retry loop

thread '<unnamed>' (8) panicked at starter/src/circuit.rs:141:17:
not yet implemented: TODO(1): count the failure
";
        let earlier_first = "
thread '<unnamed>' (8) panicked at starter/src/circuit.rs:141:17:
not yet implemented: TODO(1): count the failure

thread '<unnamed>' (7) panicked at starter/src/execute.rs:86:9:
not yet implemented: TODO(6): the retry loop
";
        assert_eq!(
            reason(later_first),
            "not yet implemented: TODO(1): count the failure"
        );
        assert_eq!(reason(earlier_first), reason(later_first));
    }

    #[test]
    fn without_a_todo_the_reason_is_the_test_threads_last_panic() {
        let output = "
thread 'step5_x::t' (3) panicked at tests/lab/step5_x.rs:16:9:
the dependency client blew up

thread 'step5_x::t' (3) panicked at tests/lab/step5_x.rs:25:5:
assertion `left == right` failed
  left: Closed { failures: 0 }
 right: Closed { failures: 1 }
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace
";
        assert_eq!(
            reason(output),
            "assertion `left == right` failed; left: Closed { failures: 0 }; right: Closed { failures: 1 }"
        );
    }

    #[test]
    fn output_without_a_panic_line_gives_its_lowest_todo_or_its_first_words() {
        assert_eq!(reason("\nwatchdog: stuck\n"), "watchdog: stuck");
        assert_eq!(
            reason(
                "step06_retry::t failed at tests/lab/step06_retry.rs:9\nTODO(6): retry\nTODO(2): refuse\n"
            ),
            "TODO(2): refuse"
        );
        assert_eq!(
            reason(""),
            "(no message: the test process stopped before printing one)"
        );
    }

    #[test]
    fn readable_output_has_no_thread_ids_and_no_repeats() {
        let output = "
thread 'lab-watchdog' (11) panicked at starter/src/circuit.rs:141:17:
not yet implemented: TODO(1)

thread 'lab-watchdog' (11) panicked at starter/src/circuit.rs:141:17:
not yet implemented: TODO(1)

thread 'lab-watchdog' (11) panicked at starter/src/circuit.rs:141:17:
not yet implemented: TODO(1)
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace



shrunk counterexample:
threshold 1
";
        assert_eq!(
            readable(output, 60),
            [
                "thread 'lab-watchdog' panicked at starter/src/circuit.rs:141:17:",
                "not yet implemented: TODO(1)",
                "(the same 2 more times)",
                "",
                "shrunk counterexample:",
                "threshold 1",
            ]
        );
    }

    #[test]
    fn panics_of_unnamed_threads_read_the_same_in_any_order() {
        let one = "
thread '<unnamed>' (5) panicked at b.rs:1:1:
TODO(6)

thread '<unnamed>' (6) panicked at a.rs:1:1:
TODO(1)

thread '<unnamed>' (7) panicked at b.rs:1:1:
TODO(6)
";
        let other = "
thread '<unnamed>' (9) panicked at b.rs:1:1:
TODO(6)

thread '<unnamed>' (8) panicked at b.rs:1:1:
TODO(6)

thread '<unnamed>' (5) panicked at a.rs:1:1:
TODO(1)
";
        assert_eq!(readable(one, 60), readable(other, 60));
        assert_eq!(
            readable(one, 60)[0],
            "thread '<unnamed>' panicked at a.rs:1:1:"
        );
    }

    #[test]
    fn long_output_keeps_its_head_and_its_tail() {
        let output: String = (1..=100).map(|n| format!("line {n}\n")).collect();
        let lines = readable(&output, 10);
        assert_eq!(lines.len(), 10);
        assert_eq!(lines[0], "line 1");
        assert_eq!(lines[4], "... (91 lines left out) ...");
        assert_eq!(lines[9], "line 100");
    }
}
