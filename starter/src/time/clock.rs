// PROVIDED FILE: a grade always uses the kit's own copy of this file; your code goes in the TODOs.
//! Time, injected: the breaker never asks the operating system what time it is.
//!
//! Everything the breaker does with time (opening until a deadline, reporting
//! how much of a cooldown is left) goes through a [`Clock`]. Production code
//! on tokio passes a [`TokioClock`] (or a [`SystemClock`] without tokio);
//! tests pass a [`ManualClock`] and move it forward by hand, so a ten-second
//! cooldown takes no real time at all.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::time::time_source::TimeSource;

/// A monotonic source of time.
///
/// `now` is the time elapsed since the clock's own origin. Only differences
/// between readings matter, so the origin can be anything, and a `Duration`
/// (which cannot be negative) is all the breaker needs.
///
/// # The contract
///
/// A breaker shared by threads compares readings taken on different
/// threads, so a clock promises, for any two readings `a` and `b` where
/// `a` is taken before `b` (on one thread, or on another that `b`'s thread
/// has heard from since, through a lock or an atomic):
///
/// - `b` is never smaller than `a`: monotonic across threads, not only on
///   each one;
/// - `b` is taken no earlier than the memory operations before it on its
///   own thread: a reading is not moved ahead of the load that precedes
///   it. The operating system's clocks (`Instant`, tokio's) and a lock-
///   or atomic-based clock such as [`ManualClock`] are; a bare `rdtsc`
///   is not (the processor may run it before an earlier load), and
///   neither are per-core counters that are not kept in step.
pub trait Clock {
    /// The time elapsed since this clock's origin. Never goes backwards.
    fn now(&self) -> Duration;

    /// Which time this clock reads, so that
    /// [`execute`](crate::RetryBreaker::execute) can refuse a sleeper that
    /// would not move it. [`TimeSource::UNKNOWN`] unless overridden.
    fn time_source(&self) -> TimeSource {
        TimeSource::UNKNOWN
    }
}

/// A borrowed clock reads the same time, so a breaker can use a clock that
/// something else owns.
impl<C: Clock + ?Sized> Clock for &C {
    fn now(&self) -> Duration {
        (**self).now()
    }

    fn time_source(&self) -> TimeSource {
        (**self).time_source()
    }
}

/// A shared clock reads the same time.
impl<C: Clock + ?Sized> Clock for Arc<C> {
    fn now(&self) -> Duration {
        (**self).now()
    }

    fn time_source(&self) -> TimeSource {
        (**self).time_source()
    }
}

/// The operating system's monotonic time, measured from when the clock was
/// created.
///
/// It reads `std::time::Instant`, which tokio's paused test time does not
/// move: on tokio, prefer [`TokioClock`], the clock that
/// [`TokioSleeper`](crate::TokioSleeper) sleeps on.
///
/// ```
/// use retry_breaker_starter::{Clock, SystemClock};
///
/// let clock = SystemClock::new();
/// let earlier = clock.now();
/// assert!(clock.now() >= earlier);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    origin: Instant,
}

impl SystemClock {
    /// A clock whose origin is this moment.
    #[must_use]
    pub fn new() -> Self {
        Self {
            origin: Instant::now(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemClock {
    #[inline]
    fn now(&self) -> Duration {
        // The same as `elapsed()`, spelled so that the subtraction inlines:
        // an OPEN refusal is little more than this reading.
        Instant::now()
            .checked_duration_since(self.origin)
            .unwrap_or_default()
    }

    fn time_source(&self) -> TimeSource {
        TimeSource::OPERATING_SYSTEM
    }
}

/// Tokio's time (`tokio::time::Instant`), measured from when the clock was
/// created: the clock that [`TokioSleeper`](crate::TokioSleeper) sleeps on.
///
/// In production it is the operating system's time. In a test that pauses
/// tokio's time (`#[tokio::test(start_paused = true)]`), it moves exactly as
/// far as the test's sleeps, so a ten-second cooldown passes instantly and
/// still passes in full.
///
/// ```
/// use std::time::Duration;
/// use retry_breaker_starter::{Clock, Sleeper, TokioClock, TokioSleeper};
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().unwrap().block_on(async {
/// let clock = TokioClock::new();
/// TokioSleeper.sleep(Duration::from_secs(10)).await; // paused: no real wait
/// assert!(clock.now() >= Duration::from_secs(10));
/// # });
/// ```
#[cfg(feature = "tokio")]
#[derive(Debug, Clone, Copy)]
pub struct TokioClock {
    origin: tokio::time::Instant,
}

#[cfg(feature = "tokio")]
impl TokioClock {
    /// A clock whose origin is this moment, on tokio's time.
    #[must_use]
    pub fn new() -> Self {
        Self {
            origin: tokio::time::Instant::now(),
        }
    }
}

#[cfg(feature = "tokio")]
impl Default for TokioClock {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(feature = "tokio")]
impl Clock for TokioClock {
    #[inline]
    fn now(&self) -> Duration {
        // As `SystemClock::now`, on tokio's clock.
        tokio::time::Instant::now()
            .checked_duration_since(self.origin)
            .unwrap_or_default()
    }

    fn time_source(&self) -> TimeSource {
        TimeSource::TOKIO
    }
}

/// A clock that only moves when told to: the heart of every deterministic test.
///
/// Clones share one time, so a test keeps a handle while the breaker owns
/// another. Sleep on it through [`ManualClock::sleeper`].
///
/// ```
/// use std::time::Duration;
/// use retry_breaker_starter::{Clock, ManualClock};
///
/// let clock = ManualClock::new();
/// let handle = clock.clone();
/// handle.advance(Duration::from_millis(10));
/// assert_eq!(clock.now(), Duration::from_millis(10));
/// ```
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    now: Arc<Mutex<Duration>>,
}

impl ManualClock {
    /// A clock standing at zero.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Moves time forward by `by`. Time saturates at [`Duration::MAX`]
    /// rather than overflowing, so even an absurd advance cannot panic.
    pub fn advance(&self, by: Duration) {
        let mut now = self.now.lock().unwrap_or_else(PoisonError::into_inner);
        *now = now.saturating_add(by);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Duration {
        *self.now.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn time_source(&self) -> TimeSource {
        // Clones share the allocation, so its address names the shared time.
        TimeSource::manual(Arc::as_ptr(&self.now).addr())
    }
}
