//! Step 10's shrunk counterexample as a sequence diagram, written next to
//! its text story: one lifeline per caller and one for the breaker, an
//! arrow per numbered step, the breaker's state after each step, and the
//! step that broke a rule in red.
//!
//! It reads the numbered story that the failure message already contains
//! (`  12. t=10ms  caller #1 asks: ...  => HALF-OPEN (...)`), so the
//! properties need no second description of their runs. Plain string
//! formatting, no dependency: this file is part of every student's build.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// One numbered step of the story.
struct Step<'a> {
    number: &'a str,
    at: &'a str,
    /// Who acted (`caller #1`, `call #0`), if anyone did.
    actor: Option<String>,
    text: &'a str,
    /// The breaker's state afterwards, when the story says.
    state: Option<&'a str>,
}

/// Reads the numbered, timed steps out of a failure message.
fn steps(story: &str) -> Vec<Step<'_>> {
    story
        .lines()
        .filter_map(|line| {
            let (number, rest) = line.trim_start().split_once(". t=")?;
            if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let (at, rest) = rest.split_once(' ')?;
            let (text, state) = match rest.trim().split_once("  => ") {
                Some((text, state)) => (text.trim(), Some(state.trim())),
                None => (rest.trim(), None),
            };
            Some(Step {
                number,
                at,
                actor: actor(text),
                text,
                state,
            })
        })
        .collect()
}

/// The first `caller #n` or `call #n` a step names.
fn actor(text: &str) -> Option<String> {
    ["caller #", "call #"].iter().find_map(|who| {
        let start = text.find(who)?;
        let digits: String = text[start + who.len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        (!digits.is_empty()).then(|| format!("{who}{digits}"))
    })
}

/// The step a failure message blames (`step 13: ...`), if it names one.
fn blamed(story: &str) -> Option<&str> {
    let rest = story.trim_start().strip_prefix("step ")?;
    rest.split_once(':').map(|(number, _)| number)
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn state_colour(state: &str) -> &'static str {
    if state.starts_with("CLOSED") {
        "#cfe8cf"
    } else if state.starts_with("OPEN") {
        "#f4c7c3"
    } else {
        "#fbe08f"
    }
}

const ROW: usize = 24;
const TOP: usize = 96;
const TIME_COLUMN: usize = 70;
const LANE: usize = 110;
/// A generous width of one character, so that text never overlaps.
const CHAR: usize = 7;

/// The diagram of the failure message `story` of test `test`.
pub fn render(test: &str, story: &str) -> String {
    let steps = steps(story);
    let mut actors: Vec<String> = Vec::new();
    for step in &steps {
        if let Some(actor) = &step.actor {
            if !actors.contains(actor) {
                actors.push(actor.clone());
            }
        }
    }
    let blamed = blamed(story);
    // Lifelines, then a column of states, then a column of what happened,
    // so that no text crosses an arrow.
    let breaker_x = TIME_COLUMN + LANE * actors.len() + LANE / 2;
    let longest = |text: fn(&Step<'_>) -> usize| steps.iter().map(text).max().unwrap_or(0);
    let state_x = breaker_x + 10;
    let text_x = state_x + longest(|step| step.state.map_or(0, |s| s.len() * CHAR + 12)) + 12;
    let title = story.lines().next().unwrap_or("");
    let width = (text_x + longest(|step| step.text.len() * CHAR) + 16)
        .max(title.len() * CHAR + 24)
        .max(test.len() * 9 + 24);
    let height = TOP + ROW * steps.len() + 24;
    let x_of = |actor: &str| {
        TIME_COLUMN + LANE / 2 + LANE * actors.iter().position(|a| a == actor).unwrap_or(0)
    };

    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(
        svg,
        r##"<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0 0L10 5L0 10Z" fill="#37474f"/></marker></defs>
<rect width="{width}" height="{height}" fill="#ffffff"/>
<text x="12" y="20" font-size="14" font-weight="bold" fill="#212121">{}</text>
<text x="12" y="38" fill="#c62828">{}</text>"##,
        escape(test),
        escape(title)
    );
    // Lifelines, headed by their names.
    let names = actors
        .iter()
        .map(|actor| (x_of(actor), actor.as_str()))
        .chain([(breaker_x, "breaker")]);
    for (x, name) in names {
        let _ = writeln!(
            svg,
            r##"<text x="{x}" y="{}" text-anchor="middle" font-weight="bold" fill="#212121">{}</text>
<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="#90a4ae" stroke-dasharray="4 3"/>"##,
            TOP - 22,
            escape(name),
            TOP - 14,
            height - 12
        );
    }
    for (row, step) in steps.iter().enumerate() {
        let top = TOP + ROW * row;
        let y = top + ROW / 2;
        if Some(step.number) == blamed {
            let _ = writeln!(
                svg,
                r##"<rect class="blamed" x="0" y="{top}" width="{width}" height="{ROW}" fill="#ffcdd2"/>"##
            );
        }
        let _ = writeln!(
            svg,
            r##"<text x="8" y="{}" fill="#546e7a">{}. {}</text>"##,
            y + 4,
            escape(step.number),
            escape(step.at)
        );
        if let Some(actor) = &step.actor {
            let _ = writeln!(
                svg,
                r##"<line class="step" x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="#37474f" stroke-width="1.4" marker-end="url(#arrow)"/>"##,
                x_of(actor),
                breaker_x - 2
            );
        }
        // Steps nobody acts in (time passing, a read) are in italics.
        let style = if step.actor.is_some() {
            ""
        } else {
            r#" font-style="italic""#
        };
        let _ = writeln!(
            svg,
            r##"<text class="what" x="{text_x}" y="{}"{style} fill="#212121">{}</text>"##,
            y + 4,
            escape(step.text)
        );
        if let Some(state) = step.state {
            let box_width = 12 + state.len() * CHAR;
            let _ = writeln!(
                svg,
                r##"<rect x="{}" y="{}" width="{box_width}" height="{}" rx="4" fill="{}"/><text x="{}" y="{}" fill="#212121">{}</text>"##,
                state_x,
                top + 3,
                ROW - 6,
                state_colour(state),
                state_x + 6,
                y + 4,
                escape(state)
            );
        }
    }
    svg.push_str("</svg>\n");
    svg
}

/// Writes the diagram of `story` to `lab-counterexamples/<test>.svg` in the
/// cargo target directory, and returns a line saying where, for the
/// failure message; or an empty string if it could not be written, so a
/// full disk never hides the failure itself.
pub fn save(test: &str, story: &str) -> String {
    match write(test, story) {
        Some(path) => format!("\nthe same as a sequence diagram: {}\n", shown(&path)),
        None => String::new(),
    }
}

/// Removes the diagram an earlier failing run of `test` left, if any.
pub fn forget(test: &str) {
    if let Some(path) = path_of(test) {
        let _ = fs::remove_file(path);
    }
}

fn write(test: &str, story: &str) -> Option<PathBuf> {
    let path = path_of(test)?;
    fs::create_dir_all(path.parent()?).ok()?;
    fs::write(&path, render(test, story)).ok()?;
    Some(path)
}

/// Where the diagram of `test` goes. The test binary is
/// `<target>/<profile>/deps/<name>`: writing next to it keeps the workspace
/// untouched, wherever CARGO_TARGET_DIR points.
fn path_of(test: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let folder = exe.ancestors().nth(3)?.join("lab-counterexamples");
    let name: String = test
        .rsplit("::")
        .next()
        .unwrap_or(test)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    Some(folder.join(format!("{name}.svg")))
}

/// The path from the workspace root when it lies inside it.
fn shown(path: &Path) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}
