//! A breaker whose transition hook is handed the breaker itself, for the
//! tests of what a hook may do (B8) and what its panics may not (B11).

use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use retry_breaker::{ManualClock, Permit, RetryBreaker, State, Transition};

use super::lab::{probe, trip};
use super::watchdog::Alarm;

type Shared = Arc<RetryBreaker<ManualClock>>;

/// What the hook saw: each transition, with the state and generation it
/// read from the breaker while handling it (when it reads).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub transition: Transition,
    pub state: Option<State>,
    pub generation: Option<u64>,
}

pub struct Hooked {
    pub clock: ManualClock,
    pub breaker: Shared,
    seen: Arc<Mutex<Vec<Seen>>>,
    /// Stops the suite if a test using this breaker deadlocks. A reading
    /// hook runs under a watchdog instead, which fails only its own test.
    _alarm: Option<Alarm>,
}

/// What a test's hook does after writing the transition down: anything,
/// even panic or call the breaker it is handed.
pub trait Also: Fn(&RetryBreaker<ManualClock>, &Transition) + Send + Sync + 'static {}

impl<F: Fn(&RetryBreaker<ManualClock>, &Transition) + Send + Sync + 'static> Also for F {}

impl Hooked {
    /// A breaker at t = 0 whose hook writes each transition down, then runs
    /// `also` (which may panic, or call the breaker).
    pub fn new(threshold: u32, cooldown: Duration, also: impl Also) -> Hooked {
        Hooked::build(threshold, cooldown, false, also)
    }

    /// Like [`new`](Hooked::new), with a hook that also reads the breaker's
    /// state and generation. A breaker that calls its hook under its lock
    /// deadlocks here: use it under a watchdog.
    pub fn reading(threshold: u32, cooldown: Duration, also: impl Also) -> Hooked {
        Hooked::build(threshold, cooldown, true, also)
    }

    fn build(threshold: u32, cooldown: Duration, reads: bool, also: impl Also) -> Hooked {
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
                        state: reads.then(|| breaker.state()),
                        generation: reads.then(|| breaker.generation().get()),
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
            _alarm: (!reads).then(|| Alarm::set(Duration::from_secs(10))),
        }
    }

    /// Everything the hook saw so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Reports `threshold` failures at the current time (the shared [`trip`](fn@trip)).
    pub fn trip(&self) {
        trip(&self.breaker);
    }

    /// Admits the probe of a circuit whose cooldown is over (the shared [`probe`](fn@probe)).
    pub fn probe(&self) -> Permit<'_, ManualClock> {
        probe(&self.breaker)
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
