// PROVIDED FILE: a grade always uses the kit's own copy of this file; your code goes in the TODOs.
//! The record of a state change, so traces and dashboards can show what the
//! breaker did and when.

use std::fmt;
use std::time::Duration;

use crate::breaker::state::Phase;

/// The breaker's epoch counter, advanced on every transition.
///
/// Each [`Permit`](crate::Permit) remembers the generation it was admitted
/// in. When the attempt reports back, an outcome from an older generation is
/// *stale*: the circuit has moved on since, so that outcome no longer says
/// anything about the current state and is ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Generation(u64);

impl Generation {
    /// The generation after this one. It wraps after 2^64 transitions, which
    /// no breaker lives to see.
    pub(crate) fn next(self) -> Self {
        Generation(self.0.wrapping_add(1))
    }

    /// The counter's value; a new breaker starts at 0.
    #[must_use]
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for Generation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "g{}", self.0)
    }
}

/// One state change: the circuit went `from` one phase `to` another `at` a
/// clock reading, and `generation` is the generation it started.
///
/// Receive them with
/// [`RetryBreaker::with_transition_hook`](crate::RetryBreaker::with_transition_hook).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Transition {
    /// The phase the circuit left.
    pub from: Phase,
    /// The phase the circuit entered.
    pub to: Phase,
    /// The clock reading when it happened.
    pub at: Duration,
    /// The generation the transition began.
    pub generation: Generation,
}

impl Transition {
    /// A transition record, for testing code that consumes them (a
    /// breaker makes its own). Fields added later get neutral values here,
    /// so this keeps compiling.
    ///
    /// ```
    /// use std::time::Duration;
    /// use retry_breaker_starter::{Generation, Phase, Transition};
    ///
    /// let t = Transition::new(Phase::Closed, Phase::Open, Duration::from_millis(5), Generation::default());
    /// assert_eq!(t.to_string(), "t=5ms CLOSED -> OPEN (g0)");
    /// ```
    #[must_use]
    pub fn new(from: Phase, to: Phase, at: Duration, generation: Generation) -> Self {
        Transition {
            from,
            to,
            at,
            generation,
        }
    }
}

impl fmt::Display for Transition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "t={:?} {} -> {} ({})",
            self.at, self.from, self.to, self.generation
        )
    }
}
