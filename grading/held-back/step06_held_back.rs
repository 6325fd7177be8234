//! Held back from the student edition: the retry loop and its budget
//! (TODO(6); rules E1, E4-E6, B4, B7, B8), with attempt budgets,
//! thresholds, cooldowns, the backoff of every attempt, the faults and the
//! attempt at which a call succeeds, gives up or panics drawn from the
//! student's seed
//! (`LAB_STUDENT_SEED`, see `step01_seeded.rs`). The expected results are
//! worked out from the rules by counting; every failure message says what
//! was drawn.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use retry_breaker::{ExecuteError, State};

use crate::step01_seeded::Draw;
use crate::support::{Ending, Fault, Lab, Script, ms, panic_message, retryable, run};

const LOOPED: &str = "the retry loop did not stop after the last attempt: TODO(6)";

/// A drawn delay for each attempt number 1..=`budget`.
pub(crate) fn delays(draw: &mut Draw, budget: u32) -> Vec<Duration> {
    (0..budget).map(|_| draw.duration(ms(1), ms(300))).collect()
}

/// The backoff that `table` describes: `table[n - 1]` after attempt n.
pub(crate) fn backoff(table: &[Duration]) -> impl Fn(u32) -> Duration + Clone + Send + use<> {
    let table = table.to_vec();
    move |attempt| {
        attempt
            .checked_sub(1)
            .and_then(|i| table.get(usize::try_from(i).ok()?).copied())
            .unwrap_or_else(|| {
                panic!(
                    "TODO(6): backoff({attempt}) was asked for, but backoff(n) belongs after a \
                     failed attempt n, numbered from 1, with attempts left (E5)"
                )
            })
    }
}

/// `count` retryable faults, drawn.
pub(crate) fn retryable_faults(draw: &mut Draw, count: u32) -> Vec<Fault> {
    (0..count)
        .map(|_| draw.pick(&[Fault::Timeout, Fault::Unavailable]))
        .collect()
}

/// The error of a call, as "Task(attempt, reason, fault)" and so on.
pub(crate) fn shown(result: &Result<u32, ExecuteError<Fault>>) -> String {
    match result {
        Ok(value) => format!("Ok({value})"),
        Err(ExecuteError::Task {
            attempt,
            reason,
            source,
        }) => format!("Task({attempt}, {reason:?}, {source})"),
        Err(ExecuteError::Rejected {
            attempt,
            rejection,
            source,
        }) => format!("Rejected({attempt}, {rejection:?}, {source:?})"),
        Err(other) => format!("{other:?}"),
    }
}

#[derive(Debug, Clone, Copy)]
enum Before {
    ClosedWithFailures,
    Open,
    ProbeOut,
}

#[test]
fn e1_a_zero_budget_never_calls_the_task_in_any_drawn_state() {
    let mut draw = Draw::new("e1_a_zero_budget_never_calls_the_task_in_any_drawn_state");
    let threshold = draw.count(2, 6);
    let cooldown = draw.duration(ms(1), Duration::from_secs(2));
    let before = draw.pick(&[Before::ClosedWithFailures, Before::Open, Before::ProbeOut]);
    let failures = draw.count(0, threshold - 1);
    let table = delays(&mut draw, 3);
    run(LOOPED, async move {
        let case = format!("threshold {threshold}, cooldown {cooldown:?}, breaker {before:?}");
        let lab = Lab::new(threshold, cooldown);
        let _probe = match before {
            Before::ClosedWithFailures => {
                for _ in 0..failures {
                    lab.breaker.try_acquire().expect("CLOSED").failure();
                }
                None
            }
            Before::Open => {
                lab.trip();
                None
            }
            Before::ProbeOut => {
                lab.trip();
                lab.advance(cooldown);
                Some(lab.probe())
            }
        };
        let state = lab.breaker.state();
        let generation = lab.breaker.generation();
        let script = Script::new([]);
        let result = lab.call(0, &script).backoff(backoff(&table)).run().await;
        assert_eq!(
            result.ending(),
            "NoAttempts",
            "TODO(6): {case}: a budget of 0 is ExecuteError::NoAttempts, got {} (E1)",
            shown(&result)
        );
        assert_eq!(
            script.calls(),
            0,
            "TODO(6): {case}: a budget of 0 calls nothing, sleeps not, and leaves the breaker as \
             it was (E1): the attempts that reached the dependency"
        );
        assert_eq!(
            lab.sleeper.delays(),
            vec![],
            "TODO(6): {case}: a budget of 0 calls nothing, sleeps not, and leaves the breaker as \
             it was (E1): the sleeps asked for"
        );
        assert_eq!(
            lab.breaker.state(),
            state,
            "TODO(6): {case}: a budget of 0 calls nothing, sleeps not, and leaves the breaker as \
             it was (E1): the breaker's state"
        );
        assert_eq!(
            lab.breaker.generation(),
            generation,
            "TODO(6): {case}: a budget of 0 calls nothing, sleeps not, and leaves the breaker as \
             it was (E1): the generation"
        );
        // The contrast: with one attempt to spend, the same call is a real
        // attempt, which the dependency answers or the breaker refuses.
        let one = Script::new([Ok(1)]);
        let result = lab.call(1, &one).run().await;
        assert_ne!(
            result.ending(),
            "NoAttempts",
            "TODO(6): {case}: only a budget of 0 is NoAttempts; a budget of 1 asks the breaker \
             for its attempt (E1), got {}",
            shown(&result)
        );
    });
}

#[test]
fn e5_retryable_failures_then_a_success_at_a_drawn_attempt_return_the_value() {
    let mut draw = Draw::new("e5_retryable_failures_then_a_success_at_a_drawn_attempt");
    let budget = draw.count(1, 8);
    let succeeds_at = draw.count(1, budget);
    let threshold = succeeds_at + draw.count(0, 3);
    let faults = retryable_faults(&mut draw, succeeds_at - 1);
    let value = draw.count(0, 1_000_000);
    let table = delays(&mut draw, budget);
    run(LOOPED, async move {
        let case = format!(
            "budget {budget}, threshold {threshold}, faults {faults:?} then Ok({value}), \
             backoff {table:?}"
        );
        let lab = Lab::new(threshold, ms(100));
        let mut outcomes: Vec<Result<u32, Fault>> = faults.iter().map(|&f| Err(f)).collect();
        outcomes.push(Ok(value));
        let script = Script::new(outcomes);
        let result = lab
            .call(budget, &script)
            .backoff(backoff(&table))
            .run()
            .await;
        assert_eq!(
            shown(&result),
            format!("Ok({value})"),
            "TODO(6): {case}: the success of attempt {succeeds_at} is the call's value (E5)"
        );
        assert_eq!(
            script.calls(),
            succeeds_at,
            "TODO(6): {case}: one attempt per failure, then the success (E5)"
        );
        assert_eq!(
            lab.sleeper.delays(),
            table[..succeeds_at as usize - 1],
            "TODO(6): {case}: no sleep before the first attempt, backoff(n) after each failed \
             attempt n (E5, E6)"
        );
        assert_eq!(
            lab.breaker.state(),
            State::Closed { failures: 0 },
            "TODO(6): {case}: every attempt was reported, the success last (E4)"
        );
    });
}

#[test]
fn e5_a_non_retryable_error_at_a_drawn_attempt_ends_the_call_there() {
    let mut draw = Draw::new("e5_a_non_retryable_error_at_a_drawn_attempt");
    let budget = draw.count(2, 8);
    let declined_at = draw.count(1, budget - 1);
    let threshold = declined_at + draw.count(1, 3);
    let faults = retryable_faults(&mut draw, declined_at - 1);
    let table = delays(&mut draw, budget);
    run(LOOPED, async move {
        let case = format!(
            "budget {budget}, threshold {threshold}, faults {faults:?} then Declined, backoff \
             {table:?}"
        );
        let lab = Lab::new(threshold, ms(100));
        let mut outcomes: Vec<Result<u32, Fault>> = faults.iter().map(|&f| Err(f)).collect();
        outcomes.push(Err(Fault::Declined));
        let script = Script::new(outcomes);
        let result = lab
            .call(budget, &script)
            .backoff(backoff(&table))
            .run()
            .await;
        assert_eq!(
            shown(&result),
            format!("Task({declined_at}, NotRetryable, declined)"),
            "TODO(6): {case}: `retryable` turns the decline of attempt {declined_at} down with \
             attempts left, so the call ends there with that error (E5)"
        );
        assert_eq!(
            script.calls(),
            declined_at,
            "TODO(6): {case}: no attempt and no sleep after the non-retryable error (E5, E6): the attempts that reached the dependency"
        );
        assert_eq!(
            lab.sleeper.delays(),
            table[..declined_at as usize - 1].to_vec(),
            "TODO(6): {case}: no attempt and no sleep after the non-retryable error (E5, E6): the sleeps asked for"
        );
        assert_eq!(
            lab.breaker.state(),
            State::Closed {
                failures: declined_at
            },
            "TODO(6): {case}: every failed attempt was reported (E4)"
        );
    });
}

#[test]
fn e5_e6_a_drawn_budget_spent_on_failures_returns_the_last_error_without_a_sleep_after_it() {
    let mut draw = Draw::new("e5_e6_a_drawn_budget_spent_on_failures");
    let budget = draw.count(1, 8);
    let threshold = budget + draw.count(1, 3);
    let mut faults = retryable_faults(&mut draw, budget);
    // The last attempt's error may be one `retryable` would turn down: on
    // the last attempt it is not asked.
    if draw.chance(1, 2) {
        faults[budget as usize - 1] = Fault::Declined;
    }
    let last = faults[budget as usize - 1];
    let table = delays(&mut draw, budget);
    run(LOOPED, async move {
        let case =
            format!("budget {budget}, threshold {threshold}, faults {faults:?}, backoff {table:?}");
        let lab = Lab::new(threshold, ms(100));
        let script = Script::new(faults.iter().map(|&f| Err(f)));
        let asked = Arc::new(AtomicU32::new(0));
        let counted = Arc::clone(&asked);
        let predicate = move |fault: &Fault| {
            counted.fetch_add(1, Ordering::SeqCst);
            retryable(fault)
        };
        let result = lab
            .call(budget, &script)
            .retrying(predicate)
            .backoff(backoff(&table))
            .run()
            .await;
        assert_eq!(
            shown(&result),
            format!("Task({budget}, NoAttemptsLeft, {last})"),
            "TODO(6): {case}: the last attempt's own error is returned, because no attempts were \
             left (E5)"
        );
        assert_eq!(
            script.calls(),
            budget,
            "TODO(6): {case}: {budget} attempts and a sleep between each two, none after the last \
             (E6): the attempts that reached the dependency"
        );
        assert_eq!(
            lab.sleeper.delays(),
            table[..budget as usize - 1].to_vec(),
            "TODO(6): {case}: {budget} attempts and a sleep between each two, none after the last \
             (E6): the sleeps asked for"
        );
        assert_eq!(
            asked.load(Ordering::SeqCst),
            budget - 1,
            "TODO(6): {case}: `retryable` is asked after each failed attempt with attempts left, \
             and not on the last one (E5)"
        );
        assert_eq!(
            lab.breaker.state(),
            State::Closed { failures: budget },
            "TODO(6): {case}: every attempt was reported (E4)"
        );
    });
}

#[test]
fn e4_b4_a_retry_that_asks_once_the_drawn_cooldown_is_over_is_the_probe() {
    let mut draw = Draw::new("e4_b4_a_retry_that_asks_once_the_drawn_cooldown_is_over");
    let threshold = draw.count(1, 5);
    let budget = threshold + 1;
    let faults = retryable_faults(&mut draw, threshold);
    let table = delays(&mut draw, budget);
    let slept = table[threshold as usize - 1];
    // The cooldown ends during the sleep, or exactly when it does.
    let cooldown = if draw.chance(1, 3) {
        slept
    } else {
        draw.duration(Duration::ZERO, slept)
    };
    let probe = if draw.chance(1, 2) {
        Ok(draw.count(0, 1_000))
    } else {
        Err(draw.pick(&[Fault::Timeout, Fault::Unavailable, Fault::Declined]))
    };
    run(LOOPED, async move {
        let case = format!(
            "threshold {threshold}, cooldown {cooldown:?}, budget {budget}, faults {faults:?}, \
             backoff after attempt {threshold} {slept:?}, then the probe ends {probe:?}"
        );
        let lab = Lab::new(threshold, cooldown);
        let mut outcomes: Vec<Result<u32, Fault>> = faults.iter().map(|&f| Err(f)).collect();
        outcomes.push(probe);
        let script = Script::new(outcomes);
        let result = lab
            .call(budget, &script)
            .backoff(backoff(&table))
            .run()
            .await;
        let (expected, state) = match probe {
            Ok(value) => (format!("Ok({value})"), State::Closed { failures: 0 }),
            Err(fault) => (
                format!("Task({budget}, NoAttemptsLeft, {fault})"),
                State::Open {
                    remaining: cooldown,
                },
            ),
        };
        assert_eq!(
            shown(&result),
            expected,
            "TODO(6): {case}: the retries opened the circuit, and attempt {budget} asks when the \
             cooldown is over (now >= deadline), so it is the probe and its outcome ends the call \
             (E4, E5, B4)"
        );
        assert_eq!(
            script.calls(),
            budget,
            "TODO(6): {case}: every attempt reached the task, with a sleep between each two (E5): the attempts that reached the dependency"
        );
        assert_eq!(
            lab.sleeper.delays(),
            table[..threshold as usize].to_vec(),
            "TODO(6): {case}: every attempt reached the task, with a sleep between each two (E5): the sleeps asked for"
        );
        assert_eq!(
            lab.breaker.state(),
            state,
            "TODO(6): {case}: the probe was reported like any attempt (E4, B5)"
        );
    });
}

#[test]
fn b7_a_task_that_panics_at_a_drawn_attempt_panics_the_caller_and_counts_once() {
    let mut draw = Draw::new("b7_a_task_that_panics_at_a_drawn_attempt");
    let budget = draw.count(1, 6);
    let panics_at = draw.count(1, budget);
    let threshold = panics_at + draw.count(1, 3);
    let faults = retryable_faults(&mut draw, panics_at - 1);
    let table = delays(&mut draw, budget);
    let case = format!(
        "budget {budget}, threshold {threshold}, faults {faults:?}, then attempt {panics_at} \
         panics"
    );
    let lab = Arc::new(Lab::new(threshold, ms(100)));
    let shared = Arc::clone(&lab);
    let script = Script::new(faults.iter().map(|&f| Err(f)));
    let calls = script.clone();
    let caught = catch_unwind(AssertUnwindSafe(|| {
        run(LOOPED, async move {
            let mut scripted = script.task();
            let task = move || {
                if calls.calls() + 1 == panics_at {
                    panic!("payment client exploded at attempt {panics_at}");
                }
                scripted()
            };
            let _ = shared
                .call_with(budget, task)
                .backoff(backoff(&table))
                .run()
                .await;
        })
    }));
    let payload = caught.expect_err("B7: a panic in the task reaches the caller, not an Err");
    assert_eq!(
        panic_message(&*payload),
        format!("payment client exploded at attempt {panics_at}"),
        "TODO(6): {case}: the task's panic reaches the caller unchanged (B7)"
    );
    assert_eq!(
        lab.breaker.state(),
        State::Closed {
            failures: panics_at
        },
        "TODO(6): {case}: the panic counts as a failure, once, like the {} before it (B7, E4)",
        panics_at - 1
    );
    assert_eq!(
        lab.sleeper.delays().len(),
        panics_at as usize - 1,
        "TODO(6): {case}: a panic is not retried (B7)"
    );
}

#[test]
fn b8_e4_the_task_and_the_backoff_read_the_breaker_at_every_drawn_attempt() {
    let mut draw = Draw::new("b8_e4_the_task_and_the_backoff_read_the_breaker");
    let budget = draw.count(2, 8);
    let threshold = budget + draw.count(0, 2);
    let faults = retryable_faults(&mut draw, budget - 1);
    let table = delays(&mut draw, budget);
    run(
        "a lock was held while the task or the backoff ran (B8): reading the breaker from \
         inside deadlocked, TODO(6)",
        async move {
            let case = format!("budget {budget}, threshold {threshold}, faults {faults:?}");
            let lab = Arc::new(Lab::new(threshold, ms(100)));
            let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
            let (inside, log) = (Arc::clone(&lab), Arc::clone(&seen));
            let mut outcomes: Vec<Result<u32, Fault>> = faults.iter().map(|&f| Err(f)).collect();
            outcomes.push(Ok(7));
            let mut scripted = Script::new(outcomes).task();
            let task = move || {
                log.lock().unwrap().push(("task", inside.breaker.state()));
                scripted()
            };
            let (reader, log) = (Arc::clone(&lab), Arc::clone(&seen));
            let inner = backoff(&table);
            let policy = move |attempt: u32| {
                log.lock()
                    .unwrap()
                    .push(("backoff", reader.breaker.state()));
                inner(attempt)
            };
            let result = lab.call_with(budget, task).backoff(policy).run().await;
            assert_eq!(shown(&result), "Ok(7)", "TODO(6): {case} (E5)");
            let mut expected = Vec::new();
            for attempt in 1..=budget {
                expected.push((
                    "task",
                    State::Closed {
                        failures: attempt - 1,
                    },
                ));
                if attempt < budget {
                    expected.push(("backoff", State::Closed { failures: attempt }));
                }
            }
            assert_eq!(
                *seen.lock().unwrap(),
                expected,
                "TODO(6): {case}: no lock is held while the task or the backoff runs (B8), and \
                 each failed attempt is reported before the backoff is asked (E4)"
            );
        },
    );
}
