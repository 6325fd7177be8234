//! Step 4, generations: an outcome from before the last transition is stale
//! and changes nothing (TODO(4); rules B6, B9).

use retry_breaker::{ManualClock, Permit, Recorded, State};

use crate::support::{Lab, ms};

/// Opens a threshold-2 circuit at t = 0 while `early` (admitted CLOSED) is
/// still out, then advances to the end of the cooldown.
fn open_behind<'a>(lab: &'a Lab) -> Permit<'a, ManualClock> {
    let early = lab.breaker.try_acquire().unwrap();
    lab.trip();
    lab.advance(ms(10));
    early
}

#[test]
fn b6_a_stale_success_does_not_close_a_half_open_circuit() {
    let lab = Lab::new(2, ms(10));
    let early = open_behind(&lab);
    let probe = lab.probe();
    assert_eq!(
        early.success(),
        Recorded::Stale,
        "TODO(4): an outcome from an older generation must be reported as stale (B6, B9)"
    );
    assert_eq!(
        lab.breaker.state(),
        State::HalfOpen {
            probe_in_flight: true
        }
    );
    probe.success();
}

#[test]
fn b6_a_stale_failure_does_not_reopen_a_half_open_circuit() {
    let lab = Lab::new(2, ms(10));
    let early = open_behind(&lab);
    let probe = lab.probe();
    assert_eq!(
        early.failure(),
        Recorded::Stale,
        "TODO(4): stale outcomes change nothing (B6)"
    );
    assert_eq!(
        lab.breaker.state(),
        State::HalfOpen {
            probe_in_flight: true
        }
    );
    probe.success();
    assert_eq!(lab.breaker.state(), State::Closed { failures: 0 });
}

#[test]
fn b6_a_stale_failure_does_not_count_against_a_reclosed_circuit() {
    let lab = Lab::new(2, ms(10));
    let early = open_behind(&lab);
    lab.probe().success();
    assert_eq!(
        early.failure(),
        Recorded::Stale,
        "TODO(4): stale outcomes change nothing (B6)"
    );
    assert_eq!(lab.breaker.state(), State::Closed { failures: 0 });
}

#[test]
fn b6_a_stale_success_does_not_reset_the_count_of_a_reclosed_circuit() {
    let lab = Lab::new(3, ms(10));
    let early = lab.breaker.try_acquire().unwrap();
    lab.trip();
    lab.advance(ms(10));
    lab.probe().success();
    lab.breaker.try_acquire().unwrap().failure();
    assert_eq!(
        early.success(),
        Recorded::Stale,
        "TODO(4): stale outcomes change nothing (B6)"
    );
    assert_eq!(lab.breaker.state(), State::Closed { failures: 1 });
}

/// A control: an OPEN circuit admits nothing, so no current permit can
/// report while it is open and the provided code already ignores outcomes
/// there; this pins down that a late outcome never moves the deadline.
#[test]
fn b6_a_stale_outcome_while_open_changes_nothing() {
    let lab = Lab::new(2, ms(10));
    let early = lab.breaker.try_acquire().unwrap();
    let late = lab.breaker.try_acquire().unwrap();
    lab.trip();
    let generation = lab.breaker.generation();
    assert_eq!(
        early.success(),
        Recorded::Stale,
        "TODO(4): stale outcomes change nothing (B6)"
    );
    assert_eq!(
        late.failure(),
        Recorded::Stale,
        "TODO(4): stale outcomes change nothing (B6)"
    );
    assert_eq!(lab.breaker.state(), State::Open { remaining: ms(10) });
    assert_eq!(lab.breaker.generation(), generation);
    assert_eq!(lab.transitions().len(), 1);
}

/// A control: only transitions make outcomes stale. A success or a failure
/// that changes no state must not fence off the attempts still in flight.
#[test]
fn b6_outcomes_stay_current_until_a_transition_happens() {
    let lab = Lab::new(3, ms(10));
    let first = lab.breaker.try_acquire().unwrap();
    let second = lab.breaker.try_acquire().unwrap();
    let third = lab.breaker.try_acquire().unwrap();
    assert_eq!(first.generation(), second.generation());
    assert_eq!(first.failure(), Recorded::Counted);
    // This success resets a count of 1: a change of count, not of state.
    assert_eq!(second.success(), Recorded::Counted);
    assert_eq!(
        third.failure(),
        Recorded::Counted,
        "no transition happened, so nothing is stale"
    );
    assert_eq!(lab.breaker.state(), State::Closed { failures: 1 });
}
