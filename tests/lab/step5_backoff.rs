//! Step 5, backoff policies: exponential with a cap that saturates, and
//! full jitter from a seed (TODO(5); rule E8).

use std::time::Duration;

use retry_breaker::backoff;

use crate::support::ms;

#[test]
fn e8_exponential_backoff_doubles_up_to_its_cap_and_saturates() {
    let policy = backoff::exponential(ms(10), ms(300));
    assert_eq!(
        (1..=7).map(&policy).collect::<Vec<_>>(),
        [10, 20, 40, 80, 160, 300, 300].map(ms),
        "TODO(5): base after the first failure, doubling after each further one, capped (E8)"
    );
    assert_eq!(
        policy(0),
        ms(10),
        "TODO(5): attempt 0 is treated as the first (E8)"
    );
    let huge = backoff::exponential(Duration::MAX, Duration::MAX);
    assert_eq!(
        [1, 2, 64, u32::MAX].map(&huge),
        [Duration::MAX; 4],
        "TODO(5): saturate at Duration::MAX, never panic (E8)"
    );
    let capped = backoff::exponential(Duration::from_secs(1), Duration::from_secs(60));
    assert_eq!(
        capped(40),
        Duration::from_secs(60),
        "TODO(5): the cap holds however many attempts came before (E8)"
    );
}

#[test]
fn e8_full_jitter_stays_within_zero_to_full_and_is_a_pure_function_of_the_seed() {
    let base = backoff::exponential(ms(100), ms(10_000));
    let one = backoff::jittered_with_seed(base.clone(), 1);
    let two = backoff::jittered_with_seed(base.clone(), 2);
    let mut differs = false;
    for attempt in 1..=20 {
        let full = base(attempt);
        let delay = one(attempt);
        assert!(
            delay <= full,
            "TODO(5): full jitter draws from [0, d]: attempt {attempt} gave {delay:?} of {full:?} (E8)"
        );
        assert_eq!(
            one(attempt),
            delay,
            "TODO(5): the same seed and attempt give the same delay, so tests and replays are exact (E8)"
        );
        differs |= two(attempt) != delay;
    }
    assert!(
        differs,
        "TODO(5): different seeds must spread the delays, or callers retry in lockstep (E8)"
    );
    assert_eq!(
        backoff::jittered_with_seed(backoff::constant(Duration::ZERO), 9)(1),
        Duration::ZERO,
        "TODO(5): nothing to spread, no delay (E8)"
    );
}

/// How 2,000 seeds' first delays of full jitter over `[0, full]` fall into
/// its ten tenths.
fn tenths_of(full: Duration) -> [u32; 10] {
    let mut tenths = [0u32; 10];
    for seed in 0..2_000 {
        let delay = backoff::jittered_with_seed(backoff::constant(full), seed)(1);
        let tenth = (delay.as_nanos() * 10 / full.as_nanos()).min(9);
        tenths[tenth as usize] += 1;
    }
    tenths
}

#[test]
fn e8_full_jitter_fills_the_whole_interval_evenly() {
    // Over many seeds the delays fill every tenth of [0, d]: not bunched at
    // one end, and not kept above d/2 as "equal jitter" would.
    let full = Duration::from_millis(1_000);
    let tenths = tenths_of(full);
    assert!(
        tenths.iter().all(|&n| (140..=260).contains(&n)),
        "TODO(5): full jitter is uniform over [0, d]; 2,000 seeds gave these counts per tenth: \
         {tenths:?} (E8)"
    );
    // And over an interval longer than 2^64 ns (584 years): a draw of 64
    // random bits taken modulo the interval never reaches past its first
    // 2^64 ns, so it would leave nine tenths of such an interval empty.
    for long in [Duration::from_secs(1 << 40), Duration::MAX] {
        let tenths = tenths_of(long);
        assert!(
            tenths.iter().all(|&n| (140..=260).contains(&n)),
            "TODO(5): full jitter is uniform over [0, d] for every d, {long:?} too (more \
             nanoseconds than 64 random bits can count: scale the interval by the draw instead \
             of taking the draw modulo it); 2,000 seeds gave these counts per tenth: {tenths:?} (E8)"
        );
    }
    // Every attempt number of one seed spreads too.
    let policy = backoff::jittered_with_seed(backoff::constant(full), 42);
    let below_half = (1..=2_000).filter(|&n| policy(n) < full / 2).count();
    assert!(
        (800..=1_200).contains(&below_half),
        "TODO(5): the draw depends on the attempt number as well as the seed: {below_half} of \
         2,000 attempts fell below d/2 (E8)"
    );
}

/// Attempt numbers across the whole range of a `u32`: every one up to 300,
/// both sides of every power of two, the very top, and a deterministic
/// spread in between.
fn attempt_numbers() -> Vec<u32> {
    let mut numbers: Vec<u32> = (0..=300).collect();
    for bit in 0..32 {
        let power = 1u32 << bit;
        numbers.extend([power - 1, power, power.saturating_add(1)]);
    }
    numbers.extend([u32::MAX - 1, u32::MAX]);
    let mut x = 0x9E37_79B9u32;
    for _ in 0..2_000 {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        numbers.push(x);
    }
    numbers.sort_unstable();
    numbers.dedup();
    numbers
}

/// `min(cap, base * 2^(attempt - 1))` worked out with big integers, attempt
/// 0 counting as 1.
fn exact_exponential(base: Duration, cap: Duration, attempt: u32) -> Duration {
    // The plain statement, by powers: 2^(attempt - 1) as a big integer, if
    // it fits, times the base; anything that does not fit is beyond any cap.
    let power = 2u128.checked_pow(attempt.max(1) - 1);
    let wanted = power.and_then(|power| base.as_nanos().checked_mul(power));
    match wanted {
        Some(product) if product <= cap.as_nanos() => {
            Duration::from_secs(u64::try_from(product / 1_000_000_000).unwrap())
                + Duration::from_nanos(u64::try_from(product % 1_000_000_000).unwrap())
        }
        _ if base.is_zero() => Duration::ZERO,
        _ => cap,
    }
}

#[test]
fn e8_exponential_backoff_is_exact_for_every_attempt_number_a_u32_holds() {
    let policies = [
        (Duration::from_nanos(1), Duration::MAX),
        (ms(10), ms(300)),
        (Duration::from_secs(1), Duration::from_secs(3600)),
        (Duration::new(3, 7), Duration::MAX),
        (Duration::MAX, Duration::MAX),
        (Duration::MAX / 3, Duration::MAX),
        (Duration::ZERO, Duration::MAX),
        (ms(5), Duration::ZERO),
    ];
    for (base, cap) in policies {
        let policy = backoff::exponential(base, cap);
        let mut previous = Duration::ZERO;
        for attempt in attempt_numbers() {
            let delay = policy(attempt);
            assert_eq!(
                delay,
                exact_exponential(base, cap, attempt),
                "E8: exponential({base:?}, cap {cap:?}) after attempt {attempt} must be \
                 min(cap, base * 2^(attempt - 1)), saturating rather than overflowing or wrapping"
            );
            assert!(
                delay >= previous,
                "TODO(5): backoff never shrinks as attempts go on (attempt {attempt}, E8)"
            );
            previous = delay;
        }
    }
}

#[test]
fn e8_jittered_backoff_holds_for_every_attempt_number_a_u32_holds() {
    for full in [Duration::ZERO, ms(1), Duration::new(7, 3), Duration::MAX] {
        for seed in [0, 1, 7, u64::MAX] {
            let jittered = backoff::jittered_with_seed(backoff::constant(full), seed);
            for attempt in attempt_numbers() {
                let delay = jittered(attempt);
                assert!(
                    delay <= full,
                    "TODO(5): full jitter of {full:?} (seed {seed}) after attempt {attempt} must \
                     lie in [0, d], without overflowing, got {delay:?} (E8)"
                );
            }
        }
    }
}
