//! What happened during a scenario, row by row, as the demo prints it and
//! the tests check it.
//!
//! A checkout's rows are drawn from the breaker's event stream (O1): an
//! attempt's row is opened when the breaker tells that it admitted the
//! attempt (marked as the probe if it was admitted as one) or refused it,
//! and given its backoff when the retry loop tells it; the circuit's
//! changes are the stream's transitions. Only what the breaker cannot know
//! comes from the checkout: the gateway's answer (a charge id, or the
//! error) and how long the request took.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::client::ChargeError;
use crate::kit::{Event, Rejected, State, Transition};

/// How one row of the timeline turned out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The gateway charged the order; its charge id.
    Charged(String),
    /// The gateway answered that the request is invalid. Not retried.
    Declined(ChargeError),
    /// The request failed; `retry_in` is the backoff before the next
    /// attempt, if there is one.
    Failed {
        /// What went wrong.
        error: ChargeError,
        /// The pause before the retry, or `None` if the call gave up.
        retry_in: Option<Duration>,
    },
    /// The breaker refused the attempt: no request was sent.
    Refused(Rejected),
    /// The attempt started and has no answer: still in flight, or its call
    /// was cancelled before the gateway answered.
    Unanswered,
    /// Something worth saying that is not an attempt.
    Note(String),
}

/// The breaker's state after a row's event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateAfter {
    /// The call did not go through a breaker, or the row is a note.
    NoBreaker,
    /// The attempt has not been reported to the breaker yet; filled in as
    /// soon as it has.
    Awaiting,
    /// The state the breaker was left in.
    Known(State),
}

/// One event of a scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// When it happened (an attempt: when it started), from the start of
    /// the scenario.
    pub at: Duration,
    /// Who made the call: an order, or the settlement worker.
    pub call: String,
    /// The attempt within the call, from 1.
    pub attempt: Option<u32>,
    /// Whether the attempt was the half-open probe.
    pub probe: bool,
    /// What happened.
    pub outcome: Outcome,
    /// How long the attempt (or the refused call) took.
    pub took: Option<Duration>,
    /// The breaker's state afterwards.
    pub state_after: StateAfter,
}

impl Row {
    /// Whether this row is an HTTP request that reached the gateway.
    pub fn is_request(&self) -> bool {
        matches!(
            self.outcome,
            Outcome::Charged(_) | Outcome::Declined(_) | Outcome::Failed { .. }
        )
    }

    /// Whether this row is an attempt the breaker refused.
    pub fn is_refusal(&self) -> bool {
        matches!(self.outcome, Outcome::Refused(_))
    }

    /// Whether this row is a request that ran out of time.
    pub fn is_timeout(&self) -> bool {
        matches!(&self.outcome, Outcome::Failed { error, .. } if error.is_timeout())
    }
}

/// Where the breaker is in the call an event is told during.
#[derive(Debug, Clone, Copy)]
pub struct InCall<'a> {
    /// The call, as the timeline names it.
    pub call: &'a str,
    /// The attempt the breaker answered last, admitted or refused, from 1.
    pub attempt: u32,
    /// When the call started.
    pub started: Instant,
}

/// A shared, append-only record of a scenario. Clones share one record.
#[derive(Debug, Clone)]
pub struct Timeline {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    start: Instant,
    rows: Mutex<Vec<Row>>,
    transitions: Mutex<Vec<Transition>>,
}

impl Timeline {
    /// An empty timeline whose clock starts now.
    pub fn start() -> Self {
        Timeline {
            inner: Arc::new(Inner {
                start: Instant::now(),
                rows: Mutex::default(),
                transitions: Mutex::default(),
            }),
        }
    }

    /// Time since the timeline started.
    pub fn elapsed(&self) -> Duration {
        self.inner.start.elapsed()
    }

    /// Records an attempt of `call` made without a breaker, which has just
    /// ended after `took`. (A call through the breaker is recorded from its
    /// events: see [`told`](Self::told).)
    pub fn attempt(
        &self,
        call: &str,
        attempt: u32,
        probe: bool,
        outcome: Outcome,
        took: Option<Duration>,
        state_after: StateAfter,
    ) {
        let now = self.elapsed();
        self.push(Row {
            at: now.saturating_sub(took.unwrap_or_default()),
            call: call.to_owned(),
            attempt: Some(attempt),
            probe,
            outcome,
            took,
            state_after,
        });
    }

    /// Takes in one event of the breaker's stream, told during the call
    /// `during` (or outside any call, with `None`).
    ///
    /// Events the timeline has no column for (outcomes recorded, permits
    /// given back, a call that gives up) change nothing: the row already
    /// says what became of the attempt.
    pub fn told(&self, during: Option<InCall<'_>>, event: &Event) {
        match (event, during) {
            (Event::Transition(transition), _) => self.transition(*transition),
            (Event::Admitted { probe, .. }, Some(during)) => self.push(Row {
                at: self.elapsed(),
                call: during.call.to_owned(),
                attempt: Some(during.attempt),
                probe: *probe,
                outcome: Outcome::Unanswered,
                took: None,
                state_after: StateAfter::Awaiting,
            }),
            (Event::Rejected(rejection), Some(during)) => {
                // Only a first-attempt refusal measures a whole call that the
                // breaker turned away; a later one follows real requests.
                let took = (during.attempt == 1).then(|| during.started.elapsed());
                self.push(Row {
                    at: self.elapsed().saturating_sub(took.unwrap_or_default()),
                    call: during.call.to_owned(),
                    attempt: Some(during.attempt),
                    probe: false,
                    outcome: Outcome::Refused(*rejection),
                    took,
                    state_after: StateAfter::Awaiting,
                });
            }
            (Event::Backoff { attempt, delay }, Some(during)) => {
                self.update_attempt(during.call, *attempt, |row| {
                    if let Outcome::Failed { retry_in, .. } = &mut row.outcome {
                        *retry_in = Some(*delay);
                    }
                });
            }
            _ => {}
        }
    }

    /// Gives the attempt `attempt` of `call`, opened by the event stream,
    /// the gateway's answer, which took `took`.
    pub fn answered(&self, call: &str, attempt: u32, outcome: Outcome, took: Duration) {
        self.update_attempt(call, attempt, |row| {
            row.outcome = outcome;
            row.took = Some(took);
        });
    }

    /// Records a remark about `call` (or about the scenario, with `""`).
    pub fn note(&self, call: &str, text: impl Into<String>) {
        self.push(Row {
            at: self.elapsed(),
            call: call.to_owned(),
            attempt: None,
            probe: false,
            outcome: Outcome::Note(text.into()),
            took: None,
            state_after: StateAfter::NoBreaker,
        });
    }

    /// Gives every attempt still awaiting its verdict the breaker's `state`.
    ///
    /// The retry loop reports an attempt to the breaker after the attempt's
    /// future has finished, so the attempt cannot see the state it leaves
    /// behind. The checkout calls this as soon as that report has happened:
    /// when the loop asks for the backoff before a retry, or when the call
    /// returns.
    pub fn fill_states(&self, state: State) {
        for row in self.rows_guard().iter_mut() {
            if row.state_after == StateAfter::Awaiting {
                row.state_after = StateAfter::Known(state);
            }
        }
    }

    /// Records a state change of the breaker.
    fn transition(&self, transition: Transition) {
        lock(&self.inner.transitions).push(transition);
    }

    /// Every row so far, in order.
    pub fn rows(&self) -> Vec<Row> {
        self.rows_guard().clone()
    }

    /// Every state change of the breaker so far, in order.
    pub fn transitions(&self) -> Vec<Transition> {
        lock(&self.inner.transitions).clone()
    }

    fn push(&self, row: Row) {
        self.rows_guard().push(row);
    }

    /// Changes the row of attempt `attempt` of `call`.
    fn update_attempt(&self, call: &str, attempt: u32, change: impl FnOnce(&mut Row)) {
        let mut rows = self.rows_guard();
        let row = rows
            .iter_mut()
            .rev()
            .find(|row| row.call == call && row.attempt == Some(attempt));
        if let Some(row) = row {
            change(row);
        }
    }

    fn rows_guard(&self) -> MutexGuard<'_, Vec<Row>> {
        lock(&self.inner.rows)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Rows are only ever appended or updated in place one field at a time,
    // so a panic elsewhere cannot leave the record half-written.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
