//! Held back from the student edition: a permit cleans up after itself, and
//! so does the hook (TODO(4); rules B7, B11), with thresholds, cooldowns,
//! orders of panics, drops and reports, probe durations and the probe whose
//! admission makes the hook panic drawn from the student's seed
//! (`LAB_STUDENT_SEED`, see `step01_seeded.rs`). Every failure message says
//! what was drawn.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use retry_breaker::{Clock, Phase, Rejected, State};

use crate::step01_seeded::Draw;
use crate::support::breaker_core::{PROBING, WAITING, assert_state, outlived_by_a_cooldown};
use crate::support::{Hooked, Lab, ms, panic_message};

const NS: Duration = Duration::from_nanos(1);

/// Panics while holding a permit, the way a task would, and catches it;
/// `takes` passes on the clock before the panic.
fn panic_holding_permit(lab: &Lab, takes: Duration) -> Result<(), Rejected> {
    let mut admitted = Ok(());
    let caught = catch_unwind(AssertUnwindSafe(|| match lab.breaker.try_acquire() {
        Ok(_permit) => {
            lab.advance(takes);
            panic!("the dependency client blew up");
        }
        Err(rejection) => admitted = Err(rejection),
    }));
    assert!(
        caught.is_err() || admitted.is_err(),
        "TODO(4): the panic must reach the caller"
    );
    admitted
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    Panic,
    Failure,
    Success,
}

#[test]
fn b7_panics_and_reported_failures_in_a_drawn_order_open_at_the_threshold() {
    let mut draw = Draw::new("b7_panics_and_reported_failures_in_a_drawn_order");
    let threshold = draw.count(2, 6);
    let cooldown = draw.duration(ms(1), Duration::from_secs(2));
    let length = draw.count(4, 16);
    let mut events: Vec<Event> = (0..length)
        .map(|_| draw.pick(&[Event::Panic, Event::Panic, Event::Failure, Event::Success]))
        .collect();
    events[0] = Event::Panic;
    let lab = Lab::new(threshold, cooldown);
    let mut run = 0;
    for i in 0..events.len() {
        let case = format!(
            "threshold {threshold}, cooldown {cooldown:?}, events {:?}",
            &events[..=i]
        );
        match events[i] {
            Event::Panic => panic_holding_permit(&lab, Duration::ZERO).unwrap_or_else(|r| {
                panic!("TODO(4): {case}: the circuit must still be CLOSED, got {r:?} (B7)")
            }),
            Event::Failure => {
                lab.breaker.try_acquire().expect("CLOSED").failure();
            }
            Event::Success => {
                lab.breaker.try_acquire().expect("CLOSED").success();
            }
        }
        run = if events[i] == Event::Success {
            0
        } else {
            run + 1
        };
        let expected = if run == threshold {
            State::Open {
                remaining: cooldown,
            }
        } else {
            State::Closed { failures: run }
        };
        assert_state!(
            lab.breaker,
            expected,
            "TODO(4): {case}: a permit dropped by a panic counts as a failure, exactly like a \
             reported one, so the consecutive count is {run} (B7, B2)"
        );
        if run == threshold {
            return;
        }
    }
}

#[test]
fn b7_drops_record_no_verdict_and_each_dropped_probe_frees_its_slot() {
    let mut draw = Draw::new("b7_drops_record_no_verdict_and_each_dropped_probe");
    let threshold = draw.count(2, 6);
    let cooldown = draw.duration(ms(1), Duration::from_secs(2));
    let failures = draw.count(1, threshold - 1);
    let drops = draw.count(1, 5);
    let mut order: Vec<bool> = (0..failures).map(|_| true).collect();
    order.extend((0..drops).map(|_| false));
    draw.shuffle(&mut order);
    let shown: String = order.iter().map(|&f| if f { 'F' } else { 'D' }).collect();
    let dropped_probes = draw.count(1, 4);
    let case = format!(
        "threshold {threshold}, cooldown {cooldown:?}, CLOSED sees {shown} (D: a permit dropped \
         unreported), then {dropped_probes} probe(s) dropped unreported"
    );
    let lab = Lab::new(threshold, cooldown);
    for failure in order {
        let permit = lab
            .breaker
            .try_acquire()
            .expect("CLOSED admits every attempt");
        if failure {
            permit.failure();
        } else {
            drop(permit);
        }
    }
    assert_state!(
        lab.breaker,
        State::Closed { failures },
        "TODO(4): {case}: a permit dropped without a panic observed nothing, so it records no \
         verdict: only the {failures} failure(s) count (B7)"
    );
    for _ in failures..threshold {
        lab.breaker.try_acquire().expect("CLOSED").failure();
    }
    lab.advance(cooldown);
    for round in 1..=dropped_probes {
        lab.advance(draw.duration(Duration::ZERO, ms(3)));
        let generation = lab.breaker.generation();
        let transitions = lab.transitions().len();
        let probe = lab.breaker.try_acquire().unwrap_or_else(|r| {
            panic!(
                "TODO(4): {case}: dropped probe {} gave its slot back, so attempt {round} may \
                 probe, got {r:?} (B7)",
                round - 1
            )
        });
        let probing = lab.breaker.generation();
        drop(probe);
        assert_state!(
            lab.breaker,
            WAITING,
            "TODO(4): {case}: probe {round} dropped unreported gives its slot back, with no \
             verdict (B7)"
        );
        assert_eq!(
            lab.breaker.generation(),
            probing,
            "TODO(4): {case}: no verdict, so no transition after dropped probe {round} (B7)"
        );
        let expected = if round == 1 {
            (generation.get() + 1, transitions + 1)
        } else {
            (generation.get(), transitions)
        };
        assert_eq!(
            (lab.breaker.generation().get(), lab.transitions().len()),
            expected,
            "TODO(4): {case}: only the first probe made a transition (OPEN -> HALF-OPEN); a \
             probe admitted after a dropped one makes none (B7)"
        );
    }
    lab.probe().success();
    assert_state!(
        lab.breaker,
        State::Closed { failures: 0 },
        "TODO(4): {case}: the next probe decides (B7)"
    );
}

#[test]
fn b7_a_panicking_probe_reopens_for_a_cooldown_from_when_it_panicked() {
    let mut draw = Draw::new("b7_a_panicking_probe_reopens_for_a_cooldown");
    let threshold = draw.count(1, 5);
    let cooldown = draw.duration(ms(1), Duration::from_secs(2));
    let late = draw.duration(Duration::ZERO, ms(50));
    let takes = draw.duration(Duration::ZERO, ms(80));
    let case = format!(
        "threshold {threshold}, cooldown {cooldown:?}, the probe asks {late:?} after the \
         deadline and panics {takes:?} later"
    );
    let lab = Lab::new(threshold, cooldown);
    lab.trip();
    lab.advance(cooldown + late);
    panic_holding_permit(&lab, takes).unwrap_or_else(|r| {
        panic!("TODO(2): {case}: the first attempt after the deadline is the probe, got {r:?}")
    });
    let panicked = lab.clock.now();
    assert_state!(
        lab.breaker,
        State::Open {
            remaining: cooldown
        },
        "TODO(4): {case}: the probe's panic is its failure, so the circuit reopens at t = \
         {panicked:?} for a whole cooldown (B7, B5)"
    );
    lab.advance(cooldown - NS);
    assert_eq!(
        lab.breaker.try_acquire().err(),
        Some(Rejected::Open { remaining: NS }),
        "TODO(4): {case}: open until {panicked:?} + {cooldown:?} (B7, B5)"
    );
    lab.advance(NS);
    lab.breaker
        .try_acquire()
        .unwrap_or_else(|r| panic!("TODO(4): {case}: not wedged: a new probe, got {r:?} (B7)"))
        .success();
}

#[test]
fn b7_late_permits_dropped_or_panicking_leave_the_probe_slot_to_the_probe() {
    let mut draw = Draw::new("b7_late_permits_dropped_or_panicking");
    let threshold = draw.count(1, 4);
    let cooldown = draw.duration(ms(1), Duration::from_secs(2));
    let late = draw.count(1, 4);
    let panics: Vec<bool> = (0..late).map(|_| draw.chance(1, 2)).collect();
    let shown: String = panics.iter().map(|&p| if p { 'P' } else { 'D' }).collect();
    let case = format!(
        "threshold {threshold}, cooldown {cooldown:?}, while the probe is out {late} attempt(s) \
         admitted CLOSED end {shown} (P: a panic, D: dropped unreported), then the probe is \
         dropped"
    );
    let lab = Lab::new(threshold, cooldown);
    let early = outlived_by_a_cooldown(&lab, late);
    let probe = lab.probe();
    let generation = lab.breaker.generation();
    for (permit, panics) in early.into_iter().zip(panics) {
        if panics {
            let caught = catch_unwind(AssertUnwindSafe(move || {
                let _permit = permit;
                panic!("a late attempt blew up");
            }));
            assert!(caught.is_err(), "TODO(4): the panic must reach the caller");
        } else {
            drop(permit);
        }
        assert_eq!(
            (lab.breaker.state(), lab.breaker.generation()),
            (PROBING, generation),
            "TODO(4): {case}: a stale permit, dropped or panicking, changes nothing: only the \
             probe can give the slot back (B6, B7)"
        );
    }
    drop(probe);
    assert_state!(
        lab.breaker,
        WAITING,
        "TODO(4): {case}: the probe dropped unreported gives its slot back (B7)"
    );
}

#[test]
fn b11_a_hook_that_panics_when_a_drawn_probe_is_admitted_hands_the_slot_back() {
    let mut draw = Draw::new("b11_a_hook_that_panics_when_a_drawn_probe_is_admitted");
    let threshold = draw.count(1, 4);
    let cooldown = draw.duration(ms(1), Duration::from_secs(1));
    let explodes_at = draw.count(1, 4);
    let case = format!(
        "threshold {threshold}, cooldown {cooldown:?}, the hook panics when probe {explodes_at} \
         is admitted (the probes before it fail)"
    );
    let admissions = Arc::new(AtomicU32::new(0));
    let count = Arc::clone(&admissions);
    let hooked = Hooked::new(threshold, cooldown, move |_, transition| {
        if transition.to == Phase::HalfOpen
            && count.fetch_add(1, Ordering::SeqCst) + 1 == explodes_at
        {
            panic!("the hook exploded");
        }
    });
    hooked.trip();
    for _ in 1..explodes_at {
        hooked.clock.advance(cooldown);
        hooked
            .breaker
            .try_acquire()
            .unwrap_or_else(|r| panic!("TODO(2): {case}: a probe after the cooldown, got {r:?}"))
            .failure();
    }
    hooked.clock.advance(cooldown);
    let caught = catch_unwind(AssertUnwindSafe(|| hooked.breaker.try_acquire().map(drop)));
    let payload = caught.expect_err(
        "TODO(4): the hook's panic while admitting the probe reaches the caller of try_acquire (B11)",
    );
    assert_eq!(
        panic_message(&*payload),
        "the hook exploded",
        "TODO(4): {case}: the hook's own panic, unchanged (B11)"
    );
    assert_state!(
        hooked.breaker,
        WAITING,
        "TODO(4): {case}: the dependency was never called, so the probe slot goes back with no \
         verdict (B11)"
    );
    hooked
        .breaker
        .try_acquire()
        .unwrap_or_else(|r| panic!("TODO(4): {case}: the next attempt may probe, got {r:?} (B11)"))
        .success();
    assert_state!(
        hooked.breaker,
        State::Closed { failures: 0 },
        "TODO(4): {case}: and its success closes the circuit (B5, B11)"
    );
}

/// Run by `b11_…_drawn_threshold_never_aborts_the_process`, in a process of
/// its own.
#[test]
#[ignore = "a child process of b11_a_hook_panic_while_a_panic_reaches_a_drawn_threshold_never_aborts_the_process"]
fn child_b11_hook_panics_while_a_drawn_failure_unwinds() {
    if !crate::support::is_child() {
        return;
    }
    let mut draw = Draw::new("b11_a_hook_panic_while_a_panic_reaches_a_drawn_threshold");
    let threshold = draw.count(1, 6);
    let cooldown = draw.duration(ms(1), Duration::from_secs(1));
    let at = draw.duration(Duration::ZERO, Duration::from_secs(10));
    let case = format!(
        "threshold {threshold}, cooldown {cooldown:?}, the panic that reaches the threshold at \
         t = {at:?}"
    );
    let hooked = Hooked::new(threshold, cooldown, |_, transition| {
        if transition.to == Phase::Open {
            panic!("the hook exploded");
        }
    });
    for _ in 1..threshold {
        hooked.breaker.try_acquire().expect("CLOSED").failure();
    }
    hooked.clock.advance(at);
    let caught = catch_unwind(AssertUnwindSafe(|| {
        let _permit = hooked.breaker.try_acquire().expect("CLOSED");
        panic!("the dependency client blew up");
    }));
    let payload = caught.expect_err("the panic reaches the caller");
    assert_eq!(
        panic_message(&*payload),
        "the dependency client blew up",
        "TODO(4): {case}: the panic that was unwinding reaches its caller unchanged, not the \
         hook's (B11)"
    );
    assert_state!(
        hooked.breaker,
        State::Open {
            remaining: cooldown
        },
        "TODO(4): {case}: the permit dropped by the panic counts as the failure that opens the \
         circuit (B7)"
    );
    assert_eq!(
        hooked
            .seen()
            .iter()
            .map(|s| (s.transition.to, s.transition.at))
            .collect::<Vec<_>>(),
        [(Phase::Open, at)],
        "TODO(4): {case}: the hook saw the opening once (B11)"
    );
}

#[test]
fn b11_a_hook_panic_while_a_panic_reaches_a_drawn_threshold_never_aborts_the_process() {
    crate::support::run_child(
        "step04_held_back::child_b11_hook_panics_while_a_drawn_failure_unwinds",
    );
}
