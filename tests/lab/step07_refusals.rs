//! Step 7, refusals and the cause: the ways a call ends without running its
//! task, and what it tells the caller (TODO(7); rules E3, E9, E10). An open
//! circuit's refusal ends the call at once (E3) and carries the error of
//! the attempt before it (E10); a clock and a sleeper that cannot agree are
//! refused before anything happens (E9).

use std::sync::Arc;

use retry_breaker::{Clock, ExecuteError, Rejected, RetryBudget, RetryPolicy, State};

use crate::support::{Ending, Fault, Lab, Script, ms, run};

const LOOPED: &str = "the retry loop did not stop after a refusal (E3): TODO(7)";

#[test]
fn e3_a_rejection_ends_the_call_at_once_without_task_sleep_or_spin() {
    run(LOOPED, async {
        let lab = Lab::new(1, ms(10));
        lab.trip();
        lab.advance(ms(4));
        let script = Script::new([]);
        let result = lab.call(5, &script).run().await;
        let error = result.unwrap_err();
        assert_eq!(
            error.ending(),
            "Rejected",
            "TODO(7): an open circuit refuses the call (E3); got {error:?}"
        );
        assert_eq!(
            error.attempt(),
            Some(1),
            "TODO(7): the first attempt is the one refused (E3); got {error:?}"
        );
        assert_eq!(
            error.rejection(),
            Some(Rejected::Open { remaining: ms(6) }),
            "TODO(7): the refusal is the breaker's own, with 6 ms of cooldown left (E3); got {error:?}"
        );
        assert_eq!(
            error.cause(),
            None,
            "TODO(7): a refusal of the first attempt carries no task error (E10); got {error:?}"
        );
        assert!(error.to_string().contains("refused"), "{error}");
        assert_eq!(
            script.calls(),
            0,
            "B3: a rejected attempt never reaches the task"
        );
        assert!(
            lab.sleeper.delays().is_empty(),
            "E3: no sleep after a rejection"
        );
        assert_eq!(
            lab.breaker.state(),
            State::Open { remaining: ms(6) },
            "TODO(7): the breaker must now be `State::Open {{remaining: ms(6)}}`"
        );
    });
}

#[test]
fn e3_a_call_refused_because_a_probe_is_out_says_so() {
    run(LOOPED, async {
        let lab = Lab::cooled(1, ms(10));
        let probe = lab.probe();
        let script = Script::new([]);
        let result = lab.call(3, &script).run().await;
        assert_eq!(
            result.ending(),
            "Rejected",
            "TODO(7): a half-open circuit with its probe out refuses the call (E3); got {result:?}"
        );
        assert_eq!(
            result.attempt(),
            Some(1),
            "TODO(7): the first attempt is the one refused (E3); got {result:?}"
        );
        assert_eq!(
            result.rejection(),
            Some(Rejected::ProbeInFlight),
            "TODO(7): the refusal says a probe is in flight (E3); got {result:?}"
        );
        assert_eq!(
            result.cause(),
            None,
            "TODO(7): a refusal of the first attempt carries no task error (E10); got {result:?}"
        );
        script.assert_calls(0, "TODO(7)");
        assert_eq!(
            lab.breaker.state(),
            State::HalfOpen {
                probe_in_flight: true
            },
            "E3: a refusal is not a failure; only the probe's outcome decides"
        );
        probe.success();
    });
}

/// A call of `attempts` on a threshold-2 breaker (cooldown 100 ms) whose
/// attempts time out, then fail with `second`: the two failures open the
/// circuit under the call. Returns the lab, the script and the call's error.
async fn opened_under_the_call(attempts: u32, second: Fault) -> (Lab, Script, ExecuteError<Fault>) {
    let lab = Lab::new(2, ms(100));
    let script = Script::new([Err(Fault::Timeout), Err(second)]);
    let result = lab.call(attempts, &script).run().await;
    (lab, script, result.unwrap_err())
}

#[test]
fn e3_e4_a_circuit_opened_by_the_calls_own_retries_refuses_its_next_attempt() {
    run(LOOPED, async {
        let (lab, script, error) = opened_under_the_call(5, Fault::Timeout).await;
        assert_eq!(
            error.ending(),
            "Rejected",
            "TODO(7): the two failed attempts opened the circuit, so the call ends refused (E4, E3): {error:?}"
        );
        assert_eq!(
            error.attempt(),
            Some(3),
            "TODO(7): attempt 3 is the one refused (E4, E3): {error:?}"
        );
        assert!(
            matches!(error.rejection(), Some(Rejected::Open { .. })),
            "TODO(7): attempt 3 is refused because the circuit is open (E4): {error:?}"
        );
        assert_eq!(
            script.calls(),
            2,
            "the refused attempt never reached the task"
        );
        assert_eq!(
            lab.sleeper.delays(),
            [ms(10), ms(20)],
            "TODO(7): the backoff sleeps asked for must be exactly [ms(10), ms(20)]"
        );
        assert_eq!(
            lab.breaker.state(),
            State::Open { remaining: ms(80) },
            "TODO(7): the breaker must now be `State::Open {{remaining: ms(80)}}`"
        );
    });
}

#[test]
fn e10_a_refusal_after_a_failed_attempt_carries_that_attempts_error() {
    run(LOOPED, async {
        // Threshold 2: attempt 2's failure opens the circuit, so attempt 3
        // is refused. The caller must still learn why.
        let (_lab, _, error) = opened_under_the_call(3, Fault::Unavailable).await;
        assert_eq!(
            error.ending(),
            "Rejected",
            "TODO(7): attempt 2's failure opened the circuit, so the call ends refused (E3, E4); \
             got {error:?}"
        );
        assert_eq!(
            error.attempt(),
            Some(3),
            "TODO(7): attempt 2's failure opened the circuit, so attempt 3 is refused (E3, E4); \
             got {error:?}"
        );
        assert!(
            matches!(error.rejection(), Some(Rejected::Open { .. })),
            "TODO(7): attempt 3 is refused because the circuit is open (E3); got {error:?}"
        );
        assert_eq!(
            error.cause(),
            Some(&Fault::Unavailable),
            "TODO(7): a refusal after a failed attempt carries the error of the attempt just \
             before it (the last, not the first), as its source (E10); got {error:?}"
        );
        let cause = std::error::Error::source(&error).expect("E10: the refusal has a source");
        assert_eq!(
            cause.to_string(),
            "unavailable",
            "TODO(7): expected `cause.to_string()` to equal `\"unavailable\"`"
        );
        assert_eq!(
            error.task_error(),
            Some(&Fault::Unavailable),
            "TODO(7): expected `error.task_error()` to equal `Some(&Fault::Unavailable)`"
        );
    });
}

#[test]
fn e10_a_refusal_of_a_retry_while_the_cooldown_runs_carries_the_failure_that_opened_it() {
    run(LOOPED, async {
        // Threshold 1, cooldown longer than the backoff: attempt 2 asks
        // while the circuit is still open.
        let lab = Lab::new(1, ms(100));
        let script = Script::new([Err(Fault::Timeout)]);
        let result = lab.call(5, &script).run().await;
        let error = result.unwrap_err();
        assert_eq!(
            error.attempt(),
            Some(2),
            "TODO(7): the retry asks while the circuit is still open, and is refused: no \
             attempt is made past a refusal (E3); got {error:?}"
        );
        assert_eq!(
            error.rejection(),
            Some(Rejected::Open { remaining: ms(90) }),
            "TODO(7): the refusal is the open circuit's, with 90 ms of its cooldown left (E3); \
             got {error:?}"
        );
        assert_eq!(
            error.cause(),
            Some(&Fault::Timeout),
            "TODO(7): the refusal carries the failure that opened the circuit (E10); got {error:?}"
        );
        assert_eq!(
            lab.sleeper.delays(),
            [ms(10)],
            "E3: no sleep after the refusal"
        );
    });
}

#[test]
fn q1_a_call_the_breaker_refuses_outright_earns_no_retry() {
    run(LOOPED, async {
        let lab = Lab::new(1, ms(10));
        lab.trip();
        // No floor: every retry must be earned, one per call.
        let budget = Arc::new(RetryBudget::new(ms(1_000), 0, 100).expect("a valid budget"));
        let policy = RetryPolicy::constant(ms(1))
            .without_jitter()
            .retry_budget(Arc::clone(&budget));
        let script = Script::new([Err(Fault::Timeout), Ok(1)]);
        let result = policy.run(&lab.breaker, &lab.sleeper, script.task()).await;
        assert_eq!(
            result.ending(),
            "Rejected",
            "TODO(7): the open circuit refuses the call (E3); got {result:?}"
        );
        assert_eq!(
            budget.available(lab.clock.now()),
            0,
            "Q1: a call refused before its first attempt sent nothing, so it earned no retry"
        );
        lab.advance(ms(10));
        let result = policy.run(&lab.breaker, &lab.sleeper, script.task()).await;
        assert_eq!(
            (result.ending(), result.attempt(), result.cause()),
            ("Rejected", Some(2), Some(&Fault::Timeout)),
            "TODO(7): the probe's timeout reopens the circuit; the call earned and spent a retry, \
             which the circuit then refuses (E3, E10); got {result:?}"
        );
        let left = budget.available(lab.clock.now());
        assert_eq!(
            left, 0,
            "Q1, Q2: the probe's call earned one retry and spent it, but {left} is left: \
             the call retried without asking. TODO(6): the loop asks its `retryable` before \
             every retry (E5), and that question is where a policy spends its budget"
        );
    });
}

mod events;
mod time_sources;
