//! The parts the lab provides (clocks, sleepers, backoff helpers, error
//! messages, the façade). No TODO here: these tests pass from the start and
//! guard the scaffolding the steps stand on (E8, E9).

use std::time::Duration;

use retry_breaker::{
    Clock, ExecuteError, GaveUp, Generation, ManualClock, ManualSleeper, Phase, Rejected, Sleeper,
    State, SystemClock, TokioSleeper, Transition, backoff,
};

use crate::support::{Fault, ms};

#[test]
fn the_suite_tests_the_crate_the_command_asked_for() {
    let expected =
        std::env::var("LAB_EXPECT_CRATE").unwrap_or_else(|_| retry_breaker::UNDER_TEST.into());
    assert_eq!(retry_breaker::UNDER_TEST, expected);
}

#[test]
fn b2_a_new_breaker_is_closed_with_no_failures_in_generation_zero() {
    let breaker = retry_breaker::RetryBreaker::new(3, ms(10), ManualClock::new()).unwrap();
    assert_eq!(breaker.state(), State::Closed { failures: 0 });
    assert_eq!(breaker.generation(), Generation::default());
    assert_eq!((breaker.threshold(), breaker.cooldown()), (3, ms(10)));
    assert!(format!("{breaker:?}").contains("Closed"));
    let permit = breaker.try_acquire().unwrap();
    assert_eq!(
        format!("{permit:?}"),
        "Permit { generation: Generation(0), .. }"
    );
    // Reporting on it is the student's code (step 1); dropping it is not
    // until step 5.
    drop(permit);
}

#[test]
fn a_manual_clock_moves_only_when_told_and_clones_share_it() {
    let clock = ManualClock::new();
    let handle = clock.clone();
    assert_eq!(clock.now(), Duration::ZERO);
    handle.advance(ms(7));
    assert_eq!(clock.now(), ms(7));
    handle.advance(Duration::MAX);
    assert_eq!(
        clock.now(),
        Duration::MAX,
        "saturates instead of overflowing"
    );
}

#[test]
fn the_system_clock_moves_forward_and_never_backwards() {
    let clock = SystemClock::new();
    let first = clock.now();
    // Spin (no sleep) until the clock ticks; a stuck clock fails after 1 s.
    let give_up = std::time::Instant::now() + Duration::from_secs(1);
    let mut later = clock.now();
    while later == first && std::time::Instant::now() < give_up {
        later = clock.now();
    }
    assert!(later > first, "the system clock did not move");
}

/// One meaning of "asking the sleeper" for every test sleeper: calling
/// `sleep`. So a sleep asked for and never awaited is still on record (E7).
#[test]
fn a_manual_sleeper_records_every_sleep_when_it_is_asked_for() {
    let clock = ManualClock::new();
    let sleeper = ManualSleeper::new(clock.clone());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        sleeper.sleep(ms(3)).await;
        sleeper.sleep(ms(4)).await;
        drop(sleeper.sleep(ms(100))); // asked for, never awaited
    });
    assert_eq!(clock.now(), ms(107));
    assert_eq!(sleeper.clone().delays(), [ms(3), ms(4), ms(100)]);
}

#[test]
fn the_tokio_sleeper_sleeps_on_tokio_time_even_for_absurd_delays() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        let start = tokio::time::Instant::now();
        TokioSleeper.sleep(Duration::from_secs(3600)).await;
        assert_eq!(
            start.elapsed(),
            Duration::from_secs(3600),
            "paused time advanced by the sleep"
        );
        let endless =
            tokio::time::timeout(Duration::from_secs(1), TokioSleeper.sleep(Duration::MAX));
        assert!(
            endless.await.is_err(),
            "Duration::MAX waits, and does not panic"
        );
    });
}

#[test]
fn e8_constant_backoff() {
    let policy = backoff::constant(ms(25));
    assert_eq!([1, 2, u32::MAX].map(&policy), [ms(25); 3]);
}

#[test]
fn e8_exponential_backoff_doubles_up_to_its_cap_and_saturates() {
    let policy = backoff::exponential(ms(10), ms(300));
    assert_eq!(
        (1..=7).map(&policy).collect::<Vec<_>>(),
        [10, 20, 40, 80, 160, 300, 300].map(ms)
    );
    assert_eq!(policy(0), ms(10), "attempt 0 is treated as the first");
    let huge = backoff::exponential(Duration::MAX, Duration::MAX);
    assert_eq!([1, 2, 64, u32::MAX].map(&huge), [Duration::MAX; 4]);
    let capped = backoff::exponential(Duration::from_secs(1), Duration::from_secs(60));
    assert_eq!(capped(40), Duration::from_secs(60));
}

#[test]
fn e8_jitter_stays_within_half_to_full_and_is_a_pure_function_of_the_seed() {
    let base = backoff::exponential(ms(100), ms(10_000));
    let one = backoff::jittered_with_seed(base.clone(), 1);
    let two = backoff::jittered_with_seed(base.clone(), 2);
    let mut differs = false;
    for attempt in 1..=20 {
        let full = base(attempt);
        let delay = one(attempt);
        assert!(
            full / 2 <= delay && delay <= full,
            "attempt {attempt}: {delay:?} of {full:?}"
        );
        assert_eq!(one(attempt), delay, "same seed, same delay");
        differs |= two(attempt) != delay;
    }
    assert!(differs, "different seeds spread the delays");
    // Spread over the whole range, not bunched at one end: over many seeds
    // the delays fill every fifth of [d/2, d].
    let full = Duration::from_millis(1_000);
    let mut fifths = [0; 5];
    for seed in 0..1_000 {
        let delay = backoff::jittered_with_seed(backoff::constant(full), seed)(1);
        let fifth = ((delay - full / 2).as_nanos() * 5 / (full / 2).as_nanos()).min(4);
        fifths[fifth as usize] += 1;
    }
    assert!(fifths.iter().all(|&n| n > 120), "uneven jitter: {fifths:?}");
    let extreme = backoff::jittered_with_seed(backoff::constant(Duration::MAX), u64::MAX);
    assert!(
        extreme(u32::MAX) >= Duration::MAX / 2,
        "no overflow at the extremes"
    );
    assert_eq!(
        backoff::jittered_with_seed(backoff::constant(Duration::ZERO), 9)(1),
        Duration::ZERO
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
    let doublings = attempt.saturating_sub(1);
    let nanos = base.as_nanos();
    let full = if nanos == 0 {
        0
    } else if doublings >= 128 || nanos.leading_zeros() <= doublings {
        u128::MAX
    } else {
        nanos << doublings
    };
    let limit = cap.as_nanos();
    let nanos = full.min(limit);
    Duration::new(
        u64::try_from(nanos / 1_000_000_000).unwrap(),
        (nanos % 1_000_000_000) as u32,
    )
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
                "E8: exponential({base:?}, cap {cap:?}) after attempt {attempt} must be                  min(cap, base * 2^(attempt - 1)), saturating rather than overflowing or wrapping"
            );
            assert!(
                delay >= previous,
                "E8: backoff never shrinks as attempts go on (attempt {attempt})"
            );
            previous = delay;
        }
    }
}

#[test]
fn e8_constant_and_jittered_backoff_hold_for_every_attempt_number_a_u32_holds() {
    for full in [Duration::ZERO, ms(1), Duration::new(7, 3), Duration::MAX] {
        let constant = backoff::constant(full);
        for seed in [0, 1, 7, u64::MAX] {
            let jittered = backoff::jittered_with_seed(backoff::constant(full), seed);
            for attempt in attempt_numbers() {
                assert_eq!(
                    constant(attempt),
                    full,
                    "E8: constant after attempt {attempt}"
                );
                let delay = jittered(attempt);
                assert!(
                    full / 2 <= delay && delay <= full,
                    "E8: jitter of {full:?} (seed {seed}) after attempt {attempt} must lie in                      [d/2, d], got {delay:?}"
                );
            }
        }
    }
}

#[test]
fn every_error_message_is_a_sentence_about_what_happened() {
    let open = Rejected::Open { remaining: ms(5) }.to_string();
    assert!(open.contains("open") && open.contains("5ms"), "{open}");
    let busy = Rejected::ProbeInFlight.to_string();
    assert!(busy.contains("probe"), "{busy}");
    let cancelled = ExecuteError::<Fault>::Cancelled { attempts_made: 2 }.to_string();
    assert!(
        cancelled.contains("cancelled") && cancelled.contains('2'),
        "{cancelled}"
    );
    let task = ExecuteError::Task {
        attempt: 3,
        reason: GaveUp::NoAttemptsLeft,
        source: Fault::Timeout,
    };
    assert!(task.to_string().contains("attempt 3"), "{task}");
    assert!(task.to_string().contains("no attempts were left"), "{task}");
    let refused = ExecuteError::Task {
        attempt: 1,
        reason: GaveUp::NotRetryable,
        source: Fault::Declined,
    };
    assert!(refused.to_string().contains("not retryable"), "{refused}");
    let rejected = ExecuteError::<Fault>::Rejected {
        attempt: 1,
        rejection: Rejected::ProbeInFlight,
        source: None,
    };
    assert!(rejected.to_string().contains("probe"), "{rejected}");
    assert!(
        std::error::Error::source(&rejected).is_none(),
        "a first-attempt refusal has no earlier error (E10)"
    );
    let after_failure = ExecuteError::Rejected {
        attempt: 2,
        rejection: Rejected::ProbeInFlight,
        source: Some(Fault::Timeout),
    };
    let cause = std::error::Error::source(&after_failure).expect("E10: the earlier error");
    assert_eq!(cause.to_string(), "timeout");
    assert_eq!(after_failure.task_error(), Some(&Fault::Timeout));
}

#[test]
fn states_phases_and_transitions_print_for_humans() {
    assert_eq!(
        State::Closed { failures: 1 }.to_string(),
        "CLOSED (1 consecutive failure)"
    );
    assert_eq!(
        State::Closed { failures: 2 }.to_string(),
        "CLOSED (2 consecutive failures)"
    );
    assert_eq!(
        State::Open { remaining: ms(3) }.to_string(),
        "OPEN (3ms left)"
    );
    assert_eq!(
        State::HalfOpen {
            probe_in_flight: true
        }
        .to_string(),
        "HALF-OPEN (probe in flight)"
    );
    assert_eq!(State::Open { remaining: ms(3) }.phase(), Phase::Open);
    let transition = Transition::new(Phase::Open, Phase::HalfOpen, ms(10), Generation::default());
    assert_eq!(transition.to_string(), "t=10ms OPEN -> HALF-OPEN (g0)");
}
