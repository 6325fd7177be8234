//! An ignored outcome as the event sink tells it (O1, K1).

use retry_breaker::{RetryBreaker, Verdict};

use crate::support::{Fault, Lab, Script, ms, no_backoff, run};

#[test]
fn o1_k1_an_ignored_outcome_is_told_as_given_back_and_a_failure_as_counted() {
    run("the classified call did not end: TODO(11)", async {
        let lab = Lab::telling(RetryBreaker::builder().threshold(2).cooldown(ms(10)));
        let script = Script::new([Err(Fault::Unavailable), Err(Fault::Timeout)]);
        let result = lab
            .call(2, &script)
            .backoff(no_backoff)
            .classified(|outcome: &Result<u32, Fault>| match outcome {
                Err(Fault::Unavailable) => Verdict::Ignored,
                other => Verdict::of(other),
            })
            .run()
            .await;
        assert!(result.is_err(), "two faults end the call");
        assert_eq!(
            lab.trace(),
            [
                "admitted g0",
                "attempt 1",
                "released g0",
                "backoff 1 0ns",
                "admitted g0",
                "attempt 2",
                "failure g0 counted",
                "gave up 2 NoAttemptsLeft",
            ],
            "TODO(11): an outcome classified `Ignored` is given back with no verdict and told so; \
             a `Failure` is counted (O1, K1)"
        );
    });
}
