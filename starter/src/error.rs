//! Everything that can go wrong, in sentences a reader understands without
//! opening the source.

use std::time::Duration;

use thiserror::Error;

/// The breaker was configured with values that cannot work.
///
/// ```
/// use std::time::Duration;
/// use retry_breaker_starter::{ConfigError, ManualClock, RetryBreaker};
///
/// let err = RetryBreaker::new(0, Duration::from_secs(1), ManualClock::new()).unwrap_err();
/// assert_eq!(err, ConfigError::ZeroThreshold);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum ConfigError {
    /// A threshold of zero failures would open the circuit before anything failed.
    #[error(
        "the failure threshold must be at least 1: with 0 the circuit would count as broken before a single call had failed"
    )]
    ZeroThreshold,
}

/// The breaker refused to admit an attempt. The dependency was not called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum Rejected {
    /// The circuit is open and its cooldown has not run out.
    #[error(
        "the circuit is open, so the attempt was refused without calling the dependency; {}",
        describe_remaining(*remaining)
    )]
    Open {
        /// How much of the cooldown is left ([`Duration::MAX`]: it never ends).
        remaining: Duration,
    },
    /// The circuit is half-open and its single probe has not reported yet.
    #[error(
        "the circuit is half-open and its single probe is still in flight, so the attempt was refused without calling the dependency"
    )]
    ProbeInFlight,
}

impl Rejected {
    /// How long until an attempt could be admitted again: the rest of the
    /// cooldown, or zero while a probe decides.
    pub fn remaining(&self) -> Duration {
        match self {
            Rejected::Open { remaining } => *remaining,
            Rejected::ProbeInFlight => Duration::ZERO,
        }
    }
}

fn describe_remaining(remaining: Duration) -> String {
    if remaining == Duration::MAX {
        "the cooldown is too long for the clock to represent, so the circuit stays open".to_owned()
    } else {
        format!("the cooldown ends in {remaining:?}")
    }
}

/// Why [`RetryBreaker::execute`](crate::RetryBreaker::execute) gave up.
///
/// The task's own error is kept whole as the `source` of
/// [`ExecuteError::Task`].
#[derive(Debug, Error)]
pub enum ExecuteError<E> {
    /// `execute` was asked for zero attempts (E1).
    #[error("execute needs an attempt budget of at least 1; with 0 the task could never run")]
    NoAttempts,
    /// The token was cancelled before an attempt or during a backoff sleep (E2, E7).
    #[error(
        "the call was cancelled after {attempts_made} attempt(s), so no further attempt was made"
    )]
    Cancelled {
        /// Attempts that ran before the cancellation was noticed.
        attempts_made: u32,
    },
    /// The breaker refused an attempt (E3). Retrying at once would only spin.
    ///
    /// If an attempt of this call failed before the refusal, its error is
    /// the `source` (E10): that failure, or one like it, is why the circuit
    /// refused, and the caller should learn it.
    #[error("attempt {attempt} was refused: {rejection}")]
    Rejected {
        /// The attempt that was refused (1-based).
        attempt: u32,
        /// Why the breaker refused it.
        rejection: Rejected,
        /// The error of this call's previous attempt, if there was one.
        source: Option<E>,
    },
    /// The task failed and was not retried: it was the last attempt, or the
    /// error is not retryable (E5).
    #[error("attempt {attempt} failed and execute gave up (no attempts left, or not retryable)")]
    Task {
        /// The attempt whose error this is (1-based).
        attempt: u32,
        /// The task's own error, unchanged.
        source: E,
    },
}

impl<E> ExecuteError<E> {
    /// The task's last error: the reason for [`ExecuteError::Task`], or the
    /// failure before a refusal (E10).
    pub fn task_error(&self) -> Option<&E> {
        match self {
            ExecuteError::Task { source, .. } => Some(source),
            ExecuteError::Rejected { source, .. } => source.as_ref(),
            _ => None,
        }
    }

    /// Takes the task's last error out, as [`task_error`](Self::task_error)
    /// finds it.
    pub fn into_task_error(self) -> Option<E> {
        match self {
            ExecuteError::Task { source, .. } => Some(source),
            ExecuteError::Rejected { source, .. } => source,
            _ => None,
        }
    }
}
