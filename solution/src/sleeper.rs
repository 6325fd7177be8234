//! Waiting, injected: the retry loop never sleeps on its own.
//!
//! Backoff between attempts goes through a [`Sleeper`]. Production code
//! passes a [`TokioSleeper`] (with a [`TokioClock`](crate::TokioClock) on the
//! breaker); tests pass the [`ManualSleeper`] of the breaker's
//! [`ManualClock`], which returns at once after moving that clock forward, so
//! retries are instant and every delay is on record.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::clock::{Clock, ManualClock};
use crate::time_source::TimeSource;

/// Something that can wait for a while.
///
/// A sleep counts as *asked for* when [`sleep`](Sleeper::sleep) is called,
/// whether or not its future is ever awaited: the test sleepers record it at
/// that moment. So a retry loop that must not sleep must not even call
/// `sleep`.
///
/// The future need not be `Send`, so a sleeper for a single-threaded
/// executor (a `LocalSet`, a browser's timers) fits too. The sleepers of this
/// crate promise `Send`, so `execute` with any of them can be spawned on a
/// multi-threaded runtime. Code generic over the sleeper cannot see that
/// promise: there, bound the sleeper on [`SendSleeper`](crate::SendSleeper)
/// and pass its [`sending`](crate::SendSleeper::sending) form.
pub trait Sleeper {
    /// Completes once `delay` has passed. Dropping the future stops the wait.
    fn sleep(&self, delay: Duration) -> impl Future<Output = ()>;

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
    #[allow(
        refining_impl_trait,
        reason = "the promise of `Send` lets `execute` with this sleeper be spawned on a multi-threaded runtime"
    )]
    fn sleep(&self, delay: Duration) -> impl Future<Output = ()> + Send {
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
    #[allow(
        refining_impl_trait,
        reason = "the promise of `Send` lets `execute` with this sleeper be spawned on a multi-threaded runtime"
    )]
    fn sleep(&self, delay: Duration) -> impl Future<Output = ()> + Send {
        self.clock.advance(delay);
        self.delays
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(delay);
        std::future::ready(())
    }

    fn time_source(&self) -> TimeSource {
        self.clock.time_source()
    }
}
