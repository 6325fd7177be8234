//! A shared breaker whose clock the test controls beyond moving it: it can
//! break (every reading panics, B12), or run an action at the moment it is
//! read, as another thread would between a reading and what the reader does
//! next. Shared behind an `Arc`, so owned permits can be taken from it.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::Duration;

use retry_breaker::{Clock, ManualClock, Permit, RetryBreaker, State};

use super::lab::{Lab, probe, trip};

use super::hooked::panic_message;
use super::panics::quietly;
use super::watchdog::Alarm;

/// What a reading of the broken clock panics with.
pub const CLOCK_PANIC: &str = "the clock broke";

/// What the dependency's own panic says, in the tests that mix the two.
pub const TASK_PANIC: &str = "the dependency client blew up";

type Shared = RetryBreaker<TestClock>;
type Action = Box<dyn FnOnce(&Shared) + Send>;

/// A manual clock that can break, or act when it is next read.
#[derive(Clone, Default)]
pub struct TestClock {
    time: ManualClock,
    broken: Arc<AtomicBool>,
    next_read: Arc<Mutex<Option<Action>>>,
    breaker: Arc<OnceLock<Weak<Shared>>>,
}

impl TestClock {
    /// Moves the clock forward (also from inside an action).
    pub fn advance(&self, by: Duration) {
        self.time.advance(by);
    }
}

impl Clock for TestClock {
    fn now(&self) -> Duration {
        if self.broken.load(Ordering::SeqCst) {
            panic!("{CLOCK_PANIC}");
        }
        // The reading is taken first; the action runs after it, before the
        // reader goes on.
        let now = self.time.now();
        let action = self
            .next_read
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(action) = action {
            let breaker = self
                .breaker
                .get()
                .and_then(Weak::upgrade)
                .expect("the breaker outlives its clock");
            action(&breaker);
        }
        now
    }
}

/// A breaker at t = 0 on a [`TestClock`].
pub struct Core {
    pub clock: TestClock,
    pub breaker: Arc<Shared>,
    /// Stops the suite if the test using this breaker deadlocks.
    _alarm: Alarm,
}

impl Core {
    pub fn new(threshold: u32, cooldown: Duration) -> Core {
        super::panics::install();
        let clock = TestClock::default();
        let breaker = Arc::new(
            RetryBreaker::new(threshold, cooldown, clock.clone()).expect("a valid configuration"),
        );
        clock
            .breaker
            .set(Arc::downgrade(&breaker))
            .unwrap_or_else(|_| unreachable!("set once, here"));
        Core {
            clock,
            breaker,
            _alarm: Alarm::set(Duration::from_secs(10)),
        }
    }

    /// A breaker opened at t = 0 whose cooldown is over at the current time,
    /// so the next attempt is the probe.
    pub fn cooled(threshold: u32, cooldown: Duration) -> Core {
        let core = Core::new(threshold, cooldown);
        core.trip();
        core.advance(cooldown);
        core
    }

    /// Moves the clock forward.
    pub fn advance(&self, by: Duration) {
        self.clock.advance(by);
    }

    /// Opens the circuit at the current time (the shared [`trip`](fn@trip)).
    pub fn trip(&self) {
        trip(&self.breaker);
    }

    /// Admits the probe of a circuit whose cooldown is over (the shared [`probe`](fn@probe)).
    pub fn probe(&self) -> Permit<'_, TestClock> {
        probe(&self.breaker)
    }

    /// Runs `f` while every reading of the clock panics, then mends the
    /// clock. Returns the message of the panic that reached `f`'s caller,
    /// or `None` if none did.
    pub fn broken<T>(&self, f: impl FnOnce() -> T) -> Option<String> {
        self.clock.broken.store(true, Ordering::SeqCst);
        let caught = quietly(|| catch_unwind(AssertUnwindSafe(f)));
        self.clock.broken.store(false, Ordering::SeqCst);
        caught.err().map(|payload| panic_message(&*payload))
    }

    /// Runs `action` on the breaker at the next reading of the clock, just
    /// after the reading is taken: what another thread would do while the
    /// reader is between its reading and its next step. The action may use
    /// the breaker (the clock works normally for it) only if that reading is
    /// taken outside the breaker's lock.
    pub fn on_next_read(&self, action: impl FnOnce(&Shared) + Send + 'static) {
        *self
            .clock
            .next_read
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Box::new(action));
    }
}

/// Runs `task` on a worker of a multi-threaded runtime, as `tokio::spawn`
/// does in a service, and waits for it: an owned permit moved into it
/// reports, or is dropped, on another thread.
pub fn spawned<T: Send + 'static>(
    task: impl Future<Output = T> + Send + 'static,
) -> Result<T, tokio::task::JoinError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .build()
        .expect("a tokio runtime")
        .block_on(async { tokio::spawn(task).await })
}

/// HALF-OPEN, waiting for a probe: the slot is free.
pub const WAITING: State = State::HalfOpen {
    probe_in_flight: false,
};

/// HALF-OPEN with its probe out: every other attempt is refused.
pub const PROBING: State = State::HalfOpen {
    probe_in_flight: true,
};

/// `assert_eq!(breaker.state(), expected, why...)` in one line: the state
/// a scenario expects at this point.
macro_rules! assert_state {
    ($breaker:expr, $expected:expr $(,)?) => {
        assert_eq!($breaker.state(), $expected)
    };
    ($breaker:expr, $expected:expr, $($why:tt)+) => {
        assert_eq!($breaker.state(), $expected, $($why)+)
    };
}
pub(crate) use assert_state;

/// `assert_eq!(reported, Recorded::Stale, why...)`: the report was ignored
/// as stale (B6, B9).
macro_rules! assert_stale {
    ($reported:expr $(,)?) => {
        assert_eq!($reported, retry_breaker::Recorded::Stale)
    };
    ($reported:expr, $($why:tt)+) => {
        assert_eq!($reported, retry_breaker::Recorded::Stale, $($why)+)
    };
}
pub(crate) use assert_stale;

/// `assert_eq!(reported, Recorded::Counted, why...)`: the report counted (B9).
macro_rules! assert_counted {
    ($reported:expr $(,)?) => {
        assert_eq!($reported, retry_breaker::Recorded::Counted)
    };
    ($reported:expr, $($why:tt)+) => {
        assert_eq!($reported, retry_breaker::Recorded::Counted, $($why)+)
    };
}
pub(crate) use assert_counted;

/// `n` attempts admitted into the lab's CLOSED circuit, still out.
pub fn admitted(lab: &Lab, n: u32) -> Vec<Permit<'_, ManualClock>> {
    (0..n)
        .map(|_| {
            lab.breaker
                .try_acquire()
                .expect("CLOSED admits every attempt")
        })
        .collect()
}

/// `n` attempts admitted into the lab's CLOSED circuit, which then opens
/// and cools down while they are out: their outcomes are stale, and the
/// next attempt is the probe.
pub fn outlived_by_a_cooldown(lab: &Lab, n: u32) -> Vec<Permit<'_, ManualClock>> {
    let early = admitted(lab, n);
    lab.trip();
    lab.advance(lab.breaker.cooldown());
    early
}

/// `assert_eq!(breaker.try_acquire().err(), Some(expected), why...)`: the
/// next attempt is refused, and why (B3, B5).
macro_rules! assert_refused {
    ($breaker:expr, $expected:expr $(,)?) => {
        assert_eq!($breaker.try_acquire().err(), Some($expected))
    };
    ($breaker:expr, $expected:expr, $($why:tt)+) => {
        assert_eq!($breaker.try_acquire().err(), Some($expected), $($why)+)
    };
}
pub(crate) use assert_refused;
