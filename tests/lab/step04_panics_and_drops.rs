//! Step 4, panics and drops: a permit is a guard that cleans up after
//! itself (TODO(4); rule B7).

use std::panic::{AssertUnwindSafe, catch_unwind};

use retry_breaker::{Phase, Rejected, State};

use crate::support::breaker_core::{
    Core, PROBING, TASK_PANIC, WAITING, assert_refused, assert_stale, assert_state, spawned,
};
use crate::support::panics::quietly;
use crate::support::{Lab, ms};

mod clock;
mod events;

const DROP_TODO: &str = "TODO(4): a permit dropped unreported must clean up after itself (B7)";

/// Panics while holding a permit, the way a task would, and catches it.
fn panic_holding_permit(lab: &Lab) {
    let caught = catch_unwind(AssertUnwindSafe(|| {
        let _permit = lab.breaker.try_acquire().expect("admitted");
        panic!("the dependency client blew up");
    }));
    assert!(caught.is_err(), "TODO(4): the panic must reach the caller");
}

#[test]
fn b7_a_panic_while_holding_a_permit_counts_as_a_failure() {
    let lab = Lab::new(2, ms(10));
    panic_holding_permit(&lab);
    assert_state!(lab.breaker, State::Closed { failures: 1 }, "{DROP_TODO}");
    panic_holding_permit(&lab);
    assert_state!(
        lab.breaker,
        State::Open { remaining: ms(10) },
        "{DROP_TODO}"
    );
}

#[test]
fn b7_a_panicking_probe_reopens_the_circuit_and_the_next_cooldown_ends_in_a_probe() {
    let lab = Lab::cooled(1, ms(10));
    panic_holding_permit(&lab);
    assert_state!(
        lab.breaker,
        State::Open { remaining: ms(10) },
        "{DROP_TODO}"
    );
    lab.advance(ms(10));
    lab.breaker
        .try_acquire()
        .expect("not wedged: a new probe")
        .success();
    assert_state!(
        lab.breaker,
        State::Closed { failures: 0 },
        "TODO(4): the breaker must now be `State::Closed {{failures: 0}}`"
    );
}

#[test]
fn b7_a_dropped_probe_gives_its_slot_back_without_a_verdict() {
    let lab = Lab::cooled(1, ms(10));
    let generation = {
        let probe = lab.probe();
        probe.generation()
    };
    assert_state!(lab.breaker, WAITING, "{DROP_TODO}");
    assert_eq!(
        lab.breaker.generation(),
        generation,
        "no verdict, so no transition"
    );
    let probe = lab
        .breaker
        .try_acquire()
        .expect("the next attempt may probe");
    probe.success();
    assert_state!(
        lab.breaker,
        State::Closed { failures: 0 },
        "TODO(4): the breaker must now be `State::Closed {{failures: 0}}`"
    );
}

#[test]
fn b5_b7_a_probe_admitted_after_a_dropped_one_holds_the_single_slot() {
    let lab = Lab::cooled(1, ms(10));
    drop(lab.probe());
    let _second = lab.breaker.try_acquire().unwrap_or_else(|refused| {
        panic!(
            "{DROP_TODO}: the dropped probe's slot is free for the next attempt, not {refused:?}"
        )
    });
    assert_state!(
        lab.breaker,
        PROBING,
        "B5: the probe admitted after a dropped one is in flight like any probe: admitting a \
         probe in HALF-OPEN marks it out (the HALF-OPEN arm of TODO(2), reached only once \
         TODO(4) hands a slot back)"
    );
    assert_refused!(
        lab.breaker,
        Rejected::ProbeInFlight,
        "B5: while that probe is out, the next attempt is refused: one probe at a time, even \
         after a dropped one (TODO(2)'s HALF-OPEN arm)"
    );
}

#[test]
fn b7_a_dropped_permit_records_no_verdict_in_any_state() {
    let lab = Lab::new(2, ms(10));
    lab.breaker.try_acquire().unwrap().failure();
    drop(lab.breaker.try_acquire().unwrap());
    assert_state!(
        lab.breaker,
        State::Closed { failures: 1 },
        "{DROP_TODO}: a permit dropped without a panic observed nothing, so it is not a failure"
    );
    lab.breaker.try_acquire().unwrap().failure();
    lab.advance(ms(10));
    drop(lab.probe());
    let state = lab.breaker.state();
    let fault = match state {
        PROBING => "the probe slot was not handed back, so every later attempt is refused",
        State::Closed { .. } => "the drop was counted as a success",
        State::Open { .. } => "the drop was counted as a failure",
        _ => "",
    };
    assert_eq!(
        state, WAITING,
        "{DROP_TODO}: {fault}. A probe dropped without a panic observed nothing: no verdict, \
         but its slot goes back"
    );
}

/// A control: the slot belongs to the current probe alone (B6 applies to drops).
#[test]
fn b7_a_stale_permit_dropped_does_not_free_the_current_probe_slot() {
    let lab = Lab::new(1, ms(10));
    let early = lab.breaker.try_acquire().unwrap();
    lab.trip();
    lab.advance(ms(10));
    let probe = lab.probe();
    drop(early);
    assert_state!(
        lab.breaker,
        PROBING,
        "only the probe itself can give the probe slot back"
    );
    assert!(
        lab.breaker.try_acquire().is_err(),
        "still one probe at a time"
    );
    probe.success();
}

/// A control: a panic is a failure *subject to B6*, so a stale permit
/// unwinding past the probe cannot reopen the circuit.
#[test]
fn b7_a_stale_permit_dropped_in_a_panic_changes_nothing() {
    let lab = Lab::new(1, ms(10));
    let caught = catch_unwind(AssertUnwindSafe(|| {
        let _early = lab.breaker.try_acquire().unwrap();
        lab.breaker.try_acquire().unwrap().failure();
        lab.advance(ms(10));
        let probe = lab.probe();
        std::mem::forget(probe);
        panic!("unwinding with a stale permit");
    }));
    assert!(caught.is_err(), "TODO(4): the panic must reach the caller");
    assert_state!(
        lab.breaker,
        PROBING,
        "TODO(4): the breaker must now be `State::HalfOpen {{probe_in_flight: true}}`"
    );
}

/// Run by `b11_…_never_aborts_the_process`, in a process of its own.
#[test]
#[ignore = "a child process of b11_a_hook_that_panics_while_a_panic_unwinds_never_aborts_the_process"]
fn child_b11_hook_panics_while_a_permit_is_dropped_by_a_panic() {
    if !crate::support::is_child() {
        return;
    }
    let hooked = crate::support::Hooked::new(1, ms(10), |_, transition| {
        if transition.to == Phase::Open {
            panic!("the hook exploded");
        }
    });
    let caught = catch_unwind(AssertUnwindSafe(|| {
        let _permit = hooked.breaker.try_acquire().expect("admitted");
        panic!("the dependency client blew up");
    }));
    let payload = caught.expect_err("the panic reaches the caller");
    assert_eq!(
        crate::support::panic_message(&*payload),
        "the dependency client blew up",
        "B11: the panic that was unwinding reaches its caller unchanged, not the hook's"
    );
    assert_state!(
        hooked.breaker,
        State::Open { remaining: ms(10) },
        "{DROP_TODO}: a permit dropped by a panic counts as a failure"
    );
}

#[test]
fn b11_a_hook_that_panics_while_a_panic_unwinds_never_aborts_the_process() {
    crate::support::run_child(
        "step04_panics_and_drops::child_b11_hook_panics_while_a_permit_is_dropped_by_a_panic",
    );
}

#[test]
fn b7_a_permit_held_through_someone_elses_panic_still_counts_as_a_failure() {
    // With the two-step API the breaker cannot tell whose panic it was: the
    // code holding the permit was in the middle of calling the dependency.
    let lab = Lab::new(1, ms(10));
    let caught = catch_unwind(AssertUnwindSafe(|| {
        let _permit = lab.breaker.try_acquire().expect("admitted");
        let parse = |text: &str| text.parse::<u32>().expect("the caller's own bug");
        parse("not a number")
    }));
    assert!(caught.is_err(), "TODO(4): the panic must reach the caller");
    assert_state!(
        lab.breaker,
        State::Open { remaining: ms(10) },
        "{DROP_TODO}: any panic that drops a permit counts as a failure (B7)"
    );
}

#[test]
fn b11_a_hook_that_panics_when_the_probe_is_admitted_hands_the_probe_slot_back() {
    let exploded = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let once = std::sync::Arc::clone(&exploded);
    let hooked = crate::support::Hooked::new(1, ms(10), move |_, transition| {
        if transition.to == Phase::HalfOpen && !once.swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            panic!("the hook exploded");
        }
    });
    hooked.trip();
    hooked.clock.advance(ms(10));
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        hooked.breaker.try_acquire().map(drop)
    }));
    let payload = caught.expect_err(
        "B11: the hook's panic reaches the caller of try_acquire, who never got a permit",
    );
    assert_eq!(
        crate::support::panic_message(&*payload),
        "the hook exploded",
        "TODO(2): expected `crate::support::panic_message(&*payload)` to equal `\"the hook exploded\"`"
    );
    assert_state!(
        hooked.breaker,
        WAITING,
        "{DROP_TODO}: B11, the dependency was never called, so the probe slot goes back with \
         no verdict (`Circuit::abandon`); otherwise every later attempt is refused forever"
    );
    let probe = hooked
        .breaker
        .try_acquire()
        .expect("B11: the next attempt may probe");
    probe.success();
    assert_state!(
        hooked.breaker,
        State::Closed { failures: 0 },
        "TODO(2): the breaker must now be `State::Closed {{failures: 0}}`"
    );
}

#[test]
fn b9_a_stale_report_while_half_open_waits_for_a_probe_changes_nothing() {
    let lab = Lab::new(2, ms(10));
    let early = lab.breaker.try_acquire().unwrap();
    lab.trip();
    lab.advance(ms(10));
    drop(lab.probe());
    let waiting = WAITING;
    assert_state!(
        lab.breaker,
        waiting,
        "{DROP_TODO}: a dropped probe gives its slot back"
    );
    assert_stale!(
        early.success(),
        "{DROP_TODO}: B6, B9: a success from before the circuit opened is stale, even while \
         HALF-OPEN waits for a new probe"
    );
    assert_state!(
        lab.breaker,
        waiting,
        "{DROP_TODO}: B6: and it changes nothing: the next attempt is still the probe"
    );
    lab.probe().success();
    assert_state!(lab.breaker, State::Closed { failures: 0 });
}

#[test]
fn b7_b12_an_owned_permit_dropped_unreported_records_no_verdict_in_any_state() {
    let core = Core::new(2, ms(10));
    core.breaker.try_acquire().unwrap().failure();
    let permit = core.breaker.try_acquire_owned().unwrap();
    spawned(async move { drop(permit) }).expect("the task drops its permit");
    assert_state!(
        core.breaker,
        State::Closed { failures: 1 },
        "{DROP_TODO}: B12, an owned permit dropped without a panic observed nothing, as a \
         borrowed one"
    );
    core.breaker.try_acquire().unwrap().failure();
    core.advance(ms(10));
    let probe = core.breaker.try_acquire_owned().expect("the probe");
    let generation = probe.generation();
    spawned(async move { drop(probe) }).expect("the task drops its probe");
    assert_state!(
        core.breaker,
        WAITING,
        "{DROP_TODO}: B12, an owned probe dropped unreported gives its slot back with no \
         verdict, as a borrowed one"
    );
    assert_eq!(
        core.breaker.generation(),
        generation,
        "{DROP_TODO}: B12, no verdict, so no transition"
    );
    let next = core
        .breaker
        .try_acquire_owned()
        .expect("B12: the next attempt may probe");
    assert_eq!(
        core.breaker.try_acquire_owned().err(),
        Some(Rejected::ProbeInFlight),
        "B5, B12: one owned probe at a time"
    );
    next.success();
    assert_state!(core.breaker, State::Closed { failures: 0 });
}

#[test]
fn b7_b12_an_owned_permit_dropped_by_a_panic_counts_as_a_failure() {
    let core = Core::new(1, ms(10));
    let permit = core.breaker.try_acquire_owned().unwrap();
    let joined = spawned(async move {
        let _permit = permit;
        quietly(|| panic!("{TASK_PANIC}"));
    });
    assert!(
        joined.is_err_and(|error| error.is_panic()),
        "the task's panic reaches whoever joins it"
    );
    assert_state!(
        core.breaker,
        State::Open { remaining: ms(10) },
        "{DROP_TODO}: B7, B12, an owned permit dropped by a panic counts as a failure"
    );
    core.advance(ms(10));
    let probe = core.breaker.try_acquire_owned().expect("the probe");
    let caught = catch_unwind(AssertUnwindSafe(|| {
        let _probe = probe;
        panic!("{TASK_PANIC}");
    }));
    assert!(caught.is_err(), "the panic reaches the caller");
    assert_state!(
        core.breaker,
        State::Open { remaining: ms(10) },
        "{DROP_TODO}: B7, B12, an owned probe dropped by a panic reopens the circuit"
    );
}

/// A control: as for a borrowed permit, only the current probe can give the
/// slot back, and a stale owned permit's panic is a stale failure (B6).
#[test]
fn b7_b12_a_stale_owned_permit_dropped_changes_nothing_panicking_or_not() {
    let core = Core::new(1, ms(10));
    let quiet = core.breaker.try_acquire_owned().unwrap();
    let unwinding = core.breaker.try_acquire_owned().unwrap();
    core.trip();
    core.advance(ms(10));
    let probe = core.probe();
    let in_flight = PROBING;
    drop(quiet);
    assert_state!(
        core.breaker,
        in_flight,
        "B12: an owned permit of an older generation dropped cannot free the probe slot"
    );
    let caught = catch_unwind(AssertUnwindSafe(|| {
        let _stale = unwinding;
        panic!("{TASK_PANIC}");
    }));
    assert!(caught.is_err(), "the panic reaches the caller");
    assert_state!(
        core.breaker,
        in_flight,
        "B6, B12: an owned permit of an older generation dropped by a panic is a stale failure"
    );
    probe.success();
}
