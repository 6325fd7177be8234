//! Held back from the student edition: step 10's explorations judged by an
//! exact model of the breaker, a second implementation of the rules written
//! for clarity rather than speed. The student's own step 10 judges the same
//! runs by laws over what the breaker says (`step10_explore/laws.rs`), which
//! a student cannot paste into a TODO region; the model can, region by
//! region, so it stays with the instructor. No TODO of its own: the TODOs of
//! steps 1-8 (rules B2-B7, B9, E3-E7).

use std::collections::VecDeque;
use std::time::Duration;

use retry_breaker::{Recorded, Rejected, State, WindowConfig};

use crate::step10_explore::calls::{self, Event, Interleaving};
use crate::step10_explore::explore;
use crate::step10_explore::permits::{self, Judge, Op, Scenario, Seen};
use crate::step10_explore::rules::*;

#[test]
fn b2_to_b7_every_step_of_many_callers_agrees_with_the_exact_model() {
    explore(
        "a permit operation did not return (a deadlock?)",
        permits::scenario(),
        |scenario| permits::check_with(scenario, Exact::new(scenario)),
    );
}

#[test]
fn e3_to_e7_interleaved_calls_agree_with_the_exact_model() {
    explore(
        "an interleaved call never returned from a poll (a busy loop?)",
        calls::interleaving(),
        |case| calls::check_with(case, replay),
    );
}

/// The model as a judge: it takes every step the breaker took, and expects
/// the same answers and the same state.
struct Exact {
    model: Model,
    /// The generations of the permits out, in the order the run keeps them.
    out: Vec<u64>,
}

impl Exact {
    fn new(scenario: &Scenario) -> Exact {
        let model = Model::new(scenario.threshold, scenario.cooldown)
            .with_modes(scenario.success_threshold, scenario.window);
        Exact {
            model,
            out: Vec::new(),
        }
    }
}

impl Judge for Exact {
    fn judge(&mut self, seen: &Seen) -> Result<(), String> {
        let model = &mut self.model;
        // The run keeps its permits in the same order, so the same index
        // picks the same permit as long as the admissions agreed.
        let taken = match seen.op {
            Op::Report(i, _) | Op::Drop(i) | Op::Ignore(i) | Op::Panic(i)
                if !self.out.is_empty() =>
            {
                Some(self.out.remove(i % self.out.len()))
            }
            _ => None,
        };
        let rule = match (seen.op, taken) {
            (Op::Acquire(_), _) => {
                let (expected, rule) = model.admit();
                if let Ok(generation) = expected {
                    self.out.push(generation);
                }
                let admitted = seen.admission.map(|admission| admission.map(|_| ()));
                if admitted != Some(expected.map(|_| ())) {
                    return Err(format!(
                        "{}: the model expected {expected:?} [{rule}]",
                        seen.description
                    ));
                }
                rule
            }
            (Op::Report(_, success), Some(generation)) => {
                let (expected, rule) = model.report(generation, success);
                if seen.recorded != Some(expected) {
                    return Err(format!(
                        "{}: the model expected {expected:?} (B9) [{rule}]",
                        seen.description
                    ));
                }
                rule
            }
            (Op::Panic(_), Some(generation)) => model.report(generation, false).1,
            (Op::Drop(_), Some(generation)) => model.abandon(generation),
            (Op::Ignore(_), Some(generation)) => model.ignore(generation),
            (Op::Advance(_) | Op::ToDeadline, _) => {
                model.advance(seen.now.saturating_sub(model.now()));
                "B3, B4: time alone only shortens OPEN's remaining cooldown, TODO(2)"
            }
            _ => "B10: reading the state changes nothing",
        };
        if seen.after != model.state() {
            return Err(format!(
                "after \"{}\" the breaker is {}, the model says {} [{rule}]",
                seen.description,
                seen.after,
                model.state()
            ));
        }
        Ok(())
    }
}

/// Feeds what the calls observed through the model: every admission and
/// rejection must match, and the breaker must end where the model does.
fn replay(case: &Interleaving, log: &[(Duration, Event)], state: State) -> Result<(), String> {
    let mut model = Model::new(case.threshold, case.cooldown);
    let mut admitted_in: Vec<Option<u64>> = vec![None; case.calls.len()];
    for (_, event) in log {
        match event {
            Event::Invoked {
                call,
                generation,
                attempt,
            } => match model.admit() {
                (Ok(expected), _) if expected == *generation => admitted_in[*call] = Some(expected),
                (admission, rule) => {
                    return Err(format!(
                        "call #{call} attempt {attempt} was admitted in g{generation}; the model says {admission:?} [{rule}]"
                    ));
                }
            },
            Event::Rejected { call, rejection } => match model.admit() {
                (Err(expected), _) if expected == *rejection => {}
                (admission, rule) => {
                    return Err(format!(
                        "call #{call} was refused with {rejection:?}; the model says {admission:?} [{rule}]"
                    ));
                }
            },
            Event::Returned { call, ok } => {
                let generation = admitted_in[*call]
                    .take()
                    .expect("an attempt returns after it was invoked");
                model.report(generation, *ok);
            }
            Event::AbandonedAttempt { call } => {
                let generation = admitted_in[*call]
                    .take()
                    .expect("an abandoned attempt was invoked");
                model.abandon(generation);
            }
            Event::Advanced(by) => model.advance(*by),
            Event::Slept { .. } | Event::Cancelled { .. } | Event::Finished { .. } => {}
        }
    }
    if state != model.state() {
        return Err(format!(
            "after all calls the breaker is {state}, but the model, fed the same observations, says {}",
            model.state()
        ));
    }
    Ok(())
}

/// The circuit, in the terms of the rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Circuit {
    Closed {
        consecutive_failures: u32,
    },
    /// `None`: the end of the cooldown is too far away to represent (B1),
    /// so the circuit stays open for good.
    Open {
        reopens_at: Option<Duration>,
    },
    HalfOpen {
        probe_out: bool,
    },
}

#[derive(Debug, Clone)]
struct Model {
    threshold: u32,
    cooldown: Duration,
    now: Duration,
    circuit: Circuit,
    generation: u64,
    /// Good probes needed to close (S1); 1 in the core lab.
    success_threshold: u32,
    /// Good probes so far in this HALF-OPEN spell.
    probes_passed: u32,
    /// Window mode (W1): the settings and the last verdicts, `true` for a
    /// failure, oldest first.
    window: Option<(WindowConfig, VecDeque<bool>)>,
}

impl Model {
    fn new(threshold: u32, cooldown: Duration) -> Model {
        Model {
            threshold,
            cooldown,
            now: Duration::ZERO,
            circuit: Circuit::Closed {
                consecutive_failures: 0,
            },
            generation: 0,
            success_threshold: 1,
            probes_passed: 0,
            window: None,
        }
    }

    /// The advanced track's modes: `k` good probes to close (S1), and
    /// window mode (W1).
    fn with_modes(mut self, k: u32, window: Option<WindowConfig>) -> Model {
        self.success_threshold = k;
        self.window = window.map(|config| (config, VecDeque::new()));
        self
    }

    fn now(&self) -> Duration {
        self.now
    }

    fn advance(&mut self, by: Duration) {
        self.now = self.now.saturating_add(by);
    }

    fn state(&self) -> State {
        match self.circuit {
            Circuit::Closed { .. } if self.window.is_some() => State::Closed {
                failures: self.window_failures(),
            },
            Circuit::Closed {
                consecutive_failures,
            } => State::Closed {
                failures: consecutive_failures,
            },
            Circuit::Open { .. } => State::Open {
                remaining: self.cooldown_left(),
            },
            Circuit::HalfOpen { probe_out } => State::HalfOpen {
                probe_in_flight: probe_out,
            },
        }
    }

    /// One admission request: the generation of the permit, or the rejection.
    fn admit(&mut self) -> (Result<u64, Rejected>, Rule) {
        match self.circuit {
            Circuit::Closed { .. } => (Ok(self.generation), B2_CLOSED_ADMITS),
            Circuit::Open {
                reopens_at: Some(at),
            } if self.now >= at => {
                self.new_generation(Circuit::HalfOpen { probe_out: true });
                (Ok(self.generation), B4_PROBE_AT_DEADLINE)
            }
            Circuit::Open { .. } => {
                let refusal = Rejected::Open {
                    remaining: self.cooldown_left(),
                };
                (Err(refusal), B3_OPEN_REFUSES)
            }
            Circuit::HalfOpen { probe_out: true } => (Err(Rejected::ProbeInFlight), B5_ONE_PROBE),
            Circuit::HalfOpen { probe_out: false } => {
                self.circuit = Circuit::HalfOpen { probe_out: true };
                (Ok(self.generation), B7_FREED_SLOT_ADMITS)
            }
        }
    }

    /// A reported outcome of a permit from `generation`.
    fn report(&mut self, generation: u64, success: bool) -> (Recorded, Rule) {
        let current = generation == self.generation;
        if !current {
            return (Recorded::Stale, B6_STALE_CHANGES_NOTHING);
        }
        let rule = match (self.circuit, success) {
            (Circuit::Closed { .. }, _) if self.window.is_some() => {
                let (config, verdicts) = self.window.as_mut().expect("window mode");
                if verdicts.len() == config.size as usize {
                    verdicts.pop_front();
                }
                verdicts.push_back(!success);
                let failures = verdicts.iter().filter(|failed| **failed).count() as f64;
                let seen = verdicts.len();
                let opens = seen >= config.minimum as usize
                    && failures / seen as f64 >= config.failure_rate;
                if opens {
                    self.open_for_a_cooldown();
                }
                if success {
                    W1_SUCCESS_ENTERS_WINDOW
                } else {
                    W1_WINDOW_OPENS
                }
            }
            (Circuit::HalfOpen { .. }, true) if self.probes_passed + 1 < self.success_threshold => {
                self.probes_passed += 1;
                self.circuit = Circuit::HalfOpen { probe_out: false };
                S1_PROBES_BEFORE_CLOSING
            }
            (Circuit::Closed { .. }, true) => {
                self.circuit = Circuit::Closed {
                    consecutive_failures: 0,
                };
                B2_SUCCESS_RESETS
            }
            (
                Circuit::Closed {
                    consecutive_failures,
                },
                false,
            ) => {
                let counted = consecutive_failures + 1;
                if counted >= self.threshold {
                    self.open_for_a_cooldown();
                } else {
                    self.circuit = Circuit::Closed {
                        consecutive_failures: counted,
                    };
                }
                B2_FAILURES_OPEN_AT_THRESHOLD
            }
            (Circuit::HalfOpen { .. }, true) => {
                self.new_generation(Circuit::Closed {
                    consecutive_failures: 0,
                });
                if self.success_threshold > 1 {
                    S1_PROBES_BEFORE_CLOSING
                } else {
                    B5_PROBE_SUCCESS_CLOSES
                }
            }
            (Circuit::HalfOpen { .. }, false) => {
                self.open_for_a_cooldown();
                B5_PROBE_FAILURE_REOPENS
            }
            (Circuit::Open { .. }, _) => {
                unreachable!("OPEN admits nothing, so no current permit exists")
            }
        };
        (Recorded::Counted, rule)
    }

    /// A permit from `generation` dropped without a report, outside a panic.
    fn abandon(&mut self, generation: u64) -> Rule {
        let current = generation == self.generation;
        if current && self.circuit == (Circuit::HalfOpen { probe_out: true }) {
            self.circuit = Circuit::HalfOpen { probe_out: false };
        }
        B7_DROP_RECORDS_NOTHING
    }

    /// An outcome that a classifier ignored (K1): exactly a drop.
    fn ignore(&mut self, generation: u64) -> Rule {
        self.abandon(generation);
        K1_IGNORED_RECORDS_NOTHING
    }

    fn window_failures(&self) -> u32 {
        self.window.as_ref().map_or(0, |(_, verdicts)| {
            verdicts.iter().filter(|failed| **failed).count() as u32
        })
    }

    /// What is left of the cooldown; all of time if it never ends.
    fn cooldown_left(&self) -> Duration {
        match self.circuit {
            Circuit::Open {
                reopens_at: Some(at),
            } => at.saturating_sub(self.now),
            Circuit::Open { reopens_at: None } => Duration::MAX,
            _ => Duration::ZERO,
        }
    }

    fn open_for_a_cooldown(&mut self) {
        let reopens_at = self.now.checked_add(self.cooldown);
        self.new_generation(Circuit::Open { reopens_at });
    }

    /// Every transition starts a new generation (B6).
    fn new_generation(&mut self, circuit: Circuit) {
        self.circuit = circuit;
        self.generation += 1;
        // Every HALF-OPEN counts its good probes from 0 (S2), and the window
        // starts empty whenever the circuit closes (W2).
        self.probes_passed = 0;
        if let (Circuit::Closed { .. }, Some((_, verdicts))) = (circuit, self.window.as_mut()) {
            verdicts.clear();
        }
    }
}
