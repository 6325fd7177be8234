//! Everything that can go wrong, in sentences a reader understands without
//! opening the source.

use std::error::Error as StdError;
use std::fmt;
use std::time::Duration;

use thiserror::Error;

use crate::time::time_source::TimeSource;

/// The breaker was configured with values that cannot work.
///
/// ```
/// use std::time::Duration;
/// use retry_breaker_solution::{ConfigError, ManualClock, RetryBreaker};
///
/// let err = RetryBreaker::new(0, Duration::from_secs(1), ManualClock::new()).unwrap_err();
/// assert_eq!(err, ConfigError::ZeroThreshold);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A threshold of zero failures would open the circuit before anything failed.
    #[error(
        "the failure threshold must be at least 1: with 0 the circuit would count as broken before a single call had failed"
    )]
    ZeroThreshold,
    /// A success threshold of zero would close the circuit without a single good probe (S2).
    #[error(
        "the success threshold must be at least 1: with 0 a half-open circuit would close before any probe had succeeded"
    )]
    ZeroSuccessThreshold,
    /// A window of size zero can hold no verdict, so it could never open (W3).
    #[error(
        "the window must hold at least 1 verdict: an empty window could never open the circuit"
    )]
    EmptyWindow,
    /// A minimum of zero verdicts would let the window open on no evidence (W3).
    #[error(
        "the window's minimum number of verdicts must be at least 1: with 0 the circuit could open before anything was called"
    )]
    ZeroMinimum,
    /// The window could never hold as many verdicts as its minimum asks (W3).
    #[error(
        "the window's minimum ({minimum} verdicts) is larger than the window ({size}), so it could never open the circuit"
    )]
    MinimumAboveSize {
        /// The minimum asked for (m).
        minimum: u32,
        /// The window's size (N).
        size: u32,
    },
    /// The failure rate is not a share in (0, 1] (or is NaN) (W3).
    #[error(
        "the window's failure rate must be above 0 and at most 1 (0.5 is half of the attempts); 0 would open on no failure, above 1 never, and NaN is not a rate"
    )]
    FailureRateOutOfRange,
    /// A bulkhead of 0 slots would refuse every attempt (H1).
    #[error(
        "a bulkhead must let at least 1 attempt through at a time: with 0 it would refuse every attempt"
    )]
    ZeroInFlight,
    /// A retry budget's window too short to be kept in its 10 slots (Q5).
    #[error(
        "the retry budget's window must be at least 10 ns, as it is kept in 10 slots of at least 1 ns; got {window:?}"
    )]
    BudgetWindowTooShort {
        /// The window asked for.
        window: Duration,
    },
    // BEGIN SOLUTION ONLY: the solution's recovery settings (G4, P3)
    /// A growing cooldown capped below the cooldown itself would shorten
    /// the very first opening (G4).
    #[error(
        "a growing cooldown's cap must be at least the cooldown ({cooldown:?}), or the first opening would be cut short; got {cap:?}"
    )]
    CapBelowCooldown {
        /// The cap asked for.
        cap: Duration,
        /// The breaker's cooldown.
        cooldown: Duration,
    },
    /// A probe timeout of 0 would call every probe overdue as it starts
    /// (P3).
    #[error(
        "a probe timeout must be longer than 0: with 0 every probe would be overdue as soon as it was admitted"
    )]
    ZeroProbeTimeout,
    /// A time-based window shorter than 10 ns cannot be kept in its 10
    /// slots (T4).
    #[error(
        "a time-based window must be at least 10 ns long, as it is kept in 10 slots of at least 1 ns; got {period:?}"
    )]
    WindowPeriodTooShort {
        /// The period asked for.
        period: Duration,
    },
    // END SOLUTION ONLY
}

/// The breaker refused to admit an attempt. The dependency was not called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[non_exhaustive]
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
    /// The circuit would admit the attempt, but the breaker's bulkhead
    /// already has `limit` attempts in flight (H1). Nothing was counted; the
    /// next attempt may find room as soon as one of those reports.
    #[error(
        "the bulkhead is full: {limit} attempts to this dependency are already in flight, so the attempt was refused without calling the dependency"
    )]
    Full {
        /// The most attempts in flight at once.
        limit: u32,
    },
}

impl Rejected {
    /// How long until an attempt could be admitted again: the rest of the
    /// cooldown, or zero while a probe decides or a bulkhead is full.
    #[must_use]
    pub fn remaining(&self) -> Duration {
        match self {
            Rejected::Open { remaining } => *remaining,
            Rejected::ProbeInFlight | Rejected::Full { .. } => Duration::ZERO,
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
///
/// It is `#[non_exhaustive]`: match it with a `_` arm, since later versions
/// may give up for new reasons.
///
/// An `ExecuteError<E>` is a [`std::error::Error`] when `E` is one, with
/// the task's error as its `source`. An error type that is not, such as
/// `anyhow::Error`, still works as `E`; [`erase`](ExecuteError::erase)
/// turns the result into an error that `?` passes on:
///
/// ```
/// use std::time::Duration;
/// use retry_breaker_solution::{backoff, ExecuteError, ManualClock, RetryBreaker};
/// use tokio_util::sync::CancellationToken;
///
/// async fn charge(breaker: &RetryBreaker<ManualClock>) -> anyhow::Result<u32> {
///     let sleeper = breaker.clock().sleeper();
///     let receipt = breaker
///         .execute(
///             2,
///             || async { Err::<u32, _>(anyhow::anyhow!("gateway down")) },
///             |_| true,
///             backoff::constant(Duration::from_millis(10)),
///             &CancellationToken::new(),
///             &sleeper,
///         )
///         .await
///         .map_err(ExecuteError::erase)?;
///     Ok(receipt)
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let breaker = RetryBreaker::new(5, Duration::from_secs(1), ManualClock::new())?;
/// let error = charge(&breaker).await.unwrap_err();
/// assert_eq!(
///     format!("{error:#}"),
///     "attempt 2 failed and execute gave up, as no attempts were left: gateway down",
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ExecuteError<E> {
    /// `execute` was asked for zero attempts.
    #[error("execute needs an attempt budget of at least 1; with 0 the task could never run")]
    // Contract: E1.
    NoAttempts,
    /// The token was cancelled before an attempt or during a backoff sleep.
    ///
    /// If an attempt of this call failed before the cancellation, its error
    /// is the `source`: the failure the call was waiting to retry, which
    /// the caller should still learn. A call cancelled before its first
    /// attempt carries none.
    #[error(
        "the call was cancelled after {attempts_made} attempt(s), so no further attempt was made"
    )]
    // Contract: E2, E7.
    Cancelled {
        /// Attempts that ran before the cancellation was noticed.
        attempts_made: u32,
        /// The error of this call's last attempt, if one ran.
        source: Option<E>,
    },
    /// The breaker refused an attempt. Retrying at once would only spin.
    ///
    /// If an attempt of this call failed before the refusal, its error is
    /// the `source`: that failure, or one like it, is why the circuit
    /// refused, and the caller should learn it.
    #[error("attempt {attempt} was refused: {rejection}")]
    // Contract: E3, E10.
    Rejected {
        /// The attempt that was refused (1-based).
        attempt: u32,
        /// Why the breaker refused it.
        rejection: Rejected,
        /// The error of this call's previous attempt, if there was one.
        source: Option<E>,
    },
    /// The sleeper's sleeps would not move the breaker's clock, so every
    /// cooldown would last forever. Nothing was attempted: this is a wiring
    /// mistake, reported on the first call.
    #[error(
        "execute was handed a sleeper whose sleeps do not move the breaker's clock (the breaker \
         reads {clock}, the sleeper waits on {sleeper}), so a cooldown would never run out: {advice}"
    )]
    TimeMismatch {
        /// The time the breaker's clock reads.
        clock: TimeSource,
        /// The time the sleeper waits on.
        sleeper: TimeSource,
        /// What to do instead.
        advice: &'static str,
    },
    /// The task failed and was not retried: it was the last attempt, or the
    /// error is not retryable. `reason` says which.
    #[error("attempt {attempt} failed and execute gave up, as {reason}")]
    // Contract: E5.
    Task {
        /// The attempt whose error this is (1-based).
        attempt: u32,
        /// Why this failure was not retried.
        reason: GaveUp,
        /// The task's own error, unchanged.
        source: E,
    },
}

/// Why [`execute`](crate::RetryBreaker::execute) did not retry a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GaveUp {
    /// It was the last attempt the budget allowed (the error may well have
    /// been retryable).
    NoAttemptsLeft,
    /// The `retryable` predicate turned the error down, with attempts left.
    NotRetryable,
    /// The error was retryable, with attempts left, but there was no copy of
    /// the request to send again: the clone function of a `BreakerLayer`
    /// said no (M2).
    NoCopyLeft,
    /// The error was retryable, with attempts left, but the policy's
    /// [`RetryBudget`](crate::RetryBudget) had no retry left in its window
    /// (Q2).
    RetryBudgetSpent,
}

impl GaveUp {
    /// The reason for giving up after attempt `attempt` of `budget`: with
    /// none left it is the budget, otherwise the predicate must have said no.
    #[must_use]
    pub fn after(attempt: u32, budget: u32) -> Self {
        if attempt >= budget {
            GaveUp::NoAttemptsLeft
        } else {
            GaveUp::NotRetryable
        }
    }
}

impl fmt::Display for GaveUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GaveUp::NoAttemptsLeft => "no attempts were left",
            GaveUp::NotRetryable => "the error is not retryable",
            GaveUp::NoCopyLeft => "no copy of the request was left to retry with",
            GaveUp::RetryBudgetSpent => "the retry budget had no retry left",
        })
    }
}

impl<E> ExecuteError<E> {
    /// The task's last error: the reason for [`ExecuteError::Task`], or the
    /// failure before a refusal or a cancellation.
    #[must_use]
    pub fn task_error(&self) -> Option<&E> {
        match self {
            ExecuteError::Task { source, .. } => Some(source),
            ExecuteError::Rejected { source, .. } | ExecuteError::Cancelled { source, .. } => {
                source.as_ref()
            }
            _ => None,
        }
    }

    /// Takes the task's last error out, as [`task_error`](Self::task_error)
    /// finds it.
    #[must_use]
    pub fn into_task_error(self) -> Option<E> {
        match self {
            ExecuteError::Task { source, .. } => Some(source),
            ExecuteError::Rejected { source, .. } | ExecuteError::Cancelled { source, .. } => {
                source
            }
            _ => None,
        }
    }
}

impl<E> ExecuteError<E>
where
    E: Into<Box<dyn StdError + Send + Sync>>,
{
    /// The same error with the task's error boxed as an [`ErasedError`]:
    /// a [`std::error::Error`] whatever `E` was, so `?` can pass it into an
    /// `anyhow::Result` or a `Box<dyn Error>` even when `E` is
    /// `anyhow::Error`, which is not itself a `std::error::Error`.
    ///
    /// (No blanket impl can make `ExecuteError<anyhow::Error>` an error
    /// directly: one for "`E` is an error" and one for `anyhow::Error` would
    /// overlap should anyhow ever implement `Error`, so Rust refuses both.)
    #[must_use]
    pub fn erase(self) -> ExecuteError<ErasedError> {
        let erase = |source: E| ErasedError(source.into());
        match self {
            ExecuteError::NoAttempts => ExecuteError::NoAttempts,
            ExecuteError::Cancelled {
                attempts_made,
                source,
            } => ExecuteError::Cancelled {
                attempts_made,
                source: source.map(erase),
            },
            ExecuteError::TimeMismatch {
                clock,
                sleeper,
                advice,
            } => ExecuteError::TimeMismatch {
                clock,
                sleeper,
                advice,
            },
            ExecuteError::Rejected {
                attempt,
                rejection,
                source,
            } => ExecuteError::Rejected {
                attempt,
                rejection,
                source: source.map(erase),
            },
            ExecuteError::Task {
                attempt,
                reason,
                source,
            } => ExecuteError::Task {
                attempt,
                reason,
                source: erase(source),
            },
        }
    }
}

/// A task's error behind a box, from [`ExecuteError::erase`]. It shows as
/// the error it holds, and its `source` is that error's own `source`, so
/// the chain reads as before.
pub struct ErasedError(Box<dyn StdError + Send + Sync>);

impl ErasedError {
    /// The boxed error, to inspect or downcast.
    #[must_use]
    pub fn into_inner(self) -> Box<dyn StdError + Send + Sync> {
        self.0
    }
}

impl fmt::Debug for ErasedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for ErasedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl StdError for ErasedError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.0.source()
    }
}
