//! Step 1, CLOSED: count consecutive failures and open at the threshold
//! (TODO(1); rules B1, B2, B9).

use std::time::Duration;

use retry_breaker::{ConfigError, ManualClock, Phase, Recorded, RetryBreaker, State};

use crate::support::{Lab, ms};

#[test]
fn b1_a_zero_threshold_is_refused_with_a_clear_error() {
    let result = RetryBreaker::new(0, ms(10), ManualClock::new());
    let error = result.expect_err("TODO(1): RetryBreaker::new must refuse a threshold of 0 (B1)");
    assert_eq!(error, ConfigError::ZeroThreshold);
    assert!(
        error.to_string().contains("at least 1"),
        "the message should tell the user what to pass: {error}"
    );
}

#[test]
fn b1_a_zero_cooldown_is_legal() {
    let breaker = RetryBreaker::new(1, Duration::ZERO, ManualClock::new()).unwrap();
    breaker.try_acquire().unwrap().failure();
    assert_eq!(
        breaker.state(),
        State::Open {
            remaining: Duration::ZERO
        }
    );
}

#[test]
fn b1_a_cooldown_too_long_to_represent_keeps_the_circuit_open_instead_of_panicking() {
    let lab = Lab::new(1, Duration::MAX);
    lab.advance(ms(1));
    lab.trip();
    assert_eq!(
        lab.breaker.state(),
        State::Open {
            remaining: Duration::MAX
        },
        "now + cooldown overflows, so the deadline never comes (B1)"
    );
}

#[test]
fn b2_failures_below_the_threshold_are_counted_and_keep_the_circuit_closed() {
    let lab = Lab::new(3, ms(10));
    for expected in 1..=2 {
        let permit = lab
            .breaker
            .try_acquire()
            .expect("CLOSED admits every attempt");
        assert_eq!(permit.failure(), Recorded::Counted, "B9");
        assert_eq!(lab.breaker.state(), State::Closed { failures: expected });
    }
    assert!(
        lab.transitions().is_empty(),
        "no transition below the threshold"
    );
}

#[test]
fn b2_the_circuit_opens_exactly_when_the_count_reaches_the_threshold() {
    let lab = Lab::new(3, ms(10));
    lab.trip();
    assert_eq!(lab.breaker.state(), State::Open { remaining: ms(10) });
    let transitions = lab.transitions();
    assert_eq!(transitions.len(), 1, "one transition: {transitions:?}");
    assert_eq!(
        (transitions[0].from, transitions[0].to),
        (Phase::Closed, Phase::Open)
    );
    assert_eq!(transitions[0].at, ms(0));
}

#[test]
fn b2_a_threshold_of_one_opens_on_the_first_failure() {
    let lab = Lab::new(1, ms(10));
    lab.breaker.try_acquire().unwrap().failure();
    assert_eq!(lab.breaker.state(), State::Open { remaining: ms(10) });
}

#[test]
fn b2_a_success_resets_the_consecutive_failure_count() {
    let lab = Lab::new(3, ms(10));
    lab.breaker.try_acquire().unwrap().failure();
    lab.breaker.try_acquire().unwrap().failure();
    assert_eq!(
        lab.breaker.try_acquire().unwrap().success(),
        Recorded::Counted,
        "B9"
    );
    assert_eq!(lab.breaker.state(), State::Closed { failures: 0 });
    // The count starts over: two more failures are not enough to open.
    lab.breaker.try_acquire().unwrap().failure();
    lab.breaker.try_acquire().unwrap().failure();
    assert_eq!(lab.breaker.state(), State::Closed { failures: 2 });
}

#[test]
fn b2_the_cooldown_runs_from_the_failure_that_reached_the_threshold() {
    let lab = Lab::new(2, ms(10));
    lab.breaker.try_acquire().unwrap().failure();
    lab.advance(ms(7));
    lab.breaker.try_acquire().unwrap().failure();
    assert_eq!(
        lab.breaker.state(),
        State::Open { remaining: ms(10) },
        "open until t = 17"
    );
    assert_eq!(lab.transitions()[0].at, ms(7));
    lab.advance(ms(4));
    assert_eq!(lab.breaker.state(), State::Open { remaining: ms(6) });
}

#[test]
fn b2_opening_starts_a_new_generation() {
    let lab = Lab::new(2, ms(10));
    let before = lab.breaker.generation();
    lab.trip();
    assert!(lab.breaker.generation() > before);
    assert_eq!(lab.transitions()[0].generation, lab.breaker.generation());
}
