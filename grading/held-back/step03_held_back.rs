//! Held back from the student edition: generations fence off stale outcomes
//! (TODO(3); rules B6, B9), with thresholds, numbers of late attempts,
//! orders of their reports and the state they report into drawn from the
//! student's seed (`LAB_STUDENT_SEED`, see `step01_seeded.rs`). Every
//! failure message says what was drawn.

use std::time::Duration;

use retry_breaker::{ManualClock, Permit, Recorded, Rejected, State};

use crate::step01_seeded::Draw;
use crate::support::breaker_core::{
    PROBING, admitted, assert_refused, assert_stale, assert_state, outlived_by_a_cooldown,
};
use crate::support::{Lab, ms};

/// "S" or "F" for each outcome.
fn letters(outcomes: &[bool]) -> String {
    outcomes
        .iter()
        .map(|&ok| if ok { 'S' } else { 'F' })
        .collect()
}

/// Reports `success` on `permit`.
fn report(permit: Permit<'_, ManualClock>, success: bool) -> Recorded {
    if success {
        permit.success()
    } else {
        permit.failure()
    }
}

#[test]
fn b6_late_outcomes_in_a_drawn_order_leave_the_probe_to_decide() {
    let mut draw = Draw::new("b6_late_outcomes_in_a_drawn_order_leave_the_probe_to_decide");
    let threshold = draw.count(1, 4);
    let cooldown = draw.duration(ms(1), Duration::from_secs(3));
    let late = draw.count(1, 6);
    let outcomes: Vec<bool> = (0..late).map(|_| draw.chance(1, 2)).collect();
    let probe_succeeds = draw.chance(1, 2);
    let case = format!(
        "threshold {threshold}, cooldown {cooldown:?}, {late} attempt(s) admitted CLOSED report \
         {} while the probe is out",
        letters(&outcomes)
    );
    let lab = Lab::new(threshold, cooldown);
    let early = outlived_by_a_cooldown(&lab, late);
    let probe = lab.probe();
    let probing = PROBING;
    for (i, (permit, &success)) in early.into_iter().zip(&outcomes).enumerate() {
        assert_eq!(
            report(permit, success),
            Recorded::Stale,
            "TODO(3): {case}: report {} comes from the generation before the circuit opened, \
             so it is stale and says so (B6, B9)",
            i + 1
        );
        assert_state!(
            lab.breaker,
            probing,
            "TODO(3): {case}: after report {}, a stale outcome neither closes nor reopens the \
             circuit: the probe is still the one attempt out (B6)",
            i + 1
        );
        assert_refused!(
            lab.breaker,
            Rejected::ProbeInFlight,
            "TODO(3): {case}: after report {}, every other attempt is still refused (B5, B6)",
            i + 1
        );
    }
    assert_eq!(
        report(probe, probe_succeeds),
        Recorded::Counted,
        "TODO(3): {case}: the probe is current and its outcome counts (B9)"
    );
    let expected = if probe_succeeds {
        State::Closed { failures: 0 }
    } else {
        State::Open {
            remaining: cooldown,
        }
    };
    assert_state!(
        lab.breaker,
        expected,
        "TODO(3): {case}: the probe alone decides (B5, B6)"
    );
}

#[test]
fn b6_late_failures_mixed_with_current_ones_never_count_against_a_reclosed_circuit() {
    let mut draw = Draw::new("b6_late_failures_mixed_with_current_ones");
    let threshold = draw.count(1, 5);
    let cooldown = draw.duration(ms(1), Duration::from_secs(3));
    // More late failures than the threshold: counted, they would reopen it.
    let late = threshold + draw.count(0, 3);
    let current = draw.count(0, threshold - 1);
    // true: a late (stale) failure; false: a current one.
    let mut order: Vec<bool> = (0..late).map(|_| true).collect();
    order.extend((0..current).map(|_| false));
    draw.shuffle(&mut order);
    let shown: String = order.iter().map(|&s| if s { 'L' } else { 'C' }).collect();
    let case = format!(
        "threshold {threshold}, cooldown {cooldown:?}, after the circuit closed again failures \
         reported in the order {shown} (L: admitted before it opened, C: admitted since)"
    );
    let lab = Lab::new(threshold, cooldown);
    let mut early = outlived_by_a_cooldown(&lab, late);
    lab.probe().success();
    let mut counted = 0;
    for (i, &stale) in order.iter().enumerate() {
        let (recorded, expected) = if stale {
            let permit = early.pop().expect("one per L");
            (permit.failure(), Recorded::Stale)
        } else {
            counted += 1;
            let permit = lab.breaker.try_acquire().unwrap_or_else(|r| {
                panic!(
                    "TODO(3): {case}: report {}: the circuit must still be CLOSED, got {r:?} (B6)",
                    i + 1
                )
            });
            (permit.failure(), Recorded::Counted)
        };
        assert_eq!(
            recorded,
            expected,
            "TODO(3): {case}: report {} ({}) must say {expected:?} (B6, B9)",
            i + 1,
            &shown[i..=i]
        );
        assert_state!(
            lab.breaker,
            State::Closed { failures: counted },
            "TODO(3): {case}: after report {}, only the {counted} current failure(s) count (B6)",
            i + 1
        );
    }
}

#[test]
fn b6_a_late_success_does_not_reset_a_drawn_count() {
    let mut draw = Draw::new("b6_a_late_success_does_not_reset_a_drawn_count");
    let threshold = draw.count(3, 8);
    let cooldown = draw.duration(ms(1), Duration::from_secs(3));
    let late = draw.count(1, 3);
    let failures = draw.count(1, threshold - 1);
    let case = format!(
        "threshold {threshold}, cooldown {cooldown:?}, {failures} failure(s) since the circuit \
         closed again, then {late} success(es) of attempts admitted before it opened"
    );
    let lab = Lab::new(threshold, cooldown);
    let early = outlived_by_a_cooldown(&lab, late);
    lab.probe().success();
    for _ in 0..failures {
        lab.breaker.try_acquire().expect("CLOSED").failure();
    }
    for (i, permit) in early.into_iter().enumerate() {
        assert_stale!(
            permit.success(),
            "TODO(3): {case}: late success {} is stale (B6, B9)",
            i + 1
        );
        assert_state!(
            lab.breaker,
            State::Closed { failures },
            "TODO(3): {case}: a stale success does not reset the count (B6)"
        );
    }
    for _ in failures..threshold {
        lab.breaker.try_acquire().expect("CLOSED").failure();
    }
    assert_state!(
        lab.breaker,
        State::Open {
            remaining: cooldown
        },
        "TODO(3): {case}: so {} more failure(s) reach the threshold (B2, B6)",
        threshold - failures
    );
}

/// Where [`b9_permits_of_every_older_generation_are_stale_in_a_drawn_order`]
/// stops to report its stale permits.
#[derive(Debug, Clone, Copy)]
enum Stop {
    HalfOpenProbeOut,
    ClosedWithFailures,
    ClosedClean,
}

#[test]
fn b9_permits_of_every_older_generation_are_stale_in_a_drawn_order() {
    let mut draw = Draw::new("b9_permits_of_every_older_generation_are_stale");
    let threshold = draw.count(2, 4);
    let cooldown = draw.duration(ms(1), Duration::from_secs(1));
    let cycles = draw.count(1, 3);
    let stop = draw.pick(&[
        Stop::HalfOpenProbeOut,
        Stop::ClosedWithFailures,
        Stop::ClosedClean,
    ]);
    let lab = Lab::new(threshold, cooldown);
    // Each cycle: a permit admitted CLOSED stays out while the circuit
    // opens, probes and closes again, three transitions later.
    let mut stale = Vec::new();
    for _ in 0..cycles {
        stale.push(
            lab.breaker
                .try_acquire()
                .expect("CLOSED admits every attempt"),
        );
        lab.trip();
        lab.advance(cooldown);
        lab.probe().success();
    }
    stale.push(
        lab.breaker
            .try_acquire()
            .expect("CLOSED admits every attempt"),
    );
    lab.trip();
    lab.advance(cooldown);
    let _held = match stop {
        Stop::HalfOpenProbeOut => Some(lab.probe()),
        Stop::ClosedWithFailures | Stop::ClosedClean => {
            lab.probe().success();
            if let Stop::ClosedWithFailures = stop {
                for _ in 0..draw.count(1, threshold - 1) {
                    lab.breaker.try_acquire().expect("CLOSED").failure();
                }
            }
            None
        }
    };
    draw.shuffle(&mut stale);
    let outcomes: Vec<bool> = stale.iter().map(|_| draw.chance(1, 2)).collect();
    let generations: Vec<u64> = stale.iter().map(|p| p.generation().get()).collect();
    let case = format!(
        "threshold {threshold}, cooldown {cooldown:?}, {stop:?} in generation {}, permits of \
         generations {generations:?} report {}",
        lab.breaker.generation().get(),
        letters(&outcomes)
    );
    let before = (
        lab.breaker.state(),
        lab.breaker.generation(),
        lab.transitions(),
    );
    for (i, (permit, success)) in stale.into_iter().zip(outcomes).enumerate() {
        assert_eq!(
            report(permit, success),
            Recorded::Stale,
            "TODO(3): {case}: report {} is from generation {}, older than the breaker's, so it \
             is stale and says so (B6, B9)",
            i + 1,
            generations[i]
        );
        assert_eq!(
            (
                lab.breaker.state(),
                lab.breaker.generation(),
                lab.transitions()
            ),
            before,
            "TODO(3): {case}: stale report {} changed the breaker (B6: no count, no reset, no \
             transition)",
            i + 1
        );
    }
}

/// A control: only transitions make outcomes stale, so attempts admitted
/// together in CLOSED stay current through any order of reports that does
/// not open the circuit.
#[test]
fn b6_attempts_admitted_together_stay_current_until_a_transition() {
    let mut draw = Draw::new("b6_attempts_admitted_together_stay_current");
    let threshold = draw.count(2, 6);
    let held = draw.count(2, 12);
    let lab = Lab::new(threshold, ms(10));
    let generation = lab.breaker.generation();
    let permits = admitted(&lab, held);
    let mut run = 0;
    let mut shown = String::new();
    for permit in permits {
        let success = run == threshold - 1 || draw.chance(1, 2);
        shown.push(if success { 'S' } else { 'F' });
        run = if success { 0 } else { run + 1 };
        let case =
            format!("threshold {threshold}, {held} attempts admitted at once, reports {shown}");
        assert_eq!(
            report(permit, success),
            Recorded::Counted,
            "TODO(3): {case}: no transition happened, so nothing is stale (B6)"
        );
        assert_eq!(
            lab.breaker.generation(),
            generation,
            "TODO(3): {case}: counting in CLOSED starts no new generation (B6)"
        );
    }
}
