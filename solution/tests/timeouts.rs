//! A deadline per attempt makes a hang a failure the breaker counts; a
//! timeout around the whole call does not.

use std::future::{Future, pending};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use retry_breaker_solution::timeout::{TimedOut, per_attempt};
use retry_breaker_solution::{
    ExecuteError, RetryBreaker, State, TokioClock, TokioSleeper, backoff,
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

/// A dependency that never answers.
async fn hangs() -> Result<(), TimedOut> {
    pending().await
}

#[test]
fn a_hang_inside_a_per_attempt_deadline_is_a_counted_failure() {
    paused(async {
        let breaker = RetryBreaker::new(2, Duration::from_secs(30), TokioClock::new()).unwrap();
        let started = tokio::time::Instant::now();
        let attempts = AtomicU32::new(0);
        let result = breaker
            .execute(
                3,
                || {
                    attempts.fetch_add(1, Ordering::Relaxed);
                    per_attempt(Duration::from_secs(1), hangs())
                },
                |_| true,
                backoff::constant(Duration::from_millis(500)),
                &CancellationToken::new(),
                &TokioSleeper,
            )
            .await;
        // Two hangs, two failures: the circuit opened and refused the third.
        assert!(
            matches!(
                result,
                Err(ExecuteError::Rejected { attempt: 3, source: Some(TimedOut { limit }), .. })
                    if limit == Duration::from_secs(1)
            ),
            "{result:?}"
        );
        assert_eq!(attempts.load(Ordering::Relaxed), 2);
        assert!(matches!(breaker.state(), State::Open { .. }));
        // Two deadlines of 1 s and two backoffs of 0.5 s (the second before
        // the refused attempt), all of it on paused time.
        assert_eq!(started.elapsed(), Duration::from_secs(3));
    });
}

#[test]
fn an_answer_within_the_deadline_passes_through() {
    paused(async {
        let answer = per_attempt(Duration::from_secs(1), async {
            tokio::time::sleep(Duration::from_millis(999)).await;
            Ok::<_, TimedOut>(4)
        })
        .await;
        assert_eq!(answer, Ok(4));
        let late = per_attempt(Duration::from_secs(1), async {
            tokio::time::sleep(Duration::from_millis(1_001)).await;
            Ok::<_, TimedOut>(4)
        })
        .await;
        assert_eq!(
            late,
            Err(TimedOut {
                limit: Duration::from_secs(1)
            })
        );
    });
}

#[test]
fn a_timeout_around_the_whole_call_never_opens_the_circuit() {
    paused(async {
        let breaker = RetryBreaker::new(1, Duration::from_secs(30), TokioClock::new()).unwrap();
        let cancel = CancellationToken::new();
        for _ in 0..5 {
            let call = breaker.execute(
                3,
                hangs,
                |_| true,
                backoff::constant(Duration::from_millis(500)),
                &cancel,
                &TokioSleeper,
            );
            assert!(
                tokio::time::timeout(Duration::from_secs(1), call)
                    .await
                    .is_err()
            );
        }
        // Five hangs, and the breaker saw none of them.
        assert_eq!(breaker.state(), State::Closed { failures: 0 });
    });
}
