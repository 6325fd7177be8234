//! The three states and the transitions between them, as a diagram whose
//! arrows are the transitions a real run made: an arrow the run did not
//! make is not drawn.

use std::fmt::Write as _;

use retry_breaker_demo::chart::BandPhase;
use retry_breaker_demo::chart::svg::escape;

const WIDTH: f64 = 960.0;
const HEIGHT: f64 = 340.0;
const TEXT: &str = "#212121";
const MUTED: &str = "#546e7a";

/// Where a state's box sits: left, top, width, height.
fn place(phase: BandPhase) -> (f64, f64, f64, f64) {
    match phase {
        BandPhase::Closed => (30.0, 70.0, 300.0, 64.0),
        BandPhase::Open => (600.0, 70.0, 300.0, 64.0),
        _ => (315.0, 236.0, 300.0, 64.0),
    }
}

/// What a state does, under its name.
fn duty(phase: BandPhase) -> &'static str {
    match phase {
        BandPhase::Closed => "admits every attempt; counts consecutive failures",
        BandPhase::Open => "refuses every attempt until its deadline",
        _ => "one probe out; every other attempt refused",
    }
}

/// An arrow's route and where its label goes (x, y, anchor, lines).
fn route(from: BandPhase, to: BandPhase) -> Option<(&'static str, f64, f64, &'static str)> {
    match (from, to) {
        (BandPhase::Closed, BandPhase::Open) => Some(("M330 102 H596", 463.0, 94.0, "middle")),
        (BandPhase::Open, BandPhase::HalfOpen) => {
            Some(("M820 134 V268 H619", 828.0, 196.0, "start"))
        }
        (BandPhase::HalfOpen, BandPhase::Open) => Some(("M615 252 H720 V138", 712.0, 196.0, "end")),
        (BandPhase::HalfOpen, BandPhase::Closed) => {
            Some(("M315 268 H180 V138", 172.0, 196.0, "end"))
        }
        _ => None,
    }
}

/// The diagram, with one arrow per `(from, to, label)` edge; `subtitle`
/// says where the edges come from.
pub fn diagram(edges: &[(BandPhase, BandPhase, String)], subtitle: &str) -> String {
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="states" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="11" role="img">"#
    );
    svg.push_str("<title>The three states of the circuit</title>\n");
    let _ = writeln!(
        svg,
        r##"<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0 0L10 5L0 10Z" fill="{TEXT}"/></marker></defs>
<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>"##
    );
    let _ = writeln!(
        svg,
        r#"<text x="16" y="22" font-size="14" font-weight="bold" fill="{TEXT}">The three states</text>
<text x="16" y="40" fill="{MUTED}">{}</text>"#,
        escape(subtitle)
    );
    for phase in [BandPhase::Closed, BandPhase::Open, BandPhase::HalfOpen] {
        let (x, y, w, h) = place(phase);
        let _ = writeln!(
            svg,
            r#"<g class="state"><rect x="{x}" y="{y}" width="{w}" height="{h}" rx="8" fill="{}" stroke="{MUTED}"/><text x="{}" y="{}" text-anchor="middle" font-size="15" font-weight="bold" fill="{TEXT}">{}</text><text x="{}" y="{}" text-anchor="middle" fill="{TEXT}">{}</text></g>"#,
            phase.colour(),
            x + w / 2.0,
            y + 26.0,
            phase.name(),
            x + w / 2.0,
            y + 46.0,
            duty(phase)
        );
    }
    for (from, to, label) in edges {
        let Some((path, x, y, anchor)) = route(*from, *to) else {
            continue;
        };
        let _ = writeln!(
            svg,
            r#"<g class="transition"><path d="{path}" fill="none" stroke="{TEXT}" stroke-width="1.6" marker-end="url(#arrow)"/>"#
        );
        for (n, line) in label.lines().enumerate() {
            let _ = writeln!(
                svg,
                r#"<text x="{x}" y="{}" text-anchor="{anchor}" fill="{TEXT}">{}</text>"#,
                y + 14.0 * n as f64,
                escape(line)
            );
        }
        svg.push_str("</g>\n");
    }
    svg.push_str("</svg>\n");
    svg
}
