//! Classifying and retrying are separate questions (K2, K3): for every
//! verdict, a retryable and a non-retryable error, on an attempt with
//! attempts left and on the last, in both forms that take a classifier.
//! Whether the call retries comes from `retryable` alone, what the breaker
//! records from the classifier alone, and the caller gets the task's error
//! unchanged.

use std::time::Duration;

use retry_breaker::{ExecuteError, GaveUp, RetryPolicy, State, Verdict};

use crate::support::{Ending, Fault, Lab, Script, ms, retryable, run};

const LOOPED: &str = "the retry loop did not stop: TODO(11), or the TODOs of steps 1-8";

/// The attempt under test fails with `fault`; the attempts around it fail
/// with `Unavailable`, which the classifier ignores, so the breaker's count
/// shows the verdict of that one attempt alone.
fn classify_errors(fault: Fault, verdict: Verdict) -> impl Fn(&Fault) -> Verdict + Send + Sync {
    move |error| {
        if *error == fault {
            verdict
        } else {
            Verdict::Ignored
        }
    }
}

/// One call in `form`: attempt 1 fails `Unavailable` (ignored, retried),
/// attempt 2 fails with `fault`, attempt 3 (if any) fails `Unavailable`.
async fn call(
    form: &str,
    lab: &Lab,
    budget: u32,
    fault: Fault,
    verdict: Verdict,
) -> (Result<u32, ExecuteError<Fault>>, u32) {
    let script = Script::new([Err(Fault::Unavailable), Err(fault), Err(Fault::Unavailable)]);
    let errors = classify_errors(fault, verdict);
    let result = if form == "execute_classified" {
        let classify = move |outcome: &Result<u32, Fault>| match outcome {
            Ok(_) => Verdict::Success,
            Err(error) => errors(error),
        };
        lab.call(budget, &script).classified(classify).run().await
    } else {
        RetryPolicy::constant(ms(10))
            .attempts(budget)
            .without_jitter()
            .retry_if(retryable)
            .classify_errors(errors)
            .run(&lab.breaker, &lab.sleeper, script.task())
            .await
    };
    (result, script.calls())
}

#[test]
fn k2_k3_retrying_follows_retryable_and_the_count_follows_the_verdict_in_every_combination() {
    let forms = ["execute_classified", "RetryPolicy::classify_errors"];
    let verdicts = [Verdict::Success, Verdict::Failure, Verdict::Ignored];
    // (the attempt's place, the budget that puts attempt 2 there)
    let places = [("with attempts left", 3), ("the last", 2)];
    for form in forms {
        for verdict in verdicts {
            for fault in [Fault::Timeout, Fault::Declined] {
                for (place, budget) in places {
                    run(LOOPED, async move {
                        // One failure on record, so a success (reset to 0), a
                        // failure (2) and nothing (1) all show.
                        let lab = Lab::new(10, Duration::from_secs(30));
                        lab.breaker.try_acquire().expect("closed").failure();
                        let (result, calls) = call(form, &lab, budget, fault, verdict).await;
                        let case = format!(
                            "through `{form}`, attempt 2 ({place}) fails with {fault:?}, read as \
                             {verdict:?}"
                        );
                        let retried = retryable(&fault) && budget > 2;
                        assert_eq!(
                            calls,
                            if retried { 3 } else { 2 },
                            "TODO(11): {case}: whether the call retries is `retryable`'s \
                             decision alone, whatever the verdict (K2)"
                        );
                        if retried {
                            assert_eq!(
                                result.attempt(),
                                Some(3),
                                "TODO(11): {case}: the retry ran and attempt 3 ended the call (K2); \
                                 got {result:?}"
                            );
                        } else {
                            assert_eq!(
                                result.attempt(),
                                Some(2),
                                "TODO(11): {case}: the call ends with attempt 2 (K2); got \
                                 {result:?}"
                            );
                            assert_eq!(
                                result.cause(),
                                Some(&fault),
                                "TODO(11): {case}: the caller gets the task's error unchanged, \
                                 whatever its verdict (K3); got {result:?}"
                            );
                            let reason = if budget == 2 {
                                GaveUp::NoAttemptsLeft
                            } else {
                                GaveUp::NotRetryable
                            };
                            assert_eq!(
                                result.reason(),
                                Some(reason),
                                "TODO(11): {case}: the reason for giving up comes from the budget \
                                 and `retryable`, never from the verdict (K2, E5); got {result:?}"
                            );
                        }
                        let failures = match verdict {
                            Verdict::Success => 0,
                            Verdict::Failure => 2,
                            _ => 1,
                        };
                        assert_eq!(
                            lab.breaker.state(),
                            State::Closed { failures },
                            "TODO(11): {case}: the breaker records the verdict alone, so one \
                             failure on record becomes {failures} (K1, K2)"
                        );
                    });
                }
            }
        }
    }
}
