//! A bulkhead per route, through the tower layer (steps 14 and 15): each
//! route's breaker has room of its own (H1).

use std::future::{Future, ready};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use retry_breaker::{BreakerLayer, ExecuteError, ManualClock, Registry, Rejected, RetryBreaker};
use tower::{Layer, Service};

use crate::step15_layer::{m2, policy};
use crate::support::poll_once;

/// A gateway whose "/hang" route never answers; every other route answers
/// "200" at once. It counts the requests that reached it.
#[derive(Clone, Default)]
struct Hanging {
    reached: Arc<Mutex<Vec<String>>>,
}

impl Service<String> for Hanging {
    type Response = &'static str;
    type Error = &'static str;
    type Future =
        std::pin::Pin<Box<dyn Future<Output = Result<&'static str, &'static str>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, route: String) -> Self::Future {
        let hang = route == "/hang";
        self.reached.lock().unwrap().push(route);
        if hang {
            Box::pin(std::future::pending())
        } else {
            Box::pin(ready(Ok("200")))
        }
    }
}

#[test]
fn m2_h1_each_route_has_a_bulkhead_of_its_own() {
    m2(async {
        let clock = ManualClock::new();
        let registry = Arc::new(
            Registry::new(
                RetryBreaker::builder().threshold(3).max_in_flight(2),
                clock.clone(),
            )
            .expect("valid settings"),
        );
        let layer = BreakerLayer::new(
            registry.clone(),
            policy(),
            clock.sleeper(),
            |route: &String| route.clone(),
        );
        let gateway = Hanging::default();
        let mut client = layer.layer(gateway.clone());
        let mut hanging = Vec::new();
        for _ in 0..2 {
            let mut call = Box::pin(client.call("/hang".to_owned()));
            assert!(
                poll_once(call.as_mut()).is_pending(),
                "M1: the request hangs"
            );
            hanging.push(call);
        }
        // Polled once, not awaited: a third request that is let through
        // hangs like the first two, and "at once" is the first poll.
        let mut third = Box::pin(client.call("/hang".to_owned()));
        let result = poll_once(third.as_mut());
        assert!(
            matches!(
                result,
                Poll::Ready(Err(ExecuteError::Rejected {
                    attempt: 1,
                    rejection: Rejected::Full { limit: 2 },
                    ..
                }))
            ),
            "TODO(17): H1: a third request on the route finds its bulkhead full, and is refused at once \
             (TODO(15)); got {result:?}"
        );
        drop(third);
        let other = client.call("/fine".to_owned()).await;
        assert_eq!(
            other.ok(),
            Some("200"),
            "TODO(17): H1, M2: another route's bulkhead is its own (TODO(15))"
        );
        assert_eq!(
            gateway.reached.lock().unwrap().len(),
            3,
            "two hanging requests and /fine"
        );
        drop(hanging);
        assert_eq!(
            registry.breaker("/hang").in_flight(),
            0,
            "TODO(17): H3: the callers gave up, and the route's slots are free (TODO(15))"
        );
    });
}
