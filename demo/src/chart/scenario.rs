//! A demo scenario's report as a [`Chart`]: one lane per order, so that an
//! order's attempts, its refusals and what became of it read left to right
//! on one line, whether the checkout or the settlement worker made the call.

use std::time::Duration;

use super::{Attempt, AttemptMark, BandPhase, Chart, Item, Lane, Marker, OrderMark, bands};
use crate::checkout::{LOST_NOTE, PENDING_NOTE};
use crate::report::{ScenarioReport, outcome};
use crate::scenarios::SWITCH_NOTE;
use crate::timeline::{Outcome, Row, StateAfter};

/// The chart of one scenario.
pub fn chart(report: &ScenarioReport) -> Chart {
    let rows = &report.rows;
    let ends = rows.iter().map(|row| row.at + row.took.unwrap_or_default());
    let last = ends
        .chain(report.transitions.iter().map(|t| t.at))
        .max()
        .unwrap_or_default();
    // A little room after the last event, so its mark is not on the edge.
    let span = (last + last / 25).max(Duration::from_millis(1));

    let with_breaker = !report.transitions.is_empty()
        || rows
            .iter()
            .any(|row| row.attempt.is_some() && row.state_after != StateAfter::NoBreaker);
    let bands = if with_breaker {
        let changes: Vec<(Duration, BandPhase)> = report
            .transitions
            .iter()
            .map(|t| (t.at, BandPhase::from(t.to)))
            .collect();
        bands(BandPhase::Closed, &changes, span)
    } else {
        bands(BandPhase::NoBreaker, &[], span)
    };

    let markers = rows
        .iter()
        .filter_map(|row| match (&row.outcome, row.call.as_str()) {
            (Outcome::Note(text), "gateway") => text.strip_prefix(SWITCH_NOTE).map(|mode| Marker {
                at: row.at,
                label: format!("gateway {mode}"),
            }),
            _ => None,
        })
        .collect();

    let mut lanes: Vec<Lane> = Vec::new();
    for row in rows {
        let Some(order) = order_of(row) else { continue };
        let items = items(row);
        if items.is_empty() {
            continue;
        }
        match lanes.iter_mut().find(|lane| lane.name == order) {
            Some(lane) => lane.items.extend(items),
            None => lanes.push(Lane {
                name: order.to_owned(),
                items,
            }),
        }
    }

    Chart {
        title: report.heading.clone(),
        subtitle: format!("summary: {}", report.summary),
        span,
        axis: "time since the scenario started (real time, on loopback)".to_owned(),
        bands,
        requests_lane: "gateway".to_owned(),
        requests: rows
            .iter()
            .filter(|row| row.is_request())
            .map(|row| row.at)
            .collect(),
        markers,
        lanes,
    }
}

/// The order a row is about: the settlement worker's calls share their
/// order's lane. Rows about the gateway, the worker or the scenario have
/// none.
fn order_of(row: &Row) -> Option<&str> {
    let call = row.call.strip_prefix("settle ").unwrap_or(&row.call);
    call.starts_with("order-").then_some(call)
}

/// What one row adds to its order's lane.
fn items(row: &Row) -> Vec<Item> {
    let end = row.at + row.took.unwrap_or_default();
    let mut items = Vec::new();
    if let Some(attempt) = row.attempt {
        let mark = match &row.outcome {
            Outcome::Charged(_) | Outcome::Declined(_) => Some(AttemptMark::Success),
            Outcome::Failed { .. } => Some(AttemptMark::Failure),
            Outcome::Refused(_) => Some(AttemptMark::Refused),
            // An attempt with no answer has no end to draw.
            Outcome::Unanswered | Outcome::Note(_) => None,
        };
        if let Some(mark) = mark {
            let probe = if row.probe { "probe, " } else { "" };
            items.push(Item::Attempt(Attempt {
                start: row.at,
                end,
                outcome: mark,
                probe: row.probe,
                label: None,
                detail: format!(
                    "{} attempt {attempt} at {}: {probe}{}",
                    row.call,
                    super::svg::time(row.at),
                    outcome(&row.outcome)
                ),
            }));
        }
    }
    match &row.outcome {
        Outcome::Charged(_) => items.push(order(end, OrderMark::Paid)),
        Outcome::Declined(_) => items.push(order(end, OrderMark::Declined)),
        Outcome::Failed {
            retry_in: Some(delay),
            ..
        } => items.push(Item::Sleep {
            from: end,
            to: end + *delay,
        }),
        Outcome::Note(text) if text == PENDING_NOTE => {
            items.push(order(row.at, OrderMark::Pending));
        }
        Outcome::Note(text) if text == LOST_NOTE => {
            items.push(order(row.at, OrderMark::Lost));
        }
        _ => {}
    }
    items
}

fn order(at: Duration, status: OrderMark) -> Item {
    Item::Order { at, status }
}
