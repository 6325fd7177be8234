//! An `anyhow` task error reaches an `anyhow::Result` with `?`, its chain
//! whole. (The suite in `tests/lab` checks everything else about errors; this
//! one needs `anyhow`, a dependency of this crate's tests alone.)

use std::future::Future;
use std::time::Duration;

use retry_breaker_solution::{ExecuteError, ManualClock, RetryBreaker, backoff};
use tokio_util::sync::CancellationToken;

fn block_on<T>(future: impl Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(future)
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
