//! What the caller reads when a call gives up (E5, E10): the reason in
//! words, and the task's own error handed back.

use retry_breaker::{ExecuteError, GaveUp};

use crate::support::{Ending, Fault, Lab, Script, ms, run};

const LOOPED: &str = "the retry loop did not stop: TODO(6)";

/// The error of a call of `budget` attempts that always times out, with a
/// predicate that says `retryable` to everything.
async fn always_fails(budget: u32, retryable: bool) -> ExecuteError<Fault> {
    let lab = Lab::new(10, ms(10));
    let script = Script::new(vec![Err(Fault::Timeout); budget as usize]);
    lab.call(budget, &script)
        .retrying(move |_| retryable)
        .run()
        .await
        .expect_err("every attempt fails")
}

#[test]
fn e5_the_task_error_says_why_execute_gave_up() {
    run(LOOPED, async {
        let exhausted = always_fails(3, true).await;
        assert_eq!(
            exhausted.attempt(),
            Some(3),
            "TODO(6): a budget of 3 retried to the end gives up after attempt 3 (E5)"
        );
        assert_eq!(
            exhausted.reason(),
            Some(GaveUp::NoAttemptsLeft),
            "TODO(6): the spent budget gave up (E5)"
        );
        let turned_down = always_fails(3, false).await;
        assert_eq!(
            turned_down.attempt(),
            Some(1),
            "TODO(6): a predicate's refusal gives up after attempt 1 (E5)"
        );
        assert_eq!(
            turned_down.reason(),
            Some(GaveUp::NotRetryable),
            "TODO(6): the predicate gave up, with attempts left (E5)"
        );
        assert_eq!(
            always_fails(1, false).await.reason(),
            Some(GaveUp::NoAttemptsLeft),
            "TODO(6): the last attempt gives up for want of attempts, retryable or not (E5)"
        );
        assert_eq!(
            always_fails(3, true).await.to_string(),
            "attempt 3 failed and execute gave up, as no attempts were left",
            "TODO(6): a spent budget reads as such (E5)"
        );
        assert_eq!(
            always_fails(3, false).await.to_string(),
            "attempt 1 failed and execute gave up, as the error is not retryable",
            "TODO(6): a predicate's refusal with attempts left reads as such (E5)"
        );
        assert_eq!(
            always_fails(1, false).await.to_string(),
            "attempt 1 failed and execute gave up, as no attempts were left",
            "TODO(6): on the last attempt the budget gave up, retryable or not (E5)"
        );
    });
}
