//! Owned permits move into spawned tasks and behave as borrowed ones do.

use std::sync::Arc;
use std::time::Duration;

use retry_breaker_solution::{ManualClock, Recorded, RetryBreaker, State};

/// Runs `task` on another task of a multi-threaded runtime, as
/// `tokio::spawn` does in a service, and waits for it.
fn spawned<T: Send + 'static>(
    task: impl std::future::Future<Output = T> + Send + 'static,
) -> Result<T, tokio::task::JoinError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap()
        .block_on(async { tokio::spawn(task).await })
}

fn breaker(clock: &ManualClock) -> Arc<RetryBreaker<ManualClock>> {
    Arc::new(RetryBreaker::new(1, Duration::from_secs(5), clock.clone()).unwrap())
}

#[test]
fn a_spawned_task_reports_on_its_owned_permit() {
    let clock = ManualClock::new();
    let breaker = breaker(&clock);
    let permit = breaker.try_acquire_owned().unwrap();
    let generation = permit.generation();
    let recorded = spawned(async move { permit.failure() }).unwrap();
    assert_eq!(recorded, Recorded::Counted);
    assert_eq!(
        breaker.state(),
        State::Open {
            remaining: Duration::from_secs(5)
        }
    );
    assert_ne!(breaker.generation(), generation);
    assert_eq!(
        Arc::strong_count(&breaker),
        1,
        "the permit let go of the breaker"
    );
}

#[test]
fn an_owned_probe_dropped_unreported_gives_its_slot_back_with_no_verdict() {
    let clock = ManualClock::new();
    let breaker = breaker(&clock);
    breaker.try_acquire().unwrap().failure();
    clock.advance(Duration::from_secs(5));
    let probe = breaker.try_acquire_owned().unwrap();
    assert!(breaker.try_acquire_owned().is_err(), "one probe at a time");
    spawned(async move { drop(probe) }).unwrap();
    assert_eq!(
        breaker.state(),
        State::HalfOpen {
            probe_in_flight: false
        }
    );
    breaker
        .try_acquire_owned()
        .expect("the slot is free again")
        .success();
    assert_eq!(breaker.state(), State::Closed { failures: 0 });
}

#[test]
fn an_owned_permit_dropped_by_a_panic_counts_as_a_failure() {
    let clock = ManualClock::new();
    let breaker = breaker(&clock);
    let permit = breaker.try_acquire_owned().unwrap();
    let joined = spawned(async move {
        let _permit = permit;
        panic!("the code holding the permit failed");
    });
    assert!(joined.unwrap_err().is_panic());
    assert_eq!(
        breaker.state(),
        State::Open {
            remaining: Duration::from_secs(5)
        }
    );
}

#[test]
fn an_owned_permit_is_refused_like_a_borrowed_one() {
    let clock = ManualClock::new();
    let breaker = breaker(&clock);
    breaker.try_acquire_owned().unwrap().failure();
    assert_eq!(
        breaker.try_acquire_owned().unwrap_err(),
        breaker.try_acquire().unwrap_err()
    );
    assert_eq!(Arc::strong_count(&breaker), 1);
}

#[test]
fn an_owned_permit_knows_its_generation_reports_a_verdict_and_debugs() {
    use retry_breaker_solution::Verdict;
    let clock = ManualClock::new();
    let breaker =
        Arc::new(RetryBreaker::new(1, Duration::from_secs(1), clock.clone()).expect("valid"));
    breaker.try_acquire().expect("closed").failure();
    clock.advance(Duration::from_secs(1));
    let probe = breaker.try_acquire_owned().expect("the probe");
    assert_eq!(probe.generation(), breaker.generation());
    assert_ne!(
        probe.generation().get(),
        0,
        "opening started a new generation"
    );
    assert!(
        format!("{probe:?}").contains(&format!("{:?}", probe.generation())),
        "{probe:?}"
    );
    assert_eq!(probe.report(Verdict::Success), Some(Recorded::Counted));
    assert_eq!(breaker.state(), State::Closed { failures: 0 });
}
