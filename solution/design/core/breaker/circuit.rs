//! The circuit of a student who has done the core lab (steps 1-4) and
//! none of the advanced track: the starter's interface
//! (`solution/design/circuit.rs`) filled in for the core rules, with the
//! advanced settings left as the interface leaves them (TODO(11)-TODO(13)).
//! `just check-starter` builds the student's crate with steps 1-10 done
//! and this file as its `circuit.rs`, and requires every test of steps
//! 1-10 to pass: the core lab needs no code of the advanced track.

use std::time::Duration;

use crate::time::clock::Clock;
use crate::error::Rejected;
use crate::breaker::state::{Phase, State};
use crate::breaker::transition::{Generation, Transition};
use crate::breaker::window::{Window, WindowConfig};

/// What a reported outcome did to the circuit.
///
/// Non-exhaustive: a later version may tell more ways an outcome was taken,
/// so a `match` on it needs a `_` arm, and adding one breaks no caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Recorded {
    /// The outcome belonged to the current generation and was counted.
    Counted,
    /// The circuit had changed state since the attempt was admitted, so the
    /// outcome was ignored. The caller still gets its value or error.
    Stale,
}

#[derive(Debug)]
pub(crate) struct Circuit {
    threshold: u32,
    cooldown: Duration,
    phase: Phase,
    generation: Generation,
    /// Consecutive failures while CLOSED.
    failures: u32,
    /// While OPEN, when the cooldown ends; `None`: never (B1).
    reopens_at: Option<Duration>,
    /// While HALF-OPEN, whether the probe is out.
    probe_out: bool,
    /// The last transition, until the breaker takes it for the hook.
    pending: Option<Transition>,
}

impl Circuit {
    pub(crate) fn new(threshold: u32, cooldown: Duration) -> Self {
        Circuit {
            threshold,
            cooldown,
            phase: Phase::Closed,
            generation: Generation::default(),
            failures: 0,
            reopens_at: None,
            probe_out: false,
            pending: None,
        }
    }

    #[allow(unused_variables)]
    pub(crate) fn with_modes(self, success_threshold: u32, window: Option<Window>) -> Self {
        // TODO(12): keep `success_threshold` (S1)
        // TODO(13): keep the window (W1)
        self
    }

    pub(crate) fn success_threshold(&self) -> u32 {
        // TODO(12): the setting `with_modes` was given (S1)
        1
    }

    pub(crate) fn window_config(&self) -> Option<WindowConfig> {
        // TODO(13): the window's settings, if it has one (W1)
        None
    }

    pub(crate) fn counts_successes(&self) -> bool {
        // TODO(13): true in window mode (W1)
        false
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

    pub(crate) fn state(&self, clock: &impl Clock) -> State {
        match self.phase {
            Phase::Closed => State::Closed {
                failures: self.failures,
            },
            Phase::Open => State::Open {
                remaining: self.remaining(clock.now()),
            },
            Phase::HalfOpen => State::HalfOpen {
                probe_in_flight: self.probe_out,
            },
        }
    }

    pub(crate) fn admit(&mut self, clock: &impl Clock) -> Result<Generation, Rejected> {
        match self.phase {
            Phase::Closed => Ok(self.generation),
            Phase::Open => {
                let now = clock.now();
                if self.reopens_at.is_some_and(|at| now >= at) {
                    self.move_to(Phase::HalfOpen, now);
                    Ok(self.generation)
                } else {
                    Err(Rejected::Open {
                        remaining: self.remaining(now),
                    })
                }
            }
            Phase::HalfOpen if self.probe_out => Err(Rejected::ProbeInFlight),
            Phase::HalfOpen => {
                self.probe_out = true;
                Ok(self.generation)
            }
        }
    }

    pub(crate) fn on_success(&mut self, generation: Generation, clock: &impl Clock) -> Recorded {
        self.verdict(generation, false, clock)
    }

    pub(crate) fn on_failure(&mut self, generation: Generation, clock: &impl Clock) -> Recorded {
        self.verdict(generation, true, clock)
    }

    pub(crate) fn abandon(&mut self, generation: Generation) {
        if generation == self.generation && self.phase == Phase::HalfOpen {
            self.probe_out = false;
        }
    }

    pub(crate) fn interrupted(&mut self, generation: Generation) {
        self.abandon(generation);
    }

    pub(crate) fn take_transition(&mut self) -> Option<Transition> {
        self.pending.take()
    }

    /// One verdict of an attempt admitted in `generation`. The clock is
    /// read before anything changes, and only where time matters: a clock
    /// that panics leaves the circuit as it was (B12).
    fn verdict(&mut self, generation: Generation, failed: bool, clock: &impl Clock) -> Recorded {
        // OPEN admits nobody, so no attempt of its generation can report.
        if generation != self.generation || self.phase == Phase::Open {
            return Recorded::Stale;
        }
        if self.phase == Phase::HalfOpen {
            let now = clock.now();
            self.move_to(if failed { Phase::Open } else { Phase::Closed }, now);
        } else if !failed {
            self.failures = 0;
        } else if self.failures + 1 < self.threshold {
            self.failures += 1;
        } else {
            let now = clock.now();
            self.move_to(Phase::Open, now);
        }
        Recorded::Counted
    }

    /// A transition at `now`: a new generation, a fresh start for what the
    /// new phase counts, and the transition kept for the hook.
    fn move_to(&mut self, phase: Phase, now: Duration) {
        let generation = self.generation.next();
        self.pending = Some(Transition::new(self.phase, phase, now, generation));
        self.phase = phase;
        self.generation = generation;
        self.failures = 0;
        self.probe_out = phase == Phase::HalfOpen;
        self.reopens_at = match phase {
            Phase::Open => now.checked_add(self.cooldown),
            _ => None,
        };
    }

    /// What is left of the cooldown at `now`; all of time if it never ends.
    fn remaining(&self, now: Duration) -> Duration {
        self.reopens_at
            .map_or(Duration::MAX, |at| at.saturating_sub(now))
    }
}
