//! Compile tests: `execute` and `RetryPolicy::run` can be spawned on a
//! multi-threaded runtime with every sleeper this crate provides, and a
//! sleeper whose future is not `Send` still works where nothing is spawned.

use std::future::Future;
use std::rc::Rc;
use std::time::Duration;

use retry_breaker_solution::{
    ManualClock, ManualSleeper, RetryBreaker, RetryPolicy, Sleeper, TokioClock, TokioSleeper,
    backoff,
};
use tokio_util::sync::CancellationToken;

fn assert_send<T: Send>(value: T) -> T {
    value
}

async fn call<C, S>(breaker: &RetryBreaker<C>, sleeper: &S) -> u32
where
    C: retry_breaker_solution::Clock,
    S: Sleeper,
{
    breaker
        .execute(
            2,
            || async { Ok::<_, std::io::Error>(7) },
            |_| true,
            backoff::constant(Duration::from_millis(1)),
            &CancellationToken::new(),
            sleeper,
        )
        .await
        .unwrap()
}

#[test]
fn execute_is_send_with_the_tokio_and_the_manual_sleeper() {
    let tokio_breaker = RetryBreaker::new(3, Duration::from_secs(1), TokioClock::new()).unwrap();
    let clock = ManualClock::new();
    let manual_breaker = RetryBreaker::new(3, Duration::from_secs(1), clock.clone()).unwrap();
    let manual_sleeper: ManualSleeper = clock.sleeper();

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    runtime.block_on(async {
        let on_tokio = assert_send(call(&tokio_breaker, &TokioSleeper));
        let on_manual = assert_send(call(&manual_breaker, &manual_sleeper));
        let policy = RetryPolicy::<std::io::Error>::constant(Duration::from_millis(1));
        let by_policy = assert_send(policy.run(&manual_breaker, &manual_sleeper, || async {
            Ok::<_, std::io::Error>(8)
        }));
        assert_eq!(
            (on_tokio.await, on_manual.await, by_policy.await.unwrap()),
            (7, 7, 8)
        );
    });

    let shared = std::sync::Arc::new(manual_breaker);
    let handle = runtime.spawn(async move { call(&shared, &manual_sleeper).await });
    assert_eq!(runtime.block_on(handle).unwrap(), 7);
}

/// A sleeper for a single-threaded executor: its future holds an `Rc`.
struct Local(Rc<ManualClock>);

impl Sleeper for Local {
    fn sleep(&self, delay: Duration) -> impl Future<Output = ()> {
        let clock = Rc::clone(&self.0);
        async move { clock.advance(delay) }
    }
}

#[test]
fn a_sleeper_whose_future_is_not_send_works_on_a_local_executor() {
    let clock = ManualClock::new();
    let breaker = RetryBreaker::new(3, Duration::from_secs(1), clock.clone()).unwrap();
    let sleeper = Local(Rc::new(clock.clone()));
    let mut replies = vec![Ok(5), Err("down")];
    let value = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(breaker.execute(
            2,
            || std::future::ready(replies.pop().unwrap()),
            |_| true,
            backoff::constant(Duration::from_secs(2)),
            &CancellationToken::new(),
            &sleeper,
        ))
        .unwrap();
    assert_eq!(value, 5);
    assert_eq!(
        retry_breaker_solution::Clock::now(&clock),
        Duration::from_secs(2)
    );
}
