//! One time source (E9): the retry loop sleeps through the sleeper and the
//! breaker reads its clock, so a retry after a backoff finds the cooldown
//! moved on exactly when the two agree. Every pair that can agree goes
//! ahead; refusing the others is step 7's.

use std::sync::Arc;
use std::time::Duration;

use retry_breaker::{Clock, ManualClock, Sleeper, State, SystemClock, TokioClock, TokioSleeper};
use tokio_util::sync::CancellationToken;

use crate::support::time_pairs::{
    Custom, Named, Reads, WaitsOn, agree, breaker, call_on, fail_sleep_retry, on_time, pairs,
    time_name,
};
use crate::support::{Ending, Fault, Script, run, run_paused};

const LOOPED: &str = "a call with a clock and a sleeper that agree did not end: TODO(6)";

#[test]
fn e9_every_pair_that_can_agree_is_let_through() {
    for (paused, clock, slept) in pairs() {
        if agree(clock.1, slept.1, paused) {
            let_through(paused, clock, slept);
        }
    }
}

fn let_through(paused: bool, (clock_name, clock): Named, (sleeper_name, slept): Named) {
    on_time(LOOPED, paused, async move {
        let script = Script::new([Ok(1)]);
        let (result, state) = call_on(Reads(clock), &WaitsOn::new(slept), &script).await;
        assert_eq!(
            result.ending(),
            "Ok",
            "TODO(6): a clock on {clock_name} time and a sleeper on {sleeper_name} agree \
                     {} (the same source, one this crate does not know, or the operating \
                     system's and tokio's while tokio's time runs), so the call goes ahead (E9); \
                     got {result:?}",
            time_name(paused)
        );
        assert_eq!(
            state,
            State::Closed { failures: 0 },
            "TODO(6): the call's probe succeeded and closed the circuit (E9)"
        );
    });
}

#[test]
fn e9_the_sleeper_of_the_breakers_own_manual_clock_moves_it() {
    run(LOOPED, async {
        let clock = ManualClock::new();
        let breaker = breaker(clock.clone());
        let sleeper = breaker.clock().sleeper();
        let result = fail_sleep_retry(&breaker, &sleeper).await;
        assert_eq!(
            result.ok(),
            Some(1),
            "TODO(6): the sleep moved the breaker's own clock past the cooldown, so attempt 2 \
             is the probe and succeeds (E9)"
        );
        assert_eq!(
            clock.now(),
            Duration::from_secs(11),
            "E9: the one sleep moved the clock"
        );
    });
}

#[test]
fn e9_the_tokio_sleeper_with_the_system_clock_works_while_tokio_time_runs() {
    run(LOOPED, async {
        // Running, tokio's time is the operating system's: two production
        // types of this crate that agree.
        let breaker = breaker(SystemClock::new());
        let script = Script::new([Ok(1)]);
        let result = breaker
            .execute(
                2,
                script.task(),
                |_: &Fault| true,
                |_| Duration::from_secs(1),
                &CancellationToken::new(),
                &TokioSleeper,
            )
            .await;
        assert_eq!(
            result.ok(),
            Some(1),
            "TODO(6): `SystemClock` and `TokioSleeper` agree while tokio's time runs, so the \
             call goes ahead (E9)"
        );
    });
}

/// A control: the clock and the sleeper are provided, so this passes before
/// step 6; it pins down the pair that the retry loop's tests rely on.
#[test]
fn e9_under_paused_tokio_time_the_tokio_sleeper_moves_the_tokio_clock() {
    run_paused(LOOPED, async {
        let breaker = breaker(TokioClock::new());
        breaker.try_acquire().expect("closed").failure();
        assert_eq!(
            breaker.state(),
            State::Open {
                remaining: Duration::from_secs(10)
            },
            "E9: one failure opens the circuit for its 10 s cooldown"
        );
        TokioSleeper.sleep(Duration::from_secs(11)).await;
        assert_eq!(
            breaker.state(),
            State::Open {
                remaining: Duration::ZERO
            },
            "E9: an 11 s sleep on paused tokio time ends a 10 s cooldown on the tokio clock"
        );
        let probe = breaker
            .try_acquire()
            .expect("E9: the cooldown is over on the tokio clock, so this is the probe");
        assert_eq!(
            breaker.state(),
            State::HalfOpen {
                probe_in_flight: true
            },
            "E9: the probe is out"
        );
        probe.success();
        assert_eq!(
            breaker.state(),
            State::Closed { failures: 0 },
            "E9: the good probe closes the circuit"
        );
    });
}

#[test]
fn e9_under_paused_tokio_time_a_retry_after_the_cooldown_is_the_probe() {
    run_paused(LOOPED, async {
        let breaker = breaker(TokioClock::new());
        let result = fail_sleep_retry(&breaker, &TokioSleeper).await;
        assert_eq!(
            result.ok(),
            Some(1),
            "TODO(6): the tokio sleeper moved the tokio clock, so attempt 2 is the probe (E9)"
        );
        assert_eq!(
            breaker.state(),
            State::Closed { failures: 0 },
            "TODO(6): the probe succeeded and closed the circuit (E9)"
        );
    });
}

#[test]
fn e9_a_sleeper_of_unknown_source_is_trusted() {
    run(LOOPED, async {
        let clock = ManualClock::new();
        let breaker = breaker(clock.clone());
        let result = fail_sleep_retry(&breaker, &Custom(clock)).await;
        assert_eq!(
            result.ok(),
            Some(1),
            "TODO(6): a sleeper this crate does not know is not checked, and this one moves the \
             breaker's clock (E9)"
        );
    });
}

#[test]
fn e9_shared_and_borrowed_clocks_read_and_pair_as_the_clock_itself() {
    run(LOOPED, async {
        let clock = ManualClock::new();
        let shared = Arc::new(clock.clone());
        let on_shared = breaker(Arc::clone(&shared));
        let result = fail_sleep_retry(&on_shared, &clock.sleeper()).await;
        assert_eq!(
            result.ok(),
            Some(1),
            "TODO(6): an `Arc` of the clock pairs with the clock's sleeper (E9)"
        );
        let on_borrowed = breaker(&clock);
        let result = fail_sleep_retry(&on_borrowed, &clock.sleeper()).await;
        assert_eq!(
            result.ok(),
            Some(1),
            "TODO(6): a borrowed clock pairs with the clock's sleeper (E9)"
        );
        assert_eq!(
            Clock::now(&&clock),
            Duration::from_secs(22),
            "E9: a borrowed clock reads the clock's time"
        );
        assert_eq!(
            shared.now(),
            Duration::from_secs(22),
            "E9: a shared clock reads the clock's time"
        );
        assert_eq!(
            Clock::time_source(&&clock),
            shared.time_source(),
            "E9: a borrowed and a shared clock name the same source"
        );
    });
}
