//! A probe timeout (P1-P3): a probe that has not reported in time counts as
//! failed when the next admission request finds it overdue, and its own
//! outcome, whenever it comes, is stale.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use retry_breaker_solution::{
    ConfigError, Event, ManualClock, Phase, Recorded, Rejected, RetryBreaker, State,
};

use crate::{Breaking, COOLDOWN, hear, moves};

const TIMEOUT: Duration = Duration::from_secs(5);
const NANO: Duration = Duration::from_nanos(1);

/// A breaker that opens at the first failure and gives a probe `TIMEOUT`,
/// already open with its cooldown over: the next attempt is the probe.
fn probing(success_threshold: u32) -> (RetryBreaker<ManualClock>, ManualClock) {
    let clock = ManualClock::new();
    let breaker = RetryBreaker::builder()
        .threshold(1)
        .cooldown(COOLDOWN)
        .success_threshold(success_threshold)
        .probe_timeout(TIMEOUT)
        .build(clock.clone())
        .expect("valid settings");
    breaker.try_acquire().unwrap().failure();
    clock.advance(COOLDOWN);
    (breaker, clock)
}

#[test]
fn p1_a_probe_is_overdue_from_its_exact_deadline_and_counts_as_failed() {
    let (breaker, clock) = probing(1);
    let (breaker, heard) = hear(breaker);
    let probe = breaker.try_acquire().expect("the probe");

    clock.advance(TIMEOUT - NANO);
    assert_eq!(breaker.try_acquire().unwrap_err(), Rejected::ProbeInFlight);
    clock.advance(NANO);
    assert_eq!(
        breaker.try_acquire().unwrap_err(),
        Rejected::Open {
            remaining: COOLDOWN
        },
        "reopened for a whole cooldown from now, and this request refused"
    );
    assert_eq!(
        moves(&heard),
        [
            (Phase::Open, Phase::HalfOpen, 2),
            (Phase::HalfOpen, Phase::Open, 3)
        ]
    );
    assert_eq!(heard.lock().unwrap()[1].at, COOLDOWN + TIMEOUT);
    drop(probe);
}

#[test]
fn p2_the_overdue_probe_s_outcome_is_stale_whatever_it_is() {
    for verdict in [true, false] {
        let (breaker, clock) = probing(1);
        let probe = breaker.try_acquire().expect("the probe");
        clock.advance(TIMEOUT);
        assert!(breaker.try_acquire().is_err());

        let recorded = if verdict {
            probe.success()
        } else {
            probe.failure()
        };
        assert_eq!(recorded, Recorded::Stale);
        assert_eq!(
            breaker.state(),
            State::Open {
                remaining: COOLDOWN
            }
        );
        assert_eq!(breaker.generation().get(), 3);
    }
}

#[test]
fn p1_a_probe_that_reports_in_time_decides_as_ever() {
    let (breaker, clock) = probing(1);
    let probe = breaker.try_acquire().expect("the probe");
    clock.advance(TIMEOUT - NANO);
    assert_eq!(probe.success(), Recorded::Counted);
    assert_eq!(breaker.state(), State::Closed { failures: 0 });
    clock.advance(TIMEOUT * 10);
    assert!(
        breaker.try_acquire().is_ok(),
        "a closed circuit has no probe to time"
    );
}

#[test]
fn p1_each_probe_has_its_own_deadline_from_its_admission() {
    let (breaker, clock) = probing(2);
    let first = breaker.try_acquire().expect("the first probe");
    clock.advance(Duration::from_secs(3));
    assert_eq!(first.success(), Recorded::Counted, "one good probe of two");
    clock.advance(Duration::from_secs(3));
    let second = breaker.try_acquire().expect("the second probe");

    clock.advance(TIMEOUT - NANO);
    assert_eq!(breaker.try_acquire().unwrap_err(), Rejected::ProbeInFlight);
    assert_eq!(second.success(), Recorded::Counted);
    assert_eq!(breaker.state(), State::Closed { failures: 0 });
}

#[test]
fn p1_a_dropped_probe_frees_its_slot_and_the_next_probe_starts_its_own_time() {
    let (breaker, clock) = probing(1);
    drop(breaker.try_acquire().expect("the probe"));
    clock.advance(Duration::from_secs(4));
    let next = breaker.try_acquire().expect("the next probe");
    clock.advance(TIMEOUT - NANO);
    assert_eq!(breaker.try_acquire().unwrap_err(), Rejected::ProbeInFlight);
    clock.advance(NANO);
    assert!(matches!(breaker.try_acquire(), Err(Rejected::Open { .. })));
    assert_eq!(next.success(), Recorded::Stale);
}

#[test]
fn p1_reading_the_state_of_an_overdue_probe_changes_nothing() {
    let (breaker, clock) = probing(1);
    let probe = breaker.try_acquire().expect("the probe");
    clock.advance(TIMEOUT * 3);
    let generation = breaker.generation();
    assert_eq!(
        breaker.state(),
        State::HalfOpen {
            probe_in_flight: true
        },
        "B10: only an admission request notices"
    );
    assert_eq!(breaker.generation(), generation);
    assert_eq!(
        probe.success(),
        Recorded::Counted,
        "still in time: nobody asked"
    );
}

#[test]
fn p1_the_reopening_is_told_before_the_refusal_it_causes() {
    let told = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&told);
    let (breaker, clock) = probing(1);
    let breaker = breaker.with_event_sink(move |event| log.lock().unwrap().push(*event));
    let _probe = breaker.try_acquire().expect("the probe");
    clock.advance(TIMEOUT);
    assert!(breaker.try_acquire().is_err());

    let told = told.lock().unwrap();
    let names: Vec<_> = told.iter().map(Event::name).collect();
    assert_eq!(
        names,
        [
            "circuit_half_opened",
            "admitted",
            "circuit_opened",
            "rejected"
        ]
    );
}

#[test]
fn p1_a_clock_that_panics_as_a_probe_is_judged_leaves_the_circuit_as_it_was() {
    let clock = Breaking::default();
    let breaker = RetryBreaker::builder()
        .threshold(1)
        .cooldown(COOLDOWN)
        .probe_timeout(TIMEOUT)
        .build(&clock)
        .expect("valid settings");
    breaker.try_acquire().unwrap().failure();
    clock.clock.advance(COOLDOWN);
    let probe = breaker.try_acquire().expect("the probe");
    clock.clock.advance(TIMEOUT);

    clock.broken.store(true, Ordering::SeqCst);
    let caught = panic::catch_unwind(AssertUnwindSafe(|| breaker.try_acquire().is_ok()));
    assert!(caught.is_err(), "the clock's panic reaches the caller");
    clock.broken.store(false, Ordering::SeqCst);
    assert_eq!(breaker.generation().get(), 2, "no transition was made");
    assert_eq!(
        breaker.try_acquire().unwrap_err(),
        Rejected::Open {
            remaining: COOLDOWN
        }
    );
    assert_eq!(probe.failure(), Recorded::Stale);
}

#[test]
fn p1_a_closed_circuit_with_a_probe_timeout_never_reads_the_clock_to_admit() {
    let clock = Breaking::default();
    let breaker = RetryBreaker::builder()
        .probe_timeout(TIMEOUT)
        .build(&clock)
        .expect("valid settings");
    clock.broken.store(true, Ordering::SeqCst);
    assert!(breaker.try_acquire().is_ok());
}

#[test]
fn p3_a_probe_timeout_of_zero_is_refused_and_one_nanosecond_is_not() {
    let built = RetryBreaker::builder()
        .probe_timeout(Duration::ZERO)
        .build(ManualClock::new());
    assert_eq!(built.unwrap_err(), ConfigError::ZeroProbeTimeout);
    assert!(
        RetryBreaker::builder()
            .probe_timeout(NANO)
            .build(ManualClock::new())
            .is_ok()
    );
}
