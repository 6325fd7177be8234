//! A second correct design of the circuit, for instructors: the starter's
//! interface (`solution/design/circuit.rs`) filled in another way than the
//! reference's. `just check-starter` ends by building the student's crate
//! with every TODO done and this file as its `circuit.rs`, and running the
//! whole suite on it.
//!
//! Where the reference keeps one enum whose variants carry each state's
//! data, this one keeps flat fields beside the crate's own `Phase`, and
//! handles both verdicts in one function. Both pass: the suite judges the
//! circuit by what the breaker answers, never by how it is written.

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
    probes_to_close: u32,
    window: Option<Window>,
    phase: Phase,
    generation: Generation,
    /// Consecutive failures while CLOSED, or the window's failures.
    failures: u32,
    /// While OPEN, when the cooldown ends; `None`: never (B1).
    reopens_at: Option<Duration>,
    /// While HALF-OPEN, whether the probe is out.
    probe_out: bool,
    /// Good probes so far in this HALF-OPEN spell.
    good_probes: u32,
    /// The last transition, until the breaker takes it for the hook.
    pending: Option<Transition>,
}

impl Circuit {
    pub(crate) fn new(threshold: u32, cooldown: Duration) -> Self {
        Circuit {
            threshold,
            cooldown,
            probes_to_close: 1,
            window: None,
            phase: Phase::Closed,
            generation: Generation::default(),
            failures: 0,
            reopens_at: None,
            probe_out: false,
            good_probes: 0,
            pending: None,
        }
    }

    pub(crate) fn with_modes(mut self, success_threshold: u32, window: Option<Window>) -> Self {
        self.probes_to_close = success_threshold;
        self.window = window;
        self
    }

    pub(crate) fn success_threshold(&self) -> u32 {
        self.probes_to_close
    }

    pub(crate) fn window_config(&self) -> Option<WindowConfig> {
        self.window.as_ref().map(Window::config)
    }

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
            if !failed && self.good_probes + 1 < self.probes_to_close {
                self.good_probes += 1;
                self.probe_out = false;
            } else {
                let now = clock.now();
                self.move_to(if failed { Phase::Open } else { Phase::Closed }, now);
            }
        } else if let Some(window) = self.window.as_mut() {
            let now = clock.now();
            window.record(failed);
            if window.trips() {
                self.move_to(Phase::Open, now);
            } else {
                self.failures = window.failures();
            }
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
        self.good_probes = 0;
        self.probe_out = phase == Phase::HalfOpen;
        self.reopens_at = match phase {
            Phase::Open => now.checked_add(self.cooldown),
            _ => None,
        };
        if let (Phase::Closed, Some(window)) = (phase, self.window.as_mut()) {
            window.clear();
        }
    }

    /// What is left of the cooldown at `now`; all of time if it never ends.
    fn remaining(&self, now: Duration) -> Duration {
        self.reopens_at
            .map_or(Duration::MAX, |at| at.saturating_sub(now))
    }
}
