//! Step 8, the lab's worked example end to end, as one timeline
//! compared with a snapshot. No new TODO: this step passes when steps 1-7
//! work together (threshold 2, cooldown 10 ms, manual clock from t = 0).

use std::fmt::Debug;
use std::future::Future;
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

use retry_breaker::{ExecuteError, State};
use tokio_util::sync::CancellationToken;

use crate::support::breaker_core::{PROBING, assert_state};
use crate::support::{Fault, Lab, Script, ms, poll_once, retryable, run};

fn show<T: Debug>(result: &Result<T, ExecuteError<Fault>>) -> String {
    match result {
        Ok(value) => format!("Ok({value:?})"),
        Err(ExecuteError::Task {
            attempt, source, ..
        }) => format!("Err(attempt {attempt}: {source})"),
        Err(ExecuteError::Rejected {
            attempt,
            rejection,
            source,
        }) => {
            let after = source.map(|fault| format!(", after {fault}"));
            format!(
                "Err(attempt {attempt} rejected: {rejection:?}{})",
                after.unwrap_or_default()
            )
        }
        Err(other) => format!("Err({other:?})"),
    }
}

/// Polls a call once; it must finish.
fn finish<F: Future>(call: std::pin::Pin<&mut F>) -> F::Output {
    match poll_once(call) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("this call had nothing left to wait for, yet it did not finish"),
    }
}

#[test]
fn worked_example_end_to_end() {
    let trace = run("the worked example did not finish", async {
        let lab = Lab::new(2, ms(10));
        let cancel = CancellationToken::new();
        let backoff = |n: u32| ms(n.into());
        let call = async |who: &'static str, attempts: u32, script: &Script| {
            let sleeper = lab.timeline.sleeper(lab.sleeper.clone(), who);
            let result = lab
                .breaker
                .execute(
                    attempts,
                    script.traced(&lab.timeline, who),
                    retryable,
                    backoff,
                    &cancel,
                    &sleeper,
                )
                .await;
            lab.timeline.log(
                who,
                format!("returns {} | {}", show(&result), lab.breaker.state()),
            );
        };

        lab.timeline.log(
            "--",
            "1. call 1, one attempt, fails: one failure, still CLOSED",
        );
        call("call 1", 1, &Script::new([Err(Fault::Timeout)])).await;
        lab.timeline
            .log("--", "2. call 2, one attempt, fails: OPEN until t=10");
        call("call 2", 1, &Script::new([Err(Fault::Timeout)])).await;

        lab.timeline.log(
            "--",
            "3. at t=5 a call is rejected; its task is not invoked",
        );
        lab.advance(ms(5));
        let untouched = Script::new([]);
        call("call 3", 1, &untouched).await;
        assert_eq!(
            untouched.calls(),
            0,
            "steps 1-7: the dependency must have been called exactly 0 time(s)"
        );

        lab.timeline.log(
            "--",
            "4. at t=10 the next call is the probe; it succeeds: CLOSED, count 0",
        );
        lab.advance(ms(5));
        call("call 4", 1, &Script::new([Ok(4)])).await;
        assert_state!(
            lab.breaker,
            State::Closed { failures: 0 },
            "steps 1-7: the breaker must now be `State::Closed {{failures: 0}}`"
        );

        lab.timeline.log(
            "--",
            "5. retry inside one call: timeout, then success after one sleep of backoff(1)",
        );
        let retried = Script::new([Err(Fault::Timeout), Ok(5)]);
        call("call 5", 3, &retried).await;
        assert_eq!(
            retried.calls(),
            2,
            "steps 1-7: the dependency must have been called exactly 2 time(s)"
        );

        lab.timeline.log(
            "--",
            "6. a stale success: call 6 is admitted while CLOSED, others open the circuit",
        );
        let release = CancellationToken::new();
        let gate = release.clone();
        let slow = || {
            let gate = gate.clone();
            async move {
                gate.cancelled().await;
                Ok::<u32, Fault>(6)
            }
        };
        let sleeper = lab.timeline.sleeper(lab.sleeper.clone(), "call 6");
        let stale = lab
            .breaker
            .execute(1, slow, retryable, backoff, &cancel, &sleeper);
        let mut stale = pin!(stale);
        assert!(
            poll_once(stale.as_mut()).is_pending(),
            "call 6 waits for its dependency"
        );
        lab.timeline
            .log("call 6", "admitted, waiting for the dependency");
        // Call 11 is admitted in the same CLOSED generation, and its answer
        // comes back only while the probe of step 7 is out: the case that
        // only the student's generation check decides.
        let late_release = CancellationToken::new();
        let late_gate = late_release.clone();
        let late_task = || {
            let gate = late_gate.clone();
            async move {
                gate.cancelled().await;
                Ok::<u32, Fault>(11)
            }
        };
        let late_sleeper = lab.timeline.sleeper(lab.sleeper.clone(), "call 11");
        let late = lab
            .breaker
            .execute(1, late_task, retryable, backoff, &cancel, &late_sleeper);
        let mut late = pin!(late);
        assert!(
            poll_once(late.as_mut()).is_pending(),
            "call 11 waits for its dependency"
        );
        lab.timeline
            .log("call 11", "admitted, waiting for the dependency");
        call("call 7", 1, &Script::new([Err(Fault::Unavailable)])).await;
        call("call 8", 1, &Script::new([Err(Fault::Unavailable)])).await;
        release.cancel();
        let result = finish(stale.as_mut());
        lab.timeline.log(
            "call 6",
            format!("returns {} | {}", show(&result), lab.breaker.state()),
        );
        assert_eq!(
            result.unwrap(),
            6,
            "B6: the stale value still goes back to its caller"
        );
        assert_state!(
            lab.breaker,
            State::Open { remaining: ms(10) },
            "B6: and changes nothing"
        );

        lab.timeline.log(
            "--",
            "7. at the deadline two callers ask at once: one probes, one is rejected; meanwhile call 11's late success is stale",
        );
        lab.advance(ms(10));
        let release = CancellationToken::new();
        let gate = release.clone();
        let probe_task = || {
            let gate = gate.clone();
            async move {
                gate.cancelled().await;
                Ok::<u32, Fault>(9)
            }
        };
        let sleeper = lab.timeline.sleeper(lab.sleeper.clone(), "call 9");
        let probe = lab
            .breaker
            .execute(1, probe_task, retryable, backoff, &cancel, &sleeper);
        let mut probe = pin!(probe);
        assert!(
            poll_once(probe.as_mut()).is_pending(),
            "steps 1-7: the call must still be waiting at this point"
        );
        lab.timeline.log(
            "call 9",
            format!("admitted as the probe | {}", lab.breaker.state()),
        );
        late_release.cancel();
        let result = finish(late.as_mut());
        lab.timeline.log(
            "call 11",
            format!(
                "returns {} (stale: admitted in g3) | {}",
                show(&result),
                lab.breaker.state()
            ),
        );
        assert_state!(
            lab.breaker,
            PROBING,
            "TODO(3): call 11's success was admitted before the circuit opened: it is stale and \
             must not close the circuit while the probe decides (B6)"
        );
        let refused = Script::new([]);
        call("call 10", 3, &refused).await;
        assert_eq!(
            refused.calls(),
            0,
            "steps 1-7: the dependency must have been called exactly 0 time(s)"
        );
        release.cancel();
        let result = finish(probe.as_mut());
        lab.timeline.log(
            "call 9",
            format!("returns {} | {}", show(&result), lab.breaker.state()),
        );

        lab.timeline.render()
    });
    insta::assert_snapshot!("worked_example", trace);
}

#[test]
fn worked_example_step_4_had_the_probe_failed() {
    let trace = run("the worked example did not finish", async {
        let lab = Lab::new(2, ms(10));
        let cancel = CancellationToken::new();
        for (who, delay) in [("call 1", 0), ("call 2", 0), ("call 3", 10)] {
            lab.advance(ms(delay));
            let script = Script::new([Err(Fault::Timeout)]);
            let sleeper = lab.timeline.sleeper(lab.sleeper.clone(), who);
            let result = lab
                .breaker
                .execute(
                    1,
                    script.traced(&lab.timeline, who),
                    retryable,
                    |_| Duration::ZERO,
                    &cancel,
                    &sleeper,
                )
                .await;
            lab.timeline.log(
                who,
                format!("returns {} | {}", show(&result), lab.breaker.state()),
            );
        }
        assert_state!(
            lab.breaker,
            State::Open { remaining: ms(10) },
            "OPEN until t=20"
        );
        lab.advance(ms(9));
        lab.timeline
            .log("--", format!("at t=19: {}", lab.breaker.state()));
        lab.timeline.render()
    });
    insta::assert_snapshot!("worked_example_failed_probe", trace);
}
