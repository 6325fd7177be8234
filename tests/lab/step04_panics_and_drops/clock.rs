//! A clock that panics while a probe reports or is dropped (B12): the panic
//! reaches the reporter, and the probe slot goes back with no verdict, so
//! the breaker is never wedged in HALF-OPEN.

use retry_breaker::{Generation, OwnedPermit, Permit, State};

use crate::support::breaker_core::{
    CLOCK_PANIC, Core, TASK_PANIC, TestClock, WAITING, assert_state,
};
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

/// The clock breaks while `report` reports the probe admitted in
/// `generation`: its panic reaches the reporter, and the slot goes back.
fn assert_report_interrupted<T>(
    core: &Core,
    generation: Generation,
    report: impl FnOnce() -> T,
    what: &str,
) {
    assert_clock_panic(core.broken(report), what);
    assert_slot_back(core, generation, what);
}

/// Reports the probe of a [`probing`] breaker with `report` while the
/// clock is broken (see [`assert_report_interrupted`]).
fn interrupt_a_probe<T>(report: impl FnOnce(Permit<'_, TestClock>) -> T, what: &str) {
    let core = probing();
    let probe = core.probe();
    assert_report_interrupted(&core, probe.generation(), || report(probe), what);
}

/// Like [`interrupt_a_probe`], with an owned probe.
fn interrupt_an_owned_probe<T>(report: impl FnOnce(OwnedPermit<TestClock>) -> T, what: &str) {
    let core = probing();
    let probe = core.breaker.try_acquire_owned().expect("the probe");
    assert_report_interrupted(&core, probe.generation(), || report(probe), what);
}

#[test]
fn b7_b12_a_probe_success_the_clock_interrupts_hands_the_slot_back_with_no_verdict() {
    interrupt_a_probe(|probe| probe.success(), "a probe's success");
}

#[test]
fn b7_b12_a_probe_failure_the_clock_interrupts_hands_the_slot_back_with_no_verdict() {
    interrupt_a_probe(|probe| probe.failure(), "a probe's failure");
}

#[test]
fn b7_b12_an_owned_probe_report_the_clock_interrupts_hands_the_slot_back_with_no_verdict() {
    interrupt_an_owned_probe(|probe| probe.success(), "an owned probe's success");
    interrupt_an_owned_probe(|probe| probe.failure(), "an owned probe's failure");
}

/// Drops the probe admitted in `generation` while the clock is broken (by
/// `drop_it`): it records no verdict, so it reads no clock, and its slot
/// goes back.
fn assert_dropped_without_the_clock(
    core: &Core,
    generation: Generation,
    drop_it: impl FnOnce(),
    what: &str,
) {
    assert_eq!(
        core.broken(drop_it),
        None,
        "B12: {what} records no verdict, so it reads no clock"
    );
    assert_slot_back(core, generation, what);
}

/// A panic drops `probe`, admitted in `generation`, while the clock is
/// broken: the panic reaches the caller unchanged (`why` says so), and the
/// probe's slot goes back.
fn assert_dropped_by_a_panic<P>(
    core: &Core,
    generation: Generation,
    probe: P,
    why: &str,
    what: &str,
) {
    let said = core.broken(move || {
        let _probe = probe;
        panic!("{TASK_PANIC}");
    });
    assert_eq!(said.as_deref(), Some(TASK_PANIC), "{why}");
    assert_slot_back(core, generation, what);
}

#[test]
fn b7_b12_a_probe_dropped_unreported_needs_no_clock() {
    let core = probing();
    let probe = core.probe();
    let generation = probe.generation();
    assert_dropped_without_the_clock(&core, generation, || drop(probe), "a dropped probe");

    let core = probing();
    let probe = core.breaker.try_acquire_owned().expect("the probe");
    let generation = probe.generation();
    assert_dropped_without_the_clock(&core, generation, || drop(probe), "a dropped owned probe");
}

#[test]
fn b7_b12_a_probe_dropped_by_a_panic_on_a_broken_clock_keeps_the_first_panic_and_its_slot_goes_back()
 {
    if !isolate(ABORTED) {
        return;
    }
    let core = probing();
    let probe = core.probe();
    assert_dropped_by_a_panic(
        &core,
        probe.generation(),
        probe,
        &format!(
            "B7, B12: the panic that dropped the probe reaches its caller unchanged; the clock's, \
             raised while it unwinds, is dropped ({CLOCK_TODO})"
        ),
        "a probe dropped by a panic",
    );
}

#[test]
fn b7_b12_an_owned_probe_dropped_by_a_panic_on_a_broken_clock_keeps_the_first_panic_and_its_slot_goes_back()
 {
    if !isolate(ABORTED) {
        return;
    }
    let core = probing();
    let probe = core.breaker.try_acquire_owned().expect("the probe");
    assert_dropped_by_a_panic(
        &core,
        probe.generation(),
        probe,
        &format!(
            "B7, B12: the panic that dropped the owned probe reaches its caller unchanged \
             ({CLOCK_TODO})"
        ),
        "an owned probe dropped by a panic",
    );
}
