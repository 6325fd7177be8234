//! Where a call can run (E5): `execute` and `RetryPolicy::run` can be
//! spawned on a multi-threaded runtime with every sleeper the crate
//! provides, and a sleeper whose future is not `Send` still works where
//! nothing is spawned. The `Send` half is checked when the suite compiles.

use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use retry_breaker::{
    Clock, ManualClock, RetryBreaker, RetryPolicy, Sleeper, TokioClock, TokioSleeper,
};

use crate::support::{Fault, Lab, Script, ms};

fn assert_send<T: Send>(value: T) -> T {
    value
}

/// One call of two attempts through `breaker` whose first attempt succeeds.
async fn call<C: Clock>(breaker: &RetryBreaker<C>, sleeper: &impl Sleeper) -> Option<u32> {
    let script = Script::new([Ok(7)]);
    breaker
        .execute(
            2,
            script.task(),
            |_: &Fault| true,
            |_| ms(1),
            &tokio_util::sync::CancellationToken::new(),
            sleeper,
        )
        .await
        .ok()
}

/// Spawns one call from code that knows its clock and sleeper only by
/// their traits: the sleep's type has a name, `Sleeper::Sleep`, so such code
/// can ask for it to be `Send`.
fn spawn_call<C, S>(
    runtime: &tokio::runtime::Runtime,
    breaker: Arc<RetryBreaker<C>>,
    sleeper: S,
) -> tokio::task::JoinHandle<Option<u32>>
where
    C: Clock + Send + Sync + 'static,
    S: Sleeper + Send + Sync + 'static,
    S::Sleep: Send,
{
    runtime.spawn(async move { call(&breaker, &sleeper).await })
}

#[test]
fn e5_code_generic_over_its_clock_and_sleeper_spawns_a_call() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .expect("a tokio runtime");
    let clock = ManualClock::new();
    let breaker = Arc::new(RetryBreaker::new(3, Duration::from_secs(1), clock.clone()).unwrap());
    let on_manual = spawn_call(&runtime, breaker, clock.sleeper());
    let on_tokio = spawn_call(
        &runtime,
        Arc::new(RetryBreaker::new(3, Duration::from_secs(1), TokioClock::new()).unwrap()),
        TokioSleeper,
    );
    for (handle, sleeper) in [(on_manual, "manual"), (on_tokio, "tokio")] {
        assert_eq!(
            runtime.block_on(handle).expect("the spawned call finishes"),
            Some(7),
            "TODO(6): a call spawned by generic code with the {sleeper} sleeper returns its value (E5)"
        );
    }
}

#[test]
fn e5_execute_and_a_policy_run_on_a_multi_threaded_runtime_with_every_provided_sleeper() {
    let on_tokio = RetryBreaker::new(3, Duration::from_secs(1), TokioClock::new())
        .expect("a valid configuration");
    let lab = Lab::new(3, Duration::from_secs(1));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .expect("a tokio runtime");
    let (tokio_value, manual_value, policy_value) = runtime.block_on(async {
        let by_tokio = assert_send(call(&on_tokio, &TokioSleeper));
        let by_manual = assert_send(call(&lab.breaker, &lab.sleeper));
        let script = Script::new([Ok(8)]);
        let policy = RetryPolicy::<Fault>::constant(ms(1));
        let by_policy = assert_send(policy.run(&lab.breaker, &lab.sleeper, script.task()));
        (by_tokio.await, by_manual.await, by_policy.await.ok())
    });
    assert_eq!(
        tokio_value,
        Some(7),
        "TODO(6): a call with the tokio sleeper returns its value (E5)"
    );
    assert_eq!(
        manual_value,
        Some(7),
        "TODO(6): a call with the manual sleeper returns its value (E5)"
    );
    assert_eq!(
        policy_value,
        Some(8),
        "TODO(6): a policy's call returns its value (E5)"
    );

    let shared = Arc::new(lab);
    let spawned = Arc::clone(&shared);
    let handle = runtime.spawn(async move { call(&spawned.breaker, &spawned.sleeper).await });
    assert_eq!(
        runtime.block_on(handle).expect("the spawned call finishes"),
        Some(7),
        "TODO(6): a call spawned on a worker thread returns its value (E5)"
    );
}

/// A sleeper for a single-threaded executor: its future holds an `Rc`.
struct Local(Rc<ManualClock>);

impl Sleeper for Local {
    // Not `Send`: it holds an `Rc`.
    type Sleep = std::pin::Pin<Box<dyn Future<Output = ()>>>;

    fn sleep(&self, delay: Duration) -> Self::Sleep {
        let clock = Rc::clone(&self.0);
        Box::pin(async move { clock.advance(delay) })
    }
}

#[test]
fn e5_a_sleeper_whose_future_is_not_send_works_on_a_local_executor() {
    let lab = Lab::new(3, Duration::from_secs(1));
    let sleeper = Local(Rc::new(lab.clock.clone()));
    let script = Script::new([Err(Fault::Timeout), Ok(5)]);
    let result = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a tokio runtime")
        .block_on(
            lab.call(2, &script)
                .backoff(|_| Duration::from_secs(2))
                .sleeper(&sleeper)
                .run(),
        );
    assert_eq!(
        result.ok(),
        Some(5),
        "TODO(6): the retry after the local sleeper's sleep succeeds (E5)"
    );
    assert_eq!(
        lab.clock.now(),
        Duration::from_secs(2),
        "TODO(6): the one backoff slept through the local sleeper (E5)"
    );
}
