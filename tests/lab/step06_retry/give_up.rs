//! Giving up on the last attempt (E5), in every form of the call: the
//! budget ends it (`NoAttemptsLeft`), and `retryable` is not even asked,
//! since no answer of its could buy another attempt.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use retry_breaker::{ExecuteError, GaveUp, RetryPolicy, Verdict};

use crate::support::{Ending, Fault, Lab, Script, ms, run};

const LOOPED: &str = "the retry loop did not stop after the last attempt: TODO(6)";

/// The forms a call can take.
const FORMS: [&str; 3] = ["execute", "execute_classified", "RetryPolicy::run"];

/// A retry predicate that counts the errors it is asked about and retries
/// every one of them.
#[derive(Clone, Default)]
struct Asked(Arc<AtomicU32>);

impl Asked {
    fn predicate(&self) -> impl Fn(&Fault) -> bool + Send + Sync + 'static {
        let asked = Arc::clone(&self.0);
        move |_| {
            asked.fetch_add(1, Ordering::SeqCst);
            true
        }
    }

    fn times(&self) -> u32 {
        self.0.load(Ordering::SeqCst)
    }
}

/// One call of `budget` attempts at `script` in the given form.
async fn call(
    form: &str,
    lab: &Lab,
    budget: u32,
    script: &Script,
    asked: &Asked,
) -> Result<u32, ExecuteError<Fault>> {
    let call = lab.call(budget, script).retrying(asked.predicate());
    match form {
        "execute" => call.run().await,
        "execute_classified" => call.classified(Verdict::of).run().await,
        _ => {
            RetryPolicy::constant(ms(10))
                .attempts(budget)
                .without_jitter()
                .retry_if(asked.predicate())
                .run(&lab.breaker, &lab.sleeper, script.task())
                .await
        }
    }
}

#[test]
fn e5_the_last_attempt_gives_up_for_want_of_attempts_in_every_form() {
    for form in FORMS {
        for budget in 1..=3 {
            run(LOOPED, async move {
                let lab = Lab::new(10, ms(10));
                let script = Script::new(vec![Err(Fault::Declined); budget as usize]);
                let asked = Asked::default();
                let result = call(form, &lab, budget, &script, &asked).await;
                assert_eq!(
                    result.attempt(),
                    Some(budget),
                    "TODO(6): through `{form}` with a budget of {budget} and a predicate that \
                     retries everything, the call ends with attempt {budget} (E5); got {result:?}"
                );
                assert_eq!(
                    result.reason(),
                    Some(GaveUp::NoAttemptsLeft),
                    "TODO(6): through `{form}`, the last attempt's failure gives up as \
                     `NoAttemptsLeft`: the budget ended the call (E5); got {result:?}"
                );
                assert_eq!(
                    asked.times(),
                    budget - 1,
                    "TODO(6): through `{form}` with a budget of {budget}, `retryable` is asked \
                     after each failure with attempts left, {} time(s), and never after the last \
                     attempt (E5)",
                    budget - 1
                );
            });
        }
    }
}

#[test]
fn e5_a_predicate_that_cannot_judge_the_last_error_is_never_asked_about_it() {
    // A predicate that panics on the last error: asking it is the mistake.
    for form in FORMS {
        run(LOOPED, async move {
            let lab = Lab::new(10, ms(10));
            let script = Script::new([Err(Fault::Timeout), Err(Fault::Unavailable)]);
            let judge = move |fault: &Fault| match fault {
                Fault::Unavailable => panic!(
                    "TODO(6): through `{form}`, `retryable` was asked about the last attempt's \
                     error; on the last attempt the budget decides (E5)"
                ),
                _ => true,
            };
            let result = match form {
                "execute" => lab.call(2, &script).retrying(judge).run().await,
                "execute_classified" => {
                    lab.call(2, &script)
                        .retrying(judge)
                        .classified(Verdict::of)
                        .run()
                        .await
                }
                _ => {
                    RetryPolicy::constant(ms(10))
                        .attempts(2)
                        .without_jitter()
                        .retry_if(judge)
                        .run(&lab.breaker, &lab.sleeper, script.task())
                        .await
                }
            };
            assert_eq!(
                result.cause(),
                Some(&Fault::Unavailable),
                "TODO(6): through `{form}`, the call ends with the last attempt's error (E5); got \
                 {result:?}"
            );
        });
    }
}
