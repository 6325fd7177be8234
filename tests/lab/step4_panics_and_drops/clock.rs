//! A clock that panics while a probe reports or is dropped (B12): the panic
//! reaches the reporter, and the probe slot goes back with no verdict, so
//! the breaker is never wedged in HALF-OPEN.

use retry_breaker::{Generation, State};

use crate::support::breaker_core::{CLOCK_PANIC, Core, TASK_PANIC, WAITING, assert_state};
use crate::support::{isolate, ms};

const CLOCK_TODO: &str = "TODO(4): a probe whose report the clock's panic interrupted must hand \
                          its slot back with no verdict, as a dropped probe does \
                          (`Circuit::abandon`, B7, B12); otherwise HALF-OPEN refuses every attempt \
                          for good";

const ABORTED: &str = "B12: the process aborted: a clock that panics while a permit dropped by a \
                       panic records its failure must have its panic caught and dropped, never \
                       allowed to escape the permit's destructor (TODO(4))";

/// A breaker whose cooldown of 10 ms is over, with its probe admitted.
fn probing() -> Core {
    Core::cooled(1, ms(10))
}

/// After the broken clock met the probe admitted in `generation`: the slot
/// is free, nothing was recorded, and the next probe decides.
fn assert_slot_back(core: &Core, generation: Generation, what: &str) {
    assert_state!(core.breaker, WAITING, "{CLOCK_TODO}: {what}");
    assert_eq!(
        core.breaker.generation(),
        generation,
        "B7, B12: {what}: no verdict, so no transition ({CLOCK_TODO})"
    );
    core.probe().success();
    assert_state!(
        core.breaker,
        State::Closed { failures: 0 },
        "B7, B12: {what}: not wedged, the next probe closes the circuit ({CLOCK_TODO})"
    );
}

/// What reached the reporter must be the clock's own panic.
fn assert_clock_panic(said: Option<String>, what: &str) {
    assert_eq!(
        said.as_deref(),
        Some(CLOCK_PANIC),
        "B12: {what}: the clock's panic reaches the reporter unchanged ({CLOCK_TODO})"
    );
}

#[test]
fn b7_b12_a_probe_success_the_clock_interrupts_hands_the_slot_back_with_no_verdict() {
    let core = probing();
    let probe = core.probe();
    let generation = probe.generation();
    assert_clock_panic(core.broken(|| probe.success()), "a probe's success");
    assert_slot_back(&core, generation, "a probe's success");
}

#[test]
fn b7_b12_a_probe_failure_the_clock_interrupts_hands_the_slot_back_with_no_verdict() {
    let core = probing();
    let probe = core.probe();
    let generation = probe.generation();
    assert_clock_panic(core.broken(|| probe.failure()), "a probe's failure");
    assert_slot_back(&core, generation, "a probe's failure");
}

#[test]
fn b7_b12_an_owned_probe_report_the_clock_interrupts_hands_the_slot_back_with_no_verdict() {
    let core = probing();
    let probe = core.breaker.try_acquire_owned().expect("the probe");
    let generation = probe.generation();
    assert_clock_panic(core.broken(|| probe.success()), "an owned probe's success");
    assert_slot_back(&core, generation, "an owned probe's success");

    let core = probing();
    let probe = core.breaker.try_acquire_owned().expect("the probe");
    let generation = probe.generation();
    assert_clock_panic(core.broken(|| probe.failure()), "an owned probe's failure");
    assert_slot_back(&core, generation, "an owned probe's failure");
}

#[test]
fn b7_b12_a_probe_dropped_unreported_needs_no_clock() {
    let core = probing();
    let probe = core.probe();
    let generation = probe.generation();
    assert_eq!(
        core.broken(|| drop(probe)),
        None,
        "B12: a dropped probe records no verdict, so it reads no clock"
    );
    assert_slot_back(&core, generation, "a dropped probe");

    let core = probing();
    let probe = core.breaker.try_acquire_owned().expect("the probe");
    let generation = probe.generation();
    assert_eq!(
        core.broken(|| drop(probe)),
        None,
        "B12: a dropped owned probe records no verdict, so it reads no clock"
    );
    assert_slot_back(&core, generation, "a dropped owned probe");
}

#[test]
fn b7_b12_a_probe_dropped_by_a_panic_on_a_broken_clock_keeps_the_first_panic_and_its_slot_goes_back()
 {
    if !isolate(ABORTED) {
        return;
    }
    let core = probing();
    let probe = core.probe();
    let generation = probe.generation();
    let said = core.broken(move || {
        let _probe = probe;
        panic!("{TASK_PANIC}");
    });
    assert_eq!(
        said.as_deref(),
        Some(TASK_PANIC),
        "B7, B12: the panic that dropped the probe reaches its caller unchanged; the clock's, \
         raised while it unwinds, is dropped ({CLOCK_TODO})"
    );
    assert_slot_back(&core, generation, "a probe dropped by a panic");
}

#[test]
fn b7_b12_an_owned_probe_dropped_by_a_panic_on_a_broken_clock_keeps_the_first_panic_and_its_slot_goes_back()
 {
    if !isolate(ABORTED) {
        return;
    }
    let core = probing();
    let probe = core.breaker.try_acquire_owned().expect("the probe");
    let generation = probe.generation();
    let said = core.broken(move || {
        let _probe = probe;
        panic!("{TASK_PANIC}");
    });
    assert_eq!(
        said.as_deref(),
        Some(TASK_PANIC),
        "B7, B12: the panic that dropped the owned probe reaches its caller unchanged \
         ({CLOCK_TODO})"
    );
    assert_slot_back(&core, generation, "an owned probe dropped by a panic");
}
