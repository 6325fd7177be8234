// SOLUTION ONLY FILE: the fast OPEN refusal's cheaper clock; the student's breaker reads the exact one
//! Coarse readings: a cheaper look at a clock that may run a little behind.
//!
//! An OPEN breaker refuses every caller until its deadline, and a refusal
//! is little more than a clock reading (see `shortcut.rs`). When the
//! deadline is far away, the exact time does not matter: any reading that
//! is surely before the deadline proves the refusal right. The operating
//! system keeps such a reading, updated at each timer tick
//! (`CLOCK_MONOTONIC_COARSE` on Linux), and reading it costs less than
//! reading the exact clock (docs/FIGURES.md has the figures). So a clock
//! may offer a [`Coarse`] reading with a bound on how far behind it runs,
//! and a refusal reads the exact clock only when the deadline is within
//! that bound.

use std::time::Duration;

/// A reading of a clock that costs less than [`Clock::now`](crate::Clock::now)
/// and may run behind it, by at most `lag`: at the moment of the reading,
/// `now()` would have said at least `reading` and at most `reading + lag`.
///
/// ```
/// use std::time::Duration;
/// use retry_breaker_solution::Coarse;
///
/// let coarse = Coarse { reading: Duration::from_millis(40), lag: Duration::from_millis(9) };
/// // Surely before a deadline at 50 ms; maybe not before one at 45 ms.
/// assert!(coarse.surely_before(Duration::from_millis(50)));
/// assert!(!coarse.surely_before(Duration::from_millis(45)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Coarse {
    /// The time on the clock, or up to `lag` less.
    pub reading: Duration,
    /// How far behind the exact time `reading` may be.
    pub lag: Duration,
}

impl Coarse {
    /// Whether the exact time was surely before `deadline` when this was
    /// read: even at its latest, `reading + lag`, it is.
    #[must_use]
    #[inline]
    pub fn surely_before(&self, deadline: Duration) -> bool {
        self.reading
            .checked_add(self.lag)
            .is_some_and(|latest| latest < deadline)
    }
}

/// The operating system's coarse monotonic clock, measured from an origin
/// taken just after a [`SystemClock`](crate::SystemClock)'s, on the same
/// time line (`Instant` reads `CLOCK_MONOTONIC` on Linux).
///
/// The coarse clock is the monotonic clock as of the last timer tick, so it
/// is never ahead of it; measured from a later origin, its readings are
/// smaller still, never ahead of the system clock's. It runs behind by the
/// time since the last tick (see [`lag_for`]). Off Linux, or without the
/// `coarse-clock` feature, there is none: [`CoarseOrigin::now`] gives no
/// origin, so nothing is ever read. (The choice is made inside the
/// functions, not between two modules, so that every function is built,
/// and mutation-tested, on Linux.)
#[derive(Debug, Clone, Copy)]
// Off Linux, or without the feature, none is ever made.
#[allow(dead_code)]
pub(crate) struct CoarseOrigin {
    origin: Duration,
    lag: Duration,
}

impl CoarseOrigin {
    /// The coarse clock from this moment, if the system has one worth
    /// reading. Call it just after taking the exact clock's origin.
    pub(crate) fn now() -> Option<Self> {
        #[cfg(all(
            feature = "coarse-clock",
            any(target_os = "linux", target_os = "android")
        ))]
        {
            use rustix::time::{ClockId, clock_getres, clock_gettime};
            let resolution = system::duration(clock_getres(ClockId::MonotonicCoarse))?;
            Some(Self {
                lag: system::lag_for(resolution)?,
                origin: system::duration(clock_gettime(ClockId::Monotonic))?,
            })
        }
        #[cfg(not(all(
            feature = "coarse-clock",
            any(target_os = "linux", target_os = "android")
        )))]
        {
            None
        }
    }

    /// A coarse reading on the clock whose origin this is.
    #[inline]
    pub(crate) fn read(&self) -> Coarse {
        #[cfg(all(
            feature = "coarse-clock",
            any(target_os = "linux", target_os = "android")
        ))]
        let now = system::duration(rustix::time::clock_gettime(
            rustix::time::ClockId::MonotonicCoarse,
        ))
        .unwrap_or_default();
        // Never read: there is no origin to read from here.
        #[cfg(not(all(
            feature = "coarse-clock",
            any(target_os = "linux", target_os = "android")
        )))]
        let now = self.origin;
        Coarse {
            reading: now.saturating_sub(self.origin),
            lag: self.lag,
        }
    }
}

#[cfg(all(
    feature = "coarse-clock",
    any(target_os = "linux", target_os = "android")
))]
mod system {
    use std::time::Duration;

    use rustix::time::Timespec;

    /// The lag to state for a coarse clock of `resolution`: the time since
    /// the last tick, which is one resolution, or a little more when a tick
    /// comes late, so two and a millisecond. `None` for a clock not worth
    /// reading: no resolution at all, or ticks over 10 ms apart.
    pub(super) fn lag_for(resolution: Duration) -> Option<Duration> {
        if resolution.is_zero() || resolution > Duration::from_millis(10) {
            return None;
        }
        Some(resolution * 2 + Duration::from_millis(1))
    }

    /// A `timespec` of a monotonic clock as a `Duration`; `None` for one no
    /// monotonic clock gives (negative).
    #[inline]
    pub(super) fn duration(time: Timespec) -> Option<Duration> {
        let seconds = u64::try_from(time.tv_sec).ok()?;
        let nanos = u32::try_from(time.tv_nsec).ok()?;
        Some(Duration::new(seconds, nanos))
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        const MS: Duration = Duration::from_millis(1);

        #[test]
        fn the_stated_lag_is_two_ticks_and_a_millisecond_for_ticks_up_to_10_ms() {
            assert_eq!(lag_for(4 * MS), Some(9 * MS));
            assert_eq!(lag_for(10 * MS), Some(21 * MS));
            assert_eq!(lag_for(10 * MS + Duration::from_nanos(1)), None);
            assert_eq!(lag_for(Duration::ZERO), None);
        }
    }
}
