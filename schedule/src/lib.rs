//! A deterministic scheduler for the lab's suite: a few threads that share
//! an atomic counter, run one at a time and switched only where one of them
//! touches it, in every order those switches allow.
//!
//! Real threads racing on a wrong answer pass or fail as the operating
//! system schedules them, so a grade could not count such a test. Here the
//! interleaving is the test's choice: [`explore`] runs the same threads
//! once per schedule, each schedule a different sequence of switches at
//! the operations of [`AtomicU32`], until it has tried them all. A
//! check-then-act (`if load() < limit { fetch_add(1) }`) is caught on the
//! schedule that switches between its two steps, on every run.
//!
//! Outside [`explore`]'s threads an [`AtomicU32`] is the standard one with
//! one thread-local read added, so the crate under test can use it
//! everywhere.
//!
//! ```
//! use std::sync::atomic::Ordering;
//! use lab_schedule::{AtomicU32, explore};
//!
//! // Two threads add one each, with a load and a store: a lost update.
//! let lost = std::sync::atomic::AtomicBool::new(false);
//! let schedules = explore(
//!     2,
//!     || AtomicU32::new(0),
//!     |count, _thread| {
//!         let seen = count.load(Ordering::Relaxed);
//!         count.store(seen + 1, Ordering::Relaxed);
//!     },
//!     |count| {
//!         if count.load(Ordering::Relaxed) != 2 {
//!             lost.store(true, Ordering::Relaxed);
//!         }
//!     },
//! );
//! assert!(lost.into_inner(), "some schedule loses an update");
//! assert!(schedules > 1);
//! ```

use std::cell::Cell;
use std::fmt;
use std::sync::atomic::{self, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// More schedules than any test of the lab needs: a bound on a run that
/// would otherwise explore for ever (a thread that loops on the counter).
const MOST_SCHEDULES: usize = 100_000;

/// Switches one schedule may make before it is cut short (a busy loop).
const MOST_SWITCHES: usize = 10_000;

thread_local! {
    /// Which of the scheduled threads this is, if it is one.
    static ME: Cell<Option<usize>> = const { Cell::new(None) };
}

/// The schedule in progress: who runs, and the choices made so far.
struct Run {
    /// The thread allowed to run now.
    turn: usize,
    /// Which threads have not ended yet.
    live: Vec<bool>,
    /// Each choice made so far: who ran next, and who could have.
    choices: Vec<(usize, Vec<usize>)>,
    /// The choices to replay before choosing freely (the first live thread).
    replay: Vec<usize>,
    /// Set when the schedule made more than [`MOST_SWITCHES`] choices.
    overrun: bool,
}

impl Run {
    /// Chooses who runs next among the live threads, `current` first when
    /// it is still live, so a free choice runs a thread on until it ends.
    fn choose(&mut self, current: usize) {
        let mut options: Vec<usize> = (0..self.live.len()).filter(|&t| self.live[t]).collect();
        if let Some(at) = options.iter().position(|&t| t == current) {
            options.remove(at);
            options.insert(0, current);
        }
        let Some(&first) = options.first() else {
            return;
        };
        let step = self.choices.len();
        if step >= MOST_SWITCHES {
            self.overrun = true;
            // Let everything run freely: the schedule is reported as cut.
            self.turn = usize::MAX;
            return;
        }
        let chosen = self.replay.get(step).copied().unwrap_or(first);
        self.choices.push((chosen, options));
        self.turn = chosen;
    }
}

/// The scheduler, shared by every thread of one [`explore`].
struct Scheduler {
    run: Mutex<Run>,
    changed: Condvar,
}

impl Scheduler {
    fn lock(&self) -> MutexGuard<'_, Run> {
        self.run.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits until it is `me`'s turn (or the schedule was cut short).
    fn wait_turn<'a>(&'a self, mut run: MutexGuard<'a, Run>, me: usize) -> MutexGuard<'a, Run> {
        while run.turn != me && run.turn != usize::MAX {
            run = self
                .changed
                .wait(run)
                .unwrap_or_else(PoisonError::into_inner);
        }
        run
    }

    /// A point where `me` may be switched out.
    ///
    /// # Panics
    ///
    /// Once the schedule has made too many switches: the thread is looping
    /// on the counter, waiting for a change only another thread can make,
    /// and would spin for ever. The panic ends it with the reason.
    fn point(&self, me: usize) {
        let mut run = self.lock();
        run.choose(me);
        self.changed.notify_all();
        let run = self.wait_turn(run, me);
        let overrun = run.overrun;
        drop(run);
        assert!(
            !overrun,
            "a schedule made more than {MOST_SWITCHES} switches: a thread loops on the counter, \
             waiting for a change only another thread can make (a busy wait?)"
        );
    }

    /// `me` has ended: the next live thread runs.
    fn end(&self, me: usize) {
        let mut run = self.lock();
        run.live[me] = false;
        run.choose(me);
        self.changed.notify_all();
    }
}

/// The scheduler of the threads [`explore`] runs, reachable from
/// [`AtomicU32`]'s operations.
static CURRENT: Mutex<Option<&'static Scheduler>> = Mutex::new(None);

/// A switch point, if this thread is one of [`explore`]'s.
fn point() {
    if let Some(me) = ME.with(Cell::get) {
        let scheduler = CURRENT
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .expect("a scheduled thread runs inside explore");
        scheduler.point(me);
    }
}

/// Runs `threads` threads on a value `setup` makes, once per schedule, and
/// calls `check` on the value after each; returns how many schedules ran.
///
/// A schedule is an order of turns: each thread runs alone until it
/// touches an [`AtomicU32`], where any live thread may take the next turn.
/// The schedules are explored depth first, every one of them, so a
/// verdict never depends on how the operating system runs threads. A
/// panic in a thread or in `check` ends the exploration with it; a thread
/// that goes on past 10,000 switches (a busy loop on the counter) panics.
///
/// # Panics
///
/// If more than 100,000 schedules would be needed, if a schedule runs too
/// long, or if a thread or `check` panics (with its message).
pub fn explore<T: Sync>(
    threads: usize,
    setup: impl Fn() -> T,
    body: impl Fn(&T, usize) + Sync,
    check: impl Fn(&T),
) -> usize {
    // One exploration at a time in a process: the scheduler is global so
    // that the counter's operations can find it.
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let scheduler: &'static Scheduler = Box::leak(Box::new(Scheduler {
        run: Mutex::new(Run {
            turn: 0,
            live: Vec::new(),
            choices: Vec::new(),
            replay: Vec::new(),
            overrun: false,
        }),
        changed: Condvar::new(),
    }));
    *CURRENT.lock().unwrap_or_else(PoisonError::into_inner) = Some(scheduler);
    let mut replay = Vec::new();
    let mut schedules = 0;
    loop {
        schedules += 1;
        assert!(
            schedules <= MOST_SCHEDULES,
            "more than {MOST_SCHEDULES} schedules: too many threads or operations to explore"
        );
        {
            let mut run = scheduler.lock();
            run.turn = replay.first().copied().unwrap_or(0);
            run.live = vec![true; threads];
            run.choices.clear();
            run.replay = replay.clone();
            run.overrun = false;
            // The first turn is a choice too, among the threads in order:
            // the options of a choice never depend on what was chosen.
            let first = run.turn;
            run.choices.push((first, (0..threads).collect()));
        }
        let value = setup();
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|me| {
                    let (body, value) = (&body, &value);
                    scope.spawn(move || {
                        ME.with(|cell| cell.set(Some(me)));
                        drop(scheduler.wait_turn(scheduler.lock(), me));
                        // Ends the thread's turn even if the body panics.
                        struct Ended(&'static Scheduler, usize);
                        impl Drop for Ended {
                            fn drop(&mut self) {
                                ME.with(|cell| cell.set(None));
                                self.0.end(self.1);
                            }
                        }
                        let _ended = Ended(scheduler, me);
                        body(value, me);
                    })
                })
                .collect();
            for handle in handles {
                if let Err(panic) = handle.join() {
                    std::panic::resume_unwind(panic);
                }
            }
        });
        let choices = scheduler.lock().choices.clone();
        check(&value);
        // The next schedule: the last choice with an option left, moved on.
        match next(&choices) {
            Some(next) => replay = next,
            None => return schedules,
        }
    }
}

/// The choices of the schedule after the one that made `choices`, depth
/// first, or `None` after the last.
fn next(choices: &[(usize, Vec<usize>)]) -> Option<Vec<usize>> {
    for at in (0..choices.len()).rev() {
        let (chosen, options) = &choices[at];
        let index = options.iter().position(|t| t == chosen)?;
        if let Some(&other) = options.get(index + 1) {
            let mut next: Vec<usize> = choices[..at].iter().map(|(t, _)| *t).collect();
            next.push(other);
            return Some(next);
        }
    }
    None
}

/// `std::sync::atomic::AtomicU32`, with a switch point before each
/// operation when [`explore`] runs the thread.
#[derive(Default)]
pub struct AtomicU32(atomic::AtomicU32);

impl AtomicU32 {
    /// A new atomic integer.
    #[must_use]
    pub const fn new(value: u32) -> Self {
        AtomicU32(atomic::AtomicU32::new(value))
    }

    /// As [`std::sync::atomic::AtomicU32::load`].
    pub fn load(&self, order: Ordering) -> u32 {
        point();
        self.0.load(order)
    }

    /// As [`std::sync::atomic::AtomicU32::store`].
    pub fn store(&self, value: u32, order: Ordering) {
        point();
        self.0.store(value, order);
    }

    /// As [`std::sync::atomic::AtomicU32::swap`].
    pub fn swap(&self, value: u32, order: Ordering) -> u32 {
        point();
        self.0.swap(value, order)
    }

    /// As [`std::sync::atomic::AtomicU32::fetch_add`].
    pub fn fetch_add(&self, value: u32, order: Ordering) -> u32 {
        point();
        self.0.fetch_add(value, order)
    }

    /// As [`std::sync::atomic::AtomicU32::fetch_sub`].
    pub fn fetch_sub(&self, value: u32, order: Ordering) -> u32 {
        point();
        self.0.fetch_sub(value, order)
    }

    /// As [`std::sync::atomic::AtomicU32::fetch_max`].
    pub fn fetch_max(&self, value: u32, order: Ordering) -> u32 {
        point();
        self.0.fetch_max(value, order)
    }

    /// As [`std::sync::atomic::AtomicU32::fetch_min`].
    pub fn fetch_min(&self, value: u32, order: Ordering) -> u32 {
        point();
        self.0.fetch_min(value, order)
    }

    /// As [`std::sync::atomic::AtomicU32::compare_exchange`].
    ///
    /// # Errors
    ///
    /// The value found, when it was not `current`.
    pub fn compare_exchange(
        &self,
        current: u32,
        new: u32,
        success: Ordering,
        failure: Ordering,
    ) -> Result<u32, u32> {
        point();
        self.0.compare_exchange(current, new, success, failure)
    }

    /// As [`std::sync::atomic::AtomicU32::compare_exchange_weak`] (it never
    /// fails spuriously here).
    ///
    /// # Errors
    ///
    /// The value found, when it was not `current`.
    pub fn compare_exchange_weak(
        &self,
        current: u32,
        new: u32,
        success: Ordering,
        failure: Ordering,
    ) -> Result<u32, u32> {
        self.compare_exchange(current, new, success, failure)
    }

    /// As [`std::sync::atomic::AtomicU32::fetch_update`]: one switch point,
    /// since the update is one atomic step.
    ///
    /// # Errors
    ///
    /// The value found, when `update` returned `None`.
    pub fn fetch_update(
        &self,
        set: Ordering,
        fetch: Ordering,
        update: impl FnMut(u32) -> Option<u32>,
    ) -> Result<u32, u32> {
        point();
        self.0.fetch_update(set, fetch, update)
    }

    /// As [`std::sync::atomic::AtomicU32::get_mut`].
    pub fn get_mut(&mut self) -> &mut u32 {
        self.0.get_mut()
    }

    /// As [`std::sync::atomic::AtomicU32::into_inner`].
    #[must_use]
    pub fn into_inner(self) -> u32 {
        self.0.into_inner()
    }
}

impl fmt::Debug for AtomicU32 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl From<u32> for AtomicU32 {
    fn from(value: u32) -> Self {
        AtomicU32::new(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_threads_of_two_operations_run_in_every_order_of_their_switches() {
        let orders = Mutex::new(std::collections::BTreeSet::new());
        let schedules = explore(
            2,
            || (AtomicU32::new(0), Mutex::new(Vec::new())),
            |(count, log), me| {
                for _ in 0..2 {
                    count.fetch_add(1, Ordering::Relaxed);
                    log.lock().unwrap().push(me);
                }
            },
            |(count, log)| {
                assert_eq!(count.load(Ordering::Relaxed), 4);
                orders.lock().unwrap().insert(log.lock().unwrap().clone());
            },
        );
        let orders = orders.into_inner().unwrap();
        // Every interleaving of two threads' two steps: 4 choose 2.
        assert_eq!(orders.len(), 6, "{orders:?}");
        assert!(schedules >= 6);
    }

    #[test]
    fn a_check_then_act_is_caught_and_one_atomic_step_is_not() {
        let over = |atomic_step: bool| {
            let over = atomic::AtomicBool::new(false);
            explore(
                2,
                || AtomicU32::new(0),
                |held, _| {
                    if atomic_step {
                        let _ = held.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                            (n < 1).then_some(n + 1)
                        });
                    } else if held.load(Ordering::Relaxed) < 1 {
                        held.fetch_add(1, Ordering::Relaxed);
                    }
                },
                |held| {
                    if held.load(Ordering::Relaxed) > 1 {
                        over.store(true, Ordering::Relaxed);
                    }
                },
            );
            over.into_inner()
        };
        assert!(
            over(false),
            "check-then-act lets both through on some schedule"
        );
        assert!(!over(true), "one atomic step never does");
    }

    #[test]
    fn outside_explore_the_counter_is_a_plain_atomic() {
        let count = AtomicU32::new(1);
        assert_eq!(count.fetch_add(2, Ordering::Relaxed), 1);
        assert_eq!(count.load(Ordering::Relaxed), 3);
        assert_eq!(format!("{count:?}"), "3");
    }

    #[test]
    fn a_thread_that_waits_for_the_other_in_a_busy_loop_is_stopped_with_the_reason() {
        let caught = std::panic::catch_unwind(|| {
            explore(
                2,
                || AtomicU32::new(0),
                |flag, me| {
                    if me == 0 {
                        while flag.load(Ordering::Relaxed) == 0 {}
                    } else {
                        flag.store(1, Ordering::Relaxed);
                    }
                },
                |_| {},
            )
        });
        let payload = caught.expect_err("the busy loop is stopped");
        let message = payload
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default();
        assert!(message.contains("busy wait"), "{message}");
    }

    #[test]
    fn a_panicking_thread_ends_the_exploration_with_its_message() {
        let caught = std::panic::catch_unwind(|| {
            explore(
                2,
                || AtomicU32::new(0),
                |count, me| {
                    count.load(Ordering::Relaxed);
                    assert!(me == 0, "thread {me} broke");
                },
                |_| {},
            )
        });
        let payload = caught.expect_err("the panic reaches explore's caller");
        let message = payload
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default();
        assert_eq!(message, "thread 1 broke");
    }
}
