//! One hot path of ours, run a given number of times, for an instruction
//! count under `valgrind --tool=callgrind` (`just bench-instructions`).
//!
//! Wall-clock medians on a shared virtual machine move by tens of percent
//! from run to run; an instruction count does not move at all, whatever
//! else the machine is doing. It is the instrument for "no slower than
//! before": the recipe runs each path twice, with few and with many calls,
//! and the difference divided by the extra calls is the cost of one call
//! with the set-up taken out. The same file builds against an older tree
//! (it uses only what the kit has had since the tower layer, step 15, and
//! its sink lines are replaced where there was no sink yet), so a path can
//! be compared across commits.
//!
//! `instructions PATH CALLS [--sink]`: PATH is one of `closed-try`
//! (`try_acquire` + `success` on a CLOSED breaker), `open-try` (a refused
//! `try_acquire`), `closed-execute` (`execute` of a task that is ready at
//! once), `open-execute` (`execute` refused), `closed-policy`
//! (`RetryPolicy::run` of the same task) and `closed-layer` (a request
//! through `BreakerLayer`, `poll_ready` then `call`, to a service that
//! answers at once); `--sink` gives the breaker (or the layer's registry)
//! an event sink that does nothing, to show what telling costs.

use std::hint::black_box;
use std::process::ExitCode;
use std::sync::Arc;
use std::task::{Context, Waker};
use std::time::Duration;

use retry_breaker_bench::{Answer, ready};
use retry_breaker_solution::{
    BreakerLayer, Registry, RetryBreaker, RetryPolicy, TokioClock, TokioSleeper,
};
use tokio_util::sync::CancellationToken;
use tower::{Layer, Service};

const THRESHOLD: u32 = 5;
const COOLDOWN: Duration = Duration::from_secs(3600);

const USAGE: &str = "usage: instructions closed-try|open-try|closed-execute|open-execute|closed-policy|closed-layer CALLS [--sink]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (path, calls, sink) = match args.as_slice() {
        [path, calls] => (path.as_str(), calls, false),
        [path, calls, flag] if flag == "--sink" => (path.as_str(), calls, true),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let Ok(calls) = calls.parse::<u64>() else {
        eprintln!("CALLS must be a whole number, got {calls:?}\n{USAGE}");
        return ExitCode::from(2);
    };
    let open = path.starts_with("open");
    let breaker = breaker(open, sink);
    let cancel = CancellationToken::new();
    match path {
        "closed-try" | "open-try" => {
            for _ in 0..calls {
                if let Ok(permit) = black_box(&breaker).try_acquire() {
                    permit.success();
                }
            }
        }
        "closed-execute" | "open-execute" => {
            for _ in 0..calls {
                let result = ready(|| {
                    black_box(&breaker).execute(
                        3,
                        || std::future::ready(Ok::<u64, ()>(black_box(1))),
                        |_: &()| true,
                        |_| Duration::ZERO,
                        &cancel,
                        &TokioSleeper,
                    )
                });
                black_box(result.is_ok());
            }
        }
        "closed-policy" => {
            let policy = policy();
            for _ in 0..calls {
                let result = ready(|| {
                    policy.run(black_box(&breaker), &TokioSleeper, || {
                        Answer.call(black_box(1))
                    })
                });
                black_box(result.is_ok());
            }
        }
        "closed-layer" => {
            let policy = policy();
            let layer =
                BreakerLayer::new(Arc::new(registry(sink)), policy, TokioSleeper, |_: &u64| ());
            let mut client = layer.layer(Answer);
            let mut cx = Context::from_waker(Waker::noop());
            for _ in 0..calls {
                assert!(client.poll_ready(&mut cx).is_ready());
                black_box(ready(|| client.call(black_box(1))).is_ok());
            }
        }
        _ => {
            eprintln!("no path {path:?}\n{USAGE}");
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}

/// The policy the benchmarks give the policy form and the layer: three
/// attempts, no pause, no jitter.
fn policy() -> RetryPolicy<()> {
    RetryPolicy::constant(Duration::ZERO)
        .attempts(3)
        .without_jitter()
}

/// The layer's registry as the benchmarks build it: breakers by route (one
/// route here).
fn registry(sink: bool) -> Registry<(), TokioClock> {
    let registry = Registry::new(
        RetryBreaker::builder()
            .threshold(THRESHOLD)
            .cooldown(COOLDOWN),
        TokioClock::new(),
    )
    .expect("valid settings");
    // BEGIN SINK
    let registry = if sink {
        registry.with_event_sink(|_: &(), event| {
            black_box(event);
        })
    } else {
        registry
    };
    // END SINK
    registry
}

/// Ours, as the benchmarks build it, opened by `THRESHOLD` failures when
/// `open`.
fn breaker(open: bool, sink: bool) -> RetryBreaker<TokioClock> {
    let breaker = RetryBreaker::new(THRESHOLD, COOLDOWN, TokioClock::new()).expect("valid");
    // `just bench-instructions BASE` puts `let _ = sink;` in place of the
    // lines between these markers on a tree from before the event stream.
    // BEGIN SINK
    let breaker = if sink {
        breaker.with_event_sink(|event| {
            black_box(event);
        })
    } else {
        breaker
    };
    // END SINK
    if open {
        for _ in 0..THRESHOLD {
            breaker.try_acquire().expect("closed").failure();
        }
        assert!(breaker.try_acquire().is_err(), "the breaker is open");
    }
    breaker
}
