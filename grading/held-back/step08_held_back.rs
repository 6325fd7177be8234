//! Held back from the student edition: cancellation (TODO(8); rules E2,
//! E5, E7), with budgets, backoffs, faults, the state the breaker is in and
//! the attempt or sleep during which the token is cancelled drawn from the
//! student's seed (`LAB_STUDENT_SEED`, see `step01_seeded.rs`). Every test
//! includes a case in which a call that ignored its token would go on, and
//! every failure message says what was drawn.

use std::future::{Future, pending};
use std::pin::pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::Poll;
use std::time::Duration;

use retry_breaker::{ExecuteError, ManualSleeper, Sleeper, State};
use tokio_util::sync::CancellationToken;

use crate::step01_seeded::Draw;
use crate::support::{Ending, Fault, Gate, Lab, Script, ms, poll_once, retryable, run};

const LOOPED: &str = "the call did not notice its cancelled token: TODO(8)";

/// A drawn delay for each attempt number 1..=`budget`.
fn delays(draw: &mut Draw, budget: u32) -> Vec<Duration> {
    (0..budget).map(|_| draw.duration(ms(1), ms(300))).collect()
}

/// The backoff that `table` describes: `table[n - 1]` after attempt n.
fn backoff(table: &[Duration]) -> impl Fn(u32) -> Duration + Clone + Send + use<> {
    let table = table.to_vec();
    move |attempt| {
        attempt
            .checked_sub(1)
            .and_then(|i| table.get(usize::try_from(i).ok()?).copied())
            .unwrap_or_else(|| panic!("TODO(6): backoff({attempt}) asked for beyond the budget"))
    }
}

/// A call's result, as "Task(attempt, fault)", "Cancelled(attempts)" and so on.
fn shown(result: &Result<u32, ExecuteError<Fault>>) -> String {
    match result {
        Ok(value) => format!("Ok({value})"),
        Err(ExecuteError::Task {
            attempt, source, ..
        }) => format!("Task({attempt}, {source})"),
        Err(ExecuteError::Cancelled { attempts_made, .. }) => format!("Cancelled({attempts_made})"),
        Err(ExecuteError::Rejected { attempt, .. }) => format!("Rejected({attempt})"),
        Err(other) => format!("{other:?}"),
    }
}

/// The breaker's manual sleeper, which cancels the token during sleep
/// number `at`: that sleep then ends (`finishes`) or never does.
struct CancelsDuringSleep {
    inner: ManualSleeper,
    cancel: CancellationToken,
    at: u32,
    finishes: bool,
    asked: AtomicU32,
}

impl Sleeper for CancelsDuringSleep {
    type Sleep = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

    fn sleep(&self, delay: Duration) -> Self::Sleep {
        let number = self.asked.fetch_add(1, Ordering::SeqCst) + 1;
        let slept = self.inner.sleep(delay);
        let cancel = (number == self.at).then(|| self.cancel.clone());
        let finishes = self.finishes;
        Box::pin(async move {
            slept.await;
            if let Some(cancel) = cancel {
                cancel.cancel();
                if !finishes {
                    pending::<()>().await;
                }
            }
        })
    }
}

#[derive(Debug, Clone, Copy)]
enum Before {
    ClosedWithFailures,
    OpenBeforeTheDeadline,
    OpenAtTheDeadline,
    ProbeOut,
}

#[test]
fn e2_a_token_cancelled_before_the_call_asks_nothing_in_any_drawn_state() {
    let mut draw = Draw::new("e2_a_token_cancelled_before_the_call_asks_nothing");
    let threshold = draw.count(2, 6);
    let cooldown = draw.duration(ms(2), Duration::from_secs(2));
    let before = draw.pick(&[
        Before::ClosedWithFailures,
        Before::OpenBeforeTheDeadline,
        Before::OpenAtTheDeadline,
        Before::ProbeOut,
    ]);
    let failures = draw.count(0, threshold - 1);
    let budget = draw.count(1, 6);
    let table = delays(&mut draw, budget);
    run(LOOPED, async move {
        let case = format!(
            "threshold {threshold}, cooldown {cooldown:?}, breaker {before:?}, budget {budget}, \
             token cancelled before the call"
        );
        let lab = Lab::new(threshold, cooldown);
        let _probe = match before {
            Before::ClosedWithFailures => {
                for _ in 0..failures {
                    lab.breaker.try_acquire().expect("CLOSED").failure();
                }
                None
            }
            Before::OpenBeforeTheDeadline => {
                lab.trip();
                lab.advance(cooldown / 2);
                None
            }
            Before::OpenAtTheDeadline => {
                lab.trip();
                lab.advance(cooldown);
                None
            }
            Before::ProbeOut => {
                lab.trip();
                lab.advance(cooldown);
                Some(lab.probe())
            }
        };
        let (state, generation) = (lab.breaker.state(), lab.breaker.generation());
        let cancel = CancellationToken::new();
        cancel.cancel();
        let script = Script::new([Ok(1)]);
        let result = lab
            .call(budget, &script)
            .backoff(backoff(&table))
            .cancel(&cancel)
            .run()
            .await;
        assert_eq!(
            result.ending(),
            "Cancelled",
            "TODO(8): {case}: the token is checked before every attempt, the first included, and \
             before the breaker is asked (E2)"
        );
        assert_eq!(
            result.attempts_made(),
            Some(0),
            "TODO(8): {case}: the cancellation counts the attempts that ran before it was noticed, 0 (E2, E7)"
        );
        assert_eq!(
            script.calls(),
            0,
            "TODO(8): {case}: no task, no sleep, and no permit: the breaker is left as it was \
             (E2): the attempts that reached the dependency"
        );
        assert_eq!(
            lab.sleeper.delays(),
            vec![],
            "TODO(8): {case}: no task, no sleep, and no permit: the breaker is left as it was \
             (E2): the sleeps asked for"
        );
        assert_eq!(
            lab.breaker.state(),
            state,
            "TODO(8): {case}: no task, no sleep, and no permit: the breaker is left as it was \
             (E2): the breaker's state"
        );
        assert_eq!(
            lab.breaker.generation(),
            generation,
            "TODO(8): {case}: no task, no sleep, and no permit: the breaker is left as it was \
             (E2): the generation"
        );
    });
}

#[test]
fn e2_the_token_is_checked_again_before_a_drawn_attempt() {
    let mut draw = Draw::new("e2_the_token_is_checked_again_before_a_drawn_attempt");
    let budget = draw.count(2, 8);
    let at = draw.count(1, budget - 1);
    let table = delays(&mut draw, budget);
    run(LOOPED, async move {
        let case = format!(
            "budget {budget}, every attempt times out, the token is cancelled during sleep {at}, \
             which then ends"
        );
        let lab = Lab::new(20, ms(10));
        let cancel = CancellationToken::new();
        let sleeper = CancelsDuringSleep {
            inner: lab.sleeper.clone(),
            cancel: cancel.clone(),
            at,
            finishes: true,
            asked: AtomicU32::new(0),
        };
        let script = Script::new((0..budget).map(|_| Err(Fault::Timeout)));
        let result = lab
            .call(budget, &script)
            .backoff(backoff(&table))
            .cancel(&cancel)
            .sleeper(&sleeper)
            .run()
            .await;
        assert_eq!(
            result.ending(),
            "Cancelled",
            "TODO(8): {case}: the token is checked before every attempt, so attempt {} never \
             starts (E2)",
            at + 1
        );
        assert_eq!(
            result.attempts_made(),
            Some(at),
            "TODO(8): {case}: the cancellation counts the attempts that ran before it was noticed, {at} (E2, E7)"
        );
        assert_eq!(
            script.calls(),
            at,
            "TODO(8): {case}: {at} attempts and {at} sleeps asked for (E2): the attempts that reached the dependency"
        );
        assert_eq!(
            lab.sleeper.delays(),
            table[..at as usize].to_vec(),
            "TODO(8): {case}: {at} attempts and {at} sleeps asked for (E2): the sleeps asked for"
        );
        assert_eq!(
            lab.breaker.state(),
            State::Closed { failures: at },
            "TODO(8): {case}: every attempt made was reported (E4)"
        );
    });
}

#[test]
fn e7_a_cancellation_during_a_drawn_sleep_ends_the_call_promptly() {
    let mut draw = Draw::new("e7_a_cancellation_during_a_drawn_sleep");
    let budget = draw.count(2, 8);
    let at = draw.count(1, budget - 1);
    let table = delays(&mut draw, budget);
    let case = format!(
        "budget {budget}, every attempt times out, the token is cancelled during sleep {at}, \
         which never ends by itself"
    );
    let lab = Lab::new(20, ms(10));
    let cancel = CancellationToken::new();
    let sleeper = CancelsDuringSleep {
        inner: lab.sleeper.clone(),
        cancel: cancel.clone(),
        at,
        finishes: false,
        asked: AtomicU32::new(0),
    };
    let script = Script::new((0..budget).map(|_| Err(Fault::Timeout)));
    let call = lab
        .call(budget, &script)
        .backoff(backoff(&table))
        .cancel(&cancel)
        .sleeper(&sleeper)
        .run();
    let mut call = pin!(call);
    let outcome = match poll_once(call.as_mut()) {
        Poll::Ready(outcome) => outcome,
        Poll::Pending => match poll_once(call.as_mut()) {
            Poll::Ready(outcome) => outcome,
            Poll::Pending => panic!(
                "TODO(8): {case}: the token was cancelled during the sleep, but the call is \
                 still asleep (E7)"
            ),
        },
    };
    assert_eq!(
        outcome.ending(),
        "Cancelled",
        "TODO(8): {case}: the call ends with the cancellation (E7)"
    );
    assert_eq!(
        outcome.attempts_made(),
        Some(at),
        "TODO(8): {case}: the cancellation counts the attempts that ran before it was noticed, {at} (E2, E7)"
    );
    assert_eq!(
        script.calls(),
        at,
        "TODO(8): {case}: no attempt after the cancelled sleep (E7)"
    );
}

const OUTCOMES: [Result<u32, Fault>; 4] = [
    Ok(5),
    Err(Fault::Timeout),
    Err(Fault::Unavailable),
    Err(Fault::Declined),
];

/// What a call must return when its token is cancelled during attempt
/// `at` of `budget`, and that attempt ends with `outcome`.
fn expected_when_cancelled_during(at: u32, budget: u32, outcome: Result<u32, Fault>) -> String {
    match outcome {
        // E7: the task's business; a value that arrives is returned.
        Ok(value) => format!("Ok({value})"),
        // E5: the last attempt, or not retryable: the original error.
        Err(fault) if at == budget || !retryable(&fault) => format!("Task({at}, {fault})"),
        // A retry would follow, but the token stops it before the sleep (E7).
        Err(_) => format!("Cancelled({at})"),
    }
}

#[test]
fn e5_e7_a_token_cancelled_during_drawn_attempts_lets_each_decide_and_starts_no_sleep() {
    let mut draw = Draw::new("e5_e7_a_token_cancelled_during_drawn_attempts");
    let budget = draw.count(2, 8);
    let mut cases: Vec<(u32, Result<u32, Fault>)> =
        (1..=budget).map(|at| (at, draw.pick(&OUTCOMES))).collect();
    // At least one case in which a call that ignored its token would retry.
    if cases
        .iter()
        .all(|&(at, o)| o.is_ok() || at == budget || o == Err(Fault::Declined))
    {
        cases[0].1 = Err(Fault::Timeout);
    }
    let table = delays(&mut draw, budget);
    for (at, outcome) in cases {
        let table = table.clone();
        run(LOOPED, async move {
            let case = format!(
                "budget {budget}, attempts before {at} time out, the token is cancelled during \
                 attempt {at}, which ends {outcome:?}"
            );
            let lab = Lab::new(20, ms(10));
            let mut outcomes = vec![Err(Fault::Timeout); at as usize - 1];
            outcomes.push(outcome);
            let script = Script::new(outcomes);
            let cancel = CancellationToken::new();
            let (inside, mut scripted, calls) = (cancel.clone(), script.task(), script.clone());
            let task = move || {
                if calls.calls() + 1 == at {
                    inside.cancel();
                }
                scripted()
            };
            let result = lab
                .call_with(budget, task)
                .backoff(backoff(&table))
                .cancel(&cancel)
                .run()
                .await;
            assert_eq!(
                shown(&result),
                expected_when_cancelled_during(at, budget, outcome),
                "TODO(8): {case}: the attempt in flight decides (E7); its error is returned if \
                 nothing would be retried (E5); otherwise the token ends the call"
            );
            assert_eq!(
                script.calls(),
                at,
                "TODO(8): {case}: no attempt after the cancellation, and the sleeper is not even \
                 asked for a sleep once the token is cancelled (E2, E7): the attempts that reached the dependency"
            );
            assert_eq!(
                lab.sleeper.delays(),
                table[..at as usize - 1].to_vec(),
                "TODO(8): {case}: no attempt after the cancellation, and the sleeper is not even \
                 asked for a sleep once the token is cancelled (E2, E7): the sleeps asked for"
            );
            let failures = if outcome.is_ok() { 0 } else { at };
            assert_eq!(
                lab.breaker.state(),
                State::Closed { failures },
                "TODO(8): {case}: every attempt is reported, the cancelled one included (E4, E7)"
            );
        });
    }
}

#[test]
fn e7_a_token_cancelled_while_a_drawn_attempt_is_still_running_does_not_abandon_it() {
    let mut draw = Draw::new("e7_a_token_cancelled_while_a_drawn_attempt_is_still_running");
    let budget = draw.count(2, 7);
    let at = draw.count(1, budget - 1);
    let fault = draw.pick(&[Fault::Timeout, Fault::Unavailable]);
    let table = delays(&mut draw, budget);
    let case = format!(
        "budget {budget}, attempts before {at} time out, the token is cancelled while attempt \
         {at} is still running, which then fails with {fault}"
    );
    let lab = Lab::new(20, ms(10));
    let gate = Gate::new();
    let cancel = CancellationToken::new();
    let call = lab
        .call_with(budget, gate.task())
        .backoff(backoff(&table))
        .cancel(&cancel)
        .run();
    let mut call = pin!(call);
    for attempt in 1..at {
        assert!(
            poll_once(call.as_mut()).is_pending(),
            "TODO(6): {case}: attempt {attempt} is in flight"
        );
        gate.open(Err(Fault::Timeout));
    }
    assert!(
        poll_once(call.as_mut()).is_pending(),
        "TODO(6): {case}: attempt {at} is in flight"
    );
    assert_eq!(gate.started(), at, "TODO(6): {case}: {at} attempts started");
    cancel.cancel();
    assert!(
        poll_once(call.as_mut()).is_pending(),
        "TODO(8): {case}: execute does not abort a running attempt; cancelling it is the task's \
         business (E7)"
    );
    gate.open(Err(fault));
    let result = match poll_once(call.as_mut()) {
        Poll::Ready(result) => result,
        Poll::Pending => panic!(
            "TODO(8): {case}: once attempt {at} failed, the token ends the call before any sleep \
             or further attempt (E7)"
        ),
    };
    assert_eq!(
        result.ending(),
        "Cancelled",
        "TODO(8): {case}: a retry would follow, but the token ends the call (E7)"
    );
    assert_eq!(
        result.attempts_made(),
        Some(at),
        "TODO(8): {case}: the cancellation counts the attempts that ran before it was noticed, {at} (E2, E7)"
    );
    assert_eq!(
        gate.started(),
        at,
        "TODO(8): {case}: no further attempt, no sleep asked for after the cancellation (E2, E7): the attempts started"
    );
    assert_eq!(
        lab.sleeper.delays(),
        table[..at as usize - 1].to_vec(),
        "TODO(8): {case}: no further attempt, no sleep asked for after the cancellation (E2, E7): the sleeps asked for"
    );
    assert_eq!(
        lab.breaker.state(),
        State::Closed { failures: at },
        "TODO(8): {case}: the attempt's outcome is reported like any other (E7)"
    );
}

#[test]
fn e2_e7_a_token_cancelled_during_the_attempt_that_opens_the_circuit_ends_the_call_cancelled() {
    let mut draw = Draw::new("e2_e7_a_token_cancelled_during_the_attempt_that_opens_the_circuit");
    let threshold = draw.count(1, 5);
    let budget = threshold + draw.count(1, 3);
    let cooldown = draw.duration(ms(1), Duration::from_secs(3));
    let table = delays(&mut draw, budget);
    run(LOOPED, async move {
        let case = format!(
            "threshold {threshold}, cooldown {cooldown:?}, budget {budget}, every attempt times \
             out, the token is cancelled during attempt {threshold}, whose failure opens the \
             circuit"
        );
        let lab = Lab::new(threshold, cooldown);
        let script = Script::new((0..threshold).map(|_| Err(Fault::Timeout)));
        let cancel = CancellationToken::new();
        let (inside, mut scripted, calls) = (cancel.clone(), script.task(), script.clone());
        let task = move || {
            if calls.calls() + 1 == threshold {
                inside.cancel();
            }
            scripted()
        };
        let result = lab
            .call_with(budget, task)
            .backoff(backoff(&table))
            .cancel(&cancel)
            .run()
            .await;
        assert_eq!(
            result.ending(),
            "Cancelled",
            "TODO(8): {case}: the token ends the call before the sleep and before the breaker is \
             asked again, so it is cancelled, not refused (E2, E7)"
        );
        assert_eq!(
            result.attempts_made(),
            Some(threshold),
            "TODO(8): {case}: the cancellation counts the attempts that ran before it was noticed, {threshold} (E2, E7)"
        );
        assert_eq!(
            script.calls(),
            threshold,
            "TODO(8): {case}: no sleep after the cancelled attempt (E7): the attempts that reached the dependency"
        );
        assert_eq!(
            lab.sleeper.delays(),
            table[..threshold as usize - 1].to_vec(),
            "TODO(8): {case}: no sleep after the cancelled attempt (E7): the sleeps asked for"
        );
        assert_eq!(
            lab.breaker.state(),
            State::Open {
                remaining: cooldown
            },
            "TODO(8): {case}: the cancelled attempt's failure was reported and opened the \
             circuit; no sleep moved the clock since (E4, E7)"
        );
    });
}
