//! A growing cooldown (G1-G4): each opening in a row lasts twice the last,
//! up to a cap, and a close starts over.

use std::time::Duration;

use retry_breaker_solution::{
    ConfigError, CooldownGrowth, ManualClock, RetryBreaker, State, WindowConfig,
};

use crate::COOLDOWN;

/// A breaker that opens at the first failure, its cooldown growing as
/// `growth` says.
fn growing(growth: CooldownGrowth) -> (RetryBreaker<ManualClock>, ManualClock) {
    let clock = ManualClock::new();
    let breaker = RetryBreaker::builder()
        .threshold(1)
        .cooldown(COOLDOWN)
        .cooldown_growth(growth)
        .build(clock.clone())
        .expect("valid settings");
    (breaker, clock)
}

/// The cooldown the circuit has just started, read at once.
fn opened_for(breaker: &RetryBreaker<ManualClock>) -> Duration {
    match breaker.state() {
        State::Open { remaining } => remaining,
        other => panic!("expected an open circuit, found {other:?}"),
    }
}

/// Fails the probe the open circuit admits once its cooldown is over, and
/// says how long the circuit then opens for.
fn fail_the_next_probe(breaker: &RetryBreaker<ManualClock>, clock: &ManualClock) -> Duration {
    clock.advance(opened_for(breaker));
    breaker.try_acquire().expect("the probe").failure();
    opened_for(breaker)
}

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

#[test]
fn g1_by_default_every_opening_lasts_the_cooldown() {
    let (breaker, clock) = growing(CooldownGrowth::default());
    breaker.try_acquire().unwrap().failure();
    assert_eq!(opened_for(&breaker), COOLDOWN);
    for _ in 0..40 {
        assert_eq!(fail_the_next_probe(&breaker, &clock), COOLDOWN);
    }
}

#[test]
fn g2_each_failed_probe_doubles_the_next_opening_up_to_the_cap() {
    let (breaker, clock) = growing(CooldownGrowth::exponential(secs(200)));
    breaker.try_acquire().unwrap().failure();
    let mut openings = vec![opened_for(&breaker).as_secs()];
    for _ in 0..40 {
        openings.push(fail_the_next_probe(&breaker, &clock).as_secs());
    }
    assert_eq!(openings[..5], [30, 60, 120, 200, 200]);
    assert!(openings[5..].iter().all(|&s| s == 200), "{openings:?}");
}

#[test]
fn g2_a_cap_equal_to_the_cooldown_keeps_it_constant() {
    let (breaker, clock) = growing(CooldownGrowth::exponential(COOLDOWN));
    breaker.try_acquire().unwrap().failure();
    assert_eq!(opened_for(&breaker), COOLDOWN);
    assert_eq!(fail_the_next_probe(&breaker, &clock), COOLDOWN);
}

#[test]
fn g2_a_probe_that_closes_the_circuit_starts_the_growth_over() {
    let (breaker, clock) = growing(CooldownGrowth::exponential(secs(1000)));
    breaker.try_acquire().unwrap().failure();
    fail_the_next_probe(&breaker, &clock);
    assert_eq!(fail_the_next_probe(&breaker, &clock), secs(120));

    clock.advance(secs(120));
    breaker.try_acquire().expect("the probe").success();
    assert_eq!(breaker.state(), State::Closed { failures: 0 });
    breaker.try_acquire().unwrap().failure();
    assert_eq!(opened_for(&breaker), COOLDOWN, "a close starts over");
    assert_eq!(fail_the_next_probe(&breaker, &clock), secs(60));
}

#[test]
fn g2_a_manual_close_starts_the_growth_over_and_an_isolation_is_no_opening() {
    let (breaker, clock) = growing(CooldownGrowth::exponential(secs(1000)));
    breaker.try_acquire().unwrap().failure();
    assert_eq!(fail_the_next_probe(&breaker, &clock), secs(60));

    breaker.isolate();
    breaker.close();
    breaker.try_acquire().unwrap().failure();
    assert_eq!(opened_for(&breaker), COOLDOWN);
}

#[test]
fn g2_the_growth_doubles_exactly_until_the_cap_however_often_the_probe_fails() {
    let day = secs(24 * 3600);
    let clock = ManualClock::new();
    let breaker = RetryBreaker::builder()
        .threshold(1)
        .cooldown(Duration::from_nanos(1))
        .cooldown_growth(CooldownGrowth::exponential(day))
        .build(clock.clone())
        .expect("valid settings");
    breaker.try_acquire().unwrap().failure();
    let mut last = opened_for(&breaker);
    for _ in 0..60 {
        clock.advance(last);
        breaker.try_acquire().expect("the probe").failure();
        let next = opened_for(&breaker);
        assert!(next == last * 2 || next == day, "{next:?} after {last:?}");
        last = next;
    }
    assert_eq!(last, day);
}

#[test]
fn g2_a_window_that_trips_opens_for_the_cooldown_then_grows_the_same_way() {
    let clock = ManualClock::new();
    let breaker = RetryBreaker::builder()
        .cooldown(COOLDOWN)
        .window(WindowConfig::new(2, 2, 0.5))
        .cooldown_growth(CooldownGrowth::exponential(secs(1000)))
        .build(clock.clone())
        .expect("valid settings");
    breaker.try_acquire().unwrap().success();
    breaker.try_acquire().unwrap().failure();
    assert_eq!(opened_for(&breaker), COOLDOWN);
    assert_eq!(fail_the_next_probe(&breaker, &clock), secs(60));
}

#[test]
fn g3_the_jitter_adds_less_than_its_length_and_a_seed_replays_it() {
    let growth = CooldownGrowth::exponential(secs(100)).jitter_with_seed(secs(10), 42);
    let (first, first_clock) = growing(growth);
    let (second, second_clock) = growing(growth);
    first.try_acquire().unwrap().failure();
    second.try_acquire().unwrap().failure();
    let mut extras = Vec::new();
    for grown in [30, 60, 100, 100] {
        let opened = opened_for(&first);
        assert_eq!(
            opened,
            opened_for(&second),
            "the same seed, the same cooldowns"
        );
        assert!(
            opened >= secs(grown) && opened < secs(grown + 10),
            "{opened:?}"
        );
        extras.push(opened - secs(grown));
        fail_the_next_probe(&first, &first_clock);
        fail_the_next_probe(&second, &second_clock);
    }
    extras.dedup();
    assert_eq!(
        extras.len(),
        4,
        "each opening draws its own extra: {extras:?}"
    );

    let (other, _) = growing(growth.jitter_with_seed(secs(10), 43));
    other.try_acquire().unwrap().failure();
    let (seeded, _) = growing(growth);
    seeded.try_acquire().unwrap().failure();
    assert_ne!(opened_for(&other), opened_for(&seeded), "another seed");
}

#[test]
fn g4_a_cap_below_the_cooldown_is_refused_when_the_breaker_is_built() {
    let built = RetryBreaker::builder()
        .cooldown(COOLDOWN)
        .cooldown_growth(CooldownGrowth::exponential(
            COOLDOWN - Duration::from_nanos(1),
        ))
        .build(ManualClock::new());
    assert_eq!(
        built.unwrap_err(),
        ConfigError::CapBelowCooldown {
            cap: COOLDOWN - Duration::from_nanos(1),
            cooldown: COOLDOWN
        }
    );
    let message = ConfigError::CapBelowCooldown {
        cap: secs(1),
        cooldown: secs(2),
    }
    .to_string();
    assert!(message.contains("at least the cooldown (2s)"), "{message}");
}
