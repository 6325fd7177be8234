//! The solution's settings beyond the lab, for production: manual control
//! (C1-C3), a growing cooldown (G1-G4), a probe timeout (P1-P3), a
//! time-based window (T1-T4), a registry with a key limit (L1-L3) and the
//! durations of attempts and calls (O9). The
//! student's crate has none of them, so
//! they are tested here rather than in the shared suite; so is an `anyhow`
//! error passed on with `?`, which needs a dependency of this crate's tests
//! alone. One test binary, so that each build of the suite (a mutant's,
//! say) links one more, not several.

mod clock_contract;
mod coarse_clock;
mod durations;
mod errors;
mod growing_cooldown;
mod key_limit;
mod manual;
mod probe_timeout;
mod time_window;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use retry_breaker_solution::{
    Clock, ManualClock, Phase, Rejected, RetryBreaker, State, Transition,
};

const COOLDOWN: Duration = Duration::from_secs(30);
const TEN_YEARS: Duration = Duration::from_secs(10 * 365 * 24 * 3600);
/// What an isolated breaker shows.
const ISOLATED: State = State::Open {
    remaining: Duration::MAX,
};
/// What an isolated breaker answers.
const REFUSED_FOR_GOOD: Rejected = Rejected::Open {
    remaining: Duration::MAX,
};

type Heard = Arc<Mutex<Vec<Transition>>>;

/// A breaker on a manual clock whose hook keeps every transition.
fn heard_breaker(threshold: u32) -> (RetryBreaker<ManualClock>, ManualClock, Heard) {
    let clock = ManualClock::new();
    let breaker = RetryBreaker::builder()
        .threshold(threshold)
        .cooldown(COOLDOWN);
    let (breaker, heard) = hear(breaker.build(clock.clone()).expect("valid settings"));
    (breaker, clock, heard)
}

/// `breaker`, with a hook that keeps every transition.
fn hear<C: Clock>(breaker: RetryBreaker<C>) -> (RetryBreaker<C>, Heard) {
    let heard = Heard::default();
    let log = Arc::clone(&heard);
    let breaker = breaker.with_transition_hook(move |t| log.lock().unwrap().push(*t));
    (breaker, heard)
}

/// Each transition heard, as (from, to, generation).
fn moves(heard: &Heard) -> Vec<(Phase, Phase, u64)> {
    let heard = heard.lock().unwrap();
    heard
        .iter()
        .map(|t| (t.from, t.to, t.generation.get()))
        .collect()
}

/// A manual clock that panics once told to, as a user's clock may.
#[derive(Default)]
struct Breaking {
    clock: ManualClock,
    broken: AtomicBool,
}

impl Clock for &Breaking {
    fn now(&self) -> Duration {
        assert!(!self.broken.load(Ordering::SeqCst), "the clock broke");
        self.clock.now()
    }
}
