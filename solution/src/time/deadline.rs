//! When an open circuit may try again.

use std::time::Duration;

// BEGIN WITH TODO(1): one way to keep a cooldown's end; a student designs their own
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
    pub(crate) fn after(now: Duration, cooldown: Duration) -> Self {
        // BEGIN TODO(1): the deadline `cooldown` after `now`, or `Never` if that overflows (B1)
        now.checked_add(cooldown)
            .map_or(Deadline::Never, Deadline::At)
        // END TODO
    }

    /// Whether the cooldown is over at `now`.
    pub(crate) fn has_passed(self, now: Duration) -> bool {
        // BEGIN TODO(2): is the cooldown over? Reaching the deadline exactly counts (B4)
        match self {
            Deadline::At(at) => now >= at,
            Deadline::Never => false,
        }
        // END TODO
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
// END WITH TODO
