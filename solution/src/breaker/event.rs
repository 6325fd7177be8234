//! One stream of everything a breaker and its retry loop decide (rules
//! O1-O6), for logs, traces, metrics and tests.
//!
//! A transition hook hears the circuit change state; an event sink hears
//! every decision on the way there: each admission and refusal, each
//! outcome and whether it counted or was fenced off as stale, each attempt,
//! backoff and the way a call ended.

use std::any::Any;
use std::fmt;
use std::time::Duration;

use crate::breaker::circuit::Recorded;
use crate::breaker::state::Phase;
use crate::breaker::transition::{Generation, Transition};
use crate::breaker::verdict::Verdict;
use crate::error::{GaveUp, Rejected};

/// Where a breaker tells its [`Event`]s.
pub(crate) type EventSink = Box<dyn Fn(&Event) + Send + Sync>;

/// One decision of a breaker or of its retry loop, as told to the sink of
/// [`RetryBreaker::with_event_sink`](crate::RetryBreaker::with_event_sink).
///
/// Small and `Copy`, so a sink can keep it as it is. Non-exhaustive: a
/// later version may tell more, so a `match` on it needs a `_` arm.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use std::time::Duration;
/// use retry_breaker_solution::{Event, ManualClock, Phase, Recorded, RetryBreaker, Verdict};
///
/// let told = Arc::new(Mutex::new(Vec::new()));
/// let log = Arc::clone(&told);
/// let breaker = RetryBreaker::new(1, Duration::from_secs(5), ManualClock::new())?
///     .with_event_sink(move |event| log.lock().unwrap().push(*event));
///
/// let permit = breaker.try_acquire()?;
/// let generation = permit.generation();
/// permit.failure();
///
/// let told = told.lock().unwrap();
/// assert_eq!(told[0], Event::Admitted { generation, probe: false });
/// // A transition comes before the outcome that made it (O2).
/// assert!(matches!(told[1], Event::Transition(t) if t.to == Phase::Open));
/// assert_eq!(
///     told[2],
///     Event::Recorded { generation, verdict: Verdict::Failure, recorded: Recorded::Counted },
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// An attempt was admitted in `generation`; `probe` when it is the
    /// HALF-OPEN circuit's probe.
    Admitted {
        /// The generation its outcome will be counted in.
        generation: Generation,
        /// Whether the attempt is the probe that decides a HALF-OPEN circuit.
        probe: bool,
    },
    /// An attempt was refused, for this reason; the dependency was not
    /// called and nothing was counted.
    Rejected(Rejected),
    /// The outcome of an attempt admitted in `generation` was reported:
    /// counted, or fenced off as stale because the circuit has changed
    /// state since (B6).
    Recorded {
        /// The generation the attempt was admitted in.
        generation: Generation,
        /// [`Verdict::Success`] or [`Verdict::Failure`].
        verdict: Verdict,
        /// Whether it counted.
        recorded: Recorded,
    },
    /// An attempt admitted in `generation` was given back with no verdict:
    /// its permit was dropped unreported or reported as
    /// [`Verdict::Ignored`] (B7, K1).
    Released {
        /// The generation the attempt was admitted in.
        generation: Generation,
    },
    /// The circuit changed state.
    Transition(Transition),
    /// The retry loop called its task for attempt `attempt` (from 1).
    AttemptStarted {
        /// The attempt's number within its call.
        attempt: u32,
    },
    /// Attempt `attempt` failed and the call will wait `delay` before the
    /// next one.
    Backoff {
        /// The attempt that failed.
        attempt: u32,
        /// The wait the backoff chose.
        delay: Duration,
    },
    /// The call gave up after attempt `attempt`, for `reason`.
    GaveUp {
        /// The last attempt made.
        attempt: u32,
        /// Why there was no retry.
        reason: GaveUp,
    },
    /// The call was cancelled after `attempts_made` attempts.
    Cancelled {
        /// How many attempts ran before the cancellation.
        attempts_made: u32,
    },
    // BEGIN SOLUTION ONLY: the durations of attempts and calls (O9)
    /// Attempt `attempt` of a call of `execute` ran for `elapsed` on the
    /// breaker's clock, from the call of its task to its outcome, whose
    /// verdict was `verdict`; told right after that outcome is recorded
    /// (O9). An attempt cut short (its task panicked, or the call was
    /// dropped while it ran) is not timed.
    AttemptEnded {
        /// The attempt's number within its call.
        attempt: u32,
        /// How long it ran.
        elapsed: Duration,
        /// What its outcome counted as.
        verdict: Verdict,
    },
    /// A call of `execute` returned after `elapsed` on the breaker's clock,
    /// backoff pauses included, having made `attempts` attempts; `ok` when
    /// it returned `Ok`. Told last, after how it ended (O9).
    CallEnded {
        /// How many attempts it made (0 when the first was refused).
        attempts: u32,
        /// How long it took.
        elapsed: Duration,
        /// Whether it returned `Ok`.
        ok: bool,
    },
    // END SOLUTION ONLY
}

impl Event {
    /// The event's name, the same for every event of its kind, for logs and
    /// metric labels: `admitted`, `rejected`, `recorded`, `released`,
    /// `circuit_opened`, `circuit_half_opened`, `circuit_closed`,
    /// `attempt_started`, `backoff`, `gave_up`, `cancelled` (and, in the
    /// solution, `attempt_ended` and `call_ended`).
    ///
    /// ```
    /// use retry_breaker_solution::Event;
    ///
    /// assert_eq!(Event::AttemptStarted { attempt: 2 }.name(), "attempt_started");
    /// ```
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Event::Admitted { .. } => "admitted",
            Event::Rejected(_) => "rejected",
            Event::Recorded { .. } => "recorded",
            Event::Released { .. } => "released",
            Event::Transition(transition) => match transition.to {
                Phase::Open => "circuit_opened",
                Phase::HalfOpen => "circuit_half_opened",
                _ => "circuit_closed",
            },
            Event::AttemptStarted { .. } => "attempt_started",
            Event::Backoff { .. } => "backoff",
            Event::GaveUp { .. } => "gave_up",
            Event::Cancelled { .. } => "cancelled",
            // BEGIN SOLUTION ONLY: the durations of attempts and calls (O9)
            Event::AttemptEnded { .. } => "attempt_ended",
            Event::CallEnded { .. } => "call_ended",
            // END SOLUTION ONLY
        }
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Admitted { generation, probe } => {
                let probe = if *probe { " as the probe" } else { "" };
                write!(f, "admitted in {generation}{probe}")
            }
            Event::Rejected(rejection) => write!(f, "rejected: {rejection}"),
            Event::Recorded {
                generation,
                verdict,
                recorded,
            } => {
                let how = match recorded {
                    Recorded::Counted => "counted",
                    Recorded::Stale => "stale, not counted",
                };
                write!(f, "{verdict:?} of {generation} {how}")
            }
            Event::Released { generation } => {
                write!(f, "attempt of {generation} given back with no verdict")
            }
            Event::Transition(transition) => write!(f, "transition {transition}"),
            Event::AttemptStarted { attempt } => write!(f, "attempt {attempt} started"),
            Event::Backoff { attempt, delay } => {
                write!(f, "attempt {attempt} failed; waiting {delay:?}")
            }
            Event::GaveUp { attempt, reason } => {
                write!(f, "gave up after attempt {attempt}: {reason}")
            }
            Event::Cancelled { attempts_made } => {
                write!(f, "cancelled after {attempts_made} attempt(s)")
            }
            // BEGIN SOLUTION ONLY: the durations of attempts and calls (O9)
            Event::AttemptEnded {
                attempt,
                elapsed,
                verdict,
            } => write!(f, "attempt {attempt} ended after {elapsed:?}: {verdict:?}"),
            Event::CallEnded {
                attempts,
                elapsed,
                ok: true,
            } => write!(
                f,
                "call ended after {elapsed:?} and {attempts} attempt(s): Ok"
            ),
            Event::CallEnded {
                attempts, elapsed, ..
            } => write!(
                f,
                "call ended after {elapsed:?} and {attempts} attempt(s): Err"
            ),
            // END SOLUTION ONLY
        }
    }
}

/// A panic of the sink while it was told that an attempt started: the
/// attempt's runner gives the attempt back with no verdict, since the
/// dependency was never called, and goes on with the sink's own panic
/// (O4).
pub(crate) struct SinkPanic(pub(crate) Box<dyn Any + Send>);

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::Event;
    use crate::breaker::circuit::Recorded;
    use crate::breaker::state::Phase;
    use crate::breaker::transition::{Generation, Transition};
    use crate::breaker::verdict::Verdict;
    use crate::error::{GaveUp, Rejected};

    #[test]
    fn each_event_has_its_name_and_its_sentence() {
        let g = Generation::default().next();
        let ms = Duration::from_millis;
        let to = |from, to| Event::Transition(Transition::new(from, to, ms(5), g));
        let cases = [
            (
                Event::Admitted {
                    generation: g,
                    probe: false,
                },
                "admitted",
                "admitted in g1",
            ),
            (
                Event::Admitted {
                    generation: g,
                    probe: true,
                },
                "admitted",
                "admitted in g1 as the probe",
            ),
            (
                Event::Rejected(Rejected::ProbeInFlight),
                "rejected",
                "rejected: the circuit is half-open and its single probe is still in flight, \
                 so the attempt was refused without calling the dependency",
            ),
            (
                Event::Recorded {
                    generation: g,
                    verdict: Verdict::Failure,
                    recorded: Recorded::Counted,
                },
                "recorded",
                "Failure of g1 counted",
            ),
            (
                Event::Recorded {
                    generation: g,
                    verdict: Verdict::Success,
                    recorded: Recorded::Stale,
                },
                "recorded",
                "Success of g1 stale, not counted",
            ),
            (
                Event::Released { generation: g },
                "released",
                "attempt of g1 given back with no verdict",
            ),
            (
                to(Phase::Closed, Phase::Open),
                "circuit_opened",
                "transition t=5ms CLOSED -> OPEN (g1)",
            ),
            (
                to(Phase::Open, Phase::HalfOpen),
                "circuit_half_opened",
                "transition t=5ms OPEN -> HALF-OPEN (g1)",
            ),
            (
                to(Phase::HalfOpen, Phase::Closed),
                "circuit_closed",
                "transition t=5ms HALF-OPEN -> CLOSED (g1)",
            ),
            (
                Event::AttemptStarted { attempt: 2 },
                "attempt_started",
                "attempt 2 started",
            ),
            (
                Event::Backoff {
                    attempt: 2,
                    delay: ms(40),
                },
                "backoff",
                "attempt 2 failed; waiting 40ms",
            ),
            (
                Event::GaveUp {
                    attempt: 3,
                    reason: GaveUp::NoAttemptsLeft,
                },
                "gave_up",
                "gave up after attempt 3: no attempts were left",
            ),
            (
                Event::Cancelled { attempts_made: 1 },
                "cancelled",
                "cancelled after 1 attempt(s)",
            ),
            // BEGIN SOLUTION ONLY: the durations of attempts and calls (O9)
            (
                Event::AttemptEnded {
                    attempt: 2,
                    elapsed: ms(40),
                    verdict: Verdict::Failure,
                },
                "attempt_ended",
                "attempt 2 ended after 40ms: Failure",
            ),
            (
                Event::CallEnded {
                    attempts: 3,
                    elapsed: ms(90),
                    ok: true,
                },
                "call_ended",
                "call ended after 90ms and 3 attempt(s): Ok",
            ),
            (
                Event::CallEnded {
                    attempts: 0,
                    elapsed: ms(0),
                    ok: false,
                },
                "call_ended",
                "call ended after 0ns and 0 attempt(s): Err",
            ),
            // END SOLUTION ONLY
        ];
        for (event, name, sentence) in cases {
            assert_eq!(
                (event.name(), event.to_string()),
                (name, sentence.to_owned())
            );
        }
    }
}
