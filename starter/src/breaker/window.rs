//! The sliding window of window mode (rules W1-W3): the verdicts of the
//! last N counted attempts, in a ring allocated once, when the breaker is
//! built.

use std::fmt;

use crate::error::ConfigError;

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
/// use retry_breaker_starter::WindowConfig;
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
        }
    }

    /// Checks that the window can work (W3).
    // (Generated: the TODO below leaves names unused until it is done.)
    #[allow(unused_variables, unused_mut, unreachable_code)]
    pub(crate) fn check(&self) -> Result<(), ConfigError> {
        // TODO(13): refuse N = 0, m = 0, m > N, and r outside (0, 1] or NaN (W3)
        // (Skipped for now, so the earlier steps keep working.)
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
        }
    }

    pub(crate) fn config(&self) -> WindowConfig {
        self.config
    }

    /// Failures among the verdicts held.
    pub(crate) fn failures(&self) -> u32 {
        self.failures
    }

    /// Adds one verdict, pushing out the oldest when the window is full:
    /// O(1), and no allocation (W3).
    // (Generated: the TODO below leaves names unused until it is done.)
    #[allow(unused_variables, unused_mut, unreachable_code)]
    pub(crate) fn record(&mut self, failed: bool) {
        // TODO(13): put the verdict in the ring, evicting the oldest once full; keep len and failures right (W1, W3)
        // For now, a stand-in that ignores this rule, so the earlier steps keep working:
        let _ = failed;
    }

    /// Whether the window says the circuit should open (W1).
    // (Generated: the TODO below leaves names unused until it is done.)
    #[allow(unused_variables, unused_mut, unreachable_code)]
    pub(crate) fn trips(&self) -> bool {
        // TODO(13): at least `minimum` verdicts, and a failure share of at least `failure_rate` (W1)
        // For now, a stand-in that ignores this rule, so the earlier steps keep working:
        false
    }

    /// Forgets every verdict (W2).
    pub(crate) fn clear(&mut self) {
        self.next = 0;
        self.len = 0;
        self.failures = 0;
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
