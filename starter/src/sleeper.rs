//! Waiting, injected: the retry loop never sleeps on its own.
//!
//! Backoff between attempts goes through a [`Sleeper`]. Production code
//! passes a [`TokioSleeper`]; tests pass a [`ManualSleeper`], which returns at
//! once after moving a [`ManualClock`] forward, so retries are instant and
//! every delay is on record.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::clock::ManualClock;

/// Something that can wait for a while.
///
/// A sleep counts as *asked for* when [`sleep`](Sleeper::sleep) is called,
/// whether or not its future is ever awaited: the test sleepers record it at
/// that moment. So a retry loop that must not sleep (E6, E7) must not even
/// call `sleep`.
pub trait Sleeper {
    /// Completes once `delay` has passed. Dropping the future stops the wait.
    fn sleep(&self, delay: Duration) -> impl Future<Output = ()> + Send;
}

/// Real sleeping on the tokio timer. Needs a tokio runtime with time enabled.
///
/// ```
/// use std::time::Duration;
/// use retry_breaker_starter::{Sleeper, TokioSleeper};
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// TokioSleeper.sleep(Duration::from_millis(1)).await;
/// # });
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct TokioSleeper;

impl Sleeper for TokioSleeper {
    fn sleep(&self, delay: Duration) -> impl Future<Output = ()> + Send {
        // tokio clamps a deadline it cannot represent to a far future, so even
        // `Duration::MAX` waits (practically) forever instead of panicking.
        tokio::time::sleep(delay)
    }
}

/// A sleeper for tests: each sleep moves its [`ManualClock`] forward by the
/// requested delay, writes the delay down, and completes at once.
///
/// All of that happens when the sleep is asked for, that is when
/// [`sleep`](Sleeper::sleep) is called, so a sleep that is asked for and then
/// never awaited is still on record.
///
/// ```
/// use std::time::Duration;
/// use retry_breaker_starter::{Clock, ManualClock, ManualSleeper, Sleeper};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let clock = ManualClock::new();
/// let sleeper = ManualSleeper::new(clock.clone());
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

impl ManualSleeper {
    /// A sleeper that moves `clock` forward.
    pub fn new(clock: ManualClock) -> Self {
        Self {
            clock,
            delays: Arc::default(),
        }
    }

    /// Every delay slept so far, in order. Clones share one record.
    pub fn delays(&self) -> Vec<Duration> {
        self.delays
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Sleeper for ManualSleeper {
    fn sleep(&self, delay: Duration) -> impl Future<Output = ()> + Send {
        self.clock.advance(delay);
        self.delays
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(delay);
        std::future::ready(())
    }
}
