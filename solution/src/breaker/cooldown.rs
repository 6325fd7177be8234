// SOLUTION ONLY FILE: a growing cooldown needs the solution's circuit; the student's has a fixed one
//! A growing cooldown (rules G1-G4): each time the circuit opens again
//! without closing in between, it stays open longer, up to a cap, so a
//! dependency that keeps failing its probes is probed less and less often.
//! A close starts over.

use std::time::Duration;

use crate::error::ConfigError;
use crate::time::backoff;

/// How long each opening of the circuit lasts, from the breaker's
/// cooldown: the same every time (the default, the core lab's), or doubling
/// at each reopening up to a cap, with an optional random extra.
///
/// The n-th opening in a row (the first trip is n = 1; each failed probe
/// and each overdue one opens again; a close starts over) lasts
/// `min(cap, cooldown × 2^(n-1))`, then plus a random share of `jitter`
/// (G1-G3). The jitter comes after the cap, so that breakers capped
/// together do not probe together. (Envoy's outlier ejection grows
/// linearly instead: the base ejection time times the number of ejections,
/// up to `max_ejection_time`, with `max_ejection_time_jitter` added.)
///
/// ```
/// use std::time::Duration;
/// use retry_breaker_solution::{CooldownGrowth, ManualClock, RetryBreaker, State};
///
/// let clock = ManualClock::new();
/// let breaker = RetryBreaker::builder()
///     .threshold(1)
///     .cooldown(Duration::from_secs(10))
///     .cooldown_growth(CooldownGrowth::exponential(Duration::from_secs(25)))
///     .build(clock.clone())?;
///
/// breaker.try_acquire()?.failure(); // opens for 10 s
/// clock.advance(Duration::from_secs(10));
/// breaker.try_acquire()?.failure(); // the probe fails: 20 s
/// assert_eq!(breaker.state(), State::Open { remaining: Duration::from_secs(20) });
/// clock.advance(Duration::from_secs(20));
/// breaker.try_acquire()?.failure(); // and again: 40 s, capped at 25
/// assert_eq!(breaker.state(), State::Open { remaining: Duration::from_secs(25) });
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
// Contract: G1-G4.
pub struct CooldownGrowth {
    /// The longest an opening lasts before the jitter; `None` for a
    /// constant cooldown.
    pub cap: Option<Duration>,
    /// The most the jitter adds to an opening.
    pub jitter: Duration,
    /// Where the jitter's draws start: each opening's extra is drawn from
    /// this seed and the opening's number, so a seed replays the same
    /// cooldowns.
    pub seed: u64,
}

impl Default for CooldownGrowth {
    fn default() -> Self {
        CooldownGrowth::constant()
    }
}

impl CooldownGrowth {
    /// Every opening lasts the cooldown (G1): the default.
    pub fn constant() -> Self {
        CooldownGrowth {
            cap: None,
            jitter: Duration::ZERO,
            seed: 0,
        }
    }

    /// Each reopening doubles the last opening's length, up to `cap` (G2).
    /// A cap below the cooldown is refused when the breaker is built.
    pub fn exponential(cap: Duration) -> Self {
        CooldownGrowth {
            cap: Some(cap),
            ..CooldownGrowth::constant()
        }
    }

    /// Adds to each opening a random extra of at most `up_to` (G3), drawn
    /// from a seed of its own.
    pub fn jitter(self, up_to: Duration) -> Self {
        self.jitter_with_seed(up_to, backoff::fresh_seed())
    }

    /// [`jitter`](Self::jitter) from a given seed, to replay the same
    /// cooldowns (in a test, say).
    pub fn jitter_with_seed(self, up_to: Duration, seed: u64) -> Self {
        CooldownGrowth {
            jitter: up_to,
            seed,
            ..self
        }
    }

    /// Refuses a cap below the cooldown, which would shorten the very first
    /// opening (G4).
    pub(crate) fn check(self, cooldown: Duration) -> Result<Self, ConfigError> {
        match self.cap {
            Some(cap) if cap < cooldown => Err(ConfigError::CapBelowCooldown { cap, cooldown }),
            _ => Ok(self),
        }
    }

    /// How long the `opening`-th opening in a row lasts (1 for a trip from
    /// CLOSED). Saturates rather than overflowing: no setting can make it
    /// panic (G2, G3).
    pub(crate) fn length(self, cooldown: Duration, opening: u32) -> Duration {
        let grown = match self.cap {
            None => cooldown,
            // Backoff's doubling, exact until it saturates at the cap.
            Some(cap) => backoff::exponential(cooldown, cap)(opening),
        };
        let extra = backoff::fraction_of(self.jitter, backoff::mix(self.seed, opening));
        grown.saturating_add(extra)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: fn(u64) -> Duration = Duration::from_secs;

    #[test]
    fn g1_a_constant_cooldown_never_grows() {
        let constant = CooldownGrowth::constant();
        for opening in [0, 1, 2, 31, 32, u32::MAX] {
            assert_eq!(constant.length(S(10), opening), S(10));
        }
    }

    #[test]
    fn g2_each_reopening_doubles_up_to_the_cap_and_never_overflows() {
        let growth = CooldownGrowth::exponential(S(100));
        let lengths: Vec<u64> = (1..=6).map(|n| growth.length(S(10), n).as_secs()).collect();
        assert_eq!(lengths, [10, 20, 40, 80, 100, 100]);
        assert_eq!(growth.length(S(10), 0), S(10), "0 counts as the first");
        for opening in [31, 32, 33, u32::MAX] {
            assert_eq!(growth.length(S(10), opening), S(100));
            assert_eq!(growth.length(Duration::ZERO, opening), Duration::ZERO);
        }
        let huge = CooldownGrowth::exponential(Duration::MAX);
        assert_eq!(huge.length(Duration::MAX, 2), Duration::MAX);
        assert_eq!(
            huge.length(Duration::from_nanos(1), 33),
            Duration::from_nanos(1 << 32),
            "exact past what a u32 factor holds"
        );
        assert_eq!(
            huge.length(Duration::from_nanos(1), u32::MAX),
            Duration::MAX
        );
    }

    #[test]
    fn g3_the_jitter_adds_at_most_its_length_after_the_cap_and_replays_by_seed() {
        let growth = CooldownGrowth::exponential(S(100)).jitter_with_seed(S(5), 7);
        let mut extras = std::collections::BTreeSet::new();
        for opening in 1..=200 {
            let length = growth.length(S(10), opening);
            let grown = CooldownGrowth::exponential(S(100)).length(S(10), opening);
            assert!(length >= grown && length < grown + S(5), "{length:?}");
            assert_eq!(length, growth.length(S(10), opening), "the seed replays");
            extras.insert(length - grown);
        }
        assert!(extras.len() > 190, "draws differ opening by opening");
        let other = growth.jitter_with_seed(S(5), 8);
        assert_ne!(other.length(S(10), 1), growth.length(S(10), 1));
        assert_eq!(
            CooldownGrowth::exponential(Duration::MAX)
                .jitter_with_seed(Duration::MAX, 1)
                .length(Duration::MAX, 3),
            Duration::MAX,
            "saturates"
        );
    }

    #[test]
    fn g3_jitter_keeps_the_growth_and_draws_a_seed_of_its_own() {
        let growth = CooldownGrowth::exponential(S(100));
        let (one, two) = (growth.jitter(S(5)), growth.jitter(S(5)));
        assert_eq!((one.cap, one.jitter), (Some(S(100)), S(5)));
        assert_ne!(one.seed, two.seed, "two breakers jitter apart");
    }

    #[test]
    fn g4_a_cap_below_the_cooldown_is_refused_and_one_equal_to_it_is_not() {
        assert_eq!(
            CooldownGrowth::exponential(S(9)).check(S(10)),
            Err(ConfigError::CapBelowCooldown {
                cap: S(9),
                cooldown: S(10)
            })
        );
        assert!(CooldownGrowth::exponential(S(10)).check(S(10)).is_ok());
        assert!(CooldownGrowth::constant().check(S(10)).is_ok());
    }
}
