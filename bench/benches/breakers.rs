//! Our breaker, the peer crates `recloser`, `failsafe` and
//! `tower-resilience`, and the floor, measured in one run on one machine. `just bench` runs it; at the end it
//! prints a table of medians with each peer's ratio to ours.
//!
//! Every breaker gets the same job: open after 5 failures in a row (for
//! `recloser`, a full window of 5 calls that all failed), stay open for an
//! hour (so an OPEN benchmark never reaches its deadline), and read the real
//! monotonic clock. The async rows poll each breaker's future wrapper once
//! with a no-op waker: the task's future is ready at once, so what is
//! measured is the breaker, not an executor. Ours goes through `execute`
//! with a budget of three attempts, a cancellation token and the tokio
//! sleeper, as an application would call it. `tower-resilience` offers its
//! breaker only as a `tower` service, so it is called as one: `poll_ready`,
//! then `call`, around an inner service that answers at once.

use std::cell::RefCell;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::task::{Context, Poll, Waker};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use criterion::{BenchmarkGroup, Criterion, measurement::WallTime};
use failsafe::backoff::{self, Constant};
use failsafe::failure_policy::{ConsecutiveFailures, consecutive_failures};
use failsafe::{Config, StateMachine};
use recloser::{AsyncRecloser, Recloser};
use retry_breaker_bench::{
    Answer, FAILSAFE, Goal, Medians, OURS, RECLOSER, RESILIENCE, Target, criterion_dir, floor,
    group, load_average, paired, ready, summary,
};
use retry_breaker_solution::{
    BreakerLayer, Clock, ExecuteError, Registry, Rejected, RetryBreaker, RetryPolicy, State,
    SystemClock, TokioClock, TokioSleeper, WindowConfig,
};
use tokio_util::sync::CancellationToken;
use tower::{Layer, Service};
use tower_resilience_circuitbreaker::{
    CircuitBreaker as ResilienceService, CircuitBreakerError, CircuitBreakerLayer,
    DefaultClassifier,
};

const THRESHOLD: u32 = 5;
const COOLDOWN: Duration = Duration::from_secs(3600);

/// How the lines that bound a target begin. A floor is work the contract
/// requires (the token check of E2, a refusal's remaining time read on the
/// breaker's injected clock), so its lead over the faster peer is the most
/// that any implementation of the contract could lead by on this machine,
/// whatever its design: a speed-up target above it is out of reach here.
const ALLOWS: &str = "(what the contract allows)";

type Ours = RetryBreaker<TokioClock>;
type Failsafe = StateMachine<ConsecutiveFailures<Constant>, ()>;

fn ours() -> Ours {
    RetryBreaker::new(THRESHOLD, COOLDOWN, TokioClock::new()).expect("a valid threshold")
}

/// An OPEN breaker on the operating system's clock, as the peers read it:
/// on Linux it offers a coarse reading, which a refusal far from its
/// deadline reads instead (`Clock::coarse_now`). `execute` rows keep
/// `TokioClock`, the clock `TokioSleeper` pairs with for free (paired with
/// `SystemClock`, each call first checks that tokio's time is not paused),
/// and `TokioClock` offers no coarse reading: a paused tokio clock does not
/// move with the system's.
fn ours_open_on_the_system_clock() -> RetryBreaker<SystemClock> {
    let breaker =
        RetryBreaker::new(THRESHOLD, COOLDOWN, SystemClock::new()).expect("a valid threshold");
    for _ in 0..THRESHOLD {
        breaker.try_acquire().expect("closed").failure();
    }
    breaker
}

fn ours_open() -> Ours {
    let breaker = ours();
    for _ in 0..THRESHOLD {
        breaker.try_acquire().expect("closed").failure();
    }
    assert!(matches!(breaker.state(), State::Open { .. }));
    breaker
}

/// One call of ours: up to three attempts of a task that is ready at once.
fn ours_execute(breaker: &Ours, cancel: &CancellationToken) -> Result<u64, ExecuteError<()>> {
    ready(|| {
        breaker.execute(
            3,
            || std::future::ready(Ok(black_box(1))),
            |_: &()| true,
            |_| Duration::ZERO,
            cancel,
            &TokioSleeper,
        )
    })
}

fn recloser() -> Recloser {
    Recloser::custom()
        .error_rate(1.0)
        .closed_len(THRESHOLD as usize)
        .half_open_len(1)
        .open_wait(COOLDOWN)
        .build()
}

/// `recloser` judges a full window of calls, so it opens on the failure
/// after the window has filled: one more than the threshold.
fn recloser_open() -> Recloser {
    let breaker = recloser();
    for _ in 0..=THRESHOLD {
        let _ = breaker.call(|| Err::<(), ()>(()));
    }
    assert!(matches!(
        breaker.call(|| Ok::<(), ()>(())),
        Err(recloser::Error::Rejected)
    ));
    breaker
}

fn recloser_execute(breaker: &AsyncRecloser) -> Result<u64, recloser::Error<()>> {
    ready(|| breaker.call(std::future::ready(Ok(black_box(1)))))
}

fn failsafe() -> Failsafe {
    Config::new()
        .failure_policy(consecutive_failures(THRESHOLD, backoff::constant(COOLDOWN)))
        .build()
}

fn failsafe_open() -> Failsafe {
    let breaker = failsafe();
    for _ in 0..THRESHOLD {
        breaker.on_error();
    }
    assert!(!breaker.is_call_permitted());
    breaker
}

fn failsafe_execute(breaker: &Failsafe) -> Result<u64, failsafe::Error<()>> {
    ready(|| failsafe::futures::CircuitBreaker::call(breaker, std::future::ready(Ok(black_box(1)))))
}

/// `tower-resilience`'s breaker around [`Answer`]: 5 failures in a row,
/// open for an hour, one probe. Behind a `RefCell`, since a service is
/// called through `&mut` and the comparisons take shared closures.
type Resilience = RefCell<ResilienceService<Answer, DefaultClassifier>>;

fn resilience() -> Resilience {
    let layer = CircuitBreakerLayer::builder()
        .consecutive_failures(THRESHOLD as usize)
        .wait_duration_in_open(COOLDOWN)
        .permitted_calls_in_half_open(1)
        .build()
        .expect("valid settings");
    RefCell::new(layer.layer(Answer))
}

fn resilience_open() -> Resilience {
    let service = resilience();
    {
        let opened = service.borrow();
        ready(|| opened.force_open());
        assert!(opened.is_open());
    }
    service
}

/// One request as a `tower` caller makes it: `poll_ready`, then `call`.
fn resilience_execute(service: &Resilience) -> Result<u64, CircuitBreakerError<()>> {
    let mut service = service.borrow_mut();
    let mut cx = Context::from_waker(Waker::noop());
    match service.poll_ready(&mut cx) {
        Poll::Ready(Ok(())) => ready(|| service.call(black_box(1))),
        _ => panic!("tower-resilience's breaker was not ready"),
    }
}

fn closed_success_async(group: &mut BenchmarkGroup<'_, WallTime>) {
    let (breaker, cancel) = (ours(), CancellationToken::new());
    assert_eq!(ours_execute(&breaker, &cancel).ok(), Some(1));
    group.bench_function(OURS, |b| b.iter(|| ours_execute(&breaker, &cancel)));

    let breaker = AsyncRecloser::from(recloser());
    assert_eq!(recloser_execute(&breaker).ok(), Some(1));
    group.bench_function(RECLOSER, |b| b.iter(|| recloser_execute(&breaker)));

    let breaker = failsafe();
    assert_eq!(failsafe_execute(&breaker).ok(), Some(1));
    group.bench_function(FAILSAFE, |b| b.iter(|| failsafe_execute(&breaker)));

    let breaker = resilience();
    assert_eq!(resilience_execute(&breaker).ok(), Some(1));
    group.bench_function(RESILIENCE, |b| b.iter(|| resilience_execute(&breaker)));
}

fn open_rejection_async(group: &mut BenchmarkGroup<'_, WallTime>) {
    let (breaker, cancel) = (ours_open(), CancellationToken::new());
    assert!(matches!(
        ours_execute(&breaker, &cancel),
        Err(ExecuteError::Rejected { .. })
    ));
    group.bench_function(OURS, |b| b.iter(|| ours_execute(&breaker, &cancel)));

    let breaker = AsyncRecloser::from(recloser_open());
    assert!(matches!(
        recloser_execute(&breaker),
        Err(recloser::Error::Rejected)
    ));
    group.bench_function(RECLOSER, |b| b.iter(|| recloser_execute(&breaker)));

    let breaker = failsafe_open();
    assert!(matches!(
        failsafe_execute(&breaker),
        Err(failsafe::Error::Rejected)
    ));
    group.bench_function(FAILSAFE, |b| b.iter(|| failsafe_execute(&breaker)));

    let breaker = resilience_open();
    assert!(matches!(
        resilience_execute(&breaker),
        Err(CircuitBreakerError::OpenCircuit)
    ));
    group.bench_function(RESILIENCE, |b| b.iter(|| resilience_execute(&breaker)));
}

fn closed_success_sync(group: &mut BenchmarkGroup<'_, WallTime>) {
    let breaker = ours();
    group.bench_function(OURS, |b| {
        b.iter(|| breaker.try_acquire().map(|permit| permit.success()))
    });

    let breaker = recloser();
    group.bench_function(RECLOSER, |b| {
        b.iter(|| breaker.call(|| Ok::<u64, ()>(black_box(1))))
    });

    let breaker = failsafe();
    group.bench_function(FAILSAFE, |b| {
        b.iter(|| {
            let permitted = breaker.is_call_permitted();
            if permitted {
                breaker.on_success();
            }
            permitted
        })
    });
}

fn open_rejection_sync(group: &mut BenchmarkGroup<'_, WallTime>) {
    let breaker = ours_open_on_the_system_clock();
    group.bench_function(OURS, |b| b.iter(|| breaker.try_acquire().err()));

    let breaker = recloser_open();
    group.bench_function(RECLOSER, |b| {
        b.iter(|| breaker.call(|| Ok::<u64, ()>(black_box(1))))
    });

    let breaker = failsafe_open();
    group.bench_function(FAILSAFE, |b| b.iter(|| breaker.is_call_permitted()));
}

/// Runs `bench` on a breaker whose cooldown is over and whose probe is out,
/// so that every other attempt is refused. The probe reports afterwards.
fn with_probe_out(bench: impl FnOnce(&Ours)) {
    let breaker = RetryBreaker::new(1, Duration::ZERO, TokioClock::new()).expect("valid");
    breaker.try_acquire().expect("closed").failure();
    let probe = breaker.try_acquire().expect("the cooldown is over");
    assert_eq!(breaker.try_acquire().err(), Some(Rejected::ProbeInFlight));
    bench(&breaker);
    probe.success();
}

fn half_open_rejection_async(group: &mut BenchmarkGroup<'_, WallTime>) {
    with_probe_out(|breaker| {
        let cancel = CancellationToken::new();
        group.bench_function(OURS, |b| b.iter(|| ours_execute(breaker, &cancel)));
    });
}

/// A CLOSED breaker in window mode (seed 003's 50% over 20 attempts): a
/// success is not free there, it takes its place in the window.
fn window_closed_success_async(group: &mut BenchmarkGroup<'_, WallTime>) {
    let breaker = RetryBreaker::builder()
        .cooldown(COOLDOWN)
        .window(WindowConfig::new(20, 20, 0.5))
        .build(TokioClock::new())
        .expect("valid settings");
    let cancel = CancellationToken::new();
    group.bench_function(OURS, |b| b.iter(|| ours_execute(&breaker, &cancel)));
}

fn half_open_rejection_sync(group: &mut BenchmarkGroup<'_, WallTime>) {
    with_probe_out(|breaker| {
        group.bench_function(OURS, |b| b.iter(|| breaker.try_acquire().err()));
    });
}

/// Runs `iters` calls split between this thread and one more, both started
/// together, and returns the wall time. Each thread gets its own
/// cancellation token, as each request would.
fn on_two_threads(iters: u64, call: impl Fn(&CancellationToken) + Sync) -> Duration {
    on_two_threads_with(iters, None, call)
}

/// As [`on_two_threads`], but with both threads checking `shared`, one
/// token for the whole application (the usual shutdown token), if given.
fn on_two_threads_with(
    iters: u64,
    shared: Option<&CancellationToken>,
    call: impl Fn(&CancellationToken) + Sync,
) -> Duration {
    let start_line = Barrier::new(2);
    let mine = iters / 2;
    let token = || shared.cloned().unwrap_or_default();
    thread::scope(|scope| {
        let other = scope.spawn(|| {
            let cancel = token();
            start_line.wait();
            for _ in mine..iters {
                call(&cancel);
            }
        });
        let cancel = token();
        start_line.wait();
        let start = Instant::now();
        for _ in 0..mine {
            call(&cancel);
        }
        other.join().expect("the other thread does not panic");
        start.elapsed()
    })
}

fn two_threads(group: &mut BenchmarkGroup<'_, WallTime>) {
    let breaker = ours();
    group.bench_function(OURS, |b| {
        b.iter_custom(|iters| {
            on_two_threads(iters, |cancel| {
                black_box(ours_execute(&breaker, cancel)).expect("closed");
            })
        })
    });

    let breaker = AsyncRecloser::from(recloser());
    group.bench_function(RECLOSER, |b| {
        b.iter_custom(|iters| {
            on_two_threads(iters, |_| {
                black_box(recloser_execute(&breaker)).expect("closed");
            })
        })
    });

    let breaker = failsafe();
    group.bench_function(FAILSAFE, |b| {
        b.iter_custom(|iters| {
            on_two_threads(iters, |_| {
                black_box(failsafe_execute(&breaker)).expect("closed");
            })
        })
    });
}

/// Two threads on one breaker and ONE cancellation token: `is_cancelled`
/// locks the token's mutex, so here both threads fight over its cache line.
/// Only ours: the peers take no token.
fn two_threads_shared_token(group: &mut BenchmarkGroup<'_, WallTime>) {
    let breaker = ours();
    let shutdown = CancellationToken::new();
    group.bench_function(OURS, |b| {
        b.iter_custom(|iters| {
            on_two_threads_with(iters, Some(&shutdown), |cancel| {
                black_box(ours_execute(&breaker, cancel)).expect("closed");
            })
        })
    });
    // The token alone, on the same two threads: the part of the row above
    // that no breaker can avoid while it checks the token (E2).
    group.bench_function(floor::TOKEN, |b| {
        b.iter_custom(|iters| {
            on_two_threads_with(iters, Some(&shutdown), |cancel| {
                black_box(black_box(cancel).is_cancelled());
            })
        })
    });
}

fn floor(group: &mut BenchmarkGroup<'_, WallTime>) {
    let mutex = Mutex::new(0_u64);
    group.bench_function(floor::MUTEX, |b| {
        b.iter(|| *black_box(&mutex).lock().expect("never poisoned"))
    });
    let atomic = AtomicU64::new(1);
    group.bench_function(floor::ATOMIC, |b| {
        b.iter(|| black_box(&atomic).load(Ordering::Acquire))
    });
    group.bench_function(floor::CLOCK, |b| b.iter(Instant::now));
    let cancel = CancellationToken::new();
    group.bench_function(floor::TOKEN, |b| {
        b.iter(|| black_box(&cancel).is_cancelled())
    });
}

/// Whether this run measures the targets: always, unless a filter was given
/// that does not mention them (`just bench open` runs criterion's matching
/// rows only; `just bench targets` runs the targets only).
fn targets_wanted() -> bool {
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with('-'))
        .collect();
    filters.is_empty() || filters.iter().any(|filter| filter.contains("targets"))
}

/// The speed-up of ours over the faster of the two peers: each peer is
/// paired with ours, and the smaller speed-up is the one that counts.
/// How much faster ours is than one peer, measured as a pair.
fn lead<A, B>(ours: impl FnMut() -> A, peer: impl FnMut() -> B) -> paired::Ratio {
    // Measured as ours / the peer, then turned round: a speed-up.
    paired::ratio(ours, peer).inverse()
}

/// The smallest of `leads`: ours against the faster peer, and its name.
fn over_faster_peer<const N: usize>(
    leads: [(paired::Ratio, &'static str); N],
) -> (paired::Ratio, &'static str) {
    leads
        .into_iter()
        .min_by(|(a, _), (b, _)| a.median.total_cmp(&b.median))
        .expect("at least one peer")
}

/// Two threads on one breaker, ours against a peer, in alternating rounds:
/// each round times `calls` calls of each, split over two threads, so that
/// both sides see the same machine from moment to moment (as `paired`
/// does on one thread).
fn lead_on_two_threads(
    ours: impl Fn(&CancellationToken) + Sync,
    peer: impl Fn(&CancellationToken) + Sync,
) -> paired::Ratio {
    // Enough calls that starting the second thread (tens of µs) is lost in
    // the round even for ours, the fastest.
    const ROUNDS: usize = 31;
    const CALLS: u64 = 200_000;
    let per_call = |time: Duration| time.as_secs_f64() * 1e9 / CALLS as f64;
    let rounds: Vec<[f64; 2]> = (0..ROUNDS)
        .map(|_| {
            let mine = per_call(on_two_threads(CALLS, &ours));
            [mine, per_call(on_two_threads(CALLS, &peer))]
        })
        .collect();
    paired::Ratio::of(&rounds).inverse()
}

/// What no `execute` can skip on a CLOSED breaker, as the smallest async
/// function that does it: check the token (E2), load the word to admit,
/// await the task, load the word again to see that the success changes
/// nothing. Driven as `execute` is, so the future's own cost is on both
/// sides.
async fn closed_floor(
    cancel: &CancellationToken,
    word: &AtomicU64,
    task: impl FnOnce() -> std::future::Ready<Result<u64, ()>>,
) -> Result<u64, ()> {
    if cancel.is_cancelled() {
        return Err(());
    }
    let admitted = word.load(Ordering::Acquire);
    let outcome = task().await;
    black_box(word.load(Ordering::Acquire) == admitted);
    outcome
}

/// Attempt 1 of a CLOSED `execute` as a named `Execute` future would run it
/// inline, before any retry machinery: the token check, `try_acquire`, the
/// task, its verdict, written with the breaker's public parts. No time
/// check, no catch of a panic, no retry state: an estimate from below of
/// what that design could reach.
async fn first_attempt_inline(
    breaker: &Ours,
    cancel: &CancellationToken,
    task: impl FnOnce() -> std::future::Ready<Result<u64, ()>>,
) -> Result<u64, ()> {
    if cancel.is_cancelled() {
        return Err(());
    }
    let permit = breaker.try_acquire().map_err(|_| ())?;
    let outcome = task().await;
    black_box(match outcome {
        Ok(_) => permit.success(),
        Err(()) => permit.failure(),
    });
    outcome
}

/// The system clock as a refusal far from its deadline reads it: the
/// coarse reading where it has one, else the exact one.
#[inline]
fn far_reading(clock: &SystemClock) -> Duration {
    clock
        .coarse_now()
        .map_or_else(|| clock.now(), |coarse| coarse.reading)
}

/// What no `execute` can skip on an OPEN breaker: check the token, load the
/// word, read the breaker's clock, in the smallest async function.
async fn open_floor(
    cancel: &CancellationToken,
    word: &AtomicU64,
    clock: &TokioClock,
) -> Result<u64, Duration> {
    if cancel.is_cancelled() {
        return Err(Duration::ZERO);
    }
    Err(Duration::from_nanos(word.load(Ordering::Acquire)).saturating_sub(clock.now()))
}

/// The targets, each measured as a pair (see `paired`): ours against the
/// faster peer, or ours against its floor, the work that no breaker doing
/// the same job can skip, done in one closure with nothing else.
///
/// "The clock" in a floor is the breaker's own clock, read as its refusal
/// reads it: `TokioClock::now` for `execute`, and for `try_acquire`, on the
/// system clock, the coarse reading a refusal far from its deadline takes.
/// The contract injects the clock, and a reading is the time since the
/// clock's origin, so a bare `Instant::now()` floor is printed beside it,
/// for information.
fn measure_targets() -> Vec<Target> {
    let cancel = CancellationToken::new();
    let clock = TokioClock::new();
    // The floor's stand-in for the breaker's word.
    let word = AtomicU64::new(1);
    let load = || black_box(&word).load(Ordering::Acquire);
    let mut targets = Vec::new();
    let mut target = |label: String, goal: Goal, measured: paired::Ratio| {
        targets.push(Target {
            label,
            goal,
            measured,
        });
    };

    // `try_acquire`, OPEN.
    let open = ours_open_on_the_system_clock();
    let mut try_acquire_open = || open.try_acquire().err();
    let (recloser, failsafe) = (recloser_open(), failsafe_open());
    let mut recloser_refuses = || recloser.call(|| Ok::<u64, ()>(black_box(1))).is_err();
    let mut failsafe_refuses = || failsafe.is_call_permitted();
    let (speed_up, peer) = over_faster_peer([
        (lead(&mut try_acquire_open, &mut recloser_refuses), RECLOSER),
        (lead(&mut try_acquire_open, &mut failsafe_refuses), FAILSAFE),
    ]);
    target(
        format!("`try_acquire` OPEN rejection, at least 1.2x faster than the faster peer ({peer})"),
        Goal::AtLeast(1.2),
        speed_up,
    );
    let system = SystemClock::new();
    let try_acquire_open_floor = || (load(), far_reading(black_box(&system)));
    target(
        "`try_acquire` OPEN rejection, within 1.15x of its floor (the breaker's clock read + atomic load)".to_owned(),
        Goal::AtMost(1.15),
        paired::ratio(&mut try_acquire_open, try_acquire_open_floor),
    );
    target(
        "(for information) the same, against a bare `Instant::now()` + atomic load".to_owned(),
        Goal::Shown,
        paired::ratio(&mut try_acquire_open, || (load(), Instant::now())),
    );
    let (allowed, peer) = over_faster_peer([
        (
            lead(try_acquire_open_floor, &mut recloser_refuses),
            RECLOSER,
        ),
        (
            lead(try_acquire_open_floor, &mut failsafe_refuses),
            FAILSAFE,
        ),
    ]);
    target(
        format!(
            "{ALLOWS} `try_acquire` OPEN's floor against the faster peer ({peer}): the most any implementation could lead by"
        ),
        Goal::Shown,
        allowed,
    );

    // `execute`, OPEN, on the clock `TokioSleeper` pairs with for free.
    let open = ours_open();
    let mut execute_open = || ours_execute(&open, &cancel).is_err();
    let execute_open_floor =
        || ready(|| open_floor(black_box(&cancel), black_box(&word), black_box(&clock)));
    let (recloser, failsafe) = (AsyncRecloser::from(recloser_open()), failsafe_open());
    let resilience = resilience_open();
    let mut recloser_refuses = || recloser_execute(&recloser).is_err();
    let mut failsafe_refuses = || failsafe_execute(&failsafe).is_err();
    let mut resilience_refuses = || resilience_execute(&resilience).is_err();
    let (speed_up, peer) = over_faster_peer([
        (lead(&mut execute_open, &mut recloser_refuses), RECLOSER),
        (lead(&mut execute_open, &mut failsafe_refuses), FAILSAFE),
        (lead(&mut execute_open, &mut resilience_refuses), RESILIENCE),
    ]);
    target(
        format!("`execute` OPEN rejection, at least 1.2x faster than the faster peer ({peer})"),
        Goal::AtLeast(1.2),
        speed_up,
    );
    target(
        "(for information) `execute` OPEN rejection against its floor (async: token check + atomic load + the breaker's clock read)".to_owned(),
        Goal::Shown,
        paired::ratio(&mut execute_open, execute_open_floor),
    );
    let (allowed, peer) = over_faster_peer([
        (lead(execute_open_floor, &mut recloser_refuses), RECLOSER),
        (lead(execute_open_floor, &mut failsafe_refuses), FAILSAFE),
        (
            lead(execute_open_floor, &mut resilience_refuses),
            RESILIENCE,
        ),
    ]);
    target(
        format!(
            "{ALLOWS} `execute` OPEN's floor against the faster peer ({peer}): the most any implementation could lead by"
        ),
        Goal::Shown,
        allowed,
    );

    // `execute`, CLOSED.
    let closed = ours();
    let mut execute_closed = || ours_execute(&closed, &cancel).is_ok();
    let execute_closed_floor = || {
        ready(|| {
            closed_floor(black_box(&cancel), black_box(&word), || {
                std::future::ready(Ok(black_box(1)))
            })
        })
    };
    let (recloser, failsafe) = (AsyncRecloser::from(self::recloser()), self::failsafe());
    let resilience = self::resilience();
    let mut recloser_admits = || recloser_execute(&recloser).is_ok();
    let mut failsafe_admits = || failsafe_execute(&failsafe).is_ok();
    let mut resilience_admits = || resilience_execute(&resilience).is_ok();
    let (speed_up, peer) = over_faster_peer([
        (lead(&mut execute_closed, &mut recloser_admits), RECLOSER),
        (lead(&mut execute_closed, &mut failsafe_admits), FAILSAFE),
        (
            lead(&mut execute_closed, &mut resilience_admits),
            RESILIENCE,
        ),
    ]);
    target(
        format!("`execute` CLOSED, at least 1.2x faster than the faster peer ({peer})"),
        Goal::AtLeast(1.2),
        speed_up,
    );
    target(
        "`execute` CLOSED, within 1.6x of its floor (async: token check + two atomic loads around the task)".to_owned(),
        Goal::AtMost(1.6),
        paired::ratio(&mut execute_closed, execute_closed_floor),
    );
    let (allowed, peer) = over_faster_peer([
        (lead(execute_closed_floor, &mut recloser_admits), RECLOSER),
        (lead(execute_closed_floor, &mut failsafe_admits), FAILSAFE),
        (
            lead(execute_closed_floor, &mut resilience_admits),
            RESILIENCE,
        ),
    ]);
    target(
        format!(
            "{ALLOWS} `execute` CLOSED's floor against the faster peer ({peer}): the most any implementation could lead by"
        ),
        Goal::Shown,
        allowed,
    );

    let inline = || {
        ready(|| {
            first_attempt_inline(black_box(&closed), black_box(&cancel), || {
                std::future::ready(Ok(black_box(1)))
            })
        })
        .is_ok()
    };
    let (inline_lead, peer) = over_faster_peer([
        (lead(inline, &mut recloser_admits), RECLOSER),
        (lead(inline, &mut failsafe_admits), FAILSAFE),
        (lead(inline, &mut resilience_admits), RESILIENCE),
    ]);
    target(
        format!(
            "(for information) attempt 1 run inline, as a named `Execute` future would run it (token check, `try_acquire`, the task, its verdict), against the faster peer ({peer})"
        ),
        Goal::Shown,
        inline_lead,
    );

    // `try_acquire` + `success`, CLOSED.
    let mut acquire_success = || closed.try_acquire().map(|permit| permit.success());
    let (recloser, failsafe) = (self::recloser(), self::failsafe());
    let (speed_up, peer) = over_faster_peer([
        (
            lead(&mut acquire_success, || {
                recloser.call(|| Ok::<u64, ()>(black_box(1)))
            }),
            RECLOSER,
        ),
        (
            lead(&mut acquire_success, || {
                let permitted = failsafe.is_call_permitted();
                if permitted {
                    failsafe.on_success();
                }
                permitted
            }),
            FAILSAFE,
        ),
    ]);
    target(
        format!(
            "`try_acquire` + `success` CLOSED, at least 3x faster than the faster peer ({peer})"
        ),
        Goal::AtLeast(3.0),
        speed_up,
    );

    // Two threads, one breaker.
    let ours_call = |cancel: &CancellationToken| {
        black_box(ours_execute(&closed, cancel)).expect("closed");
    };
    let (recloser, failsafe) = (AsyncRecloser::from(self::recloser()), self::failsafe());
    let (speed_up, peer) = over_faster_peer([
        (
            lead_on_two_threads(ours_call, |_| {
                black_box(recloser_execute(&recloser)).expect("closed");
            }),
            RECLOSER,
        ),
        (
            lead_on_two_threads(ours_call, |_| {
                black_box(failsafe_execute(&failsafe)).expect("closed");
            }),
            FAILSAFE,
        ),
    ]);
    target(
        format!(
            "2 threads, one breaker, `execute` CLOSED, at least 3x faster than the faster peer ({peer}; wall ns per call, alternating rounds)"
        ),
        Goal::AtLeast(3.0),
        speed_up,
    );

    // The tower layer, per request, over `execute` with the breaker in hand.
    let registry = Arc::new(
        Registry::new(
            RetryBreaker::builder()
                .threshold(THRESHOLD)
                .cooldown(COOLDOWN),
            TokioClock::new(),
        )
        .expect("valid settings"),
    );
    let policy = RetryPolicy::constant(Duration::ZERO)
        .attempts(3)
        .without_jitter();
    let layer = BreakerLayer::new(Arc::clone(&registry), policy, TokioSleeper, |_: &u64| ());
    let client = RefCell::new(layer.layer(Answer));
    let through_layer = || {
        let mut client = client.borrow_mut();
        let mut cx = Context::from_waker(Waker::noop());
        assert!(client.poll_ready(&mut cx).is_ready());
        ready(|| client.call(black_box(1))).is_ok()
    };
    let breaker = registry.breaker(&());
    let request = || {
        breaker.execute(
            3,
            || Answer.call(black_box(1)),
            |_: &()| true,
            |_| Duration::ZERO,
            &cancel,
            &TokioSleeper,
        )
    };
    let direct = || ready(request).is_ok();
    target(
        "`BreakerLayer`, a request (`poll_ready`, `call`), at most 25 ns over `execute` with the breaker in hand".to_owned(),
        Goal::AtMostNsOver(25.0),
        paired::ratio(through_layer, direct),
    );
    // A `tower::Service` names its future's type, and on stable Rust the
    // only name for a future that sleeps through `Sleeper::sleep` (an
    // `impl Future` in a trait) is a box: what the box alone costs.
    target(
        "(what stable Rust allows) the same `execute`, boxed as a `tower::Service` must return it, against it unboxed: the least a request through any layer costs over it".to_owned(),
        Goal::Shown,
        paired::ratio(|| ready(|| Box::pin(request())).is_ok(), direct),
    );
    // Where the layer's time goes, for information: the policy form of
    // `execute` it runs, and the registry lookup each request makes.
    let policy = RetryPolicy::constant(Duration::ZERO)
        .attempts(3)
        .without_jitter();
    target(
        "(for information) `RetryPolicy::run` against `execute`, both with the breaker in hand"
            .to_owned(),
        Goal::Shown,
        paired::ratio(
            || ready(|| policy.run(&breaker, &TokioSleeper, || Answer.call(black_box(1)))).is_ok(),
            direct,
        ),
    );
    target(
        "(for information) the registry's lookup of the request's breaker (its `Arc` cloned and dropped), against nothing".to_owned(),
        Goal::Shown,
        paired::ratio(|| registry.breaker(black_box(&())), || black_box(())),
    );
    let resilience = self::resilience();
    target(
        format!(
            "(for information) `BreakerLayer`, a request, against {RESILIENCE}'s breaker service, which does not retry"
        ),
        Goal::Shown,
        lead(through_layer, || resilience_execute(&resilience).is_ok()),
    );
    targets
}

fn main() {
    let started = SystemTime::now();
    let load = load_average();
    let mut criterion = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500))
        .sample_size(50)
        .nresamples(20_000)
        .without_plots()
        .configure_from_args();

    let mut run = |name: &str, bench: &dyn Fn(&mut BenchmarkGroup<'_, WallTime>)| {
        let mut group = criterion.benchmark_group(name);
        bench(&mut group);
        group.finish();
    };
    run(group::CLOSED_ASYNC, &closed_success_async);
    run(group::OPEN_ASYNC, &open_rejection_async);
    run(group::CLOSED_SYNC, &closed_success_sync);
    run(group::OPEN_SYNC, &open_rejection_sync);
    run(group::HALF_OPEN_ASYNC, &half_open_rejection_async);
    run(group::HALF_OPEN_SYNC, &half_open_rejection_sync);
    run(group::WINDOW_ASYNC, &window_closed_success_async);
    run(group::CONTENDED, &two_threads);
    run(group::CONTENDED_SHARED_TOKEN, &two_threads_shared_token);
    run(group::FLOOR, &floor);

    criterion.final_summary();
    let targets = if targets_wanted() {
        measure_targets()
    } else {
        Vec::new()
    };
    println!(
        "\n{}",
        summary(&Medians::new(criterion_dir(), started), load, &targets)
    );
}
