//! A breaker's timeline as a picture: what to draw, independent of where
//! the events came from.
//!
//! A [`Chart`] is a time axis with, from top to bottom, a band of the
//! breaker's state over time, a lane of the requests that reached the
//! dependency, and one lane per caller with its attempts, backoff sleeps and
//! order outcomes. [`svg`] draws it; [`scenario`] builds one from a demo
//! run, and the LAB pictures build theirs from a breaker on a manual clock.

#[cfg(not(feature = "starter"))]
pub mod fleet;
pub mod scenario;
pub(crate) mod style;
pub mod svg;

use std::time::Duration;

/// Everything one timeline shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chart {
    /// The heading above the chart.
    pub title: String,
    /// A line under the heading: the settings, or what to look for.
    pub subtitle: String,
    /// The end of the time axis; the axis starts at zero.
    pub span: Duration,
    /// What the time axis measures, written under it.
    pub axis: String,
    /// The breaker's state over time, in order and without gaps. Empty
    /// when there is no breaker to show.
    pub bands: Vec<Band>,
    /// What the requests lane is called (`gateway`, `dependency`).
    pub requests_lane: String,
    /// When each request that reached the dependency was sent.
    pub requests: Vec<Duration>,
    /// Vertical lines across the chart: mode switches, deadlines.
    pub markers: Vec<Marker>,
    /// One lane per caller, top to bottom.
    pub lanes: Vec<Lane>,
}

/// A stretch of time in one state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Band {
    /// Where the stretch starts.
    pub from: Duration,
    /// Where it ends.
    pub to: Duration,
    /// The state throughout.
    pub phase: BandPhase,
}

/// The colour of a band: a breaker state, or no breaker at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BandPhase {
    /// Attempts flow; failures are counted.
    Closed,
    /// Attempts are refused.
    Open,
    /// One probe decides.
    HalfOpen,
    /// Calls go straight to the dependency.
    NoBreaker,
}

/// A breaker phase as a band, for the crate the demo runs on. Only that
/// crate's `Phase` converts, so the library builds on the starter alone (the
/// student edition); the pictures, always drawn from the solution, map its
/// phases in their own binary.
impl From<crate::kit::Phase> for BandPhase {
    fn from(phase: crate::kit::Phase) -> Self {
        use crate::kit::Phase;
        match phase {
            Phase::Closed => BandPhase::Closed,
            Phase::Open => BandPhase::Open,
            Phase::HalfOpen => BandPhase::HalfOpen,
            // `Phase` may grow; a phase this chart has no colour for is
            // drawn as the neutral band rather than as a wrong state.
            _ => BandPhase::NoBreaker,
        }
    }
}

impl BandPhase {
    /// The name written in the band.
    pub fn name(self) -> &'static str {
        match self {
            BandPhase::Closed => "CLOSED",
            BandPhase::Open => "OPEN",
            BandPhase::HalfOpen => "HALF-OPEN",
            BandPhase::NoBreaker => "no breaker",
        }
    }

    /// The band's fill colour, the one the legend shows.
    pub fn colour(self) -> &'static str {
        style::band_colour(self)
    }
}

/// A moment worth a vertical line, such as the gateway switching modes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    /// When.
    pub at: Duration,
    /// What, in a word or two.
    pub label: String,
}

/// One caller's row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lane {
    /// The caller, as the row is labelled.
    pub name: String,
    /// What happened to it, in any order.
    pub items: Vec<Item>,
}

/// Something drawn in a caller's row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// An attempt, or a refused one, drawn as a mark where its outcome
    /// became known, with a line back to where it started.
    Attempt(Attempt),
    /// A backoff sleep between two attempts of one call.
    Sleep {
        /// Where the sleep starts.
        from: Duration,
        /// Where it ends.
        to: Duration,
    },
    /// An order reached a new status.
    Order {
        /// When.
        at: Duration,
        /// The status.
        status: OrderMark,
    },
}

/// One attempt and what became of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// When it was admitted (or refused).
    pub start: Duration,
    /// When its outcome was reported.
    pub end: Duration,
    /// What the breaker made of it.
    pub outcome: AttemptMark,
    /// Whether it was the half-open probe.
    pub probe: bool,
    /// Text written beside the mark, if any.
    pub label: Option<String>,
    /// The full story, shown when the pointer rests on the mark.
    pub detail: String,
}

/// How an attempt ended, as a mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptMark {
    /// Reported a success that counted.
    Success,
    /// Reported a failure that counted.
    Failure,
    /// Refused by the breaker: the dependency was not called.
    Refused,
    /// Reported after the circuit had moved on: ignored.
    Stale,
}

impl AttemptMark {
    /// Every kind, in legend order.
    pub const ALL: [AttemptMark; 4] = [
        AttemptMark::Success,
        AttemptMark::Failure,
        AttemptMark::Refused,
        AttemptMark::Stale,
    ];

    /// The kind's word, used in legends and as its class in the SVG.
    pub fn name(self) -> &'static str {
        match self {
            AttemptMark::Success => "success",
            AttemptMark::Failure => "failure",
            AttemptMark::Refused => "refused",
            AttemptMark::Stale => "stale",
        }
    }
}

/// An order's new status, as a mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderMark {
    /// Charged.
    Paid,
    /// Accepted, to be charged later.
    Pending,
    /// Refused by the gateway as invalid.
    Declined,
    /// Gone: the shop kept no record.
    Lost,
}

impl OrderMark {
    /// Every status, in legend order.
    pub const ALL: [OrderMark; 4] = [
        OrderMark::Paid,
        OrderMark::Pending,
        OrderMark::Declined,
        OrderMark::Lost,
    ];

    /// The status's word, used in the pill and as its class in the SVG.
    pub fn name(self) -> &'static str {
        match self {
            OrderMark::Paid => "paid",
            OrderMark::Pending => "pending",
            OrderMark::Declined => "declined",
            OrderMark::Lost => "lost",
        }
    }
}

impl Chart {
    /// Every attempt in the chart, lane by lane.
    pub fn attempts(&self) -> impl Iterator<Item = &Attempt> {
        self.lanes
            .iter()
            .flat_map(|lane| &lane.items)
            .filter_map(|item| match item {
                Item::Attempt(attempt) => Some(attempt),
                _ => None,
            })
    }
}

/// Bands from a list of state changes `(when, new state)`, starting in
/// `first` at zero and ending at `span`.
pub fn bands(first: BandPhase, changes: &[(Duration, BandPhase)], span: Duration) -> Vec<Band> {
    let mut bands = Vec::new();
    let (mut from, mut phase) = (Duration::ZERO, first);
    for &(at, next) in changes {
        bands.push(Band {
            from,
            to: at.max(from),
            phase,
        });
        (from, phase) = (at.max(from), next);
    }
    bands.push(Band {
        from,
        to: span.max(from),
        phase,
    });
    bands
}
