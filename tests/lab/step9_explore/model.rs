//! A reference model of the breaker, written for clarity rather than speed:
//! the contract's rules, one `match` arm each, with the rule and the lab
//! TODO that a disagreement points at.

use std::time::Duration;

use retry_breaker::{Recorded, Rejected, State};

/// Where a disagreement with the model sends the student.
pub type Rule = &'static str;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Closed {
        failures: u32,
    },
    /// `None`: the deadline is too far away to represent; open for good.
    Open {
        until: Option<Duration>,
    },
    HalfOpen {
        probe_out: bool,
    },
}

#[derive(Debug, Clone)]
pub struct Model {
    threshold: u32,
    cooldown: Duration,
    now: Duration,
    mode: Mode,
    generation: u64,
}

impl Model {
    pub fn new(threshold: u32, cooldown: Duration) -> Model {
        Model {
            threshold,
            cooldown,
            now: Duration::ZERO,
            mode: Mode::Closed { failures: 0 },
            generation: 0,
        }
    }

    pub fn now(&self) -> Duration {
        self.now
    }

    pub fn advance(&mut self, by: Duration) {
        self.now = self.now.saturating_add(by);
    }

    /// How far away the end of the cooldown is, if the circuit is open.
    pub fn until_deadline(&self) -> Option<Duration> {
        match self.mode {
            Mode::Open { until: Some(until) } => Some(until.saturating_sub(self.now)),
            _ => None,
        }
    }

    pub fn state(&self) -> State {
        match self.mode {
            Mode::Closed { failures } => State::Closed { failures },
            Mode::Open { until: Some(until) } => State::Open {
                remaining: until.saturating_sub(self.now),
            },
            Mode::Open { until: None } => State::Open {
                remaining: Duration::MAX,
            },
            Mode::HalfOpen { probe_out } => State::HalfOpen {
                probe_in_flight: probe_out,
            },
        }
    }

    /// One admission request: the generation of the permit, or the rejection.
    pub fn admit(&mut self) -> (Result<u64, Rejected>, Rule) {
        match self.mode {
            Mode::Closed { .. } => (
                Ok(self.generation),
                "B2: CLOSED admits every attempt, TODO(1)",
            ),
            Mode::Open { until } => match until {
                Some(until) if self.now >= until => {
                    self.enter(Mode::HalfOpen { probe_out: true });
                    (
                        Ok(self.generation),
                        "B4: the first attempt at or after the deadline is the probe, TODO(2)",
                    )
                }
                _ => (
                    Err(Rejected::Open {
                        remaining: self.state_remaining(),
                    }),
                    "B3: OPEN refuses before the deadline, TODO(2)",
                ),
            },
            Mode::HalfOpen { probe_out: true } => (
                Err(Rejected::ProbeInFlight),
                "B5: one probe at a time, TODO(2)",
            ),
            Mode::HalfOpen { probe_out: false } => {
                self.mode = Mode::HalfOpen { probe_out: true };
                (
                    Ok(self.generation),
                    "B7: a probe slot given back is free for the next attempt, TODO(4)",
                )
            }
        }
    }

    /// A reported outcome of a permit from `generation`.
    pub fn report(&mut self, generation: u64, success: bool) -> (Recorded, Rule) {
        if generation != self.generation {
            return (
                Recorded::Stale,
                "B6: an outcome from an older generation changes nothing, TODO(3)",
            );
        }
        match (self.mode, success) {
            (Mode::Closed { .. }, true) => {
                self.mode = Mode::Closed { failures: 0 };
                (Recorded::Counted, "B2: a success resets the count, TODO(1)")
            }
            (Mode::Closed { failures }, false) => {
                if failures + 1 >= self.threshold {
                    self.trip();
                } else {
                    self.mode = Mode::Closed {
                        failures: failures + 1,
                    };
                }
                (
                    Recorded::Counted,
                    "B2: failures count and open at the threshold, TODO(1)",
                )
            }
            (Mode::HalfOpen { .. }, true) => {
                self.enter(Mode::Closed { failures: 0 });
                (
                    Recorded::Counted,
                    "B5: a successful probe closes the circuit, TODO(2)",
                )
            }
            (Mode::HalfOpen { .. }, false) => {
                self.trip();
                (
                    Recorded::Counted,
                    "B5: a failed probe reopens for a new cooldown, TODO(2)",
                )
            }
            (Mode::Open { .. }, _) => {
                unreachable!("OPEN admits nothing, so no current permit exists")
            }
        }
    }

    /// A permit from `generation` dropped without a report, outside a panic.
    pub fn abandon(&mut self, generation: u64) -> Rule {
        if generation == self.generation && self.mode == (Mode::HalfOpen { probe_out: true }) {
            self.mode = Mode::HalfOpen { probe_out: false };
        }
        "B7: a dropped permit records nothing; a current probe gives its slot back, TODO(4)"
    }

    fn state_remaining(&self) -> Duration {
        match self.state() {
            State::Open { remaining } => remaining,
            _ => Duration::ZERO,
        }
    }

    fn trip(&mut self) {
        self.enter(Mode::Open {
            until: self.now.checked_add(self.cooldown),
        });
    }

    fn enter(&mut self, mode: Mode) {
        self.mode = mode;
        self.generation += 1;
    }
}
