//! Step 2, OPEN and HALF-OPEN: refuse attempts until the deadline without
//! counting anything, then let one probe decide (TODO(2); rules B1, B3, B4,
//! B5, B8, B9, B10).

use std::time::Duration;

use retry_breaker::{Phase, Recorded, Rejected, State};

use crate::support::breaker_core::{
    CLOCK_PANIC, Core, PROBING, TestClock, assert_counted, assert_refused, assert_state,
};
use crate::support::{Lab, ms};

/// The probe is out: HALF-OPEN, with its one slot taken (B4, B5).
#[track_caller]
fn assert_probing(lab: &Lab) {
    assert_state!(
        lab.breaker,
        PROBING,
        "TODO(2): the breaker must now be `State::HalfOpen {{probe_in_flight: true}}`"
    );
}

/// OPEN, at or past its deadline: the next attempt will be the probe (B10).
#[track_caller]
fn assert_open_with_nothing_left(lab: &Lab) {
    assert_state!(
        lab.breaker,
        State::Open {
            remaining: Duration::ZERO
        },
        "TODO(2): the breaker must now be `State::Open {{remaining: Duration::ZERO}}`"
    );
}

#[test]
fn b4_the_first_attempt_exactly_at_the_deadline_becomes_the_probe() {
    let lab = Lab::new(2, ms(10));
    lab.trip();
    lab.advance(ms(10));
    let probe = lab.probe();
    assert_probing(&lab);
    let last = *lab.transitions().last().unwrap();
    assert_eq!(
        (last.from, last.to),
        (Phase::Open, Phase::HalfOpen),
        "TODO(2): expected `(last.from, last.to)` to equal `(Phase::Open, Phase::HalfOpen)`"
    );
    assert_eq!(
        last.at,
        ms(10),
        "TODO(2): expected the Open -> HalfOpen transition at `ms(10)`, the reading of the operation that made it"
    );
    assert_eq!(
        probe.generation(),
        lab.breaker.generation(),
        "TODO(2): expected `probe.generation()` to equal `lab.breaker.generation()`"
    );
    probe.success();
}

#[test]
fn b4_an_attempt_long_after_the_deadline_also_becomes_the_probe() {
    let lab = Lab::new(1, ms(10));
    lab.trip();
    lab.advance(ms(1_000));
    let probe = lab.probe();
    assert_probing(&lab);
    probe.success();
}

#[test]
fn b4_the_cooldown_is_lazy_nothing_happens_until_an_attempt_asks() {
    let lab = Lab::new(1, ms(10));
    lab.trip();
    lab.advance(ms(50));
    // B10: reading after the deadline shows OPEN with nothing left, and
    // changes nothing: no transition, no new generation.
    let generation = lab.breaker.generation();
    assert_open_with_nothing_left(&lab);
    assert_open_with_nothing_left(&lab);
    assert_eq!(
        lab.breaker.generation(),
        generation,
        "TODO(2): the generation must be `generation`"
    );
    assert_eq!(lab.transitions().len(), 1, "only CLOSED -> OPEN so far");
    // The transition happens when an attempt asks, stamped with that time.
    let probe = lab.probe();
    assert_eq!(
        lab.transitions().len(),
        2,
        "TODO(2): exactly 2 transition(s) so far"
    );
    assert_eq!(
        lab.transitions()[1].at,
        ms(50),
        "TODO(2): expected `lab.transitions()[1].at` to equal `ms(50)`"
    );
    probe.failure();
}

#[test]
fn b5_only_one_probe_at_a_time_every_other_attempt_is_refused() {
    let lab = Lab::cooled(2, ms(10));
    let probe = lab.probe();
    for _ in 0..3 {
        assert_refused!(
            lab.breaker,
            Rejected::ProbeInFlight,
            "TODO(2): while the probe is out, other attempts are refused (B5)"
        );
    }
    assert_eq!(
        Rejected::ProbeInFlight.remaining(),
        Duration::ZERO,
        "TODO(2): expected `Rejected::ProbeInFlight.remaining()` to equal `Duration::ZERO`"
    );
    assert_probing(&lab);
    probe.success();
}

#[test]
fn b5_a_successful_probe_closes_the_circuit_with_a_clean_count() {
    let lab = Lab::cooled(2, ms(10));
    lab.probe().success();
    assert_state!(
        lab.breaker,
        State::Closed { failures: 0 },
        "TODO(2): the breaker must now be `State::Closed {{failures: 0}}`"
    );
    let last = *lab.transitions().last().unwrap();
    assert_eq!(
        (last.from, last.to),
        (Phase::HalfOpen, Phase::Closed),
        "TODO(2): expected `(last.from, last.to)` to equal `(Phase::HalfOpen, Phase::Closed)`"
    );
    // A clean count: one failure does not reopen a threshold-2 circuit.
    lab.breaker.try_acquire().unwrap().failure();
    assert_state!(
        lab.breaker,
        State::Closed { failures: 1 },
        "TODO(2): the breaker must now be `State::Closed {{failures: 1}}`"
    );
}

#[test]
fn b5_a_failed_probe_reopens_for_a_whole_cooldown_from_when_it_failed() {
    let lab = Lab::cooled(2, ms(10));
    let probe = lab.probe();
    lab.advance(ms(3));
    probe.failure();
    assert_state!(
        lab.breaker,
        State::Open { remaining: ms(10) },
        "open until t = 23"
    );
    let last = *lab.transitions().last().unwrap();
    assert_eq!(
        (last.from, last.to),
        (Phase::HalfOpen, Phase::Open),
        "TODO(2): expected `(last.from, last.to)` to equal `(Phase::HalfOpen, Phase::Open)`"
    );
    assert_eq!(
        last.at,
        ms(13),
        "TODO(2): expected the HalfOpen -> Open transition at `ms(13)`, the reading of the operation that made it"
    );
    lab.advance(ms(9));
    assert_refused!(
        lab.breaker,
        Rejected::Open { remaining: ms(1) },
        "TODO(2): expected `lab.breaker.try_acquire().unwrap_err()` to equal `Rejected::Open {{remaining: ms(1)}}`"
    );
    lab.advance(ms(1));
    lab.breaker
        .try_acquire()
        .expect("a new probe at t = 23")
        .success();
    assert_state!(
        lab.breaker,
        State::Closed { failures: 0 },
        "TODO(2): the breaker must now be `State::Closed {{failures: 0}}`"
    );
}

#[test]
fn b1_with_a_zero_cooldown_the_next_attempt_is_the_probe() {
    let lab = Lab::new(1, Duration::ZERO);
    lab.trip();
    let probe = lab.probe();
    assert_probing(&lab);
    probe.failure();
    assert_open_with_nothing_left(&lab);
}

#[test]
fn b1_a_huge_cooldown_that_still_fits_ends_when_the_clock_gets_there() {
    let lab = Lab::new(1, Duration::MAX - ms(5));
    lab.advance(ms(5));
    lab.trip();
    assert_state!(
        lab.breaker,
        State::Open {
            remaining: Duration::MAX - ms(5)
        },
        "TODO(2): the breaker must now be `State::Open {{remaining: Duration::MAX - ms(5)}}`"
    );
    lab.advance(Duration::MAX);
    lab.probe().success();
}

#[test]
fn b5_every_transition_starts_a_new_generation() {
    let lab = Lab::cooled(1, ms(10));
    lab.probe().failure();
    lab.advance(ms(10));
    lab.probe().success();
    let generations: Vec<u64> = lab
        .transitions()
        .iter()
        .map(|t| t.generation.get())
        .collect();
    assert_eq!(
        generations,
        [1, 2, 3, 4, 5],
        "TODO(2): expected `generations` to equal `[1, 2, 3, 4, 5]`"
    );
    assert_eq!(
        lab.breaker.generation().get(),
        5,
        "TODO(2): expected `lab.breaker.generation().get()` to equal `5`"
    );
}

// --- Reports (B9) and the transition hook (B8, B11) around the probe ---

#[test]
fn b9_a_probe_report_counts_whichever_way_it_goes() {
    for success in [true, false] {
        let lab = Lab::cooled(1, ms(10));
        let probe = lab.probe();
        let recorded = if success {
            probe.success()
        } else {
            probe.failure()
        };
        assert_counted!(
            recorded,
            "TODO(2): the probe's {} is current and decides (B5, B9)",
            if success { "success" } else { "failure" }
        );
        assert_eq!(
            lab.breaker.state().phase(),
            if success { Phase::Closed } else { Phase::Open },
            "TODO(2): the probe's {} decides: a success closes the circuit, a failure reopens it (B5, B9)",
            if success { "success" } else { "failure" }
        );
    }
}

#[test]
fn b8_the_hook_sees_every_transition_around_a_probe_once_and_complete() {
    crate::support::guard(
        "the hook deadlocked reading the breaker: it must run after the lock is released (B8)",
        Duration::from_secs(5),
        || {
            let hooked = crate::support::Hooked::reading(1, ms(10), |_, _| {});
            hooked.trip(); // CLOSED -> OPEN
            hooked.clock.advance(ms(10));
            let probe = hooked.probe(); // -> HALF-OPEN
            probe.failure(); // -> OPEN
            hooked.clock.advance(ms(10));
            let probe = hooked.probe(); // -> HALF-OPEN
            probe.success(); // -> CLOSED
            let seen: Vec<(Phase, Phase, Duration, Option<State>)> = hooked
                .seen()
                .iter()
                .map(|s| (s.transition.from, s.transition.to, s.transition.at, s.state))
                .collect();
            let half_open = Some(PROBING);
            let open = Some(State::Open { remaining: ms(10) });
            let closed = Some(State::Closed { failures: 0 });
            assert_eq!(
                seen,
                [
                    (Phase::Closed, Phase::Open, ms(0), open),
                    (Phase::Open, Phase::HalfOpen, ms(10), half_open),
                    (Phase::HalfOpen, Phase::Open, ms(10), open),
                    (Phase::Open, Phase::HalfOpen, ms(20), half_open),
                    (Phase::HalfOpen, Phase::Closed, ms(20), closed),
                ],
                "TODO(2): each transition reaches the hook once, after it is complete (B8)"
            );
            for seen in hooked.seen() {
                assert_eq!(
                    seen.generation,
                    Some(seen.transition.generation.get()),
                    "TODO(2): expected `seen.generation` to equal `Some(seen.transition.generation.get())`"
                );
            }
        },
    );
}

// --- OPEN refuses, and says for how long (B3) ---

#[test]
fn b3_an_open_circuit_refuses_attempts_and_says_how_long_is_left() {
    let lab = Lab::new(2, ms(10));
    lab.trip();
    lab.advance(ms(5));
    let rejection = lab.breaker.try_acquire().unwrap_err();
    assert_eq!(
        rejection,
        Rejected::Open { remaining: ms(5) },
        "TODO(2): expected `rejection` to equal `Rejected::Open {{remaining: ms(5)}}`"
    );
    assert_eq!(
        rejection.remaining(),
        ms(5),
        "TODO(2): expected `rejection.remaining()` to equal `ms(5)`"
    );
}

#[test]
fn b3_the_refusal_holds_until_the_last_instant_before_the_deadline() {
    let lab = Lab::new(1, ms(10));
    lab.trip();
    lab.advance(ms(10) - Duration::from_nanos(1));
    assert_refused!(
        lab.breaker,
        Rejected::Open {
            remaining: Duration::from_nanos(1)
        },
        "TODO(2): expected `lab.breaker.try_acquire().unwrap_err()` to equal `Rejected::Open {{remaining: Duration::from_nanos(1)}}`"
    );
}

#[test]
fn b3_refusals_change_no_count_no_deadline_and_no_generation() {
    let lab = Lab::new(2, ms(10));
    lab.trip();
    let generation = lab.breaker.generation();
    for left in [8, 6, 4] {
        lab.advance(ms(2));
        assert_refused!(
            lab.breaker,
            Rejected::Open {
                remaining: ms(left)
            },
            "the deadline stays where the failure put it"
        );
    }
    assert_state!(
        lab.breaker,
        State::Open { remaining: ms(4) },
        "TODO(2): the breaker must now be `State::Open {{remaining: ms(4)}}`"
    );
    assert_eq!(
        lab.breaker.generation(),
        generation,
        "TODO(2): the generation must be `generation`"
    );
    assert_eq!(
        lab.transitions().len(),
        1,
        "TODO(2): exactly 1 transition(s) so far"
    );
}

#[test]
fn b3_the_refusal_explains_itself_in_a_sentence() {
    let lab = Lab::new(1, ms(10));
    lab.trip();
    lab.advance(ms(4));
    let message = lab.breaker.try_acquire().unwrap_err().to_string();
    assert!(message.contains("open"), "{message}");
    assert!(
        message.contains("6ms"),
        "the message should give the time left: {message}"
    );
}

#[test]
fn b1_a_cooldown_too_long_to_represent_refuses_for_good() {
    let lab = Lab::new(1, Duration::MAX);
    lab.advance(ms(1));
    lab.trip();
    lab.advance(Duration::MAX);
    let rejection = lab.breaker.try_acquire().unwrap_err();
    assert_eq!(
        rejection,
        Rejected::Open {
            remaining: Duration::MAX
        },
        "TODO(2): expected `rejection` to equal `Rejected::Open {{remaining: Duration::MAX}}`"
    );
    assert!(rejection.to_string().contains("stays open"), "{rejection}");
}

#[test]
fn b8_a_hook_may_even_ask_for_a_permit_and_report_on_it() {
    crate::support::guard(
        "the hook deadlocked calling the breaker: it must run after the lock is released (B8)",
        Duration::from_secs(5),
        || {
            let hooked = crate::support::Hooked::new(1, ms(10), |breaker, transition| {
                if transition.to == Phase::Open {
                    assert!(
                        breaker.try_acquire().is_err(),
                        "TODO(2): inside the hook the circuit is already OPEN"
                    );
                }
            });
            hooked.trip();
            assert_state!(
                hooked.breaker,
                State::Open { remaining: ms(10) },
                "TODO(1): the breaker must now be `State::Open {{remaining: ms(10)}}`"
            );
            assert_eq!(
                hooked.seen().len(),
                1,
                "TODO(2): a refusal is no transition"
            );
        },
    );
}

#[test]
fn b12_a_clock_that_panics_at_an_open_admission_changes_nothing_before_or_at_the_deadline() {
    let core = Core::new(1, ms(10));
    core.trip();
    let opened_in = core.breaker.generation();
    for (at, left) in [(ms(4), ms(6)), (ms(6), Duration::ZERO)] {
        core.advance(at);
        assert_eq!(
            core.broken(|| core.breaker.try_acquire().map(drop))
                .as_deref(),
            Some(CLOCK_PANIC),
            "B12: an admission into an OPEN circuit reads the clock, and its panic reaches the \
             caller of try_acquire unchanged"
        );
        assert_state!(
            core.breaker,
            State::Open { remaining: left },
            "B12: the interrupted admission changed nothing: still OPEN until 10 ms"
        );
        assert_eq!(
            core.breaker.generation(),
            opened_in,
            "B12: no probe was admitted, so no transition"
        );
    }
    core.probe().success();
    assert_state!(
        core.breaker,
        State::Closed { failures: 0 },
        "TODO(2): B12, not wedged: once the clock works, the next attempt is the probe"
    );
}

#[test]
fn b10_b12_a_clock_that_panics_when_the_state_is_read_changes_nothing() {
    let core = Core::new(1, ms(10));
    core.trip();
    core.advance(ms(4));
    assert_eq!(
        core.broken(|| core.breaker.state()).as_deref(),
        Some(CLOCK_PANIC),
        "B10, B12: reading an OPEN state reads the clock, and its panic reaches the reader"
    );
    assert_eq!(
        core.broken(|| format!("{:?}", core.breaker)).as_deref(),
        Some(CLOCK_PANIC),
        "B12: so does Debug's reading"
    );
    assert_state!(
        core.breaker,
        State::Open { remaining: ms(6) },
        "B10, B12: reads change nothing, even interrupted"
    );
    core.advance(ms(6));
    core.probe().success();
    assert_state!(
        core.breaker,
        State::Closed { failures: 0 },
        "TODO(2): B12, not wedged: the probe at the deadline closes the circuit"
    );
}

/// Whether the crate under test refuses an OPEN attempt without its lock.
/// Only the solution does (its lock-free shortcut); a refusal under the lock
/// reads the clock inside the critical section, where nothing can happen
/// between the reading and the state (and where a reopening would wait for
/// the lock).
fn refuses_without_the_lock() -> bool {
    retry_breaker::UNDER_TEST == "solution"
}

#[test]
fn b3_a_refusal_never_says_more_than_a_cooldown_is_left_even_when_the_circuit_reopens_as_it_reads_the_clock()
 {
    let core = Core::new(1, ms(10));
    core.trip();
    core.advance(ms(5));
    // Right after the refusal's reading at t = 5 ms, another caller probes
    // at t = 12 ms and fails: OPEN again, until 22 ms.
    let reopen = |breaker: &retry_breaker::RetryBreaker<TestClock>| {
        breaker.clock().advance(ms(7));
        breaker
            .try_acquire()
            .expect("TODO(2): at 12 ms the cooldown is over: the probe")
            .failure();
    };
    let refused = if refuses_without_the_lock() {
        core.on_next_read(reopen);
        core.breaker.try_acquire().err()
    } else {
        let refused = core.breaker.try_acquire().err();
        reopen(&core.breaker);
        refused
    };
    let Some(Rejected::Open { remaining }) = refused else {
        panic!("TODO(2): B3, at 5 ms into a 10 ms cooldown the attempt is refused: {refused:?}");
    };
    assert!(
        remaining <= ms(10),
        "B3: a refusal never says more than a cooldown is left, but said {remaining:?} of 10 ms: \
         it read the clock (5 ms) before it read the state, which a probe failing at 12 ms had \
         reopened until 22 ms in between (the state first, then the clock)"
    );
    assert_eq!(
        remaining,
        ms(5),
        "B3: the refusal takes effect at its clock reading, 5 ms, when the circuit was OPEN until \
         10 ms: 5 ms left"
    );
    assert_state!(
        core.breaker,
        State::Open { remaining: ms(10) },
        "TODO(2): B5, the probe that failed at 12 ms reopened the circuit until 22 ms"
    );
}

#[test]
fn b12_an_owned_permit_is_admitted_refused_and_reported_like_a_borrowed_one() {
    let core = Core::new(1, ms(5));
    core.breaker.try_acquire_owned().unwrap().failure();
    assert_eq!(
        core.breaker.try_acquire_owned().err(),
        Some(Rejected::Open { remaining: ms(5) }),
        "TODO(2): B3, B12, an owned permit is refused as a borrowed one is"
    );
    assert_eq!(
        std::sync::Arc::strong_count(&core.breaker),
        1,
        "B12: a refusal holds no share of the breaker"
    );
    core.advance(ms(5));
    let probe = core
        .breaker
        .try_acquire_owned()
        .expect("TODO(2): B4, B12, the first owned attempt at the deadline is the probe");
    assert_eq!(
        probe.generation(),
        core.breaker.generation(),
        "B12: the probe belongs to the generation that admitted it"
    );
    assert_ne!(
        probe.generation().get(),
        0,
        "TODO(2): B5, opening and probing started new generations"
    );
    assert!(
        format!("{probe:?}").contains(&format!("{:?}", probe.generation())),
        "an owned permit's Debug shows its generation: {probe:?}"
    );
    assert_eq!(
        core.breaker.try_acquire_owned().err(),
        Some(Rejected::ProbeInFlight),
        "TODO(2): B5, B12, one probe at a time, owned or not"
    );
    assert_eq!(
        probe.report(retry_breaker::Verdict::Success),
        Some(Recorded::Counted),
        "TODO(2): B9, B12, the owned probe's success counts"
    );
    assert_state!(
        core.breaker,
        State::Closed { failures: 0 },
        "TODO(2): B5, B12, and closes the circuit"
    );
}

mod events;
