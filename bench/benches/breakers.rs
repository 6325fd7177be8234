//! Our breaker, the peer crates `recloser` and `failsafe`, and the floor,
//! measured in one run on one machine. `just bench` runs it; at the end it
//! prints a table of medians with each peer's ratio to ours.
//!
//! Every breaker gets the same job: open after 5 failures in a row (for
//! `recloser`, a full window of 5 calls that all failed), stay open for an
//! hour (so an OPEN benchmark never reaches its deadline), and read the real
//! monotonic clock. The async rows poll each breaker's future wrapper once
//! with a no-op waker: the task's future is ready at once, so what is
//! measured is the breaker, not an executor. Ours goes through `execute`
//! with a budget of three attempts, a cancellation token and the tokio
//! sleeper, as an application would call it.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use criterion::{BenchmarkGroup, Criterion, measurement::WallTime};
use failsafe::backoff::{self, Constant};
use failsafe::failure_policy::{ConsecutiveFailures, consecutive_failures};
use failsafe::{Config, StateMachine};
use recloser::{AsyncRecloser, Recloser};
use retry_breaker_bench::{
    FAILSAFE, Goal, Medians, OURS, RECLOSER, Target, criterion_dir, floor, group, load_average,
    paired, ready, summary,
};
use retry_breaker_solution::{
    Clock, ExecuteError, Rejected, RetryBreaker, State, TokioClock, TokioSleeper, WindowConfig,
};
use tokio_util::sync::CancellationToken;

const THRESHOLD: u32 = 5;
const COOLDOWN: Duration = Duration::from_secs(3600);

type Ours = RetryBreaker<TokioClock>;
type Failsafe = StateMachine<ConsecutiveFailures<Constant>, ()>;

fn ours() -> Ours {
    RetryBreaker::new(THRESHOLD, COOLDOWN, TokioClock::new()).expect("a valid threshold")
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
    let breaker = ours_open();
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
fn over_faster_peer<T, R, F>(
    ours: impl Fn() -> T,
    recloser: impl Fn() -> R,
    failsafe: impl Fn() -> F,
) -> (paired::Ratio, &'static str) {
    // Measured as ours / the peer, then turned round: a speed-up.
    let against_recloser = paired::ratio(&ours, &recloser).inverse();
    let against_failsafe = paired::ratio(&ours, &failsafe).inverse();
    if against_recloser.median <= against_failsafe.median {
        (against_recloser, RECLOSER)
    } else {
        (against_failsafe, FAILSAFE)
    }
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
/// "The clock" in a floor is the breaker's own clock, `TokioClock::now`:
/// the contract injects the clock, and a reading is the time since the
/// clock's origin. That subtraction alone costs about 15% over a bare
/// `Instant::now()` here, so the bare floor is printed beside it, for
/// information.
fn measure_targets() -> Vec<Target> {
    let cancel = CancellationToken::new();
    let clock = TokioClock::new();
    // The floor's stand-in for the breaker's word.
    let word = AtomicU64::new(1);
    let load = || black_box(&word).load(Ordering::Acquire);
    let mut targets = Vec::new();

    let open = ours_open();
    let try_acquire_open = || open.try_acquire().err();
    let (recloser, failsafe) = (recloser_open(), failsafe_open());
    let (speed_up, peer) = over_faster_peer(
        try_acquire_open,
        || recloser.call(|| Ok::<u64, ()>(black_box(1))).is_err(),
        || failsafe.is_call_permitted(),
    );
    targets.push(Target {
        label: format!(
            "`try_acquire` OPEN rejection, at least 1.2x faster than the faster peer ({peer})"
        ),
        goal: Goal::AtLeast(1.2),
        measured: speed_up,
    });
    targets.push(Target {
        label: "`try_acquire` OPEN rejection, within 1.15x of its floor (the breaker's clock read + atomic load)".to_owned(),
        goal: Goal::AtMost(1.15),
        measured: paired::ratio(try_acquire_open, || (load(), black_box(&clock).now())),
    });
    targets.push(Target {
        label: "(for information) the same, against a bare `Instant::now()` + atomic load"
            .to_owned(),
        goal: Goal::Shown,
        measured: paired::ratio(try_acquire_open, || (load(), Instant::now())),
    });
    targets.push(Target {
        label: "`execute` OPEN rejection, within 1.15x of its floor (async: token check + atomic load + the breaker's clock read)".to_owned(),
        goal: Goal::AtMost(1.15),
        measured: paired::ratio(
            || ours_execute(&open, &cancel).is_err(),
            || ready(|| open_floor(black_box(&cancel), black_box(&word), black_box(&clock))),
        ),
    });
    let (recloser, failsafe) = (AsyncRecloser::from(recloser_open()), failsafe_open());
    let (speed_up, peer) = over_faster_peer(
        || ours_execute(&open, &cancel).is_err(),
        || recloser_execute(&recloser).is_err(),
        || failsafe_execute(&failsafe).is_err(),
    );
    targets.push(Target {
        label: format!("(for information) `execute` OPEN rejection against the faster peer ({peer}), which checks no token"),
        goal: Goal::Shown,
        measured: speed_up,
    });

    let closed = ours();
    let execute_closed = || ours_execute(&closed, &cancel).is_ok();
    targets.push(Target {
        label: "`execute` CLOSED, within 1.15x of its floor (async: token check + two atomic loads around the task)".to_owned(),
        goal: Goal::AtMost(1.15),
        measured: paired::ratio(execute_closed, || {
            ready(|| {
                closed_floor(black_box(&cancel), black_box(&word), || {
                    std::future::ready(Ok(black_box(1)))
                })
            })
        }),
    });
    let (recloser, failsafe) = (AsyncRecloser::from(self::recloser()), self::failsafe());
    let (speed_up, peer) = over_faster_peer(
        execute_closed,
        || recloser_execute(&recloser).is_ok(),
        || failsafe_execute(&failsafe).is_ok(),
    );
    targets.push(Target {
        label: format!("`execute` CLOSED, ahead of both peers (the faster: {peer})"),
        goal: Goal::AtLeast(1.0),
        measured: speed_up,
    });
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
