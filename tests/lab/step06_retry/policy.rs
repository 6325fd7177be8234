//! `RetryPolicy`, the retry settings as one value: it runs every call
//! through `execute`, so it obeys the same rules (E5, E6, E8).

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use retry_breaker::{RetryPolicy, State};

use crate::support::{Ending, Fault, Lab, Script, ms, run};

const LOOPED: &str = "a call through a policy did not end: TODO(6)";

/// Four attempts of exponential backoff from 100 ms, no jitter, retrying
/// only timeouts and 503s.
fn hinted() -> RetryPolicy<Fault> {
    RetryPolicy::exponential(ms(100), Duration::from_secs(10))
        .attempts(4)
        .without_jitter()
        .retry_if(|fault| matches!(fault, Fault::Timeout | Fault::Unavailable))
}

#[test]
fn e5_a_policy_waits_out_a_retry_after_longer_than_its_backoff_and_not_a_shorter_one() {
    run(LOOPED, async {
        let lab = Lab::new(10, Duration::from_secs(30));
        let script = Script::new([
            Err(Fault::Timeout),
            Err(Fault::Timeout),
            Err(Fault::Timeout),
            Ok(9),
        ]);
        // The waits the three failures ask for, in order.
        let asked = Mutex::new(VecDeque::from([
            Some(Duration::from_secs(3)),
            Some(ms(1)),
            None,
        ]));
        let policy = hinted().retry_after(move |_| asked.lock().unwrap().pop_front().flatten());
        let result = policy.run(&lab.breaker, &lab.sleeper, script.task()).await;
        assert_eq!(
            result.ok(),
            Some(9),
            "TODO(6): the fourth attempt succeeds (E5)"
        );
        assert_eq!(
            lab.sleeper.delays(),
            [Duration::from_secs(3), ms(200), ms(400)],
            "TODO(6): 3 s where the failure asked for more than the 100 ms backoff, the 200 ms \
             backoff where it asked for less, and the 400 ms backoff where it asked for nothing \
             (E5)"
        );
    });
}

#[test]
fn e5_a_policy_retries_only_what_it_is_told_to() {
    run(LOOPED, async {
        let lab = Lab::new(10, Duration::from_secs(30));
        let script = Script::new([Err(Fault::Declined), Ok(1)]);
        let result = hinted()
            .run(&lab.breaker, &lab.sleeper, script.task())
            .await;
        assert_eq!(
            result.attempt(),
            Some(1),
            "TODO(6): the policy does not retry a decline, so attempt 1 ends the call (E5); got \
             {result:?}"
        );
        assert_eq!(
            result.cause(),
            Some(&Fault::Declined),
            "TODO(6): the caller gets the decline (E5); got {result:?}"
        );
        assert_eq!(script.calls(), 1, "TODO(6): no retry of a decline (E5)");
        assert_eq!(
            lab.breaker.state(),
            State::Closed { failures: 1 },
            "TODO(6): the policy's attempt went through the breaker (E4)"
        );
    });
}

#[test]
fn e5_e6_a_policy_spends_its_attempts_and_no_more() {
    run(LOOPED, async {
        let lab = Lab::new(10, Duration::from_secs(30));
        let script = Script::new([Err(Fault::Timeout); 2]);
        let result = hinted()
            .attempts(2)
            .run(&lab.breaker, &lab.sleeper, script.task())
            .await;
        assert_eq!(
            result.attempt(),
            Some(2),
            "TODO(6): a policy of 2 attempts ends with attempt 2 (E5); got {result:?}"
        );
        assert_eq!(script.calls(), 2, "TODO(6): 2 attempts and no more (E5)");
        assert_eq!(
            lab.sleeper.delays(),
            [ms(100)],
            "TODO(6): one sleep, between the two attempts (E6)"
        );
    });
}

/// The sleeps of one call of `policy` whose first `failures` attempts time out.
async fn sleeps_of(policy: &RetryPolicy<Fault>, failures: usize) -> Vec<Duration> {
    let lab = Lab::new(100, Duration::from_secs(30));
    let mut outcomes = vec![Err(Fault::Timeout); failures];
    outcomes.push(Ok(0));
    let script = Script::new(outcomes);
    let result = policy.run(&lab.breaker, &lab.sleeper, script.task()).await;
    assert_eq!(
        result.ok(),
        Some(0),
        "TODO(6): the call succeeds after {failures} retries"
    );
    lab.sleeper.delays()
}

#[test]
fn e8_a_fixed_jitter_seed_repeats_across_calls_and_stays_within_full_jitter() {
    run(LOOPED, async {
        let seeded = |seed| {
            RetryPolicy::constant(Duration::from_secs(1))
                .attempts(3)
                .jitter_seed(seed)
        };
        let policy = seeded(3);
        let first = sleeps_of(&policy, 2).await;
        assert_eq!(
            sleeps_of(&policy, 2).await,
            first,
            "E8: a fixed `jitter_seed` gives every call of the policy the same delays"
        );
        assert_eq!(
            sleeps_of(&seeded(3), 2).await,
            first,
            "E8: another policy with the same seed gives the same delays"
        );
        assert_ne!(
            sleeps_of(&seeded(4), 2).await,
            first,
            "E8: another seed gives other delays"
        );
        for delay in first {
            assert!(
                delay <= Duration::from_secs(1),
                "E8: full jitter stays within [0, 1 s], got {delay:?}"
            );
        }
    });
}

#[test]
fn e8_two_calls_of_a_freshly_seeded_policy_do_not_retry_in_lockstep() {
    run(LOOPED, async {
        // The default: jitter from a fresh seed for every call. Sixteen
        // draws of two independent seeds all agreeing is beyond chance.
        let policy = RetryPolicy::constant(Duration::from_secs(1)).attempts(17);
        let first = sleeps_of(&policy, 16).await;
        let second = sleeps_of(&policy, 16).await;
        assert_ne!(
            first, second,
            "E8: each call of a policy with default jitter draws a seed of its own, so two calls \
             that fail together do not retry in lockstep"
        );
        assert_ne!(
            first,
            vec![Duration::from_secs(1); 16],
            "E8: the default policy jitters its delays"
        );
    });
}
