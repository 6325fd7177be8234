//! What a permit's cleanup tells (O1, B7), and a sink that panics (O4, as
//! B11 for the hook): an admission it panics on goes back with no verdict,
//! and while a panic already unwinds the first one reaches its caller.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};

use retry_breaker::{Event, Phase, RetryBreaker, State};

use crate::support::panics::quietly;
use crate::support::{Lab, ms, panic_message};

#[test]
fn o4_b7_a_sink_that_panics_while_a_permit_is_dropped_by_a_panic_is_silenced() {
    // A sink whose panic escapes while another unwinds aborts the process:
    // this test runs in a process of its own.
    if !crate::support::isolate(
        "O4: the process aborted: the sink panicked while a permit dropped by a panic reported \
         its failure, and that second panic escaped a destructor; catch and drop it",
    ) {
        return;
    }
    let lab = Lab::telling_to(
        RetryBreaker::builder().threshold(1).cooldown(ms(10)),
        |event| {
            if !matches!(event, Event::Admitted { .. }) {
                panic!("the sink broke");
            }
        },
    );
    let caught = quietly(|| {
        catch_unwind(AssertUnwindSafe(|| {
            let _permit = lab.breaker.try_acquire();
            panic!("the task's own panic");
        }))
    });
    let payload = caught.expect_err("the task panicked");
    assert_eq!(
        panic_message(&*payload),
        "the task's own panic",
        "O4: the sink's panic during the unwinding is dropped, so the task's reaches its caller"
    );
    assert_eq!(
        lab.breaker.state().phase(),
        Phase::Open,
        "TODO(4): the permit dropped by the panic counts as a failure (B7), sink or no sink"
    );
    assert_ne!(lab.breaker.state(), State::Closed { failures: 0 });
}

#[test]
fn o1_a_permit_dropped_unreported_is_told_as_given_back() {
    let lab = Lab::telling(RetryBreaker::builder().threshold(1).cooldown(ms(10)));
    drop(lab.breaker.try_acquire().expect("CLOSED admits"));
    assert_eq!(
        lab.trace(),
        ["admitted g0", "released g0"],
        "O1, B7: a permit dropped unreported is told as given back, with no verdict (TODO(4))"
    );
    assert_eq!(lab.breaker.state(), State::Closed { failures: 0 });
}

#[test]
fn o4_a_sink_that_panics_on_an_admission_gives_the_attempt_and_its_slot_back() {
    // The sink breaks on the first admission only, so the breaker can be
    // seen working after it.
    let armed = AtomicBool::new(true);
    let lab = Lab::telling_to(
        RetryBreaker::builder()
            .threshold(1)
            .cooldown(ms(10))
            .max_in_flight(1),
        move |event| {
            if let Event::Admitted { .. } = event {
                if armed.swap(false, Ordering::SeqCst) {
                    panic!("the sink broke");
                }
            }
        },
    );
    let caught = quietly(|| catch_unwind(AssertUnwindSafe(|| lab.breaker.try_acquire().is_ok())));
    let payload = caught.expect_err("O4: the sink's panic reaches the caller of try_acquire");
    assert_eq!(panic_message(&*payload), "the sink broke");
    assert_eq!(
        (lab.breaker.state(), lab.breaker.in_flight()),
        (State::Closed { failures: 0 }, 0),
        "O4: the dependency was never called, so the attempt goes back with no verdict \
         and frees its slot (TODO(4))"
    );
    assert_eq!(
        lab.trace(),
        ["admitted g0"],
        "O4: the attempt goes back untold, since its caller never had it and the sink just \
         panicked (TODO(4))"
    );
    let next = lab.breaker.try_acquire().expect(
        "O4: the slot the broken admission took is free again for the next attempt (TODO(4))",
    );
    next.failure();
    assert_eq!(
        lab.breaker.state().phase(),
        Phase::Open,
        "O4: after the sink's panic the breaker still counts: one failure at threshold 1 opens it (TODO(4))"
    );
}

#[test]
fn o4_a_sink_that_panics_on_the_probe_s_admission_hands_the_probe_slot_back() {
    let panicked = AtomicBool::new(false);
    let lab = Lab::telling_to(
        RetryBreaker::builder().threshold(1).cooldown(ms(10)),
        move |event| {
            if let Event::Admitted { probe: true, .. } = event {
                if !panicked.swap(true, Ordering::SeqCst) {
                    panic!("the sink broke");
                }
            }
        },
    );
    lab.trip();
    lab.advance(ms(10));
    let caught = quietly(|| catch_unwind(AssertUnwindSafe(|| lab.breaker.try_acquire().is_ok())));
    let payload = caught.expect_err("O4: the sink's panic reaches the caller");
    assert_eq!(panic_message(&*payload), "the sink broke");
    assert_eq!(
        lab.breaker.state(),
        State::HalfOpen {
            probe_in_flight: false
        },
        "O4: a probe whose admission made the sink panic never called the dependency, \
         so its slot goes back (TODO(4))"
    );
    lab.told();
    let probe = lab.probe();
    assert_eq!(
        lab.trace(),
        ["admitted g2 probe"],
        "O1: the next attempt is the probe"
    );
    probe.success();
}
