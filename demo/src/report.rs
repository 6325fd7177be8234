//! A scenario's printed report: its timeline as a table, and a summary line
//! with the numbers that matter.

use std::fmt;
use std::time::Duration;

use crate::gateway::GatewayStats;
use crate::kit::{Rejected, State, Transition};
use crate::orders::BookCounts;
use crate::timeline::{Outcome, Row, StateAfter};

/// The numbers of one scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// Payment calls made (customers and settlement worker alike).
    pub calls: u32,
    /// Charge requests that reached the gateway, as the gateway counted them.
    pub requests: u64,
    /// Attempts the breaker refused: requests the gateway was spared.
    pub avoided: u32,
    /// Orders paid.
    pub paid: u32,
    /// Orders accepted and still waiting to be charged.
    pub pending: u32,
    /// Orders whose payment the gateway refused as invalid.
    pub declined: u32,
    /// Orders placed that the shop has no record of.
    pub lost: u32,
    /// The median time the breaker took to refuse a call.
    pub refused_call: Option<Duration>,
    /// The median time a request took to run out of its deadline.
    pub timed_out_request: Option<Duration>,
}

impl Summary {
    /// Sums up a scenario from its rows, the gateway's count and the book.
    pub fn new(
        rows: &[Row],
        calls: u32,
        orders_placed: u32,
        gateway: &GatewayStats,
        book: BookCounts,
    ) -> Self {
        let kept = book.paid + book.pending + book.declined;
        let refusals: Vec<Duration> = rows
            .iter()
            .filter(|row| row.is_refusal())
            .filter_map(|row| row.took)
            .collect();
        let timeouts: Vec<Duration> = rows
            .iter()
            .filter(|row| row.is_timeout())
            .filter_map(|row| row.took)
            .collect();
        Summary {
            calls,
            requests: gateway.requests,
            avoided: count(rows.iter().filter(|row| row.is_refusal())),
            paid: book.paid,
            pending: book.pending,
            declined: book.declined,
            lost: orders_placed.saturating_sub(kept),
            refused_call: median(refusals),
            timed_out_request: median(timeouts),
        }
    }
}

fn count<T>(items: impl Iterator<Item = T>) -> u32 {
    u32::try_from(items.count()).unwrap_or(u32::MAX)
}

fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn median(mut samples: Vec<Duration>) -> Option<Duration> {
    samples.sort_unstable();
    samples.get(samples.len() / 2).copied()
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}, {} reached the gateway, {} avoided | orders: {} paid, {} pending, {} declined, {} lost",
            plural(u64::from(self.calls), "call"),
            plural(self.requests, "request"),
            self.avoided,
            self.paid,
            self.pending,
            self.declined,
            self.lost
        )?;
        match (self.refused_call, self.timed_out_request) {
            (Some(refused), Some(timed_out)) => write!(
                f,
                " | refused call {}, timed-out request {}",
                duration(refused),
                duration(timed_out)
            ),
            (Some(refused), None) => write!(f, " | refused call {}", duration(refused)),
            (None, Some(timed_out)) => write!(f, " | timed-out request {}", duration(timed_out)),
            (None, None) => Ok(()),
        }
    }
}

/// Everything one scenario did, ready to print or to check.
#[derive(Debug, Clone)]
pub struct ScenarioReport {
    /// The scenario's heading, such as `2/7 DOWN, with the breaker`.
    pub heading: String,
    /// What the scenario shows, in a sentence or two.
    pub story: &'static str,
    /// Every event, in order.
    pub rows: Vec<Row>,
    /// Every state change of the breaker, in order.
    pub transitions: Vec<Transition>,
    /// What the gateway saw.
    pub gateway: GatewayStats,
    /// Where the orders stand at the end.
    pub book: BookCounts,
    /// The numbers.
    pub summary: Summary,
    /// Whether Ctrl-C cut the scenario short.
    pub interrupted: bool,
}

impl fmt::Display for ScenarioReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "== {} ==", self.heading)?;
        writeln!(f, "{}", self.story)?;
        writeln!(f)?;
        writeln!(
            f,
            "{:>8}  {:<14} {:>3}  {:<60} {:>8}  breaker after",
            "time", "call", "try", "outcome", "took"
        )?;
        for row in &self.rows {
            writeln!(f, "{}", TableRow(row))?;
        }
        writeln!(f)?;
        if self.interrupted {
            writeln!(f, "(interrupted)")?;
        }
        writeln!(f, "summary: {}", self.summary)
    }
}

/// One row, laid out as a table line.
struct TableRow<'a>(&'a Row);

impl fmt::Display for TableRow<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let row = self.0;
        let at = format!("{:.3}s", row.at.as_secs_f64());
        let attempt = row.attempt.map(|n| n.to_string()).unwrap_or_default();
        let took = row.took.map(duration).unwrap_or_default();
        let state = match (row.state_after, &row.outcome) {
            (_, Outcome::Note(_)) => String::new(),
            (StateAfter::NoBreaker, _) => "(no breaker)".to_owned(),
            (StateAfter::Awaiting, _) => "?".to_owned(),
            (StateAfter::Known(state), _) => breaker_state(state),
        };
        let outcome = match (row.probe, outcome(&row.outcome)) {
            (true, text) => format!("probe {text}"),
            (false, text) => text,
        };
        let line = format!(
            "{at:>8}  {:<14} {attempt:>3}  {outcome:<60} {took:>8}  {state}",
            row.call,
        );
        f.write_str(line.trim_end())
    }
}

pub(crate) fn outcome(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Charged(id) => format!("paid ({id})"),
        Outcome::Declined(error) => format!("declined, not retried: {error}"),
        Outcome::Failed {
            error,
            retry_in: Some(delay),
        } => format!("failed: {error}; retry in {}", duration(*delay)),
        Outcome::Failed {
            error,
            retry_in: None,
        } => format!("failed: {error}"),
        Outcome::Refused(Rejected::Open { remaining }) => {
            format!("refused by the breaker, {} left", duration(*remaining))
        }
        Outcome::Refused(Rejected::ProbeInFlight) => "refused by the breaker: probe out".to_owned(),
        Outcome::Refused(Rejected::Full { limit }) => {
            format!("refused by the bulkhead: {limit} attempts already out")
        }
        // `Rejected` may grow: its own sentence says the rest.
        Outcome::Refused(other) => format!("refused by the breaker: {other}"),
        Outcome::Unanswered => "no answer: still out, or its call was cancelled".to_owned(),
        Outcome::Note(text) => text.clone(),
    }
}

/// A breaker state, short enough for a table column.
pub fn breaker_state(state: State) -> String {
    match state {
        State::Closed { failures: 0 } => "CLOSED".to_owned(),
        State::Closed { failures: 1 } => "CLOSED, 1 failure".to_owned(),
        State::Closed { failures } => format!("CLOSED, {failures} failures"),
        State::Open { remaining } => format!("OPEN, {} left", duration(remaining)),
        State::HalfOpen {
            probe_in_flight: true,
        } => "HALF-OPEN, probe out".to_owned(),
        State::HalfOpen {
            probe_in_flight: false,
        } => "HALF-OPEN".to_owned(),
        // `State` may grow: its own display is short too.
        other => other.to_string(),
    }
}

/// A duration at the precision a reader cares about: microseconds for the
/// breaker's refusals, milliseconds for the network.
///
/// ```
/// use std::time::Duration;
/// use retry_breaker_demo::report::duration;
///
/// assert_eq!(duration(Duration::from_nanos(6_400)), "6.4µs");
/// assert_eq!(duration(Duration::from_nanos(64_400)), "64µs");
/// assert_eq!(duration(Duration::from_micros(1_240)), "1.2ms");
/// assert_eq!(duration(Duration::from_micros(251_400)), "251ms");
/// assert_eq!(duration(Duration::MAX), "for ever");
/// ```
pub fn duration(d: Duration) -> String {
    if d == Duration::MAX {
        "for ever".to_owned()
    } else if d < Duration::from_micros(10) {
        format!("{:.1}µs", d.as_secs_f64() * 1e6)
    } else if d < Duration::from_millis(1) {
        format!("{}µs", d.as_micros())
    } else if d < Duration::from_millis(10) {
        format!("{:.1}ms", d.as_secs_f64() * 1e3)
    } else if d < Duration::from_secs(10) {
        format!("{}ms", d.as_millis())
    } else {
        format!("{}s", d.as_secs())
    }
}
