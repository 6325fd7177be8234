//! Building a breaker with the advanced track's settings: a success
//! threshold (S1-S2) and window mode (W1-W3).

use std::time::Duration;

use crate::breaker::RetryBreaker;
use crate::breaker::bulkhead::Bulkhead;
use crate::breaker::circuit::Circuit;
use crate::breaker::window::{Window, WindowConfig};
use crate::error::ConfigError;
use crate::time::clock::Clock;

/// The settings of a [`RetryBreaker`], from [`RetryBreaker::builder`].
///
/// Unless told otherwise the breaker is the core lab's: it opens after 5
/// consecutive failures, stays open 30 seconds, and closes after 1 good
/// probe. [`RetryBreaker::new`] is the short form for the first two.
///
/// ```
/// use std::time::Duration;
/// use retry_breaker_starter::{ConfigError, ManualClock, RetryBreaker, WindowConfig};
///
/// // Seed 003: open when half of the last 20 attempts failed, close after
/// // 3 good probes in a row.
/// let breaker = RetryBreaker::builder()
///     .cooldown(Duration::from_secs(10))
///     .success_threshold(3)
///     .window(WindowConfig::new(20, 20, 0.5))
///     .build(ManualClock::new())?;
/// assert_eq!(breaker.success_threshold(), 3);
///
/// let nonsense = RetryBreaker::builder()
///     .window(WindowConfig::new(10, 20, 0.5))
///     .build(ManualClock::new());
/// assert_eq!(nonsense.unwrap_err(), ConfigError::MinimumAboveSize { minimum: 20, size: 10 });
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[must_use = "a builder does nothing until `build`"]
pub struct Builder {
    threshold: u32,
    cooldown: Duration,
    success_threshold: u32,
    window: Option<WindowConfig>,
    max_in_flight: Option<u32>,
}

impl RetryBreaker<()> {
    /// Settings for a breaker, starting from the core lab's defaults (see
    /// [`Builder`]).
    pub fn builder() -> Builder {
        Builder {
            threshold: 5,
            cooldown: Duration::from_secs(30),
            success_threshold: 1,
            window: None,
            max_in_flight: None,
        }
    }
}

impl Builder {
    /// Consecutive failures that open the circuit (B2). Not used in window
    /// mode, where the window decides.
    pub fn threshold(mut self, threshold: u32) -> Self {
        self.threshold = threshold;
        self
    }

    /// How long the circuit stays open before a probe (B2).
    pub fn cooldown(mut self, cooldown: Duration) -> Self {
        self.cooldown = cooldown;
        self
    }

    /// Good probes in a row that close a half-open circuit (S1).
    pub fn success_threshold(mut self, successes: u32) -> Self {
        self.success_threshold = successes;
        self
    }

    /// Opens on a failure rate over the last attempts instead of a run of
    /// consecutive failures (W1).
    pub fn window(mut self, window: WindowConfig) -> Self {
        self.window = Some(window);
        self
    }

    /// A bulkhead: at most `limit` admitted attempts in flight at once,
    /// the probe included; one more is refused with
    /// [`Rejected::Full`](crate::Rejected::Full), which the circuit never
    /// hears of (H1-H4). No limit unless set.
    ///
    /// ```
    /// use std::time::Duration;
    /// use retry_breaker_starter::{ManualClock, Rejected, RetryBreaker, State};
    ///
    /// let breaker = RetryBreaker::builder()
    ///     .threshold(3)
    ///     .max_in_flight(2)
    ///     .build(ManualClock::new())?;
    /// let first = breaker.try_acquire()?;
    /// let second = breaker.try_acquire()?;
    /// assert_eq!(breaker.try_acquire().err(), Some(Rejected::Full { limit: 2 }));
    /// assert_eq!(breaker.state(), State::Closed { failures: 0 }, "a refusal counts nothing");
    /// first.failure();
    /// assert_eq!(breaker.in_flight(), 1, "a reported attempt frees its slot");
    /// let third = breaker.try_acquire()?;
    /// # drop((second, third));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn max_in_flight(mut self, limit: u32) -> Self {
        self.max_in_flight = Some(limit);
        self
    }

    /// The breaker, closed, with `clock` as its time. Everything it needs is
    /// allocated here, so recording verdicts never allocates.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the first setting that cannot work: a zero
    /// threshold or success threshold, a window that could never open, or a
    /// bulkhead with no room.
    // (Generated: the TODO below leaves names unused until it is done.)
    #[allow(unused_variables, unused_mut, unreachable_code)]
    pub fn build<C: Clock>(self, clock: C) -> Result<RetryBreaker<C>, ConfigError> {
        if self.threshold == 0 {
            return Err(ConfigError::ZeroThreshold);
        }
        // TODO(12): refuse a success threshold of 0 (S2)
        // (Skipped for now, so the earlier steps keep working.)
        let window = match self.window {
            Some(config) => {
                config.check()?;
                Some(Window::new(config))
            }
            None => None,
        };
        let bulkhead = match self.max_in_flight {
            Some(0) => return Err(ConfigError::ZeroInFlight),
            limit => limit.map(Bulkhead::new),
        };
        let circuit =
            Circuit::new(self.threshold, self.cooldown).with_modes(self.success_threshold, window);
        Ok(RetryBreaker::from_circuit(circuit, clock, bulkhead))
    }
}
