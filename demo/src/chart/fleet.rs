//! The fleet section of the demo's report: for each run (every node on its
//! own, then linked as a fleet), one row per checkout node with a mark for
//! each of its orders, so that the requests the fleet spared the gateway
//! are seen, not only counted.
//!
//! As the scenario charts: one self-contained `<svg>`, every colour on its
//! shape, the same spine down the left edge (the report's screenshot check
//! counts charts by it), and shapes that differ without colour.

use std::fmt::Write as _;

use super::AttemptMark;
use super::style::{MUTED, TEXT, diamond, glyph};
use super::svg::{WIDTH, heading};
use crate::fleet::{FleetReport, FleetRun, Mark};

const LEFT: f64 = 124.0;
const RIGHT: f64 = 28.0;
const PANELS_TOP: f64 = 58.0;
/// A panel's heading line, then its rows.
const HEADING: f64 = 22.0;
const ROW: f64 = 20.0;
const GAP: f64 = 14.0;

/// The chart's height in pixels, for a page that lays charts out.
pub fn height(report: &FleetReport) -> f64 {
    legend_top(report) + 26.0
}

fn panel_height(run: &FleetRun) -> f64 {
    HEADING + ROW * run.timelines.len() as f64 + GAP
}

fn legend_top(report: &FleetReport) -> f64 {
    PANELS_TOP + panel_height(&report.local) + panel_height(&report.linked) + 4.0
}

/// The fleet's section as an `<svg>` element of its own.
pub fn render(report: &FleetReport) -> String {
    let height = height(report);
    let mut svg = String::new();
    let title = "One gateway, three checkout nodes";
    let _ = writeln!(
        svg,
        r#"<svg class="chart fleet" width="{WIDTH}" height="{height:.0}" viewBox="0 0 {WIDTH} {height:.0}" font-family="sans-serif" font-size="10" role="img">"#
    );
    heading(&mut svg, height, title, &report.subtitle());
    let columns = report
        .local
        .timelines
        .iter()
        .chain(&report.linked.timelines)
        .map(Vec::len)
        .max()
        .unwrap_or(0)
        .max(1);
    let step = (WIDTH - LEFT - RIGHT) / columns as f64;
    let x = |column: usize| LEFT + step * (column as f64 + 0.5);
    let mut top = PANELS_TOP;
    for (run, name) in [
        (&report.local, "each node on its own"),
        (&report.linked, "linked as a fleet"),
    ] {
        draw_panel(&mut svg, run, name, top, &x);
        // The gateway is healthy again from this column on.
        let healthy = LEFT + step * report.down_per_node() as f64;
        let bottom = top + panel_height(run) - GAP;
        let _ = writeln!(
            svg,
            r#"<line class="marker" x1="{healthy:.1}" y1="{:.1}" x2="{healthy:.1}" y2="{bottom:.1}" stroke="{MUTED}" stroke-dasharray="3 3"/>"#,
            top + 4.0
        );
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" fill="{MUTED}">gateway healthy again</text>"#,
            healthy + 4.0,
            top + 12.0
        );
        top += panel_height(run);
    }
    draw_legend(&mut svg, legend_top(report) + 8.0);
    svg.push_str("</svg>\n");
    svg
}

fn draw_panel(svg: &mut String, run: &FleetRun, name: &str, top: f64, x: &impl Fn(usize) -> f64) {
    let _ = writeln!(
        svg,
        r#"<text x="16" y="{:.1}" fill="{TEXT}"><tspan font-weight="bold">{name}</tspan>: {} requests reached the gateway while it was down, {} before every node had refused one</text>"#,
        top + 12.0,
        run.reached_while_down,
        run.first_incident
    );
    for (node, marks) in run.timelines.iter().enumerate() {
        let y = top + HEADING + ROW * node as f64 + ROW / 2.0;
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end" fill="{TEXT}">node {node}</text>"#,
            LEFT - 8.0,
            y + 4.0
        );
        for (order, &mark) in marks.iter().enumerate() {
            let _ = writeln!(
                svg,
                r#"<g class="mark {}"><title>node {node}, order {}: {}</title>{}</g>"#,
                class(mark),
                order + 1,
                describe(mark),
                shape(mark, x(order), y)
            );
        }
    }
}

fn shape(mark: Mark, x: f64, y: f64) -> String {
    match mark {
        Mark::Served => glyph(AttemptMark::Success, x, y),
        Mark::Failed => glyph(AttemptMark::Failure, x, y),
        Mark::Refused => glyph(AttemptMark::Refused, x, y),
        Mark::ProbeServed => diamond(x, y) + &glyph(AttemptMark::Success, x, y),
        Mark::ProbeFailed => diamond(x, y) + &glyph(AttemptMark::Failure, x, y),
    }
}

fn class(mark: Mark) -> &'static str {
    match mark {
        Mark::Served => "success",
        Mark::Failed => "failure",
        Mark::Refused => "refused",
        Mark::ProbeServed => "success probe",
        Mark::ProbeFailed => "failure probe",
    }
}

fn describe(mark: Mark) -> &'static str {
    match mark {
        Mark::Served => "served",
        Mark::Failed => "failed: the request reached the gateway",
        Mark::Refused => "refused by the node, no request sent",
        Mark::ProbeServed => "the fleet's probe, served: the fleet closes",
        Mark::ProbeFailed => "the fleet's probe, failed",
    }
}

fn draw_legend(svg: &mut String, y: f64) {
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="end" fill="{MUTED}">legend</text>"#,
        LEFT - 8.0,
        y + 3.5
    );
    let mut x = LEFT;
    for (mark, text) in [
        (Mark::Served, "served"),
        (Mark::Failed, "failed (reached the gateway)"),
        (Mark::Refused, "refused, no request"),
        (Mark::ProbeFailed, "the fleet's probe"),
    ] {
        let _ = writeln!(
            svg,
            r#"<g class="legend">{}<text x="{:.1}" y="{:.1}" fill="{TEXT}">{text}</text></g>"#,
            shape(mark, x, y),
            x + 12.0,
            y + 3.5
        );
        x += 12.0 + text.len() as f64 * super::svg::CHAR + 18.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::tests::report;

    #[test]
    fn every_order_of_every_node_has_its_mark_in_both_runs() {
        let report = report();
        let svg = render(&report);
        let marks = |class: &str| svg.matches(&format!(r#"<g class="mark {class}""#)).count();
        let all = svg.matches(r#"<g class="mark "#).count();
        let orders: usize = report
            .local
            .timelines
            .iter()
            .chain(&report.linked.timelines)
            .map(Vec::len)
            .sum();
        assert_eq!(all, orders);
        assert_eq!(marks("refused"), 3, "the linked run's three refusals");
        assert_eq!(marks("success probe"), 1, "the probe that closed the fleet");
        assert_eq!(marks("failure"), 8, "six failures on their own, two linked");
        assert_eq!(svg.matches(r#"class="spine""#).count(), 1);
        assert!(svg.contains("linked as a fleet</tspan>: 2 requests reached the gateway"));
        assert_eq!(svg.matches("gateway healthy again").count(), 2);
        assert!(svg.ends_with("</svg>\n"));
    }
}
