//! A refused call as the event sink tells it (O1): the refusal, with its
//! reason, and no ending of its own.

use std::time::Duration;

use retry_breaker::RetryBreaker;

use crate::support::{Fault, Lab, Script, run};

const LOOPED: &str = "a refused call did not end: TODO(7)";

#[test]
fn o1_e10_a_call_refused_before_a_retry_tells_the_refusal_and_no_ending() {
    run(LOOPED, async {
        let lab = Lab::telling(
            RetryBreaker::builder()
                .threshold(1)
                .cooldown(Duration::from_secs(30)),
        );
        let script = Script::new([Err(Fault::Timeout), Ok(1)]);
        let result = lab.call(3, &script).run().await;
        assert!(
            result.is_err(),
            "TODO(7): the retry is refused by the open circuit"
        );
        assert_eq!(
            lab.trace(),
            [
                "admitted g0",
                "attempt 1",
                "CLOSED -> OPEN g1",
                "failure g0 counted",
                "backoff 1 10ms",
                "rejected Open { remaining: 29.99s }",
            ],
            "TODO(7): the refusal of attempt 2 is told with its reason, and ends the call \
             (O1, E10)"
        );
    });
}
