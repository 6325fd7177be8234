//! Time, injected: the breaker never asks the operating system what time it is.
//!
//! Everything the breaker does with time (opening until a deadline, reporting
//! how much of a cooldown is left) goes through a [`Clock`]. Production code
//! passes a [`SystemClock`]; tests pass a [`ManualClock`] and move it forward
//! by hand, so a ten-second cooldown takes no real time at all.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// A monotonic source of time.
///
/// `now` is the time elapsed since the clock's own origin. Only differences
/// between readings matter, so the origin can be anything, and a `Duration`
/// (which cannot be negative) is all the breaker needs.
pub trait Clock {
    /// The time elapsed since this clock's origin. Never goes backwards.
    fn now(&self) -> Duration;
}

/// The real, monotonic time of the machine, measured from when the clock was
/// created.
///
/// ```
/// use retry_breaker_solution::{Clock, SystemClock};
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
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }
}

/// A clock that only moves when told to: the heart of every deterministic test.
///
/// Clones share one time, so a test keeps a handle while the breaker owns
/// another.
///
/// ```
/// use std::time::Duration;
/// use retry_breaker_solution::{Clock, ManualClock};
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
}
