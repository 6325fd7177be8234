//! When an open circuit may try again.

use std::time::Duration;

/// The end of a cooldown, on the breaker's clock.
///
/// A cooldown so long that `now + cooldown` does not fit in a `Duration` has
/// no representable end: that circuit simply stays open (`Never`), rather
/// than panicking on overflow or wrapping around to a deadline in the past.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Deadline {
    At(Duration),
    Never,
}

impl Deadline {
    /// The deadline `cooldown` after `now`.
    // (Generated: the TODO below leaves names unused until it is done.)
    #[allow(unused_variables, unused_mut, unreachable_code)]
    pub(crate) fn after(now: Duration, cooldown: Duration) -> Self {
        // TODO(1): the deadline `cooldown` after `now`, or `Never` if that overflows (B1)
        todo!(
            "TODO(1): the deadline `cooldown` after `now`, or `Never` if that overflows (B1); see LAB.md, step 1"
        )
    }

    /// Whether the cooldown is over at `now`.
    // (Generated: the TODO below leaves names unused until it is done.)
    #[allow(unused_variables, unused_mut, unreachable_code)]
    pub(crate) fn has_passed(self, now: Duration) -> bool {
        // TODO(2): is the cooldown over? Reaching the deadline exactly counts (B4)
        todo!(
            "TODO(2): is the cooldown over? Reaching the deadline exactly counts (B4); see LAB.md, step 2"
        )
    }

    /// How much of the cooldown is left at `now`: zero once it is over, and
    /// `Duration::MAX` when it never ends.
    pub(crate) fn remaining(self, now: Duration) -> Duration {
        match self {
            Deadline::At(at) => at.saturating_sub(now),
            Deadline::Never => Duration::MAX,
        }
    }
}
