//! The visual vocabulary of a chart: the colour of each state and status,
//! and the shape of each kind of mark, shared by the marks and the legend.
//! Every kind differs in shape as well as colour, so the charts read
//! without colour vision too.

use super::svg::{CHAR, WIDTH};
use super::{AttemptMark, BandPhase, OrderMark};

pub(super) const TEXT: &str = "#212121";
pub(super) const MUTED: &str = "#546e7a";
pub(super) const SUCCESS: &str = "#1b7f3b";
pub(super) const FAILURE: &str = "#c62828";
pub(super) const STALE: &str = "#8d8d8d";
pub(super) const PROBE: &str = "#6a1b9a";
pub(super) const REQUEST: &str = "#37474f";

pub(crate) fn band_colour(phase: BandPhase) -> &'static str {
    match phase {
        BandPhase::Closed => "#cfe8cf",
        BandPhase::Open => "#f4c7c3",
        BandPhase::HalfOpen => "#fbe08f",
        BandPhase::NoBreaker => "#e3e3e3",
    }
}

pub(super) fn order_colour(status: OrderMark) -> &'static str {
    match status {
        OrderMark::Paid => SUCCESS,
        OrderMark::Pending => "#d98200",
        OrderMark::Declined => "#ad1457",
        OrderMark::Lost => TEXT,
    }
}

pub(super) fn glyph(kind: AttemptMark, x: f64, y: f64) -> String {
    match kind {
        AttemptMark::Success => {
            format!(r#"<circle cx="{x:.1}" cy="{y:.1}" r="4.5" fill="{SUCCESS}"/>"#)
        }
        AttemptMark::Failure => format!(
            r#"<path d="M{:.1} {:.1}L{:.1} {:.1}M{:.1} {:.1}L{:.1} {:.1}" stroke="{FAILURE}" stroke-width="2.4" stroke-linecap="round"/>"#,
            x - 4.0,
            y - 4.0,
            x + 4.0,
            y + 4.0,
            x - 4.0,
            y + 4.0,
            x + 4.0,
            y - 4.0
        ),
        AttemptMark::Refused => format!(
            r##"<rect x="{:.1}" y="{:.1}" width="8" height="8" fill="#ffffff" stroke="{MUTED}" stroke-width="1.6"/>"##,
            x - 4.0,
            y - 4.0
        ),
        AttemptMark::Stale => format!(
            r##"<circle cx="{x:.1}" cy="{y:.1}" r="4.5" fill="#ffffff" stroke="{STALE}" stroke-width="1.6" stroke-dasharray="2 1.5"/>"##
        ),
    }
}

pub(super) fn diamond(x: f64, y: f64) -> String {
    format!(
        r#"<path d="M{x:.1} {:.1}L{:.1} {y:.1}L{x:.1} {:.1}L{:.1} {y:.1}Z" fill="none" stroke="{PROBE}" stroke-width="1.6"/>"#,
        y - 8.5,
        x + 8.5,
        y + 8.5,
        x - 8.5
    )
}

pub(super) fn pill(x: f64, y: f64, status: OrderMark) -> String {
    let name = status.name();
    let width = name.len() as f64 * CHAR + 8.0;
    // To the right of the mark that caused it, or to its left at the edge.
    let left = if x + 8.0 + width > WIDTH - 2.0 {
        x - 8.0 - width
    } else {
        x + 8.0
    };
    format!(
        r##"<g class="order {name}"><rect x="{left:.1}" y="{:.1}" width="{width:.1}" height="13" rx="6.5" fill="{}"/><text x="{:.1}" y="{:.1}" fill="#ffffff" font-size="9">{name}</text></g>
"##,
        y - 6.5,
        order_colour(status),
        left + 4.0,
        y + 3.0
    )
}
