//! A breaker whose transition hook is handed the breaker itself, for the
//! tests of what a hook may do (B8) and what its panics may not (B11).

use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use retry_breaker::{ManualClock, RetryBreaker, State, Transition};

type Shared = Arc<RetryBreaker<ManualClock>>;

/// What the hook saw: each transition, with the state and generation it
/// read from the breaker while handling it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub transition: Transition,
    pub state: State,
    pub generation: u64,
}

pub struct Hooked {
    pub clock: ManualClock,
    pub breaker: Shared,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Hooked {
    /// A breaker at t = 0 whose hook reads the breaker, writes down what it
    /// saw, then runs `also` (which may panic, or call the breaker).
    pub fn new(
        threshold: u32,
        cooldown: Duration,
        also: impl Fn(&RetryBreaker<ManualClock>, &Transition) + Send + Sync + 'static,
    ) -> Hooked {
        super::panics::install();
        let clock = ManualClock::new();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        let itself: Arc<OnceLock<Weak<RetryBreaker<ManualClock>>>> = Arc::default();
        let handle = Arc::clone(&itself);
        let breaker = Arc::new(
            RetryBreaker::new(threshold, cooldown, clock.clone())
                .expect("a valid configuration")
                .with_transition_hook(move |transition| {
                    let breaker = handle
                        .get()
                        .and_then(Weak::upgrade)
                        .expect("the breaker outlives its hook");
                    let seen = Seen {
                        transition: *transition,
                        state: breaker.state(),
                        generation: breaker.generation().get(),
                    };
                    log.lock().unwrap_or_else(|e| e.into_inner()).push(seen);
                    also(&breaker, transition);
                }),
        );
        itself
            .set(Arc::downgrade(&breaker))
            .expect("set once, here");
        Hooked {
            clock,
            breaker,
            seen,
        }
    }

    /// Everything the hook saw so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Reports `threshold` failures at the current time.
    pub fn trip(&self) {
        for _ in 0..self.breaker.threshold() {
            self.breaker
                .try_acquire()
                .expect("a closed circuit admits every attempt")
                .failure();
        }
    }
}

/// The message of a caught panic.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "<not a string>".to_owned())
}
