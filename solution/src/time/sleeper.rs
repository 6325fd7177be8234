//! Waiting, injected: the retry loop never sleeps on its own.
//!
//! Backoff between attempts goes through a [`Sleeper`]. Production code
//! passes a [`TokioSleeper`] (with a [`TokioClock`](crate::TokioClock) on the
//! breaker); tests pass the [`ManualSleeper`] of the breaker's
//! [`ManualClock`], which returns at once after moving that clock forward, so
//! retries are instant and every delay is on record.

use std::future::{Future, Ready, ready};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::time::clock::{Clock, ManualClock};
use crate::time::time_source::TimeSource;

/// Something that can wait for a while.
///
/// A sleep counts as *asked for* when [`sleep`](Sleeper::sleep) is called,
/// whether or not its future is ever awaited: the test sleepers record it at
/// that moment. So a retry loop that must not sleep must not even call
/// `sleep`.
///
/// The future has a name, [`Sleep`](Sleeper::Sleep), so code generic over
/// the sleeper can ask that it be `Send` and spawn a call that sleeps on
/// it; it need not be, so a sleeper for a single-threaded executor (a
/// `LocalSet`, a browser's timers) fits too. The sleepers of this crate's
/// sleeps are `Send`.
///
/// ```
/// use retry_breaker_solution::{Clock, ExecuteError, RetryBreaker, Sleeper, backoff};
/// use tokio_util::sync::CancellationToken;
///
/// // Generic over the clock and the sleeper, and spawned.
/// fn spawn_call<C, S>(breaker: std::sync::Arc<RetryBreaker<C>>, sleeper: S)
///     -> tokio::task::JoinHandle<Result<u32, ExecuteError<String>>>
/// where
///     C: Clock + Send + Sync + 'static,
///     S: Sleeper + Send + Sync + 'static,
///     S::Sleep: Send,
/// {
///     tokio::spawn(async move {
///         let cancel = CancellationToken::new();
///         let policy = backoff::constant(std::time::Duration::ZERO);
///         breaker
///             .execute(2, || async { Ok(4) }, |_: &String| true, policy, &cancel, &sleeper)
///             .await
///     })
/// }
/// # let clock = retry_breaker_solution::ManualClock::new();
/// # let breaker = std::sync::Arc::new(RetryBreaker::new(3, std::time::Duration::from_secs(1), clock.clone()).unwrap());
/// # let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).build().unwrap();
/// # let value = runtime.block_on(async { spawn_call(breaker, clock.sleeper()).await.unwrap() });
/// # assert_eq!(value.ok(), Some(4));
/// ```
pub trait Sleeper {
    /// What [`sleep`](Sleeper::sleep) returns: completes once the delay has
    /// passed, and dropping it stops the wait. It owns what it needs (a
    /// clone of what it shares with the sleeper), so that a bound such as
    /// `S::Sleep: Send` says all there is to say.
    type Sleep: Future<Output = ()>;

    /// Waits for `delay`. Dropping the future stops the wait.
    fn sleep(&self, delay: Duration) -> Self::Sleep;

    /// Which time the sleeps pass on: `execute` refuses a sleeper whose
    /// sleeps would not move the breaker's clock. [`TimeSource::UNKNOWN`]
    /// (no check) unless overridden.
    fn time_source(&self) -> TimeSource {
        TimeSource::UNKNOWN
    }
}

/// Real sleeping on the tokio timer, paired with
/// [`TokioClock`](crate::TokioClock). Needs a tokio runtime with time
/// enabled.
///
/// ```
/// use std::time::Duration;
/// use retry_breaker_solution::{Sleeper, TokioSleeper};
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// TokioSleeper.sleep(Duration::from_millis(1)).await;
/// # });
/// ```
#[cfg(feature = "tokio")]
#[derive(Debug, Clone, Copy, Default)]
pub struct TokioSleeper;

#[cfg(feature = "tokio")]
impl Sleeper for TokioSleeper {
    type Sleep = tokio::time::Sleep;

    fn sleep(&self, delay: Duration) -> Self::Sleep {
        // tokio clamps a deadline it cannot represent to a far future, so even
        // `Duration::MAX` waits (practically) forever instead of panicking.
        tokio::time::sleep(delay)
    }

    fn time_source(&self) -> TimeSource {
        TimeSource::TOKIO
    }
}

/// A sleeper for tests: each sleep moves its [`ManualClock`] forward by the
/// requested delay, writes the delay down, and completes at once. Get it
/// from the breaker's clock with [`ManualClock::sleeper`].
///
/// All of that happens when the sleep is asked for, that is when
/// [`sleep`](Sleeper::sleep) is called, so a sleep that is asked for and then
/// never awaited is still on record.
///
/// ```
/// use std::time::Duration;
/// use retry_breaker_solution::{Clock, ManualClock, Sleeper};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let clock = ManualClock::new();
/// let sleeper = clock.sleeper();
/// sleeper.sleep(Duration::from_secs(3)).await;
/// assert_eq!(clock.now(), Duration::from_secs(3));
/// assert_eq!(sleeper.delays(), [Duration::from_secs(3)]);
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct ManualSleeper {
    clock: ManualClock,
    delays: Arc<Mutex<Vec<Duration>>>,
}

// Here, beside the sleeper, so that the clock needs nothing of sleeping.
impl ManualClock {
    /// A sleeper whose every sleep moves this clock (and its clones)
    /// forward: the only sleeper that a breaker on this clock should be
    /// handed.
    #[must_use]
    pub fn sleeper(&self) -> ManualSleeper {
        ManualSleeper::new(self.clone())
    }
}

impl ManualSleeper {
    /// A sleeper that moves `clock` forward; the same as
    /// [`clock.sleeper()`](ManualClock::sleeper).
    #[must_use]
    pub fn new(clock: ManualClock) -> Self {
        Self {
            clock,
            delays: Arc::default(),
        }
    }

    /// Every delay slept so far, in order. Clones share one record.
    #[must_use]
    pub fn delays(&self) -> Vec<Duration> {
        self.delays
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Sleeper for ManualSleeper {
    type Sleep = Ready<()>;

    fn sleep(&self, delay: Duration) -> Self::Sleep {
        self.clock.advance(delay);
        self.delays
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(delay);
        ready(())
    }

    fn time_source(&self) -> TimeSource {
        self.clock.time_source()
    }
}
