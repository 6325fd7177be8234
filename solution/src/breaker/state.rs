//! What the breaker can tell an observer about itself.

use std::fmt;
use std::time::Duration;

/// A snapshot of the breaker, as returned by
/// [`RetryBreaker::state`](crate::RetryBreaker::state).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum State {
    /// Every attempt is admitted, and `failures` failures are counted.
    Closed {
        /// The failures counted so far. In consecutive mode (the default)
        /// the run of consecutive failures, always below the threshold. In
        /// window mode the failures among the verdicts the window holds,
        /// which the threshold does not bound: the window decides (W1).
        failures: u32,
    },
    /// Attempts are refused until the cooldown has run out.
    ///
    /// `remaining` is zero once the deadline has passed: the cooldown is lazy,
    /// so the circuit only becomes half-open when the next attempt asks to be
    /// admitted. [`Duration::MAX`] means the deadline lies beyond what the
    /// clock can represent, so the circuit stays open.
    Open {
        /// How much of the cooldown is left.
        remaining: Duration,
    },
    /// The cooldown is over and a single probe decides what happens next.
    HalfOpen {
        /// Whether the probe has been admitted and has not reported yet.
        probe_in_flight: bool,
    },
}

impl State {
    /// The state without its details, as used in [`Transition`](crate::Transition)s.
    #[must_use]
    pub fn phase(&self) -> Phase {
        match self {
            State::Closed { .. } => Phase::Closed,
            State::Open { .. } => Phase::Open,
            State::HalfOpen { .. } => Phase::HalfOpen,
        }
    }
}

/// The state in a few words. A state does not know its breaker's mode, so
/// CLOSED reads as consecutive mode counts (`"CLOSED (2 consecutive
/// failures)"`); a breaker's own `Display` says what its mode counts (see
/// [`RetryBreaker`](crate::RetryBreaker)'s).
impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // A state does not know its breaker's mode: the breaker's own
            // Display says whether the count is a run or a window's.
            State::Closed { failures: 1 } => f.write_str("CLOSED (1 failure counted)"),
            State::Closed { failures } => write!(f, "CLOSED ({failures} failures counted)"),
            State::Open { remaining } => write!(f, "OPEN ({remaining:?} left)"),
            State::HalfOpen {
                probe_in_flight: true,
            } => f.write_str("HALF-OPEN (probe in flight)"),
            State::HalfOpen {
                probe_in_flight: false,
            } => f.write_str("HALF-OPEN (waiting for a probe)"),
        }
    }
}

/// The three states of a circuit, without their details.
///
/// ```
/// use retry_breaker_solution::Phase;
///
/// assert_eq!(Phase::HalfOpen.to_string(), "HALF-OPEN");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Phase {
    /// Calls flow; failures are counted.
    Closed,
    /// Calls are refused until the cooldown runs out.
    Open,
    /// One probe decides between closing and reopening.
    HalfOpen,
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Phase::Closed => "CLOSED",
            Phase::Open => "OPEN",
            Phase::HalfOpen => "HALF-OPEN",
        })
    }
}
