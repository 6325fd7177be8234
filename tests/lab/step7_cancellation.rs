//! Step 7, cancellation: a cancelled token stops the call before the next
//! attempt and during a backoff sleep (TODO(7); rules E2, E7).

use std::future::{Future, pending};
use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use retry_breaker::{ExecuteError, Sleeper, State};
use tokio_util::sync::CancellationToken;

use crate::support::{Fault, Lab, Script, ms, poll_once, retryable, run};

const LOOPED: &str = "the call did not notice its cancelled token: TODO(7)";

fn linear(attempt: u32) -> Duration {
    ms(10) * attempt
}

#[test]
fn e2_a_token_cancelled_before_the_call_means_no_attempt_at_all() {
    run(LOOPED, async {
        let lab = Lab::new(1, ms(10));
        let script = Script::new([Ok(1)]);
        let cancel = CancellationToken::new();
        cancel.cancel();
        let result = lab
            .breaker
            .execute(3, script.task(), retryable, linear, &cancel, &lab.sleeper)
            .await;
        assert!(
            matches!(result, Err(ExecuteError::Cancelled { attempts_made: 0 })),
            "TODO(7): check the token before every attempt (E2); got {result:?}"
        );
        assert_eq!(script.calls(), 0, "E2: the task is not invoked");
        assert_eq!(lab.breaker.state(), State::Closed { failures: 0 });
        assert!(result.unwrap_err().to_string().contains("cancelled"));
    });
}

#[test]
fn e2_a_cancelled_token_does_not_take_the_probe_slot() {
    run(LOOPED, async {
        let lab = Lab::new(1, ms(10));
        lab.trip();
        lab.advance(ms(10));
        let cancel = CancellationToken::new();
        cancel.cancel();
        let script = Script::new([Ok(1)]);
        let result = lab
            .breaker
            .execute(1, script.task(), retryable, linear, &cancel, &lab.sleeper)
            .await;
        assert!(
            matches!(result, Err(ExecuteError::Cancelled { attempts_made: 0 })),
            "TODO(7): a cancelled call must not even ask the breaker; got {result:?}"
        );
        assert_eq!(
            lab.breaker.state(),
            State::Open {
                remaining: Duration::ZERO
            }
        );
    });
}

#[test]
fn e7_a_token_cancelled_while_the_task_runs_stops_the_retries_and_the_outcome_still_counts() {
    run(LOOPED, async {
        let lab = Lab::new(3, ms(10));
        let cancel = CancellationToken::new();
        let inside = cancel.clone();
        let script = Script::new([Err(Fault::Timeout), Ok(2)]);
        let mut scripted = script.task();
        let task = move || {
            inside.cancel(); // the caller gives up while the attempt is in flight
            scripted()
        };
        let result = lab
            .breaker
            .execute(3, task, retryable, linear, &cancel, &lab.sleeper)
            .await;
        assert!(
            matches!(result, Err(ExecuteError::Cancelled { attempts_made: 1 })),
            "TODO(7): no attempt after the token is cancelled; got {result:?}"
        );
        assert_eq!(script.calls(), 1);
        assert!(
            lab.sleeper.delays().is_empty(),
            "TODO(7): a cancelled call does not start a backoff sleep"
        );
        assert_eq!(
            lab.breaker.state(),
            State::Closed { failures: 1 },
            "E7: the attempt's outcome is reported"
        );
    });
}

/// A control: cancellation during the task is the task's business, so a
/// value that arrives anyway is returned, not replaced by a cancellation.
#[test]
fn e7_a_success_that_arrives_after_cancellation_is_still_returned() {
    run(LOOPED, async {
        let lab = Lab::new(3, ms(10));
        let cancel = CancellationToken::new();
        let inside = cancel.clone();
        let task = move || {
            inside.cancel();
            async { Ok::<_, Fault>(11) }
        };
        let result = lab
            .breaker
            .execute(3, task, retryable, linear, &cancel, &lab.sleeper)
            .await;
        assert_eq!(
            result.unwrap(),
            11,
            "E7: cancellation during the task is the task's business"
        );
    });
}

/// A sleeper that cancels the token the moment the sleep starts, then
/// behaves according to `finishes`.
struct CancelsWhileAsleep {
    cancel: CancellationToken,
    finishes: bool,
}

impl Sleeper for CancelsWhileAsleep {
    fn sleep(&self, _: Duration) -> impl Future<Output = ()> + Send {
        let cancel = self.cancel.clone();
        let finishes = self.finishes;
        async move {
            cancel.cancel();
            if !finishes {
                pending::<()>().await;
            }
        }
    }
}

#[test]
fn e7_a_cancellation_during_a_sleep_ends_the_call_promptly() {
    let lab = Lab::new(3, ms(10));
    let script = Script::new([Err(Fault::Timeout), Ok(1)]);
    let cancel = CancellationToken::new();
    let sleeper = CancelsWhileAsleep {
        cancel: cancel.clone(),
        finishes: false,
    };
    let call = lab
        .breaker
        .execute(3, script.task(), retryable, linear, &cancel, &sleeper);
    let mut call = pin!(call);
    // The first poll runs attempt 1 and starts the (endless) sleep, which
    // cancels the token. A correct call is woken by the token; either way
    // one more poll must find it finished, not still asleep.
    let first = poll_once(call.as_mut());
    let outcome = match first {
        Poll::Ready(outcome) => outcome,
        Poll::Pending => match poll_once(call.as_mut()) {
            Poll::Ready(outcome) => outcome,
            Poll::Pending => panic!(
                "TODO(7): the token was cancelled during the backoff sleep, but the call is still asleep (E7)"
            ),
        },
    };
    assert!(
        matches!(outcome, Err(ExecuteError::Cancelled { attempts_made: 1 })),
        "{outcome:?}"
    );
    assert_eq!(script.calls(), 1);
}

#[test]
fn e2_the_token_is_checked_again_before_every_attempt_not_only_the_first() {
    run(LOOPED, async {
        let lab = Lab::new(3, ms(10));
        let script = Script::new([Err(Fault::Timeout), Ok(1)]);
        let cancel = CancellationToken::new();
        // The sleep completes even though it cancelled the token: only the
        // check before attempt 2 can notice.
        let sleeper = CancelsWhileAsleep {
            cancel: cancel.clone(),
            finishes: true,
        };
        let result = lab
            .breaker
            .execute(3, script.task(), retryable, linear, &cancel, &sleeper)
            .await;
        assert!(
            matches!(result, Err(ExecuteError::Cancelled { attempts_made: 1 })),
            "TODO(7): check the token before every attempt, not just the first (E2); got {result:?}"
        );
        assert_eq!(script.calls(), 1);
    });
}

/// The real tokio sleeper, which also says when a sleep has begun.
struct Announced {
    asleep: CancellationToken,
}

impl Sleeper for Announced {
    fn sleep(&self, delay: Duration) -> impl Future<Output = ()> + Send {
        self.asleep.cancel();
        retry_breaker::TokioSleeper.sleep(delay)
    }
}

#[test]
fn e7_cancelling_from_another_task_wakes_a_call_that_sleeps_for_real() {
    run(
        "the real sleep was not interrupted by the token (E7): TODO(7)",
        async {
            let lab = Arc::new(Lab::new(3, ms(10)));
            let cancel = CancellationToken::new();
            let asleep = CancellationToken::new();
            let shared = Arc::clone(&lab);
            let (token, sleeper) = (
                cancel.clone(),
                Announced {
                    asleep: asleep.clone(),
                },
            );
            let call = tokio::spawn(async move {
                let script = Script::new([Err(Fault::Timeout)]);
                // An hour-long real sleep: only the token can end this test in time.
                let hour = |_| Duration::from_secs(3600);
                shared
                    .breaker
                    .execute(2, script.task(), retryable, hour, &token, &sleeper)
                    .await
            });
            asleep.cancelled().await;
            cancel.cancel();
            let result = call.await.unwrap();
            assert!(
                matches!(result, Err(ExecuteError::Cancelled { attempts_made: 1 })),
                "TODO(7): stop sleeping when the token is cancelled; got {result:?}"
            );
        },
    );
}
