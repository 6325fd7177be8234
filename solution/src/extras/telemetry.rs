// SOLUTION ONLY FILE: production adapters for the event stream, never on the student's build path
//! Adapters from the [`Event`](crate::Event) stream to the ecosystem's telemetry, each
//! behind its cargo feature and off by default, so the core lab never
//! compiles them (rules O7-O8).
//!
//! Each adapter is a plain function of a breaker's name and an event, so it
//! goes wherever a sink goes, alone or beside others:
//!
//! ```
//! # #[cfg(all(feature = "tracing", feature = "metrics"))] {
//! use std::time::Duration;
//! use retry_breaker_solution::{telemetry, ManualClock, Registry, RetryBreaker};
//!
//! let settings = RetryBreaker::builder().threshold(5).cooldown(Duration::from_secs(30));
//! let registry: Registry<String, _> = Registry::new(settings, ManualClock::new())?
//!     .with_event_sink(|route: &String, event| {
//!         telemetry::trace(route, event);
//!         telemetry::meter(route, event);
//!     });
//! registry.breaker("/charges").try_acquire()?.success();
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The names follow Polly's telemetry, so that dashboards built for it
//! carry over: one events counter whose `event.name` label tells the kind,
//! with the breaker's name as a label, and the attempt's ordinal as
//! OpenTelemetry's `http.request.resend_count`. A stale outcome, fenced off
//! by its generation (B6), is labelled `stale="true"`.

#[cfg(feature = "metrics")]
use std::fmt;

#[cfg(feature = "tracing")]
pub use self::tracing_adapter::trace;
#[cfg(feature = "tracing")]
pub(crate) use self::tracing_adapter::{attempt_spans, call_span};

#[cfg(feature = "metrics")]
pub use self::metrics_adapter::{ATTEMPT_DURATION, BACKOFF, CALL_DURATION, EVENTS, STATE, meter};

use crate::breaker::circuit::Recorded;
use crate::breaker::state::Phase;
use crate::breaker::verdict::Verdict;
use crate::error::{GaveUp, Rejected};

/// A refusal's reason as a label: `open`, `probe_in_flight`, `full`.
fn rejection(rejection: &Rejected) -> &'static str {
    match rejection {
        Rejected::Open { .. } => "open",
        Rejected::ProbeInFlight => "probe_in_flight",
        Rejected::Full { .. } => "full",
    }
}

/// Why a call gave up, as a label.
fn gave_up(reason: &GaveUp) -> &'static str {
    match reason {
        GaveUp::NoAttemptsLeft => "no_attempts_left",
        GaveUp::NotRetryable => "not_retryable",
        GaveUp::NoCopyLeft => "no_copy_left",
        GaveUp::RetryBudgetSpent => "retry_budget_spent",
    }
}

/// A verdict as a label.
fn verdict(verdict: &Verdict) -> &'static str {
    match verdict {
        Verdict::Success => "success",
        Verdict::Failure => "failure",
        Verdict::Ignored => "ignored",
    }
}

/// Whether an outcome was fenced off, as a label.
fn stale(recorded: &Recorded) -> &'static str {
    match recorded {
        Recorded::Counted => "false",
        Recorded::Stale => "true",
    }
}

/// A phase as a label: `closed`, `open`, `half_open`.
fn phase(phase: Phase) -> &'static str {
    match phase {
        Phase::Closed => "closed",
        Phase::Open => "open",
        Phase::HalfOpen => "half_open",
    }
}

#[cfg(feature = "tracing")]
mod tracing_adapter {
    use std::fmt;
    use std::future::Future;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use pin_project_lite::pin_project;
    use tracing::field::Empty;
    use tracing::instrument::{Instrument, Instrumented};
    use tracing::{Span, debug, debug_span, info, trace as trace_event, warn};

    use super::{gave_up, phase, rejection, stale, verdict};
    use crate::breaker::event::Event;

    /// A call of `execute` on a breaker with a sink, as the `tracing` span
    /// `retry_breaker.call`: the parent of its attempts' spans and of the
    /// events told while it runs (O7, gRPC's A45: a span per call).
    pub(crate) fn call_span<F: Future>(call: F) -> Instrumented<F> {
        call.instrument(debug_span!("retry_breaker.call"))
    }

    /// `task`, each of whose attempts runs in a child span,
    /// `retry_breaker.attempt`, with its ordinal as `attempt` and as
    /// OpenTelemetry's `http.request.resend_count` (O7). The span is entered
    /// while the task is called, so that the attempt's start is told inside
    /// it, and while its future runs; once that future is done, the span
    /// stays entered until the attempt's runner lets the future go, so the
    /// outcome is reported inside it too, and [`trace`] records its
    /// `generation`, `verdict` and `stale` on the span.
    pub(crate) fn attempt_spans<Fut: Future>(
        mut task: impl FnMut() -> Fut,
    ) -> impl FnMut() -> InAttemptSpan<Fut> {
        let mut attempt: u32 = 0;
        move || {
            attempt = attempt.saturating_add(1);
            let span = debug_span!(
                "retry_breaker.attempt",
                attempt,
                http.request.resend_count = attempt - 1,
                generation = Empty,
                verdict = Empty,
                stale = Empty,
            );
            let attempt = span.in_scope(&mut task);
            InAttemptSpan {
                attempt,
                span: Held { span, held: false },
            }
        }
    }

    pin_project! {
        /// An attempt's future, run inside its span, which it holds
        /// entered from the moment the attempt is done until it is dropped.
        pub(crate) struct InAttemptSpan<Fut> {
            #[pin]
            attempt: Fut,
            span: Held,
        }
    }

    impl<Fut: Future> Future for InAttemptSpan<Fut> {
        type Output = Fut::Output;

        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Fut::Output> {
            let this = self.project();
            let outcome = this.span.span.in_scope(|| this.attempt.poll(cx));
            if outcome.is_ready() {
                // The runner reports the outcome right after this poll and
                // drops the future in the same poll of the call, before any
                // other task can run on this thread: the span is entered
                // for exactly that report. (A `Span::entered` guard would
                // do the same, but is not `Send`, and this future must be.)
                this.span.hold();
            }
            outcome
        }
    }

    /// An attempt's span, and whether this future holds it entered.
    pub(crate) struct Held {
        span: Span,
        held: bool,
    }

    impl Held {
        fn hold(&mut self) {
            if !self.held {
                self.held = true;
                self.span
                    .with_subscriber(|(id, dispatch)| dispatch.enter(id));
            }
        }
    }

    impl Drop for Held {
        fn drop(&mut self) {
            if self.held {
                self.span
                    .with_subscriber(|(id, dispatch)| dispatch.exit(id));
            }
        }
    }

    /// Tells `event` of the breaker `breaker` to `tracing`, as one event
    /// with the breaker's name and the event's fields (O7): transitions at
    /// `INFO`, calls that gave up at `WARN`, refusals, outcomes, attempts,
    /// backoffs and cancellations at `DEBUG`, admissions at `TRACE`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use retry_breaker_solution::{telemetry, ManualClock, RetryBreaker};
    ///
    /// let breaker = RetryBreaker::new(5, Duration::from_secs(30), ManualClock::new())?
    ///     .with_event_sink(|event| telemetry::trace(&"payments", event));
    /// breaker.try_acquire()?.success();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    // Contract: O7.
    pub fn trace(breaker: &impl fmt::Display, event: &Event) {
        let name = event.name();
        match event {
            Event::Admitted { generation, probe } => trace_event!(
                breaker = %breaker, event.name = name, generation = generation.get(), probe
            ),
            Event::Rejected(refusal) => debug!(
                breaker = %breaker,
                event.name = name,
                reason = rejection(refusal),
                remaining_ms = refusal.remaining().as_secs_f64() * 1e3,
            ),
            Event::Recorded {
                generation,
                verdict: outcome,
                recorded,
            } => {
                debug!(
                    breaker = %breaker,
                    event.name = name,
                    generation = generation.get(),
                    verdict = verdict(outcome),
                    stale = stale(recorded),
                );
                // Told inside its attempt's span when `execute` made the
                // attempt: the span carries how the attempt ended.
                let span = Span::current();
                if span.metadata().map(|meta| meta.name()) == Some("retry_breaker.attempt") {
                    span.record("generation", generation.get());
                    span.record("verdict", verdict(outcome));
                    span.record("stale", stale(recorded));
                }
            }
            Event::Released { generation } => {
                debug!(breaker = %breaker, event.name = name, generation = generation.get());
            }
            Event::Transition(transition) => info!(
                breaker = %breaker,
                event.name = name,
                from = phase(transition.from),
                to = phase(transition.to),
                generation = transition.generation.get(),
            ),
            Event::AttemptStarted { attempt } => debug!(
                breaker = %breaker,
                event.name = name,
                attempt,
                http.request.resend_count = attempt.saturating_sub(1),
            ),
            Event::Backoff { attempt, delay } => debug!(
                breaker = %breaker,
                event.name = name,
                attempt,
                delay_ms = delay.as_secs_f64() * 1e3,
            ),
            Event::GaveUp { attempt, reason } => warn!(
                breaker = %breaker,
                event.name = name,
                attempt,
                reason = gave_up(reason),
            ),
            Event::Cancelled { attempts_made } => {
                debug!(breaker = %breaker, event.name = name, attempts_made);
            }
            Event::AttemptEnded {
                attempt,
                elapsed,
                verdict: outcome,
            } => debug!(
                breaker = %breaker,
                event.name = name,
                attempt,
                elapsed_ms = elapsed.as_secs_f64() * 1e3,
                verdict = verdict(outcome),
            ),
            Event::CallEnded {
                attempts,
                elapsed,
                ok,
            } => debug!(
                breaker = %breaker,
                event.name = name,
                attempts,
                elapsed_ms = elapsed.as_secs_f64() * 1e3,
                ok,
            ),
        }
    }
}

#[cfg(feature = "metrics")]
mod metrics_adapter {
    use super::{fmt, gave_up, phase, rejection, stale, verdict};
    use crate::breaker::event::Event;
    use crate::breaker::state::Phase;

    /// The counter of every event, labelled `breaker`, `event.name` and, by
    /// kind, `reason` (refusals and calls that gave up), `verdict` and
    /// `stale` (outcomes), `to` (transitions), `verdict` (attempts that
    /// ended) and `outcome` (calls that ended).
    pub const EVENTS: &str = "resilience.breaker.events";
    /// The gauge of each breaker's state, labelled `breaker`: 0 CLOSED,
    /// 1 HALF-OPEN, 2 OPEN, set at each transition.
    pub const STATE: &str = "resilience.breaker.state";
    /// The histogram of the delays backoff chose, in seconds, labelled
    /// `breaker`.
    pub const BACKOFF: &str = "resilience.breaker.backoff";
    /// The histogram of how long attempts ran, in seconds on the breaker's
    /// clock, labelled `breaker` and `verdict` (Polly's attempt duration).
    pub const ATTEMPT_DURATION: &str = "resilience.breaker.attempt.duration";
    /// The histogram of how long calls took, in seconds on the breaker's
    /// clock, backoff included, labelled `breaker` and `outcome` (`ok` or
    /// `error`; Polly's pipeline duration).
    pub const CALL_DURATION: &str = "resilience.breaker.call.duration";

    /// Counts `event` of the breaker `breaker` with the `metrics` facade
    /// (O8), which costs nothing until a recorder is installed: [`EVENTS`]
    /// for every event, [`STATE`] at each transition, [`BACKOFF`] for each
    /// backoff, [`ATTEMPT_DURATION`] and [`CALL_DURATION`] as attempts and
    /// calls of `execute` end (O9).
    ///
    /// ```
    /// use std::time::Duration;
    /// use retry_breaker_solution::{telemetry, ManualClock, RetryBreaker};
    ///
    /// let breaker = RetryBreaker::new(5, Duration::from_secs(30), ManualClock::new())?
    ///     .with_event_sink(|event| telemetry::meter(&"payments", event));
    /// breaker.try_acquire()?.failure();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    // Contract: O8.
    pub fn meter(breaker: &impl fmt::Display, event: &Event) {
        let breaker = breaker.to_string();
        let mut labels = vec![
            ("breaker", breaker.clone()),
            ("event.name", event.name().to_owned()),
        ];
        match event {
            Event::Rejected(refusal) => labels.push(("reason", rejection(refusal).to_owned())),
            Event::Recorded {
                verdict: outcome,
                recorded,
                ..
            } => {
                labels.push(("verdict", verdict(outcome).to_owned()));
                labels.push(("stale", stale(recorded).to_owned()));
            }
            Event::Transition(transition) => {
                labels.push(("to", phase(transition.to).to_owned()));
                let level = match transition.to {
                    Phase::Closed => 0.0,
                    Phase::HalfOpen => 1.0,
                    Phase::Open => 2.0,
                };
                metrics::gauge!(STATE, "breaker" => breaker.clone()).set(level);
            }
            Event::Backoff { delay, .. } => {
                metrics::histogram!(BACKOFF, "breaker" => breaker.clone())
                    .record(delay.as_secs_f64());
            }
            Event::GaveUp { reason, .. } => labels.push(("reason", gave_up(reason).to_owned())),
            Event::AttemptEnded {
                elapsed,
                verdict: outcome,
                ..
            } => {
                let outcome = verdict(outcome);
                labels.push(("verdict", outcome.to_owned()));
                metrics::histogram!(ATTEMPT_DURATION, "breaker" => breaker.clone(), "verdict" => outcome)
                    .record(elapsed.as_secs_f64());
            }
            Event::CallEnded { elapsed, ok, .. } => {
                let outcome = if *ok { "ok" } else { "error" };
                labels.push(("outcome", outcome.to_owned()));
                metrics::histogram!(CALL_DURATION, "breaker" => breaker.clone(), "outcome" => outcome)
                    .record(elapsed.as_secs_f64());
            }
            _ => {}
        }
        metrics::counter!(EVENTS, &labels).increment(1);
    }
}
