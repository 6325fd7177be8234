//! The breaker's state machine: pure bookkeeping, with no lock and no clock
//! of its own.
//!
//! [`RetryBreaker`](crate::RetryBreaker) wraps a `Circuit` in a mutex and
//! hands it a clock; keeping those out of here leaves only the rules. Every
//! method runs inside the breaker's short critical section, so none of them
//! may block or call anything slow.
//!
//! This file is yours to design (steps 1-4, and 12-13 if you take the
//! advanced track). The breaker calls the methods below, with the
//! signatures below; everything else is your choice: how the circuit
//! remembers which state it is in, what it counts, when its cooldown ends,
//! which generation it is in, and which helpers you write (`deadline.rs`
//! is there for a type that says when a cooldown ends, if you want one).
//! `Window` (`window.rs`, step 13) is there if you want it. LAB.md gives the rules, one step at a time; grow the design with
//! them rather than writing it all at once.

use std::time::Duration;

use crate::breaker::state::{Phase, State};
use crate::breaker::transition::{Generation, Transition};
use crate::breaker::window::{Window, WindowConfig};
use crate::error::Rejected;
use crate::time::clock::Clock;

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

/// The circuit: its settings and whatever it needs to remember between
/// calls.
#[derive(Debug)]
pub(crate) struct Circuit {
    // TODO(1): what the circuit remembers: its settings, which state it is
    // in and what that state needs (B2, and B3-B6 in the next steps)
}

// The bodies below are yours: until you write them, their parameters are
// unused.
#[allow(unused_variables)]
impl Circuit {
    /// A closed circuit, with no failure counted, in the first generation.
    /// The threshold has already been checked (B1).
    pub(crate) fn new(threshold: u32, cooldown: Duration) -> Self {
        // TODO(1): a new circuit (B2)
        todo!("TODO(1): a new circuit (B2); see LAB.md, step 1")
    }

    /// The advanced modes, already checked: `success_threshold` good probes
    /// to close (S1), and a failure-rate window instead of a consecutive
    /// count (W1). The defaults, 1 and `None`, are the core lab, which can
    /// ignore them.
    pub(crate) fn with_modes(self, success_threshold: u32, window: Option<Window>) -> Self {
        // TODO(12): keep `success_threshold` (S1)
        // TODO(13): keep the window (W1)
        self
    }

    /// Good probes a HALF-OPEN circuit needs before it closes (S1).
    pub(crate) fn success_threshold(&self) -> u32 {
        // TODO(12): the setting `with_modes` was given (S1)
        1
    }

    /// The window's settings, in window mode (W1).
    pub(crate) fn window_config(&self) -> Option<WindowConfig> {
        // TODO(13): the window's settings, if it has one (W1)
        None
    }

    /// Whether a success in CLOSED can change anything even with no failure
    /// counted: in window mode it takes a place in the window (W1).
    pub(crate) fn counts_successes(&self) -> bool {
        // TODO(13): true in window mode (W1)
        false
    }

    /// The threshold it was made with.
    pub(crate) fn threshold(&self) -> u32 {
        // TODO(1): the setting `new` was given
        todo!("TODO(1): the setting `new` was given; see LAB.md, step 1")
    }

    /// The cooldown it was made with.
    pub(crate) fn cooldown(&self) -> Duration {
        // TODO(1): the setting `new` was given
        todo!("TODO(1): the setting `new` was given; see LAB.md, step 1")
    }

    /// The current generation: it starts at `Generation::default()`, and
    /// every transition moves it on with `next()` (B6).
    pub(crate) fn generation(&self) -> Generation {
        // TODO(1): the current generation (B6)
        todo!("TODO(1): the current generation (B6); see LAB.md, step 1")
    }

    /// The state as an observer sees it (B10). Reading never changes
    /// anything: after the deadline the circuit reports OPEN with nothing
    /// left, and only the next admission request turns it HALF-OPEN.
    pub(crate) fn state(&self, clock: &impl Clock) -> State {
        // TODO(1): the state, as `State` tells it (B2, B10)
        todo!("TODO(1): the state, as `State` tells it (B2, B10); see LAB.md, step 1")
    }

    /// Decides whether one attempt may call the dependency. On admission,
    /// returns the generation the attempt belongs to.
    ///
    /// Read the clock only when the circuit is open: admitting an attempt
    /// into a closed circuit needs no time at all, and a user's clock may be
    /// slow or may panic (B12).
    pub(crate) fn admit(&mut self, clock: &impl Clock) -> Result<Generation, Rejected> {
        // TODO(1): CLOSED admits every attempt (B2)
        // TODO(2): OPEN refuses until its deadline, then one probe (B3-B5)
        todo!(
            "TODO(1): CLOSED admits every attempt (B2); TODO(2): OPEN refuses until its deadline, then one probe (B3-B5); see LAB.md, step 1"
        )
    }

    /// Counts a success reported by an attempt admitted in `generation`.
    ///
    /// If reading the clock panics (B12), nothing may have changed yet:
    /// read it before changing anything.
    pub(crate) fn on_success(&mut self, generation: Generation, clock: &impl Clock) -> Recorded {
        // TODO(1): a success resets the count (B2)
        // TODO(2): a good probe closes (B5)
        // TODO(3): a stale one changes nothing (B6)
        todo!(
            "TODO(1): a success resets the count (B2); TODO(2): a good probe closes (B5); TODO(3): a stale one changes nothing (B6); see LAB.md, step 1"
        )
    }

    /// Counts a failure reported by an attempt admitted in `generation`.
    ///
    /// If reading the clock panics (B12), nothing may have changed yet:
    /// read it before changing anything.
    pub(crate) fn on_failure(&mut self, generation: Generation, clock: &impl Clock) -> Recorded {
        // TODO(1): failures open at the threshold (B2)
        // TODO(2): a failed probe reopens (B5)
        // TODO(3): a stale one changes nothing (B6)
        todo!(
            "TODO(1): failures open at the threshold (B2); TODO(2): a failed probe reopens (B5); TODO(3): a stale one changes nothing (B6); see LAB.md, step 1"
        )
    }

    /// An attempt admitted in `generation` ended without an outcome: its
    /// permit was dropped unreported (B7). Nothing was observed, so nothing
    /// is counted; a probe only hands its slot back so the next attempt can
    /// probe instead.
    pub(crate) fn abandon(&mut self, generation: Generation) {
        // TODO(4): a current probe gives its slot back; anything else changes nothing (B7)
        todo!(
            "TODO(4): a current probe gives its slot back; anything else changes nothing (B7); see LAB.md, step 4"
        )
    }

    /// A report of an attempt admitted in `generation` was interrupted by a
    /// panic (the user's clock, B12) before it changed anything. The
    /// current probe hands its slot back with no verdict, as a dropped
    /// probe does; any other attempt holds no slot, and nothing was counted.
    /// `RetryBreaker::record` calls it once you have written its part of
    /// step 4.
    pub(crate) fn interrupted(&mut self, generation: Generation) {
        // TODO(4): a current probe gives its slot back (B12); `abandon` can do it
    }

    /// Takes the transition made by the last operation, if any, for the
    /// breaker to hand to the hook once the lock is released: each
    /// transition is reported once (B11).
    pub(crate) fn take_transition(&mut self) -> Option<Transition> {
        // TODO(1): the transition the last call made, if any, once (B11)
        todo!("TODO(1): the transition the last call made, if any, once (B11); see LAB.md, step 1")
    }
}
