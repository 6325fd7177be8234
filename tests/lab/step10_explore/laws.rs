//! The laws a breaker's observable behaviour obeys, checked one observed
//! step at a time: what `state()` and `generation()` said before and after,
//! what the operation returned, and how much time passed.
//!
//! This is not a second breaker. It keeps no circuit of its own: every law
//! reads the breaker's own answers and says which answers may follow them.
//! What it remembers is history that `state()` does not show (when the
//! circuit last opened, the good probes and the verdicts since the last
//! transition), each kept as a plain record of what was observed.

use std::time::Duration;

use retry_breaker::{Recorded, Rejected, State, WindowConfig};

use super::permits::{Op, Seen};
use super::rules::*;

/// The laws, and the history they need.
pub struct Laws {
    threshold: u32,
    cooldown: Duration,
    success_threshold: u32,
    window: Option<WindowConfig>,
    history: History,
}

/// What the laws remember of the run so far.
#[derive(Default)]
struct History {
    /// Whether a step has been seen: the first `before` is a new breaker.
    started: bool,
    /// When the current OPEN spell ends; `None`: never (B1).
    reopens_at: Option<Duration>,
    /// Good probes counted in the current HALF-OPEN spell.
    good_probes: u32,
    /// Verdicts counted in the current CLOSED spell, oldest first, `true`
    /// for a failure (window mode).
    verdicts: Vec<bool>,
}

/// Which of the three states a `State` is: a transition is a change of it.
fn phase(state: State) -> u8 {
    match state {
        State::Closed { .. } => 0,
        State::Open { .. } => 1,
        State::HalfOpen { .. } => 2,
        // A state this lab does not know is a phase of its own.
        _ => 3,
    }
}

/// A broken law, as the sentence a student reads.
fn broken(rule: Rule, seen: &Seen, expected: &str) -> Result<(), String> {
    Err(format!(
        "{}: expected {expected}, but the breaker went from {} (g{}) to {} (g{}) [{rule}]",
        seen.description, seen.before, seen.generation_before, seen.after, seen.generation_after
    ))
}

/// A state the lab's three do not cover: no law can hold there.
fn unknown(seen: &Seen) -> Result<(), String> {
    broken(
        "B2: the circuit is CLOSED, OPEN or HALF-OPEN, TODO(1)",
        seen,
        "one of the three states",
    )
}

/// Holds when the breaker ended in `state` without a transition.
fn stays(seen: &Seen, state: State, rule: Rule) -> Result<(), String> {
    if seen.after == state && seen.generation_after == seen.generation_before {
        return Ok(());
    }
    broken(rule, seen, &format!("{state} in the same generation"))
}

/// Holds when the breaker moved to `state` in the next generation.
fn moves(seen: &Seen, state: State, rule: Rule) -> Result<(), String> {
    if seen.after == state && seen.generation_after == seen.generation_before + 1 {
        return Ok(());
    }
    broken(rule, seen, &format!("{state} in the next generation"))
}

impl Laws {
    pub fn new(
        threshold: u32,
        cooldown: Duration,
        success_threshold: u32,
        window: Option<WindowConfig>,
    ) -> Laws {
        Laws {
            threshold,
            cooldown,
            success_threshold,
            window,
            history: History::default(),
        }
    }

    /// Checks one observed step against every law that speaks of it, then
    /// remembers what the step changed.
    pub fn judge(&mut self, seen: &Seen) -> Result<(), String> {
        self.a_new_breaker_is_closed_and_clean(seen)?;
        self.every_transition_and_only_a_transition_starts_a_generation(seen)?;
        match seen.op {
            Op::Acquire(_) => self.admission(seen)?,
            Op::Report(_, success) => self.verdict(seen, success)?,
            // A panic is B7's before it is a failure's: a breaker that
            // ignores it has step 4 to do, whichever failure rule then broke.
            Op::Panic(_) => self.verdict(seen, false).map_err(|why| {
                format!(
                    "{why} [B7: a panic while holding a permit counts as a failure (subject to \
                     B6), TODO(4)]"
                )
            })?,
            Op::Drop(_) | Op::Ignore(_) => self.no_verdict(seen)?,
            Op::Advance(_) | Op::ToDeadline | Op::Read => self.time_and_reading(seen)?,
        }
        self.remember(seen);
        Ok(())
    }

    fn a_new_breaker_is_closed_and_clean(&mut self, seen: &Seen) -> Result<(), String> {
        if std::mem::replace(&mut self.history.started, true) {
            return Ok(());
        }
        if seen.before == (State::Closed { failures: 0 }) {
            return Ok(());
        }
        Err(format!(
            "a new breaker is {}, not CLOSED with no failures [B2, TODO(1)]",
            seen.before
        ))
    }

    fn every_transition_and_only_a_transition_starts_a_generation(
        &self,
        seen: &Seen,
    ) -> Result<(), String> {
        let transition = phase(seen.before) != phase(seen.after);
        let next = seen.generation_before + u64::from(transition);
        if seen.generation_after == next {
            return Ok(());
        }
        let expected = if transition {
            format!("g{next}, since the state changed")
        } else {
            format!("g{next}, since the state did not change")
        };
        broken(
            "B6: every transition, and nothing else, starts the next generation, TODO(1), TODO(3)",
            seen,
            &expected,
        )
    }

    /// A request for a permit (B2-B5, B7).
    fn admission(&self, seen: &Seen) -> Result<(), String> {
        let admitted = |generation: u64, rule: Rule| match seen.admission {
            Some(Ok(stamped)) if stamped == generation => Ok(()),
            Some(Ok(stamped)) => broken(
                rule,
                seen,
                &format!("a permit of g{generation}, not one stamped g{stamped}"),
            ),
            other => broken(
                rule,
                seen,
                &format!("a permit, not {:?}", other.and_then(Result::err)),
            ),
        };
        let refused = |rejection: Rejected, rule: Rule| match seen.admission {
            Some(Err(actual)) if actual == rejection => stays(seen, seen.before, rule),
            _ => broken(
                rule,
                seen,
                &format!("the refusal {rejection:?}, not {:?}", seen.admission),
            ),
        };
        let g = seen.generation_before;
        match seen.before {
            State::Closed { .. } => {
                admitted(g, B2_CLOSED_ADMITS)?;
                stays(seen, seen.before, B2_CLOSED_ADMITS)
            }
            State::Open { remaining } if remaining > Duration::ZERO => {
                refused(Rejected::Open { remaining }, B3_OPEN_REFUSES)
            }
            State::Open { .. } => {
                admitted(g + 1, B4_PROBE_AT_DEADLINE)?;
                let probing = State::HalfOpen {
                    probe_in_flight: true,
                };
                moves(seen, probing, B4_PROBE_AT_DEADLINE)
            }
            State::HalfOpen {
                probe_in_flight: true,
            } => refused(Rejected::ProbeInFlight, B5_ONE_PROBE),
            State::HalfOpen {
                probe_in_flight: false,
            } => {
                admitted(g, B7_FREED_SLOT_ADMITS)?;
                let probing = State::HalfOpen {
                    probe_in_flight: true,
                };
                stays(seen, probing, B7_FREED_SLOT_ADMITS)
            }
            _ => unknown(seen),
        }
    }

    /// A success or a failure reported by a permit (a panic is a failure).
    fn verdict(&self, seen: &Seen, success: bool) -> Result<(), String> {
        let current = seen.permit == Some(seen.generation_before);
        let expected = if current {
            Recorded::Counted
        } else {
            Recorded::Stale
        };
        if let Some(recorded) = seen.recorded.filter(|recorded| *recorded != expected) {
            let rule = if current {
                "B9: an outcome of the current generation is counted, TODO(1)"
            } else {
                B6_STALE_CHANGES_NOTHING
            };
            return broken(rule, seen, &format!("{expected:?}, not {recorded:?}"));
        }
        if !current {
            return stays(seen, seen.before, B6_STALE_CHANGES_NOTHING);
        }
        match (seen.before, self.window) {
            (State::Closed { .. }, Some(window)) => self.window_decides(seen, success, window),
            (State::Closed { .. }, None) if success => {
                stays(seen, State::Closed { failures: 0 }, B2_SUCCESS_RESETS)
            }
            (State::Closed { failures }, None) => {
                let counted = State::Closed {
                    failures: failures + 1,
                };
                let rule = B2_FAILURES_OPEN_AT_THRESHOLD;
                if failures + 1 < self.threshold {
                    stays(seen, counted, rule)
                } else {
                    moves(seen, self.opened(seen), rule)
                }
            }
            (State::HalfOpen { .. }, _) if !success => {
                moves(seen, self.opened(seen), B5_PROBE_FAILURE_REOPENS)
            }
            (State::HalfOpen { .. }, _)
                if self.history.good_probes + 1 < self.success_threshold =>
            {
                let waiting = State::HalfOpen {
                    probe_in_flight: false,
                };
                stays(seen, waiting, S1_PROBES_BEFORE_CLOSING)
            }
            (State::HalfOpen { .. }, _) => {
                let rule = if self.success_threshold > 1 {
                    S1_PROBES_BEFORE_CLOSING
                } else {
                    B5_PROBE_SUCCESS_CLOSES
                };
                moves(seen, State::Closed { failures: 0 }, rule)
            }
            (State::Open { .. }, _) => broken(
                B6_STALE_CHANGES_NOTHING,
                seen,
                "no permit of the current generation while OPEN: opening starts a generation, \
                 and OPEN admits nobody",
            ),
            _ => unknown(seen),
        }
    }

    /// In window mode, CLOSED decides on the failure share of the last
    /// `size` verdicts counted since it closed (W1).
    fn window_decides(
        &self,
        seen: &Seen,
        success: bool,
        window: WindowConfig,
    ) -> Result<(), String> {
        let mut verdicts = self.history.verdicts.clone();
        verdicts.push(!success);
        let last = &verdicts[verdicts.len().saturating_sub(window.size as usize)..];
        let failures = last.iter().filter(|failed| **failed).count();
        let opens = last.len() >= window.minimum as usize
            && failures as f64 / last.len() as f64 >= window.failure_rate;
        let rule = if success {
            W1_SUCCESS_ENTERS_WINDOW
        } else {
            W1_WINDOW_OPENS
        };
        if opens {
            moves(seen, self.opened(seen), rule)
        } else {
            let failures = failures as u32;
            stays(seen, State::Closed { failures }, rule)
        }
    }

    /// A permit given back without a verdict: dropped, or its outcome
    /// ignored (B7, K1).
    fn no_verdict(&self, seen: &Seen) -> Result<(), String> {
        let rule = match seen.op {
            Op::Ignore(_) => K1_IGNORED_RECORDS_NOTHING,
            _ => B7_DROP_RECORDS_NOTHING,
        };
        let probing = State::HalfOpen {
            probe_in_flight: true,
        };
        if seen.before == probing && seen.permit == Some(seen.generation_before) {
            let waiting = State::HalfOpen {
                probe_in_flight: false,
            };
            return stays(seen, waiting, rule);
        }
        stays(seen, seen.before, rule)
    }

    /// Time passing, or someone reading: only OPEN's remaining time moves,
    /// and never past its deadline (B3, B4: the probe is an attempt, not a
    /// timer; B10: reading changes nothing).
    fn time_and_reading(&self, seen: &Seen) -> Result<(), String> {
        let rule = match seen.op {
            Op::Read => "B10: reading the state changes nothing",
            _ => {
                "B3, B4: time alone only shortens OPEN's remaining cooldown; the probe is the next attempt, TODO(2)"
            }
        };
        let expected = match seen.before {
            State::Open { .. } => State::Open {
                remaining: self.remaining(seen.now),
            },
            other => other,
        };
        stays(seen, expected, rule)
    }

    /// OPEN as it must look right after opening now: a whole cooldown left,
    /// or all of time when its end cannot be represented (B1).
    fn opened(&self, seen: &Seen) -> State {
        let remaining = match seen.now.checked_add(self.cooldown) {
            Some(_) => self.cooldown,
            None => Duration::MAX,
        };
        State::Open { remaining }
    }

    /// What is left of the current OPEN spell at `now`.
    fn remaining(&self, now: Duration) -> Duration {
        self.history
            .reopens_at
            .map_or(Duration::MAX, |at| at.saturating_sub(now))
    }

    /// Records what the step changed, now that it obeyed the laws.
    fn remember(&mut self, seen: &Seen) {
        let history = &mut self.history;
        let transition = seen.generation_after != seen.generation_before;
        match seen.after {
            State::Open { .. } if transition => {
                history.reopens_at = seen.now.checked_add(self.cooldown);
            }
            State::HalfOpen { .. } if transition => history.good_probes = 0,
            State::Closed { .. } if transition => history.verdicts.clear(),
            _ => {}
        }
        let counted = !transition && seen.recorded == Some(Recorded::Counted);
        match (seen.op, seen.after) {
            (Op::Report(_, success), State::Closed { .. }) if counted => {
                history.verdicts.push(!success);
            }
            (Op::Report(_, true), State::HalfOpen { .. }) if counted => history.good_probes += 1,
            _ => {}
        }
        // A panic's verdict is not returned to anyone, so the history sees
        // it through the state: in CLOSED it is a failure that did not open.
        if let (Op::Panic(_), State::Closed { .. }) = (seen.op, seen.after) {
            if !transition && seen.permit == Some(seen.generation_before) {
                history.verdicts.push(true);
            }
        }
    }
}
