//! The sliding window of window mode (rules W1-W3): the verdicts of the
//! last N counted attempts, in a ring allocated once, when the breaker is
//! built.

use std::fmt;

use crate::error::ConfigError;
// BEGIN SOLUTION ONLY: a time-based window (T1-T4)
use crate::breaker::slots::Slots;
use std::time::Duration;
// END SOLUTION ONLY

/// When a breaker in window mode opens: over the last `size` counted
/// attempts, once at least `minimum` of them are in the window and the
/// share of failures among them is at least `failure_rate`.
///
/// Seed 003's breaker is `WindowConfig::new(20, 20, 0.5)`: half of the
/// last twenty attempts failed. The settings are checked when the breaker is
/// built ([`Builder::build`](crate::Builder::build)), never here.
///
/// The struct may gain settings, so it is built with [`WindowConfig::new`],
/// not with a struct literal; its fields can be read.
///
/// ```
/// use retry_breaker_solution::WindowConfig;
///
/// let window = WindowConfig::new(20, 10, 0.5);
/// assert_eq!((window.size, window.minimum, window.failure_rate), (20, 10, 0.5));
/// ```
#[derive(Clone, Copy, PartialEq)]
#[non_exhaustive]
// Contract: W1, W3.
pub struct WindowConfig {
    /// How many counted verdicts the window keeps (N).
    pub size: u32,
    /// How many verdicts it must hold before it may open the circuit (m).
    pub minimum: u32,
    /// The share of failures, in (0, 1], that opens the circuit (r).
    pub failure_rate: f64,
    // BEGIN SOLUTION ONLY: a time-based window (T1-T4)
    /// For a time-based window, the stretch of time it holds the verdicts
    /// of (T1); `size` is then 0. `None` for a window of the last `size`.
    pub period: Option<Duration>,
    // END SOLUTION ONLY
}

impl WindowConfig {
    /// A window of the last `size` counted verdicts (N) that opens the
    /// circuit once it holds at least `minimum` of them (m) and the share of
    /// failures among them is at least `failure_rate` (r).
    #[must_use]
    pub const fn new(size: u32, minimum: u32, failure_rate: f64) -> Self {
        WindowConfig {
            size,
            minimum,
            failure_rate,
            // BEGIN SOLUTION ONLY: a time-based window (T1-T4)
            period: None,
            // END SOLUTION ONLY
        }
    }

    // BEGIN SOLUTION ONLY: a time-based window (T1-T4)
    /// A window of the verdicts counted in the last `period` on the
    /// breaker's clock (T1), as resilience4j's time-based window and Polly's
    /// sampling duration: it opens the circuit once it holds at least
    /// `minimum` verdicts and the share of failures among them is at least
    /// `failure_rate` (T2).
    ///
    /// The period is kept in 10 slots, so a verdict leaves the window
    /// between nine tenths of the period and the period after it was
    /// counted; each verdict costs O(1) and nothing is allocated after the
    /// breaker is built (T3).
    ///
    /// ```
    /// use std::time::Duration;
    /// use retry_breaker_solution::{ManualClock, RetryBreaker, State, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let breaker = RetryBreaker::builder()
    ///     .window(WindowConfig::timed(Duration::from_secs(10), 4, 0.5))
    ///     .build(clock.clone())?;
    /// breaker.try_acquire()?.failure();
    /// breaker.try_acquire()?.failure();
    /// clock.advance(Duration::from_secs(10)); // both have left the window
    /// breaker.try_acquire()?.failure();
    /// breaker.try_acquire()?.success();
    /// breaker.try_acquire()?.success();
    /// breaker.try_acquire()?.failure();
    /// assert!(matches!(breaker.state(), State::Open { .. }), "2 of 4 in the last 10 s");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub const fn timed(period: Duration, minimum: u32, failure_rate: f64) -> Self {
        WindowConfig {
            size: 0,
            minimum,
            failure_rate,
            period: Some(period),
        }
    }

    /// Checks that a time-based window can work (T4): a period of at least
    /// 10 ns (one per slot), a minimum of at least 1, a rate in (0, 1].
    fn check_timed(&self, period: Duration) -> Result<(), ConfigError> {
        if Slots::over(period).is_none() {
            return Err(ConfigError::WindowPeriodTooShort { period });
        }
        if self.minimum == 0 {
            return Err(ConfigError::ZeroMinimum);
        }
        if !(self.failure_rate > 0.0 && self.failure_rate <= 1.0) {
            return Err(ConfigError::FailureRateOutOfRange);
        }
        Ok(())
    }
    // END SOLUTION ONLY

    /// Checks that the window can work (W3).
    pub(crate) fn check(&self) -> Result<(), ConfigError> {
        // BEGIN SOLUTION ONLY: a time-based window (T1-T4)
        if let Some(period) = self.period {
            return self.check_timed(period);
        }
        // END SOLUTION ONLY
        // BEGIN TODO(13): refuse N = 0, m = 0, m > N, and r outside (0, 1] or NaN (W3)
        if self.size == 0 {
            return Err(ConfigError::EmptyWindow);
        }
        if self.minimum == 0 {
            return Err(ConfigError::ZeroMinimum);
        }
        if self.minimum > self.size {
            return Err(ConfigError::MinimumAboveSize {
                minimum: self.minimum,
                size: self.size,
            });
        }
        // Written so that NaN, which compares false with everything, fails too.
        if !(self.failure_rate > 0.0 && self.failure_rate <= 1.0) {
            return Err(ConfigError::FailureRateOutOfRange);
        }
        // STARTER:
        // END TODO
        Ok(())
    }
}

impl fmt::Debug for WindowConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut shown = f.debug_struct("WindowConfig");
        shown
            .field("size", &self.size)
            .field("minimum", &self.minimum)
            .field("failure_rate", &self.failure_rate);
        // BEGIN SOLUTION ONLY: a time-based window (T1-T4)
        // A window of the last N shows as it always has.
        if let Some(period) = self.period {
            shown.field("period", &period);
        }
        // END SOLUTION ONLY
        shown.finish()
    }
}

/// The last `size` counted verdicts: `true` for a failure.
#[derive(Debug, Clone)]
pub(crate) struct Window {
    config: WindowConfig,
    /// The ring, allocated once; only its first `len` slots (counting from
    /// `oldest`) hold verdicts.
    slots: Box<[bool]>,
    /// Where the next verdict goes, which is the oldest one once the ring is
    /// full.
    next: usize,
    len: u32,
    failures: u32,
    // BEGIN SOLUTION ONLY: a time-based window (T1-T4)
    /// For a time-based window, its verdicts (events) and failures (marks)
    /// per slot of time; `len` and `failures` are then their sums.
    timed: Option<Slots>,
    // END SOLUTION ONLY
}

impl Window {
    /// An empty window. The config has already been checked.
    pub(crate) fn new(config: WindowConfig) -> Self {
        Window {
            config,
            slots: vec![false; config.size as usize].into_boxed_slice(),
            next: 0,
            len: 0,
            failures: 0,
            // BEGIN SOLUTION ONLY: a time-based window (T1-T4)
            timed: config.period.and_then(Slots::over),
            // END SOLUTION ONLY
        }
    }

    // BEGIN SOLUTION ONLY: a time-based window (T1-T4)
    /// Lets the verdicts older than the period leave a time-based window,
    /// as of `now`; a window of the last N has no time to follow.
    pub(crate) fn advance_to(&mut self, now: Duration) {
        if let Some(slots) = self.timed.as_mut() {
            slots.advance_to(now);
            let sum = slots.sum();
            self.sync_with(sum);
        }
    }

    /// Failures a time-based window holds as of `now`, without letting
    /// anything go (a read changes nothing, B10); `None` for a window of the
    /// last N, whose failures do not age.
    pub(crate) fn failures_at(&self, now: Duration) -> Option<u32> {
        let slots = self.timed.as_ref()?;
        Some(u32::try_from(slots.sum_at(now).marked).unwrap_or(u32::MAX))
    }

    /// `len` and `failures` from a time-based window's sums, so that the
    /// rest reads them as for a window of the last N. Past `u32::MAX`
    /// verdicts in one period they saturate.
    fn sync_with(&mut self, sum: crate::breaker::slots::Tally) {
        self.len = u32::try_from(sum.events).unwrap_or(u32::MAX);
        self.failures = u32::try_from(sum.marked).unwrap_or(u32::MAX);
    }
    // END SOLUTION ONLY

    pub(crate) fn config(&self) -> WindowConfig {
        self.config
    }

    /// Failures among the verdicts held.
    pub(crate) fn failures(&self) -> u32 {
        self.failures
    }

    /// Adds one verdict, pushing out the oldest when the window is full:
    /// O(1), and no allocation (W3).
    pub(crate) fn record(&mut self, failed: bool) {
        // BEGIN SOLUTION ONLY: a time-based window (T1-T4)
        if let Some(slots) = self.timed.as_mut() {
            slots.count(failed);
            let sum = slots.sum();
            self.sync_with(sum);
            return;
        }
        // END SOLUTION ONLY
        // BEGIN TODO(13): put the verdict in the ring, evicting the oldest once full; keep len and failures right (W1, W3)
        if self.len == self.config.size {
            if self.slots[self.next] {
                self.failures -= 1;
            }
        } else {
            self.len += 1;
        }
        self.slots[self.next] = failed;
        if failed {
            self.failures += 1;
        }
        self.next = (self.next + 1) % self.slots.len();
        // STARTER: let _ = failed;
        // END TODO
    }

    /// Whether the window says the circuit should open (W1).
    pub(crate) fn trips(&self) -> bool {
        // BEGIN TODO(13): at least `minimum` verdicts, and a failure share of at least `failure_rate` (W1)
        // Dividing (rather than multiplying the rate by the length) compares
        // the share exactly as the user wrote it: 7 / 25 is the same double
        // as 0.28, while 0.28 * 25 is a little more than 7.
        self.len >= self.config.minimum
            && f64::from(self.failures) / f64::from(self.len) >= self.config.failure_rate
        // STARTER: false
        // END TODO
    }

    /// Forgets every verdict (W2).
    pub(crate) fn clear(&mut self) {
        self.next = 0;
        self.len = 0;
        self.failures = 0;
        // BEGIN SOLUTION ONLY: a time-based window (T1-T4)
        if let Some(slots) = self.timed.as_mut() {
            slots.clear();
        }
        // END SOLUTION ONLY
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(size: u32, minimum: u32, failure_rate: f64) -> Window {
        Window::new(WindowConfig::new(size, minimum, failure_rate))
    }

    #[test]
    fn the_oldest_verdict_leaves_a_full_window() {
        let mut w = window(3, 1, 1.0);
        for failed in [true, false, false] {
            w.record(failed);
        }
        assert_eq!(w.failures(), 1);
        w.record(false);
        assert_eq!(w.failures(), 0, "the failure was the oldest");
        assert_eq!(w.len, 3);
    }

    #[test]
    fn the_share_is_compared_as_written() {
        let mut w = window(25, 25, 0.28);
        for i in 0..25 {
            w.record(i < 7);
        }
        assert!(w.trips(), "7 of 25 is 0.28");
    }
}
