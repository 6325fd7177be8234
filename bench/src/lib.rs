//! What the benchmarks in `benches/breakers.rs` share: a way to drive a
//! future that is ready at once, the names of the measurements, and the
//! summary table that `just bench` prints at the end.
//!
//! Run them with `cargo bench -p retry-breaker-bench`; they never run as part
//! of the test suite.

pub mod paired;
pub mod target;

pub use target::{Goal, Target};

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::SystemTime;

/// Polls the future that `start` returns once, and returns its output.
///
/// Every future the benchmarks drive is ready at its first poll (the task's
/// future is `std::future::ready`), so no executor is needed, and the numbers
/// are the breakers' own cost rather than a runtime's. The future is pinned
/// where it is made, so that the harness does not add a copy of it: a copy
/// would cost a large future more than a small one, and that is a cost of
/// the harness, not of the breaker.
///
/// # Panics
///
/// If the future is not ready at its first poll.
#[inline(always)]
pub fn ready<F: Future>(start: impl FnOnce() -> F) -> F::Output {
    let mut cx = Context::from_waker(Waker::noop());
    match pin!(start()).poll(&mut cx) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("a benchmarked future was not ready at its first poll"),
    }
}

/// An inner `tower` service that answers every request at once, as cheaply
/// as a service can: what the layers are measured around.
#[derive(Debug, Clone, Copy)]
pub struct Answer;

impl tower::Service<u64> for Answer {
    type Response = u64;
    type Error = ();
    type Future = std::future::Ready<Result<u64, ()>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), ()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: u64) -> Self::Future {
        std::future::ready(Ok(request))
    }
}

/// The benchmark name of our breaker in every comparison group.
pub const OURS: &str = "ours";
/// The benchmark name of the `recloser` crate.
pub const RECLOSER: &str = "recloser";
/// The benchmark name of the `failsafe` crate.
pub const FAILSAFE: &str = "failsafe";
/// The benchmark name of the `tower-resilience` circuit breaker (its
/// `tower` service: `poll_ready`, then `call`).
pub const RESILIENCE: &str = "tower-resilience";

/// The peers, in the table's order.
pub const PEERS: [&str; 3] = [RECLOSER, FAILSAFE, RESILIENCE];

/// Comparison groups: the same operation on each breaker.
pub mod group {
    /// `execute` with a ready, successful task while CLOSED.
    pub const CLOSED_ASYNC: &str = "closed_success_async";
    /// `execute` while OPEN: the fast-fail.
    pub const OPEN_ASYNC: &str = "open_rejection_async";
    /// `try_acquire` plus a success report while CLOSED.
    pub const CLOSED_SYNC: &str = "closed_success_sync";
    /// `try_acquire` while OPEN.
    pub const OPEN_SYNC: &str = "open_rejection_sync";
    /// `execute` while HALF-OPEN with the probe out (the peers have no
    /// single-probe rule, so only ours is measured).
    pub const HALF_OPEN_ASYNC: &str = "half_open_rejection_async";
    /// `try_acquire` while HALF-OPEN with the probe out.
    pub const HALF_OPEN_SYNC: &str = "half_open_rejection_sync";
    /// `execute` with a ready, successful task on a CLOSED breaker in window
    /// mode (step 13), where every success takes the lock to enter the
    /// window. Only ours: the peers' windows are configured differently.
    pub const WINDOW_ASYNC: &str = "window_closed_success_async";
    /// Two threads calling `execute` on one CLOSED breaker; the time is wall
    /// time divided by the calls of both threads.
    pub const CONTENDED: &str = "two_threads_closed_async";
    /// As [`CONTENDED`], but both threads check ONE cancellation token (the
    /// application's shutdown token); also the token check alone on two
    /// threads, under the name [`TOKEN`](super::floor::TOKEN).
    pub const CONTENDED_SHARED_TOKEN: &str = "two_threads_shared_token";
    /// What no breaker can beat.
    pub const FLOOR: &str = "floor";
}

/// The floor measurements, in the [`group::FLOOR`] group.
pub mod floor {
    /// One uncontended `std::sync::Mutex` lock and unlock.
    pub const MUTEX: &str = "mutex_lock_unlock";
    /// One atomic load.
    pub const ATOMIC: &str = "atomic_load";
    /// One `Instant::now()`.
    pub const CLOCK: &str = "instant_now";
    /// One `CancellationToken::is_cancelled()`, which `execute` makes
    /// before every attempt; tokio-util answers it under a mutex.
    pub const TOKEN: &str = "token_is_cancelled";
}

/// One row of the summary table.
struct Row {
    label: &'static str,
    group: &'static str,
    /// The peers measured in this row: some have no such operation
    /// (`tower-resilience` is a `tower` service, with no call outside one).
    peers: &'static [&'static str],
}

const ALL_PEERS: &[&str] = &PEERS;
const NOT_TOWER: &[&str] = &[RECLOSER, FAILSAFE];

const ROWS: &[Row] = &[
    Row {
        label: "`execute`, CLOSED, ready success",
        group: group::CLOSED_ASYNC,
        peers: ALL_PEERS,
    },
    Row {
        label: "`execute`, OPEN rejection",
        group: group::OPEN_ASYNC,
        peers: ALL_PEERS,
    },
    Row {
        label: "`try_acquire` + `success`, CLOSED",
        group: group::CLOSED_SYNC,
        peers: NOT_TOWER,
    },
    Row {
        label: "`try_acquire`, OPEN rejection",
        group: group::OPEN_SYNC,
        peers: NOT_TOWER,
    },
    Row {
        label: "`execute`, HALF-OPEN rejection",
        group: group::HALF_OPEN_ASYNC,
        peers: &[],
    },
    Row {
        label: "`try_acquire`, HALF-OPEN rejection",
        group: group::HALF_OPEN_SYNC,
        peers: &[],
    },
    Row {
        label: "window mode: `execute`, CLOSED, ready success",
        group: group::WINDOW_ASYNC,
        peers: &[],
    },
    Row {
        label: "2 threads, one breaker: `execute`, CLOSED (wall ns per call)",
        group: group::CONTENDED,
        peers: NOT_TOWER,
    },
    Row {
        label: "2 threads, one breaker, ONE token: `execute`, CLOSED (wall ns per call)",
        group: group::CONTENDED_SHARED_TOKEN,
        peers: &[],
    },
];

/// Medians read back from criterion's output directory.
pub struct Medians {
    dir: PathBuf,
    since: SystemTime,
}

impl Medians {
    /// Reads the estimates under `dir` (criterion's output directory) that
    /// were written at or after `since`; older ones belong to an earlier run
    /// and are left out, so a filtered run never shows stale numbers.
    pub fn new(dir: PathBuf, since: SystemTime) -> Self {
        Medians { dir, since }
    }

    /// The median ns per iteration of `group/name`, if it ran this time.
    pub fn get(&self, group: &str, name: &str) -> Option<f64> {
        let path = self
            .dir
            .join(group)
            .join(name)
            .join("new")
            .join("estimates.json");
        let written = path.metadata().and_then(|m| m.modified()).ok()?;
        if written < self.since {
            return None;
        }
        let text = std::fs::read_to_string(&path).ok()?;
        let estimates: serde_json::Value = serde_json::from_str(&text).ok()?;
        estimates["median"]["point_estimate"].as_f64()
    }
}

/// Where criterion writes its results, found the way criterion finds it:
/// `$CRITERION_HOME`, else `criterion` in the cargo target directory.
pub fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    cargo_target_dir()
        .unwrap_or_else(|| PathBuf::from("target"))
        .join("criterion")
}

fn cargo_target_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return Some(PathBuf::from(dir));
    }
    let cargo = std::env::var_os("CARGO")?;
    let output = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .output()
        .ok()?;
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).ok()?;
    metadata["target_directory"].as_str().map(PathBuf::from)
}

/// The machine the numbers come from: logical CPUs and the CPU model.
pub fn machine() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, usize::from);
    let model = cpu_model(Path::new("/proc/cpuinfo")).unwrap_or_else(|| "unknown CPU".into());
    format!("{cpus} logical CPUs, {model}, {}", std::env::consts::OS)
}

/// The one-minute load average, where the system reports one: other work
/// on the machine during a run makes every number worse, and some more than
/// others.
pub fn load_average() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

fn cpu_model(cpuinfo: &Path) -> Option<String> {
    let text = std::fs::read_to_string(cpuinfo).ok()?;
    text.lines()
        .find_map(|line| line.strip_prefix("model name")?.split_once(':'))
        .map(|(_, model)| model.trim().to_owned())
}

/// The summary: a Markdown table of medians with each peer's ratio to ours,
/// the floor, and whether each of `targets` was met. `load` is the load
/// average when the run began, if known.
pub fn summary(medians: &Medians, load: Option<f64>, targets: &[Target]) -> String {
    let mut out = String::new();
    let ns = |value: Option<f64>| value.map_or_else(|| "–".to_owned(), |v| format!("{v:.1}"));
    let ratio = |peer: Option<f64>, ours: Option<f64>| match (peer, ours) {
        (Some(peer), Some(ours)) => format!("{:.2}x", peer / ours),
        _ => "–".to_owned(),
    };

    let load = load.map_or_else(String::new, |load| {
        format!(", load average {load:.2} at the start")
    });
    out.push_str(&format!(
        "Median ns per operation, one run, {}{load}.\n",
        machine()
    ));
    out.push_str("Ratio = the peer's time / ours (above 1: ours is faster).\n\n");

    let mut header = vec!["operation".to_owned(), "ours".to_owned()];
    for peer in PEERS {
        header.extend([peer.to_owned(), "ratio".to_owned()]);
    }
    let mut lines: Vec<Vec<String>> = vec![header];
    for row in ROWS {
        let ours = medians.get(row.group, OURS);
        let mut line = vec![row.label.to_owned(), ns(ours)];
        for peer in PEERS {
            if row.peers.contains(&peer) {
                let theirs = medians.get(row.group, peer);
                line.extend([ns(theirs), ratio(theirs, ours)]);
            } else {
                line.extend(["n/a".to_owned(), "n/a".to_owned()]);
            }
        }
        lines.push(line);
    }
    let floor = |name| medians.get(group::FLOOR, name);
    let (mutex, atomic, clock, token) = (
        floor(floor::MUTEX),
        floor(floor::ATOMIC),
        floor(floor::CLOCK),
        floor(floor::TOKEN),
    );
    for (label, value) in [
        ("floor: uncontended `Mutex` lock + unlock", mutex),
        ("floor: one atomic load", atomic),
        ("floor: one `Instant::now()`", clock),
        ("for reference: `CancellationToken::is_cancelled()`", token),
    ] {
        let mut line = vec![label.to_owned(), ns(value)];
        line.resize(2 + 2 * PEERS.len(), String::new());
        lines.push(line);
    }
    out.push_str(&markdown(&lines));

    let contended = |name| medians.get(group::CONTENDED, name);
    let per_second =
        |value: Option<f64>| value.map_or_else(|| "–".to_owned(), |v| format!("{:.1} M", 1e3 / v));
    out.push_str(&format!(
        "\nTwo threads on one breaker, aggregate calls per second: ours {}, recloser {}, failsafe {}.\n",
        per_second(contended(OURS)),
        per_second(contended(RECLOSER)),
        per_second(contended(FAILSAFE)),
    ));
    out.push_str(
        "recloser and failsafe admit every call while half-open, so they have no half-open rejection to compare; \
         tower-resilience is measured as a `tower` service (`poll_ready`, then `call`, which boxes a future and \
         takes an async mutex), so only where ours is called as a future too.\n",
    );

    if targets.is_empty() {
        out.push_str("\nTargets: not measured in this run (a filter that leaves out `targets`).\n");
    } else {
        out.push_str(
            "\nTargets, each judged on a paired measurement (the median of the rounds' ratios; in brackets, their quartiles):\n",
        );
        for target in targets {
            out.push_str(&format!("- {target}\n"));
        }
        out.push_str(
            "- no allocation on any path of `execute`, retrying or not: not timed here, but counted by \
             `tests/allocations.rs` (`just test-solution`), which fails on the first one\n",
        );
    }
    out.push('\n');
    let shared = |name| medians.get(group::CONTENDED_SHARED_TOKEN, name);
    if let Some((ours, alone)) = shared(OURS).zip(shared(floor::TOKEN)) {
        out.push_str(&token_sentence(ours, alone));
    }
    out
}

/// What sharing one token costs two threads. The token check alone is
/// measured with nothing between checks, so the two threads collide on its
/// mutex more often than whole calls do, and it can take longer than a
/// call: a share of the call is given only when it is one.
fn token_sentence(call: f64, alone: f64) -> String {
    let share = if alone <= call {
        format!(" ({:.0}% of the call)", 100.0 * alone / call)
    } else {
        String::from(
            " (more than a whole call: with nothing between the checks the threads collide on the token's mutex at every check)",
        )
    };
    format!(
        "Two threads sharing ONE token: {call:.1} ns per call; the token check alone, on both threads at once, {alone:.1} ns{share}.\n"
    )
}

/// Lays out `lines` (the first is the header) as an aligned Markdown table.
fn markdown(lines: &[Vec<String>]) -> String {
    let mut widths = vec![0; lines.first().map_or(0, Vec::len)];
    for line in lines {
        for (width, cell) in widths.iter_mut().zip(line) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for (index, line) in lines.iter().enumerate() {
        out.push('|');
        for (column, (cell, &width)) in line.iter().zip(&widths).enumerate() {
            let pad = width - cell.chars().count();
            if column == 0 {
                out.push_str(&format!(" {cell}{} |", " ".repeat(pad)));
            } else {
                out.push_str(&format!(" {}{cell} |", " ".repeat(pad)));
            }
        }
        out.push('\n');
        if index == 0 {
            out.push('|');
            for (column, &width) in widths.iter().enumerate() {
                let dashes = "-".repeat(width);
                if column == 0 {
                    out.push_str(&format!(" {dashes} |"));
                } else {
                    out.push_str(&format!(" {}: |", &dashes[1..]));
                }
            }
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_check_is_a_share_of_the_call_only_when_it_is_one() {
        assert_eq!(
            token_sentence(100.0, 95.0),
            "Two threads sharing ONE token: 100.0 ns per call; the token check alone, on both threads at once, 95.0 ns (95% of the call).\n"
        );
        let more = token_sentence(54.3, 72.3);
        assert!(!more.contains('%'), "{more}");
        assert!(more.contains("more than a whole call"), "{more}");
    }

    #[test]
    fn drives_a_ready_future() {
        assert_eq!(ready(|| std::future::ready(7)), 7);
    }

    #[test]
    #[should_panic(expected = "not ready")]
    fn refuses_a_pending_future() {
        ready(std::future::pending::<()>);
    }

    #[test]
    fn lays_out_an_aligned_markdown_table() {
        let lines = [
            ["op", "ours", "r", "x", "f", "y"]
                .map(str::to_owned)
                .to_vec(),
            ["long operation", "1.0", "22.5", "2.25x", "3", "3.00x"]
                .map(str::to_owned)
                .to_vec(),
        ];
        let table = markdown(&lines);
        let rows: Vec<&str> = table.lines().collect();
        assert_eq!(rows.len(), 3);
        assert!(rows.iter().all(|row| row.len() == rows[0].len()));
        assert!(rows[1].ends_with("-: |"));
    }

    #[test]
    fn a_run_without_results_says_so_instead_of_guessing() {
        let medians = Medians::new(PathBuf::from("/nonexistent"), SystemTime::now());
        let text = summary(&medians, None, &[]);
        assert!(text.contains("| `execute`, OPEN rejection"));
        assert!(!text.contains("met ("));
        assert!(text.contains("Targets: not measured in this run"));
    }
}
