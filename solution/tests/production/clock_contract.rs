//! The clock's contract (`Clock`): a reading taken after another, on the
//! same thread or on one that has heard from it since, is never smaller.
//! The breaker compares readings taken on different threads, so each clock
//! the crate ships is held to it here, and a clock that keeps its own time
//! per thread, which breaks it, is shown to fail the same check.

use std::cell::Cell;
use std::sync::mpsc;
use std::time::Duration;

use retry_breaker_solution::{Clock, ManualClock, SystemClock, TokioClock};

/// Readings passed from thread to thread, each thread reading the clock
/// after it has heard the last reading: the first reading that is smaller
/// than the one before it, if any, as (before, after).
fn a_reading_that_went_back<C: Clock + Clone + Send + 'static>(
    clock: &C,
    advance: impl Fn(&C) + Send + Sync + Copy + 'static,
) -> Option<(Duration, Duration)> {
    let mut last = clock.now();
    for _ in 0..8 {
        let (to_thread, from_here) = mpsc::channel();
        let (to_here, from_thread) = mpsc::channel();
        let theirs = clock.clone();
        let thread = std::thread::spawn(move || {
            let heard: Duration = from_here.recv().expect("a reading");
            advance(&theirs);
            to_here.send((heard, theirs.now())).expect("an answer");
        });
        to_thread.send(last).expect("the thread listens");
        let (heard, read) = from_thread.recv().expect("the thread answers");
        thread.join().expect("the thread ends");
        if read < heard {
            return Some((heard, read));
        }
        advance(clock);
        last = clock.now();
        if last < read {
            return Some((read, last));
        }
    }
    None
}

#[test]
fn every_clock_the_crate_ships_reads_monotonic_time_across_threads() {
    let manual = ManualClock::new();
    assert_eq!(
        a_reading_that_went_back(&manual, |clock| clock.advance(Duration::from_millis(3))),
        None,
        "ManualClock"
    );
    assert_eq!(
        a_reading_that_went_back(&SystemClock::new(), |_| {}),
        None,
        "SystemClock"
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    let tokio = runtime.block_on(async { TokioClock::new() });
    assert_eq!(a_reading_that_went_back(&tokio, |_| {}), None, "TokioClock");
}

thread_local! {
    /// The time as each thread's `PerThread` clock has it.
    static NOW: Cell<Duration> = const { Cell::new(Duration::ZERO) };
}

/// A clock that breaks the contract: each thread keeps its own time, and
/// `advance` moves only the caller's, like per-core counters not kept in
/// step.
#[derive(Clone)]
struct PerThread;

impl Clock for PerThread {
    fn now(&self) -> Duration {
        NOW.with(Cell::get)
    }
}

#[test]
fn a_clock_that_keeps_time_per_thread_fails_the_check() {
    assert!(
        a_reading_that_went_back(&PerThread, |_| {
            NOW.with(|now| now.set(now.get() + Duration::from_millis(3)));
        })
        .is_some(),
        "a reading on another thread, after it heard a later one, must come out smaller"
    );
}
