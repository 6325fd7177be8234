//! A time-based window (T1-T4): the failure rate over the last period on
//! the breaker's clock, kept in ten slots, opening at a verdict as a window
//! of the last N does (W1), emptied when the circuit closes (W2).

use std::time::Duration;

use retry_breaker_solution::{ConfigError, ManualClock, Phase, RetryBreaker, State, WindowConfig};

use crate::{COOLDOWN, hear, moves};

const PERIOD: Duration = Duration::from_secs(10);
/// A tenth of the period: one slot.
const SLOT: Duration = Duration::from_secs(1);
const NANO: Duration = Duration::from_nanos(1);

fn timed(minimum: u32, failure_rate: f64) -> (RetryBreaker<ManualClock>, ManualClock) {
    let clock = ManualClock::new();
    let breaker = RetryBreaker::builder()
        .cooldown(COOLDOWN)
        .window(WindowConfig::timed(PERIOD, minimum, failure_rate))
        .build(clock.clone())
        .expect("valid settings");
    (breaker, clock)
}

/// Reports `verdicts` in a row (`true` for a failure).
fn report(breaker: &RetryBreaker<ManualClock>, verdicts: &[bool]) {
    for &failed in verdicts {
        let permit = breaker.try_acquire().expect("a closed circuit admits");
        if failed {
            permit.failure();
        } else {
            permit.success();
        }
    }
}

fn is_open(breaker: &RetryBreaker<ManualClock>) -> bool {
    matches!(breaker.state(), State::Open { .. })
}

#[test]
fn t2_it_opens_at_the_verdict_that_reaches_both_the_minimum_and_the_rate() {
    let (breaker, _) = timed(4, 0.5);
    report(&breaker, &[true, true, false]);
    assert_eq!(
        breaker.state(),
        State::Closed { failures: 2 },
        "3 verdicts: below the minimum"
    );
    assert_eq!(breaker.to_string(), "CLOSED (2 failures in the last 10s)");
    report(&breaker, &[false]);
    assert!(
        is_open(&breaker),
        "2 failures in 4: the rate, at the minimum"
    );
}

#[test]
fn t2_a_share_just_below_the_rate_keeps_it_closed() {
    let (breaker, _) = timed(4, 0.5);
    report(&breaker, &[true, false, false, false, true, false, false]);
    assert_eq!(breaker.state(), State::Closed { failures: 2 }, "2 in 7");
    report(&breaker, &[false]);
    assert_eq!(breaker.state(), State::Closed { failures: 2 }, "2 in 8");
    report(&breaker, &[true, true, true]);
    assert_eq!(
        breaker.state(),
        State::Closed { failures: 5 },
        "5 in 11, just below"
    );
    report(&breaker, &[true]);
    assert!(is_open(&breaker), "6 in 12");
}

#[test]
fn t1_a_verdict_counts_until_its_slot_leaves_the_period_and_not_a_nanosecond_more() {
    // Two failures in the first slot, then a failure and a success just
    // before it leaves: 3 in 4 opens.
    let (breaker, clock) = timed(4, 0.75);
    report(&breaker, &[true, true]);
    clock.advance(PERIOD - NANO);
    report(&breaker, &[true, false]);
    assert!(is_open(&breaker), "the first slot is still in the window");

    // The same, a nanosecond later: the first two have left, and 2
    // verdicts are below the minimum.
    let (breaker, clock) = timed(4, 0.75);
    report(&breaker, &[true, true]);
    clock.advance(PERIOD);
    report(&breaker, &[true, false]);
    assert_eq!(breaker.state(), State::Closed { failures: 1 });
}

#[test]
fn t1_a_verdict_may_leave_up_to_one_slot_early_never_later() {
    // Counted late in the first slot, a verdict leaves with that slot: a
    // little more than nine tenths of the period after it was counted.
    let (breaker, clock) = timed(2, 1.0);
    clock.advance(SLOT - NANO);
    report(&breaker, &[true]);
    clock.advance(PERIOD - SLOT + NANO);
    report(&breaker, &[true]);
    assert_eq!(
        breaker.state(),
        State::Closed { failures: 1 },
        "the first has left"
    );

    let (breaker, clock) = timed(2, 1.0);
    clock.advance(SLOT - NANO);
    report(&breaker, &[true]);
    clock.advance(PERIOD - SLOT);
    report(&breaker, &[true]);
    assert!(is_open(&breaker), "one nanosecond before, it was still in");
}

#[test]
fn t1_slot_by_slot_the_oldest_verdicts_leave_first() {
    let (breaker, clock) = timed(5, 0.6);
    // One failure in each of the first three slots.
    for _ in 0..3 {
        report(&breaker, &[true]);
        clock.advance(SLOT);
    }
    // Slot 10 pushes slot 0 out: two failures remain, with two successes.
    clock.advance(PERIOD - SLOT * 3);
    report(&breaker, &[false, false]);
    assert_eq!(breaker.state(), State::Closed { failures: 2 });
    // Slot 12 pushes slots 1 and 2 out: no failure is left.
    clock.advance(SLOT * 2);
    report(&breaker, &[false]);
    assert_eq!(breaker.state(), State::Closed { failures: 0 });
}

#[test]
fn t1_a_read_shows_only_the_failures_still_in_the_period_and_changes_nothing() {
    let (breaker, clock) = timed(4, 0.75);
    report(&breaker, &[true, true]);
    clock.advance(PERIOD - NANO);
    assert_eq!(breaker.state(), State::Closed { failures: 2 }, "still in");
    clock.advance(NANO);
    assert_eq!(
        breaker.state(),
        State::Closed { failures: 0 },
        "a read after the period, with no verdict since, shows them gone"
    );
    assert_eq!(breaker.to_string(), "CLOSED (0 failures in the last 10s)");
    // The read let nothing go: the window moves on only at a verdict, and
    // these two failures are as gone for it as for the read.
    report(&breaker, &[true, true, true]);
    assert_eq!(
        breaker.state(),
        State::Closed { failures: 3 },
        "3 verdicts: below the minimum"
    );
}

#[test]
fn t1_a_long_silence_empties_the_whole_window_at_once() {
    let (breaker, clock) = timed(2, 0.5);
    report(&breaker, &[false, false, false, true]);
    assert_eq!(breaker.state(), State::Closed { failures: 1 }, "1 in 4");
    assert_eq!(breaker.to_string(), "CLOSED (1 failure in the last 10s)");
    clock.advance(PERIOD * 1000);
    report(&breaker, &[true]);
    assert_eq!(
        breaker.state(),
        State::Closed { failures: 1 },
        "1 verdict: below the minimum"
    );
    report(&breaker, &[false]);
    assert!(
        is_open(&breaker),
        "1 in 2, counting only the new verdicts (2 in 6 would not)"
    );
}

#[test]
fn w2_the_window_starts_empty_when_the_circuit_closes() {
    // A cooldown well within the period, so that the failures that opened
    // the circuit are still in the period when it closes.
    let clock = ManualClock::new();
    let breaker = RetryBreaker::builder()
        .cooldown(SLOT)
        .window(WindowConfig::timed(PERIOD, 2, 0.5))
        .build(clock.clone())
        .expect("valid settings");
    let (breaker, heard) = hear(breaker);
    report(&breaker, &[true, true]);
    assert!(is_open(&breaker));
    clock.advance(SLOT);
    breaker.try_acquire().expect("the probe").success();
    // Within the same period: the two failures would still count, had the
    // close not emptied the window.
    report(&breaker, &[true]);
    assert_eq!(breaker.state(), State::Closed { failures: 1 });
    assert_eq!(
        moves(&heard).iter().map(|m| (m.0, m.1)).collect::<Vec<_>>(),
        [
            (Phase::Closed, Phase::Open),
            (Phase::Open, Phase::HalfOpen),
            (Phase::HalfOpen, Phase::Closed)
        ]
    );
}

#[test]
fn t4_settings_that_cannot_work_are_refused_when_the_breaker_is_built() {
    let build = |window: WindowConfig| {
        RetryBreaker::builder()
            .window(window)
            .build(ManualClock::new())
            .err()
    };
    let short = Duration::from_nanos(9);
    assert_eq!(
        build(WindowConfig::timed(short, 1, 0.5)),
        Some(ConfigError::WindowPeriodTooShort { period: short })
    );
    assert_eq!(
        build(WindowConfig::timed(Duration::from_nanos(10), 1, 0.5)),
        None
    );
    assert_eq!(
        build(WindowConfig::timed(PERIOD, 0, 0.5)),
        Some(ConfigError::ZeroMinimum)
    );
    for rate in [0.0, -0.5, 1.0 + f64::EPSILON, f64::NAN] {
        assert_eq!(
            build(WindowConfig::timed(PERIOD, 1, rate)),
            Some(ConfigError::FailureRateOutOfRange),
            "{rate}"
        );
    }
    assert_eq!(build(WindowConfig::timed(PERIOD, 1, 1.0)), None);
    let config = WindowConfig::timed(PERIOD, 3, 0.5);
    assert_eq!(
        (config.period, config.size, config.minimum),
        (Some(PERIOD), 0, 3)
    );
    assert_eq!(WindowConfig::new(20, 10, 0.5).period, None);
}

#[test]
fn t1_a_time_based_window_can_hold_more_verdicts_than_any_count_window_would() {
    let (breaker, _) = timed(1_000, 0.5);
    for _ in 0..999 {
        report(&breaker, &[true]);
    }
    assert_eq!(breaker.state(), State::Closed { failures: 999 });
    report(&breaker, &[false]);
    assert!(is_open(&breaker), "999 in 1000");
}
