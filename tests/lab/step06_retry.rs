//! Step 6, the retry loop and its budget: `execute` (TODO(6); rules E1,
//! E4-E6, E8, E9, B7, B8). Its refusals are step 7's.

use std::future::{Future, pending};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use retry_breaker::{
    ExecuteError, GaveUp, ManualClock, ManualSleeper, Rejected, Sleeper, State, backoff,
};
use tokio_util::sync::CancellationToken;

use crate::support::{Ending, Fault, Lab, Script, linear, ms, poll_once, retryable, run};

const LOOPED: &str = "the retry loop did not stop after the last attempt: TODO(6)";

#[test]
fn e1_an_attempt_budget_of_zero_is_an_error_and_never_calls_the_task() {
    run(LOOPED, async {
        let lab = Lab::new(1, ms(10));
        let script = Script::new([]);
        let result = lab.call(0, &script).run().await;
        assert_eq!(
            result.ending(),
            "NoAttempts",
            "TODO(6): a budget of 0 attempts ends the call with `NoAttempts` (E1); got {result:?}"
        );
        assert!(
            result.unwrap_err().to_string().contains("at least 1"),
            "TODO(6): expected `result.unwrap_err().to_string().contains(\"at least 1\")`"
        );
        script.assert_calls(0, "TODO(6)");
        assert_eq!(
            lab.breaker.state(),
            State::Closed { failures: 0 },
            "TODO(6): the breaker must now be `State::Closed {{failures: 0}}`"
        );
        // The contrast: only 0 is no budget; 1 is one real attempt.
        let one = Script::new([Ok(4)]);
        let result = lab.call(1, &one).run().await;
        assert_eq!(
            result.ok(),
            Some(4),
            "TODO(6): a budget of 1 makes its one attempt and returns its value (E1)"
        );
        one.assert_calls(1, "TODO(6)");
    });
}

#[test]
fn e5_e6_a_first_time_success_returns_the_value_without_sleeping() {
    run(LOOPED, async {
        let lab = Lab::new(1, ms(10));
        let script = Script::new([Ok(7)]);
        let result = lab.call(3, &script).run().await;
        assert_eq!(result.unwrap(), 7, "TODO(6): the call must return Ok(7)");
        script.assert_calls(1, "TODO(6)");
        assert!(
            lab.sleeper.delays().is_empty(),
            "E6: no sleep before the first attempt"
        );
    });
}

#[test]
fn e5_a_retryable_failure_is_retried_after_its_backoff() {
    run(LOOPED, async {
        let lab = Lab::new(5, ms(10));
        let script = Script::new([Err(Fault::Timeout), Err(Fault::Unavailable), Ok(3)]);
        let result = lab.call(3, &script).run().await;
        assert_eq!(result.unwrap(), 3, "TODO(6): the call must return Ok(3)");
        script.assert_calls(3, "TODO(6)");
        assert_eq!(
            lab.sleeper.delays(),
            [ms(10), ms(20)],
            "backoff(n) after attempt n fails"
        );
        assert_eq!(
            lab.breaker.state(),
            State::Closed { failures: 0 },
            "E4: the success counted"
        );
    });
}

#[test]
fn e5_a_non_retryable_error_is_returned_at_once_with_the_original_as_source() {
    run(LOOPED, async {
        let lab = Lab::new(5, ms(10));
        let script = Script::new([Err(Fault::Declined)]);
        let result = lab.call(3, &script).run().await;
        let error = result.unwrap_err();
        assert_eq!(
            error.ending(),
            "Task",
            "TODO(6): a non-retryable error ends the call with the task's error (E5); got {error:?}"
        );
        assert_eq!(
            error.attempt(),
            Some(1),
            "TODO(6): the non-retryable error of attempt 1 ends the call at once (E5); got {error:?}"
        );
        assert_eq!(
            error.cause(),
            Some(&Fault::Declined),
            "TODO(6): the call returns the original error (E5); got {error:?}"
        );
        let source = std::error::Error::source(&error).expect("the task's error is the source");
        assert_eq!(
            source.to_string(),
            "declined",
            "TODO(6): expected `source.to_string()` to equal `\"declined\"`"
        );
        assert_eq!(
            error.task_error(),
            Some(&Fault::Declined),
            "TODO(6): expected `error.task_error()` to equal `Some(&Fault::Declined)`"
        );
        script.assert_calls(1, "TODO(6)");
        assert!(
            lab.sleeper.delays().is_empty(),
            "no sleep when nothing will be retried"
        );
        assert_eq!(
            lab.breaker.state(),
            State::Closed { failures: 1 },
            "E4: still a failure"
        );
    });
}

#[test]
fn e5_a_non_retryable_error_after_a_retry_ends_the_call_there() {
    // The predicate is asked after every failed attempt, not only the first:
    // a timeout is retried, the decline that follows is not.
    run(LOOPED, async {
        let lab = Lab::new(5, ms(10));
        let script = Script::new([Err(Fault::Timeout), Err(Fault::Declined), Ok(3)]);
        let result = lab.call(3, &script).run().await;
        assert_eq!(
            result.ending(),
            "Task",
            "TODO(6): a non-retryable error ends the call with the task's error (E5); got \
             {result:?}"
        );
        assert_eq!(
            result.attempt(),
            Some(2),
            "TODO(6): attempt 2 failed with an error `retryable` turns down, so the call ends \
             there, although a third attempt was allowed (E5); got {result:?}"
        );
        assert_eq!(
            result.cause(),
            Some(&Fault::Declined),
            "TODO(6): the call ends with attempt 2's error, the one `retryable` turned down \
             (E5); got {result:?}"
        );
        assert_eq!(
            script.calls(),
            2,
            "TODO(6): no attempt after a non-retryable error, on any attempt (E5)"
        );
        assert_eq!(
            lab.sleeper.delays(),
            [ms(10)],
            "TODO(6): one sleep, after the retryable timeout, and none after the decline (E5, E6)"
        );
        assert_eq!(
            lab.breaker.state(),
            State::Closed { failures: 2 },
            "TODO(6): both failed attempts were reported (E4)"
        );
    });
}

#[test]
fn e5_the_error_says_whether_the_predicate_or_the_budget_ended_the_call() {
    // (budget, outcomes, the attempt that ends the call, why)
    let cases = [
        (3, vec![Err(Fault::Declined)], 1, GaveUp::NotRetryable),
        (
            4,
            vec![Err(Fault::Timeout), Err(Fault::Declined)],
            2,
            GaveUp::NotRetryable,
        ),
        (
            2,
            vec![Err(Fault::Timeout), Err(Fault::Unavailable)],
            2,
            GaveUp::NoAttemptsLeft,
        ),
        (1, vec![Err(Fault::Timeout)], 1, GaveUp::NoAttemptsLeft),
        // On the last attempt the budget ends the call, whatever the
        // predicate would have said: `NotRetryable` means attempts were left.
        (1, vec![Err(Fault::Declined)], 1, GaveUp::NoAttemptsLeft),
        (
            2,
            vec![Err(Fault::Timeout), Err(Fault::Declined)],
            2,
            GaveUp::NoAttemptsLeft,
        ),
    ];
    for (budget, outcomes, last, why) in cases {
        run(LOOPED, async move {
            let lab = Lab::new(5, ms(10));
            let script = Script::new(outcomes);
            let result = lab.call(budget, &script).run().await;
            assert_eq!(
                result.ending(),
                "Task",
                "TODO(6): budget {budget}, the call ends with the task's error of attempt {last} \
                 (E5); got {result:?}"
            );
            assert_eq!(
                result.attempt(),
                Some(last),
                "TODO(6): budget {budget}, the call ends after attempt {last} (E5); got {result:?}"
            );
            assert_eq!(
                result.reason(),
                Some(why),
                "TODO(6): budget {budget}, the call ends after attempt {last} with reason {why:?}: \
                 `NotRetryable` when the predicate turned the error down with attempts left, \
                 `NoAttemptsLeft` when the budget was spent, even if the predicate would have \
                 turned it down too (`GaveUp::after`) (E5); got {result:?}"
            );
        });
    }
}

#[test]
fn e6_the_last_failure_is_returned_without_a_sleep_after_it() {
    run(LOOPED, async {
        let lab = Lab::new(5, ms(10));
        let script = Script::new([
            Err(Fault::Timeout),
            Err(Fault::Timeout),
            Err(Fault::Unavailable),
        ]);
        let result = lab.call(3, &script).run().await;
        let error = result.unwrap_err();
        assert_eq!(
            error.ending(),
            "Task",
            "TODO(6): the last failure ends the call with the task's error (E5); got {error:?}"
        );
        assert_eq!(
            error.attempt(),
            Some(3),
            "TODO(6): the call ends with attempt 3, the last of the budget (E5); got {error:?}"
        );
        assert_eq!(
            error.cause(),
            Some(&Fault::Unavailable),
            "TODO(6): the call returns the last attempt's error (E5); got {error:?}"
        );
        assert_eq!(
            error.into_task_error(),
            Some(Fault::Unavailable),
            "TODO(6): expected `error.into_task_error()` to equal `Some(Fault::Unavailable)`"
        );
        script.assert_calls(3, "TODO(6)");
        assert_eq!(
            lab.sleeper.delays(),
            [ms(10), ms(20)],
            "E6: no sleep after the last attempt"
        );
    });
}

#[test]
fn e6_a_single_attempt_budget_never_sleeps() {
    run(LOOPED, async {
        let lab = Lab::new(5, ms(10));
        let script = Script::new([Err(Fault::Timeout)]);
        let result = lab.call(1, &script).run().await;
        assert_eq!(
            result.ending(),
            "Task",
            "TODO(6): the only attempt's failure ends the call with the task's error (E5); got {result:?}"
        );
        assert_eq!(
            result.attempt(),
            Some(1),
            "TODO(6): a budget of 1 ends with attempt 1 (E5, E6); got {result:?}"
        );
        assert!(
            lab.sleeper.delays().is_empty(),
            "TODO(6): no backoff sleep may be asked for here"
        );
    });
}

#[test]
fn e4_every_attempt_is_reported_so_retries_can_open_the_circuit() {
    run(LOOPED, async {
        // Threshold 2 and a budget of 2: the call's own retry is the
        // failure that opens the circuit.
        let lab = Lab::new(2, ms(100));
        let script = Script::new([Err(Fault::Timeout), Err(Fault::Unavailable)]);
        let error = lab.call(2, &script).run().await.unwrap_err();
        assert_eq!(
            (error.ending(), error.attempt(), error.reason()),
            ("Task", Some(2), Some(GaveUp::NoAttemptsLeft)),
            "TODO(6): the budget of 2 ends the call with attempt 2's error (E5); got {error:?}"
        );
        assert_eq!(
            error.cause(),
            Some(&Fault::Unavailable),
            "TODO(6): the call returns the last attempt's error (E5); got {error:?}"
        );
        assert_eq!(
            lab.sleeper.delays(),
            [ms(10)],
            "TODO(6): one backoff sleep, between the two attempts (E6)"
        );
        assert_eq!(
            lab.breaker.state(),
            State::Open { remaining: ms(100) },
            "TODO(6): both attempts were reported, so the retry opened the circuit (E4)"
        );
    });
}

#[test]
fn e4_a_success_after_retries_resets_the_count() {
    run(LOOPED, async {
        let lab = Lab::new(3, ms(10));
        let script = Script::new([Err(Fault::Timeout), Err(Fault::Timeout), Ok(1)]);
        lab.call(3, &script).run().await.unwrap();
        assert_eq!(
            lab.breaker.state(),
            State::Closed { failures: 0 },
            "TODO(6): the breaker must now be `State::Closed {{failures: 0}}`"
        );
    });
}

#[test]
fn e8_huge_backoffs_saturate_instead_of_panicking() {
    run(LOOPED, async {
        let lab = Lab::new(10, ms(10));
        let script = Script::new([Err(Fault::Timeout), Err(Fault::Timeout), Ok(1)]);
        let huge = backoff::exponential(Duration::MAX, Duration::MAX);
        let result = lab.call(3, &script).backoff(huge).run().await;
        assert_eq!(result.unwrap(), 1, "TODO(6): the call must return Ok(1)");
        assert_eq!(
            lab.sleeper.delays(),
            [Duration::MAX, Duration::MAX],
            "TODO(6): the backoff sleeps asked for must be exactly [Duration::MAX, Duration::MAX]"
        );
    });
}

/// A control: a loop with no hidden state or randomness passes it whatever
/// else it does; it catches one that has them.
#[test]
fn e9_the_same_inputs_give_the_same_behaviour() {
    fn scenario() -> (Result<u32, String>, Vec<Duration>, State) {
        run(LOOPED, async {
            let lab = Lab::new(2, ms(50));
            let script = Script::new([Err(Fault::Timeout), Ok(5)]);
            let jitter = backoff::jittered_with_seed(backoff::exponential(ms(10), ms(100)), 42);
            let result = lab
                .call(3, &script)
                .backoff(jitter)
                .run()
                .await
                .map_err(|e| e.to_string());
            (result, lab.sleeper.delays(), lab.breaker.state())
        })
    }
    assert_eq!(
        scenario(),
        scenario(),
        "TODO(6): expected `scenario()` to equal `scenario()`"
    );
}

// --- Hostile tasks, predicates and callers (B7, B8) ---

fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("<not a string>")
}

#[test]
fn b7_a_panicking_task_panics_the_caller_unchanged_and_counts_as_a_failure() {
    let lab = Arc::new(Lab::new(2, ms(10)));
    let shared = Arc::clone(&lab);
    let caught = catch_unwind(AssertUnwindSafe(|| {
        run(LOOPED, async move {
            let task = || async { panic!("payment client exploded") };
            let _: Result<(), ExecuteError<Fault>> = shared.call_with(3, task).run().await;
        })
    }));
    let payload =
        caught.expect_err("B7: a panic in the task must reach the caller, not become an Err");
    assert_eq!(
        panic_message(&*payload),
        "payment client exploded",
        "TODO(6): expected `panic_message(&*payload)` to equal `\"payment client exploded\"`"
    );
    assert_eq!(
        lab.breaker.state(),
        State::Closed { failures: 1 },
        "B7: the panic counts as a failure"
    );
    assert!(lab.sleeper.delays().is_empty(), "a panic is not retried");
}

#[test]
fn b7_a_task_that_panics_before_returning_its_future_counts_too() {
    let lab = Arc::new(Lab::new(1, ms(10)));
    let shared = Arc::clone(&lab);
    let caught = catch_unwind(AssertUnwindSafe(|| {
        run(LOOPED, async move {
            let task =
                || -> std::future::Ready<Result<(), Fault>> { panic!("could not even start") };
            let _ = shared.call_with(3, task).run().await;
        })
    }));
    assert_eq!(
        panic_message(&*caught.unwrap_err()),
        "could not even start",
        "TODO(6): expected `panic_message(&*caught.unwrap_err())` to equal `\"could not even start\"`"
    );
    assert_eq!(
        lab.breaker.state(),
        State::Open { remaining: ms(10) },
        "TODO(6): the breaker must now be `State::Open {{remaining: ms(10)}}`"
    );
}

#[test]
fn b7_a_panicking_probe_does_not_wedge_the_breaker() {
    let lab = Arc::new(Lab::cooled(1, ms(10)));
    let shared = Arc::clone(&lab);
    let caught = catch_unwind(AssertUnwindSafe(|| {
        run(LOOPED, async move {
            let task = || async { panic!("probe exploded") };
            let _: Result<(), _> = shared.call_with(1, task).run().await;
        })
    }));
    assert!(caught.is_err(), "TODO(6): the panic must reach the caller");
    assert_eq!(
        lab.breaker.state(),
        State::Open { remaining: ms(10) },
        "the failed probe reopened it"
    );
    lab.advance(ms(10));
    lab.breaker
        .try_acquire()
        .expect("a later probe is admitted")
        .success();
}

#[test]
fn b7_a_panicking_predicate_or_backoff_propagates_after_the_failure_was_counted() {
    for culprit in ["retryable", "backoff"] {
        let lab = Arc::new(Lab::new(3, ms(10)));
        let shared = Arc::clone(&lab);
        let caught = catch_unwind(AssertUnwindSafe(|| {
            run(LOOPED, async move {
                let script = Script::new([Err(Fault::Timeout)]);
                let predicate = move |_: &Fault| -> bool {
                    if culprit == "retryable" {
                        panic!("predicate exploded")
                    }
                    true
                };
                let policy = move |_: u32| -> Duration { panic!("backoff exploded") };
                let _ = shared
                    .call(2, &script)
                    .retrying(predicate)
                    .backoff(policy)
                    .run()
                    .await;
            })
        }));
        let payload = caught.expect_err("the panic reaches the caller");
        assert_eq!(
            panic_message(&*payload),
            format!(
                "{} exploded",
                if culprit == "retryable" {
                    "predicate"
                } else {
                    "backoff"
                }
            ),
            "TODO(6): expected `panic_message(&*payload)` to equal `format!( \"{{}} exploded\", if culprit == \"retryable\" {{\"predicate\"}} else {{\"backoff\"}} )`"
        );
        assert_eq!(
            lab.breaker.state(),
            State::Closed { failures: 1 },
            "{culprit}: E4, the attempt was reported first"
        );
        lab.breaker
            .try_acquire()
            .expect("nothing is held")
            .success();
    }
}

#[test]
fn b7_dropping_the_call_mid_attempt_gives_the_probe_slot_back() {
    let lab = Lab::cooled(1, ms(10));
    {
        let cancel = CancellationToken::new();
        let call = lab.breaker.execute(
            3,
            pending::<Result<(), Fault>>,
            retryable,
            linear,
            &cancel,
            &lab.sleeper,
        );
        let mut call = pin!(call);
        assert!(
            poll_once(call.as_mut()).is_pending(),
            "TODO(6): the call must still be waiting at this point"
        );
        assert_eq!(
            lab.breaker.state(),
            State::HalfOpen {
                probe_in_flight: true
            },
            "TODO(6): the breaker must now be `State::HalfOpen {{probe_in_flight: true}}`"
        );
    } // The caller gives up, e.g. a timeout around execute fired.
    assert_eq!(
        lab.breaker.state(),
        State::HalfOpen {
            probe_in_flight: false
        },
        "B7: nothing was observed, so no verdict, but the slot is free again"
    );
    lab.breaker
        .try_acquire()
        .expect("the next attempt probes")
        .success();
}

/// A sleep that never ends, so a test can stop a call in the middle of it.
struct Endless;

impl Sleeper for Endless {
    type Sleep = std::future::Pending<()>;

    fn sleep(&self, _: Duration) -> Self::Sleep {
        pending()
    }
}

#[test]
fn b7_dropping_the_call_mid_sleep_keeps_the_failures_already_counted() {
    let lab = Lab::new(3, ms(10));
    let script = Script::new([Err(Fault::Timeout)]);
    {
        let cancel = CancellationToken::new();
        let call = lab.call(3, &script).cancel(&cancel).sleeper(&Endless).run();
        let mut call = pin!(call);
        assert!(
            poll_once(call.as_mut()).is_pending(),
            "asleep after the first failure"
        );
    }
    script.assert_calls(1, "TODO(6)");
    assert_eq!(
        lab.breaker.state(),
        State::Closed { failures: 1 },
        "TODO(6): the breaker must now be `State::Closed {{failures: 1}}`"
    );
    lab.breaker
        .try_acquire()
        .expect("nothing is held")
        .success();
}

#[test]
fn b8_no_lock_is_held_while_the_task_runs_or_the_call_sleeps() {
    run(
        "a lock was held while the task or the sleep ran (B8): the task deadlocked on it",
        async {
            let lab = Arc::new(Lab::new(2, ms(10)));
            let inside = Arc::clone(&lab);
            let mut attempt = 0;
            let task = move || {
                attempt += 1;
                // Re-entering the breaker from inside the attempt must not block.
                let state = inside.breaker.state();
                let permit = inside
                    .breaker
                    .try_acquire()
                    .expect("CLOSED admits a nested attempt");
                permit.success();
                let outcome = if attempt == 1 {
                    Err(Fault::Timeout)
                } else {
                    Ok(state)
                };
                async move { outcome }
            };
            let reader = Arc::clone(&lab);
            let policy = move |_: u32| {
                let _ = reader.breaker.state();
                ms(1)
            };
            let state = lab.call_with(2, task).backoff(policy).run().await.unwrap();
            assert_eq!(
                state,
                State::Closed { failures: 1 },
                "read inside attempt 2, after attempt 1 failed"
            );
        },
    );
}

#[test]
fn e5_execute_works_on_a_shared_breaker_from_a_spawned_task() {
    run(LOOPED, async {
        let lab = Arc::new(Lab::new(2, ms(10)));
        let shared = Arc::clone(&lab);
        let sleeper = lab.sleeper.clone();
        let handle = tokio::spawn(async move {
            let script = Script::new([Err(Fault::Timeout), Ok(9)]);
            shared.call(2, &script).sleeper(&sleeper).run().await
        });
        assert_eq!(
            handle.await.unwrap().unwrap(),
            9,
            "TODO(6): expected `handle.await.unwrap().unwrap()` to equal `9`"
        );
        assert_eq!(
            lab.breaker.state(),
            State::Closed { failures: 0 },
            "TODO(6): the breaker must now be `State::Closed {{failures: 0}}`"
        );
    });
}

// --- Whose panic is it? (B7, B11) ---

#[test]
fn b7_a_call_dropped_while_a_sibling_panics_records_no_verdict() {
    for in_probe in [false, true] {
        let lab = Lab::new(1, ms(10));
        if in_probe {
            lab.trip();
            lab.advance(ms(10));
        }
        let before = lab.breaker.state();
        let caught = catch_unwind(AssertUnwindSafe(|| {
            // Under `join!`, two futures share one task: this call's attempt
            // is in flight when the other future panics, and the panic drops
            // both.
            let cancel = CancellationToken::new();
            let call = lab.breaker.execute(
                3,
                pending::<Result<(), Fault>>,
                retryable,
                linear,
                &cancel,
                &lab.sleeper,
            );
            let mut call = pin!(call);
            assert!(
                poll_once(call.as_mut()).is_pending(),
                "TODO(6): the call must still be waiting at this point"
            );
            panic!("the sibling future's own bug");
        }));
        assert!(caught.is_err(), "TODO(6): the panic must reach the caller");
        let expected = if in_probe {
            State::HalfOpen {
                probe_in_flight: false,
            }
        } else {
            before
        };
        assert_eq!(
            lab.breaker.state(),
            expected,
            "B7: only the task's own panic is the dependency's fault; a call dropped by someone \
             else's panic observed nothing, so it records no verdict (and a probe gives its \
             slot back). execute's attempt must not leave this to the permit's drop guard, \
             which blames any panic."
        );
    }
}

#[test]
fn b7_a_task_panic_caught_by_the_caller_counts_once_even_if_the_call_is_dropped_later() {
    // Some executors catch a panic at the poll and drop the future later,
    // when nothing is unwinding any more: a drop guard alone would then see
    // an ordinary drop and record nothing.
    let lab = Lab::new(2, ms(10));
    let cancel = CancellationToken::new();
    // Boxed, so that the test owns the future and decides when it is dropped.
    let mut call = Box::pin(
        lab.call_with(3, || async { panic!("the dependency client blew up") })
            .cancel(&cancel)
            .run(),
    );
    let caught = catch_unwind(AssertUnwindSafe(|| {
        let _: std::task::Poll<Result<(), _>> = poll_once(call.as_mut());
    }));
    assert!(caught.is_err(), "B7: the panic reaches the caller");
    assert_eq!(
        lab.breaker.state(),
        State::Closed { failures: 1 },
        "B7: the task's panic is counted where it happens, at the poll"
    );
    drop(call);
    assert_eq!(
        lab.breaker.state(),
        State::Closed { failures: 1 },
        "B7: and counted once"
    );
}

#[test]
fn b11_a_hook_that_panics_when_a_calls_probe_is_admitted_never_calls_the_task() {
    let hooked = crate::support::Hooked::new(1, ms(10), |_, transition| {
        if transition.to == retry_breaker::Phase::HalfOpen {
            panic!("the hook exploded");
        }
    });
    hooked.trip();
    hooked.clock.advance(ms(10));
    let script = hooked_call(&hooked, []);
    assert_eq!(script.calls(), 0, "B11: the task is never called");
    assert_eq!(
        hooked.breaker.state(),
        State::HalfOpen {
            probe_in_flight: false
        },
        "B11: the probe slot goes back with no verdict"
    );
}

#[test]
fn b11_a_hook_that_panics_after_an_attempt_is_reported_panics_the_caller_with_the_outcome_counted()
{
    let hooked = crate::support::Hooked::new(1, ms(10), |_, transition| {
        if transition.to == retry_breaker::Phase::Open {
            panic!("the hook exploded");
        }
    });
    let script = hooked_call(&hooked, [Err(Fault::Timeout)]);
    script.assert_calls(1, "TODO(6)");
    assert_eq!(
        hooked.breaker.state(),
        State::Open { remaining: ms(10) },
        "B11: the failure stays counted"
    );
}

/// Run by `b11_…_task_panic_wins`, in a process of its own.
#[test]
#[ignore = "a child process of b11_a_task_panic_and_a_hook_panic_together_the_task_panic_wins"]
fn child_b11_task_and_hook_both_panic() {
    if !crate::support::is_child() {
        return;
    }
    let hooked = crate::support::Hooked::new(1, ms(10), |_, transition| {
        if transition.to == retry_breaker::Phase::Open {
            panic!("the hook exploded");
        }
    });
    let sleeper = ManualSleeper::new(hooked.clock.clone());
    let caught = catch_unwind(AssertUnwindSafe(|| {
        run(LOOPED, {
            let breaker = Arc::clone(&hooked.breaker);
            async move {
                let _: Result<(), _> = breaker
                    .execute(
                        3,
                        || async { panic!("the dependency client blew up") },
                        retryable,
                        linear,
                        &CancellationToken::new(),
                        &sleeper,
                    )
                    .await;
            }
        })
    }));
    let payload = caught.expect_err("the panic reaches the caller");
    assert_eq!(
        crate::support::panic_message(&*payload),
        "the dependency client blew up",
        "B11: the task's panic reaches the caller unchanged; the hook's panic while reporting \
         it is dropped"
    );
    assert_eq!(
        hooked.breaker.state(),
        State::Open { remaining: ms(10) },
        "B7: the task's panic counted as a failure"
    );
}

#[test]
fn b11_a_task_panic_and_a_hook_panic_together_the_task_panic_wins() {
    crate::support::run_child("step06_retry::child_b11_task_and_hook_both_panic");
}

#[test]
fn e5_a_failure_that_ends_the_call_is_returned_even_if_the_token_was_cancelled_during_it() {
    // Cancellation stops what has not started; the attempt that ran is the
    // answer (E5, E7). The other cases are step 8's.
    for (budget, fault) in [(1, Fault::Timeout), (3, Fault::Declined)] {
        run(LOOPED, async move {
            let lab = Lab::new(5, ms(10));
            let cancel = CancellationToken::new();
            let inside = cancel.clone();
            let mut scripted = Script::new([Err(fault)]).task();
            let task = move || {
                inside.cancel();
                scripted()
            };
            let result = lab.call_with(budget, task).cancel(&cancel).run().await;
            assert_eq!(
                result.ending(),
                "Task",
                "TODO(6): budget {budget}, {fault} while the token was cancelled: nothing would be \
                 retried, so the call ends with the task's error, not a cancellation (E5); got \
                 {result:?}"
            );
            assert_eq!(
                result.attempt(),
                Some(1),
                "TODO(6): budget {budget}, {fault} while the token was cancelled: nothing would be \
                 retried, so the call ends with attempt 1 (E5); got {result:?}"
            );
            assert_eq!(
                result.cause(),
                Some(&fault),
                "TODO(6): budget {budget}, {fault} while the token was cancelled: nothing would be \
                 retried, so the call returns the attempt's own error (E5); got {result:?}"
            );
        });
    }
}

// --- A probe that never finishes (B7) ---

/// `attempt`, unless `clock` reaches `limit` from now first: then a timeout.
/// The deadline inside the task that LAB.md recommends, on the manual clock.
fn within<F>(
    clock: &ManualClock,
    limit: Duration,
    attempt: F,
) -> impl Future<Output = Result<(), Fault>> + use<F>
where
    F: Future<Output = Result<(), Fault>>,
{
    use retry_breaker::Clock;
    let clock = clock.clone();
    let deadline = clock.now().saturating_add(limit);
    let mut attempt = Box::pin(attempt);
    std::future::poll_fn(move |cx| {
        if let Poll::Ready(outcome) = attempt.as_mut().poll(cx) {
            return Poll::Ready(outcome);
        }
        if clock.now() >= deadline {
            return Poll::Ready(Err(Fault::Timeout));
        }
        Poll::Pending
    })
}

#[test]
fn b7_a_probe_that_never_finishes_holds_half_open_and_a_deadline_inside_the_task_ends_it() {
    for with_deadline in [false, true] {
        let lab = Lab::cooled(1, ms(10));
        let cancel = CancellationToken::new();
        let clock = lab.clock.clone();
        let hangs = move || {
            let attempt = pending::<Result<(), Fault>>();
            let limit = if with_deadline { ms(50) } else { Duration::MAX };
            within(&clock, limit, attempt)
        };
        let call = lab.call_with(1, hangs).cancel(&cancel).run();
        let mut call = pin!(call);
        assert!(poll_once(call.as_mut()).is_pending(), "the probe is out");
        lab.advance(Duration::from_secs(3600));
        let after_an_hour = poll_once(call.as_mut());
        if with_deadline {
            assert!(
                matches!(after_an_hour, Poll::Ready(Err(ExecuteError::Task { .. }))),
                "TODO(6): the deadline inside the task turned the hang into an observed failure"
            );
            assert_eq!(
                lab.breaker.state(),
                State::Open { remaining: ms(10) },
                "TODO(6): B7: the timed-out probe counts as a failure and reopens the circuit, so \
                 a later probe can find out whether the dependency is back"
            );
        } else {
            assert!(
                after_an_hour.is_pending(),
                "nothing ends a hang but a deadline"
            );
            assert_eq!(
                lab.breaker.state(),
                State::HalfOpen {
                    probe_in_flight: true
                },
                "B7: a probe whose task never finishes holds HALF-OPEN for as long as it hangs"
            );
            assert!(
                matches!(lab.breaker.try_acquire(), Err(Rejected::ProbeInFlight)),
                "TODO(6): every other attempt is refused while the hung probe is out (B5)"
            );
        }
    }
}

/// Runs one call of up to three attempts through `hooked`'s breaker,
/// expecting the transition hook's panic ("the hook exploded") to reach
/// the caller (B11). Returns the script, to count the attempts.
fn hooked_call(
    hooked: &crate::support::Hooked,
    outcomes: impl IntoIterator<Item = Result<u32, Fault>>,
) -> Script {
    let sleeper = ManualSleeper::new(hooked.clock.clone());
    let script = Script::new(outcomes);
    let caught = catch_unwind(AssertUnwindSafe(|| {
        run(LOOPED, {
            let breaker = Arc::clone(&hooked.breaker);
            let task = script.task();
            async move {
                let _ = breaker
                    .execute(
                        3,
                        task,
                        retryable,
                        linear,
                        &CancellationToken::new(),
                        &sleeper,
                    )
                    .await;
            }
        })
    }));
    let payload = caught.expect_err("B11: the hook's panic reaches the caller of execute");
    assert_eq!(
        crate::support::panic_message(&*payload),
        "the hook exploded",
        "TODO(6): the hook's own panic, unchanged, reaches the caller of execute (B11)"
    );
    script
}

mod budget;
mod errors;
mod events;
mod give_up;
mod policy;
mod spawn;
mod time_sources;
mod timeouts;
