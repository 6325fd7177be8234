//! Step 1's rules as the event sink tells them (O1, O2, O4): each admission
//! and outcome, with the trip before the failure that made it.

use std::panic::{AssertUnwindSafe, catch_unwind};

use retry_breaker::{Event, RetryBreaker, State};

use crate::support::panics::quietly;
use crate::support::{Lab, ms, panic_message};

fn lab(threshold: u32) -> Lab {
    Lab::telling(
        RetryBreaker::builder()
            .threshold(threshold)
            .cooldown(ms(10)),
    )
}

#[test]
fn o1_o2_each_admission_and_outcome_is_told_and_the_trip_before_the_failure_that_made_it() {
    let lab = lab(2);
    lab.breaker.try_acquire().expect("CLOSED admits").success();
    lab.breaker.try_acquire().expect("CLOSED admits").failure();
    assert_eq!(
        lab.trace(),
        [
            "admitted g0",
            "success g0 counted",
            "admitted g0",
            "failure g0 counted"
        ],
        "O1: every admission and every outcome is told, in order (TODO(1))"
    );
    lab.breaker.try_acquire().expect("CLOSED admits").failure();
    assert_eq!(
        lab.trace(),
        ["admitted g0", "CLOSED -> OPEN g1", "failure g0 counted"],
        "O2: the trip is told before the failure that made it (TODO(1))"
    );
}

#[test]
fn o4_a_sink_that_panics_on_an_outcome_reaches_the_reporter_and_the_outcome_stays_counted() {
    let lab = Lab::telling_to(
        RetryBreaker::builder().threshold(2).cooldown(ms(10)),
        |event| {
            if let Event::Recorded { .. } = event {
                panic!("the sink broke");
            }
        },
    );
    let permit = lab.breaker.try_acquire().expect("CLOSED admits");
    let caught = quietly(|| catch_unwind(AssertUnwindSafe(|| permit.failure())));
    let payload = caught.expect_err("O4: the sink's panic reaches the reporter");
    assert_eq!(panic_message(&*payload), "the sink broke");
    assert_eq!(
        lab.breaker.state(),
        State::Closed { failures: 1 },
        "O4: the failure stays counted when the sink panics on hearing of it (TODO(1))"
    );
}
