//! Errors that compose: the reason for giving up, and `anyhow`.

use std::future::Future;
use std::time::Duration;

use retry_breaker_solution::{ExecuteError, GaveUp, ManualClock, RetryBreaker, backoff};
use tokio_util::sync::CancellationToken;

fn block_on<T>(future: impl Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(future)
}

async fn always_fails(attempts: u32, retryable: bool) -> ExecuteError<&'static str> {
    let clock = ManualClock::new();
    let breaker = RetryBreaker::new(10, Duration::from_secs(1), clock.clone()).unwrap();
    breaker
        .execute(
            attempts,
            || async { Err::<(), _>("down") },
            |_| retryable,
            backoff::constant(Duration::from_millis(1)),
            &CancellationToken::new(),
            &clock.sleeper(),
        )
        .await
        .unwrap_err()
}

#[test]
fn the_task_error_says_why_execute_gave_up() {
    block_on(async {
        let exhausted = always_fails(3, true).await;
        assert!(
            matches!(
                exhausted,
                ExecuteError::Task {
                    attempt: 3,
                    reason: GaveUp::NoAttemptsLeft,
                    ..
                }
            ),
            "{exhausted:?}"
        );
        assert_eq!(
            exhausted.to_string(),
            "attempt 3 failed and execute gave up, as no attempts were left"
        );

        let turned_down = always_fails(3, false).await;
        assert!(
            matches!(
                turned_down,
                ExecuteError::Task {
                    attempt: 1,
                    reason: GaveUp::NotRetryable,
                    ..
                }
            ),
            "{turned_down:?}"
        );
        assert_eq!(
            turned_down.to_string(),
            "attempt 1 failed and execute gave up, as the error is not retryable"
        );

        // The last attempt gives up for want of attempts, retryable or not.
        let last = always_fails(1, false).await;
        assert!(matches!(
            last,
            ExecuteError::Task {
                reason: GaveUp::NoAttemptsLeft,
                ..
            }
        ));
    });
}

#[test]
fn gave_up_after_reads_the_budget() {
    assert_eq!(GaveUp::after(3, 3), GaveUp::NoAttemptsLeft);
    assert_eq!(GaveUp::after(1, 3), GaveUp::NotRetryable);
}

/// The compile test: an `anyhow` task error, passed on with `?`.
async fn charge(breaker: &RetryBreaker<ManualClock>) -> anyhow::Result<u32> {
    let value = breaker
        .execute(
            2,
            || async { Err::<u32, _>(anyhow::anyhow!("gateway down").context("charging order 7")) },
            |_: &anyhow::Error| true,
            backoff::constant(Duration::from_millis(10)),
            &CancellationToken::new(),
            &breaker.clock().sleeper(),
        )
        .await
        .map_err(ExecuteError::erase)?;
    Ok(value)
}

#[test]
fn an_anyhow_task_error_reaches_an_anyhow_result_with_its_chain() {
    block_on(async {
        let breaker = RetryBreaker::new(5, Duration::from_secs(1), ManualClock::new()).unwrap();
        let error = charge(&breaker).await.unwrap_err();
        let chain: Vec<String> = error.chain().map(ToString::to_string).collect();
        assert_eq!(
            chain,
            [
                "attempt 2 failed and execute gave up, as no attempts were left",
                "charging order 7",
                "gateway down",
            ]
        );
        let execute_error = error
            .downcast_ref::<ExecuteError<retry_breaker_solution::ErasedError>>()
            .expect("the ExecuteError is in the chain");
        assert!(matches!(
            execute_error,
            ExecuteError::Task { attempt: 2, .. }
        ));
    });
}

#[test]
fn a_refusal_after_a_failure_hands_that_failure_back() {
    use retry_breaker_solution::Rejected;
    let refused = ExecuteError::Rejected {
        attempt: 2,
        rejection: Rejected::ProbeInFlight,
        source: Some("the first attempt timed out"),
    };
    assert_eq!(refused.task_error(), Some(&"the first attempt timed out"));
    assert_eq!(
        refused.into_task_error(),
        Some("the first attempt timed out")
    );
}

#[test]
fn an_erased_error_debugs_as_the_error_inside() {
    let erased = ExecuteError::Task {
        attempt: 1,
        reason: GaveUp::after(1, 1),
        source: std::io::Error::other("gateway down"),
    }
    .erase();
    let inner = erased.into_task_error().expect("a task error");
    assert!(format!("{inner:?}").contains("gateway down"), "{inner:?}");
}
