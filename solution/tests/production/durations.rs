//! How long attempts and calls take (O9): `execute` on a breaker with a
//! sink times each attempt and the whole call on the breaker's clock, and
//! tells each as it ends, after the outcome and after how the call ended.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use retry_breaker_solution::{
    Clock, Event, ExecuteError, GaveUp, ManualClock, RetryBreaker, RetryBudget, RetryPolicy, State,
    Verdict,
};

use crate::COOLDOWN;

const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

type Told = Arc<Mutex<Vec<Event>>>;

/// A breaker on `clock` (opening after `threshold` failures) whose sink
/// keeps every event.
fn telling<C: Clock>(threshold: u32, clock: C) -> (RetryBreaker<C>, Told) {
    let told = Told::default();
    let log = Arc::clone(&told);
    let breaker = RetryBreaker::new(threshold, COOLDOWN, clock)
        .expect("valid settings")
        .with_event_sink(move |event| log.lock().unwrap().push(*event));
    (breaker, told)
}

/// The timing events told, in order.
fn timings(told: &Told) -> Vec<Event> {
    told.lock()
        .unwrap()
        .iter()
        .copied()
        .filter(|event| matches!(event.name(), "attempt_ended" | "call_ended"))
        .collect()
}

fn names(told: &Told) -> Vec<&'static str> {
    told.lock().unwrap().iter().map(Event::name).collect()
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime")
        .block_on(future)
}

/// A policy of `attempts` attempts, 100 ms apart.
fn policy(attempts: u32) -> RetryPolicy<&'static str> {
    RetryPolicy::constant(ms(100))
        .attempts(attempts)
        .without_jitter()
}

#[test]
fn o9_each_attempt_is_timed_from_its_task_to_its_outcome_and_the_call_from_start_to_end() {
    let clock = ManualClock::new();
    let (breaker, told) = telling(5, clock.clone());
    let sleeper = clock.sleeper();
    let mut runs = [(ms(20), false), (ms(30), false), (ms(50), true)].into_iter();
    let result = block_on(policy(3).run(&breaker, &sleeper, || {
        let (takes, ok) = runs.next().expect("three attempts");
        let clock = clock.clone();
        async move {
            clock.advance(takes);
            if ok { Ok(7) } else { Err("down") }
        }
    }));
    assert_eq!(result.ok(), Some(7));
    let attempt = |attempt, elapsed, verdict| Event::AttemptEnded {
        attempt,
        elapsed,
        verdict,
    };
    assert_eq!(
        timings(&told),
        [
            attempt(1, ms(20), Verdict::Failure),
            attempt(2, ms(30), Verdict::Failure),
            attempt(3, ms(50), Verdict::Success),
            Event::CallEnded {
                attempts: 3,
                elapsed: ms(20 + 100 + 30 + 100 + 50),
                ok: true,
            },
        ],
        "O9: each attempt's own time; the call's, its backoff pauses included"
    );
    assert_eq!(
        names(&told),
        [
            "admitted",
            "attempt_started",
            "recorded",
            "attempt_ended",
            "backoff",
            "admitted",
            "attempt_started",
            "recorded",
            "attempt_ended",
            "backoff",
            "admitted",
            "attempt_started",
            "recorded",
            "attempt_ended",
            "call_ended",
        ],
        "O9: an attempt's end comes right after its outcome, the call's last of all"
    );
}

#[test]
fn o9_a_call_refused_outright_ends_after_no_attempt_and_no_time() {
    let clock = ManualClock::new();
    let (breaker, told) = telling(1, clock.clone());
    breaker.try_acquire().unwrap().failure();
    told.lock().unwrap().clear();
    let result = block_on(policy(3).run(&breaker, &clock.sleeper(), || async { Ok(1) }));
    assert!(matches!(result, Err(ExecuteError::Rejected { .. })));
    assert_eq!(names(&told), ["rejected", "call_ended"]);
    assert_eq!(
        timings(&told),
        [Event::CallEnded {
            attempts: 0,
            elapsed: Duration::ZERO,
            ok: false,
        }]
    );
}

#[test]
fn o9_a_call_ends_after_it_tells_why_it_gave_up_with_the_reason_its_caller_gets() {
    let clock = ManualClock::new();
    let (breaker, told) = telling(5, clock.clone());
    let spent = Arc::new(RetryBudget::new(Duration::from_secs(10), 0, 0).expect("a budget"));
    let policy = policy(3).retry_budget(spent);
    let result = block_on(policy.run(&breaker, &clock.sleeper(), || async {
        Err::<u32, _>("down")
    }));
    assert!(matches!(
        result,
        Err(ExecuteError::Task {
            reason: GaveUp::RetryBudgetSpent,
            ..
        })
    ));
    let told = told.lock().unwrap().clone();
    assert_eq!(
        told[told.len() - 2..],
        [
            Event::GaveUp {
                attempt: 1,
                reason: GaveUp::RetryBudgetSpent,
            },
            Event::CallEnded {
                attempts: 1,
                elapsed: Duration::ZERO,
                ok: false,
            },
        ],
        "O1, O9: the policy's reason is told, then the call's end"
    );
}

#[test]
fn o9_an_attempt_whose_task_panics_is_not_timed_and_its_panic_reaches_the_caller() {
    let clock = ManualClock::new();
    let (breaker, told) = telling(5, clock.clone());
    let caught = panic::catch_unwind(AssertUnwindSafe(|| {
        block_on(policy(3).run(&breaker, &clock.sleeper(), || async {
            panic!("the task broke");
            #[allow(unreachable_code)]
            Ok::<u32, &str>(1)
        }))
    }));
    assert!(caught.is_err(), "B7: the task's panic reaches the caller");
    assert_eq!(
        names(&told),
        ["admitted", "attempt_started", "recorded"],
        "O9: the failure is counted (B7); the attempt was cut short, so it is not timed"
    );
}

#[test]
fn o9_an_attempt_whose_report_panics_in_the_hook_is_not_timed_and_the_process_goes_on() {
    let clock = ManualClock::new();
    let (breaker, told) = telling(1, clock.clone());
    let breaker = breaker.with_transition_hook(|_| panic!("the hook broke"));
    let caught = panic::catch_unwind(AssertUnwindSafe(|| {
        block_on(policy(3).run(&breaker, &clock.sleeper(), || async {
            Err::<u32, _>("down")
        }))
    }));
    let payload = caught.expect_err("B11: the hook's panic reaches the caller");
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"the hook broke"));
    assert_eq!(
        breaker.state(),
        State::Open {
            remaining: COOLDOWN
        }
    );
    assert!(
        timings(&told).is_empty(),
        "O9: nothing more is told while the hook's panic unwinds: {:?}",
        names(&told)
    );
}

/// A manual clock that counts its readings, and panics at the reading
/// `breaks_at` (from 1) if set.
#[derive(Default)]
struct Counting {
    clock: ManualClock,
    reads: AtomicU32,
    breaks_at: Option<u32>,
}

impl Clock for &Counting {
    fn now(&self) -> Duration {
        let read = self.reads.fetch_add(1, Ordering::SeqCst) + 1;
        assert_ne!(Some(read), self.breaks_at, "the clock broke");
        self.clock.now()
    }
}

#[test]
fn o5_o9_only_a_call_on_a_breaker_with_a_sink_reads_the_clock_twice_and_twice_per_attempt() {
    let counting = Counting::default();
    let plain = RetryBreaker::new(5, COOLDOWN, &counting).expect("valid settings");
    let sleeper = counting.clock.sleeper();
    let result = block_on(policy(2).run(&plain, &sleeper, || async { Ok(1) }));
    assert_eq!(result.ok(), Some(1));
    assert_eq!(
        counting.reads.load(Ordering::SeqCst),
        0,
        "O5: without a sink a CLOSED call never reads the clock"
    );

    let (told, _) = telling(5, &counting);
    let mut failures = 1;
    let result = block_on(policy(2).run(&told, &sleeper, || {
        let fails = std::mem::replace(&mut failures, 0) == 1;
        async move { if fails { Err("down") } else { Ok(1) } }
    }));
    assert_eq!(result.ok(), Some(1));
    assert_eq!(
        counting.reads.load(Ordering::SeqCst),
        2 + 2 * 2,
        "O9: the call's start and end, and each of its two attempts' start and end"
    );
}

#[test]
fn o4_o9_a_clock_that_panics_as_an_attempt_starts_gives_the_attempt_back_uncalled() {
    // The call's start reads the clock first; a CLOSED admission does not
    // read it; the attempt's start is the second reading.
    let counting = Counting {
        breaks_at: Some(2),
        ..Counting::default()
    };
    let (breaker, told) = telling(1, &counting);
    let called = AtomicU32::new(0);
    let caught = panic::catch_unwind(AssertUnwindSafe(|| {
        block_on(policy(1).run(&breaker, &counting.clock.sleeper(), || {
            called.fetch_add(1, Ordering::SeqCst);
            async { Err::<u32, _>("down") }
        }))
    }));
    let payload = caught.expect_err("the clock's panic reaches the caller");
    assert!(
        payload
            .downcast_ref::<String>()
            .is_some_and(|message| message.contains("the clock broke")),
        "the clock's own panic, unchanged"
    );
    assert_eq!(
        called.load(Ordering::SeqCst),
        0,
        "the dependency was never called"
    );
    assert_eq!(
        breaker.state(),
        State::Closed { failures: 0 },
        "O4: the attempt goes back with no verdict, as for a sink that panics there"
    );
    assert_eq!(names(&told), ["admitted"]);
}
