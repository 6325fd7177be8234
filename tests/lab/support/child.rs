//! Running one test in a process of its own, for the scenarios in which a
//! wrong implementation aborts the process (a panic while a panic unwinds):
//! in the suite's own process that would end every test at once.

use std::process::Command;

const CHILD: &str = "LAB_CHILD";

/// Whether this process is a child started by [`run_child`]. A child test
/// does nothing in a normal run (`--ignored` included).
pub fn is_child() -> bool {
    std::env::var_os(CHILD).is_some_and(|v| v == "1")
}

/// Runs the ignored test `name` (its full path, `step05_…::child_…`) in a new
/// process of this test binary, and fails with what it printed unless it
/// passed.
pub fn run_child(name: &str) {
    run_alone(
        name,
        true,
        "B11: the process aborted: a panic in the transition hook while another panic was \
         unwinding (a permit dropped by a panic reports a failure, which calls the hook) must be \
         caught and dropped, never allowed to escape a destructor.",
    );
}

/// For a test that explores many cases, where a wrong implementation may
/// abort the process (a panic in a destructor while another unwinds): runs
/// the calling test again in a process of its own, so that an abort fails
/// this test alone, on every route and whatever the other tests' timing.
/// Returns `true` in that process, where the caller runs its body; `false`
/// in the suite's own process once the child passed (a failure of the child
/// fails the caller with what the child said).
pub fn isolate(on_abort: &str) -> bool {
    if is_child() {
        return true;
    }
    let test = std::thread::current()
        .name()
        .expect("libtest names each test's thread after the test")
        .to_owned();
    run_alone(&test, false, on_abort);
    false
}

/// Runs the test `name` alone in a new process of this test binary, and
/// fails with what it printed unless it passed: with `on_abort` first if
/// the process aborted.
fn run_alone(name: &str, ignored: bool, on_abort: &str) {
    // This test's own failure is the child's message: no backtrace of the
    // parent's panic, whatever the shell's RUST_BACKTRACE says.
    super::panics::install();
    let exe = std::env::current_exe().expect("the test binary's path");
    let output = Command::new(exe)
        .args([name, "--exact", "--nocapture", "--test-threads", "1"])
        .args(ignored.then_some("--ignored"))
        .env(CHILD, "1")
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("a child process");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.status.success() && stdout.contains("1 passed") {
        return;
    }
    // What the child said, without libtest's own chatter or the child's
    // "thread ... panicked at" line: this test's failure says the rest.
    let said: Vec<&str> = stderr
        .lines()
        .chain(stdout.lines())
        .filter(|line| !is_chatter(line))
        .collect();
    if output.status.code().is_none() || said.iter().any(|l| l.contains("abort")) {
        panic!("{on_abort}\nthe child printed:\n{}", said.join("\n"));
    }
    panic!("{}", said.join("\n"));
}

/// Whether a line of the child's output is libtest's own, or the child's
/// "thread ... panicked at" header.
fn is_chatter(line: &str) -> bool {
    line.is_empty()
        || line.starts_with("running ")
        || line.starts_with("test ")
        || line.starts_with("note:")
        || line.contains("test result:")
        || (line.starts_with("thread '") && line.contains("' panicked at "))
}
