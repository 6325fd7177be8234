//! A real-time guard around every async test, so a wrong implementation
//! fails with a hint instead of hanging the suite.

use std::future::Future;
use std::panic::resume_unwind;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::Duration;

/// Generous: a correct run takes microseconds, with no real sleep anywhere.
const LIMIT: Duration = Duration::from_secs(5);

/// Runs `test` on its own thread and runtime. If it has not finished within
/// the limit, fails with `hint`, which says what probably looped. A panic
/// inside `test` reaches the caller unchanged, so `todo!()` messages and
/// `should_panic` expectations work as usual.
///
/// A busy loop never yields, so an async timeout could not interrupt it;
/// hence a thread, which the test process abandons if it spins.
pub fn run<F>(hint: &str, test: F) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    on_a_runtime(hint, false, test)
}

/// [`run`] on paused tokio time, which moves only when every task waits on
/// the timer: deadlines and real sleeps pass at once, and exactly.
pub fn run_paused<F>(hint: &str, test: F) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    on_a_runtime(hint, true, test)
}

/// [`run`] and [`run_paused`]: one current-thread runtime, under [`guard`].
fn on_a_runtime<F>(hint: &str, paused: bool, test: F) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    guard(hint, LIMIT, move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(paused)
            .build()
            .expect("a tokio runtime")
            .block_on(test)
    })
}

/// The synchronous twin of [`run`], for property and stress tests: runs
/// `test` on its own thread and fails with `hint` if it takes longer than
/// `limit` (or `LAB_WATCHDOG_SECS` seconds, for deep runs). A panic inside
/// `test` reaches the caller unchanged.
pub fn guard<T: Send + 'static>(
    hint: &str,
    limit: Duration,
    test: impl FnOnce() -> T + Send + 'static,
) -> T {
    let limit = std::env::var("LAB_WATCHDOG_SECS")
        .ok()
        .and_then(|secs| secs.parse().ok())
        .map_or(limit, Duration::from_secs);
    super::panics::install();
    let (done, finished) = mpsc::channel();
    // The worker carries the test's own name, so a panic on it is reported
    // under the test that failed.
    let name = thread::current().name().unwrap_or("lab-test").to_owned();
    let worker = thread::Builder::new()
        .name(name)
        .spawn(move || {
            let output = test();
            let _ = done.send(());
            output
        })
        .expect("a test thread");
    match finished.recv_timeout(limit) {
        // Disconnected: the worker panicked before reporting; join says how.
        Ok(()) | Err(RecvTimeoutError::Disconnected) => match worker.join() {
            Ok(output) => output,
            Err(panic) => resume_unwind(panic),
        },
        Err(RecvTimeoutError::Timeout) => {
            panic!("watchdog: the test was still running after {limit:?}; probably {hint}")
        }
    }
}

/// A last resort for the synchronous tests, which run on the test's own
/// thread: if the test holding the alarm is still running after `limit`
/// (a deadlock, say), the whole suite stops with a message naming the test,
/// instead of hanging forever. Dropping the alarm disarms it.
pub struct Alarm {
    armed: std::sync::Arc<std::sync::atomic::AtomicBool>,
    watcher: thread::Thread,
}

impl Alarm {
    pub fn set(limit: Duration) -> Alarm {
        super::panics::install();
        use std::sync::atomic::{AtomicBool, Ordering};
        let armed = std::sync::Arc::new(AtomicBool::new(true));
        let test = thread::current().name().unwrap_or("a test").to_owned();
        let flag = std::sync::Arc::clone(&armed);
        let watcher = thread::spawn(move || {
            let start = std::time::Instant::now();
            while flag.load(Ordering::SeqCst) && start.elapsed() < limit {
                thread::park_timeout(limit.saturating_sub(start.elapsed()));
            }
            if flag.load(Ordering::SeqCst) {
                // Straight to the process's stderr: the test harness would
                // swallow a captured message when the process exits.
                use std::io::Write as _;
                let _ = writeln!(
                    std::io::stderr(),
                    "\nwatchdog: {test} was still running after {limit:?}; probably a deadlock \
                     (a lock taken twice, or held while calling back into the breaker). Stopping the suite."
                );
                std::process::exit(101);
            }
        })
        .thread()
        .clone();
        Alarm { armed, watcher }
    }
}

impl Drop for Alarm {
    fn drop(&mut self) {
        self.armed.store(false, std::sync::atomic::Ordering::SeqCst);
        self.watcher.unpark();
    }
}
