//! A retry budget that many calls of a policy share (Q1-Q4): the policy
//! asks it only about a retry that `execute` would otherwise make, so these
//! pass once the loop asks its predicate at the right moment (TODO(6)).

use std::sync::Arc;
use std::time::Duration;

use retry_breaker::{Clock, GaveUp, RetryBudget, RetryPolicy, State};

use crate::support::{Ending, Fault, Lab, Script, ms, run};

const LOOPED: &str = "a call through a policy with a retry budget did not end: TODO(6)";

/// Three attempts 100 ms apart, no jitter, retrying timeouts only, drawing
/// on `budget`.
fn drawing_on(budget: &Arc<RetryBudget>) -> RetryPolicy<Fault> {
    RetryPolicy::constant(ms(100))
        .attempts(3)
        .without_jitter()
        .retry_if(|fault| matches!(fault, Fault::Timeout))
        .retry_budget(Arc::clone(budget))
}

fn budget(window: Duration, per_second: u32, percent: u32) -> Arc<RetryBudget> {
    Arc::new(RetryBudget::new(window, per_second, percent).expect("a valid budget"))
}

#[test]
fn q2_a_retry_the_budget_refuses_ends_the_call_with_its_failure_and_no_wait() {
    run(LOOPED, async {
        let lab = Lab::new(10, Duration::from_secs(30));
        let empty = budget(Duration::from_secs(10), 0, 0);
        let script = Script::new([Err(Fault::Timeout), Ok(1)]);
        let result = drawing_on(&empty)
            .run(&lab.breaker, &lab.sleeper, script.task())
            .await;
        assert_eq!(
            (result.attempt(), result.reason()),
            (Some(1), Some(GaveUp::RetryBudgetSpent)),
            "TODO(6): with no retry in the budget, attempt 1's timeout ends the call, and the \
             reason says it was the budget (Q2); got {result:?}"
        );
        assert_eq!(
            result.cause(),
            Some(&Fault::Timeout),
            "Q2: the caller gets the timeout"
        );
        script.assert_calls(1, "TODO(6)");
        assert!(
            lab.sleeper.delays().is_empty(),
            "Q2: a retry that will not be made is not waited for"
        );
        assert_eq!(
            lab.breaker.state(),
            State::Closed { failures: 1 },
            "TODO(6): the attempt's failure was recorded"
        );
    });
}

#[test]
fn q1_q2_calls_that_went_well_earn_the_retry_of_one_that_did_not() {
    run(LOOPED, async {
        let lab = Lab::new(10, Duration::from_secs(30));
        let half = budget(Duration::from_secs(10), 0, 50);
        let policy = drawing_on(&half);
        let script = Script::new([
            Ok(1),
            Ok(2),
            Err(Fault::Timeout),
            Ok(3),
            Err(Fault::Timeout),
            Ok(4),
            Err(Fault::Timeout),
        ]);
        for value in [1, 2] {
            let result = policy.run(&lab.breaker, &lab.sleeper, script.task()).await;
            assert_eq!(
                result.as_ref().ok().copied(),
                Some(value),
                "TODO(6): call {value} succeeds"
            );
        }
        assert_eq!(
            half.available(lab.clock.now()),
            1,
            "Q1: two calls at 50% earn one retry"
        );
        for (call, value) in [(3, 3), (4, 4)] {
            let result = policy.run(&lab.breaker, &lab.sleeper, script.task()).await;
            assert_eq!(
                result.as_ref().ok().copied(),
                Some(value),
                "TODO(6): call {call} retries its timeout: {call} calls at 50% earn {} retries, \
                 {} spent before it (Q1, Q2); got {result:?}",
                call / 2,
                call - 3
            );
        }
        assert_eq!(lab.sleeper.delays(), [ms(100), ms(100)]);
        let result = policy.run(&lab.breaker, &lab.sleeper, script.task()).await;
        assert_eq!(
            (result.attempt(), result.reason()),
            (Some(1), Some(GaveUp::RetryBudgetSpent)),
            "Q1: five calls at 50% earn 2.5 retries, rounded down to the 2 already spent; got \
             {result:?}"
        );
        script.assert_calls(7, "TODO(6)");
    });
}

#[test]
fn q2_a_retry_the_policy_would_not_make_spends_nothing() {
    run(LOOPED, async {
        let lab = Lab::new(10, Duration::from_secs(30));
        // One retry a second over one second: exactly one, whatever the calls.
        let one = budget(Duration::from_secs(1), 1, 0);
        let policy = drawing_on(&one);
        let script = Script::new([
            Err(Fault::Declined),
            Err(Fault::Timeout),
            Err(Fault::Timeout),
            Ok(4),
        ]);
        let result = policy.run(&lab.breaker, &lab.sleeper, script.task()).await;
        assert_eq!(
            result.reason(),
            Some(GaveUp::NotRetryable),
            "TODO(6): a decline is not retried, budget or not; got {result:?}"
        );
        let result = policy
            .clone()
            .attempts(1)
            .run(&lab.breaker, &lab.sleeper, script.task())
            .await;
        assert_eq!(
            result.reason(),
            Some(GaveUp::NoAttemptsLeft),
            "TODO(6): a timeout on the last attempt is not retried, budget or not; got {result:?}"
        );
        assert_eq!(
            one.available(lab.clock.now()),
            1,
            "Q2: TODO(6): the budget is asked only about a retry the call would make: not about \
             an error the policy does not retry, nor after the last attempt"
        );
        let result = policy.run(&lab.breaker, &lab.sleeper, script.task()).await;
        assert_eq!(
            result.as_ref().ok().copied(),
            Some(4),
            "TODO(6): the one retry is still there for a timeout with attempts left; got \
             {result:?}"
        );
        assert_eq!(one.available(lab.clock.now()), 0, "Q2: and now it is spent");
    });
}

#[test]
fn q4_policies_sharing_a_budget_share_its_retries() {
    run(LOOPED, async {
        let lab = Lab::new(10, Duration::from_secs(30));
        let one = budget(Duration::from_secs(1), 1, 0);
        let script = Script::new([Err(Fault::Timeout), Ok(5), Err(Fault::Timeout)]);
        let result = drawing_on(&one)
            .run(&lab.breaker, &lab.sleeper, script.task())
            .await;
        assert_eq!(
            result.as_ref().ok().copied(),
            Some(5),
            "TODO(6): one policy spends the one retry"
        );
        let other = RetryPolicy::exponential(ms(10), ms(80)).retry_budget(Arc::clone(&one));
        let result = other.run(&lab.breaker, &lab.sleeper, script.task()).await;
        assert_eq!(
            (result.attempt(), result.reason()),
            (Some(1), Some(GaveUp::RetryBudgetSpent)),
            "Q4: another policy holding the same budget finds it spent; got {result:?}"
        );
    });
}

#[test]
fn q3_a_spent_budget_comes_back_as_the_breaker_s_clock_moves_on() {
    run(LOOPED, async {
        let lab = Lab::new(10, Duration::from_secs(30));
        let one = budget(Duration::from_secs(1), 1, 0);
        let policy = drawing_on(&one);
        let script = Script::new([
            Err(Fault::Timeout),
            Ok(6),
            Err(Fault::Timeout),
            Err(Fault::Timeout),
            Ok(7),
        ]);
        let result = policy.run(&lab.breaker, &lab.sleeper, script.task()).await;
        assert_eq!(
            result.as_ref().ok().copied(),
            Some(6),
            "TODO(6): the one retry is spent at 0 s"
        );
        let result = policy.run(&lab.breaker, &lab.sleeper, script.task()).await;
        assert_eq!(
            result.reason(),
            Some(GaveUp::RetryBudgetSpent),
            "Q3: 100 ms later it is still spent; got {result:?}"
        );
        lab.advance(Duration::from_secs(1));
        let result = policy.run(&lab.breaker, &lab.sleeper, script.task()).await;
        assert_eq!(
            result.as_ref().ok().copied(),
            Some(7),
            "Q3: a second on the breaker's clock, the window has moved past the spent retry; got \
             {result:?}"
        );
    });
}
