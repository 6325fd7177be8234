//! Held back from the student edition: step 9's story told again with a
//! drawn threshold and cooldown (rules B1-B6, E1-E6 together). No TODO of
//! its own: it passes when steps 1-8 work together, and each message names
//! the step whose rule the story broke, with the values drawn.

use std::pin::pin;
use std::task::Poll;

use retry_breaker::{Clock, ExecuteError, Rejected, State};
use tokio_util::sync::CancellationToken;

use crate::step01_seeded::Draw;
use crate::support::breaker_core::assert_state;
use crate::support::{Fault, Lab, Script, ms, poll_once, retryable, run};

#[test]
fn the_worked_example_with_a_drawn_threshold_and_cooldown() {
    let mut draw =
        Draw::new("step09_held_back::the_worked_example_with_a_drawn_threshold_and_cooldown");
    let threshold = draw.count(2, 5);
    let cooldown = draw.millis(12, 80);
    let says = format!("(threshold {threshold}, cooldown {cooldown:?})");
    run("the drawn worked example did not finish", async move {
        let lab = Lab::new(threshold, cooldown);
        let cancel = CancellationToken::new();
        let backoff = |n: u32| ms(n.into());
        let once = async |script: &Script| {
            lab.breaker
                .execute(1, script.task(), retryable, backoff, &cancel, &lab.sleeper)
                .await
        };

        // 1. `threshold` calls of one attempt fail: OPEN for the whole cooldown.
        for failed in 1..=threshold {
            let result = once(&Script::new([Err(Fault::Timeout)])).await;
            let Err(ExecuteError::Task { attempt, .. }) = &result else {
                panic!(
                    "steps 1 and 6: call {failed} of one attempt must return its task's error {says}, got {result:?}"
                );
            };
            assert_eq!(
                *attempt, 1,
                "steps 1 and 6: call {failed}'s error is its first and only attempt's {says}"
            );
        }
        assert_state!(
            lab.breaker,
            State::Open {
                remaining: cooldown
            },
            "steps 1-2: the {threshold}th consecutive failure opens the circuit for the whole cooldown {says}"
        );

        // 2. Part way through the cooldown a call is refused, its task never run.
        let early = cooldown / 3;
        lab.advance(early);
        let untouched = Script::new([]);
        let result = once(&untouched).await;
        let Err(ExecuteError::Rejected {
            attempt, rejection, ..
        }) = &result
        else {
            panic!(
                "steps 2 and 6: {early:?} into the cooldown a call is refused {says}, got {result:?}"
            );
        };
        assert_eq!(
            *attempt, 1,
            "steps 2 and 6: the refusal ends the call at its first attempt {says}"
        );
        assert_eq!(
            *rejection,
            Rejected::Open {
                remaining: cooldown - early
            },
            "steps 2 and 6: {early:?} into the cooldown a call is refused with {:?} left {says}",
            cooldown - early
        );
        assert_eq!(
            untouched.calls(),
            0,
            "steps 2 and 6: a refused call never reaches the dependency {says}"
        );

        // 3. At the deadline the next call is the probe; it succeeds: CLOSED.
        lab.advance(cooldown - early);
        let result = once(&Script::new([Ok(3)])).await;
        assert_eq!(
            result.ok(),
            Some(3),
            "step 2: at the deadline the call is the probe and returns its value {says}"
        );
        assert_state!(
            lab.breaker,
            State::Closed { failures: 0 },
            "step 2: a successful probe closes the circuit with a count of 0 {says}"
        );

        // 4. Inside one call: threshold - 1 timeouts, then a success, with a
        //    backoff sleep before each retry and a success that resets the count.
        let before = lab.clock.now();
        let retried = Script::new((1..threshold).map(|_| Err(Fault::Timeout)).chain([Ok(4)]));
        let result = lab
            .breaker
            .execute(
                threshold,
                retried.task(),
                retryable,
                backoff,
                &cancel,
                &lab.sleeper,
            )
            .await;
        assert_eq!(
            result.ok(),
            Some(4),
            "step 6: a call with {threshold} attempts succeeds on its last one {says}"
        );
        assert_eq!(
            retried.calls(),
            threshold,
            "step 6: every attempt of the budget reached the dependency {says}"
        );
        let slept: u64 = (1..u64::from(threshold)).sum();
        assert_eq!(
            lab.clock.now() - before,
            ms(slept),
            "step 6: one sleep of backoff(n) after each failed attempt n, none after the last {says}"
        );
        assert_state!(
            lab.breaker,
            State::Closed { failures: 0 },
            "step 1: the success at the end of the call resets the count its {} failures built {says}",
            threshold - 1
        );

        // 5. A call admitted now answers only after others opened the
        //    circuit: its success is stale and changes nothing.
        let release = CancellationToken::new();
        let gate = release.clone();
        let slow = move || {
            let gate = gate.clone();
            async move {
                gate.cancelled().await;
                Ok::<u32, Fault>(5)
            }
        };
        let stale = lab
            .breaker
            .execute(1, slow, retryable, backoff, &cancel, &lab.sleeper);
        let mut stale = pin!(stale);
        assert!(
            poll_once(stale.as_mut()).is_pending(),
            "the slow call waits for its dependency"
        );
        for _ in 0..threshold {
            let _ = once(&Script::new([Err(Fault::Timeout)])).await;
        }
        let opened = State::Open {
            remaining: cooldown,
        };
        assert_state!(
            lab.breaker,
            opened,
            "steps 1-2: {threshold} more failures open the circuit again {says}"
        );
        release.cancel();
        let Poll::Ready(result) = poll_once(stale.as_mut()) else {
            panic!("the slow call had nothing left to wait for, yet it did not finish {says}");
        };
        assert_eq!(
            result.ok(),
            Some(5),
            "step 3: a stale call still returns its value to its caller {says}"
        );
        assert_state!(
            lab.breaker,
            opened,
            "step 3: a success admitted before the circuit opened is stale and changes nothing {says}"
        );

        // 6. At the new deadline the probe fails: OPEN again, for a whole
        //    cooldown from the failure.
        lab.advance(cooldown);
        let result = once(&Script::new([Err(Fault::Timeout)])).await;
        let Err(ExecuteError::Task { attempt, .. }) = &result else {
            panic!(
                "step 2: the probe at the deadline runs and returns its error {says}, got {result:?}"
            );
        };
        assert_eq!(
            *attempt, 1,
            "step 2: the probe's error is its call's first attempt's {says}"
        );
        assert_state!(
            lab.breaker,
            State::Open {
                remaining: cooldown
            },
            "step 2: a failed probe reopens the circuit for a whole new cooldown {says}"
        );
    });
}
