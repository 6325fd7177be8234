//! Step 15 (advanced, optional), the breaker as `tower` middleware: a
//! `BreakerLayer` runs every request of any service through the retry loop,
//! on the breaker of the request's route (TODO(15); rules M1-M2).

use std::future::{Future, Ready, poll_fn, ready};
use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use retry_breaker::{
    BreakerLayer, Clock, Event, ExecuteError, GaveUp, ManualClock, ManualSleeper, Registry,
    RetryBreaker, RetryBudget, RetryPolicy, State, Verdict,
};
use tokio_util::sync::CancellationToken;
use tower::{Layer, Service};

use crate::support::{ms, run};

/// A fake payment gateway: routes listed in `down` answer "503", the path
/// "/decline" answers "declined", every other route "200". It logs every
/// request it receives.
#[derive(Clone)]
struct Gateway {
    down: &'static [&'static str],
    received: Arc<Mutex<Vec<String>>>,
}

impl Gateway {
    fn new(down: &'static [&'static str]) -> Gateway {
        Gateway {
            down,
            received: Arc::default(),
        }
    }

    /// How many requests reached the gateway on `route`.
    fn count(&self, route: &str) -> usize {
        self.received
            .lock()
            .unwrap()
            .iter()
            .filter(|r| *r == route)
            .count()
    }
}

impl Service<String> for Gateway {
    type Response = &'static str;
    type Error = &'static str;
    type Future = Ready<Result<&'static str, &'static str>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, route: String) -> Self::Future {
        self.received.lock().unwrap().push(route.clone());
        ready(if self.down.contains(&route.as_str()) {
            Err("503")
        } else if route == "/decline" {
            Err("declined")
        } else {
            Ok("200")
        })
    }
}

struct Setup {
    clock: ManualClock,
    sleeper: ManualSleeper,
    registry: Arc<Registry<String, ManualClock>>,
}

/// Breakers that open after 3 consecutive failures, for 30 ms.
fn setup() -> Setup {
    let clock = ManualClock::new();
    let registry = Registry::new(
        RetryBreaker::builder().threshold(3).cooldown(ms(30)),
        clock.clone(),
    )
    .expect("valid settings");
    Setup {
        sleeper: clock.sleeper(),
        clock,
        registry: Arc::new(registry),
    }
}

/// Three attempts, 10 ms apart, retrying "503" only.
pub(crate) fn policy() -> RetryPolicy<&'static str> {
    RetryPolicy::constant(ms(10))
        .attempts(3)
        .without_jitter()
        .retry_if(|e: &&str| *e == "503")
}

/// The attempt a call ended on and its error, if a task's error ended it.
fn failed_at<T>(result: &Result<T, ExecuteError<&'static str>>) -> Option<(u32, &'static str)> {
    match result {
        Err(ExecuteError::Task {
            attempt, source, ..
        }) => Some((*attempt, *source)),
        _ => None,
    }
}

/// Why the call gave up, if a task's error ended it.
fn gave_up<T>(result: &Result<T, ExecuteError<&'static str>>) -> Option<GaveUp> {
    match result {
        Err(ExecuteError::Task { reason, .. }) => Some(*reason),
        _ => None,
    }
}

/// A call through the layer on a manual clock, under a watchdog.
fn m1(test: impl Future<Output = ()> + Send + 'static) {
    run(
        "M1: a call through the layer did not finish (TODO(15))",
        test,
    );
}

/// A call through the layer on a manual clock, under a watchdog.
pub(crate) fn m2(test: impl Future<Output = ()> + Send + 'static) {
    run(
        "M2: a call through the layer did not finish (TODO(15))",
        test,
    );
}

impl Setup {
    /// A layer by route with [`policy`] whose clone function makes `copies`
    /// copies of a request and then refuses: the attempt after the last
    /// copy sends the original, and nothing is left after that.
    fn copying_only(
        &self,
        copies: u32,
    ) -> BreakerLayer<String, String, ManualClock, ManualSleeper, &'static str> {
        let left = Mutex::new(copies);
        self.cloning(move |route: &String| {
            let mut left = left.lock().unwrap();
            *left = (*left).checked_sub(1)?;
            Some(route.clone())
        })
    }

    /// A layer by route with [`policy`], copying requests with `clone`.
    fn cloning(
        &self,
        clone: impl Fn(&String) -> Option<String> + Send + Sync + 'static,
    ) -> BreakerLayer<String, String, ManualClock, ManualSleeper, &'static str> {
        BreakerLayer::cloning_with(
            Arc::clone(&self.registry),
            policy(),
            self.sleeper.clone(),
            |route: &String| route.clone(),
            clone,
        )
    }
}

fn by_route(
    setup: &Setup,
    policy: RetryPolicy<&'static str>,
) -> BreakerLayer<String, String, ManualClock, ManualSleeper, &'static str> {
    BreakerLayer::new(
        Arc::clone(&setup.registry),
        policy,
        setup.sleeper.clone(),
        |route: &String| route.clone(),
    )
}

#[test]
fn m1_every_request_goes_through_the_retry_loop_and_the_breaker() {
    m1(async {
        let setup = setup();
        let gateway = Gateway::new(&["/charges"]);
        let mut client = by_route(&setup, policy()).layer(gateway.clone());

        let first = client.call("/charges".to_owned()).await;
        assert_eq!(
            failed_at(&first),
            Some((3, "503")),
            "M1: a failing route must be tried 3 times, the policy's budget, \
             and the last error returned (TODO(15)); got {first:?}"
        );
        assert_eq!(
            gateway.count("/charges"),
            3,
            "M1: three attempts reach the gateway (TODO(15))"
        );
        assert_eq!(
            setup.sleeper.delays(),
            [ms(10), ms(10)],
            "M1: the policy's backoff runs between attempts, through the layer's sleeper (TODO(15))"
        );
        assert_eq!(
            setup.registry.breaker("/charges").state(),
            State::Open { remaining: ms(30) },
            "M1: every attempt is reported to the route's breaker, so three failures open it (TODO(15))"
        );

        let refused = client.call("/charges".to_owned()).await;
        assert!(
            matches!(refused, Err(ExecuteError::Rejected { attempt: 1, .. })),
            "M1: an open breaker refuses the request (TODO(15)); got {refused:?}"
        );
        assert_eq!(
            gateway.count("/charges"),
            3,
            "M1: a refused request never reaches the service (TODO(15))"
        );
    });
}

/// A gateway with backpressure, as a concurrency limit or a connection
/// pool has: `poll_ready` first answers `Pending` (and wakes the caller at
/// once), then hands this instance a slot; `call` uses the slot up. A call
/// without a slot is a broken `tower` contract: it is counted, and answered
/// with an error that is never retried.
struct Backpressured {
    gateway: Gateway,
    asked: bool,
    slot: bool,
    calls_without_a_slot: Arc<Mutex<u32>>,
}

impl Clone for Backpressured {
    /// A clone starts with no slot of its own, as a clone of a limited
    /// service does.
    fn clone(&self) -> Self {
        Backpressured {
            gateway: self.gateway.clone(),
            asked: false,
            slot: false,
            calls_without_a_slot: Arc::clone(&self.calls_without_a_slot),
        }
    }
}

impl Service<String> for Backpressured {
    type Response = &'static str;
    type Error = &'static str;
    type Future = Ready<Result<&'static str, &'static str>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        if !std::mem::replace(&mut self.asked, true) {
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        self.slot = true;
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, route: String) -> Self::Future {
        if !std::mem::take(&mut self.slot) {
            *self.calls_without_a_slot.lock().unwrap() += 1;
            return ready(Err("called before poll_ready said ready"));
        }
        self.asked = false;
        self.gateway.call(route)
    }
}

#[test]
fn m1_each_attempt_waits_until_the_inner_service_is_ready() {
    m1(async {
        let setup = setup();
        let gateway = Gateway::new(&["/charges"]);
        let calls_without_a_slot = Arc::new(Mutex::new(0));
        let limited = Backpressured {
            gateway: gateway.clone(),
            asked: false,
            slot: false,
            calls_without_a_slot: Arc::clone(&calls_without_a_slot),
        };
        let mut client = by_route(&setup, policy()).layer(limited);

        let refund = client.call("/refunds".to_owned()).await;
        assert_eq!(
            *calls_without_a_slot.lock().unwrap(),
            0,
            "M1: the layer called the inner service before its `poll_ready` said ready; \
             any `tower::Service` may rely on that (TODO(15))"
        );
        assert_eq!(
            refund.ok(),
            Some("200"),
            "M1: a healthy route answers once the service is ready (TODO(15))"
        );
        let charge = client.call("/charges".to_owned()).await;
        assert_eq!(
            failed_at(&charge),
            Some((3, "503")),
            "M1: each of the 3 attempts waits for readiness, then reaches the gateway \
             (TODO(15)); got {charge:?}"
        );
        assert_eq!(
            gateway.count("/charges"),
            3,
            "M1: three attempts reach the gateway (TODO(15))"
        );
        assert_eq!(
            *calls_without_a_slot.lock().unwrap(),
            0,
            "M1: each of the three attempts is sent after its own `poll_ready` said ready \
             (TODO(15))"
        );
    });
}

/// The gateway behind a connection pool with `free` connections, shared by
/// every clone: `poll_ready` takes one for this instance, or answers
/// `Pending` while none is free; `call` sends on it. A connection is never
/// given back, so `taken` counts the readiness checks that succeeded. A
/// call without a connection is a broken `tower` contract: it is counted
/// and answered with an error that is never retried.
struct Pool {
    gateway: Gateway,
    free: Arc<Mutex<u32>>,
    taken: Arc<Mutex<u32>>,
    calls_without_a_connection: Arc<Mutex<u32>>,
    holds: bool,
}

impl Pool {
    fn new(gateway: &Gateway, free: u32) -> Pool {
        Pool {
            gateway: gateway.clone(),
            free: Arc::new(Mutex::new(free)),
            taken: Arc::default(),
            calls_without_a_connection: Arc::default(),
            holds: false,
        }
    }

    fn set_free(&self, free: u32) {
        *self.free.lock().unwrap() = free;
    }

    fn taken(&self) -> u32 {
        *self.taken.lock().unwrap()
    }

    fn calls_without_a_connection(&self) -> u32 {
        *self.calls_without_a_connection.lock().unwrap()
    }
}

impl Clone for Pool {
    /// A clone holds no connection of its own until it asks for one.
    fn clone(&self) -> Self {
        Pool {
            gateway: self.gateway.clone(),
            free: Arc::clone(&self.free),
            taken: Arc::clone(&self.taken),
            calls_without_a_connection: Arc::clone(&self.calls_without_a_connection),
            holds: false,
        }
    }
}

impl Service<String> for Pool {
    type Response = &'static str;
    type Error = &'static str;
    type Future = Ready<Result<&'static str, &'static str>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        if !self.holds {
            let mut free = self.free.lock().unwrap();
            if *free == 0 {
                return Poll::Pending;
            }
            *free -= 1;
            *self.taken.lock().unwrap() += 1;
            self.holds = true;
        }
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, route: String) -> Self::Future {
        if !std::mem::take(&mut self.holds) {
            *self.calls_without_a_connection.lock().unwrap() += 1;
            return ready(Err("called without a connection"));
        }
        self.gateway.call(route)
    }
}

/// Polls `future` once, with a waker that does nothing: the tests below
/// poll again themselves once they have changed what it waits for.
fn poll_once<F: Future>(future: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(Waker::noop()))
}

#[test]
fn m1_the_layer_is_ready_when_the_inner_service_is_and_its_first_attempt_uses_that_instance() {
    m1(async {
        let setup = setup();
        let gateway = Gateway::new(&["/charges"]);
        let pool = Pool::new(&gateway, 0);
        let mut client = by_route(&setup, policy()).layer(pool.clone());

        assert!(
            poll_once(pin!(poll_fn(|cx| client.poll_ready(cx)))).is_pending(),
            "M1: with no connection free, the layer's service is not ready either: its \
             `poll_ready` passes the inner service's backpressure through, so a load \
             balancer or a limit in front of it sees it"
        );
        pool.set_free(10);
        assert!(
            matches!(
                poll_once(pin!(poll_fn(|cx| client.poll_ready(cx)))),
                Poll::Ready(Ok(()))
            ),
            "M1: once the inner service is ready, so is the layer's"
        );
        let charge = client.call("/charges".to_owned()).await;
        assert_eq!(
            failed_at(&charge),
            Some((3, "503")),
            "M1: the failing route is tried 3 times (TODO(15)); got {charge:?}"
        );
        assert_eq!(
            pool.calls_without_a_connection(),
            0,
            "M1: every attempt is sent on an instance whose `poll_ready` said ready (TODO(15))"
        );
        assert_eq!(
            pool.taken(),
            3,
            "M1: the first attempt goes to the instance the layer's `poll_ready` made ready, \
             and each retry readies one of its own: 3 connections for 3 attempts, none \
             taken and left unused (TODO(15))"
        );
    });
}

/// A service whose readiness check fails, as a closed connection pool's
/// does: its `poll_ready` answers the error, and it is never called.
#[derive(Clone)]
struct ClosedPool {
    calls: Arc<Mutex<u32>>,
}

impl Service<String> for ClosedPool {
    type Response = &'static str;
    type Error = &'static str;
    type Future = Ready<Result<&'static str, &'static str>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Err("pool closed"))
    }

    fn call(&mut self, _: String) -> Self::Future {
        *self.calls.lock().unwrap() += 1;
        ready(Err("called although not ready"))
    }
}

#[test]
fn m1_an_inner_service_that_fails_to_get_ready_fails_the_attempt_on_the_route_s_breaker() {
    m1(async {
        let setup = setup();
        let pool = ClosedPool {
            calls: Arc::default(),
        };
        let policy = RetryPolicy::constant(ms(10)).attempts(1).without_jitter();
        let mut client = by_route(&setup, policy).layer(pool.clone());
        assert!(
            matches!(
                poll_once(pin!(poll_fn(|cx| client.poll_ready(cx)))),
                Poll::Ready(Ok(()))
            ),
            "M1: the layer's `poll_ready` keeps a readiness error for the call instead of \
             returning it, so that the call's attempt fails with it and the route's breaker \
             hears of it (TODO(15))"
        );
        let charge = client.call("/charges".to_owned()).await;
        assert_eq!(
            failed_at(&charge),
            Some((1, "pool closed")),
            "M1: the attempt fails with the inner service's readiness error (TODO(15)); got \
             {charge:?}"
        );
        assert_eq!(
            setup.registry.breaker("/charges").state(),
            State::Closed { failures: 1 },
            "M1: a readiness error is the dependency failing: the route's breaker counts it \
             (TODO(15))"
        );
        assert_eq!(
            *pool.calls.lock().unwrap(),
            0,
            "M1: a service that is not ready is never called (TODO(15))"
        );
    });
}

#[test]
fn m1_a_caller_waiting_for_readiness_holds_no_permit_so_the_probe_goes_to_a_ready_caller() {
    m1(async {
        let setup = setup();
        let layer = by_route(&setup, policy());
        let mut sick = layer.layer(Gateway::new(&["/charges"]));
        let charge = sick.call("/charges".to_owned()).await;
        assert_eq!(
            setup.registry.breaker("/charges").state(),
            State::Open { remaining: ms(30) },
            "M1: one call of 3 failed attempts opens the route's breaker (TODO(15)); got {charge:?}"
        );
        setup.clock.advance(ms(30));

        // A caller whose pool has no free connection, ever.
        let stuck_pool = Pool::new(&Gateway::new(&[]), 0);
        let mut stuck = layer.layer(stuck_pool);
        let mut stuck_call = pin!(async {
            poll_fn(|cx| stuck.poll_ready(cx)).await?;
            stuck.call("/charges".to_owned()).await
        });
        assert!(
            poll_once(stuck_call.as_mut()).is_pending(),
            "M1: a caller with no connection waits"
        );

        let mut ready = layer.layer(Gateway::new(&[]));
        let probe = ready.call("/charges".to_owned()).await;
        assert_eq!(
            probe.ok(),
            Some("200"),
            "M1: after the cooldown, the probe goes to the caller whose service is ready; \
             a caller still waiting for readiness must not hold HALF-OPEN's one probe \
             meanwhile (wait for readiness before asking the breaker)"
        );
        assert_eq!(
            setup.registry.breaker("/charges").state(),
            State::Closed { failures: 0 },
            "M1: the ready caller's probe closes the circuit"
        );
    });
}

#[test]
fn m1_a_retry_waits_for_readiness_in_its_pause_where_a_cancellation_ends_the_call() {
    m1(async {
        let setup = setup();
        let cancel = CancellationToken::new();
        let gateway = Gateway::new(&["/charges"]);
        // One connection: the first attempt gets it, the retry waits.
        let pool = Pool::new(&gateway, 1);
        let mut client = by_route(&setup, policy().cancel_on(cancel.clone())).layer(pool.clone());
        poll_fn(|cx| client.poll_ready(cx))
            .await
            .expect("one connection is free");

        let mut charge = pin!(client.call("/charges".to_owned()));
        let first = poll_once(charge.as_mut());
        assert_eq!(
            pool.calls_without_a_connection(),
            0,
            "M1: every attempt is sent on an instance whose `poll_ready` said ready \
             (TODO(15)); got {first:?}"
        );
        assert_eq!(
            gateway.count("/charges"),
            1,
            "M1: the first attempt goes to the instance the layer's `poll_ready` made ready, \
             which holds the pool's one connection, and is sent at once (TODO(15)); \
             got {first:?}"
        );
        assert!(
            first.is_pending(),
            "M1: the first attempt failed with a retryable 503, so the call retries, and the \
             retry waits for a connection (TODO(15)); got {first:?}"
        );
        cancel.cancel();
        let ended = poll_once(charge.as_mut());
        assert!(
            matches!(
                ended,
                Poll::Ready(Err(ExecuteError::Cancelled {
                    attempts_made: 1,
                    source: Some("503")
                }))
            ),
            "M1, E7: the retry's wait for readiness is part of its pause, before the breaker \
             is asked, so a cancellation ends the call at once, after 1 attempt, with its \
             error (TODO(15)); got {ended:?}"
        );
        assert_eq!(
            pool.calls_without_a_connection(),
            0,
            "M1: no attempt is sent without a connection (TODO(15))"
        );
    });
}

#[test]
fn m1_the_policy_decides_what_is_retried_and_what_counts() {
    m1(async {
        let setup = setup();
        let gateway = Gateway::new(&[]);
        let classified = Arc::new(Mutex::new(0));
        let seen = Arc::clone(&classified);
        let policy = policy().classify_errors(move |e: &&str| {
            *seen.lock().unwrap() += 1;
            if *e == "declined" {
                Verdict::Success
            } else {
                Verdict::Failure
            }
        });
        let mut client = by_route(&setup, policy).layer(gateway.clone());
        for _ in 0..4 {
            let declined = client.call("/decline".to_owned()).await;
            assert_eq!(
                failed_at(&declined),
                Some((1, "declined")),
                "M1: the policy does not retry a decline, and the caller gets it back (TODO(15)); got {declined:?}"
            );
        }
        assert_eq!(
            gateway.count("/decline"),
            4,
            "M1: one attempt per call (TODO(15))"
        );
        assert_eq!(
            *classified.lock().unwrap(),
            4,
            "M1: the layer's policy classifies every attempt's error (TODO(15))"
        );
        assert_eq!(
            setup.registry.breaker("/decline").state(),
            State::Closed { failures: 0 },
            "M1: the policy's classifier counts a decline as a sign of life (TODO(15))"
        );
    });
}

#[test]
fn m1_the_policy_s_cancellation_ends_calls_before_any_attempt() {
    m1(async {
        let setup = setup();
        let gateway = Gateway::new(&[]);
        let cancel = CancellationToken::new();
        cancel.cancel();
        let mut client = by_route(&setup, policy().cancel_on(cancel)).layer(gateway.clone());
        let result = client.call("/refunds".to_owned()).await;
        assert!(
            matches!(
                result,
                Err(ExecuteError::Cancelled {
                    attempts_made: 0,
                    ..
                })
            ),
            "M1: the layer's cancellation token ends the call (TODO(15)); got {result:?}"
        );
        assert_eq!(
            gateway.count("/refunds"),
            0,
            "M1: no attempt after cancellation (TODO(15))"
        );
    });
}

#[test]
fn m2_a_sick_route_opens_its_own_breaker_and_the_healthy_route_is_never_refused() {
    m2(async {
        let setup = setup();
        let gateway = Gateway::new(&["/charges"]);
        let mut client = by_route(&setup, policy()).layer(gateway.clone());
        let mut refunds = 0;
        for _ in 0..5 {
            let _ = client.call("/charges".to_owned()).await;
            let refund = client.call("/refunds".to_owned()).await;
            assert_eq!(
                refund.ok(),
                Some("200"),
                "M2: the healthy route must never be refused: it has a breaker of its own (TODO(15))"
            );
            refunds += 1;
            setup.clock.advance(ms(1));
        }
        assert_eq!(
            gateway.count("/refunds"),
            refunds,
            "M2: each call of the healthy route reaches the gateway exactly once (TODO(15))"
        );
        assert_eq!(
            gateway.count("/charges"),
            3,
            "M2: after its breaker opens, the sick route is refused without reaching the gateway (TODO(15))"
        );
        // In route order whatever the listing's: its order is R3's, step 14's.
        let in_route_order: std::collections::BTreeMap<_, _> = setup
            .registry
            .states()
            .into_iter()
            .map(|(route, state)| (route, state.phase()))
            .collect();
        let states: Vec<_> = in_route_order.into_iter().collect();
        assert_eq!(
            states,
            [
                ("/charges".to_owned(), retry_breaker::Phase::Open),
                ("/refunds".to_owned(), retry_breaker::Phase::Closed),
            ],
            "M2: one breaker per route in the registry, only the sick one open (TODO(15))"
        );
    });
}

#[test]
fn m2_a_request_that_cannot_be_cloned_gets_exactly_one_attempt() {
    m2(async {
        let setup = setup();
        let gateway = Gateway::new(&["/charges"]);
        let layer = setup.cloning(|_: &String| None);
        let mut client = layer.layer(gateway.clone());
        let result = client.call("/charges".to_owned()).await;
        assert_eq!(
            failed_at(&result),
            Some((1, "503")),
            "M2: a request that cannot be cloned is sent once and its error returned (TODO(15)); got {result:?}"
        );
        assert_eq!(
            gave_up(&result),
            Some(GaveUp::NoCopyLeft),
            "M2: the error says the call stopped because no copy was left to retry with \
             (TODO(15)); got {result:?}"
        );
        assert_eq!(gateway.count("/charges"), 1, "M2: one attempt (TODO(15))");
        assert!(
            setup.sleeper.delays().is_empty(),
            "M2: no retry, so no sleep (TODO(15))"
        );
        assert_eq!(
            setup.registry.breaker("/charges").state(),
            State::Closed { failures: 1 },
            "M2: the single attempt still goes through the route's breaker (TODO(15))"
        );
    });
}

#[test]
fn o1_m2_the_sink_hears_the_reason_the_caller_gets_when_no_copy_was_left() {
    m2(async {
        let heard = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&heard);
        let clock = ManualClock::new();
        let registry = Registry::new(
            RetryBreaker::builder().threshold(3).cooldown(ms(30)),
            clock.clone(),
        )
        .expect("valid settings")
        .with_event_sink(move |_: &String, event: &Event| {
            if let Event::GaveUp { reason, .. } = event {
                log.lock().unwrap().push(*reason);
            }
        });
        let setup = Setup {
            sleeper: clock.sleeper(),
            clock,
            registry: Arc::new(registry),
        };
        let mut client = setup
            .cloning(|_: &String| None)
            .layer(Gateway::new(&["/charges"]));
        let result = client.call("/charges".to_owned()).await;
        assert_eq!(
            gave_up(&result),
            Some(GaveUp::NoCopyLeft),
            "M2 (TODO(15)); got {result:?}"
        );
        assert_eq!(
            *heard.lock().unwrap(),
            [GaveUp::NoCopyLeft],
            "O1: the call's end is told once, with the reason its caller gets (TODO(15))"
        );
    });
}

#[test]
fn m2_q2_a_layer_s_retries_draw_on_its_policy_s_budget_and_a_missing_copy_spends_none() {
    m2(async {
        let setup = setup();
        let gateway = Gateway::new(&["/charges"]);
        // One retry over the window, whatever the traffic.
        let budget = Arc::new(RetryBudget::new(ms(1_000), 1, 0).expect("a valid budget"));
        let uncopyable = BreakerLayer::cloning_with(
            Arc::clone(&setup.registry),
            policy().retry_budget(Arc::clone(&budget)),
            setup.sleeper.clone(),
            |route: &String| route.clone(),
            |_: &String| None,
        );
        let result = uncopyable
            .layer(gateway.clone())
            .call("/charges".to_owned())
            .await;
        assert_eq!(
            gave_up(&result),
            Some(GaveUp::NoCopyLeft),
            "M2: with no copy to send, the call stops for want of one (TODO(15)); got {result:?}"
        );
        assert_eq!(
            budget.available(setup.clock.now()),
            1,
            "Q2: a retry that had no copy to send spent nothing of the budget (TODO(15))"
        );
        let mut client =
            by_route(&setup, policy().retry_budget(Arc::clone(&budget))).layer(gateway.clone());
        let result = client.call("/charges".to_owned()).await;
        assert_eq!(
            (failed_at(&result), gave_up(&result)),
            (Some((2, "503")), Some(GaveUp::RetryBudgetSpent)),
            "Q2, M1: the layer's call retries once on the budget's one retry, and its second \
             failure ends the call, the budget spent (TODO(15)); got {result:?}"
        );
        assert_eq!(
            gateway.count("/charges"),
            3,
            "M2: one attempt of the first call, two of the second (TODO(15))"
        );
    });
}

#[test]
fn e5_m2_a_call_that_sends_the_original_on_its_last_attempt_ran_out_of_attempts_not_copies() {
    m2(async {
        let setup = setup();
        let gateway = Gateway::new(&["/charges"]);
        // Two copies, then the original: the third and last attempt of the
        // policy's budget sends the original, and the budget ends the call.
        let layer = setup.copying_only(2);
        let mut client = layer.layer(gateway.clone());
        let result = client.call("/charges".to_owned()).await;
        assert_eq!(
            failed_at(&result),
            Some((3, "503")),
            "E5, M2: the budget of three attempts is spent, the last on the original \
             (TODO(15)); got {result:?}"
        );
        assert_eq!(
            gave_up(&result),
            Some(GaveUp::NoAttemptsLeft),
            "E5: the last attempt of the budget ends the call for want of attempts, even \
             though no copy would be left for a fourth: no retry was wanted, so no copy was \
             missing (TODO(15)); got {result:?}"
        );
        assert_eq!(
            gateway.count("/charges"),
            3,
            "E5, M2: two copies and the original reach the gateway (TODO(15))"
        );
    });
}

#[test]
fn m2_a_request_whose_copies_run_out_stops_retrying_with_the_last_error() {
    m2(async {
        let setup = setup();
        let gateway = Gateway::new(&["/charges"]);
        // One copy, then no more: the first attempt sends the copy, the
        // second the original, and a third has nothing to send.
        let layer = setup.copying_only(1);
        let mut client = layer.layer(gateway.clone());
        let result = client.call("/charges".to_owned()).await;
        assert_eq!(
            failed_at(&result),
            Some((2, "503")),
            "M2: once the request cannot be copied again, the call ends with the last \
             attempt's error, without a panic (TODO(15)); got {result:?}"
        );
        assert_eq!(
            gave_up(&result),
            Some(GaveUp::NoCopyLeft),
            "M2: the error says the call stopped because no copy was left to retry with \
             (TODO(15)); got {result:?}"
        );
        assert_eq!(
            gateway.count("/charges"),
            2,
            "M2: the copy and then the original reach the gateway, nothing more (TODO(15))"
        );
        assert_eq!(
            setup.registry.breaker("/charges").state(),
            State::Closed { failures: 2 },
            "M2: two failures were observed and two are counted, not a third for a retry \
             that was never sent (TODO(15))"
        );
    });
}

#[test]
fn m2_every_attempt_sends_its_own_copy_of_the_request() {
    m2(async {
        let setup = setup();
        let gateway = Gateway::new(&["/charges"]);
        let copies = Arc::new(Mutex::new(0));
        let counted = Arc::clone(&copies);
        let layer = setup.cloning(move |route: &String| {
            *counted.lock().unwrap() += 1;
            Some(route.clone())
        });
        let mut client = layer.layer(gateway.clone());
        let _ = client.call("/charges".to_owned()).await;
        assert_eq!(
            gateway.count("/charges"),
            3,
            "M2: a request that can be cloned is retried (TODO(15))"
        );
        assert_eq!(
            *copies.lock().unwrap(),
            3,
            "M2: one copy per attempt, made with the layer's clone function (TODO(15))"
        );
    });
}

/// A race: real tasks on a multi-threaded runtime, many routes at once. Not graded: on a wrong
/// crate its verdict can change from run to run, and a grade must not; `just test` runs it.
#[test]
fn m2_many_tasks_on_many_routes_at_once_keep_every_route_apart() {
    const ROUTES: usize = 8;
    const TASKS: usize = 32;
    const CALLS: usize = 10;
    static DOWN: [&str; 4] = ["/r1", "/r3", "/r5", "/r7"];
    let (setup, gateway, results) = crate::support::guard(
        "M2: many tasks through the layer did not finish (TODO(15))",
        std::time::Duration::from_secs(20),
        || {
            let setup = setup();
            let gateway = Gateway::new(&DOWN);
            let client = by_route(&setup, policy().attempts(1)).layer(gateway.clone());
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .build()
                .expect("a runtime");
            let results = runtime.block_on(async {
                let tasks: Vec<_> = (0..TASKS)
                    .map(|task| {
                        let mut client = client.clone();
                        tokio::spawn(async move {
                            let mut refused_healthy = 0;
                            for call in 0..CALLS {
                                let route = format!("/r{}", (task + call) % ROUTES);
                                let result = client.call(route.clone()).await;
                                let healthy = !DOWN.contains(&route.as_str());
                                if healthy && result.is_err() {
                                    refused_healthy += 1;
                                }
                                tokio::task::yield_now().await;
                            }
                            refused_healthy
                        })
                    })
                    .collect();
                let mut refused_healthy = 0;
                for task in tasks {
                    refused_healthy += task.await.expect("a task");
                }
                refused_healthy
            });
            (setup, gateway, results)
        },
    );
    assert_eq!(
        results, 0,
        "M2: no call of a healthy route may fail or be refused (TODO(15))"
    );
    let calls_per_route = TASKS * CALLS / ROUTES;
    for (route, state) in setup.registry.states() {
        if DOWN.contains(&route.as_str()) {
            assert!(
                matches!(state, State::Open { .. }),
                "M2: {route} failed on every attempt and must be open, got {state:?} (TODO(15))"
            );
        } else {
            assert_eq!(
                state,
                State::Closed { failures: 0 },
                "M2: {route} is healthy and must be untouched (TODO(15))"
            );
            assert_eq!(
                gateway.count(&route),
                calls_per_route,
                "M2: each call of the healthy route {route} reaches the gateway exactly once (TODO(15))"
            );
        }
    }
    assert_eq!(
        setup.registry.len(),
        ROUTES,
        "M2: one breaker per route, chosen through the registry (TODO(15))"
    );
}
