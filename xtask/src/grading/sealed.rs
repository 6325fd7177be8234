//! A sealed run of the suite, for grading: one process per test, and a
//! verdict that the student's code cannot write.
//!
//! libtest's report is text on the test process's stdout, where the
//! student's code runs too, so the report alone proves nothing. Each test
//! runs in a process of its own and passes only when three witnesses agree:
//!
//! 1. the exit status is success (libtest exits non-zero when its one test
//!    fails; the code under test cannot end the process itself, since the
//!    source check refuses `process`, FFI and `unsafe`);
//! 2. exactly one summary line, saying `1 passed; 0 failed`;
//! 3. exactly one verdict line, `test NAME ... ok`, for that test, and none
//!    for any other.
//!
//! Any disagreement is a forgery: the test earns nothing and the grade names
//! what was seen. A process that dies or hangs fails its own test only.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::grading::confine::{self, Confinement, Role};
use crate::suite::{self, Outcome, Results, STUDENT_ENV};

/// The limits of one grade, fixed before any of the student's code is
/// built or run, so that a grade always ends, and in about the same time
/// whatever the code does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// How long one test may run before the grader stops it (its process
    /// and every process it started). The suite's own watchdog stops a
    /// stuck test sooner and says why; this is the backstop for a process
    /// the watchdog cannot reach.
    pub per_test: Duration,
    /// How long the whole grade may take, from the build to the last test:
    /// a test not started by then fails as not run, and one running then
    /// is stopped.
    pub budget: Duration,
    /// How many bytes of each of a test's two streams are kept; a test
    /// whose output runs past it fails (its verdict lines could be beyond
    /// what was kept).
    pub output: usize,
}

impl Limits {
    /// The course's limits: 20 s a test, 10 minutes a grade, 256 KiB a
    /// stream. The suite's slowest test takes a small fraction of 20 s on a
    /// 2-core machine running four at once (docs/FIGURES.md).
    pub const DEFAULT: Limits = Limits {
        per_test: Duration::from_secs(20),
        budget: Duration::from_secs(600),
        output: 256 * 1024,
    };

    /// [`Limits::DEFAULT`], or what the instructor sets in
    /// `LAB_GRADE_TEST_SECS` and `LAB_GRADE_BUDGET_SECS` (whole seconds,
    /// at least 1); a value that is not one is an error, never the default.
    pub fn from_env() -> Result<Limits, String> {
        let seconds = |variable: &str, default: Duration| -> Result<Duration, String> {
            match std::env::var(variable) {
                Ok(text) if !text.trim().is_empty() => text
                    .trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|&secs| secs > 0)
                    .map(Duration::from_secs)
                    .ok_or_else(|| format!("{variable}={text:?} is not a whole number of seconds")),
                _ => Ok(default),
            }
        };
        Ok(Limits {
            per_test: seconds("LAB_GRADE_TEST_SECS", Limits::DEFAULT.per_test)?,
            budget: seconds("LAB_GRADE_BUDGET_SECS", Limits::DEFAULT.budget)?,
            output: Limits::DEFAULT.output,
        })
    }
}

/// Variables that would change how libtest reports or how the suite
/// explores; a grade must not depend on the shell it was started from.
const UNSET: &[&str] = &[
    "LAB_CHILD",
    "LAB_EXPLORE_CASES",
    "LAB_BACKTRACE",
    "LAB_EXPECT_CRATE",
    "RUST_TEST_NOCAPTURE",
    "RUST_TEST_THREADS",
    "RUST_TEST_SHUFFLE",
    "RUST_TEST_SHUFFLE_SEED",
    "RUST_TEST_TIME_UNIT",
    "RUST_TEST_TIME_INTEGRATION",
    "RUST_TEST_TIME_DOCTEST",
];

/// The sealed run's results: every test's outcome, and the forgeries seen,
/// as `(test, what was seen)`.
pub struct Sealed {
    pub results: Results,
    pub forgeries: Vec<(String, String)>,
}

/// What a build compiles: the student's crate alone, or a test target of
/// the façade with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target<'a> {
    /// The student's crate and the façade over it, as the tests will use
    /// them (`cargo test --lib --no-run`, so with the tests' features and
    /// profile): a later build of a test target finds them built.
    Crate,
    /// A test target: `lab`, the suite, or `tuning`, the tuning task's
    /// simulation.
    Test(&'a str),
}

/// A build: the test binary, if a test target was built, and whether the
/// student's crate was compiled by it (`false`: it was already built, and
/// used as it was).
pub struct Built {
    pub binary: Option<PathBuf>,
    pub compiled_the_crate: bool,
}

/// The package of the student's crate in the grading workspace.
const STUDENT_PACKAGE: &str = "#retry-breaker-starter@";

/// Builds `what` in `workspace` (a scratch copy), the build's processes
/// started by `confinement`, or returns the compiler's output if it did not
/// build.
///
/// The build ends by `deadline` too: a crate the compiler is still busy
/// with then (a compile-time loop, a type that never ends) does not build.
pub fn build(
    workspace: &Path,
    target: &Path,
    what: Target<'_>,
    deadline: Instant,
    confinement: &Confinement,
) -> Result<Built, String> {
    let mut command = confinement.command(confine::cargo(), Role::Build);
    command
        .current_dir(workspace)
        .envs(STUDENT_ENV.iter().copied())
        .env("CARGO_TARGET_DIR", target)
        .env("CARGO_TERM_COLOR", "never")
        .arg("test");
    match what {
        Target::Crate => command.arg("--lib"),
        Target::Test(test) => command.args(["--test", test]),
    };
    command.args(["--no-run", "--message-format", "json-render-diagnostics"]);
    // The build's own output is the grader's, not the student's: no cap
    // beyond a generous one.
    let lent = confinement.lend(&[workspace, target])?;
    let ran = bounded(
        command,
        deadline.saturating_duration_since(Instant::now()),
        16 << 20,
    );
    lent.give_back()?;
    let ran = ran?;
    let stderr = ran.stderr;
    let Some(status) = ran.status else {
        return Err(format!(
            "error: the build was still running when the grade's time budget ran out, and the \
             grader stopped it\n{stderr}"
        ));
    };
    if !status.success() {
        return Err(stderr);
    }
    let artifacts: Vec<&str> = ran
        .stdout
        .lines()
        .filter(|line| line.contains("\"reason\":\"compiler-artifact\""))
        .collect();
    let compiled_the_crate = artifacts
        .iter()
        .any(|line| line.contains(STUDENT_PACKAGE) && line.contains("\"fresh\":false"));
    let Target::Test(test) = what else {
        return Ok(Built {
            binary: None,
            compiled_the_crate,
        });
    };
    artifacts
        .iter()
        .filter(|line| {
            line.contains(&format!("\"name\":\"{test}\"")) && line.contains("\"kind\":[\"test\"]")
        })
        .find_map(|line| json_field(line, "executable"))
        .map(|binary| Built {
            binary: Some(PathBuf::from(binary)),
            compiled_the_crate,
        })
        .ok_or(stderr)
}

/// The string value of `"field":"..."` in one line of cargo's JSON.
fn json_field(line: &str, field: &str) -> Option<String> {
    let start = line.find(&format!("\"{field}\":\""))? + field.len() + 4;
    let mut value = String::new();
    let mut chars = line[start..].chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(value),
            '\\' => value.push(chars.next()?),
            c => value.push(c),
        }
    }
    None
}

/// The tests the binary holds, without the ignored ones (helpers that other
/// tests run in a child process). Listing runs none of the student's code.
pub fn list(binary: &Path, workspace: &Path) -> Result<Vec<String>, String> {
    let list = |ignored: bool| -> Result<Vec<String>, String> {
        let output = Command::new(binary)
            .current_dir(workspace)
            .args(["--list", "--format", "terse"])
            .args(ignored.then_some("--ignored"))
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", binary.display()))?;
        if !output.status.success() {
            return Err(String::from_utf8_lossy(&output.stderr).into_owned());
        }
        Ok(suite::listed(&String::from_utf8_lossy(&output.stdout)))
    };
    Ok(suite::runnable(list(false)?, &list(true)?))
}

/// The tests of `binary` under `module::` that a plain run ignores: the
/// tuning task's graded levels, which only a grade runs.
pub fn list_ignored(binary: &Path, workspace: &Path, module: &str) -> Result<Vec<String>, String> {
    let output = Command::new(binary)
        .current_dir(workspace)
        .args(["--list", "--format", "terse", "--ignored"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", binary.display()))?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    let prefix = format!("{module}::");
    Ok(suite::listed(&String::from_utf8_lossy(&output.stdout))
        .into_iter()
        .filter(|name| name.starts_with(&prefix))
        .collect())
}

/// One sealed run: each of `tests` of `binary`, run in `workspace` with
/// `env` added to the student environment, each for at most
/// `limits.per_test` and none after `deadline`.
pub struct Run<'a> {
    pub binary: &'a Path,
    pub workspace: &'a Path,
    pub tests: &'a [String],
    pub env: &'a [(&'a str, &'a str)],
    pub limits: Limits,
    pub deadline: Instant,
}

/// Runs each test of `run` in a process of its own, a few at a time, and
/// judges what each left behind.
///
/// Where the confinement has a mount namespace, the whole run happens in
/// one ([`crate::grading::runner`]): entering a namespace and covering the
/// held-back folders once per grade rather than once per test, which cost
/// five more processes for each of the suite's several hundred tests.
pub fn run(run: &Run, confinement: &Confinement) -> Sealed {
    let done = if confinement.namespaced() {
        crate::grading::runner::run_confined(run, confinement)
    } else {
        run_tests(run, confinement)
    };
    let mut sealed = Sealed {
        results: Results::new(),
        forgeries: Vec::new(),
    };
    for (test, ran) in done {
        let judged = match ran {
            Ok(ran) => judge(&test, run.limits, &ran),
            Err(why) => Judged::failed(why),
        };
        if let Some(forgery) = judged.forgery {
            sealed.forgeries.push((test.clone(), forgery));
        }
        sealed.results.insert(test, judged.outcome);
    }
    sealed.forgeries.sort();
    sealed
}

/// What each test of `run` left behind, run here, each test's process
/// started by `confinement` (as `nobody`, where it switches users):
/// [`run`]'s work where there is no namespace, and the runner's inside one.
pub(crate) fn run_tests(
    run: &Run,
    confinement: &Confinement,
) -> Vec<(String, Result<Ran, String>)> {
    let next = Mutex::new(0usize);
    let done = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(1, 4));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let index = {
                        let mut next = next.lock().expect("no worker panics holding it");
                        let index = *next;
                        *next += 1;
                        index
                    };
                    let Some(test) = run.tests.get(index) else {
                        break;
                    };
                    let left = run.deadline.saturating_duration_since(Instant::now());
                    let ran = if left.is_zero() {
                        Ok(Ran::not_run())
                    } else {
                        run_one(run, test, left, confinement)
                    };
                    done.lock()
                        .expect("no worker panics holding it")
                        .push((test.clone(), ran));
                }
            });
        }
    });
    done.into_inner().expect("the workers are done")
}

/// What one test's process left behind.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Ran {
    /// `None` if the grader had to stop it, or never started it.
    pub(crate) status: Option<ExitStatus>,
    /// Why the grader stopped it, or did not start it.
    pub(crate) stopped: Option<Stopped>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    /// Whether either stream ran past the limit and was cut.
    pub(crate) cut: bool,
}

/// Why the grader ended a test itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stopped {
    /// It ran for its whole limit.
    TestLimit,
    /// The grade's time budget ran out while it ran.
    Budget,
    /// The budget ran out before its turn.
    NotRun,
}

impl Ran {
    fn not_run() -> Ran {
        Ran {
            status: None,
            stopped: Some(Stopped::NotRun),
            stdout: String::new(),
            stderr: String::new(),
            cut: false,
        }
    }
}

fn run_one(
    run: &Run,
    test: &str,
    left: Duration,
    confinement: &Confinement,
) -> Result<Ran, String> {
    let Run {
        workspace,
        env,
        limits,
        ..
    } = *run;
    let mut command = confinement.command(run.binary, Role::Test);
    command
        .current_dir(workspace)
        // `--include-ignored` lets a test the binary ignores in a plain run
        // be run by its exact name: the tuning task's graded levels.
        .args([test, "--exact", "--include-ignored", "--test-threads", "1"])
        .args(["--format", "pretty", "--color", "never"])
        .envs(STUDENT_ENV.iter().copied())
        .envs(env.iter().copied());
    for variable in UNSET {
        command.env_remove(variable);
    }
    let limit = limits.per_test.min(left);
    let mut ran = bounded(command, limit, limits.output)?;
    if ran.status.is_none() {
        ran.stopped = Some(if limit < limits.per_test {
            Stopped::Budget
        } else {
            Stopped::TestLimit
        });
    }
    Ok(ran)
}

/// Runs `command` in a process group of its own for at most `limit`,
/// keeping at most `cap` bytes of each stream; past the limit the whole
/// group is killed (a test's own child processes too).
fn bounded(mut command: Command, limit: Duration, cap: usize) -> Result<Ran, String> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot run {:?}: {e}", command.get_program()))?;
    // Both pipes are read while the process runs, so a chatty one can
    // never fill one and stall.
    let stdout = drain(child.stdout.take(), cap);
    let stderr = drain(child.stderr.take(), cap);
    // The process is waited for on a thread of its own, so that its end is
    // seen when it comes rather than at the next look: a test takes a few
    // milliseconds, and a grade runs several hundred.
    let group = child.id();
    let (ended, end) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let status = child.wait();
        let _ = ended.send(());
        status
    });
    let in_time = end.recv_timeout(limit).is_ok();
    if !in_time {
        kill_group(group);
    }
    let status = waiter
        .join()
        .map_err(|_| "the thread waiting for a test panicked".to_owned())?
        .map_err(|e| e.to_string())?;
    let status = in_time.then_some(status);
    // A grandchild still holding a pipe would keep its reader waiting: the
    // group goes in any case.
    kill_group(group);
    let (stdout, cut_out) = stdout.join().unwrap_or_default();
    let (stderr, cut_err) = stderr.join().unwrap_or_default();
    Ok(Ran {
        status,
        stopped: None,
        stdout,
        stderr,
        cut: cut_out || cut_err,
    })
}

/// Kills every process of the group `group` (a test's, whose leader it
/// started).
fn kill_group(group: u32) {
    #[cfg(unix)]
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{group}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    #[cfg(not(unix))]
    let _ = Command::new("taskkill")
        .args(["/F", "/T", "/PID", &group.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Reads a child's pipe to its end on a thread of its own, keeping the
/// first `cap` bytes; says whether it dropped any.
fn drain(
    pipe: Option<impl Read + Send + 'static>,
    cap: usize,
) -> std::thread::JoinHandle<(String, bool)> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut cut = false;
        if let Some(mut pipe) = pipe {
            let mut buffer = [0u8; 8192];
            loop {
                match pipe.read(&mut buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(read) => {
                        let room = cap.saturating_sub(kept.len());
                        kept.extend_from_slice(&buffer[..read.min(room)]);
                        cut |= read > room;
                    }
                }
            }
        }
        (String::from_utf8_lossy(&kept).into_owned(), cut)
    })
}

/// One test's verdict, with the forgery that voided it, if any.
struct Judged {
    outcome: Outcome,
    forgery: Option<String>,
}

impl Judged {
    fn failed(why: String) -> Judged {
        Judged {
            outcome: Outcome {
                passed: false,
                output: format!("{why}\n"),
            },
            forgery: None,
        }
    }
}

/// The verdict of `test` from its own process: a pass only when the exit
/// status, libtest's summary and its one verdict line agree.
fn judge(test: &str, limits: Limits, ran: &Ran) -> Judged {
    let Some(status) = ran.status else {
        return Judged::failed(match ran.stopped {
            Some(Stopped::NotRun) => format!(
                "not run: time budget (the grade's {} s ran out before this test's turn)",
                limits.budget.as_secs()
            ),
            Some(Stopped::Budget) => format!(
                "stopped: time budget (the grade's {} s ran out while this test ran)",
                limits.budget.as_secs()
            ),
            _ => format!(
                "the test was still running after {} s, and the grader stopped it",
                limits.per_test.as_secs()
            ),
        });
    };
    if ran.cut {
        return Judged::failed(format!(
            "the test printed more than the {} KiB a test may, so its verdict cannot be read; \
             it earns nothing",
            limits.output / 1024
        ));
    }
    let mut ours = Vec::new();
    let mut others = Vec::new();
    let mut summaries = Vec::new();
    for line in ran.stdout.lines() {
        if let Some(summary) = line.strip_prefix("test result: ") {
            summaries.push(summary);
        } else if let Some((name, verdict)) = line
            .strip_prefix("test ")
            .and_then(|rest| rest.rsplit_once(" ... "))
        {
            if name == test {
                ours.push(verdict.trim());
            } else {
                others.push(name);
            }
        }
    }
    let summary_passed = |summary: &&str| summary.starts_with("ok. 1 passed; 0 failed;");
    let said_pass = ours == ["ok"] && summaries.len() == 1 && summaries.iter().all(summary_passed);
    let forgery = if !others.is_empty() {
        Some(format!(
            "its output has verdict lines for tests that did not run in its process ({})",
            others.join(", ")
        ))
    } else if ours.len() > 1 {
        Some(format!("its verdict line appears {} times", ours.len()))
    } else if summaries.len() > 1 {
        Some(format!(
            "libtest's summary line appears {} times",
            summaries.len()
        ))
    } else if status.success() && !said_pass {
        Some("the process exited with success, but libtest reported no pass".to_owned())
    } else if !status.success() && (ours.contains(&"ok") || summaries.iter().any(summary_passed)) {
        Some("its output reports a pass that the exit status contradicts".to_owned())
    } else {
        None
    };
    if let Some(forgery) = forgery {
        return Judged {
            outcome: Outcome {
                passed: false,
                output: format!("forged: {forgery}; the test earns nothing\n"),
            },
            forgery: Some(forgery),
        };
    }
    if status.success() {
        return Judged {
            outcome: Outcome {
                passed: true,
                output: String::new(),
            },
            forgery: None,
        };
    }
    // A failure: what libtest printed of it, or why the process died.
    let said = suite::parse(&ran.stdout)
        .remove(test)
        .map(|outcome| outcome.output)
        .filter(|output| !output.trim().is_empty());
    Judged::failed(match said {
        Some(output) => output.trim_end().to_owned(),
        None => suite::died(&ran.stderr, Some(test)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    const NAME: &str = "step01_closed::b2_x";

    fn ran(code: i32, stdout: &str) -> Ran {
        Ran {
            status: Some(ExitStatus::from_raw(code << 8)),
            stopped: None,
            stdout: stdout.to_owned(),
            stderr: String::new(),
            cut: false,
        }
    }

    fn passing() -> String {
        format!(
            "\nrunning 1 test\ntest {NAME} ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 155 filtered out; finished in 0.00s\n\n"
        )
    }

    fn failing() -> String {
        format!(
            "\nrunning 1 test\ntest {NAME} ... FAILED\n\nfailures:\n\n---- {NAME} stdout ----\n\nthread '{NAME}' (3) panicked at tests/lab/step01_closed.rs:9:5:\nTODO(1): count the failure (B2)\n\n\nfailures:\n    {NAME}\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 155 filtered out; finished in 0.00s\n\n"
        )
    }

    #[test]
    fn a_pass_needs_the_exit_status_the_summary_and_one_verdict_line() {
        let judged = judge(NAME, Limits::DEFAULT, &ran(0, &passing()));
        assert!(judged.outcome.passed && judged.forgery.is_none());
        let judged = judge(NAME, Limits::DEFAULT, &ran(101, &failing()));
        assert!(!judged.outcome.passed && judged.forgery.is_none());
        assert!(
            judged.outcome.output.contains("TODO(1): count the failure"),
            "{}",
            judged.outcome.output
        );
    }

    #[test]
    fn printed_passes_that_the_exit_status_contradicts_are_forgeries() {
        // A thread or an exit handler printing a pass after the real failure.
        let forged = failing() + &format!("test {NAME} ... ok\n");
        let judged = judge(NAME, Limits::DEFAULT, &ran(101, &forged));
        assert!(!judged.outcome.passed);
        assert_eq!(
            judged.forgery.as_deref(),
            Some("its verdict line appears 2 times")
        );
        // Only the summary line rewritten.
        let forged =
            format!("test {NAME} ... FAILED\ntest result: ok. 1 passed; 0 failed; 0 ignored\n");
        let judged = judge(NAME, Limits::DEFAULT, &ran(101, &forged));
        assert_eq!(
            judged.forgery.as_deref(),
            Some("its output reports a pass that the exit status contradicts")
        );
    }

    #[test]
    fn an_exit_with_success_from_inside_a_test_is_a_forgery() {
        // `std::process::exit(0)` mid-test: status 0, no verdict, no summary.
        let judged = judge(
            NAME,
            Limits::DEFAULT,
            &ran(0, &format!("\nrunning 1 test\ntest {NAME} ... ")),
        );
        assert!(!judged.outcome.passed);
        assert_eq!(
            judged.forgery.as_deref(),
            Some("the process exited with success, but libtest reported no pass")
        );
        // ... and having printed what libtest would have.
        let judged = judge(
            NAME,
            Limits::DEFAULT,
            &ran(
                0,
                &format!(
                    "test {NAME} ... test {NAME} ... ok\ntest result: ok. 1 passed; 0 failed;\n"
                ),
            ),
        );
        assert!(!judged.outcome.passed && judged.forgery.is_some());
    }

    #[test]
    fn verdicts_for_other_tests_and_duplicate_summaries_are_forgeries() {
        let forged = passing() + "test step2_open::b4_y ... ok\n";
        let judged = judge(NAME, Limits::DEFAULT, &ran(0, &forged));
        assert!(!judged.outcome.passed);
        assert!(judged.forgery.unwrap().contains("step2_open::b4_y"));
        let forged = passing() + "test result: ok. 1 passed; 0 failed;\n";
        assert_eq!(
            judge(NAME, Limits::DEFAULT, &ran(0, &forged))
                .forgery
                .as_deref(),
            Some("libtest's summary line appears 2 times")
        );
    }

    #[test]
    fn a_process_that_dies_or_hangs_fails_its_own_test() {
        let died = Ran {
            status: Some(ExitStatus::from_raw(6)),
            stopped: None,
            stdout: format!("running 1 test\ntest {NAME} ... "),
            stderr: "thread caused non-unwinding panic. aborting.\n".to_owned(),
            cut: false,
        };
        let judged = judge(NAME, Limits::DEFAULT, &died);
        assert!(!judged.outcome.passed && judged.forgery.is_none());
        assert!(
            judged
                .outcome
                .output
                .contains("aborted while this test ran"),
            "{}",
            judged.outcome.output
        );
        let stopped = |stopped| Ran {
            status: None,
            stopped: Some(stopped),
            stdout: String::new(),
            stderr: String::new(),
            cut: false,
        };
        let said = |ran: Ran| judge(NAME, Limits::DEFAULT, &ran).outcome.output;
        assert!(said(stopped(Stopped::TestLimit)).contains("still running after 20 s"));
        assert!(said(stopped(Stopped::Budget)).starts_with("stopped: time budget"));
        assert!(said(stopped(Stopped::NotRun)).starts_with("not run: time budget"));
        // Output past the cap: the verdict lines may be beyond it.
        let mut long = ran(0, &passing());
        long.cut = true;
        let judged = judge(NAME, Limits::DEFAULT, &long);
        assert!(!judged.outcome.passed && judged.outcome.output.contains("printed more"));
    }

    fn shell(script: &str) -> Command {
        let mut command = Command::new("sh");
        command.args(["-c", script]);
        command
    }

    /// A process that spins is stopped at its limit with every process it
    /// started, and one that prints without end keeps only the cap.
    #[test]
    fn a_bounded_process_ends_at_its_limit_with_its_children_and_keeps_only_the_cap() {
        let started = Instant::now();
        // The child keeps the pipe open: only killing the group ends it.
        let ran = bounded(
            shell("sleep 30 & sleep 30"),
            Duration::from_millis(300),
            1024,
        )
        .unwrap();
        assert!(ran.status.is_none());
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        let ran = bounded(shell("yes | head -c 100000"), Duration::from_secs(10), 1000).unwrap();
        assert!(ran.status.is_some_and(|status| status.success()));
        assert_eq!(ran.stdout.len(), 1000);
        assert!(ran.cut);
        let ran = bounded(shell("echo fine"), Duration::from_secs(10), 1000).unwrap();
        assert_eq!((ran.stdout.as_str(), ran.cut), ("fine\n", false));
    }

    /// Past the deadline nothing more runs: every test left fails as not
    /// run, whatever its binary would have done.
    #[test]
    fn tests_after_the_budget_are_not_run() {
        let tests = vec!["a".to_owned(), "b".to_owned()];
        let sealed = run(
            &Run {
                binary: Path::new("/nonexistent-binary"),
                workspace: Path::new("."),
                tests: &tests,
                env: &[],
                limits: Limits::DEFAULT,
                deadline: Instant::now(),
            },
            &Confinement::none(),
        );
        assert_eq!(sealed.results.len(), 2);
        for outcome in sealed.results.values() {
            assert!(!outcome.passed);
            assert!(
                outcome.output.starts_with("not run: time budget"),
                "{}",
                outcome.output
            );
        }
    }

    #[test]
    fn the_test_binary_is_read_from_cargos_json() {
        let line = r#"{"reason":"compiler-artifact","target":{"kind":["test"],"name":"lab"},"executable":"/t/debug/deps/lab-1a\"b","fresh":true}"#;
        assert_eq!(
            json_field(line, "executable").as_deref(),
            Some("/t/debug/deps/lab-1a\"b")
        );
        assert_eq!(json_field(line, "missing"), None);
    }
}
