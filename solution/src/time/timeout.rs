//! A deadline for each attempt, so that a hang counts as a failure.
//!
//! A dependency that hangs is the one the breaker most needs to see, and the
//! one it cannot see on its own: an attempt that never finishes never
//! reports. Wrapping the whole call in `tokio::time::timeout` does not help.
//! When that timeout fires it drops the `execute` future, and a dropped
//! attempt records no verdict (nothing was observed), so however often the
//! dependency hangs the circuit never opens, and a hanging probe is only
//! handed back for the next caller to hang on.
//!
//! Put the deadline inside the task instead, with [`per_attempt`]: the hang
//! then ends as the attempt's own `Err`, which the breaker counts, the
//! `retryable` predicate may retry, and the caller sees.

use std::future::Future;
use std::time::Duration;

use thiserror::Error;

/// An attempt did not finish within its deadline, from [`per_attempt`].
///
/// Convert it into the task's error type with `From` (`#[from]` in a
/// `thiserror` enum); `anyhow::Error` and `Box<dyn Error>` take it as it is.
///
/// It is `#[non_exhaustive]`, so later versions can say more about the
/// timeout: read `limit`, build one with [`TimedOut::new`], and match it
/// as `TimedOut { limit, .. }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Error)]
#[error("the attempt did not finish within {limit:?}")]
#[non_exhaustive]
pub struct TimedOut {
    /// The deadline the attempt had.
    pub limit: Duration,
}

impl TimedOut {
    /// The timeout of an attempt whose deadline was `limit`, as
    /// [`per_attempt`] reports it (to compare with, or for a deadline of
    /// your own).
    #[must_use]
    pub const fn new(limit: Duration) -> Self {
        TimedOut { limit }
    }
}

/// Runs one attempt for at most `limit`; past that, drops it and fails with
/// [`TimedOut`], converted into the attempt's error type.
///
/// Use it inside the task, so that every attempt has its own deadline and a
/// hang is a failure the breaker counts:
///
/// ```
/// use std::time::Duration;
/// use retry_breaker_solution::{backoff, timeout, RetryBreaker, State, TokioClock, TokioSleeper};
/// use tokio_util::sync::CancellationToken;
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().unwrap().block_on(async {
/// let breaker = RetryBreaker::new(2, Duration::from_secs(30), TokioClock::new())?;
/// let hangs = || async { std::future::pending::<Result<(), timeout::TimedOut>>().await };
///
/// let result = breaker
///     .execute(
///         2,
///         || timeout::per_attempt(Duration::from_secs(1), hangs()),
///         |_| true,
///         backoff::constant(Duration::from_millis(100)),
///         &CancellationToken::new(),
///         &TokioSleeper,
///     )
///     .await;
/// assert_eq!(result.unwrap_err().into_task_error(), Some(timeout::TimedOut::new(Duration::from_secs(1))));
/// assert!(matches!(breaker.state(), State::Open { .. }), "two hangs, two failures");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
///
/// # Errors
///
/// The attempt's own error, or [`TimedOut`] (as `E`) once `limit` has
/// passed on tokio's clock.
pub async fn per_attempt<T, E, F>(limit: Duration, attempt: F) -> Result<T, E>
where
    F: Future<Output = Result<T, E>>,
    E: From<TimedOut>,
{
    // BEGIN ANCHOR(attempt-timeout)
    match tokio::time::timeout(limit, attempt).await {
        Ok(outcome) => outcome,
        Err(_elapsed) => Err(E::from(TimedOut::new(limit))),
    }
    // END ANCHOR
}
