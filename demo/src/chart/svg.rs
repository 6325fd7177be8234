//! Draws a [`Chart`] as one self-contained SVG element: no script, no
//! external font or style, every colour written on the shape itself, so
//! the same text works inline in the demo's HTML report and as a picture
//! file in LAB.md.
//!
//! The output is a pure function of the chart: coordinates are printed
//! with one decimal, and nothing depends on the time or the machine, so
//! regenerated pictures compare equal byte for byte.
//!
//! Every mark carries its kind as a class (`mark success probe`,
//! `order pending`, `request`, `band open`, `chart`), which is how the
//! tests find them again.

use std::fmt::Write as _;
use std::time::Duration;

use super::style::{MUTED, PROBE, REQUEST, TEXT, band_colour, diamond, glyph, order_colour, pill};
use super::{AttemptMark, BandPhase, Chart, Item, OrderMark};

/// The colour of the bar down the left edge of every chart. The report's
/// screenshot check counts timelines by finding it, so no other shape may
/// use it.
pub const SPINE: &str = "#283593";
/// The same colour as RGB, for the pixel check.
pub const SPINE_RGB: [u8; 3] = [0x28, 0x35, 0x93];

pub(crate) const WIDTH: f64 = 960.0;
const LEFT: f64 = 124.0;
const RIGHT: f64 = 28.0;
const BAND_TOP: f64 = 68.0;
const BAND_HEIGHT: f64 = 22.0;
const REQUESTS_TOP: f64 = BAND_TOP + BAND_HEIGHT + 4.0;
const ROW: f64 = 20.0;
const LANES_TOP: f64 = REQUESTS_TOP + ROW + 4.0;
/// A rough width of one character of the 10px labels, to keep them apart.
pub(crate) const CHAR: f64 = 5.6;

/// The chart's height in pixels, for a page that lays charts out.
pub fn height(chart: &Chart) -> f64 {
    // The order statuses take a second legend line.
    legend_top(chart) + if has_orders(chart) { 40.0 } else { 22.0 }
}

fn has_orders(chart: &Chart) -> bool {
    chart
        .lanes
        .iter()
        .flat_map(|lane| &lane.items)
        .any(|item| matches!(item, Item::Order { .. }))
}

fn lanes_bottom(chart: &Chart) -> f64 {
    LANES_TOP + ROW * chart.lanes.len() as f64
}

fn axis_top(chart: &Chart) -> f64 {
    lanes_bottom(chart) + 4.0
}

fn legend_top(chart: &Chart) -> f64 {
    axis_top(chart) + 46.0
}

/// Text made safe for SVG and HTML.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Maps times to x coordinates.
struct Scale {
    span: f64,
}

impl Scale {
    fn x(&self, at: Duration) -> f64 {
        let share = (at.as_nanos() as f64 / self.span).clamp(0.0, 1.0);
        LEFT + (WIDTH - LEFT - RIGHT) * share
    }
}

/// The chart as an `<svg>` element with its own size; `standalone` adds
/// the XML namespace a picture file needs.
pub fn render(chart: &Chart, standalone: bool) -> String {
    let scale = Scale {
        span: chart.span.as_nanos().max(1) as f64,
    };
    let height = height(chart);
    let mut svg = String::new();
    let namespace = if standalone {
        r#" xmlns="http://www.w3.org/2000/svg""#
    } else {
        ""
    };
    let _ = writeln!(
        svg,
        r#"<svg{namespace} class="chart" width="{WIDTH}" height="{height:.0}" viewBox="0 0 {WIDTH} {height:.0}" font-family="sans-serif" font-size="10" role="img">"#
    );
    heading(&mut svg, height, &chart.title, &chart.subtitle);
    draw_bands(&mut svg, chart, &scale);
    draw_markers(&mut svg, chart, &scale);
    draw_requests(&mut svg, chart, &scale);
    draw_lanes(&mut svg, chart, &scale);
    draw_axis(&mut svg, chart);
    draw_legend(&mut svg, chart);
    svg.push_str("</svg>\n");
    svg
}

/// What every chart starts with inside its `<svg>`: its title for a
/// pointer, a white ground, the spine, and the title and subtitle lines.
pub(crate) fn heading(svg: &mut String, height: f64, title: &str, subtitle: &str) {
    let _ = writeln!(svg, "<title>{}</title>", escape(title));
    let _ = writeln!(
        svg,
        r##"<rect x="0" y="0" width="{WIDTH}" height="{height:.0}" fill="#ffffff"/>"##
    );
    // The spine: a bar down the left edge, in a colour used nowhere else.
    let _ = writeln!(
        svg,
        r#"<rect class="spine" x="0" y="0" width="6" height="{height:.0}" fill="{SPINE}"/>"#
    );
    let _ = writeln!(
        svg,
        r#"<text x="16" y="20" font-size="14" font-weight="bold" fill="{TEXT}">{}</text>"#,
        escape(title)
    );
    let _ = writeln!(
        svg,
        r#"<text x="16" y="37" font-size="11" fill="{MUTED}">{}</text>"#,
        escape(subtitle)
    );
}

fn lane_label(svg: &mut String, y: f64, text: &str) {
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="end" fill="{TEXT}">{}</text>"#,
        LEFT - 8.0,
        y + 4.0,
        escape(text)
    );
}

fn draw_bands(svg: &mut String, chart: &Chart, scale: &Scale) {
    lane_label(svg, BAND_TOP + BAND_HEIGHT / 2.0, "breaker");
    for band in &chart.bands {
        let x = scale.x(band.from);
        // However short a state lasts (a probe on loopback takes a fraction
        // of a millisecond), it stays visible.
        let width = (scale.x(band.to) - x).max(2.0);
        let _ = writeln!(
            svg,
            r#"<rect class="band {}" x="{x:.1}" y="{BAND_TOP:.1}" width="{width:.1}" height="{BAND_HEIGHT:.1}" fill="{}"><title>{} from {} to {}</title></rect>"#,
            band.phase.name().to_lowercase(),
            band_colour(band.phase),
            band.phase.name(),
            time(band.from),
            time(band.to),
        );
        let name = band.phase.name();
        if width > name.len() as f64 * CHAR + 8.0 {
            let _ = writeln!(
                svg,
                r#"<text x="{:.1}" y="{:.1}" fill="{TEXT}" font-weight="bold">{name}</text>"#,
                x + 4.0,
                BAND_TOP + 15.0
            );
        }
    }
}

fn draw_markers(svg: &mut String, chart: &Chart, scale: &Scale) {
    // Labels that would overlap go one line up.
    let mut line_ends = [f64::MIN; 2];
    for marker in &chart.markers {
        let x = scale.x(marker.at);
        let _ = writeln!(
            svg,
            r#"<line class="marker" x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="{MUTED}" stroke-dasharray="3 3"/>"#,
            BAND_TOP - 6.0,
            lanes_bottom(chart)
        );
        let width = marker.label.len() as f64 * CHAR;
        let line = line_ends.iter().position(|end| x > *end).unwrap_or(0);
        line_ends[line] = x + width + 6.0;
        let y = BAND_TOP - 8.0 - 11.0 * line as f64;
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{y:.1}" fill="{MUTED}">{}</text>"#,
            x + 2.0,
            escape(&marker.label)
        );
    }
}

fn draw_requests(svg: &mut String, chart: &Chart, scale: &Scale) {
    lane_label(svg, REQUESTS_TOP + ROW / 2.0, &chart.requests_lane);
    let _ = writeln!(
        svg,
        r##"<rect x="{LEFT:.1}" y="{REQUESTS_TOP:.1}" width="{:.1}" height="{ROW:.1}" fill="#f5f5f5"/>"##,
        WIDTH - LEFT - RIGHT
    );
    for &at in &chart.requests {
        let x = scale.x(at);
        let _ = writeln!(
            svg,
            r#"<line class="request" x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="{REQUEST}" stroke-width="1.5"><title>request sent at {}</title></line>"#,
            REQUESTS_TOP + 4.0,
            REQUESTS_TOP + ROW - 4.0,
            time(at)
        );
    }
}

fn draw_lanes(svg: &mut String, chart: &Chart, scale: &Scale) {
    for (row, lane) in chart.lanes.iter().enumerate() {
        let top = LANES_TOP + ROW * row as f64;
        let y = top + ROW / 2.0;
        if row % 2 == 1 {
            let _ = writeln!(
                svg,
                r##"<rect x="{LEFT:.1}" y="{top:.1}" width="{:.1}" height="{ROW:.1}" fill="#fafafa"/>"##,
                WIDTH - LEFT - RIGHT
            );
        }
        lane_label(svg, y, &lane.name);
        // Sleeps first, so marks are drawn over them.
        for item in &lane.items {
            if let Item::Sleep { from, to } = item {
                let _ = writeln!(
                    svg,
                    r#"<line class="sleep" x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{MUTED}" stroke-dasharray="2 2"><title>backoff sleep of {}</title></line>"#,
                    scale.x(*from),
                    scale.x(*to),
                    time(to.saturating_sub(*from))
                );
            }
        }
        for item in &lane.items {
            match item {
                Item::Attempt(attempt) => {
                    let start = scale.x(attempt.start);
                    let end = scale.x(attempt.end);
                    let mut classes = format!("mark {}", attempt.outcome.name());
                    if attempt.probe {
                        classes.push_str(" probe");
                    }
                    let _ = writeln!(
                        svg,
                        r#"<g class="{classes}"><title>{}</title>"#,
                        escape(&attempt.detail)
                    );
                    if end - start >= 1.5 {
                        let _ = writeln!(
                            svg,
                            r##"<line x1="{start:.1}" y1="{y:.1}" x2="{end:.1}" y2="{y:.1}" stroke="#9e9e9e" stroke-width="2"/>"##
                        );
                    }
                    if attempt.probe {
                        svg.push_str(&diamond(end, y));
                    }
                    svg.push_str(&glyph(attempt.outcome, end, y));
                    svg.push_str("</g>\n");
                    if let Some(label) = &attempt.label {
                        svg.push_str(&label_beside(end, y, label));
                    }
                }
                Item::Order { at, status } => {
                    svg.push_str(&pill(scale.x(*at), y, *status));
                }
                Item::Sleep { .. } => {}
            }
        }
    }
}

fn label_beside(x: f64, y: f64, text: &str) -> String {
    let width = text.len() as f64 * CHAR;
    // Beside the mark, or before it when it would run off the right edge.
    let (x, anchor) = if x + 10.0 + width > WIDTH - 4.0 {
        (x - 10.0, "end")
    } else {
        (x + 10.0, "start")
    };
    format!(
        r##"<text class="label" x="{x:.1}" y="{:.1}" text-anchor="{anchor}" fill="{TEXT}" stroke="#ffffff" stroke-width="3" paint-order="stroke">{}</text>
"##,
        y + 3.5,
        escape(text)
    )
}

fn draw_axis(svg: &mut String, chart: &Chart) {
    let top = axis_top(chart);
    let _ = writeln!(
        svg,
        r#"<line x1="{LEFT:.1}" y1="{top:.1}" x2="{:.1}" y2="{top:.1}" stroke="{TEXT}"/>"#,
        WIDTH - RIGHT
    );
    let span = chart.span.as_nanos().max(1);
    let step = tick_step(span);
    let scale = Scale { span: span as f64 };
    let mut tick = 0;
    while tick <= span {
        let x = scale.x(Duration::from_nanos(
            u64::try_from(tick).unwrap_or(u64::MAX),
        ));
        let _ = writeln!(
            svg,
            r#"<line x1="{x:.1}" y1="{top:.1}" x2="{x:.1}" y2="{:.1}" stroke="{TEXT}"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" fill="{TEXT}">{}</text>"#,
            top + 4.0,
            top + 16.0,
            tick_label(tick, step)
        );
        tick += step;
    }
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="{MUTED}">{}</text>"#,
        LEFT + (WIDTH - LEFT - RIGHT) / 2.0,
        top + 32.0,
        escape(&chart.axis)
    );
}

/// A step of 1, 2 or 5 times a power of ten that cuts the span into at most
/// ten pieces.
fn tick_step(span: u128) -> u128 {
    let mut power = 1;
    loop {
        for factor in [1, 2, 5] {
            if span / (factor * power) <= 10 {
                return factor * power;
            }
        }
        power *= 10;
    }
}

/// A tick's time, in the unit of its step, so that every label of an axis
/// is a whole number of the same unit.
fn tick_label(tick: u128, step: u128) -> String {
    let (unit, name) = match step {
        s if s >= 1_000_000_000 => (1_000_000_000, "s"),
        s if s >= 1_000_000 => (1_000_000, "ms"),
        s if s >= 1_000 => (1_000, "µs"),
        _ => (1, "ns"),
    };
    if tick == 0 {
        "0".to_owned()
    } else {
        format!("{}{name}", tick / unit)
    }
}

/// A time as a reader wants it on a tooltip: whole units, no float noise.
pub fn time(at: Duration) -> String {
    let nanos = at.as_nanos();
    if nanos % 1_000_000 == 0 {
        format!("{}ms", nanos / 1_000_000)
    } else if nanos >= 1_000_000 {
        format!("{}.{:03}ms", nanos / 1_000_000, nanos / 1_000 % 1_000)
    } else {
        format!("{}µs", nanos / 1_000)
    }
}

fn draw_legend(svg: &mut String, chart: &Chart) {
    let top = legend_top(chart);
    let mut y = top + 8.0;
    let mut x = LEFT;
    let entry = |svg: &mut String, x: &mut f64, y: f64, shape: String, text: &str| {
        let _ = write!(
            svg,
            r#"<g class="legend">{shape}<text x="{:.1}" y="{:.1}" fill="{TEXT}">{text}</text></g>"#,
            *x + 10.0,
            y + 3.5
        );
        svg.push('\n');
        *x += 10.0 + text.len() as f64 * CHAR + 14.0;
    };
    let mut phases: Vec<BandPhase> = Vec::new();
    for band in &chart.bands {
        if !phases.contains(&band.phase) {
            phases.push(band.phase);
        }
    }
    if chart
        .bands
        .iter()
        .any(|band| band.phase != BandPhase::NoBreaker)
    {
        // Every state, even one this run never reached, so each chart's
        // legend reads the same.
        phases = vec![BandPhase::Closed, BandPhase::Open, BandPhase::HalfOpen];
    }
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="end" fill="{MUTED}">legend</text>"#,
        LEFT - 8.0,
        y + 3.5
    );
    for phase in phases {
        let shape = format!(
            r#"<rect x="{:.1}" y="{:.1}" width="10" height="10" fill="{}"/>"#,
            x - 5.0,
            y - 5.0,
            band_colour(phase)
        );
        entry(svg, &mut x, y, shape, phase.name());
    }
    for kind in AttemptMark::ALL {
        let text = match kind {
            AttemptMark::Success => "success",
            AttemptMark::Failure => "failure",
            AttemptMark::Refused => "refused",
            AttemptMark::Stale => "stale (ignored)",
        };
        let shape = glyph(kind, x, y);
        entry(svg, &mut x, y, shape, text);
    }
    let probe = format!(
        r#"<path d="M{x:.1} {:.1}L{:.1} {y:.1}L{x:.1} {:.1}L{:.1} {y:.1}Z" fill="none" stroke="{PROBE}" stroke-width="1.6"/>"#,
        y - 6.0,
        x + 6.0,
        y + 6.0,
        x - 6.0
    );
    entry(svg, &mut x, y, probe, "probe");
    let request = format!(
        r#"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="{REQUEST}" stroke-width="1.5"/>"#,
        y - 5.0,
        y + 5.0
    );
    entry(svg, &mut x, y, request, "request");
    if has_orders(chart) {
        (x, y) = (LEFT, y + 18.0);
        for status in OrderMark::ALL {
            let shape = format!(
                r#"<rect x="{:.1}" y="{:.1}" width="12" height="10" rx="5" fill="{}"/>"#,
                x - 6.0,
                y - 5.0,
                order_colour(status)
            );
            entry(svg, &mut x, y, shape, &format!("order {}", status.name()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_whole_numbers_of_one_unit() {
        assert_eq!(tick_step(1_500_000_000), 200_000_000);
        assert_eq!(tick_label(400_000_000, 200_000_000), "400ms");
        assert_eq!(tick_step(25_000_000), 5_000_000);
        assert_eq!(tick_label(10_000_000, 5_000_000), "10ms");
        assert_eq!(tick_label(0, 5_000_000), "0");
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(escape(r#"<a & "b">"#), "&lt;a &amp; &quot;b&quot;&gt;");
    }

    #[test]
    fn times_print_without_float_noise() {
        assert_eq!(time(Duration::from_millis(10)), "10ms");
        assert_eq!(time(Duration::from_nanos(9_999_999)), "9.999ms");
        assert_eq!(time(Duration::from_micros(450)), "450µs");
    }
}
