//! The inner services a layer's call sends its attempts to, each one ready
//! before the breaker is asked to admit its attempt (M1).
//!
//! A `tower` service may be called only after its `poll_ready` said ready,
//! and getting ready can take a long time: a concurrency limit that is full,
//! a pool with no free connection. A permit held through that wait is
//! wasted, and a HALF-OPEN probe held through it refuses every other caller
//! for as long as the wait lasts. So no attempt waits for readiness after
//! its admission:
//!
//! - the first attempt goes to the instance the caller made ready through
//!   the layer's own `poll_ready` (backpressure passes through);
//! - each retry's instance is made ready during the backoff pause before
//!   it, by a sleeper that waits out the delay and then the readiness.

use std::future::{Future, poll_fn};
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tower::Service;

use crate::time::sleeper::Sleeper;
use crate::time::time_source::TimeSource;

/// One call's supply of ready inner services.
///
/// Behind mutexes, so that a call's future is `Send` for any `Send`
/// service, `Sync` or not; a lock is held only to clone or to hand over.
pub(crate) struct ReadyServices<Svc: Service<Req>, Req> {
    /// The next attempt's instance, made ready for it, or the error its
    /// readiness check ended with (which that attempt then fails with).
    next: Mutex<Option<Result<Svc, Svc::Error>>>,
    /// What each later instance is cloned from.
    model: Mutex<Svc>,
    requests: PhantomData<fn(Req)>,
}

impl<Svc: Service<Req> + Clone, Req> ReadyServices<Svc, Req> {
    /// A call's services: `first`, if the caller made one ready through
    /// `poll_ready`, goes to the first attempt; clones of `model` to the
    /// others.
    pub(crate) fn new(first: Option<Result<Svc, Svc::Error>>, model: Svc) -> Self {
        ReadyServices {
            next: Mutex::new(first),
            model: Mutex::new(model),
            requests: PhantomData,
        }
    }

    /// The instance for the attempt just admitted: the one made ready for
    /// it. Only an attempt that nothing prepared (a caller that skipped
    /// `poll_ready`, a retry made with no pause) waits for readiness here.
    pub(crate) async fn next(&self) -> Result<Svc, Svc::Error> {
        let prepared = self
            .next
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        match prepared {
            Some(prepared) => prepared,
            None => self.ready_clone().await,
        }
    }

    /// A sleeper for the call's backoff pauses that, once `sleeper` has
    /// waited out the delay, makes the next attempt's instance ready.
    pub(crate) fn sleeper<S>(&self, sleeper: S) -> Readying<'_, S, Svc, Req> {
        Readying {
            sleeper,
            services: self,
        }
    }

    async fn ready_clone(&self) -> Result<Svc, Svc::Error> {
        let mut service = self
            .model
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        poll_fn(|cx| service.poll_ready(cx)).await?;
        Ok(service)
    }

    async fn prepare(&self) {
        let ready = self.ready_clone().await;
        *self.next.lock().unwrap_or_else(PoisonError::into_inner) = Some(ready);
    }
}

/// The sleeper of [`ReadyServices::sleeper`]: a pause before a retry that
/// ends once the retry's instance is ready. A cancellation during the pause
/// ends the wait for readiness too (E7).
pub(crate) struct Readying<'a, S, Svc: Service<Req>, Req> {
    sleeper: S,
    services: &'a ReadyServices<Svc, Req>,
}

impl<'s, S, Svc, Req> Sleeper for Readying<'s, S, Svc, Req>
where
    S: Sleeper,
    S::Sleep: Send + 's,
    Svc: Service<Req> + Clone + Send,
    Svc::Error: Send,
    Req: 's,
{
    // Boxed: a pause before a retry is rare next to the calls, and the box
    // names a future that awaits the inner service's readiness.
    type Sleep = Pin<Box<dyn Future<Output = ()> + Send + 's>>;

    fn sleep(&self, delay: Duration) -> Self::Sleep {
        let pause = self.sleeper.sleep(delay);
        let services = self.services;
        Box::pin(async move {
            pause.await;
            services.prepare().await;
        })
    }

    fn time_source(&self) -> TimeSource {
        self.sleeper.time_source()
    }
}
