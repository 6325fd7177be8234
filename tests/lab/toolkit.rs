//! The parts the lab provides (clocks, sleepers, backoff helpers, error
//! messages, the façade). No TODO here: these tests pass from the start and
//! guard the scaffolding the steps stand on (E8, E9).

use std::time::Duration;

use retry_breaker::{
    Clock, ExecuteError, GaveUp, Generation, ManualClock, ManualSleeper, Phase, Rejected, Sleeper,
    State, SystemClock, TokioSleeper, Transition, backoff,
};

use crate::support::timeline::Timeline;
use crate::support::{Fault, ms};

mod budget;

#[test]
fn the_suite_tests_the_crate_the_command_asked_for() {
    let expected =
        std::env::var("LAB_EXPECT_CRATE").unwrap_or_else(|_| retry_breaker::UNDER_TEST.into());
    assert_eq!(retry_breaker::UNDER_TEST, expected);
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
fn every_error_message_is_a_sentence_about_what_happened() {
    let open = Rejected::Open { remaining: ms(5) }.to_string();
    assert!(open.contains("open") && open.contains("5ms"), "{open}");
    let busy = Rejected::ProbeInFlight.to_string();
    assert!(busy.contains("probe"), "{busy}");
    let full = Rejected::Full { limit: 4 }.to_string();
    assert!(
        full.contains("bulkhead is full") && full.contains("4 attempts"),
        "{full}"
    );
    assert_eq!(
        Rejected::Full { limit: 4 }.remaining(),
        Duration::ZERO,
        "H1: a full bulkhead may have room as soon as an attempt reports"
    );
    let spent = GaveUp::RetryBudgetSpent.to_string();
    assert!(spent.contains("retry budget"), "{spent}");
    let cancelled = ExecuteError::<Fault>::Cancelled {
        attempts_made: 2,
        source: None,
    }
    .to_string();
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
    // A state does not know its breaker's mode, so it says "counted"; the
    // breaker says "consecutive" or "in a window".
    assert_eq!(
        State::Closed { failures: 1 }.to_string(),
        "CLOSED (1 failure counted)"
    );
    assert_eq!(
        State::Closed { failures: 2 }.to_string(),
        "CLOSED (2 failures counted)"
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

#[test]
fn an_erased_error_debugs_as_the_error_inside() {
    let erased = ExecuteError::Task {
        attempt: 1,
        reason: GaveUp::after(1, 1),
        source: std::io::Error::other("gateway down"),
    }
    .erase();
    let inner = erased.into_task_error().expect("a task error");
    assert!(
        format!("{inner:?}").contains("gateway down"),
        "an erased error shows the error it holds: {inner:?}"
    );
}

#[test]
fn a_policy_debugs_with_its_settings() {
    let policy: retry_breaker::RetryPolicy<()> =
        retry_breaker::RetryPolicy::constant(ms(5)).attempts(4);
    let shown = format!("{policy:?}");
    assert!(
        shown.starts_with("RetryPolicy"),
        "a policy debugs by its name: {shown}"
    );
    assert!(
        shown.contains("attempts: 4"),
        "a policy debugs with its attempts: {shown}"
    );
    assert!(
        policy.budget().is_none(),
        "Q2: no retry budget unless given one"
    );
    let budget = std::sync::Arc::new(retry_breaker::RetryBudget::new(ms(1_000), 1, 20).unwrap());
    let policy = policy.retry_budget(std::sync::Arc::clone(&budget));
    assert!(
        policy
            .clone()
            .budget()
            .is_some_and(|held| std::sync::Arc::ptr_eq(held, &budget)),
        "Q4: a policy and its clones hold the very budget they were given"
    );
    let shown = format!("{policy:?}");
    assert!(
        shown.contains("RetryBudget") && shown.contains("percent: 20"),
        "a policy debugs with its budget: {shown}"
    );
}

#[test]
fn e5_gave_up_after_reads_the_budget() {
    assert_eq!(
        GaveUp::after(3, 3),
        GaveUp::NoAttemptsLeft,
        "E5: after the last attempt of 3, none are left"
    );
    assert_eq!(
        GaveUp::after(1, 3),
        GaveUp::NotRetryable,
        "E5: after attempt 1 of 3, only the predicate can have ended the call"
    );
}

#[test]
fn e10_a_refusal_after_a_failure_hands_that_failure_back() {
    let refused = ExecuteError::Rejected {
        attempt: 2,
        rejection: Rejected::ProbeInFlight,
        source: Some(Fault::Timeout),
    };
    assert_eq!(
        refused.task_error(),
        Some(&Fault::Timeout),
        "E10: `task_error` finds the failure before the refusal"
    );
    assert_eq!(
        refused.into_task_error(),
        Some(Fault::Timeout),
        "E10: `into_task_error` hands the failure before the refusal back"
    );
}

#[test]
fn e2_e7_a_cancellation_hands_back_the_failure_before_it_and_a_first_one_none() {
    let after = ExecuteError::Cancelled {
        attempts_made: 2,
        source: Some(Fault::Timeout),
    };
    assert_eq!(
        after.task_error(),
        Some(&Fault::Timeout),
        "E7: `task_error` finds the failure before the cancellation"
    );
    assert_eq!(
        std::error::Error::source(&after).map(ToString::to_string),
        Some("timeout".to_owned()),
        "E7: the cancellation's `source()` is the failure before it"
    );
    assert_eq!(
        after.into_task_error(),
        Some(Fault::Timeout),
        "E7: `into_task_error` hands the failure before the cancellation back"
    );
    let first = ExecuteError::<Fault>::Cancelled {
        attempts_made: 0,
        source: None,
    };
    assert!(
        std::error::Error::source(&first).is_none(),
        "E2: a cancellation before the first attempt has no source"
    );
}

#[test]
fn h1_a_bulkhead_with_no_room_is_a_configuration_error() {
    let built = retry_breaker::RetryBreaker::builder()
        .max_in_flight(0)
        .build(ManualClock::new());
    let error = built.expect_err("H1: a bulkhead of 0 slots is refused");
    assert_eq!(error, retry_breaker::ConfigError::ZeroInFlight);
    assert!(error.to_string().contains("at least 1"), "{error}");
}

#[test]
fn a_failing_test_shows_the_end_of_its_timeline_under_its_message() {
    let clock = ManualClock::new();
    let timeline = Timeline::new(clock.clone());
    assert_eq!(
        timeline.failure_note(),
        None,
        "nothing happened: nothing to show"
    );
    timeline.log("test", "line 1");
    assert_eq!(
        timeline.failure_note().as_deref(),
        Some(
            "\n  the breaker's timeline in this test (every line, manual clock):\n    t=0ms    test     line 1"
        )
    );
    for n in 2..=10 {
        clock.advance(ms(1));
        timeline.log("test", format!("line {n}"));
    }
    let note = timeline.failure_note().expect("ten lines");
    let lines: Vec<&str> = note.lines().collect();
    assert_eq!(
        lines.len(),
        2 + 8,
        "a blank line, a heading and the last 8 lines"
    );
    assert_eq!(
        lines[..3],
        [
            "",
            "  the breaker's timeline in this test (the last 8 of 10 lines, manual clock):",
            "    t=2ms    test     line 3",
        ]
    );
    assert_eq!(lines[9], "    t=9ms    test     line 10");
}
