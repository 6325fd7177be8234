//! The breaker itself: a [`Circuit`] behind a mutex, a clock, and an optional
//! hook that hears about every transition.
// BEGIN SOLUTION ONLY: the fast path
//!
//! Next to the circuit sits a lock-free shortcut for the hot cases: a CLOSED
//! circuit, and an OPEN one before its deadline (see [`ClosedShortcut`]).
// END SOLUTION ONLY

// The breaker's parts, one concept a module: the state machine and what
// reads and reports it.
pub(crate) mod builder;
pub(crate) mod bulkhead;
pub(crate) mod circuit;
// BEGIN SOLUTION ONLY: a growing cooldown needs the solution's circuit
pub(crate) mod cooldown;
// END SOLUTION ONLY
mod describe;
pub(crate) mod event;
pub(crate) mod permit;
// BEGIN SOLUTION ONLY: the lock-free fast path answers without the student's Circuit
pub(crate) mod shortcut;
// END SOLUTION ONLY
pub(crate) mod slots;
pub(crate) mod state;
pub(crate) mod sync;
pub(crate) mod transition;
pub(crate) mod verdict;
pub(crate) mod window;

use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
// BEGIN SOLUTION ONLY: loom model-checks the fast path, so its lock comes from crate::breaker::sync
use std::sync::{Arc, PoisonError};
// STARTER: use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
// END SOLUTION ONLY
use std::thread;
use std::time::Duration;

use crate::breaker::bulkhead::Bulkhead;
use crate::breaker::circuit::{Circuit, Recorded};
use crate::breaker::event::{Event, EventSink};
use crate::breaker::permit::{OwnedPermit, Permit};
use crate::error::{ConfigError, Rejected};
use crate::time::clock::Clock;
// BEGIN SOLUTION ONLY: the fast path
use crate::breaker::shortcut::ClosedShortcut;
// END SOLUTION ONLY
use crate::breaker::state::State;
// BEGIN SOLUTION ONLY: loom model-checks the fast path, so its lock comes from crate::breaker::sync
use crate::breaker::sync::{Mutex, MutexGuard};
// END SOLUTION ONLY
use crate::breaker::transition::{Generation, Transition};
use crate::breaker::verdict::Verdict;
use crate::breaker::window::WindowConfig;

type TransitionHook = Box<dyn Fn(&Transition) + Send + Sync>;

/// A consecutive-failure circuit breaker with a retry loop,
/// [`execute`](RetryBreaker::execute).
///
/// Share one breaker per dependency (behind an `Arc`, or by reference): all
/// methods take `&self` and are safe to call from many tasks and threads.
///
/// ```
/// use std::time::Duration;
/// use retry_breaker_solution::{ManualClock, Rejected, RetryBreaker, State};
///
/// let clock = ManualClock::new();
/// let breaker = RetryBreaker::new(2, Duration::from_millis(10), clock.clone())?;
///
/// breaker.try_acquire()?.failure();
/// breaker.try_acquire()?.failure();
/// assert_eq!(breaker.state(), State::Open { remaining: Duration::from_millis(10) });
///
/// clock.advance(Duration::from_millis(5));
/// assert_eq!(
///     breaker.try_acquire().unwrap_err(),
///     Rejected::Open { remaining: Duration::from_millis(5) },
/// );
///
/// clock.advance(Duration::from_millis(5));
/// let probe = breaker.try_acquire()?;
/// assert_eq!(breaker.state(), State::HalfOpen { probe_in_flight: true });
/// probe.success();
/// assert_eq!(breaker.state(), State::Closed { failures: 0 });
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RetryBreaker<C> {
    circuit: Mutex<Circuit>,
    // BEGIN SOLUTION ONLY: the fast path
    /// Whether the circuit is CLOSED, or OPEN until when, readable without
    /// the lock; written only under it.
    shortcut: ClosedShortcut,
    // END SOLUTION ONLY
    clock: C,
    hook: Option<TransitionHook>,
    /// Where every decision is told, if anywhere (O1).
    events: Option<EventSink>,
    /// Neither a sink nor a bulkhead: an admission is the circuit's answer
    /// alone, and its permit reports in line (O5).
    plain: bool,
    /// The limit on attempts in flight, if the breaker has one (H1).
    bulkhead: Option<Bulkhead>,
    /// When a registry last handed the breaker out, on the registry's own
    /// count of new keys and sweeps: what tells an idle key
    /// ([`Registry::forget_idle`](crate::Registry::forget_idle)) and the
    /// least recently used one from the others.
    last_use: AtomicU64,
}

impl<C: Clock> RetryBreaker<C> {
    /// A closed breaker that opens after `threshold` consecutive failures and
    /// stays open for `cooldown`.
    ///
    /// A zero cooldown is allowed: the next attempt after opening is the
    /// probe. A cooldown too long for the clock keeps the circuit open for
    /// good instead of overflowing.
    ///
    /// # Errors
    ///
    /// [`ConfigError::ZeroThreshold`] if `threshold` is 0.
    // Contract: B1.
    pub fn new(threshold: u32, cooldown: Duration, clock: C) -> Result<Self, ConfigError> {
        // BEGIN TODO(1): refuse a threshold of 0 (B1)
        if threshold == 0 {
            return Err(ConfigError::ZeroThreshold);
        }
        // STARTER:
        // END TODO
        Ok(RetryBreaker {
            circuit: Mutex::new(Circuit::new(threshold, cooldown)),
            // BEGIN SOLUTION ONLY: the fast path
            shortcut: ClosedShortcut::new(),
            // END SOLUTION ONLY
            clock,
            hook: None,
            events: None,
            plain: true,
            bulkhead: None,
            last_use: AtomicU64::new(0),
        })
    }

    /// A breaker around an already configured circuit (see
    /// [`builder`](RetryBreaker::builder)).
    pub(crate) fn from_circuit(circuit: Circuit, clock: C, bulkhead: Option<Bulkhead>) -> Self {
        // BEGIN SOLUTION ONLY: the fast path
        let shortcut = ClosedShortcut::new();
        shortcut.refresh(&circuit);
        // END SOLUTION ONLY
        RetryBreaker {
            circuit: Mutex::new(circuit),
            // BEGIN SOLUTION ONLY: the fast path
            shortcut,
            // END SOLUTION ONLY
            clock,
            hook: None,
            events: None,
            plain: bulkhead.is_none(),
            bulkhead,
            last_use: AtomicU64::new(0),
        }
    }

    /// Calls `hook` after every transition, in the order of their
    /// generations when the breaker is used from one thread.
    ///
    /// The hook runs after the transition is complete and the breaker's lock
    /// is released, so it may read the breaker; it should be quick, because
    /// it runs on the caller's path. A panic in the hook reaches the caller
    /// whose operation made the transition, with the breaker left sound:
    /// an outcome stays counted, and a probe whose admission made the
    /// hook panic hands its slot back, since the dependency was never
    /// called. While another panic is already unwinding, the hook's panic is
    /// dropped, so that the first one reaches its caller unchanged.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use std::time::Duration;
    /// use retry_breaker_solution::{ManualClock, Phase, RetryBreaker};
    ///
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let log = Arc::clone(&seen);
    /// let breaker = RetryBreaker::new(1, Duration::ZERO, ManualClock::new())?
    ///     .with_transition_hook(move |t| log.lock().unwrap().push((t.from, t.to)));
    ///
    /// breaker.try_acquire()?.failure();
    /// assert_eq!(*seen.lock().unwrap(), [(Phase::Closed, Phase::Open)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    // Contract: B11.
    #[must_use]
    pub fn with_transition_hook(
        mut self,
        hook: impl Fn(&Transition) + Send + Sync + 'static,
    ) -> Self {
        self.hook = Some(Box::new(hook));
        self
    }

    /// Tells `sink` every decision the breaker and its retry loop make, as
    /// an [`Event`]: admissions and refusals, outcomes (counted or stale),
    /// attempts given back, transitions, and each call's attempts, backoffs
    /// and end (O1-O6; `telemetry` has adapters for `tracing` and
    /// `metrics`).
    ///
    /// The sink is called as the transition hook is (B8, B11): with the
    /// breaker's lock released, on the caller's path, and a panic in it
    /// reaches the caller with the breaker left sound (O4). Without a sink
    /// nothing is built or told (O5).
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use std::time::Duration;
    /// use retry_breaker_solution::{Event, ManualClock, Rejected, RetryBreaker};
    ///
    /// let refusals = Arc::new(Mutex::new(0));
    /// let count = Arc::clone(&refusals);
    /// let breaker = RetryBreaker::new(1, Duration::from_secs(5), ManualClock::new())?
    ///     .with_event_sink(move |event| {
    ///         if let Event::Rejected(Rejected::Open { .. }) = event {
    ///             *count.lock().unwrap() += 1;
    ///         }
    ///     });
    ///
    /// breaker.try_acquire()?.failure();
    /// assert!(breaker.try_acquire().is_err());
    /// assert_eq!(*refusals.lock().unwrap(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    // Contract: O1-O6.
    #[must_use]
    pub fn with_event_sink(mut self, sink: impl Fn(&Event) + Send + Sync + 'static) -> Self {
        self.events = Some(Box::new(sink));
        self.plain = false;
        self
    }

    /// The current state. Cheap, and never changes anything: see
    /// [`State::Open`] for what a read after the deadline shows.
    // Contract: B10.
    pub fn state(&self) -> State {
        // BEGIN ANCHOR(state-read)
        self.circuit().state(&self.clock)
        // END ANCHOR
    }

    /// The current generation, advanced by every transition.
    pub fn generation(&self) -> Generation {
        self.circuit().generation()
    }

    // BEGIN SOLUTION ONLY: manual control, for operators (C1-C3)
    /// Opens the circuit until [`close`](Self::close), for an operator who
    /// knows the dependency is down or wants it left alone (C1).
    ///
    /// Every attempt is then refused as by an open circuit whose cooldown
    /// never ends ([`Rejected::Open`] with [`Duration::MAX`] left), and no
    /// probe is admitted however long it lasts. It is a transition in a new
    /// generation even from OPEN, so an outcome admitted before is stale
    /// and cannot close the circuit (C3); the hook and the event sink hear
    /// it as any other, once the lock is released.
    ///
    /// ```
    /// use std::time::Duration;
    /// use retry_breaker_solution::{ManualClock, Recorded, Rejected, RetryBreaker, State};
    ///
    /// let clock = ManualClock::new();
    /// let breaker = RetryBreaker::new(3, Duration::from_secs(30), clock.clone())?;
    /// let before = breaker.try_acquire()?;
    ///
    /// breaker.isolate();
    /// clock.advance(Duration::from_secs(3600));
    /// assert_eq!(breaker.state(), State::Open { remaining: Duration::MAX });
    /// assert_eq!(breaker.try_acquire().unwrap_err(), Rejected::Open { remaining: Duration::MAX });
    ///
    /// assert_eq!(before.success(), Recorded::Stale); // the circuit stays isolated
    /// breaker.close();
    /// assert_eq!(breaker.state(), State::Closed { failures: 0 });
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    // Contract: C1, C3.
    pub fn isolate(&self) {
        self.update(|circuit, clock| circuit.isolate(clock.now()));
    }

    /// Closes the circuit whatever its state, as if it were new: no failure
    /// counted, an empty window, no good probe yet (C2). This is also how
    /// an isolation ends, and how an operator resets a breaker.
    ///
    /// It is a transition in a new generation even from CLOSED, so a
    /// failure admitted before the reset cannot count towards the next
    /// trip (C3).
    ///
    /// ```
    /// use std::time::Duration;
    /// use retry_breaker_solution::{ManualClock, Recorded, RetryBreaker, State};
    ///
    /// let breaker = RetryBreaker::new(2, Duration::from_secs(30), ManualClock::new())?;
    /// breaker.try_acquire()?.failure();
    /// let before = breaker.try_acquire()?;
    ///
    /// breaker.close();
    /// assert_eq!(before.failure(), Recorded::Stale);
    /// assert_eq!(breaker.state(), State::Closed { failures: 0 });
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    // Contract: C2, C3.
    pub fn close(&self) {
        self.update(|circuit, clock| circuit.close(clock.now()));
    }
    // END SOLUTION ONLY

    /// Consecutive failures that open the circuit.
    pub fn threshold(&self) -> u32 {
        self.circuit().threshold()
    }

    /// How long the circuit stays open before a probe.
    pub fn cooldown(&self) -> Duration {
        self.circuit().cooldown()
    }

    /// Good probes in a row that close a half-open circuit (S1; 1 unless
    /// set with [`Builder::success_threshold`](crate::Builder::success_threshold)).
    pub fn success_threshold(&self) -> u32 {
        self.circuit().success_threshold()
    }

    /// The failure-rate window, in window mode (W1).
    pub fn window(&self) -> Option<WindowConfig> {
        self.circuit().window_config()
    }

    /// The most attempts that may be in flight at once, if the breaker has
    /// a bulkhead ([`Builder::max_in_flight`](crate::Builder::max_in_flight)).
    #[must_use]
    pub fn max_in_flight(&self) -> Option<u32> {
        self.bulkhead.as_ref().map(Bulkhead::limit)
    }

    /// How many permits hold a slot of the bulkhead now: admitted attempts
    /// not yet reported or dropped (0 without a bulkhead).
    #[must_use]
    pub fn in_flight(&self) -> u32 {
        self.bulkhead.as_ref().map_or(0, Bulkhead::in_flight)
    }

    /// The breaker's clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// Asks to admit one attempt. This is the synchronous seam under
    /// [`execute`](RetryBreaker::execute): call the dependency only with a
    /// permit in hand, then report on it.
    ///
    /// # Errors
    ///
    /// [`Rejected`] while the circuit is open or a half-open probe is in
    /// flight, or, with a bulkhead, while it is full (H1). Nothing is
    /// counted for a rejection.
    #[inline]
    pub fn try_acquire(&self) -> Result<Permit<'_, C>, Rejected> {
        if self.plain {
            return self.admit();
        }
        self.admit_with_extras()
    }

    /// [`try_acquire`](RetryBreaker::try_acquire) with a bulkhead, a sink or
    /// both: out of line, so that a breaker with neither pays a single
    /// branch for them (O5).
    #[inline(never)]
    fn admit_with_extras(&self) -> Result<Permit<'_, C>, Rejected> {
        let answer = match &self.bulkhead {
            // The circuit answers first, so that an open circuit says so
            // even when the bulkhead is full too (H4).
            Some(bulkhead) => self.admit().and_then(|permit| permit.into_slot(bulkhead)),
            None => self.admit().map(Permit::out_of_line),
        };
        if self.events.is_none() {
            return answer;
        }
        match &answer {
            Ok(permit) => {
                let generation = permit.generation();
                let probe = self.is_probe(generation);
                let told = panic::catch_unwind(AssertUnwindSafe(|| {
                    self.tell(|| Event::Admitted { generation, probe });
                }));
                if let Err(payload) = told {
                    // The dependency was never called: the attempt goes back
                    // with no verdict, and untold, since the sink just
                    // panicked (O4).
                    if let Ok(permit) = answer {
                        permit.withdraw();
                    }
                    panic::resume_unwind(payload);
                }
            }
            Err(rejection) => self.tell(|| Event::Rejected(*rejection)),
        }
        answer
    }

    /// Whether an attempt just admitted in `generation`, not yet reported,
    /// is the probe. Only CLOSED and HALF-OPEN admit, neither reads the
    /// time to say which it is, and a HALF-OPEN circuit stays in its
    /// generation until its probe reports: so the attempt is the probe
    /// exactly when the circuit is HALF-OPEN in that generation now.
    fn is_probe(&self, generation: Generation) -> bool {
        let circuit = self.circuit();
        circuit.generation() == generation
            && matches!(
                circuit.state(&Fixed(Duration::ZERO)),
                State::HalfOpen { .. }
            )
    }

    /// The circuit's answer to an attempt, before any bulkhead.
    // BEGIN SOLUTION ONLY: the fast path is inlined into its callers
    // Always: left to itself the compiler keeps this out of line, and an
    // OPEN refusal or a CLOSED admission then pays a call and its register
    // saves (`just bench-instructions` counts both; docs/FIGURES.md).
    #[inline(always)]
    // STARTER: #[inline]
    // END SOLUTION ONLY
    fn admit(&self) -> Result<Permit<'_, C>, Rejected> {
        // BEGIN SOLUTION ONLY: the fast path
        // A CLOSED circuit admits every attempt, and an OPEN one refuses
        // every attempt before its deadline: neither changes anything.
        if let Some(answer) = self.shortcut.admit(&self.clock) {
            return answer.map(|generation| Permit::new(self, generation));
        }
        self.admit_locked()
    }

    /// The rest of [`admit`](RetryBreaker::admit), under the
    /// lock: in a function of its own, so that the fast path above stays
    /// small enough to be inlined into the caller (an OPEN refusal is
    /// little more than a clock read, and a call with its register saves
    /// would show beside it).
    #[inline(never)]
    fn admit_locked(&self) -> Result<Permit<'_, C>, Rejected> {
        // END SOLUTION ONLY
        let (admitted, transition) = self.locked(Circuit::admit);
        // BEGIN SOLUTION ONLY: a refusal may make a transition too: an overdue probe reopens the circuit (P1)
        let generation = match admitted {
            Ok(generation) => generation,
            Err(rejection) => {
                if let Some(transition) = transition {
                    self.notify(&transition);
                }
                return Err(rejection);
            }
        };
        let permit = Permit::new(self, generation);
        // STARTER: let permit = Permit::new(self, admitted?);
        // END SOLUTION ONLY
        if let Some(transition) = transition {
            // BEGIN TODO(4): a hook that panics here must not keep the probe slot (B11)
            // This admission made the attempt the probe. If the hook panics,
            // the dependency is never called: the slot goes back with no
            // verdict, and the panic goes on to the caller (B11).
            if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| self.notify(&transition)))
            {
                permit.abandon();
                panic::resume_unwind(payload);
            }
            // STARTER: self.notify(&transition);
            // END TODO
        }
        Ok(permit)
    }

    /// [`try_acquire`](RetryBreaker::try_acquire) for a breaker behind an
    /// `Arc`: the permit holds its own reference to the breaker, so it can
    /// move into a spawned task, as `tokio::sync::Semaphore::acquire_owned`
    /// does for semaphores. Reporting and dropping work as for [`Permit`].
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use retry_breaker_solution::{ManualClock, RetryBreaker, State};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let breaker = Arc::new(RetryBreaker::new(1, Duration::from_secs(5), ManualClock::new())?);
    /// let permit = breaker.try_acquire_owned()?;
    /// tokio::spawn(async move {
    ///     // ... call the dependency ...
    ///     permit.failure();
    /// })
    /// .await?;
    /// assert_eq!(breaker.state(), State::Open { remaining: Duration::from_secs(5) });
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// As for [`try_acquire`](RetryBreaker::try_acquire).
    pub fn try_acquire_owned(self: &Arc<Self>) -> Result<OwnedPermit<C>, Rejected> {
        let parts = self.try_acquire()?.into_parts();
        Ok(OwnedPermit::new(Arc::clone(self), parts))
    }

    /// Records a success, untold: for a permit that reports in line, whose
    /// breaker has no sink (O5).
    #[inline]
    pub(crate) fn record_success(&self, generation: Generation) -> Recorded {
        self.count_success(generation)
    }

    pub(crate) fn record_failure(&self, generation: Generation) -> Recorded {
        if self.events.is_some() {
            return self.record_telling(generation, Verdict::Failure);
        }
        self.count_failure(generation)
    }

    /// Records a success or a failure (nothing else comes here) and tells
    /// the sink, if there is one, how it was taken (O1).
    pub(crate) fn record_telling(&self, generation: Generation, verdict: Verdict) -> Recorded {
        let recorded = match verdict {
            Verdict::Success => self.count_success(generation),
            _ => self.count_failure(generation),
        };
        self.tell(|| Event::Recorded {
            generation,
            verdict,
            recorded,
        });
        recorded
    }

    #[inline]
    fn count_success(&self, generation: Generation) -> Recorded {
        // BEGIN SOLUTION ONLY: the fast path
        // With no failures counted there is nothing for a success to reset.
        if self.shortcut.success_changes_nothing(generation) {
            return Recorded::Counted;
        }
        // END SOLUTION ONLY
        self.record(generation, |circuit, clock| {
            circuit.on_success(generation, clock)
        })
    }

    fn count_failure(&self, generation: Generation) -> Recorded {
        self.record(generation, |circuit, clock| {
            circuit.on_failure(generation, clock)
        })
    }

    /// Records the outcome of an attempt admitted in `generation`, then
    /// tells the hook about any transition it made.
    ///
    /// The clock is the user's code too (B12). If it panics while the
    /// outcome is recorded (a trip or a probe's verdict reads it), the
    /// circuit has changed nothing, since it checks everything before it
    /// changes anything: the attempt is then given back with no verdict, as
    /// a permit dropped unreported is, so an interrupted probe hands its
    /// slot back instead of holding HALF-OPEN forever. The clock's panic
    /// goes on to the reporter, unless a panic is already unwinding (a
    /// permit dropped by a panic): then it is dropped, as a hook's would be
    /// (B11), so the first panic reaches its caller unchanged and the
    /// process never aborts. Nothing was counted, so the answer is then
    /// [`Recorded::Stale`].
    fn record(
        &self,
        generation: Generation,
        operation: impl FnOnce(&mut Circuit, &C) -> Recorded,
    ) -> Recorded {
        // BEGIN TODO(4): a clock that panics while an outcome is recorded gives the attempt back with no verdict; its panic reaches the reporter, unless one already unwinds (B12)
        let (recorded, transition) = self.locked(|circuit, clock| {
            let recorded = panic::catch_unwind(AssertUnwindSafe(|| operation(circuit, clock)));
            if recorded.is_err() {
                circuit.interrupted(generation);
            }
            recorded
        });
        if let Some(transition) = transition {
            self.notify(&transition);
        }
        match recorded {
            Ok(recorded) => recorded,
            Err(_) if thread::panicking() => Recorded::Stale,
            Err(payload) => panic::resume_unwind(payload),
        }
        // STARTER: let _ = generation;
        // STARTER: self.update(operation)
        // END TODO
    }

    /// The bulkhead whose slots the permits hold, if there is one.
    pub(crate) fn bulkhead(&self) -> Option<&Bulkhead> {
        self.bulkhead.as_ref()
    }

    /// Gives an attempt back with no verdict (B7), and tells the sink.
    pub(crate) fn abandon(&self, generation: Generation) {
        self.withdraw(generation);
        self.tell(|| Event::Released { generation });
    }

    /// Gives an attempt back with no verdict, untold: for an admission
    /// that never reached its caller.
    pub(crate) fn withdraw(&self, generation: Generation) {
        self.update(|circuit, _| circuit.abandon(generation));
    }

    /// Marks the breaker as handed out by its registry at `tick` of the
    /// registry's count. Reads first, so that lookups of a busy key share
    /// the stamp's cache line rather than write it each time (R3); a
    /// lookup that raced a later one never moves the stamp back.
    pub(crate) fn look_up(&self, tick: u64) {
        if self.last_use.load(Ordering::Relaxed) < tick {
            self.last_use.store(tick, Ordering::Relaxed);
        }
    }

    /// The tick of the registry's count when it last handed the breaker out.
    pub(crate) fn last_use(&self) -> u64 {
        self.last_use.load(Ordering::Relaxed)
    }

    /// Tells the sink, if there is one, about the event `event` makes: the
    /// event is not even built without one (O5).
    #[inline]
    pub(crate) fn tell(&self, event: impl FnOnce() -> Event) {
        if let Some(sink) = &self.events {
            deliver(sink, &event());
        }
    }

    /// Whether the breaker has a sink, for callers that would build
    /// something to tell it.
    pub(crate) fn has_sink(&self) -> bool {
        self.events.is_some()
    }

    /// Runs one short critical section, then tells the hook about any
    /// transition it made.
    fn update<R>(&self, operation: impl FnOnce(&mut Circuit, &C) -> R) -> R {
        let (result, transition) = self.locked(operation);
        if let Some(transition) = transition {
            self.notify(&transition);
        }
        result
    }

    /// Runs one short critical section and returns the transition it made,
    /// if any, for the caller to hand to the hook once the lock is released.
    fn locked<R>(&self, operation: impl FnOnce(&mut Circuit, &C) -> R) -> (R, Option<Transition>) {
        // BEGIN SOLUTION ONLY: the fast path sees every change, under the same lock
        let operation = |circuit: &mut Circuit, clock: &C| {
            let result = operation(circuit, clock);
            self.shortcut.refresh(circuit);
            result
        };
        // END SOLUTION ONLY
        // BEGIN TODO(1): run the operation on the circuit under its lock, and take the transition it made: the hook sees it only once the lock is released (B8, B11)
        let mut circuit = self.circuit();
        let result = operation(&mut circuit, &self.clock);
        (result, circuit.take_transition())
        // END TODO
    }

    /// Calls the hook, outside the lock so that it can never deadlock by
    /// reading the breaker (B8).
    fn notify(&self, transition: &Transition) {
        self.tell(|| Event::Transition(*transition));
        let Some(hook) = &self.hook else { return };
        // BEGIN TODO(4): call the hook; while a panic already unwinds, catch and drop the hook's own (B11)
        if thread::panicking() {
            // A permit dropped by a panic is reporting its failure. A second
            // panic here would abort the process, and the panic under way is
            // the one its caller must see (B11).
            let _ = panic::catch_unwind(AssertUnwindSafe(|| hook(transition)));
        } else {
            hook(transition);
        }
        // STARTER: hook(transition);
        // END TODO
    }

    // BEGIN ANCHOR(circuit-lock)
    fn circuit(&self) -> MutexGuard<'_, Circuit> {
        // The user's task never runs under this lock, and the circuit checks
        // everything before it changes anything, so a panic elsewhere (say,
        // in a custom clock) cannot leave it half-updated: carrying on with
        // the data is sound.
        self.circuit.lock().unwrap_or_else(PoisonError::into_inner)
    }
    // END ANCHOR
}

impl<C: Clock> fmt::Debug for RetryBreaker<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The clock is the user's code: read it before taking the lock, so a
        // slow or panicking clock never runs inside the critical section.
        // (A transition between the reading and the lock can only make the
        // remaining cooldown shown a little longer than the truth.)
        let now = Fixed(self.clock.now());
        let (state, generation, threshold, cooldown, success_threshold, window) = {
            let circuit = self.circuit();
            (
                circuit.state(&now),
                circuit.generation(),
                circuit.threshold(),
                circuit.cooldown(),
                circuit.success_threshold(),
                circuit.window_config(),
            )
        };
        f.debug_struct("RetryBreaker")
            .field("state", &state)
            .field("generation", &generation)
            .field("threshold", &threshold)
            .field("cooldown", &cooldown)
            .field("success_threshold", &success_threshold)
            .field("window", &window)
            .field("hook", &self.hook.is_some())
            .finish_non_exhaustive()
    }
}

/// Calls the sink. While a panic already unwinds, the sink's own panic is
/// dropped: a second panic would abort the process, and the first is the
/// one its caller must see (O4, as B11 for the hook).
#[inline(never)]
fn deliver(sink: &EventSink, event: &Event) {
    if thread::panicking() {
        let _ = panic::catch_unwind(AssertUnwindSafe(|| sink(event)));
    } else {
        sink(event);
    }
}

/// One clock reading, taken before the lock.
struct Fixed(Duration);

impl Clock for Fixed {
    fn now(&self) -> Duration {
        self.0
    }
}
