//! Coarse readings (`Clock::coarse_now`): an OPEN breaker refuses from one
//! while its deadline is further away than the reading's lag, and reads the
//! exact clock otherwise, so the probe still comes at the exact deadline.
//! The time left such a refusal states may be up to the lag too long.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use retry_breaker_solution::{Clock, Coarse, ManualClock, Rejected, RetryBreaker, State};

const MS: Duration = Duration::from_millis(1);

/// A manual clock with a coarse reading that runs `behind` the exact time,
/// stating `lag` as its bound, and a count of the exact readings taken.
#[derive(Clone)]
struct Lagging {
    exact: ManualClock,
    behind: Duration,
    lag: Duration,
    exact_readings: Arc<AtomicU32>,
}

impl Lagging {
    fn new(behind: Duration, lag: Duration) -> Self {
        Self {
            exact: ManualClock::new(),
            behind,
            lag,
            exact_readings: Arc::default(),
        }
    }

    fn exact_readings(&self) -> u32 {
        self.exact_readings.load(Ordering::SeqCst)
    }
}

impl Clock for Lagging {
    fn now(&self) -> Duration {
        self.exact_readings.fetch_add(1, Ordering::SeqCst);
        self.exact.now()
    }

    fn coarse_now(&self) -> Option<Coarse> {
        Some(Coarse {
            reading: self.exact.now().saturating_sub(self.behind),
            lag: self.lag,
        })
    }
}

/// A breaker that opened at t = 0 for 100 ms, and the clock at `at`.
fn opened(clock: &Lagging, at: Duration) -> RetryBreaker<Lagging> {
    let breaker = RetryBreaker::new(1, 100 * MS, clock.clone()).unwrap();
    breaker.try_acquire().unwrap().failure();
    clock.exact.advance(at);
    breaker
}

fn left(refusal: Result<impl Sized, Rejected>) -> Duration {
    match refusal {
        Err(Rejected::Open { remaining }) => remaining,
        Err(other) => panic!("refused as {other:?}, not as OPEN"),
        Ok(_) => panic!("admitted, not refused"),
    }
}

#[test]
fn far_from_the_deadline_a_refusal_reads_only_the_coarse_clock_and_may_state_up_to_its_lag_more() {
    // At 50 ms, with the coarse clock 5 ms behind and 8 ms stated.
    let clock = Lagging::new(5 * MS, 8 * MS);
    let breaker = opened(&clock, 50 * MS);
    let before = clock.exact_readings();
    let remaining = left(breaker.try_acquire());
    assert_eq!(
        clock.exact_readings(),
        before,
        "a deadline 50 ms away, more than the 8 ms lag: the coarse reading decides"
    );
    assert_eq!(remaining, 55 * MS, "the time left from the coarse reading");
    assert!(
        remaining >= 50 * MS && remaining <= 58 * MS,
        "never less than the exact time left, at most the lag more"
    );
}

#[test]
fn within_the_lag_of_the_deadline_a_refusal_reads_the_exact_clock() {
    // At 95 ms a coarse reading of 95 ms could be as late as 103 ms: it
    // cannot tell whether the deadline has passed, so the exact clock does.
    let clock = Lagging::new(Duration::ZERO, 8 * MS);
    let breaker = opened(&clock, 95 * MS);
    let before = clock.exact_readings();
    assert_eq!(left(breaker.try_acquire()), 5 * MS, "the exact time left");
    assert!(clock.exact_readings() > before, "the exact clock was read");
}

#[test]
fn the_probe_comes_at_the_exact_deadline_whatever_the_coarse_clock_says() {
    // The coarse clock at its worst, the whole lag behind. A nanosecond
    // before the deadline it refuses, stating up to the lag too much left.
    let clock = Lagging::new(8 * MS, 8 * MS);
    let breaker = opened(&clock, 100 * MS - Duration::from_nanos(1));
    assert_eq!(
        left(breaker.try_acquire()),
        8 * MS + Duration::from_nanos(1)
    );
    // At 100 ms it says 92 ms, which could be as late as 100 ms: the exact
    // clock is read, and the deadline has come.
    clock.exact.advance(Duration::from_nanos(1));
    let probe = breaker.try_acquire().expect("at the deadline, the probe");
    assert_eq!(
        breaker.state(),
        State::HalfOpen {
            probe_in_flight: true
        }
    );
    probe.success();
}

#[test]
fn a_borrowed_or_shared_clock_offers_the_same_coarse_reading() {
    let clock = Lagging::new(5 * MS, 8 * MS);
    clock.exact.advance(50 * MS);
    let own = clock.coarse_now();
    assert_eq!(
        own,
        Some(Coarse {
            reading: 45 * MS,
            lag: 8 * MS
        })
    );
    let borrowed: &Lagging = &clock;
    assert_eq!(
        <&Lagging as Clock>::coarse_now(&borrowed),
        own,
        "through a reference"
    );
    assert_eq!(Arc::new(clock.clone()).coarse_now(), own, "through an Arc");
}

#[test]
fn a_clock_without_a_coarse_reading_is_read_exactly_for_every_refusal() {
    let clock = ManualClock::new();
    assert_eq!(clock.coarse_now(), None);
    let breaker = RetryBreaker::new(1, 100 * MS, clock.clone()).unwrap();
    breaker.try_acquire().unwrap().failure();
    clock.advance(50 * MS);
    assert_eq!(left(breaker.try_acquire()), 50 * MS, "exactly, as always");
}

/// Off Linux, or without the `coarse-clock` feature, there is no coarse
/// reading to check.
#[test]
#[cfg(all(target_os = "linux", feature = "coarse-clock"))]
fn the_system_clocks_coarse_reading_is_never_ahead_of_an_exact_reading_after_it() {
    let clock = retry_breaker_solution::SystemClock::new();
    let first = clock
        .coarse_now()
        .expect("on Linux the system clock offers a coarse reading");
    assert!(
        first.lag > Duration::ZERO && first.lag <= 21 * MS,
        "{:?}",
        first.lag
    );
    for _ in 0..10_000 {
        // Only the ordering is asserted, never how far behind it ran: that
        // depends on when the thread was scheduled.
        let coarse = clock.coarse_now().expect("a coarse reading");
        let exact = clock.now();
        assert!(
            coarse.reading <= exact,
            "coarse {:?} ahead of exact {exact:?}",
            coarse.reading
        );
    }
}
