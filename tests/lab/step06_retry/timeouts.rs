//! A deadline per attempt (E4, E5): `timeout::per_attempt` turns a hang
//! into the attempt's own error, which the breaker counts and the caller
//! gets back; a timeout around the whole call would drop the attempt, and a
//! dropped attempt records nothing. All of it on paused tokio time.

use std::future::pending;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use retry_breaker::timeout::{TimedOut, per_attempt};
use retry_breaker::{RetryBreaker, State, TokioClock, TokioSleeper, backoff};
use tokio_util::sync::CancellationToken;

use crate::support::{Ending, run_paused};

const HUNG: &str = "an attempt with a deadline did not end: TODO(6)";

/// The timer's resolution: tokio counts time in whole milliseconds.
const TICK: Duration = Duration::from_millis(1);

/// A dependency that answers `4` after `delay`.
async fn answers_after(delay: Duration) -> Result<u32, TimedOut> {
    tokio::time::sleep(delay).await;
    Ok(4)
}

/// A dependency that never answers.
async fn hangs() -> Result<u32, TimedOut> {
    pending().await
}

/// A control: `timeout::per_attempt` is provided, so this passes before
/// step 6; it pins down the limit that the counted-failure tests rely on.
#[test]
fn e5_an_answer_just_before_or_at_the_limit_passes_and_one_tick_late_times_out() {
    let limit = Duration::from_secs(1);
    // (when the answer comes, what the attempt ends with)
    let cases = [
        (limit - TICK, Ok(4)),
        (limit, Ok(4)),
        (limit + TICK, Err(TimedOut::new(limit))),
    ];
    for (delay, expected) in cases {
        run_paused(HUNG, async move {
            let outcome = per_attempt(limit, answers_after(delay)).await;
            assert_eq!(
                outcome, expected,
                "E5: an answer after {delay:?} within a deadline of {limit:?}: the answer wins \
                 up to and at the limit, the deadline after it"
            );
        });
    }
}

/// A control: `timeout::per_attempt` is provided, so this passes before
/// step 6.
#[test]
fn e5_a_zero_limit_lets_a_ready_answer_through_and_times_out_anything_else() {
    run_paused(HUNG, async {
        let ready = per_attempt(Duration::ZERO, async { Ok::<u32, TimedOut>(4) }).await;
        assert_eq!(
            ready,
            Ok(4),
            "E5: an answer ready at once beats even a zero deadline"
        );
        let waits = per_attempt(Duration::ZERO, answers_after(TICK)).await;
        assert_eq!(
            waits,
            Err(TimedOut::new(Duration::ZERO)),
            "E5: with a zero deadline, an answer that must wait times out"
        );
    });
}

/// A control: `timeout::per_attempt` is provided, so this passes before
/// step 6.
#[test]
fn e5_a_limit_of_duration_max_never_times_out_and_never_panics() {
    run_paused(HUNG, async {
        let later = Duration::from_secs(365 * 24 * 3600);
        let outcome = per_attempt(Duration::MAX, answers_after(later)).await;
        assert_eq!(
            outcome,
            Ok(4),
            "E5: a deadline of `Duration::MAX` is never reached, so a year-late answer passes"
        );
        let started = tokio::time::Instant::now();
        let hung = tokio::time::timeout(later, per_attempt(Duration::MAX, hangs())).await;
        assert!(
            hung.is_err(),
            "E5: a hang under a `Duration::MAX` deadline is still hanging a year later"
        );
        assert_eq!(
            started.elapsed(),
            later,
            "E5: paused time ran exactly the year"
        );
    });
}

#[test]
fn e4_e5_a_hang_inside_a_per_attempt_deadline_is_a_counted_failure() {
    run_paused(HUNG, async {
        let breaker = RetryBreaker::new(2, Duration::from_secs(30), TokioClock::new())
            .expect("a valid configuration");
        let started = tokio::time::Instant::now();
        let attempts = AtomicU32::new(0);
        let result = breaker
            .execute(
                2,
                || {
                    attempts.fetch_add(1, Ordering::Relaxed);
                    per_attempt(Duration::from_secs(1), hangs())
                },
                |_| true,
                backoff::constant(Duration::from_millis(500)),
                &CancellationToken::new(),
                &TokioSleeper,
            )
            .await;
        // Two hangs, two failures: the budget is spent and the circuit open.
        assert_eq!(
            (result.ending(), result.attempt()),
            ("Task", Some(2)),
            "TODO(6): two timed-out attempts spend the budget of 2 (E5); got {result:?}"
        );
        assert_eq!(
            result.cause(),
            Some(&TimedOut::new(Duration::from_secs(1))),
            "TODO(6): the caller gets attempt 2's timeout (E5); got {result:?}"
        );
        assert_eq!(
            attempts.load(Ordering::Relaxed),
            2,
            "TODO(6): two attempts reached the dependency (E4)"
        );
        assert!(
            matches!(breaker.state(), State::Open { .. }),
            "TODO(6): each timeout counted as a failure, so the circuit is open (E4)"
        );
        // Two deadlines of 1 s and one backoff of 0.5 s between them, all of
        // it on paused time.
        assert_eq!(
            started.elapsed(),
            Duration::from_millis(2500),
            "TODO(6): two deadlines and one backoff passed, no more (E5, E6)"
        );
    });
}

#[test]
fn e4_a_timeout_around_the_whole_call_never_opens_the_circuit() {
    run_paused(HUNG, async {
        let breaker = RetryBreaker::new(1, Duration::from_secs(30), TokioClock::new())
            .expect("a valid configuration");
        let cancel = CancellationToken::new();
        for _ in 0..5 {
            let call = breaker.execute(
                3,
                hangs,
                |_| true,
                backoff::constant(Duration::from_millis(500)),
                &cancel,
                &TokioSleeper,
            );
            assert!(
                tokio::time::timeout(Duration::from_secs(1), call)
                    .await
                    .is_err(),
                "a hang with no deadline of its own outlives the timeout around the call"
            );
        }
        assert_eq!(
            breaker.state(),
            State::Closed { failures: 0 },
            "TODO(6): five calls dropped mid-attempt observed nothing, so nothing counted (B7, E4)"
        );
    });
}
