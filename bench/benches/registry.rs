//! Steps 14-15: looking up an existing key's breaker in the `Registry`,
//! beside the peer ways of doing the same (a plain `RwLock<HashMap>` and
//! the sharded `dashmap`), on one thread and on two; and what the tower
//! layer adds over calling a service directly.
//!
//! `cargo bench -p retry-breaker-bench --bench registry`. Each lookup finds
//! one of 16 route keys, by `&str`, and clones the breaker's `Arc`, as the
//! layer does for every request.

use std::hint::black_box;
use std::sync::{Arc, Barrier, RwLock};
use std::task::Context;
use std::thread;
use std::time::{Duration, Instant};

use criterion::Criterion;
use dashmap::DashMap;
use retry_breaker_bench::{Answer, ready};
use retry_breaker_solution::{
    BreakerLayer, ManualClock, ManualSleeper, Registry, RetryBreaker, RetryPolicy,
};
use tower::{Layer, Service};

type Breaker = RetryBreaker<ManualClock>;

const KEYS: usize = 16;

fn keys() -> Vec<String> {
    (0..KEYS).map(|k| format!("/route/{k}")).collect()
}

fn fresh(clock: &ManualClock) -> Arc<Breaker> {
    Arc::new(
        RetryBreaker::builder()
            .build(clock.clone())
            .expect("valid settings"),
    )
}

/// The three maps, each holding a breaker for every key.
struct Maps {
    keys: Vec<String>,
    ours: Registry<String, ManualClock>,
    rwlock: RwLock<std::collections::HashMap<String, Arc<Breaker>>>,
    dashmap: DashMap<String, Arc<Breaker>>,
}

fn maps() -> Maps {
    let clock = ManualClock::new();
    let keys = keys();
    let ours = Registry::new(RetryBreaker::builder(), clock.clone()).expect("valid settings");
    let rwlock = RwLock::new(std::collections::HashMap::new());
    let dashmap = DashMap::new();
    for key in &keys {
        ours.breaker(key.as_str());
        rwlock.write().unwrap().insert(key.clone(), fresh(&clock));
        dashmap.insert(key.clone(), fresh(&clock));
    }
    Maps {
        keys,
        ours,
        rwlock,
        dashmap,
    }
}

/// One lookup of key `i` in the map named `which`.
fn lookup(maps: &Maps, which: &str, i: usize) -> Arc<Breaker> {
    let key = maps.keys[i % KEYS].as_str();
    match which {
        "ours" => maps.ours.breaker(key),
        "rwlock-hashmap" => Arc::clone(maps.rwlock.read().unwrap().get(key).expect("present")),
        _ => Arc::clone(&maps.dashmap.get(key).expect("present")),
    }
}

const WHICH: [&str; 3] = ["ours", "rwlock-hashmap", "dashmap"];

fn single_thread(c: &mut Criterion, maps: &Maps) {
    let mut group = c.benchmark_group("registry-lookup-1-thread");
    for which in WHICH {
        group.bench_function(which, |b| {
            let mut i = 0;
            b.iter(|| {
                i += 1;
                black_box(lookup(maps, which, i))
            });
        });
    }
    group.finish();
}

/// Both threads look up keys at once; the time is per lookup on one thread.
fn two_threads(c: &mut Criterion, maps: &Arc<Maps>) {
    let mut group = c.benchmark_group("registry-lookup-2-threads");
    for which in WHICH {
        group.bench_function(which, |b| {
            b.iter_custom(|iterations| {
                let start = Arc::new(Barrier::new(2));
                let workers: Vec<_> = (0..2)
                    .map(|t| {
                        let maps = Arc::clone(maps);
                        let start = Arc::clone(&start);
                        thread::spawn(move || {
                            start.wait();
                            let began = Instant::now();
                            for i in 0..iterations {
                                black_box(lookup(&maps, which, t + i as usize));
                            }
                            began.elapsed()
                        })
                    })
                    .collect();
                let times: Vec<Duration> = workers
                    .into_iter()
                    .map(|worker| worker.join().expect("a worker"))
                    .collect();
                times.into_iter().max().unwrap_or_default()
            });
        });
    }
    group.finish();
}

fn layer_overhead(c: &mut Criterion) {
    let clock = ManualClock::new();
    let registry = Arc::new(Registry::new(RetryBreaker::builder(), clock.clone()).unwrap());
    let layer = BreakerLayer::new(
        registry,
        RetryPolicy::constant(Duration::ZERO).attempts(3),
        ManualSleeper::new(clock),
        |request: &u64| request % 4,
    );
    let mut wrapped = layer.layer(Answer);
    let mut direct = Answer;
    let mut group = c.benchmark_group("tower-layer");
    // Each request as a `tower` caller makes it: `poll_ready`, then `call`.
    let mut cx = Context::from_waker(std::task::Waker::noop());
    group.bench_function("direct", |b| {
        b.iter(|| {
            assert!(direct.poll_ready(&mut cx).is_ready());
            ready(|| direct.call(black_box(7)))
        });
    });
    group.bench_function("through-breaker-layer", |b| {
        b.iter(|| {
            assert!(wrapped.poll_ready(&mut cx).is_ready());
            ready(|| wrapped.call(black_box(7)))
        });
    });
    group.finish();
}

fn main() {
    let mut criterion = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(1000))
        .sample_size(30)
        .without_plots()
        .configure_from_args();
    let maps = Arc::new(maps());
    single_thread(&mut criterion, &maps);
    two_threads(&mut criterion, &maps);
    layer_overhead(&mut criterion);
    criterion.final_summary();
}
