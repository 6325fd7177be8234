//! The grade, written out: Gradescope's `results.json`, JUnit XML for CI
//! systems and GitHub Classroom, and a short summary for people.
//!
//! Both formats are written by hand, with their escaping, so the tools need
//! no serialization crate. Nothing here reads a clock, so the same grade
//! always gives the same bytes.

use std::fmt::Write as _;

use crate::grade::{Grade, StepScore, Verdict};

/// Points as a plain number: `10`, `6.67`.
fn points(value: f64) -> String {
    let text = format!("{value:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// A step's title, as every report names it.
fn title(step: &StepScore) -> String {
    format!("Step {}: {}", step.number, step.name.replace('_', " "))
}

/// One line per test: what passed, what failed and why.
fn listing(tests: &[Verdict]) -> String {
    let mut out = String::new();
    for test in tests {
        let mark = if test.passed { "pass" } else { "FAIL" };
        let control = if test.control {
            " (control, no points)"
        } else {
            ""
        };
        write!(out, "{mark}  {}{control}", test.name).unwrap();
        if !test.passed {
            write!(out, ": {}", test.reason).unwrap();
        }
        out.push('\n');
    }
    out
}

fn step_output(grade: &Grade, step: &StepScore) -> String {
    if let Some(error) = &grade.build_error {
        return format!("The crate did not build, so no test ran:\n{error}\n");
    }
    let scored: Vec<&Verdict> = step.scored().collect();
    let passed = scored.iter().filter(|test| test.passed).count();
    format!(
        "{passed} of {} tests pass.\n{}",
        scored.len(),
        listing(&step.tests)
    )
}

/// The human summary, also printed by `just grade`.
pub fn summary(grade: &Grade) -> String {
    let mut out = String::new();
    writeln!(
        out,
        "Grade of {}: {} / {}",
        grade.graded,
        points(grade.score()),
        points(grade.max_score())
    )
    .unwrap();
    if let Some(error) = &grade.build_error {
        writeln!(
            out,
            "The crate did not build, so every step scores 0:\n{error}"
        )
        .unwrap();
    }
    for step in &grade.steps {
        let scored: Vec<&Verdict> = step.scored().collect();
        let passed = scored.iter().filter(|test| test.passed).count();
        let line = format!(
            "  step {:<2} {:<18} {passed:>2}/{:<2} tests  {:>6} / {}",
            step.number,
            step.name,
            scored.len(),
            points(step.score),
            points(step.points)
        );
        writeln!(out, "{line}").unwrap();
    }
    let ok = grade.provided.iter().filter(|test| test.passed).count();
    writeln!(
        out,
        "  {:<26} {ok:>2}/{:<2} tests  {:>6} / {}",
        "provided parts",
        grade.provided.len(),
        points(grade.provided_score),
        points(grade.provided_points)
    )
    .unwrap();
    // A failing control matters once its step's other tests pass: the rule
    // is then applied too widely. Before that, it is just unfinished work.
    let controls: Vec<&Verdict> = grade
        .steps
        .iter()
        .flat_map(|step| step.tests.iter())
        .filter(|test| test.control)
        .collect();
    let passing = controls.iter().filter(|test| test.passed).count();
    let over_applied: Vec<&str> = grade
        .steps
        .iter()
        .filter(|step| step.scored().all(|test| test.passed))
        .flat_map(|step| step.tests.iter())
        .filter(|test| test.control && !test.passed)
        .map(|test| test.name.as_str())
        .collect();
    writeln!(
        out,
        "  {:<26} {passing:>2}/{:<2} pass{}",
        "controls (no points)",
        controls.len(),
        if over_applied.is_empty() {
            String::new()
        } else {
            format!("; failing in a finished step: {}", over_applied.join(", "))
        }
    )
    .unwrap();
    if grade.held_back > 0 {
        writeln!(
            out,
            "  ({} held-back test module(s) included)",
            grade.held_back
        )
        .unwrap();
    }
    out
}

/// Gradescope's autograder format: one entry per step, plus the provided
/// parts, each listing its tests in `output`.
pub fn gradescope(grade: &Grade) -> String {
    let mut tests = Vec::new();
    for step in &grade.steps {
        tests.push((
            title(step),
            step.score,
            step.points,
            step_output(grade, step),
        ));
    }
    tests.push((
        "Provided parts".to_owned(),
        grade.provided_score,
        grade.provided_points,
        listing(&grade.provided),
    ));
    let mut out = String::from("{\n");
    writeln!(out, "  \"score\": {},", points(grade.score())).unwrap();
    writeln!(out, "  \"output\": {},", json_string(&summary(grade))).unwrap();
    out.push_str("  \"tests\": [\n");
    for (index, (name, score, max, output)) in tests.iter().enumerate() {
        let comma = if index + 1 == tests.len() { "" } else { "," };
        writeln!(
            out,
            "    {{\"name\": {}, \"score\": {}, \"max_score\": {}, \"output\": {}}}{comma}",
            json_string(name),
            points(*score),
            points(*max),
            json_string(output)
        )
        .unwrap();
    }
    out.push_str("  ]\n}\n");
    out
}

/// JUnit XML: a test suite per step, a test case per test; the step's
/// score and points ride along as properties.
pub fn junit(grade: &Grade) -> String {
    let all: Vec<&Verdict> = grade
        .steps
        .iter()
        .flat_map(|step| step.tests.iter())
        .chain(grade.provided.iter())
        .collect();
    let build_failed = usize::from(grade.build_error.is_some());
    let failures = all.iter().filter(|test| !test.passed).count() + build_failed;
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    writeln!(
        out,
        "<testsuites name=\"retry-breaker lab\" tests=\"{}\" failures=\"{failures}\">",
        all.len() + build_failed
    )
    .unwrap();
    if let Some(error) = &grade.build_error {
        out.push_str("  <testsuite name=\"build\" tests=\"1\" failures=\"1\">\n");
        writeln!(
            out,
            "    <testcase name=\"the crate builds\" classname=\"build\"><failure message=\"the crate did not build\">{}</failure></testcase>",
            xml_escape(error)
        )
        .unwrap();
        out.push_str("  </testsuite>\n");
    }
    for step in &grade.steps {
        suite(
            &mut out,
            &format!("step{}_{}", step.number, step.name),
            step.score,
            step.points,
            &step.tests,
        );
    }
    suite(
        &mut out,
        "provided",
        grade.provided_score,
        grade.provided_points,
        &grade.provided,
    );
    out.push_str("</testsuites>\n");
    out
}

fn suite(out: &mut String, name: &str, score: f64, max: f64, tests: &[Verdict]) {
    let failures = tests.iter().filter(|test| !test.passed).count();
    writeln!(
        out,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\">",
        xml_escape(name),
        tests.len()
    )
    .unwrap();
    writeln!(
        out,
        "    <properties><property name=\"score\" value=\"{}\"/><property name=\"max_score\" value=\"{}\"/></properties>",
        points(score),
        points(max)
    )
    .unwrap();
    for test in tests {
        let (module, case) = test.name.split_once("::").unwrap_or(("", &test.name));
        write!(
            out,
            "    <testcase name=\"{}\" classname=\"{}\"",
            xml_escape(case),
            xml_escape(module)
        )
        .unwrap();
        if test.passed {
            out.push_str("/>\n");
        } else {
            writeln!(
                out,
                "><failure message=\"{}\">{}</failure></testcase>",
                xml_escape(&test.reason),
                xml_escape(&test.detail)
            )
            .unwrap();
        }
    }
    out.push_str("  </testsuite>\n");
}

/// A JSON string literal.
pub fn json_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => write!(out, "\\u{:04x}", u32::from(c)).unwrap(),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Text for an XML attribute or element. Characters XML 1.0 cannot hold at
/// all (most control characters, such as a terminal colour's escape) are
/// dropped.
pub fn xml_escape(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\t' | '\r' => write!(out, "&#{};", u32::from(c)).unwrap(),
            c if u32::from(c) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_escape_quotes_backslashes_and_controls() {
        assert_eq!(
            json_string("a \"b\" \\ c\n\u{1b}[31m"),
            "\"a \\\"b\\\" \\\\ c\\n\\u001b[31m\""
        );
    }

    #[test]
    fn xml_text_escapes_markup_and_drops_what_xml_cannot_hold() {
        assert_eq!(
            xml_escape("<a href='x'>&\"\u{1b}</a>\n"),
            "&lt;a href=&apos;x&apos;&gt;&amp;&quot;&lt;/a&gt;&#10;"
        );
    }

    #[test]
    fn points_print_without_trailing_zeros() {
        assert_eq!(points(10.0), "10");
        assert_eq!(points(6.666_7), "6.67");
        assert_eq!(points(2.5), "2.5");
        assert_eq!(points(0.0), "0");
    }
}
