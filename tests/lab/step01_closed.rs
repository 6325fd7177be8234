//! Step 1, CLOSED: count consecutive failures and open at the threshold
//! (TODO(1); rules B1, B2, B9, and the part of B6, B8 and B11 that a first
//! transition needs).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use retry_breaker::{ConfigError, Generation, ManualClock, Phase, RetryBreaker, State};

use crate::support::breaker_core::{CLOCK_PANIC, Core, assert_counted, assert_state, spawned};
use crate::support::{Lab, guard, ms};

#[test]
fn b2_a_new_breaker_is_closed_with_no_failures_in_generation_zero() {
    let breaker = RetryBreaker::new(3, ms(10), ManualClock::new()).unwrap();
    assert_eq!(
        breaker.state(),
        State::Closed { failures: 0 },
        "TODO(1): a new circuit is CLOSED with no failures counted (B2)"
    );
    assert_eq!(
        breaker.generation(),
        Generation::default(),
        "TODO(1): a new circuit is in the first generation, `Generation::default()` (B6)"
    );
    assert_eq!(
        (breaker.threshold(), breaker.cooldown()),
        (3, ms(10)),
        "TODO(1): the circuit keeps the settings it was made with"
    );
    assert!(format!("{breaker:?}").contains("Closed"));
    let permit = breaker.try_acquire().unwrap();
    assert_eq!(
        format!("{permit:?}"),
        "Permit { generation: Generation(0), .. }",
        "TODO(1): CLOSED admits in the current generation (B2)"
    );
    // Reporting on it is the student's code (step 1); dropping it is not
    // until step 5.
    drop(permit);
}

#[test]
fn b1_a_zero_threshold_is_refused_with_a_clear_error() {
    let result = RetryBreaker::new(0, ms(10), ManualClock::new());
    let error = result.expect_err("TODO(1): RetryBreaker::new must refuse a threshold of 0 (B1)");
    assert_eq!(
        error,
        ConfigError::ZeroThreshold,
        "TODO(1): expected `error` to equal `ConfigError::ZeroThreshold`"
    );
    assert!(
        error.to_string().contains("at least 1"),
        "the message should tell the user what to pass: {error}"
    );
}

#[test]
fn b1_b10_a_zero_cooldown_is_legal_and_a_read_shows_the_circuit_open() {
    let breaker = RetryBreaker::new(1, Duration::ZERO, ManualClock::new()).unwrap();
    breaker.try_acquire().unwrap().failure();
    assert_state!(
        breaker,
        State::Open {
            remaining: Duration::ZERO
        },
        "TODO(1): the breaker must now be `State::Open {{remaining: Duration::ZERO}}`: a zero \
         cooldown opens like any other, and reading the state never moves it on (B1, B10)"
    );
}

#[test]
fn b1_a_cooldown_too_long_to_represent_keeps_the_circuit_open_instead_of_panicking() {
    let lab = Lab::new(1, Duration::MAX);
    lab.advance(ms(1));
    lab.trip();
    assert_state!(
        lab.breaker,
        State::Open {
            remaining: Duration::MAX
        },
        "now + cooldown overflows, so the deadline never comes (B1)"
    );
}

#[test]
fn b1_a_cooldown_that_overflows_only_once_the_clock_has_moved_keeps_the_circuit_open() {
    // At t = 2 ms a cooldown of MAX - 2 ms ends exactly at Duration::MAX,
    // which a Duration can hold; one nanosecond more cannot be represented.
    let fits = Lab::new(1, Duration::MAX - ms(2));
    fits.advance(ms(2));
    fits.trip();
    assert_state!(
        fits.breaker,
        State::Open {
            remaining: Duration::MAX - ms(2)
        },
        "TODO(1): now + cooldown is exactly Duration::MAX here, a deadline like any other (B1)"
    );
    let beyond = Lab::new(1, Duration::MAX - ms(2) + Duration::from_nanos(1));
    beyond.advance(ms(2));
    let tripped = catch_unwind(AssertUnwindSafe(|| beyond.trip()));
    assert!(
        tripped.is_ok(),
        "TODO(1): now + cooldown overflows only because the clock reads 2 ms, and that must not \
         panic: the circuit then stays open (B1)"
    );
    assert_state!(
        beyond.breaker,
        State::Open {
            remaining: Duration::MAX
        },
        "TODO(1): a deadline past what a Duration holds never comes, so the circuit stays open (B1)"
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
        assert_counted!(permit.failure(), "B9");
        assert_state!(
            lab.breaker,
            State::Closed { failures: expected },
            "TODO(1): the breaker must now be `State::Closed {{failures: expected}}`"
        );
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
    assert_state!(
        lab.breaker,
        State::Open { remaining: ms(10) },
        "TODO(1): the breaker must now be `State::Open {{remaining: ms(10)}}`"
    );
    let transitions = lab.transitions();
    assert_eq!(transitions.len(), 1, "one transition: {transitions:?}");
    assert_eq!(
        (transitions[0].from, transitions[0].to),
        (Phase::Closed, Phase::Open),
        "TODO(1): expected `(transitions[0].from, transitions[0].to)` to equal `(Phase::Closed, Phase::Open)`"
    );
    assert_eq!(
        transitions[0].at,
        ms(0),
        "TODO(1): expected `transitions[0].at` to equal `ms(0)`"
    );
}

#[test]
fn b2_a_threshold_of_one_opens_on_the_first_failure() {
    let lab = Lab::new(1, ms(10));
    lab.breaker.try_acquire().unwrap().failure();
    assert_state!(
        lab.breaker,
        State::Open { remaining: ms(10) },
        "TODO(1): the breaker must now be `State::Open {{remaining: ms(10)}}`"
    );
}

#[test]
fn b2_a_success_resets_the_consecutive_failure_count() {
    let lab = Lab::new(3, ms(10));
    lab.breaker.try_acquire().unwrap().failure();
    lab.breaker.try_acquire().unwrap().failure();
    assert_counted!(lab.breaker.try_acquire().unwrap().success(), "B9");
    assert_state!(
        lab.breaker,
        State::Closed { failures: 0 },
        "TODO(1): the breaker must now be `State::Closed {{failures: 0}}`"
    );
    // The count starts over: two more failures are not enough to open.
    lab.breaker.try_acquire().unwrap().failure();
    lab.breaker.try_acquire().unwrap().failure();
    assert_state!(
        lab.breaker,
        State::Closed { failures: 2 },
        "TODO(1): the breaker must now be `State::Closed {{failures: 2}}`"
    );
}

#[test]
fn b2_the_cooldown_runs_from_the_failure_that_reached_the_threshold() {
    let lab = Lab::new(2, ms(10));
    lab.breaker.try_acquire().unwrap().failure();
    lab.advance(ms(7));
    lab.breaker.try_acquire().unwrap().failure();
    assert_state!(
        lab.breaker,
        State::Open { remaining: ms(10) },
        "open until t = 17"
    );
    assert_eq!(
        lab.transitions()[0].at,
        ms(7),
        "TODO(1): expected `lab.transitions()[0].at` to equal `ms(7)`"
    );
    lab.advance(ms(4));
    assert_state!(
        lab.breaker,
        State::Open { remaining: ms(6) },
        "TODO(1): the breaker must now be `State::Open {{remaining: ms(6)}}`"
    );
}

#[test]
fn b2_the_cooldown_runs_from_when_the_failure_is_reported_not_from_its_admission() {
    // Attempts take time: A is admitted at t = 0 and B at t = 1; A fails at
    // t = 5 and B, the failure that reaches the threshold, at t = 8. The
    // cooldown starts when that failure is recorded, whenever its attempt
    // (or any other) was let in.
    let lab = Lab::new(2, ms(10));
    let a = lab.breaker.try_acquire().unwrap();
    lab.advance(ms(1));
    let b = lab.breaker.try_acquire().unwrap();
    lab.advance(ms(4));
    a.failure();
    lab.advance(ms(3));
    b.failure();
    assert_state!(
        lab.breaker,
        State::Open { remaining: ms(10) },
        "TODO(1): the failure recorded at t = 8 opens the circuit until t = 18, \
         not until 10 ms after its attempt (or any attempt) was admitted (B2)"
    );
    assert_eq!(
        lab.transitions().first().map(|t| t.at),
        Some(ms(8)),
        "TODO(1): the circuit opens when the failure is recorded, at t = 8 (B2)"
    );
    // The same for a threshold of 1: one attempt, admitted at t = 8, that
    // takes 6 ms to fail.
    let lab = Lab::new(1, ms(10));
    lab.advance(ms(8));
    let slow = lab.breaker.try_acquire().unwrap();
    lab.advance(ms(6));
    slow.failure();
    assert_state!(
        lab.breaker,
        State::Open { remaining: ms(10) },
        "TODO(1): a failure recorded at t = 14 opens the circuit until t = 24, whenever its \
         attempt started (B2)"
    );
}

#[test]
fn b2_opening_starts_a_new_generation() {
    let lab = Lab::new(2, ms(10));
    let before = lab.breaker.generation();
    lab.trip();
    assert!(
        lab.breaker.generation() > before,
        "TODO(1): expected `lab.breaker.generation() > before`"
    );
    assert_eq!(
        lab.transitions()[0].generation,
        lab.breaker.generation(),
        "TODO(1): expected `lab.transitions()[0].generation` to equal `lab.breaker.generation()`"
    );
}

// --- Reports (B9) and the transition hook (B8, B11) in CLOSED ---

#[test]
fn b9_every_report_in_a_closed_circuit_counts_up_to_and_including_the_one_that_opens_it() {
    for threshold in 1..=4 {
        let lab = Lab::new(threshold, ms(10));
        for failures in 1..=threshold {
            // A success in between, when there is room for one, resets.
            if failures == 1 && threshold > 1 {
                assert_counted!(
                    lab.breaker.try_acquire().unwrap().success(),
                    "TODO(1): a success of the current generation counts (B9)"
                );
            }
            let recorded = lab.breaker.try_acquire().unwrap().failure();
            assert_counted!(
                recorded,
                "TODO(1): threshold {threshold}, failure {failures}: a current outcome counts (B9), \
                 the one that opens the circuit included"
            );
        }
        assert_state!(
            lab.breaker,
            State::Open { remaining: ms(10) },
            "TODO(1): threshold {threshold} (B2)"
        );
    }
}

const HOOK: &str = "the transition hook (B8, B11), once TODO(1) opens the circuit";

#[test]
fn b8_the_hook_runs_once_per_transition_after_it_is_complete_and_may_read_the_breaker() {
    crate::support::guard(
        "the hook deadlocked reading the breaker: it must run after the lock is released (B8)",
        Duration::from_secs(5),
        || {
            let hooked = crate::support::Hooked::reading(2, ms(10), |_, _| {});
            hooked.clock.advance(ms(3));
            hooked.trip();
            let seen = hooked.seen();
            assert_eq!(
                seen.len(),
                1,
                "{HOOK}: one call for one transition, got {seen:?}"
            );
            let first = &seen[0];
            assert_eq!(
                (first.transition.from, first.transition.to),
                (Phase::Closed, Phase::Open),
                "{HOOK}: the transition as it happened: CLOSED -> OPEN"
            );
            assert_eq!(
                first.transition.at,
                ms(3),
                "{HOOK}: the transition as it happened: at 3 ms, when the failure was reported"
            );
            assert_eq!(
                first.state,
                Some(State::Open { remaining: ms(10) }),
                "{HOOK}: the hook runs after the transition is complete, so a read inside it \
                 sees the new state"
            );
            assert_eq!(
                first.generation,
                Some(first.transition.generation.get()),
                "{HOOK}: the generation the hook reads is the one the transition began"
            );
            assert_eq!(
                hooked.breaker.generation(),
                first.transition.generation,
                "TODO(1): the generation must be `first.transition.generation`"
            );
        },
    );
}

#[test]
fn b11_a_hook_that_panics_after_a_reported_failure_panics_the_reporter_and_the_failure_stays_counted()
 {
    let hooked = crate::support::Hooked::new(1, ms(10), |_, transition| {
        if transition.to == Phase::Open {
            panic!("the hook exploded");
        }
    });
    let permit = hooked.breaker.try_acquire().unwrap();
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| permit.failure()));
    let payload = caught.expect_err("B11: the hook's panic reaches the caller of failure()");
    assert_eq!(
        crate::support::panic_message(&*payload),
        "the hook exploded",
        "TODO(1): expected `crate::support::panic_message(&*payload)` to equal `\"the hook exploded\"`"
    );
    assert_state!(
        hooked.breaker,
        State::Open { remaining: ms(10) },
        "{HOOK}: the failure stays counted (B11)"
    );
}

#[test]
fn b6_counting_in_a_closed_circuit_starts_no_new_generation() {
    // Generations count transitions; a success or a failure below the
    // threshold changes a count, not the state, so attempts already in
    // flight stay current.
    let lab = Lab::new(3, ms(10));
    let start = lab.breaker.generation();
    // The failures counted after each report: the count moves, the
    // generation does not.
    let mut counted = 0;
    for report in [false, false, true, false, true] {
        let permit = lab.breaker.try_acquire().unwrap();
        if report {
            permit.success();
            counted = 0;
        } else {
            permit.failure();
            counted += 1;
        }
        assert_eq!(
            lab.breaker.state(),
            State::Closed { failures: counted },
            "TODO(1): a failure below the threshold is counted and a success resets the count (B2)"
        );
        assert_eq!(
            lab.breaker.generation(),
            start,
            "TODO(1): only a transition starts a new generation; counting in CLOSED is none (B2, B6)"
        );
    }
    assert!(
        lab.transitions().is_empty(),
        "TODO(1): no transition yet (B2)"
    );
}

#[test]
fn b12_an_owned_permit_reports_from_a_spawned_task_like_a_borrowed_one() {
    let core = Core::new(1, ms(5));
    let permit = core.breaker.try_acquire_owned().unwrap();
    let admitted_in = permit.generation();
    let recorded = spawned(async move { permit.failure() })
        .expect("TODO(1): the spawned task reports its failure (B2)");
    assert_counted!(
        recorded,
        "TODO(1): B9, B12, an owned permit's failure is counted as a borrowed one's"
    );
    assert_state!(
        core.breaker,
        State::Open { remaining: ms(5) },
        "TODO(1): B2, B12, it reached the threshold of 1: OPEN for the cooldown"
    );
    assert_ne!(
        core.breaker.generation(),
        admitted_in,
        "TODO(1): B2, opening is a transition, with a new generation"
    );
    assert_eq!(
        std::sync::Arc::strong_count(&core.breaker),
        1,
        "B12: a permit that reported lets go of its breaker"
    );
}

#[test]
fn b12_a_clock_that_panics_at_the_trip_reaches_the_reporter_and_counts_nothing() {
    let core = Core::new(2, ms(10));
    core.breaker.try_acquire().unwrap().failure();
    let mut admitted = None;
    assert_eq!(
        core.broken(|| admitted = Some(core.breaker.try_acquire())),
        None,
        "B12: admission into a CLOSED circuit needs no time, so it reads no clock"
    );
    let permit = admitted
        .expect("admitted")
        .expect("a closed circuit admits every attempt");
    assert_eq!(
        core.broken(|| permit.failure()).as_deref(),
        Some(CLOCK_PANIC),
        "B12: the failure that reaches the threshold reads the clock for the deadline, and its \
         panic reaches the reporter unchanged (TODO(1))"
    );
    assert_state!(
        core.breaker,
        State::Closed { failures: 1 },
        "B12: the interrupted failure records no verdict: still CLOSED with one failure (TODO(1))"
    );
    core.advance(ms(4));
    core.breaker.try_acquire().unwrap().failure();
    assert_state!(
        core.breaker,
        State::Open { remaining: ms(10) },
        "TODO(1): B2, B12, not wedged: the next failure trips, at its own reading"
    );
}

/// A report in CLOSED that does not trip needs no time. If it reads the
/// clock anyway, a panic there must leave the count as it was (B12): the
/// report is either counted in full or not at all.
fn report_on_a_broken_clock(core: &Core, report: impl FnOnce(), counted: u32, before: u32) {
    let said = core.broken(report);
    let expected = match said.as_deref() {
        None => counted,
        Some(message) => {
            assert_eq!(
                message, CLOCK_PANIC,
                "B12: the clock's panic reaches the reporter unchanged (TODO(1))"
            );
            before
        }
    };
    assert_state!(
        core.breaker,
        State::Closed { failures: expected },
        "TODO(1): B2, B12, a report is counted in full, or (interrupted by the clock) not at all"
    );
}

#[test]
fn b12_a_report_in_closed_on_a_broken_clock_counts_in_full_or_not_at_all() {
    let core = Core::new(3, ms(10));
    core.breaker.try_acquire().unwrap().failure();
    let failure = core.breaker.try_acquire().unwrap();
    report_on_a_broken_clock(
        &core,
        || {
            let _ = failure.failure();
        },
        2,
        1,
    );
    let success = core.breaker.try_acquire().unwrap();
    let before = match core.breaker.state() {
        State::Closed { failures } => failures,
        other => panic!("TODO(1): B2, below the threshold the circuit stays CLOSED: {other:?}"),
    };
    report_on_a_broken_clock(
        &core,
        || {
            let _ = success.success();
        },
        0,
        before,
    );
}

#[test]
fn b10_debug_shows_the_cooldown_left_at_the_clock_reading_taken_outside_the_lock() {
    let shown = guard(
        "Debug read the clock while holding the breaker's lock, and the clock's reader waited for it",
        Duration::from_secs(5),
        || {
            let core = Core::new(1, ms(10));
            core.trip();
            core.advance(ms(4));
            // Reading the generation takes the lock: it would wait for ever
            // if the clock were read under it.
            core.on_next_read(|breaker| {
                let _ = breaker.generation();
            });
            format!("{:?}", core.breaker)
        },
    );
    assert!(
        shown.starts_with("RetryBreaker { state: Open { remaining: 6ms }"),
        "TODO(1): B10, 4 ms into a 10 ms cooldown: {shown}"
    );
    assert!(
        shown.ends_with(", .. }"),
        "Debug says it does not show everything: {shown}"
    );
}

mod events;
