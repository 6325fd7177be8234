//! Ready-made backoff policies for [`RetryBreaker::execute`](crate::RetryBreaker::execute).
//!
//! A policy maps the number of the attempt that just failed (1 for the
//! first) to the delay before the next one. Every policy here saturates
//! instead of overflowing, so no input can make one panic; a
//! `Duration` is never negative, so there is no negative delay to reject.

// Contract: E8 (never panic on overflow: saturate).

use std::hash::{BuildHasher, RandomState};
use std::time::Duration;

/// The same delay after every failure.
///
/// ```
/// use std::time::Duration;
/// use retry_breaker_starter::backoff;
///
/// let policy = backoff::constant(Duration::from_millis(50));
/// assert_eq!(policy(1), Duration::from_millis(50));
/// assert_eq!(policy(9), Duration::from_millis(50));
/// ```
pub fn constant(delay: Duration) -> impl Fn(u32) -> Duration + Clone + Send + Sync {
    move |_| delay
}

/// `base` after the first failure, doubling after each further one, never
/// more than `cap`: `min(cap, base * 2^(attempt - 1))`, exact for every
/// attempt number, saturating where it would overflow. (Attempt 0, which
/// `execute` never passes, gets `base` as attempt 1 does.)
///
/// ```
/// use std::time::Duration;
/// use retry_breaker_starter::backoff;
///
/// let policy = backoff::exponential(Duration::from_millis(100), Duration::from_secs(1));
/// let delays: Vec<_> = (1..=5).map(&policy).collect();
/// assert_eq!(delays, [100, 200, 400, 800, 1000].map(Duration::from_millis));
/// assert_eq!(policy(u32::MAX), Duration::from_secs(1));
/// ```
// (Generated: the TODO below leaves names unused until it is done.)
#[allow(unused_variables, unused_mut, unreachable_code)]
pub fn exponential(
    base: Duration,
    cap: Duration,
) -> impl Fn(u32) -> Duration + Clone + Send + Sync {
    move |attempt| {
        // TODO(5): min(cap, base * 2^(attempt - 1)); attempt 0 counts as 1 (E8)
        todo!(
            "TODO(5): min(cap, base * 2^(attempt - 1)); attempt 0 counts as 1 (E8); see LAB.md, step 5"
        )
    }
}

/// `base * 2^doublings`, exactly, or [`Duration::MAX`] once that no longer
/// fits. A `Duration` holds fewer than 2^95 nanoseconds, so the product is
/// worked out in `u128` nanoseconds, where it cannot overflow unnoticed.
// (Generated: the TODO below leaves names unused until it is done.)
#[allow(unused_variables, unused_mut, unreachable_code)]
fn doubled(base: Duration, doublings: u32) -> Duration {
    // TODO(5): base * 2^doublings, exactly, or Duration::MAX once it does not fit (E8)
    todo!(
        "TODO(5): base * 2^doublings, exactly, or Duration::MAX once it does not fit (E8); see LAB.md, step 5"
    )
}

/// The `Duration` of `nanos` nanoseconds, saturating at [`Duration::MAX`].
// (Generated: the TODO below leaves names unused until it is done.)
#[allow(unused_variables, unused_mut, unreachable_code)]
fn from_nanos(nanos: u128) -> Duration {
    // TODO(5): back from nanoseconds to a Duration, Duration::MAX if the seconds do not fit (E8)
    todo!(
        "TODO(5): back from nanoseconds to a Duration, Duration::MAX if the seconds do not fit (E8); see LAB.md, step 5"
    )
}

/// Spreads the delays of `policy` so that callers who failed together do not
/// all retry at the same instant.
///
/// Each delay is drawn uniformly from `[0, d]`, where `d = policy(attempt)`
/// (*full jitter*): callers who failed together spread over the whole
/// interval, so the dependency sees a trickle instead of waves. Every call
/// of `jittered` draws a fresh seed from the standard library's randomly
/// keyed hasher, so two policies (in one process or in two) spread their
/// retries differently. Build one per call to `execute`: a policy shared by
/// many calls gives them all the same delay for the same attempt. For a
/// reproducible sequence (a test, the replay of an incident), use
/// [`jittered_with_seed`].
///
/// ```
/// use std::time::Duration;
/// use retry_breaker_starter::backoff;
///
/// let policy = backoff::jittered(backoff::constant(Duration::from_secs(2)));
/// assert!(policy(1) <= Duration::from_secs(2));
/// ```
pub fn jittered(
    policy: impl Fn(u32) -> Duration + Clone + Send + Sync,
) -> impl Fn(u32) -> Duration + Clone + Send + Sync {
    jittered_with_seed(policy, fresh_seed())
}

/// [`jittered`] with the seed given: the delays are a pure function of
/// `seed` and the attempt number, so a test sees the same delays every
/// time. In production, prefer [`jittered`]: callers that share a seed
/// retry in lockstep, the very herd that jitter exists to break up.
///
/// ```
/// use std::time::Duration;
/// use retry_breaker_starter::backoff;
///
/// let policy = backoff::jittered_with_seed(backoff::constant(Duration::from_secs(2)), 7);
/// let delay = policy(1);
/// assert!(delay <= Duration::from_secs(2));
/// assert_eq!(policy(1), delay, "same seed and attempt, same delay");
/// ```
// (Generated: the TODO below leaves names unused until it is done.)
#[allow(unused_variables, unused_mut, unreachable_code)]
pub fn jittered_with_seed(
    policy: impl Fn(u32) -> Duration + Clone + Send + Sync,
    seed: u64,
) -> impl Fn(u32) -> Duration + Clone + Send + Sync {
    move |attempt| {
        // TODO(5): full jitter: a random share of policy(attempt), drawn from mix(seed, attempt) (E8)
        todo!(
            "TODO(5): full jitter: a random share of policy(attempt), drawn from mix(seed, attempt) (E8); see LAB.md, step 5"
        )
    }
}

/// A seed no other policy shares: std's `RandomState` is keyed from the
/// operating system's randomness once per thread and moves its keys on for
/// every new instance, so each call gives another value, with no
/// dependency and no allocation.
pub(crate) fn fresh_seed() -> u64 {
    RandomState::new().hash_one(0_u8)
}

/// `span * random / 2^64`, in integer arithmetic that cannot overflow: the
/// largest `Duration` has fewer than 2^95 nanoseconds, so the top 32 bits
/// of `random` leave room in a `u128`.
// (Generated: the TODO below leaves names unused until it is done.)
#[allow(unused_variables, unused_mut, unreachable_code)]
pub(crate) fn fraction_of(span: Duration, random: u64) -> Duration {
    // TODO(5): span scaled by random / 2^64, without overflow (E8)
    todo!("TODO(5): span scaled by random / 2^64, without overflow (E8); see LAB.md, step 5")
}

/// `SplitMix64` of the seed and attempt: a well-mixed, dependency-free hash.
pub(crate) fn mix(seed: u64, attempt: u32) -> u64 {
    let mut z = seed
        .wrapping_add(u64::from(attempt).wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
