//! A call as the event sink tells it (O1, O3, O4): each attempt as it
//! starts, each backoff, and why the call gave up, between the breaker's
//! own admissions and outcomes.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use retry_breaker::{Event, RetryBreaker, RetryBudget, RetryPolicy, State};

use crate::support::panics::quietly;
use crate::support::{Fault, Lab, Script, ms, panic_message, poll_once, run};

const LOOPED: &str = "a call told to an event sink did not end: TODO(6)";

fn lab() -> Lab {
    Lab::telling(RetryBreaker::builder().threshold(5).cooldown(ms(10)))
}

#[test]
fn o1_a_call_tells_each_attempt_each_backoff_and_why_it_gave_up() {
    run(LOOPED, async {
        let lab = lab();
        let script = Script::new([
            Err(Fault::Timeout),
            Err(Fault::Timeout),
            Err(Fault::Timeout),
        ]);
        let result = lab.call(3, &script).run().await;
        assert!(result.is_err(), "TODO(6): three timeouts end the call");
        assert_eq!(
            lab.trace(),
            [
                "admitted g0",
                "attempt 1",
                "failure g0 counted",
                "backoff 1 10ms",
                "admitted g0",
                "attempt 2",
                "failure g0 counted",
                "backoff 2 20ms",
                "admitted g0",
                "attempt 3",
                "failure g0 counted",
                "gave up 3 NoAttemptsLeft",
            ],
            "TODO(6): each attempt is told as it starts, each backoff with its delay, and the \
             reason the call ended last (O1)"
        );
    });
}

#[test]
fn o1_a_call_that_succeeds_tells_no_ending() {
    run(LOOPED, async {
        let lab = lab();
        let script = Script::new([Err(Fault::Unavailable), Ok(7)]);
        assert_eq!(lab.call(3, &script).run().await.ok(), Some(7), "TODO(6)");
        assert_eq!(
            lab.trace(),
            [
                "admitted g0",
                "attempt 1",
                "failure g0 counted",
                "backoff 1 10ms",
                "admitted g0",
                "attempt 2",
                "success g0 counted",
            ],
            "TODO(6): a call that succeeds ends with its success (O1)"
        );
    });
}

#[test]
fn o1_a_policy_tells_the_reason_it_gave_up_once_and_as_the_caller_gets_it() {
    run(LOOPED, async {
        let lab = lab();
        let spent = Arc::new(RetryBudget::new(Duration::from_secs(10), 0, 0).expect("a budget"));
        let policy = RetryPolicy::constant(ms(100))
            .attempts(3)
            .retry_budget(spent);
        let script = Script::new([Err(Fault::Timeout), Ok(1)]);
        let result = policy.run(&lab.breaker, &lab.sleeper, script.task()).await;
        assert!(result.is_err(), "TODO(6): the budget has no retry");
        let endings: Vec<String> = lab
            .trace()
            .into_iter()
            .filter(|line| line.starts_with("gave up"))
            .collect();
        assert_eq!(
            endings,
            ["gave up 1 RetryBudgetSpent"],
            "O1: the call's end is told once, with the reason its caller gets (TODO(6))"
        );
    });
}

#[test]
fn o4_a_sink_that_panics_as_an_attempt_starts_gives_the_attempt_back_unreported() {
    let lab = Lab::telling_to(
        RetryBreaker::builder().threshold(1).cooldown(ms(10)),
        |event| {
            if let Event::AttemptStarted { .. } = event {
                panic!("the sink broke");
            }
        },
    );
    lab.trip();
    lab.advance(ms(10));
    lab.told();
    let script = Script::new([Ok(1)]);
    let mut call = pin!(lab.call(1, &script).run());
    let caught = quietly(|| catch_unwind(AssertUnwindSafe(|| poll_once(call.as_mut()))));
    let payload = caught.expect_err("O4: the sink's panic reaches the caller of execute");
    assert_eq!(panic_message(&*payload), "the sink broke");
    script.assert_calls(0, "TODO(6)");
    assert_eq!(
        lab.breaker.state(),
        State::HalfOpen {
            probe_in_flight: false
        },
        "TODO(6): the probe never reached the dependency, so it goes back with no verdict \
         rather than as a failure (O4)"
    );
    assert_eq!(
        lab.trace(),
        ["OPEN -> HALF-OPEN g2", "admitted g2 probe", "attempt 1"],
        "O4: the probe goes back untold, since the sink panicked on hearing it start (TODO(6))"
    );
}
