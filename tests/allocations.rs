//! `execute` makes no heap allocation on its hot paths, and a breaker that
//! has cycled through its states many times holds on to nothing.
//!
//! A breaker sits in front of every call to a dependency, so an allocation
//! per call would be a cost (and a source of allocator contention) on every
//! request. This binary installs a counting global allocator, which is why it
//! is a test binary of its own: a global allocator is chosen per binary.
//!
//! The counts are kept per thread, so tests running side by side on the
//! harness's threads do not see each other's allocations. Every future here
//! is ready at its first poll (the tasks are `std::future::ready`, and the
//! manual sleeper completes at once), so each one is polled once with a
//! no-op waker instead of running on an executor that would allocate on its
//! own account.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use retry_breaker::{
    ExecuteError, ManualClock, ManualSleeper, Recorded, Rejected, RetryBreaker, Sleeper, State,
    Verdict, WindowConfig, backoff,
};
use tokio_util::sync::CancellationToken;

// ---------------------------------------------------------------------------
// The counting allocator

struct Counting;

#[global_allocator]
static COUNTING: Counting = Counting;

thread_local! {
    /// Allocations (including reallocations) made by this thread.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
    /// Blocks this thread allocated minus blocks it freed.
    static LIVE: Cell<i64> = const { Cell::new(0) };
    /// While set, this thread's allocations are not counted (see `Uncounted`).
    static PAUSED: Cell<bool> = const { Cell::new(false) };
}

fn note(allocations: u64, live: i64) {
    // `try_with`: a thread being torn down may still free memory after its
    // thread-locals are gone. Such frees are not counted.
    let _ = PAUSED.try_with(|paused| {
        if !paused.get() {
            let _ = ALLOCATIONS.try_with(|count| count.set(count.get() + allocations));
            let _ = LIVE.try_with(|count| count.set(count.get() + live));
        }
    });
}

// SAFETY: every method forwards to the system allocator unchanged; the
// counting touches only const-initialized thread-locals without destructors,
// which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(1, 1);
        // SAFETY: the caller upholds `alloc`'s contract, which we pass on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(1, 1);
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(1, 0);
        // SAFETY: as for `alloc`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note(0, -1);
        // SAFETY: as for `alloc`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// What this thread allocated while running `f`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Counted {
    allocations: u64,
    live: i64,
}

fn allocations_in<R>(f: impl FnOnce() -> R) -> (R, Counted) {
    let (allocations, live) = (ALLOCATIONS.get(), LIVE.get());
    let result = f();
    let counted = Counted {
        allocations: ALLOCATIONS.get() - allocations,
        live: LIVE.get() - live,
    };
    (result, counted)
}

const NOTHING: Counted = Counted {
    allocations: 0,
    live: 0,
};

/// A control: the counter does see allocations, so the zeros below mean
/// something.
#[test]
fn the_counter_sees_allocations_and_frees() {
    let (boxed, counted) = allocations_in(|| Box::new(1_u64));
    assert_eq!(
        counted,
        Counted {
            allocations: 1,
            live: 1
        }
    );
    let ((), counted) = allocations_in(|| drop(boxed));
    assert_eq!(
        counted,
        Counted {
            allocations: 0,
            live: -1
        }
    );
}

// ---------------------------------------------------------------------------
// Helpers

/// Polls a future that must be ready at once.
fn ready<F: Future>(future: F) -> F::Output {
    match pin!(future).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("the future was not ready at its first poll"),
    }
}

/// The manual sleeper, with its own bookkeeping left out of the count: it
/// writes every delay into a `Vec`, which grows now and then, and that is
/// the test double's allocation, not `execute`'s.
struct Uncounted<'a>(&'a ManualSleeper);

impl<'s> Sleeper for Uncounted<'s> {
    type Sleep = UncountedSleep<'s>;

    fn sleep(&self, delay: Duration) -> Self::Sleep {
        // The manual sleeper records the delay when it is asked, so the
        // pause covers the call as well as every poll.
        PAUSED.set(true);
        let sleep = self.0.sleep(delay);
        PAUSED.set(false);
        UncountedSleep(sleep, PhantomData)
    }
}

/// The manual sleeper's sleep, polled with the counter paused.
struct UncountedSleep<'s>(<ManualSleeper as Sleeper>::Sleep, PhantomData<&'s ()>);

impl Future for UncountedSleep<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        PAUSED.set(true);
        let poll = Pin::new(&mut self.0).poll(cx);
        PAUSED.set(false);
        poll
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Timeout;

const COOLDOWN: Duration = Duration::from_secs(10);

fn breaker(threshold: u32, clock: &ManualClock) -> RetryBreaker<ManualClock> {
    RetryBreaker::new(threshold, COOLDOWN, clock.clone()).expect("a valid threshold")
}

// ---------------------------------------------------------------------------
// The hot paths

#[test]
fn a_successful_call_while_closed_allocates_nothing() {
    let clock = ManualClock::new();
    let sleeper = ManualSleeper::new(clock.clone());
    let breaker = breaker(3, &clock);
    let cancel = CancellationToken::new();

    let (result, counted) = allocations_in(|| {
        ready(breaker.execute(
            3,
            || std::future::ready(Ok::<_, Timeout>(42)),
            |_| true,
            backoff::constant(Duration::from_millis(5)),
            &cancel,
            &sleeper,
        ))
    });
    assert_eq!(result.ok(), Some(42));
    assert_eq!(counted, NOTHING);

    let (_, counted) = allocations_in(|| breaker.try_acquire().expect("closed").success());
    assert_eq!(
        counted, NOTHING,
        "the synchronous seam allocates nothing either"
    );
}

#[test]
fn a_rejection_while_open_allocates_nothing() {
    let clock = ManualClock::new();
    let sleeper = ManualSleeper::new(clock.clone());
    let breaker = breaker(1, &clock);
    let cancel = CancellationToken::new();
    breaker.try_acquire().expect("closed").failure();
    clock.advance(Duration::from_secs(4));

    let mut calls = 0;
    let (result, counted) = allocations_in(|| {
        ready(breaker.execute(
            3,
            || {
                calls += 1;
                std::future::ready(Ok::<_, Timeout>(()))
            },
            |_| true,
            backoff::constant(Duration::from_millis(5)),
            &cancel,
            &sleeper,
        ))
    });
    assert!(matches!(
        result,
        Err(ExecuteError::Rejected {
            attempt: 1,
            rejection: Rejected::Open { remaining },
            ..

        }) if remaining == Duration::from_secs(6)
    ));
    assert_eq!(calls, 0);
    assert_eq!(counted, NOTHING);
}

#[test]
fn every_open_refusal_allocates_nothing() {
    // The reference solution refuses without its lock while OPEN: before a
    // deadline, and for a cooldown that never ends. Both, and the lock's
    // answer at the deadline, through the synchronous seam.
    let clock = ManualClock::new();
    let breaker = breaker(1, &clock);
    breaker.try_acquire().expect("closed").failure();
    let (refused, counted) = allocations_in(|| breaker.try_acquire().err());
    assert_eq!(
        refused,
        Some(Rejected::Open {
            remaining: COOLDOWN
        })
    );
    assert_eq!(counted, NOTHING);
    clock.advance(COOLDOWN);
    let (probe, counted) = allocations_in(|| breaker.try_acquire().map(|probe| probe.failure()));
    assert_eq!(probe, Ok(Recorded::Counted), "the probe, at the deadline");
    assert_eq!(counted, NOTHING);

    let forever = RetryBreaker::new(1, Duration::MAX, clock.clone()).expect("a valid threshold");
    clock.advance(Duration::from_secs(1));
    forever.try_acquire().expect("closed").failure();
    let (refused, counted) = allocations_in(|| forever.try_acquire().err());
    assert_eq!(
        refused,
        Some(Rejected::Open {
            remaining: Duration::MAX
        })
    );
    assert_eq!(counted, NOTHING);
}

#[test]
fn a_rejection_while_the_probe_is_out_allocates_nothing() {
    let clock = ManualClock::new();
    let sleeper = ManualSleeper::new(clock.clone());
    let breaker = breaker(1, &clock);
    let cancel = CancellationToken::new();
    breaker.try_acquire().expect("closed").failure();
    clock.advance(COOLDOWN);
    let probe = breaker.try_acquire().expect("the cooldown is over");

    let (result, counted) = allocations_in(|| {
        ready(breaker.execute(
            3,
            || std::future::ready(Ok::<_, Timeout>(())),
            |_| true,
            backoff::constant(Duration::from_millis(5)),
            &cancel,
            &sleeper,
        ))
    });
    assert!(matches!(
        result,
        Err(ExecuteError::Rejected {
            rejection: Rejected::ProbeInFlight,
            ..
        })
    ));
    assert_eq!(counted, NOTHING);
    probe.success();
}

#[test]
fn a_retried_call_allocates_nothing() {
    let clock = ManualClock::new();
    let sleeper = ManualSleeper::new(clock.clone());
    let breaker = breaker(5, &clock);
    let cancel = CancellationToken::new();

    // Two timeouts, then an answer: two failures counted, two backoff sleeps.
    let mut attempts = 0;
    let (result, counted) = allocations_in(|| {
        ready(breaker.execute(
            3,
            || {
                attempts += 1;
                std::future::ready(if attempts < 3 { Err(Timeout) } else { Ok(7) })
            },
            |_| true,
            backoff::exponential(Duration::from_millis(100), Duration::from_secs(1)),
            &cancel,
            &Uncounted(&sleeper),
        ))
    });
    assert_eq!(result.ok(), Some(7));
    assert_eq!(counted, NOTHING);
    assert_eq!(
        sleeper.delays(),
        [Duration::from_millis(100), Duration::from_millis(200)]
    );

    // Out of attempts: the task's own error comes back, still without an
    // allocation.
    let (result, counted) = allocations_in(|| {
        ready(breaker.execute(
            2,
            || std::future::ready(Err::<(), _>(Timeout)),
            |_| true,
            backoff::constant(Duration::from_millis(50)),
            &cancel,
            &Uncounted(&sleeper),
        ))
    });
    assert!(matches!(
        result,
        Err(ExecuteError::Task {
            attempt: 2,
            source: Timeout,
            ..
        })
    ));
    assert_eq!(counted, NOTHING);
}

// ---------------------------------------------------------------------------
// Nothing kept

#[test]
fn ten_thousand_open_probe_close_cycles_leave_nothing_allocated() {
    const CYCLES: u64 = 10_000;
    let clock = ManualClock::new();
    let sleeper = ManualSleeper::new(clock.clone());
    let cancel = CancellationToken::new();
    let transitions = Arc::new(AtomicU64::new(0));

    let (_, counted) = allocations_in(|| {
        let seen = Arc::clone(&transitions);
        let breaker = breaker(1, &clock).with_transition_hook(move |_| {
            seen.fetch_add(1, Ordering::Relaxed);
        });
        let call = |outcome: Result<(), Timeout>| {
            ready(breaker.execute(
                1,
                || std::future::ready(outcome),
                |_| true,
                backoff::constant(Duration::ZERO),
                &cancel,
                &sleeper,
            ))
        };
        for _ in 0..CYCLES {
            // CLOSED -> OPEN
            assert!(matches!(call(Err(Timeout)), Err(ExecuteError::Task { .. })));
            assert!(matches!(call(Ok(())), Err(ExecuteError::Rejected { .. })));
            clock.advance(COOLDOWN);
            // OPEN -> HALF-OPEN -> CLOSED
            assert!(call(Ok(())).is_ok());
        }
        assert_eq!(breaker.state(), State::Closed { failures: 0 });
        assert_eq!(breaker.generation().get(), 3 * CYCLES);
    });
    assert_eq!(transitions.load(Ordering::Relaxed), 3 * CYCLES);
    assert_eq!(
        counted.live, 0,
        "the breaker, its hook and {CYCLES} cycles of transitions are all freed"
    );
    assert_eq!(
        counted.allocations, 1,
        "the only allocation is the boxed hook: transitions allocate nothing"
    );
}

// ---------------------------------------------------------------------------
// The advanced track's modes (steps 11-13)

/// Reads `Ok` as a success, `Err(Timeout)` as a failure, and `Err` of
/// anything else as no verdict.
fn classify(outcome: &Result<u32, Option<Timeout>>) -> Verdict {
    match outcome {
        Ok(_) => Verdict::Success,
        Err(Some(Timeout)) => Verdict::Failure,
        Err(None) => Verdict::Ignored,
    }
}

#[test]
fn classified_calls_on_a_window_breaker_with_a_success_threshold_allocate_nothing() {
    let clock = ManualClock::new();
    let sleeper = ManualSleeper::new(clock.clone());
    let cancel = CancellationToken::new();
    // Everything the window needs is allocated here, once.
    let breaker = RetryBreaker::builder()
        .cooldown(COOLDOWN)
        .success_threshold(2)
        .window(WindowConfig::new(16, 4, 0.5))
        .build(clock.clone())
        .expect("valid settings");
    let call = |outcome: Result<u32, Option<Timeout>>| {
        ready(breaker.execute_classified(
            1,
            || std::future::ready(outcome),
            classify,
            // One attempt: nothing is ever retried, so a loop that asks
            // anyway fails here instead of retrying an ignored outcome
            // forever.
            |_: &Option<Timeout>| -> bool { panic!("a budget of one attempt never asks to retry") },
            backoff::constant(Duration::ZERO),
            &cancel,
            &sleeper,
        ))
    };

    let (opened, counted) = allocations_in(|| {
        let mut opened = 0;
        for round in 0..1_000u32 {
            // A trickle the window tolerates, with ignored outcomes between,
            // far more verdicts than the window holds...
            assert!(call(Ok(round)).is_ok());
            assert!(call(Err(None)).is_err());
            let _ = call(Err(Some(Timeout)));
            assert!(call(Ok(round)).is_ok());
            assert!(call(Ok(round)).is_ok());
            // ...and every tenth round an outage: open, then two good
            // probes close it.
            if round % 10 == 0 {
                let mut failures = 0;
                while breaker.state().phase() != retry_breaker::Phase::Open {
                    // Bounded, so a broken breaker fails here instead of
                    // spinning until a mutation test's timeout.
                    assert!(failures < 16, "a window full of failures opens");
                    failures += 1;
                    let _ = call(Err(Some(Timeout)));
                }
                opened += 1;
                clock.advance(COOLDOWN);
                assert!(call(Ok(1)).is_ok());
                assert!(call(Ok(2)).is_ok());
                assert_eq!(breaker.state(), State::Closed { failures: 0 });
            }
        }
        opened
    });
    assert_eq!(opened, 100);
    assert_eq!(
        counted, NOTHING,
        "recording verdicts in the window, ignoring outcomes and counting probes allocate nothing"
    );

    let (_, counted) = allocations_in(|| {
        breaker
            .try_acquire()
            .expect("closed")
            .report(Verdict::Ignored);
        breaker
            .try_acquire()
            .expect("closed")
            .report(Verdict::Failure);
        breaker
            .try_acquire()
            .expect("closed")
            .report(Verdict::Success);
    });
    assert_eq!(
        counted, NOTHING,
        "the synchronous seam allocates nothing either"
    );
}

/// Step 14 (R3): a lookup of a key that already has its breaker takes the
/// shared lock and clones an `Arc`, nothing more; only a new key allocates
/// (its breaker, its copy of the key).
#[test]
fn a_registry_lookup_of_an_existing_key_allocates_nothing() {
    let registry: retry_breaker::Registry<String, ManualClock> =
        retry_breaker::Registry::new(RetryBreaker::builder().threshold(3), ManualClock::new())
            .expect("valid settings");

    let (_, counted) = allocations_in(|| registry.breaker("search"));
    assert!(
        counted.allocations > 0,
        "a control: a new key allocates its breaker"
    );

    let (found, counted) = allocations_in(|| {
        let breaker = registry.breaker("search");
        breaker.try_acquire().expect("closed").success();
        breaker
    });
    assert_eq!(
        counted, NOTHING,
        "looking up an existing key (by &str) and using its breaker allocates nothing"
    );
    drop(found);
    let (_, counted) = allocations_in(|| registry.get("search").is_some());
    assert_eq!(counted, NOTHING, "`get` allocates nothing either");
}
