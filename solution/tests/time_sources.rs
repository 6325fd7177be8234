//! One time source: the breaker's clock and the retry loop's sleeper must
//! agree, and `execute` refuses a pair that cannot.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use retry_breaker_solution::{
    Clock, ManualClock, RetryBreaker, Sleeper, State, SystemClock, TokioClock, TokioSleeper,
};
use tokio_util::sync::CancellationToken;

/// Runs `test` on paused tokio time. A test that would hang (nothing left
/// to wake it) fails instead: paused time jumps to the guard's deadline.
fn paused(test: impl Future<Output = ()>) {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
        .block_on(async {
            tokio::time::timeout(Duration::from_secs(24 * 3600), test)
                .await
                .expect("the test hung");
        });
}

fn manual(test: impl Future<Output = ()>) {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(test);
}

/// One call of two attempts whose first fails, with an 11 s backoff, on a
/// breaker that opens at the first failure for 10 s: the second attempt is
/// the probe only if the sleep moved the breaker's clock.
async fn fail_sleep_retry<C: Clock>(
    breaker: &RetryBreaker<C>,
    sleeper: &impl Sleeper,
) -> Result<u32, String> {
    let mut replies = vec![Ok(1), Err("down")];
    breaker
        .execute(
            2,
            || std::future::ready(replies.pop().unwrap()),
            |_| true,
            |_| Duration::from_secs(11),
            &CancellationToken::new(),
            sleeper,
        )
        .await
        .map_err(|e| e.to_string())
}

#[test]
fn under_paused_tokio_time_the_tokio_clock_sees_the_sleep_and_the_cooldown_ends() {
    paused(async {
        let breaker = RetryBreaker::new(1, Duration::from_secs(10), TokioClock::new()).unwrap();
        breaker.try_acquire().unwrap().failure();
        assert_eq!(
            breaker.state(),
            State::Open {
                remaining: Duration::from_secs(10)
            }
        );

        TokioSleeper.sleep(Duration::from_secs(11)).await;
        assert_eq!(
            breaker.state(),
            State::Open {
                remaining: Duration::ZERO
            }
        );
        let probe = breaker
            .try_acquire()
            .expect("the cooldown is over: this is the probe");
        assert_eq!(
            breaker.state(),
            State::HalfOpen {
                probe_in_flight: true
            }
        );
        probe.success();
        assert_eq!(breaker.state(), State::Closed { failures: 0 });
    });
}

#[test]
fn under_paused_tokio_time_a_retry_after_the_cooldown_is_the_probe() {
    paused(async {
        let breaker = RetryBreaker::new(1, Duration::from_secs(10), TokioClock::new()).unwrap();
        assert_eq!(fail_sleep_retry(&breaker, &TokioSleeper).await, Ok(1));
        assert_eq!(breaker.state(), State::Closed { failures: 0 });
    });
}

#[test]
fn the_sleeper_of_the_breakers_own_manual_clock_moves_it() {
    manual(async {
        let clock = ManualClock::new();
        let breaker = RetryBreaker::new(1, Duration::from_secs(10), clock.clone()).unwrap();
        let sleeper = breaker.clock().sleeper();
        assert_eq!(fail_sleep_retry(&breaker, &sleeper).await, Ok(1));
        assert_eq!(clock.now(), Duration::from_secs(11));
    });
}

#[test]
fn a_manual_sleeper_on_another_manual_clock_is_refused_with_the_way_out() {
    manual(async {
        let breaker = RetryBreaker::new(1, Duration::from_secs(10), ManualClock::new()).unwrap();
        let elsewhere = ManualClock::new().sleeper();
        let message = fail_sleep_retry(&breaker, &elsewhere).await.unwrap_err();
        assert!(
            message.contains("do not move the breaker's clock"),
            "{message}"
        );
        assert!(message.contains("ManualClock::sleeper"), "{message}");
        assert_eq!(
            breaker.state(),
            State::Closed { failures: 0 },
            "refused before any attempt"
        );
    });
}

#[test]
fn the_tokio_sleeper_with_the_system_clock_is_refused() {
    paused(async {
        // Under paused time this pair would leave the circuit OPEN with
        // almost all of its cooldown left after an 11 s sleep.
        let breaker = RetryBreaker::new(1, Duration::from_secs(10), SystemClock::new()).unwrap();
        let message = fail_sleep_retry(&breaker, &TokioSleeper).await.unwrap_err();
        assert!(
            message.contains("the operating system's clock"),
            "{message}"
        );
        assert!(message.contains("TokioClock"), "{message}");
    });
}

/// A sleeper this crate knows nothing about: no check.
struct Custom(ManualClock);

impl Sleeper for Custom {
    fn sleep(&self, delay: Duration) -> impl Future<Output = ()> {
        self.0.advance(delay);
        std::future::ready(())
    }
}

#[test]
fn a_sleeper_of_unknown_source_is_trusted() {
    manual(async {
        let clock = ManualClock::new();
        let breaker = RetryBreaker::new(1, Duration::from_secs(10), clock.clone()).unwrap();
        assert_eq!(fail_sleep_retry(&breaker, &Custom(clock)).await, Ok(1));
    });
}

#[test]
fn shared_and_borrowed_clocks_read_and_pair_as_the_clock_itself() {
    manual(async {
        let clock = ManualClock::new();
        let shared = Arc::new(clock.clone());
        let breaker = RetryBreaker::new(1, Duration::from_secs(10), Arc::clone(&shared)).unwrap();
        assert_eq!(fail_sleep_retry(&breaker, &clock.sleeper()).await, Ok(1));

        let borrowed = RetryBreaker::new(1, Duration::from_secs(10), &clock).unwrap();
        assert_eq!(fail_sleep_retry(&borrowed, &clock.sleeper()).await, Ok(1));
        assert_eq!(Clock::now(&&clock), Duration::from_secs(22));
        assert_eq!(shared.now(), Duration::from_secs(22));
        assert_eq!(Clock::time_source(&&clock), shared.time_source());
    });
}
