//! Step 8, cancellation: a cancelled token stops the call before the next
//! attempt and during a backoff sleep (TODO(8); rules E2, E7).

use std::future::{Future, pending};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use retry_breaker::{ExecuteError, Sleeper, State};
use tokio_util::sync::CancellationToken;

use crate::support::{Ending, Fault, Lab, Script, linear, ms, poll_once, retryable, run};

const LOOPED: &str = "the call did not notice its cancelled token: TODO(8)";

/// A token cancelled before the call starts.
fn cancelled() -> CancellationToken {
    let token = CancellationToken::new();
    token.cancel();
    token
}

/// `attempts_made` of a cancelled call: the attempts that `ran` before the
/// cancellation was noticed (E2, E7).
#[track_caller]
fn assert_attempts_made(result: &Result<u32, ExecuteError<Fault>>, ran: u32) {
    assert_eq!(
        result.attempts_made(),
        Some(ran),
        "TODO(8): `attempts_made` counts the attempts that ran before the cancellation was noticed, here {ran} (E2, E7)"
    );
}

#[test]
fn e2_a_token_cancelled_before_the_call_means_no_attempt_at_all() {
    run(LOOPED, async {
        let lab = Lab::new(1, ms(10));
        let script = Script::new([Ok(1)]);
        let cancel = cancelled();
        let result = lab.call(3, &script).cancel(&cancel).run().await;
        assert_eq!(
            result.ending(),
            "Cancelled",
            "TODO(8): check the token before every attempt (E2); got {result:?}"
        );
        assert_attempts_made(&result, 0);
        assert_eq!(script.calls(), 0, "E2: the task is not invoked");
        assert_eq!(
            result.cause(),
            None,
            "TODO(8): a call cancelled before its first attempt has no task error to carry (E2)"
        );
        assert_eq!(
            lab.breaker.state(),
            State::Closed { failures: 0 },
            "TODO(8): the breaker must now be `State::Closed {{failures: 0}}`"
        );
        assert!(
            result.unwrap_err().to_string().contains("cancelled"),
            "TODO(8): expected `result.unwrap_err().to_string().contains(\"cancelled\")`"
        );
    });
}

#[test]
fn e2_a_cancelled_token_does_not_take_the_probe_slot() {
    run(LOOPED, async {
        let lab = Lab::cooled(1, ms(10));
        let cancel = cancelled();
        let script = Script::new([Ok(1)]);
        let result = lab.call(1, &script).cancel(&cancel).run().await;
        assert_eq!(
            result.ending(),
            "Cancelled",
            "TODO(8): a cancelled call must not even ask the breaker; got {result:?}"
        );
        assert_attempts_made(&result, 0);
        assert_eq!(
            lab.breaker.state(),
            State::Open {
                remaining: Duration::ZERO
            },
            "TODO(8): the breaker must now be `State::Open {{remaining: Duration::ZERO}}`"
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
        let result = lab.call_with(3, task).cancel(&cancel).run().await;
        assert_eq!(
            result.ending(),
            "Cancelled",
            "TODO(8): no attempt after the token is cancelled; got {result:?}"
        );
        assert_attempts_made(&result, 1);
        script.assert_calls(1, "TODO(8)");
        assert!(
            lab.sleeper.delays().is_empty(),
            "TODO(8): a cancelled call does not start a backoff sleep"
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
        let result = lab.call_with(3, task).cancel(&cancel).run().await;
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
    type Sleep = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

    fn sleep(&self, _: Duration) -> Self::Sleep {
        let cancel = self.cancel.clone();
        let finishes = self.finishes;
        Box::pin(async move {
            cancel.cancel();
            if !finishes {
                pending::<()>().await;
            }
        })
    }
}

/// A call of three attempts at `script` whose backoff sleep cancels the
/// token and then completes anyway: only the check before the next attempt
/// can notice (E2).
async fn cancelled_in_a_finished_sleep(
    lab: &Lab,
    script: &Script,
) -> Result<u32, ExecuteError<Fault>> {
    let cancel = CancellationToken::new();
    let sleeper = CancelsWhileAsleep {
        cancel: cancel.clone(),
        finishes: true,
    };
    lab.call(3, script)
        .cancel(&cancel)
        .sleeper(&sleeper)
        .run()
        .await
}

/// Polls a call whose first poll ends in an endless sleep that cancels its
/// token. A correct call is woken by the token, so one more poll at the
/// most finds it finished; `None` if it is still asleep.
fn within_two_polls<F: Future>(mut call: Pin<&mut F>) -> Option<F::Output> {
    for _ in 0..2 {
        if let Poll::Ready(output) = poll_once(call.as_mut()) {
            return Some(output);
        }
    }
    None
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
    let call = lab.call(3, &script).cancel(&cancel).sleeper(&sleeper).run();
    let mut call = pin!(call);
    // The first poll runs attempt 1 and starts the (endless) sleep, which
    // cancels the token. A correct call is woken by the token; either way
    // one more poll must find it finished, not still asleep.
    let Some(outcome) = within_two_polls(call.as_mut()) else {
        panic!(
            "TODO(8): the token was cancelled during the backoff sleep, but the call is still asleep (E7)"
        );
    };
    assert_eq!(outcome.ending(), "Cancelled", "{outcome:?}");
    assert_attempts_made(&outcome, 1);
    script.assert_calls(1, "TODO(8)");
}

#[test]
fn e2_the_token_is_checked_again_before_every_attempt_not_only_the_first() {
    run(LOOPED, async {
        let lab = Lab::new(3, ms(10));
        let script = Script::new([Err(Fault::Timeout), Ok(1)]);
        let result = cancelled_in_a_finished_sleep(&lab, &script).await;
        assert_eq!(
            result.ending(),
            "Cancelled",
            "TODO(8): check the token before every attempt, not just the first (E2); got {result:?}"
        );
        assert_attempts_made(&result, 1);
        script.assert_calls(1, "TODO(8)");
    });
}

/// The real tokio sleeper, which also says when a sleep has begun.
struct Announced {
    asleep: CancellationToken,
}

impl Sleeper for Announced {
    type Sleep = tokio::time::Sleep;

    fn sleep(&self, delay: Duration) -> Self::Sleep {
        self.asleep.cancel();
        retry_breaker::TokioSleeper.sleep(delay)
    }
}

#[test]
fn e7_cancelling_from_another_task_wakes_a_call_that_sleeps_for_real() {
    run(
        "the real sleep was not interrupted by the token (E7): TODO(8)",
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
                    .call(2, &script)
                    .backoff(hour)
                    .cancel(&token)
                    .sleeper(&sleeper)
                    .run()
                    .await
            });
            // Wait until the call sleeps, or has ended without sleeping.
            while !asleep.is_cancelled() && !call.is_finished() {
                tokio::task::yield_now().await;
            }
            cancel.cancel();
            // A call that listens to its token ends within a few turns of
            // this one-thread runtime; one that does not sleeps on for the
            // hour, and is told so now rather than by the watchdog.
            for _ in 0..1_000 {
                if call.is_finished() {
                    break;
                }
                tokio::task::yield_now().await;
            }
            assert!(
                call.is_finished(),
                "TODO(8): E7: the token was cancelled while the call slept, and it sleeps on: \
                 a sleep must end when the token is cancelled"
            );
            let result = match call.await {
                Ok(result) => result,
                Err(failed) => std::panic::resume_unwind(failed.into_panic()),
            };
            assert_eq!(
                result.ending(),
                "Cancelled",
                "TODO(8): stop sleeping when the token is cancelled; got {result:?}"
            );
            assert_attempts_made(&result, 1);
        },
    );
}

// --- Cancellation at every point of a call (E2, E5, E7) ---

/// What a call must return when its token is cancelled during attempt
/// `at` of `budget`, and that attempt ends with `outcome`.
fn expected_when_cancelled_during(
    at: u32,
    budget: u32,
    outcome: Result<u32, Fault>,
) -> Result<u32, String> {
    match outcome {
        // E7: the task's business; a value that arrives is returned.
        Ok(value) => Ok(value),
        // E5: the last attempt, or not retryable: the original error.
        Err(fault) if at == budget || !retryable(&fault) => Err(format!("Task({at}, {fault})")),
        // A retry would follow, but the token stops it before the sleep (E7).
        Err(_) => Err(format!("Cancelled({at})")),
    }
}

fn shown(result: &Result<u32, ExecuteError<Fault>>) -> Result<u32, String> {
    match result {
        Ok(value) => Ok(*value),
        Err(ExecuteError::Task {
            attempt, source, ..
        }) => Err(format!("Task({attempt}, {source})")),
        Err(ExecuteError::Cancelled { attempts_made, .. }) => {
            Err(format!("Cancelled({attempts_made})"))
        }
        Err(other) => Err(format!("{other:?}")),
    }
}

const OUTCOMES: [Result<u32, Fault>; 3] = [Ok(5), Err(Fault::Timeout), Err(Fault::Declined)];

#[test]
fn e5_e7_a_token_cancelled_during_any_attempt_lets_that_attempt_decide_and_starts_no_sleep() {
    for budget in 1..=3 {
        for at in 1..=budget {
            for outcome in OUTCOMES {
                run(LOOPED, async move {
                    let lab = Lab::new(10, ms(10));
                    // Attempts before `at` time out; attempt `at` ends with `outcome`.
                    let mut script = vec![Err(Fault::Timeout); at as usize - 1];
                    script.push(outcome);
                    let script = Script::new(script);
                    let cancel = CancellationToken::new();
                    let (inside, mut scripted) = (cancel.clone(), script.task());
                    let calls = script.clone();
                    let task = move || {
                        if calls.calls() + 1 == at {
                            inside.cancel(); // the caller gives up during attempt `at`
                        }
                        scripted()
                    };
                    let result = lab.call_with(budget, task).cancel(&cancel).run().await;
                    let case = format!(
                        "budget {budget}, token cancelled during attempt {at}, which ends in {outcome:?}"
                    );
                    assert_eq!(
                        shown(&result),
                        expected_when_cancelled_during(at, budget, outcome),
                        "TODO(8): {case}: the attempt in flight decides (E7); its error is returned \
                         if nothing would be retried (E5); otherwise the token ends the call"
                    );
                    assert_eq!(
                        script.calls(),
                        at,
                        "{case}: no attempt after the cancellation (E2)"
                    );
                    let slept: Vec<Duration> = (1..at).map(linear).collect();
                    assert_eq!(
                        lab.sleeper.delays(),
                        slept,
                        "TODO(8): {case}: the sleeper must not even be asked for a sleep once the \
                         token is cancelled (E7)"
                    );
                    let failures = if outcome.is_ok() { 0 } else { at };
                    assert_eq!(
                        lab.breaker.state(),
                        State::Closed { failures },
                        "{case}: every attempt is reported, the cancelled one included (E4, E7)"
                    );
                });
            }
        }
    }
}

#[test]
fn e7_a_token_cancelled_while_an_attempt_is_still_running_does_not_abandon_it() {
    for budget in 1..=2 {
        for outcome in OUTCOMES {
            let lab = Lab::new(10, ms(10));
            let gate = crate::support::Gate::new();
            let cancel = CancellationToken::new();
            let call = lab.call_with(budget, gate.task()).cancel(&cancel).run();
            let mut call = pin!(call);
            assert!(
                poll_once(call.as_mut()).is_pending(),
                "attempt 1 is in flight"
            );
            cancel.cancel();
            let case = format!(
                "budget {budget}, attempt 1 still running when cancelled, then {outcome:?}"
            );
            assert!(
                poll_once(call.as_mut()).is_pending(),
                "TODO(8): {case}: execute does not abort a running attempt; cancelling it is the \
                 task's business (E7)"
            );
            gate.open(outcome);
            let result = match poll_once(call.as_mut()) {
                Poll::Ready(result) => result,
                Poll::Pending => panic!(
                    "TODO(8): {case}: the call must end once the attempt has, without a sleep (E7)"
                ),
            };
            assert_eq!(
                shown(&result),
                expected_when_cancelled_during(1, budget, outcome),
                "TODO(8): {case} (E5, E7)"
            );
            assert_eq!(gate.started(), 1, "{case}: no further attempt (E2)");
            assert!(
                lab.sleeper.delays().is_empty(),
                "{case}: no sleep asked for (E7)"
            );
            let failures = u32::from(outcome.is_err());
            assert_eq!(
                lab.breaker.state(),
                State::Closed { failures },
                "{case}: the attempt's outcome is reported like any other (E7)"
            );
        }
    }
}

#[test]
fn e2_a_cancelled_token_wins_over_an_open_circuit_and_asks_nothing() {
    run(LOOPED, async {
        let lab = Lab::new(1, ms(10));
        lab.trip();
        lab.advance(ms(3));
        let cancel = cancelled();
        let script = Script::new([]);
        let result = lab.call(3, &script).cancel(&cancel).run().await;
        assert_eq!(
            result.ending(),
            "Cancelled",
            "TODO(8): the token is checked before the breaker is asked (E2); got {result:?}"
        );
        assert_attempts_made(&result, 0);
        assert_eq!(
            lab.breaker.state(),
            State::Open { remaining: ms(7) },
            "TODO(8): the breaker must now be `State::Open {{remaining: ms(7)}}`"
        );
        assert!(
            lab.sleeper.delays().is_empty(),
            "TODO(8): no backoff sleep may be asked for here"
        );
    });
}

// --- What a cancelled call still tells its caller (E2, E7) ---

/// A sleeper that cancels the token during its `nth` sleep (from 1) and
/// never finishes that one; the sleeps before it finish at once.
struct CancelsDuringSleep {
    cancel: CancellationToken,
    nth: usize,
    slept: std::sync::atomic::AtomicUsize,
}

impl CancelsDuringSleep {
    fn new(cancel: &CancellationToken, nth: usize) -> Self {
        CancelsDuringSleep {
            cancel: cancel.clone(),
            nth,
            slept: Default::default(),
        }
    }
}

impl Sleeper for CancelsDuringSleep {
    type Sleep = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

    fn sleep(&self, _: Duration) -> Self::Sleep {
        let sleep = self.slept.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        let (cancel, last) = (self.cancel.clone(), sleep == self.nth);
        Box::pin(async move {
            if last {
                cancel.cancel();
                pending::<()>().await;
            }
        })
    }
}

#[test]
fn e7_a_call_cancelled_during_its_backoff_carries_the_failure_it_was_waiting_to_retry() {
    // The sleep after attempt `nth` is cancelled; attempt n fails with faults[n - 1].
    let faults = [Fault::Timeout, Fault::Unavailable, Fault::Timeout];
    for nth in 1..=2 {
        let lab = Lab::new(5, ms(10));
        let script = Script::new(faults.map(Err));
        let cancel = CancellationToken::new();
        let sleeper = CancelsDuringSleep::new(&cancel, nth);
        let call = lab.call(3, &script).cancel(&cancel).sleeper(&sleeper).run();
        let mut call = pin!(call);
        // The first poll runs the attempts up to the endless sleep, which
        // cancels the token; one more poll must find the call finished.
        let Some(result) = within_two_polls(call.as_mut()) else {
            panic!(
                "TODO(8): the token was cancelled during the sleep after attempt {nth}, but \
                 the call is still asleep (E7)"
            );
        };
        assert_eq!(
            result.ending(),
            "Cancelled",
            "TODO(8): the token was cancelled during the sleep after attempt {nth}, so the call \
             ends cancelled (E7); got {result:?}"
        );
        assert_eq!(
            result.cause(),
            Some(&faults[nth - 1]),
            "TODO(8): a call cancelled during the sleep after attempt {nth} carries that \
             attempt's error, the failure it was waiting to retry, as a refusal does (E7, E10); \
             pass `previous` on to `cancelled`; got {result:?}"
        );
    }
}

#[test]
fn e2_a_call_cancelled_before_its_next_attempt_carries_the_failure_before_it() {
    // The sleep finishes, then the token is found cancelled before attempt 2.
    run(LOOPED, async {
        let lab = Lab::new(5, ms(10));
        let script = Script::new([Err(Fault::Unavailable), Ok(1)]);
        let result = cancelled_in_a_finished_sleep(&lab, &script).await;
        assert_eq!(
            result.attempts_made(),
            Some(1),
            "TODO(8): the token is checked before attempt 2, so one attempt ran (E2); got \
             {result:?}"
        );
        assert_eq!(
            result.cause(),
            Some(&Fault::Unavailable),
            "TODO(8): a call cancelled before its next attempt carries the error of the attempt \
             before it (E2, E10); got {result:?}"
        );
        let error = result.unwrap_err();
        assert_eq!(
            std::error::Error::source(&error).map(ToString::to_string),
            Some("unavailable".to_owned()),
            "TODO(8): the cancellation's `source()` is the last attempt's error (E2, E10)"
        );
    });
}

#[test]
fn e7_a_call_cancelled_after_a_failed_attempt_carries_its_error_without_sleeping() {
    // The caller gives up while attempt 2 is in flight; it fails and would
    // be retried, so the call ends cancelled before the sleep, with its error.
    run(LOOPED, async {
        let lab = Lab::new(5, ms(10));
        let cancel = CancellationToken::new();
        let inside = cancel.clone();
        let script = Script::new([Err(Fault::Timeout), Err(Fault::Unavailable), Ok(1)]);
        let mut scripted = script.task();
        let task = move || {
            if script.calls() == 1 {
                inside.cancel();
            }
            scripted()
        };
        let result = lab.call_with(3, task).cancel(&cancel).run().await;
        assert_eq!(
            result.attempts_made(),
            Some(2),
            "TODO(8): two attempts ran before the token was noticed (E7); got {result:?}"
        );
        assert_eq!(
            result.cause(),
            Some(&Fault::Unavailable),
            "TODO(8): the call ends cancelled with attempt 2's error, not attempt 1's and not \
             none (E7, E10); got {result:?}"
        );
    });
}

#[test]
fn e2_a_cancelled_policy_makes_no_attempt() {
    run(LOOPED, async {
        let lab = Lab::new(10, ms(10));
        let script = Script::new([Ok(1)]);
        let cancel = cancelled();
        let policy = retry_breaker::RetryPolicy::constant(ms(10)).cancel_on(cancel);
        let result = policy.run(&lab.breaker, &lab.sleeper, script.task()).await;
        assert_eq!(
            result.ending(),
            "Cancelled",
            "TODO(8): a policy's cancelled token ends its calls before any attempt (E2); got \
             {result:?}"
        );
        assert_eq!(
            result.attempts_made(),
            Some(0),
            "TODO(8): no attempt ran before the cancellation was noticed (E2); got {result:?}"
        );
        assert_eq!(
            script.calls(),
            0,
            "TODO(8): the policy's task is not called (E2)"
        );
        // The contrast: the same policy with a token nobody cancelled calls.
        let policy =
            retry_breaker::RetryPolicy::constant(ms(10)).cancel_on(CancellationToken::new());
        let result = policy.run(&lab.breaker, &lab.sleeper, script.task()).await;
        assert_eq!(
            result.ending(),
            "Ok",
            "TODO(8): only a cancelled token stops the policy's calls (E2); got {result:?}"
        );
    });
}

mod events;
