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
            "TODO(5): full jitter is uniform over [0, d] for every d, {long:?} too, which holds \
             more nanoseconds than 64 bits can count: scale the interval by the draw (not the \
             draw modulo the interval), and turn the product back into a Duration without \
             cutting it to 64 bits (`Duration::from_nanos(n as u64)` wraps); 2,000 seeds gave \
             these counts per tenth: {tenths:?} (E8)"
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

/// Delays worked out by hand at the edges of `Duration`: `(base, cap,
/// attempt, the delay after it)`. `Duration::MAX` is about 2^93.9 ns, so
/// one nanosecond doubles 93 times before the cap, and 2^64 - 1 ns 29 times.
const EDGES: [(Duration, Duration, u32, Duration); 11] = [
    (
        Duration::from_nanos(1),
        Duration::MAX,
        1,
        Duration::from_nanos(1),
    ),
    (
        Duration::from_nanos(1),
        Duration::MAX,
        64,
        Duration::new(9_223_372_036, 854_775_808),
    ),
    (
        Duration::from_nanos(1),
        Duration::MAX,
        65,
        Duration::new(18_446_744_073, 709_551_616),
    ),
    (
        Duration::from_nanos(1),
        Duration::MAX,
        94,
        Duration::new(9_903_520_314_283_042_199, 192_993_792),
    ),
    (Duration::from_nanos(1), Duration::MAX, 95, Duration::MAX),
    (
        Duration::from_nanos(u64::MAX),
        Duration::MAX,
        30,
        Duration::new(9_903_520_314_283_042_198, 656_122_880),
    ),
    (
        Duration::from_nanos(u64::MAX),
        Duration::MAX,
        31,
        Duration::MAX,
    ),
    (Duration::new(3, 7), Duration::MAX, 3, Duration::new(12, 28)),
    (
        Duration::new(3, 7),
        Duration::MAX,
        34,
        Duration::new(25_769_803_836, 129_542_144),
    ),
    (
        Duration::from_nanos(u64::MAX / 3),
        Duration::MAX,
        2,
        Duration::new(12_297_829_382, 473_034_410),
    ),
    (Duration::MAX, Duration::MAX, 2, Duration::MAX),
];

#[test]
fn e8_exponential_backoff_is_exact_for_every_attempt_number_a_u32_holds() {
    for (base, cap, attempt, delay) in EDGES {
        assert_eq!(
            backoff::exponential(base, cap)(attempt),
            delay,
            "E8: exponential({base:?}, cap {cap:?}) after attempt {attempt} must be \
             min(cap, base * 2^(attempt - 1)), exactly, however large (TODO(5))"
        );
    }
    // Every attempt number, by its neighbour: the first delay is the base
    // (capped), and each next one is twice the one before, up to the cap.
    let policies = [
        (Duration::from_nanos(1), Duration::MAX),
        (Duration::from_nanos(u64::MAX), Duration::MAX),
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
        assert_eq!(
            [policy(0), policy(1)],
            [base.min(cap); 2],
            "E8: exponential({base:?}, cap {cap:?}) waits the base, capped, after the first \
             attempt, and treats attempt 0 as the first (TODO(5))"
        );
        let mut previous = Duration::ZERO;
        for attempt in attempt_numbers() {
            let delay = policy(attempt);
            // (Attempt 0 counts as the first, so the rule starts at 1.)
            if let Some(next) = attempt.checked_add(1).filter(|_| attempt >= 1) {
                let doubled = delay.checked_mul(2).map_or(cap, |twice| twice.min(cap));
                assert_eq!(
                    policy(next),
                    doubled,
                    "E8: exponential({base:?}, cap {cap:?}) after attempt {next} must be twice \
                     the delay after attempt {attempt}, capped, saturating rather than \
                     overflowing or wrapping (TODO(5))"
                );
            }
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
            let mut longest = Duration::ZERO;
            for attempt in attempt_numbers() {
                let delay = jittered(attempt);
                assert!(
                    delay <= full,
                    "TODO(5): full jitter of {full:?} (seed {seed}) after attempt {attempt} must \
                     lie in [0, d], without overflowing, got {delay:?} (E8)"
                );
                longest = longest.max(delay);
            }
            // Drawn from [0, d] for thousands of attempt numbers, a share
            // of a nonzero d is not 0 every time.
            assert!(
                full.is_zero() || !longest.is_zero(),
                "TODO(5): full jitter of {full:?} (seed {seed}) was 0 for every attempt number: \
                 each delay is a random share of d, drawn from the seed and the attempt (E8)"
            );
        }
    }
}

/// SplitMix64's first outputs for seed 0, as published with the algorithm.
const SPLITMIX64_OF_0: [u64; 6] = [
    0xE220_A839_7B1D_CDAF,
    0x6E78_9E6A_A1B9_65F4,
    0x06C4_5D18_8009_454F,
    // The first of these whose top half shows the last step's xor: with an
    // or in its place, bit 32 would come out set.
    0xF88B_B8A8_724C_81EC,
    0x1B39_896A_51A8_749B,
    0x53CB_9F0C_747E_A2EA,
];

/// The seed whose draw for `attempt` is `random`: the lab's `mix`
/// (SplitMix64 of the seed and attempt) run backwards, so that a test can
/// ask for the draw it wants. Each step of SplitMix64 can be undone: an
/// odd multiplier has an inverse modulo 2^64, and `z ^ (z >> s)` gives back
/// `z` when xored with its further shifts.
fn seed_drawing(random: u64, attempt: u32) -> u64 {
    const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;
    let unshift = |y: u64, s: u32| (s..64).step_by(s as usize).fold(y, |z, by| z ^ (y >> by));
    let inverse = |c: u64| {
        (0..6).fold(c, |inv, _| {
            inv.wrapping_mul(2u64.wrapping_sub(c.wrapping_mul(inv)))
        })
    };
    let mut z = unshift(random, 31);
    z = unshift(z.wrapping_mul(inverse(0x94D0_49BB_1331_11EB)), 27);
    z = unshift(z.wrapping_mul(inverse(0xBF58_476D_1CE4_E5B9)), 30);
    z.wrapping_sub(u64::from(attempt).wrapping_mul(GAMMA))
        .wrapping_sub(GAMMA)
}

#[test]
fn e8_e9_full_jitter_draws_splitmix64_of_the_seed_and_the_attempt() {
    assert_eq!(
        seed_drawing(SPLITMIX64_OF_0[0], 0),
        0,
        "the test's own inverse of SplitMix64"
    );
    // Over 2^32 ns the delay is the draw's top 32 bits, in nanoseconds.
    let policy = backoff::jittered_with_seed(backoff::constant(Duration::from_nanos(1 << 32)), 0);
    for (attempt, published) in (0..).zip(SPLITMIX64_OF_0) {
        assert_eq!(
            policy(attempt),
            Duration::from_nanos(published >> 32),
            "TODO(5): attempt {attempt} of seed 0 draws mix(0, {attempt}), SplitMix64's output \
             {}, and scales 2^32 ns by it (E8, E9)",
            attempt + 1
        );
    }
}

#[test]
fn e8_full_jitter_scales_the_interval_by_the_draw_over_2_to_the_64() {
    let span = Duration::new(3, 500_000_000);
    let drawn =
        |random| backoff::jittered_with_seed(backoff::constant(span), seed_drawing(random, 1))(1);
    assert_eq!(
        drawn(0),
        Duration::ZERO,
        "TODO(5): a draw of 0 is no delay (E8)"
    );
    assert_eq!(
        drawn(1 << 62),
        Duration::new(0, 875_000_000),
        "TODO(5): a draw of 2^62 is a quarter of the interval (E8)"
    );
    assert_eq!(
        drawn(1 << 63),
        Duration::new(1, 750_000_000),
        "TODO(5): a draw of 2^63 is half the interval (E8)"
    );
    assert!(
        drawn(u64::MAX) < span,
        "TODO(5): the largest draw stays below the whole interval: scaled by draw / 2^64 (E8)"
    );
    let longest =
        backoff::jittered_with_seed(backoff::constant(Duration::MAX), seed_drawing(u64::MAX, 1))(1);
    assert!(
        longest < Duration::MAX,
        "TODO(5): even over Duration::MAX the largest draw stays below it, without overflowing (E8)"
    );
}

#[test]
fn e8_each_jittered_policy_draws_its_own_seed() {
    // Two default policies over the same delays tell apart within a few
    // attempts (the chance that 16 draws all agree is nil).
    let full = Duration::from_secs(1);
    let (one, two) = (
        backoff::jittered(backoff::constant(full)),
        backoff::jittered(backoff::constant(full)),
    );
    assert!(
        (1..=16).any(|attempt| one(attempt) != two(attempt)),
        "TODO(5): two jittered policies draw different seeds, or their callers retry in \
         lockstep (E8)"
    );
}
