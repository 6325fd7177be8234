//! `RetryPolicy`: the retry settings as one value, run through `execute`.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use retry_breaker_solution::{ExecuteError, ManualClock, RetryBreaker, RetryPolicy, State};
use tokio_util::sync::CancellationToken;

fn block_on<T>(future: impl Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(future)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    Busy(Option<Duration>),
    Declined,
}

/// The replies still to come, last first.
type Script = Arc<Mutex<Vec<Result<u32, Fault>>>>;

/// A task that answers from `script`, front first, counting its calls.
fn scripted(
    script: Vec<Result<u32, Fault>>,
) -> (
    Script,
    impl FnMut() -> std::future::Ready<Result<u32, Fault>>,
) {
    let script = Arc::new(Mutex::new(script.into_iter().rev().collect::<Vec<_>>()));
    let shared = Arc::clone(&script);
    (script, move || {
        std::future::ready(shared.lock().unwrap().pop().expect("scripted"))
    })
}

fn setup() -> (ManualClock, RetryBreaker<ManualClock>) {
    let clock = ManualClock::new();
    let breaker = RetryBreaker::new(10, Duration::from_secs(30), clock.clone()).unwrap();
    (clock, breaker)
}

fn hinted() -> RetryPolicy<Fault> {
    RetryPolicy::exponential(Duration::from_millis(100), Duration::from_secs(10))
        .attempts(4)
        .without_jitter()
        .retry_if(|e| matches!(e, Fault::Busy(_)))
        .retry_after(|e| match e {
            Fault::Busy(hint) => *hint,
            Fault::Declined => None,
        })
}

#[test]
fn a_retry_after_longer_than_the_backoff_is_waited_out_and_a_shorter_one_is_not() {
    let (clock, breaker) = setup();
    let sleeper = clock.sleeper();
    let (_, task) = scripted(vec![
        Err(Fault::Busy(Some(Duration::from_secs(3)))),
        Err(Fault::Busy(Some(Duration::from_millis(1)))),
        Err(Fault::Busy(None)),
        Ok(9),
    ]);
    let value = block_on(hinted().run(&breaker, &sleeper, task)).unwrap();
    assert_eq!(value, 9);
    assert_eq!(
        sleeper.delays(),
        [
            Duration::from_secs(3),
            Duration::from_millis(200),
            Duration::from_millis(400)
        ]
    );
}

#[test]
fn the_policy_retries_only_what_it_is_told_to() {
    let (clock, breaker) = setup();
    let sleeper = clock.sleeper();
    let (left, task) = scripted(vec![Err(Fault::Declined), Ok(1)]);
    let error = block_on(hinted().run(&breaker, &sleeper, task)).unwrap_err();
    assert!(matches!(
        error,
        ExecuteError::Task {
            attempt: 1,
            source: Fault::Declined,
            ..
        }
    ));
    assert_eq!(left.lock().unwrap().len(), 1, "not retried");
    assert_eq!(
        breaker.state(),
        State::Closed { failures: 1 },
        "through the breaker"
    );
}

#[test]
fn the_policy_spends_its_attempts_and_no_more() {
    let (clock, breaker) = setup();
    let sleeper = clock.sleeper();
    let (left, task) = scripted(vec![Err(Fault::Busy(None)); 5]);
    let policy = hinted().attempts(2);
    let error = block_on(policy.run(&breaker, &sleeper, task)).unwrap_err();
    assert!(matches!(error, ExecuteError::Task { attempt: 2, .. }));
    assert_eq!(left.lock().unwrap().len(), 3);
    assert_eq!(sleeper.delays(), [Duration::from_millis(100)]);
}

#[test]
fn seeded_jitter_repeats_and_stays_within_half_to_full() {
    let delays = |seed| {
        let (clock, breaker) = setup();
        let sleeper = clock.sleeper();
        let (_, task) = scripted(vec![Err(Fault::Busy(None)), Err(Fault::Busy(None)), Ok(0)]);
        let policy = RetryPolicy::constant(Duration::from_secs(1)).jitter_seed(seed);
        block_on(policy.run(&breaker, &sleeper, task)).unwrap();
        sleeper.delays()
    };
    let once = delays(3);
    assert_eq!(once, delays(3));
    assert_ne!(once, delays(4));
    for delay in once {
        assert!(Duration::from_millis(500) <= delay && delay <= Duration::from_secs(1));
    }
}

#[test]
fn a_cancelled_policy_makes_no_attempt() {
    let (clock, breaker) = setup();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let (left, task) = scripted(vec![Ok(1)]);
    let policy = hinted().cancel_on(cancel);
    let error = block_on(policy.run(&breaker, &clock.sleeper(), task)).unwrap_err();
    assert!(matches!(
        error,
        ExecuteError::Cancelled {
            attempts_made: 0,
            ..
        }
    ));
    assert_eq!(left.lock().unwrap().len(), 1);
}

#[test]
fn a_policy_debugs_with_its_settings() {
    let policy: RetryPolicy<()> = RetryPolicy::constant(Duration::from_millis(5)).attempts(4);
    let shown = format!("{policy:?}");
    assert!(shown.starts_with("RetryPolicy"), "{shown}");
    assert!(shown.contains("attempts: 4"), "{shown}");
}
