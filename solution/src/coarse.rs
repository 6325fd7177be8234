// SOLUTION ONLY FILE: the fast OPEN refusal's cheaper clock; the student's breaker reads the exact one
//! Coarse readings: a cheaper look at a clock that may run a little behind.
//!
//! An OPEN breaker refuses every caller until its deadline, and a refusal
//! is little more than a clock reading (see `shortcut.rs`). When the
//! deadline is far away, the exact time does not matter: any reading that
//! is surely before the deadline proves the refusal right. The operating
//! system keeps such a reading for free, updated at each timer tick
//! (`CLOCK_MONOTONIC_COARSE` on Linux), at about a quarter of the cost of
//! the exact one. So a clock may offer a [`Coarse`] reading with a bound on
//! how far behind it runs, and a refusal reads the exact clock only when
//! the deadline is within that bound.

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

pub(crate) use system::CoarseOrigin;

#[cfg(all(
    feature = "coarse-clock",
    any(target_os = "linux", target_os = "android")
))]
mod system {
    use std::time::Duration;

    use rustix::time::{ClockId, Timespec, clock_getres, clock_gettime};

    use super::Coarse;

    /// The operating system's coarse monotonic clock, measured from an
    /// origin taken just after a [`SystemClock`](crate::SystemClock)'s, on
    /// the same time line (`Instant` reads `CLOCK_MONOTONIC` on Linux).
    ///
    /// The coarse clock is the monotonic clock as of the last timer tick, so
    /// it is never ahead of it; measured from a later origin, its readings
    /// are smaller still, never ahead of the system clock's. It runs behind
    /// by the time since the last tick: one resolution, a little more when a
    /// tick comes late, so the stated lag is two resolutions and a
    /// millisecond. Ticks further apart than 10 ms are not used.
    #[derive(Debug, Clone, Copy)]
    pub(crate) struct CoarseOrigin {
        origin: Duration,
        lag: Duration,
    }

    impl CoarseOrigin {
        /// The coarse clock from this moment, if the system has one worth
        /// reading. Call it just after taking the exact clock's origin.
        pub(crate) fn now() -> Option<Self> {
            let resolution = duration(clock_getres(ClockId::MonotonicCoarse))?;
            if resolution.is_zero() || resolution > Duration::from_millis(10) {
                return None;
            }
            Some(Self {
                origin: duration(clock_gettime(ClockId::Monotonic))?,
                lag: resolution * 2 + Duration::from_millis(1),
            })
        }

        /// A coarse reading on the clock whose origin this is.
        #[inline]
        pub(crate) fn read(&self) -> Coarse {
            let now = duration(clock_gettime(ClockId::MonotonicCoarse)).unwrap_or_default();
            Coarse {
                reading: now.saturating_sub(self.origin),
                lag: self.lag,
            }
        }
    }

    /// A `timespec` of a monotonic clock as a `Duration`; `None` for one no
    /// monotonic clock gives (negative).
    #[inline]
    fn duration(time: Timespec) -> Option<Duration> {
        let seconds = u64::try_from(time.tv_sec).ok()?;
        let nanos = u32::try_from(time.tv_nsec).ok()?;
        Some(Duration::new(seconds, nanos))
    }
}

#[cfg(not(all(
    feature = "coarse-clock",
    any(target_os = "linux", target_os = "android")
)))]
mod system {
    use super::Coarse;

    /// No coarse clock here (the `coarse-clock` feature is off, or the
    /// system has none): there is no origin to read from.
    #[derive(Debug, Clone, Copy)]
    pub(crate) enum CoarseOrigin {}

    impl CoarseOrigin {
        pub(crate) fn now() -> Option<Self> {
            None
        }

        pub(crate) fn read(&self) -> Coarse {
            match *self {}
        }
    }
}
