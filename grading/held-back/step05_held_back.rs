//! Held back from the student edition: backoff policies (TODO(5); rule E8)
//! with bases, caps, jitter seeds and attempt numbers drawn from the
//! student's seed (`LAB_STUDENT_SEED`, see `step01_seeded.rs`). Exponential
//! delays are compared with `min(cap, base * 2^(attempt - 1))` worked out in
//! 128-bit integers; jitter is checked for its bounds, its purity and its
//! spread. Every failure message says what was drawn.

use std::time::Duration;

use retry_breaker::backoff;

use crate::step01_seeded::Draw;
use crate::support::ms;

/// `min(cap, base * 2^(attempt - 1))` by plain big-integer arithmetic,
/// attempt 0 counting as 1.
fn exact_exponential(base: Duration, cap: Duration, attempt: u32) -> Duration {
    let power = 2u128.checked_pow(attempt.max(1) - 1);
    let wanted = power.and_then(|power| base.as_nanos().checked_mul(power));
    match wanted {
        Some(product) if product <= cap.as_nanos() => nanos(product),
        _ if base.is_zero() => Duration::ZERO,
        _ => cap,
    }
}

/// The `Duration` of `nanos` nanoseconds (which must fit).
fn nanos(nanos: u128) -> Duration {
    Duration::new(
        u64::try_from(nanos / 1_000_000_000).unwrap(),
        u32::try_from(nanos % 1_000_000_000).unwrap(),
    )
}

/// Attempt numbers: all up to 140, `extra` drawn ones across the range of a
/// `u32`, and the top.
fn attempts(draw: &mut Draw, extra: u32) -> Vec<u32> {
    let mut numbers: Vec<u32> = (0..=140).collect();
    numbers.extend((0..extra).map(|_| draw.count(0, u32::MAX)));
    numbers.extend([u32::MAX - 1, u32::MAX]);
    numbers.sort_unstable();
    numbers.dedup();
    numbers
}

#[test]
fn e8_exponential_backoff_with_a_drawn_base_and_cap_is_exact() {
    let mut draw = Draw::new("e8_exponential_backoff_with_a_drawn_base_and_cap_is_exact");
    let base = draw.duration(Duration::from_nanos(1), Duration::from_secs(3));
    // A cap far above the base, reached after some doublings, and one at
    // or below the base, which holds from the first attempt on.
    let high = base * draw.count(2, 5_000) + draw.duration(Duration::ZERO, base);
    let low = draw.duration(Duration::ZERO, base);
    let numbers = attempts(&mut draw, 200);
    for cap in [high, low] {
        let policy = backoff::exponential(base, cap);
        for &attempt in &numbers {
            assert_eq!(
                policy(attempt),
                exact_exponential(base, cap, attempt),
                "TODO(5): exponential(base {base:?}, cap {cap:?}) after attempt {attempt} must be \
                 min(cap, base * 2^(attempt - 1)), attempt 0 counting as 1 (E8)"
            );
        }
    }
}

#[test]
fn e8_exponential_backoff_near_duration_max_saturates_exactly() {
    let mut draw = Draw::new("e8_exponential_backoff_near_duration_max_saturates_exactly");
    let shift = draw.count(0, 94);
    let top = nanos(Duration::MAX.as_nanos() >> shift);
    let base = top.saturating_add(draw.duration(Duration::ZERO, ms(1)));
    let cap = Duration::MAX - draw.duration(Duration::ZERO, Duration::from_secs(1_000));
    let policy = backoff::exponential(base, cap);
    for attempt in attempts(&mut draw, 100) {
        assert_eq!(
            policy(attempt),
            exact_exponential(base, cap, attempt),
            "TODO(5): exponential(base {base:?}, cap {cap:?}) after attempt {attempt}: doubling \
             past what a Duration holds saturates at the cap, never panics or wraps (E8)"
        );
    }
}

#[test]
fn e8_full_jitter_of_a_drawn_policy_stays_within_it_and_is_a_pure_function_of_the_seed() {
    let mut draw = Draw::new("e8_full_jitter_of_a_drawn_policy_stays_within_it");
    let base = draw.duration(ms(1), Duration::from_secs(2));
    let cap = base * draw.count(1, 10_000);
    let seed = draw.next();
    let other = seed ^ (1 << draw.range(0, 63));
    let full = backoff::exponential(base, cap);
    let one = backoff::jittered_with_seed(full.clone(), seed);
    let two = backoff::jittered_with_seed(full.clone(), other);
    let case = format!("exponential(base {base:?}, cap {cap:?}) jittered with seed {seed}");
    let mut differs = 0;
    for attempt in attempts(&mut draw, 50) {
        let delay = one(attempt);
        assert!(
            delay <= full(attempt),
            "TODO(5): {case}: full jitter draws from [0, d]; attempt {attempt} gave {delay:?} of \
             {:?} (E8)",
            full(attempt)
        );
        assert_eq!(
            one(attempt),
            delay,
            "TODO(5): {case}: the same seed and attempt give the same delay (E8)"
        );
        differs += u32::from(two(attempt) != delay);
    }
    assert!(
        differs > 100,
        "TODO(5): {case}: seed {other} gave the same delay as seed {seed} for all but {differs} \
         of the attempts: different seeds must spread the delays (E8)"
    );
}

#[test]
fn e8_full_jitter_fills_the_whole_interval_from_drawn_seeds() {
    let mut draw = Draw::new("e8_full_jitter_fills_the_whole_interval_from_drawn_seeds");
    let full = draw.duration(ms(1), Duration::from_secs(3_600));
    let first = draw.next() >> 1;
    let attempt = draw.count(1, 1_000);
    // 4,000 draws: each tenth expects 400; 300..=500 is over five standard
    // deviations either way.
    let mut tenths = [0u32; 10];
    for seed in first..first + 4_000 {
        let delay = backoff::jittered_with_seed(backoff::constant(full), seed)(attempt);
        let tenth = (delay.as_nanos() * 10 / full.as_nanos()).min(9);
        tenths[usize::try_from(tenth).unwrap()] += 1;
    }
    assert!(
        tenths.iter().all(|n| (300..=500).contains(n)),
        "TODO(5): full jitter of {full:?} after attempt {attempt} is uniform over [0, d]; 4,000 \
         seeds from {first} on gave these counts per tenth: {tenths:?} (E8)"
    );
    let seed = draw.next();
    let from = draw.count(1, u32::MAX - 4_000);
    let policy = backoff::jittered_with_seed(backoff::constant(full), seed);
    let below_half = (from..from + 4_000)
        .filter(|&n| policy(n) < full / 2)
        .count();
    assert!(
        (1_800..=2_200).contains(&below_half),
        "TODO(5): full jitter of {full:?} with seed {seed}: the draw depends on the attempt \
         number as well as the seed, but {below_half} of attempts {from}..{} fell below d/2 (E8)",
        from + 4_000
    );
}

#[test]
fn e8_full_jitter_of_drawn_huge_delays_never_overflows() {
    let mut draw = Draw::new("e8_full_jitter_of_drawn_huge_delays_never_overflows");
    for _ in 0..4 {
        let full = Duration::MAX - draw.duration(Duration::ZERO, Duration::from_secs(1_000_000));
        let seed = draw.next();
        let jittered = backoff::jittered_with_seed(backoff::constant(full), seed);
        let mut below_half = 0;
        let numbers = attempts(&mut draw, 100);
        for &attempt in &numbers {
            let delay = jittered(attempt);
            assert!(
                delay <= full,
                "TODO(5): full jitter of {full:?} (seed {seed}) after attempt {attempt} must lie in \
                 [0, d] without overflowing, got {delay:?} (E8)"
            );
            below_half += u32::from(delay < full / 2);
        }
        assert!(
            below_half > 0 && below_half < u32::try_from(numbers.len()).unwrap(),
            "TODO(5): full jitter of {full:?} (seed {seed}): {below_half} of {} delays fell below \
             d/2; a scaled delay must still spread over [0, d] when d is huge (E8)",
            numbers.len()
        );
    }
}
