//! Model checks of the breaker's lock-free paths with loom.
//!
//! The breaker keeps one atomic word beside its mutex-protected circuit and
//! answers CLOSED admissions, clean CLOSED successes and OPEN refusals from
//! that word alone (see `src/breaker/shortcut.rs` for the argument). Built with
//! `--cfg loom`, its mutex and atomic are loom's (`src/breaker/sync.rs`), and loom
//! runs every interleaving of the threads below, up to the preemption bound
//! (`LOOM_MAX_PREEMPTIONS`, 2 in CI).
//!
//! Every scenario starts at a transition point (about to open, about to
//! reach the deadline, a probe about to report) and has two or three threads
//! admit, report a success or a failure, drop their permit unreported, or
//! move the clock. After each execution the test checks that it was
//! linearizable: that some sequential order of the same operations, keeping
//! each thread's own order, gives every operation the very result it got,
//! when replayed from one thread on a fresh breaker with a manual clock.
//! (loom has no real time, so "keeping each thread's own order" is all the
//! real-time order it can offer; the replay is one thread, where the suite
//! has already checked the breaker against the contract.)
//!
//! Run: `just loom` (or `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2
//! cargo test -p retry-breaker-solution --release --test loom`).

#![cfg(loom)]

use std::cell::Cell;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use loom::sync::atomic::{AtomicU64, Ordering};
use retry_breaker_solution::{
    Clock, Generation, ManualClock, OwnedPermit, Recorded, Rejected, RetryBreaker,
};

/// A clock that loom can interleave: nanoseconds in a loom atomic. It only
/// moves forward, as `Clock` requires.
///
/// `early` breaks the contract's second promise on purpose: a reading is
/// taken when an operation starts, before the breaker loads its state, and
/// with no ordering of its own, so loom may give it any time the memory
/// model allows there, one older than the state loaded after it included:
/// what a bare `rdtsc` that the processor ran ahead of the load would read.
#[derive(Clone)]
struct LoomClock {
    time: Arc<AtomicU64>,
    early: bool,
}

loom::thread_local! {
    /// The reading an `early` clock took when this thread's operation
    /// started, for the operation's first `now`.
    static EARLY: Cell<Option<u64>> = Cell::new(None);
}

impl LoomClock {
    /// Before an operation: an `early` clock reads the time now, unordered.
    fn operation_starts(&self) {
        if self.early {
            let reading = self.time.load(Ordering::Relaxed);
            EARLY.with(|early| early.set(Some(reading)));
        }
    }

    /// After it: an early reading that no `now` took is dropped.
    fn operation_ends(&self) {
        EARLY.with(|early| early.set(None));
    }
}

impl Clock for LoomClock {
    fn now(&self) -> Duration {
        let early = EARLY.with(Cell::take);
        Duration::from_nanos(early.unwrap_or_else(|| self.time.load(Ordering::SeqCst)))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    /// Ask for a permit, keeping it if admitted.
    Admit,
    /// Report a success on the permit held, if any.
    Success,
    /// Report a failure on the permit held, if any.
    Failure,
    /// Drop the permit held, if any, without an outcome.
    Drop,
    /// Move the clock forward by this many nanoseconds.
    Advance(u64),
}

/// What one operation returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Admitted(Generation),
    Refused(Rejected),
    Reported(Option<Recorded>),
    Done,
}

/// The breaker's settings and where a scenario starts.
#[derive(Debug, Clone, Copy)]
struct Setup {
    threshold: u32,
    cooldown: u64,
    /// Failures reported before the threads start (at time 0).
    failures: u32,
    /// Where the clock stands when the threads start.
    start: u64,
}

/// One thread's side: its permit, if it holds one.
struct Actor<C: Clock> {
    permit: Option<OwnedPermit<C>>,
}

impl<C: Clock> Actor<C> {
    fn run(&mut self, breaker: &Arc<RetryBreaker<C>>, op: Op, advance: impl Fn(u64)) -> Outcome {
        match op {
            Op::Admit => match breaker.try_acquire_owned() {
                Ok(permit) => {
                    let generation = permit.generation();
                    self.permit = Some(permit);
                    Outcome::Admitted(generation)
                }
                Err(rejected) => Outcome::Refused(rejected),
            },
            Op::Success => Outcome::Reported(self.permit.take().map(OwnedPermit::success)),
            Op::Failure => Outcome::Reported(self.permit.take().map(OwnedPermit::failure)),
            Op::Drop => {
                self.permit = None;
                Outcome::Done
            }
            Op::Advance(by) => {
                advance(by);
                Outcome::Done
            }
        }
    }
}

fn prepare<C: Clock>(setup: Setup, clock: C) -> Arc<RetryBreaker<C>> {
    let breaker = RetryBreaker::new(setup.threshold, Duration::from_nanos(setup.cooldown), clock)
        .expect("a valid threshold");
    for _ in 0..setup.failures {
        breaker.try_acquire().expect("closed").failure();
    }
    Arc::new(breaker)
}

/// Replays `order` (thread indexes) from one thread on a fresh breaker and
/// returns what each thread's operations got.
fn replay(setup: Setup, threads: &[Vec<Op>], order: &[usize]) -> Vec<Vec<Outcome>> {
    let clock = ManualClock::new();
    let breaker = prepare(setup, clock.clone());
    clock.advance(Duration::from_nanos(setup.start));
    let mut actors: Vec<Actor<ManualClock>> =
        threads.iter().map(|_| Actor { permit: None }).collect();
    let mut results = vec![Vec::new(); threads.len()];
    for &thread in order {
        let op = threads[thread][results[thread].len()];
        let outcome = actors[thread].run(&breaker, op, |by| {
            clock.advance(Duration::from_nanos(by));
        });
        results[thread].push(outcome);
    }
    results
}

/// Every interleaving of the threads' programs, each in its own order.
fn interleavings(threads: &[Vec<Op>]) -> Vec<Vec<usize>> {
    fn extend(left: &mut [usize], order: &mut Vec<usize>, all: &mut Vec<Vec<usize>>) {
        if left.iter().all(|&n| n == 0) {
            all.push(order.clone());
            return;
        }
        for thread in 0..left.len() {
            if left[thread] > 0 {
                left[thread] -= 1;
                order.push(thread);
                extend(left, order, all);
                order.pop();
                left[thread] += 1;
            }
        }
    }
    let mut left: Vec<usize> = threads.iter().map(|ops| ops.len()).collect();
    let mut all = Vec::new();
    extend(&mut left, &mut Vec::new(), &mut all);
    all
}

/// The results of every sequential order: what a linearizable execution
/// may return. The breaker is built with loom's primitives, which work only
/// inside a model, so the replays run in a model of one thread.
fn sequential_results(setup: Setup, threads: &Arc<Vec<Vec<Op>>>) -> Vec<Vec<Vec<Outcome>>> {
    let all = Arc::new(Mutex::new(Vec::new()));
    let out = Arc::clone(&all);
    let threads = Arc::clone(threads);
    let mut builder = loom::model::Builder::new();
    builder.max_branches = 1_000_000;
    builder.check(move || {
        let mut results = Vec::new();
        for order in interleavings(&threads) {
            let result = replay(setup, &threads, &order);
            if !results.contains(&result) {
                results.push(result);
            }
        }
        *out.lock().unwrap() = results;
    });
    std::mem::take(&mut *all.lock().unwrap())
}

/// Runs `threads` concurrently under loom from `setup`, checks that every
/// execution is linearizable, and returns how many executions loom explored.
///
/// Each thread ends by dropping the permit it still holds, if any: that too
/// is an operation (a probe hands its slot back), so it is one in the check.
fn check(setup: Setup, threads: &[&[Op]]) -> usize {
    explore(setup, threads, false)
}

/// [`check`], with the clock [`LoomClock`] says `early` is.
fn explore(setup: Setup, threads: &[&[Op]], early: bool) -> usize {
    let threads: Arc<Vec<Vec<Op>>> = Arc::new(
        threads
            .iter()
            .map(|ops| ops.iter().copied().chain([Drop]).collect())
            .collect(),
    );
    let sequential = Arc::new(sequential_results(setup, &threads));
    let executions = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&executions);
    loom::model(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let time = Arc::new(AtomicU64::new(0));
        let clock = LoomClock {
            time: Arc::clone(&time),
            early,
        };
        let breaker = prepare(setup, clock.clone());
        time.store(setup.start, Ordering::SeqCst);
        let handles: Vec<_> = (0..threads.len())
            .map(|thread| {
                let threads = Arc::clone(&threads);
                let breaker = Arc::clone(&breaker);
                let time = Arc::clone(&time);
                let clock = clock.clone();
                loom::thread::spawn(move || {
                    let mut actor = Actor { permit: None };
                    let outcomes: Vec<Outcome> = threads[thread]
                        .iter()
                        .map(|&op| {
                            clock.operation_starts();
                            let outcome = actor.run(&breaker, op, |by| {
                                time.fetch_add(by, Ordering::SeqCst);
                            });
                            clock.operation_ends();
                            outcome
                        })
                        .collect();
                    outcomes
                })
            })
            .collect();
        let results: Vec<Vec<Outcome>> = handles
            .into_iter()
            .map(|handle| handle.join().expect("no thread panics"))
            .collect();
        assert!(
            sequential.contains(&results),
            "not linearizable: no sequential order of {threads:?} gives {results:?}"
        );
    });
    let executions = executions.load(std::sync::atomic::Ordering::Relaxed);
    println!("{executions} executions explored");
    executions
}

use Op::{Admit, Advance, Drop, Failure, Success};

const CLOSED: Setup = Setup {
    threshold: 1,
    cooldown: 10,
    failures: 0,
    start: 0,
};

const ONE_FAILURE_TO_GO: Setup = Setup {
    threshold: 2,
    cooldown: 10,
    failures: 1,
    start: 0,
};

/// OPEN at time 0 until 10, the clock at 5.
const OPEN: Setup = Setup {
    threshold: 1,
    cooldown: 10,
    failures: 1,
    start: 5,
};

/// OPEN until 10, the clock at the deadline: the next admission probes.
const AT_DEADLINE: Setup = Setup {
    threshold: 1,
    cooldown: 10,
    failures: 1,
    start: 10,
};

/// OPEN for good: a cooldown too long for the clock.
const FOREVER: Setup = Setup {
    threshold: 1,
    cooldown: u64::MAX,
    failures: 1,
    start: 0,
};

#[test]
fn closed_a_failure_opens_while_another_attempt_is_admitted_and_succeeds() {
    assert!(check(CLOSED, &[&[Admit, Failure], &[Admit, Success]]) > 1);
}

#[test]
fn closed_a_clean_success_races_the_failure_that_opens() {
    assert!(
        check(
            ONE_FAILURE_TO_GO,
            &[&[Admit, Success], &[Admit, Failure], &[Admit, Failure]]
        ) > 1
    );
}

#[test]
fn open_refusals_race_the_clock_reaching_the_deadline() {
    assert!(check(OPEN, &[&[Advance(5)], &[Admit, Failure], &[Admit, Success]]) > 1);
}

#[test]
fn open_a_probe_that_fails_reopens_while_others_are_refused() {
    assert!(
        check(
            AT_DEADLINE,
            &[&[Admit, Failure], &[Admit, Drop], &[Advance(10), Admit]]
        ) > 1
    );
}

#[test]
fn half_open_a_dropped_probe_hands_its_slot_to_a_waiting_admission() {
    assert!(check(AT_DEADLINE, &[&[Admit, Drop, Admit], &[Admit, Success]]) > 1);
}

#[test]
fn half_open_a_good_probe_closes_while_a_stale_failure_and_an_admission_race() {
    assert!(
        check(
            AT_DEADLINE,
            &[&[Admit, Success], &[Admit, Failure], &[Admit, Admit]]
        ) > 1
    );
}

#[test]
fn a_cooldown_that_never_ends_refuses_everyone() {
    assert!(check(FOREVER, &[&[Admit, Success], &[Advance(1), Admit]]) >= 1);
}

#[test]
fn open_a_refusal_reads_the_clock_after_the_state_it_refuses_from() {
    assert!(check(OPEN, &[&[Advance(5), Admit, Failure], &[Admit]]) > 1);
}

/// The contract's second promise is what the lock-free refusal rests on: a
/// clock whose reading may be taken ahead of the breaker's load of its
/// state (`early`) lets a refusal read the OPEN that a failed probe began
/// at 10, until 20, with a time from before 10, and state 15 left: no
/// order of the operations gives that, and loom finds it.
#[test]
#[should_panic(expected = "not linearizable")]
fn a_clock_read_ahead_of_the_state_load_breaks_the_open_refusal() {
    explore(OPEN, &[&[Advance(5), Admit, Failure], &[Admit]], true);
}
