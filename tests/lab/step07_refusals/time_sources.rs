//! A clock and a sleeper that cannot agree (E9): the retry loop sleeps
//! through the sleeper and the breaker reads its clock, so such a pair would
//! leave every cooldown running forever. `execute` refuses it before
//! anything happens: no task, no permit, no sleep, nothing recorded.

use std::sync::atomic::Ordering;
use std::time::Duration;

use retry_breaker::{ManualClock, State, SystemClock, TimeSource, TokioClock, TokioSleeper};

use crate::support::time_pairs::{
    Named, Reads, WaitsOn, agree, breaker, call_on, on_time, pairs, refusal, time_name,
};
use crate::support::{Ending, Script, run, run_paused};

const LOOPED: &str = "a call with a mismatched clock and sleeper did not end: TODO(7)";

#[test]
fn e9_every_pair_of_sources_that_cannot_agree_is_refused_before_anything_happens() {
    for (paused, clock, slept) in pairs() {
        if !agree(clock.1, slept.1, paused) {
            refused_before_anything(paused, clock, slept);
        }
    }
}

fn refused_before_anything(paused: bool, (clock_name, clock): Named, (sleeper_name, slept): Named) {
    on_time(LOOPED, paused, async move {
        let pair = format!(
            "a clock on {clock_name} time and a sleeper on {sleeper_name}, {}",
            time_name(paused)
        );
        let script = Script::new([Ok(1)]);
        let sleeper = WaitsOn::new(slept);
        let (result, state) = call_on(Reads(clock), &sleeper, &script).await;
        assert_eq!(
            result.ending(),
            "TimeMismatch",
            "TODO(7): E9: {pair} cannot agree, so `execute` refuses them; got {result:?}"
        );
        assert_eq!(
            script.calls(),
            0,
            "TODO(7): E9: {pair} are refused before the task is called"
        );
        assert_eq!(
            state,
            State::Open {
                remaining: Duration::ZERO
            },
            "TODO(7): E9: {pair} are refused before the breaker is asked: no probe was taken"
        );
        assert_eq!(
            sleeper.asked.load(Ordering::SeqCst),
            0,
            "TODO(7): E9: {pair} are refused before any sleep"
        );
        let Err(retry_breaker::ExecuteError::TimeMismatch {
            clock: read,
            sleeper: waited,
            ..
        }) = result
        else {
            unreachable!("checked above")
        };
        assert_eq!(
            read, clock,
            "TODO(7): E9: the error names the clock's source"
        );
        assert_eq!(
            waited, slept,
            "TODO(7): E9: the error names the sleeper's source"
        );
    });
}

#[test]
fn e9_a_manual_sleeper_on_another_manual_clock_is_refused_with_the_way_out() {
    run(LOOPED, async {
        let breaker = breaker(ManualClock::new());
        let elsewhere = ManualClock::new().sleeper();
        let message = refusal(&breaker, &elsewhere).await;
        assert!(
            message.contains("do not move the breaker's clock"),
            "TODO(7): E9: the refusal says what is wrong: {message}"
        );
        assert!(
            message.contains("ManualClock::sleeper"),
            "TODO(7): E9: the refusal says what to do: {message}"
        );
        assert_eq!(
            breaker.state(),
            State::Closed { failures: 0 },
            "TODO(7): E9: refused before any attempt"
        );
    });
}

#[test]
fn e9_the_tokio_sleeper_with_the_system_clock_is_refused_while_tokio_time_is_paused() {
    run_paused(LOOPED, async {
        // Under paused time this pair would leave the circuit OPEN with
        // almost all of its cooldown left after an 11 s sleep.
        let breaker = breaker(SystemClock::new());
        let message = refusal(&breaker, &TokioSleeper).await;
        assert!(
            message.contains("the operating system's clock"),
            "TODO(7): E9: the refusal names the clock's time: {message}"
        );
        assert!(
            message.contains("paused") && message.contains("TokioClock"),
            "TODO(7): E9: the refusal says why and what to do: {message}"
        );
    });
}

#[test]
fn e9_an_os_time_sleeper_with_the_tokio_clock_is_refused_while_tokio_time_is_paused() {
    run_paused(LOOPED, async {
        let breaker = breaker(TokioClock::new());
        let sleeper = WaitsOn::new(TimeSource::OPERATING_SYSTEM);
        let message = refusal(&breaker, &sleeper).await;
        assert!(
            message.contains("paused") && message.contains("TokioSleeper"),
            "TODO(7): E9: the refusal says why and what to do: {message}"
        );
    });
}

#[test]
fn e9_the_tokio_sleeper_with_a_manual_clock_is_refused_with_the_way_out() {
    run(LOOPED, async {
        let breaker = breaker(ManualClock::new());
        let message = refusal(&breaker, &TokioSleeper).await;
        assert!(
            message.contains("TokioClock") && !message.contains("paused"),
            "TODO(7): E9: the refusal says what to do, whatever tokio's time does: {message}"
        );
    });
}
