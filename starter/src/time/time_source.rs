// PROVIDED FILE: a grade always uses the kit's own copy of this file; your code goes in the TODOs.
//! Which time a clock reads and a sleeper waits on, so that the two can be
//! checked against each other.
//!
//! The breaker reads its own clock and the retry loop sleeps through the
//! sleeper it is handed. If the sleeper's waiting does not move the
//! breaker's clock (a manual sleeper built on another manual clock, or a
//! system clock under tokio's paused time), a cooldown never runs out and
//! nothing says why. Each clock and sleeper of this crate names its
//! [`TimeSource`], and [`RetryBreaker::execute`](crate::RetryBreaker::execute)
//! refuses a pair that cannot agree with a clear error.

use std::fmt;

/// The time a [`Clock`](crate::Clock) reads or a [`Sleeper`](crate::Sleeper)
/// waits on.
///
/// Your own clocks and sleepers report [`TimeSource::UNKNOWN`] unless they
/// say otherwise, and an unknown source pairs with anything.
///
/// ```
/// use retry_breaker_starter::{Clock, ManualClock, Sleeper, TimeSource};
///
/// let clock = ManualClock::new();
/// assert!(clock.time_source().pairs_with(clock.sleeper().time_source()));
/// assert!(!clock.time_source().pairs_with(ManualClock::new().sleeper().time_source()));
/// assert!(TimeSource::UNKNOWN.pairs_with(clock.time_source()));
/// // Outside a test that pauses it, tokio's time is the operating system's.
/// assert!(TimeSource::OPERATING_SYSTEM.pairs_with(TimeSource::TOKIO));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TimeSource(Kind);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Unknown,
    OperatingSystem,
    Tokio,
    /// One manual clock and its clones, named by the address they share.
    Manual(usize),
}

impl TimeSource {
    /// A source this crate knows nothing about: it pairs with anything.
    pub const UNKNOWN: Self = TimeSource(Kind::Unknown);
    /// The operating system's monotonic clock (`std::time::Instant`), which
    /// tokio's paused test time does not move.
    pub const OPERATING_SYSTEM: Self = TimeSource(Kind::OperatingSystem);
    /// Tokio's clock (`tokio::time::Instant`): the operating system's, except
    /// while a test has paused it, when only tokio moves it.
    pub const TOKIO: Self = TimeSource(Kind::Tokio);

    /// The manual clock whose shared time lives at `address`.
    pub(crate) fn manual(address: usize) -> Self {
        TimeSource(Kind::Manual(address))
    }

    /// Whether a sleeper waiting on `other` moves a clock reading `self`:
    /// the same source, at least one of them unknown, or the operating
    /// system's and tokio's while tokio's time runs, since it is then the
    /// operating system's. Only while a test has paused tokio's time do
    /// those two part ways, and only then are they refused.
    #[must_use]
    #[inline]
    pub fn pairs_with(self, other: TimeSource) -> bool {
        self == other
            || self.0 == Kind::Unknown
            || other.0 == Kind::Unknown
            || (self.is_os_or_tokio() && other.is_os_or_tokio() && !tokio_time_is_paused())
    }

    fn is_os_or_tokio(self) -> bool {
        matches!(self.0, Kind::OperatingSystem | Kind::Tokio)
    }
}

/// Whether tokio's clock is paused on this thread's runtime. Tokio has no
/// query for it, so read its clock twice around one reading of the
/// operating system's: running, tokio's clock is the operating system's, so
/// either both of its readings differ (it moved) or all three agree (none
/// ticked); paused, it stands still between two readings with no await
/// between them, at an instant the operating system's clock has left
/// behind (or not reached, after the test advanced it). Three readings, and
/// only for a pair of the operating system's and tokio's sources. Without
/// tokio, nothing of this crate reads or waits on its time.
fn tokio_time_is_paused() -> bool {
    #[cfg(feature = "tokio")]
    {
        let before = tokio::time::Instant::now().into_std();
        let system = std::time::Instant::now();
        let after = tokio::time::Instant::now().into_std();
        before == after && system != before
    }
    #[cfg(not(feature = "tokio"))]
    {
        false
    }
}

impl fmt::Display for TimeSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Kind::Unknown => f.write_str("an unknown time source"),
            Kind::OperatingSystem => f.write_str("the operating system's clock"),
            Kind::Tokio => f.write_str("tokio's clock"),
            Kind::Manual(_) => f.write_str("a manual clock"),
        }
    }
}

/// What to do instead, if sleeping through a sleeper on `sleeper` would not
/// move a clock on `clock`; `None` for a pair that works.
///
/// [`execute`](crate::RetryBreaker::execute) turns this into
/// [`ExecuteError::TimeMismatch`](crate::ExecuteError::TimeMismatch) before
/// the first attempt: a wiring mistake that no retry can fix shows up on the
/// first call, in the first test that uses the pair.
#[inline]
pub(crate) fn mismatch(clock: TimeSource, sleeper: TimeSource) -> Option<&'static str> {
    if clock.pairs_with(sleeper) {
        return None;
    }
    Some(match (clock.0, sleeper.0) {
        (Kind::Manual(_), Kind::Manual(_)) => {
            "build the sleeper from the breaker's own clock: `ManualClock::sleeper`, or `breaker.clock().sleeper()`"
        }
        (Kind::OperatingSystem, Kind::Tokio) => {
            "tokio's time is paused here, and a tokio sleep moves only tokio's clock: pair `TokioSleeper` with `TokioClock`, which reads the same clock"
        }
        (Kind::Tokio, Kind::OperatingSystem) => {
            "tokio's time is paused here, and only tokio's sleeps move it: pair `TokioClock` with `TokioSleeper`"
        }
        (_, Kind::Tokio) => "pair `TokioSleeper` with `TokioClock`, which reads the same clock",
        _ => "use a sleeper that waits on the breaker's clock",
    })
}
