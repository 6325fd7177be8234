//! The breaker's state machine: pure bookkeeping, with no lock and no clock
//! of its own.
//!
//! [`RetryBreaker`](crate::RetryBreaker) wraps a `Circuit` in a mutex and
//! hands it a clock; keeping those out of here leaves only the rules. Every
//! method runs inside the breaker's short critical section, so none of them
//! may block or call anything slow.
//!
//! The student designs this file whole: the starter gets only the interface
//! below and the rules (see `xtask/src/authoring/starter.rs`).
// STARTER DESIGN: design/circuit.rs

use std::time::Duration;

use crate::time::clock::Clock;
// BEGIN SOLUTION ONLY: recovery settings beyond the lab
use crate::breaker::cooldown::CooldownGrowth;
// END SOLUTION ONLY
use crate::breaker::state::{Phase, State};
use crate::breaker::transition::{Generation, Transition};
use crate::breaker::window::{Window, WindowConfig};
use crate::error::Rejected;
use crate::time::deadline::Deadline;

/// What a reported outcome did to the circuit.
///
/// Non-exhaustive: a later version may tell more ways an outcome was taken,
/// so a `match` on it needs a `_` arm, and adding one breaks no caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
// Contract: B9; `Stale` is B6.
pub enum Recorded {
    /// The outcome belonged to the current generation and was counted.
    Counted,
    /// The circuit had changed state since the attempt was admitted, so the
    /// outcome was ignored. The caller still gets its value or error.
    Stale,
}

/// The state as the circuit keeps it: with the count, the deadline itself
/// and whether the probe's slot is taken. [`State`] is the same state as a
/// caller sees it (the time left, not the deadline), [`Phase`] its name
/// alone; this one never leaves the circuit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Closed { failures: u32 },
    Open { until: Deadline },
    HalfOpen { probe_out: bool },
}

#[derive(Debug)]
pub(crate) struct Circuit {
    threshold: u32,
    cooldown: Duration,
    mode: Mode,
    /// Good probes a HALF-OPEN circuit needs before it closes (S1).
    success_threshold: u32,
    /// Good probes so far in this HALF-OPEN spell (S1, S2).
    probes_passed: u32,
    /// In window mode, the verdicts of the last counted attempts while
    /// CLOSED (W1); `None` in consecutive mode.
    window: Option<Window>,
    // BEGIN ANCHOR(circuit-generation-field)
    generation: Generation,
    // END ANCHOR
    /// The transition made by the last operation, waiting to be handed to the
    /// hook once the lock is released.
    transition: Option<Transition>,
    // BEGIN SOLUTION ONLY: recovery settings beyond the lab
    /// How long each opening lasts (G1-G3).
    growth: CooldownGrowth,
    /// Openings since the circuit last closed, this one included (G2).
    openings: u32,
    /// The longest a probe may run before it counts as failed (P1).
    probe_timeout: Option<Duration>,
    /// When the probe in flight runs out of time, with a probe timeout.
    probe_due: Deadline,
    // END SOLUTION ONLY
}

impl Circuit {
    /// A closed circuit. The threshold has already been checked (B1).
    pub(crate) fn new(threshold: u32, cooldown: Duration) -> Self {
        Circuit {
            threshold,
            cooldown,
            mode: Mode::Closed { failures: 0 },
            success_threshold: 1,
            probes_passed: 0,
            window: None,
            // BEGIN ANCHOR(circuit-generation-init)
            generation: Generation::default(),
            // END ANCHOR
            transition: None,
            // BEGIN SOLUTION ONLY: recovery settings beyond the lab
            growth: CooldownGrowth::constant(),
            openings: 0,
            probe_timeout: None,
            probe_due: Deadline::Never,
            // END SOLUTION ONLY
        }
    }

    /// The advanced modes, already checked: `success_threshold` good probes
    /// to close (S1), and a failure-rate window instead of a consecutive
    /// count (W1). The defaults, 1 and `None`, are the core lab.
    pub(crate) fn with_modes(mut self, success_threshold: u32, window: Option<Window>) -> Self {
        self.success_threshold = success_threshold;
        self.window = window;
        self
    }

    // BEGIN SOLUTION ONLY: recovery settings beyond the lab
    /// How long each opening lasts (G1-G3) and how long a probe may run
    /// (P1), already checked. The defaults, a constant cooldown and no
    /// limit, are the lab's.
    pub(crate) fn with_recovery(
        mut self,
        growth: CooldownGrowth,
        probe_timeout: Option<Duration>,
    ) -> Self {
        self.growth = growth;
        self.probe_timeout = probe_timeout;
        self
    }
    // END SOLUTION ONLY

    pub(crate) fn success_threshold(&self) -> u32 {
        self.success_threshold
    }

    pub(crate) fn window_config(&self) -> Option<WindowConfig> {
        // BEGIN TODO(13): the window's settings, if it has one (W1)
        self.window.as_ref().map(Window::config)
        // STARTER: None
        // END TODO
    }

    /// Whether a success in CLOSED can change anything even with no failure
    /// counted: in window mode it takes a place in the window (W1).
    pub(crate) fn counts_successes(&self) -> bool {
        self.window.is_some()
    }

    pub(crate) fn threshold(&self) -> u32 {
        self.threshold
    }

    pub(crate) fn cooldown(&self) -> Duration {
        self.cooldown
    }

    pub(crate) fn generation(&self) -> Generation {
        self.generation
    }

    /// The state as an observer sees it (B10). Reading never changes
    /// anything: after the deadline the circuit reports OPEN with nothing
    /// left, and only the next admission request turns it HALF-OPEN.
    pub(crate) fn state(&self, clock: &impl Clock) -> State {
        match self.mode {
            Mode::Closed { failures } => State::Closed {
                // BEGIN SOLUTION ONLY: a time-based window is read without moving (T1)
                failures: self.window_failures_at(clock).unwrap_or(failures),
                // STARTER: failures,
                // END SOLUTION ONLY
            },
            Mode::Open { until } => State::Open {
                remaining: until.remaining(clock.now()),
            },
            Mode::HalfOpen { probe_out } => State::HalfOpen {
                probe_in_flight: probe_out,
            },
        }
    }

    // BEGIN SOLUTION ONLY: the fast path publishes the deadline
    /// The end of the cooldown, while the circuit is OPEN.
    pub(crate) fn open_until(&self) -> Option<Deadline> {
        match self.mode {
            Mode::Open { until } => Some(until),
            Mode::Closed { .. } | Mode::HalfOpen { .. } => None,
        }
    }
    // END SOLUTION ONLY

    /// Decides whether one attempt may call the dependency. On admission,
    /// returns the generation the attempt belongs to.
    ///
    /// The clock is read only when the circuit is open: admitting an attempt
    /// into a closed circuit needs no time at all.
    pub(crate) fn admit(&mut self, clock: &impl Clock) -> Result<Generation, Rejected> {
        // BEGIN SOLUTION ONLY: a probe that overruns its time counts as failed (P1-P3)
        if let Some(timeout) = self.probe_timeout {
            return self.admit_timed(timeout, clock);
        }
        // END SOLUTION ONLY
        self.admit_by_the_rules(clock)
    }

    // BEGIN SOLUTION ONLY: a probe that overruns its time counts as failed (P1-P3)
    /// `admit` with a probe timeout. One clock reading decides, taken before
    /// anything changes, so a clock that panics finds the circuit as it was
    /// (B12).
    fn admit_timed(
        &mut self,
        timeout: Duration,
        clock: &impl Clock,
    ) -> Result<Generation, Rejected> {
        if let Mode::Closed { .. } = self.mode {
            return Ok(self.generation);
        }
        let now = clock.now();
        if self.mode == (Mode::HalfOpen { probe_out: true }) && self.probe_due.has_passed(now) {
            // The probe is overdue: a failure, noticed now (P1). The trip
            // starts a new generation, which fences off its late outcome
            // (P2), and this attempt is refused by the reopened circuit.
            self.trip(now);
            let left = self
                .open_until()
                .map_or(Duration::ZERO, |until| until.remaining(now));
            return Err(Rejected::Open { remaining: left });
        }
        let admitted = self.admit_by_the_rules(&Reading(now))?;
        if self.mode == (Mode::HalfOpen { probe_out: true }) {
            // Admitted in HALF-OPEN: this attempt is the probe.
            self.probe_due = Deadline::after(now, timeout);
        }
        Ok(admitted)
    }
    // END SOLUTION ONLY

    // BEGIN SOLUTION ONLY: a time-based window lets its old verdicts go before it judges (T1)
    /// What a time-based window holds now, for a read: the failures that
    /// have left the period since the last verdict are not shown, though
    /// only the next verdict lets them go. The clock is read only for such
    /// a window.
    fn window_failures_at(&self, clock: &impl Clock) -> Option<u32> {
        let window = self.window.as_ref()?;
        window.config().period?;
        window.failures_at(clock.now())
    }

    /// In a CLOSED circuit with a time-based window, lets the verdicts older
    /// than its period go, before a verdict enters it. The clock is read
    /// only for such a window, before anything changes (B12).
    fn let_old_verdicts_go(&mut self, clock: &impl Clock) {
        if let (Mode::Closed { .. }, Some(window)) = (self.mode, self.window.as_mut()) {
            if window.config().period.is_some() {
                window.advance_to(clock.now());
            }
        }
    }
    // END SOLUTION ONLY

    /// The lab's admission rules (B3-B5).
    fn admit_by_the_rules(&mut self, clock: &impl Clock) -> Result<Generation, Rejected> {
        match self.mode {
            // BEGIN ANCHOR(closed-admission)
            Mode::Closed { .. } => Ok(self.generation),
            // END ANCHOR
            Mode::Open { until } => {
                let now = clock.now();
                // BEGIN TODO(2): before the deadline refuse, saying how long is left; from it on, this attempt is the single probe (B3, B4, B5)
                if until.has_passed(now) {
                    self.enter(Mode::HalfOpen { probe_out: true }, now);
                    return Ok(self.generation);
                }
                Err(Rejected::Open {
                    remaining: until.remaining(now),
                })
                // END TODO
            }
            Mode::HalfOpen { probe_out } => {
                // BEGIN TODO(2): admit a probe only if none is in flight (B5)
                if probe_out {
                    return Err(Rejected::ProbeInFlight);
                }
                self.mode = Mode::HalfOpen { probe_out: true };
                Ok(self.generation)
                // END TODO
            }
        }
    }

    /// Counts a success reported by an attempt admitted in `generation`.
    pub(crate) fn on_success(&mut self, generation: Generation, clock: &impl Clock) -> Recorded {
        // BEGIN TODO(3): a success from an older generation changes nothing, and says so (B6, B9)
        if self.is_stale(generation) {
            return Recorded::Stale;
        }
        // STARTER:
        // END TODO
        // BEGIN SOLUTION ONLY: a time-based window lets its old verdicts go before it judges (T1)
        self.let_old_verdicts_go(clock);
        // END SOLUTION ONLY
        // BEGIN TODO(13): in window mode, a success in CLOSED takes its place in the window, and the window decides (W1)
        if let (Mode::Closed { .. }, Some(window)) = (self.mode, self.window.as_mut()) {
            // The clock first: a clock that panics must find nothing changed
            // (B12).
            let now = clock.now();
            window.record(false);
            // A success lowers the share, but it may be the verdict that
            // brings the window to its minimum: the rule is checked after
            // every verdict, as resilience4j does.
            if window.trips() {
                self.trip(now);
            } else {
                self.mode = Mode::Closed {
                    failures: window.failures(),
                };
            }
            return Recorded::Counted;
        }
        // STARTER:
        // END TODO
        // BEGIN TODO(12): a good probe short of the success threshold lets the next probe in instead of closing (S1)
        // The good probe that reaches k is not counted here: it closes the
        // circuit below, after reading the clock, so a clock that panics on
        // it leaves the count as it was (B12).
        if let Mode::HalfOpen { .. } = self.mode {
            if self.probes_passed + 1 < self.success_threshold {
                self.probes_passed += 1;
                self.mode = Mode::HalfOpen { probe_out: false };
                return Recorded::Counted;
            }
        }
        // STARTER:
        // END TODO
        match self.mode {
            Mode::Closed { .. } => {
                // BEGIN TODO(1): a success resets the consecutive-failure count (B2)
                self.mode = Mode::Closed { failures: 0 };
                // END TODO
            }
            Mode::HalfOpen { .. } => {
                // BEGIN TODO(2): a successful probe closes the circuit with a clean count (B5)
                self.enter(Mode::Closed { failures: 0 }, clock.now());
                // END TODO
            }
            // Admitting an attempt into an open circuit moves it to HALF-OPEN
            // first, so no attempt of the current generation can report here.
            Mode::Open { .. } => return Recorded::Stale,
        }
        Recorded::Counted
    }

    /// Counts a failure reported by an attempt admitted in `generation`.
    pub(crate) fn on_failure(&mut self, generation: Generation, clock: &impl Clock) -> Recorded {
        // BEGIN TODO(3): a failure from an older generation changes nothing, and says so (B6, B9)
        if self.is_stale(generation) {
            return Recorded::Stale;
        }
        // STARTER:
        // END TODO
        // BEGIN SOLUTION ONLY: a time-based window lets its old verdicts go before it judges (T1)
        self.let_old_verdicts_go(clock);
        // END SOLUTION ONLY
        // BEGIN TODO(13): in window mode, a failure in CLOSED enters the window, and the window decides (W1)
        if let (Mode::Closed { .. }, Some(window)) = (self.mode, self.window.as_mut()) {
            let now = clock.now();
            window.record(true);
            if window.trips() {
                self.trip(now);
            } else {
                self.mode = Mode::Closed {
                    failures: window.failures(),
                };
            }
            return Recorded::Counted;
        }
        // STARTER:
        // END TODO
        match self.mode {
            Mode::Closed { failures } => {
                // BEGIN TODO(1): count the failure; at the threshold, open until now + cooldown (B2)
                let failures = failures + 1;
                if failures >= self.threshold {
                    self.trip(clock.now());
                } else {
                    self.mode = Mode::Closed { failures };
                }
                // END TODO
            }
            Mode::HalfOpen { .. } => {
                // BEGIN TODO(2): a failed probe reopens the circuit for a whole new cooldown (B5)
                self.trip(clock.now());
                // END TODO
            }
            Mode::Open { .. } => return Recorded::Stale,
        }
        Recorded::Counted
    }

    /// An attempt admitted in `generation` ended without an outcome: its
    /// permit was dropped unreported (B7). Nothing was observed, so nothing
    /// is counted; a probe only hands its slot back so the next attempt can
    /// probe instead.
    pub(crate) fn abandon(&mut self, generation: Generation) {
        // BEGIN TODO(4): a current probe gives its slot back; anything else changes nothing (B7)
        if !self.is_stale(generation) && self.mode == (Mode::HalfOpen { probe_out: true }) {
            self.mode = Mode::HalfOpen { probe_out: false };
        }
        // END TODO
    }

    /// A report of an attempt admitted in `generation` was interrupted by a
    /// panic (the user's clock, B12) before it changed anything. The
    /// current probe hands its slot back with no verdict, as a dropped
    /// probe does; any other attempt holds no slot, and nothing was counted.
    ///
    /// `abandon` alone would do the same; asking it only for the current
    /// probe says which attempt an interruption can concern.
    pub(crate) fn interrupted(&mut self, generation: Generation) {
        if self.mode == (Mode::HalfOpen { probe_out: true }) && generation == self.generation {
            self.abandon(generation);
        }
    }

    // BEGIN SOLUTION ONLY: manual control, for operators (C1-C3)
    /// Opens the circuit until [`close`](Self::close): a cooldown that never
    /// ends, so no probe is ever admitted (C1). A new generation even when
    /// already open, so that every attempt admitted before is stale (C3).
    pub(crate) fn isolate(&mut self, now: Duration) {
        self.enter(
            Mode::Open {
                until: Deadline::Never,
            },
            now,
        );
    }

    /// Closes the circuit whatever its state, as a new circuit starts:
    /// nothing counted, no good probe, an empty window (C2), in a new
    /// generation (C3).
    pub(crate) fn close(&mut self, now: Duration) {
        self.enter(Mode::Closed { failures: 0 }, now);
    }
    // END SOLUTION ONLY

    /// Takes the transition made by the last operation, if any.
    pub(crate) fn take_transition(&mut self) -> Option<Transition> {
        self.transition.take()
    }

    /// Whether an outcome from `generation` arrives too late to count (B6).
    fn is_stale(&self, generation: Generation) -> bool {
        // BEGIN TODO(3): has the circuit changed state since this generation? (B6)
        generation != self.generation
        // STARTER: false
        // END TODO
    }

    /// Opens the circuit for one cooldown starting `now`.
    fn trip(&mut self, now: Duration) {
        // BEGIN SOLUTION ONLY: a growing cooldown (G1-G3)
        self.openings = self.openings.saturating_add(1);
        let cooldown = self.growth.length(self.cooldown, self.openings);
        // STARTER: let cooldown = self.cooldown;
        // END SOLUTION ONLY
        // BEGIN TODO(1): open until now + cooldown: a transition (B2)
        let until = Deadline::after(now, cooldown);
        self.enter(Mode::Open { until }, now);
        // END TODO
    }

    /// Moves to `mode`, starting a new generation so that every attempt
    /// still in flight from before becomes stale.
    fn enter(&mut self, mode: Mode, now: Duration) {
        // BEGIN TODO(1): the new mode, the next generation, and the transition left for the hook (B2, B6)
        let from = phase(self.mode);
        self.mode = mode;
        self.generation = self.generation.next();
        self.transition = Some(Transition {
            from,
            to: phase(mode),
            at: now,
            generation: self.generation,
        });
        // END TODO
        // BEGIN TODO(12): a new state starts counting good probes from 0 (S2)
        self.probes_passed = 0;
        // STARTER:
        // END TODO
        // BEGIN TODO(13): the window starts empty whenever the circuit closes (W2)
        if let (Mode::Closed { .. }, Some(window)) = (mode, self.window.as_mut()) {
            window.clear();
        }
        // STARTER:
        // END TODO
        // BEGIN SOLUTION ONLY: a close starts the cooldown's growth over (G2)
        if let Mode::Closed { .. } = mode {
            self.openings = 0;
        }
        // END SOLUTION ONLY
    }
}

// BEGIN SOLUTION ONLY: a probe that overruns its time counts as failed (P1-P3)
/// One clock reading, for the rules that read the clock again.
struct Reading(Duration);

impl Clock for Reading {
    fn now(&self) -> Duration {
        self.0
    }
}
// END SOLUTION ONLY

fn phase(mode: Mode) -> Phase {
    match mode {
        Mode::Closed { .. } => Phase::Closed,
        Mode::Open { .. } => Phase::Open,
        Mode::HalfOpen { .. } => Phase::HalfOpen,
    }
}
