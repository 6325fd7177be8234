//! Step 3, generations: an outcome from before the last transition is stale
//! and changes nothing (TODO(3); rules B6, B9).

use retry_breaker::{ManualClock, Permit, Recorded, State};

use crate::support::breaker_core::{
    Core, PROBING, assert_counted, assert_stale, assert_state, outlived_by_a_cooldown,
};
use crate::support::{Lab, ms};

const CHANGES_NOTHING: &str = "TODO(3): stale outcomes change nothing (B6)";

/// Opens the lab's circuit at t = 0 while `early` (admitted CLOSED) is
/// still out, then advances to the end of the cooldown.
fn open_behind<'a>(lab: &'a Lab) -> Permit<'a, ManualClock> {
    outlived_by_a_cooldown(lab, 1).remove(0)
}

#[test]
fn b6_a_stale_success_does_not_close_a_half_open_circuit() {
    let lab = Lab::new(2, ms(10));
    let early = open_behind(&lab);
    let probe = lab.probe();
    assert_stale!(
        early.success(),
        "TODO(3): an outcome from an older generation must be reported as stale (B6, B9)"
    );
    assert_state!(
        lab.breaker,
        PROBING,
        "TODO(3): the breaker must now be `State::HalfOpen {{probe_in_flight: true}}`"
    );
    probe.success();
}

#[test]
fn b6_a_stale_failure_does_not_reopen_a_half_open_circuit() {
    let lab = Lab::new(2, ms(10));
    let early = open_behind(&lab);
    let probe = lab.probe();
    assert_stale!(early.failure(), "{CHANGES_NOTHING}");
    assert_state!(
        lab.breaker,
        PROBING,
        "TODO(3): the breaker must now be `State::HalfOpen {{probe_in_flight: true}}`"
    );
    probe.success();
    assert_state!(
        lab.breaker,
        State::Closed { failures: 0 },
        "TODO(3): the breaker must now be `State::Closed {{failures: 0}}`"
    );
}

#[test]
fn b6_a_stale_failure_does_not_count_against_a_reclosed_circuit() {
    let lab = Lab::new(2, ms(10));
    let early = open_behind(&lab);
    lab.probe().success();
    assert_stale!(early.failure(), "{CHANGES_NOTHING}");
    assert_state!(
        lab.breaker,
        State::Closed { failures: 0 },
        "TODO(3): the breaker must now be `State::Closed {{failures: 0}}`"
    );
}

#[test]
fn b6_a_stale_success_does_not_reset_the_count_of_a_reclosed_circuit() {
    let lab = Lab::new(3, ms(10));
    let early = open_behind(&lab);
    lab.probe().success();
    lab.breaker.try_acquire().unwrap().failure();
    assert_stale!(early.success(), "{CHANGES_NOTHING}");
    assert_state!(
        lab.breaker,
        State::Closed { failures: 1 },
        "TODO(3): the breaker must now be `State::Closed {{failures: 1}}`"
    );
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
    assert_stale!(early.success(), "{CHANGES_NOTHING}");
    assert_stale!(late.failure(), "{CHANGES_NOTHING}");
    assert_state!(
        lab.breaker,
        State::Open { remaining: ms(10) },
        "TODO(3): the breaker must now be `State::Open {{remaining: ms(10)}}`"
    );
    assert_eq!(
        lab.breaker.generation(),
        generation,
        "TODO(3): the generation must be `generation`"
    );
    assert_eq!(
        lab.transitions().len(),
        1,
        "TODO(3): exactly 1 transition(s) so far"
    );
}

/// A control: only transitions make outcomes stale. A success or a failure
/// that changes no state must not fence off the attempts still in flight.
#[test]
fn b6_outcomes_stay_current_until_a_transition_happens() {
    let lab = Lab::new(3, ms(10));
    let first = lab.breaker.try_acquire().unwrap();
    let second = lab.breaker.try_acquire().unwrap();
    let third = lab.breaker.try_acquire().unwrap();
    assert_eq!(
        first.generation(),
        second.generation(),
        "TODO(3): expected `first.generation()` to equal `second.generation()`"
    );
    assert_counted!(
        first.failure(),
        "TODO(3): expected `first.failure()` to equal `Recorded::Counted`"
    );
    // This success resets a count of 1: a change of count, not of state.
    assert_counted!(
        second.success(),
        "TODO(3): expected `second.success()` to equal `Recorded::Counted`"
    );
    assert_counted!(
        third.failure(),
        "no transition happened, so nothing is stale"
    );
    assert_state!(
        lab.breaker,
        State::Closed { failures: 1 },
        "TODO(3): the breaker must now be `State::Closed {{failures: 1}}`"
    );
}

/// Where [`stale_permits_at`] stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Checkpoint {
    Open,
    HalfOpenProbeOut,
    ClosedWithAFailure,
    ClosedClean,
    OpenAgain,
    HalfOpenAgain,
}

/// Drives a threshold-2 breaker through every state while collecting
/// permits that go stale, and stops at `stop`. Returns the stale permits
/// (oldest first) and the permits that must stay out to hold the state.
fn stale_permits_at(
    lab: &Lab,
    stop: Checkpoint,
) -> (Vec<Permit<'_, ManualClock>>, Vec<Permit<'_, ManualClock>>) {
    let mut stale = vec![lab.breaker.try_acquire().unwrap()]; // g0
    lab.trip();
    if stop == Checkpoint::Open {
        return (stale, vec![]);
    }
    lab.advance(ms(10));
    let probe = lab.probe();
    if stop == Checkpoint::HalfOpenProbeOut {
        return (stale, vec![probe]);
    }
    probe.success();
    let closed = lab.breaker.try_acquire().unwrap();
    lab.breaker.try_acquire().unwrap().failure();
    if stop == Checkpoint::ClosedWithAFailure {
        return (stale, vec![closed]);
    }
    lab.breaker.try_acquire().unwrap().success();
    if stop == Checkpoint::ClosedClean {
        return (stale, vec![closed]);
    }
    lab.trip();
    stale.push(closed); // one generation behind, now
    if stop == Checkpoint::OpenAgain {
        return (stale, vec![]);
    }
    lab.advance(ms(10));
    (stale, vec![lab.probe()])
}

#[test]
fn b9_a_stale_report_says_so_and_changes_nothing_in_every_state() {
    use Checkpoint::*;
    for stop in [
        Open,
        HalfOpenProbeOut,
        ClosedWithAFailure,
        ClosedClean,
        OpenAgain,
        HalfOpenAgain,
    ] {
        let count = stale_permits_at(&Lab::new(2, ms(10)), stop).0.len();
        for which in 0..count {
            for success in [true, false] {
                let lab = Lab::new(2, ms(10));
                let (mut stale, _held) = stale_permits_at(&lab, stop);
                let permit = stale.swap_remove(which);
                let admitted = permit.generation();
                let before = (
                    lab.breaker.state(),
                    lab.breaker.generation(),
                    lab.transitions(),
                );
                let recorded = if success {
                    permit.success()
                } else {
                    permit.failure()
                };
                let verdict = if success { "success" } else { "failure" };
                assert_stale!(
                    recorded,
                    "TODO(3): at {stop:?} (generation {}), a {verdict} from generation {} is stale \
                     and must say so (B6, B9)",
                    before.1.get(),
                    admitted.get()
                );
                let (state, generation, transitions) = &before;
                assert_state!(
                    lab.breaker,
                    *state,
                    "TODO(3): at {stop:?}, a stale {verdict} from generation {} changed the state \
                     (B6: no count, no reset)",
                    admitted.get()
                );
                assert_eq!(
                    lab.breaker.generation(),
                    *generation,
                    "TODO(3): at {stop:?}, a stale {verdict} from generation {} made a new \
                     generation (B6: no transition)",
                    admitted.get()
                );
                assert_eq!(
                    lab.transitions(),
                    *transitions,
                    "TODO(3): at {stop:?}, a stale {verdict} from generation {} called the hook \
                     (B6: no transition)",
                    admitted.get()
                );
            }
        }
    }
}

#[test]
fn b6_a_stale_success_during_the_probe_leaves_the_probe_to_decide() {
    // The real hazard: the attempt admitted before the circuit opened comes
    // back with a success while the probe is still out. Counting it would
    // close the circuit on old news and let everyone in at once.
    for probe_succeeds in [true, false] {
        let lab = Lab::new(2, ms(10));
        let early = open_behind(&lab);
        let probe = lab.probe();
        assert_stale!(
            early.success(),
            "TODO(3): the success from before the circuit opened is stale (B6)"
        );
        assert!(
            lab.breaker.try_acquire().is_err(),
            "TODO(3): after a stale success the probe is still the only attempt let through (B5, B6)"
        );
        if probe_succeeds {
            assert_counted!(
                probe.success(),
                "TODO(3): expected `probe.success()` to equal `Recorded::Counted`"
            );
            assert_state!(
                lab.breaker,
                State::Closed { failures: 0 },
                "TODO(3): the breaker must now be `State::Closed {{failures: 0}}`"
            );
        } else {
            assert_counted!(
                probe.failure(),
                "TODO(3): the probe is current and its failure counts (B9)"
            );
            assert_state!(
                lab.breaker,
                State::Open { remaining: ms(10) },
                "TODO(3): the breaker must now be `State::Open {{remaining: ms(10)}}`"
            );
        }
    }
}

#[test]
fn b6_b12_an_owned_permit_of_an_older_generation_reports_stale_and_needs_no_clock() {
    let core = Core::new(1, ms(10));
    let early = core.breaker.try_acquire_owned().unwrap();
    let earlier = core.breaker.try_acquire_owned().unwrap();
    core.trip();
    core.advance(ms(10));
    let probe = core.probe();
    let in_flight = PROBING;
    assert_stale!(
        early.failure(),
        "TODO(3): B6, B9, B12, an owned permit from before the circuit opened reports stale"
    );
    assert_state!(
        core.breaker,
        in_flight,
        "TODO(3): B6, B12, and changes nothing: the probe still decides"
    );
    let mut recorded = None;
    assert_eq!(
        core.broken(|| recorded = Some(earlier.failure())),
        None,
        "TODO(3): B6, B12, a stale report changes nothing, so it needs no time: a broken clock \
         cannot stop it"
    );
    assert_eq!(
        recorded,
        Some(Recorded::Stale),
        "TODO(3): B9, it still says it was ignored"
    );
    assert_state!(core.breaker, in_flight, "TODO(3): B6, nothing changed");
    probe.success();
}

mod events;
