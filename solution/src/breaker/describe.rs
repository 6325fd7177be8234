//! The breaker in a few words: its `Display`, in the breaker's own terms.
//!
//! Apart from `state.rs` because it reads the breaker (its mode, its
//! window, its success threshold), which a state knows nothing of: a
//! [`State`] is told by `state.rs`, the breaker that holds it here.

use std::fmt;

use crate::breaker::RetryBreaker;
use crate::breaker::state::State;
use crate::time::clock::Clock;

/// The breaker's state in a few words, in the breaker's own terms: CLOSED
/// counts a run of consecutive failures, or in window mode the failures in
/// the window (W1), and a success threshold above 1 is named while
/// HALF-OPEN (S1). Otherwise it reads as its [`State`] does.
///
/// ```
/// use std::time::Duration;
/// use retry_breaker_solution::{ManualClock, RetryBreaker, WindowConfig};
///
/// let consecutive = RetryBreaker::new(3, Duration::from_secs(5), ManualClock::new())?;
/// consecutive.try_acquire()?.failure();
/// assert_eq!(consecutive.to_string(), "CLOSED (1 consecutive failure)");
///
/// let windowed = RetryBreaker::builder()
///     .window(WindowConfig::new(10, 10, 0.5))
///     .build(ManualClock::new())?;
/// windowed.try_acquire()?.failure();
/// windowed.try_acquire()?.success();
/// assert_eq!(windowed.to_string(), "CLOSED (1 failure in a window of 10)");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl<C: Clock> fmt::Display for RetryBreaker<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.state();
        match (state, self.window(), self.success_threshold()) {
            (State::Closed { failures: 1 }, None, _) => {
                f.write_str("CLOSED (1 consecutive failure)")
            }
            (State::Closed { failures }, None, _) => {
                write!(f, "CLOSED ({failures} consecutive failures)")
            }
            // BEGIN SOLUTION ONLY: a time-based window (T1-T4)
            (State::Closed { failures }, Some(window), _) if window.period.is_some() => {
                let period = window.period.unwrap_or_default();
                let plural = if failures == 1 { "" } else { "s" };
                write!(
                    f,
                    "CLOSED ({failures} failure{plural} in the last {period:?})"
                )
            }
            // END SOLUTION ONLY
            (State::Closed { failures: 1 }, Some(window), _) => {
                write!(f, "CLOSED (1 failure in a window of {})", window.size)
            }
            (State::Closed { failures }, Some(window), _) => {
                write!(
                    f,
                    "CLOSED ({failures} failures in a window of {})",
                    window.size
                )
            }
            (State::HalfOpen { probe_in_flight }, _, probes) if probes > 1 => {
                let waiting = if probe_in_flight {
                    "probe in flight"
                } else {
                    "waiting for a probe"
                };
                write!(
                    f,
                    "HALF-OPEN ({waiting}; {probes} good probes in a row close it)"
                )
            }
            _ => state.fmt(f),
        }
    }
}
