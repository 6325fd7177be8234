//! The grade, written out: Gradescope's `results.json`, JUnit XML for CI
//! systems and GitHub Classroom, and a short summary for people.
//!
//! Both formats are written by hand, with their escaping, so the tools need
//! no serialization crate. Nothing here reads a clock, so the same grade
//! always gives the same bytes.

use std::fmt::Write as _;

use crate::grading::grade::{Grade, GradedTest, StepScore, round};

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
fn listing(tests: &[GradedTest]) -> String {
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

/// What a step's entry says about `tests` (its visible or its held-back
/// ones).
fn step_output(grade: &Grade, tests: &[GradedTest]) -> String {
    if !grade.refused.is_empty() {
        return "The grader refused the crate, so no test ran (see the summary).\n".to_owned();
    }
    if let Some(error) = &grade.build_error {
        return format!("The crate did not build, so no test ran:\n{error}\n");
    }
    if tests.is_empty() && !grade.unscored.is_empty() {
        return format!("Not run: worth no points. {RUN_UNSCORED}\n");
    }
    let scored = tests.iter().filter(|test| !test.control);
    let (passed, total) = scored.fold((0, 0), |(p, t), test| (p + usize::from(test.passed), t + 1));
    format!("{passed} of {total} tests pass.\n{}", listing(tests))
}

/// How an instructor runs the tests a grade skips as worth no points.
const RUN_UNSCORED: &str =
    "`run_unscored = true` in grading/weights.toml (or `just grade DIR --all-steps`) runs them.";

/// A step's points split between its visible and its held-back tests, in
/// proportion to how many each has, with the step's score split by what
/// passed: `((score, max), (score, max))`, summing exactly to the step's.
fn split(step: &StepScore) -> ((f64, f64), (f64, f64)) {
    let (mut visible, mut held, mut visible_passed) = (0u32, 0u32, 0u32);
    for test in step.scored() {
        if test.held_back {
            held += 1;
        } else {
            visible += 1;
            visible_passed += u32::from(test.passed);
        }
    }
    let total = f64::from(visible + held);
    if held == 0 || total == 0.0 {
        return ((step.score, step.points), (0.0, 0.0));
    }
    let visible_max = round(step.points * f64::from(visible) / total);
    let visible_score = round(step.points * f64::from(visible_passed) / total).min(step.score);
    (
        (visible_score, visible_max),
        (
            round(step.score - visible_score),
            round(step.points - visible_max),
        ),
    )
}

/// A test as the student sees it before grades are published.
fn shown_name(test: &GradedTest) -> String {
    match (test.held_back, crate::suite::step_of(&test.name)) {
        (true, Some(step)) => format!("a held-back test of step {step}"),
        _ => test.name.clone(),
    }
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
    let bonus = grade.bonus_score();
    if bonus > 0.0 {
        writeln!(
            out,
            "  the core {} / {}, and a bonus of {}{}",
            points(grade.core_score()),
            points(grade.max_score()),
            points(bonus),
            if grade.earns_bonuses() {
                ""
            } else {
                ", not counted: a bonus counts only once every step with points earns all of them"
            }
        )
        .unwrap();
    }
    let seed = &grade.seed;
    writeln!(
        out,
        "Seed {}{}; property tests: {}, {}",
        seed.value,
        seed.student
            .as_ref()
            .map_or(" (no student id)".to_owned(), |id| format!(
                " (student {id})"
            )),
        seed.explore
            .map_or("the suite's seed".to_owned(), |s| format!("seed {s}")),
        seed.cases
            .map_or("the suite's cases".to_owned(), |c| format!("{c} cases")),
    )
    .unwrap();
    if let Some(confinement) = &grade.confinement {
        writeln!(out, "Held-back tests: {confinement}").unwrap();
    }
    if !grade.refused.is_empty() {
        writeln!(
            out,
            "REFUSED: the source check found what the lab never needs, so nothing was built and every step scores 0:"
        )
        .unwrap();
        for refusal in &grade.refused {
            writeln!(out, "  {refusal}").unwrap();
        }
    }
    if let Some(error) = &grade.build_error {
        writeln!(
            out,
            "The crate did not build, so every step scores 0:\n{error}"
        )
        .unwrap();
    }
    if !grade.forgeries.is_empty() {
        writeln!(out, "FORGED verdicts (these tests earn nothing):").unwrap();
        let all: Vec<&GradedTest> = grade
            .steps
            .iter()
            .flat_map(|s| s.tests.iter())
            .chain(&grade.provided)
            .collect();
        for (test, seen) in &grade.forgeries {
            let shown = all
                .iter()
                .find(|verdict| &verdict.name == test)
                .map_or_else(|| test.clone(), |verdict| shown_name(verdict));
            writeln!(out, "  {shown}: {seen}").unwrap();
        }
    }
    if !grade.ignored.is_empty() {
        writeln!(
            out,
            "Not graded (only starter/src/*.rs is, and tuning.toml for the tuning task; the grader uses its own copy of the rest):"
        )
        .unwrap();
        for file in &grade.ignored {
            writeln!(out, "  {file}").unwrap();
        }
    }
    for step in &grade.steps {
        let scored: Vec<&GradedTest> = step.scored().collect();
        let passed = scored.iter().filter(|test| test.passed).count();
        // Nothing ran when the crate was refused or did not build: "0/0"
        // would read as a step without tests.
        // Nor when the step is worth no points and was skipped.
        let skipped = step.tests.is_empty()
            && grade
                .unscored
                .iter()
                .any(|name| crate::suite::step_of(name) == Some(step.number));
        let count = if grade.refused.is_empty() && grade.build_error.is_none() && !skipped {
            format!("{passed:>2}/{:<2} tests", scored.len())
        } else {
            format!("{:<11}", "not run")
        };
        let line = format!(
            "  step {:<2} {:<18} {count}  {:>6} / {}",
            step.number,
            step.name,
            points(step.score),
            points(step.points)
        );
        writeln!(out, "{line}").unwrap();
    }
    let ok = grade.provided.iter().filter(|test| test.passed).count();
    let provided_skipped = grade.provided.is_empty()
        && grade
            .unscored
            .iter()
            .any(|name| crate::suite::step_of(name).is_none());
    let count = if provided_skipped {
        format!("{:<11}", "not run")
    } else {
        format!("{ok:>2}/{:<2} tests", grade.provided.len())
    };
    writeln!(
        out,
        "  {:<26} {count}  {:>6} / {}",
        "provided parts",
        points(grade.provided_score),
        points(grade.provided_points)
    )
    .unwrap();
    if let Some(tuning) = &grade.tuning {
        writeln!(
            out,
            "  {:<26} {:>2}/{:<2} levels {:>5} / {} bonus (gain {:.1} reached)",
            "tuning task",
            tuning.levels.iter().filter(|level| level.passed).count(),
            tuning.levels.len(),
            points(tuning.score),
            points(tuning.points),
            f64::from(tuning.reached()) / 100.0
        )
        .unwrap();
    }
    // A failing control matters once its step's other tests pass: the rule
    // is then applied too widely. Before that, it is just unfinished work.
    let controls: Vec<&GradedTest> = grade
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
    if !grade.unscored.is_empty() {
        writeln!(
            out,
            "  ({} test(s) worth no points not run: {RUN_UNSCORED})",
            grade.unscored.len()
        )
        .unwrap();
    }
    if !grade.races.is_empty() {
        writeln!(
            out,
            "  ({} race test(s) not graded: real threads against each other, whose verdict on a \
             wrong crate can change from run to run; `just test` runs them)",
            grade.races.len()
        )
        .unwrap();
    }
    if !grade.predictions.is_empty() && !grade.reveal_predictions {
        writeln!(
            out,
            "  {:<26} {} recorded; right or wrong is shown when the course grades them",
            "predictions",
            grade
                .predictions
                .iter()
                .filter(|p| p.predicted.is_some())
                .count()
        )
        .unwrap();
    } else if !grade.predictions.is_empty() {
        let counted = grade.predictions.iter().filter(|p| p.score > 0.0).count();
        writeln!(
            out,
            "  {:<26} {counted:>2}/{:<2} right, in time  {:>6} / {} (a bonus)",
            "predictions",
            grade.predictions.len(),
            points(grade.predictions_score()),
            points(grade.predictions_points())
        )
        .unwrap();
        for prediction in &grade.predictions {
            writeln!(
                out,
                "    {}",
                crate::students::predict::describe(prediction, grade.reveal_predictions)
            )
            .unwrap();
        }
    }
    out
}

/// Gradescope's autograder format: one entry per step, plus the provided
/// parts, each listing its tests in `output`.
/// Why a bonus entry scores nothing although it was earned, if it does.
fn bonus_note(grade: &Grade) -> &'static str {
    if grade.earns_bonuses() {
        ""
    } else {
        "Not counted: a bonus counts only once every step with points earns all of them.\n"
    }
}

pub fn gradescope(grade: &Grade) -> String {
    // (name, score, max, output, visibility)
    let mut tests: Vec<(String, f64, f64, String, Option<&str>)> = Vec::new();
    for step in &grade.steps {
        let ((score, max), (held_score, held_max)) = split(step);
        let (held, visible): (Vec<GradedTest>, Vec<GradedTest>) =
            step.tests.iter().cloned().partition(|test| test.held_back);
        tests.push((title(step), score, max, step_output(grade, &visible), None));
        if !held.is_empty() {
            tests.push((
                format!("{} (held-back tests)", title(step)),
                held_score,
                held_max,
                step_output(grade, &held),
                Some(grade.held_back_visibility.as_str()),
            ));
        }
    }
    let skipped = grade.provided.is_empty()
        && grade
            .unscored
            .iter()
            .any(|name| crate::suite::step_of(name).is_none());
    tests.push((
        "Provided parts".to_owned(),
        grade.provided_score,
        grade.provided_points,
        if skipped {
            format!("Not run: worth no points. {RUN_UNSCORED}\n")
        } else {
            listing(&grade.provided)
        },
        None,
    ));
    if let Some(tuning) = &grade.tuning {
        // A bonus, as the predictions are: max_score 0, the points on top.
        tests.push((
            format!("Tuning task (bonus, up to {})", points(tuning.points)),
            if grade.earns_bonuses() {
                tuning.score
            } else {
                0.0
            },
            0.0,
            format!("{}{}", listing(&tuning.levels), bonus_note(grade)),
            None,
        ));
    }
    // A bonus: Gradescope counts a score above an entry's max_score of 0 as
    // extra credit, so the lab's own points still sum to its total.
    for prediction in &grade.predictions {
        tests.push((
            format!("Prediction for step {}", prediction.step),
            if grade.earns_bonuses() { prediction.score } else { 0.0 },
            0.0,
            format!(
                "{}\nA right prediction made in time, before the step's code, earns {} bonus point(s).\n{}",
                crate::students::predict::describe(prediction, grade.reveal_predictions),
                points(prediction.points),
                bonus_note(grade)
            ),
            // Shown when the held-back tests are: a prediction's entry says
            // whether it was right.
            Some(grade.held_back_visibility.as_str()),
        ));
    }
    let mut out = String::from("{\n");
    writeln!(out, "  \"score\": {},", points(grade.score())).unwrap();
    writeln!(out, "  \"output\": {},", json_string(&summary(grade))).unwrap();
    out.push_str("  \"extra_data\": {\n");
    writeln!(out, "    \"seed\": {},", grade.seed.value).unwrap();
    writeln!(
        out,
        "    \"student\": {},",
        grade
            .seed
            .student
            .as_deref()
            .map_or("null".to_owned(), json_string)
    )
    .unwrap();
    let list = |items: Vec<String>| format!("[{}]", items.join(", "));
    writeln!(
        out,
        "    \"refused\": {},",
        list(grade.refused.iter().map(|r| json_string(r)).collect())
    )
    .unwrap();
    writeln!(
        out,
        "    \"ignored\": {},",
        list(grade.ignored.iter().map(|r| json_string(r)).collect())
    )
    .unwrap();
    writeln!(
        out,
        "    \"forgeries\": {}",
        list(
            grade
                .forgeries
                .iter()
                .map(|(test, seen)| format!(
                    "{{\"test\": {}, \"seen\": {}}}",
                    json_string(test),
                    json_string(seen)
                ))
                .collect()
        )
    )
    .unwrap();
    out.push_str("  },\n");
    out.push_str("  \"tests\": [\n");
    for (index, (name, score, max, output, visibility)) in tests.iter().enumerate() {
        let comma = if index + 1 == tests.len() { "" } else { "," };
        let visibility = visibility.map_or(String::new(), |v| {
            format!(", \"visibility\": {}", json_string(v))
        });
        writeln!(
            out,
            "    {{\"name\": {}, \"score\": {}, \"max_score\": {}, \"output\": {}{visibility}}}{comma}",
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
/// score and points ride along as properties. The tuning task's levels and
/// the predictions, when graded, follow as bonus suites (see [`bonus`]).
pub fn junit(grade: &Grade) -> String {
    let all: Vec<&GradedTest> = grade
        .steps
        .iter()
        .flat_map(|step| step.tests.iter())
        .chain(grade.provided.iter())
        .collect();
    let build_failed = usize::from(grade.build_error.is_some());
    let bonuses = grade
        .tuning
        .as_ref()
        .map_or(0, |tuning| tuning.levels.len())
        + grade.predictions.len();
    let failures = all.iter().filter(|test| !test.passed).count() + build_failed;
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    writeln!(
        out,
        "<testsuites name=\"retry-breaker lab\" tests=\"{}\" failures=\"{failures}\">",
        all.len() + build_failed + bonuses
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
            &format!("step{:02}_{}", step.number, step.name),
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
    if let Some(tuning) = &grade.tuning {
        let levels: Vec<Bonus> = tuning
            .levels
            .iter()
            .map(|level| {
                let (module, case) = level.name.split_once("::").unwrap_or(("", &level.name));
                Bonus {
                    class: module.to_owned(),
                    name: case.to_owned(),
                    missed: (!level.passed).then(|| format!("level not reached: {}", level.reason)),
                }
            })
            .collect();
        bonus(&mut out, "tuning", tuning.score, tuning.points, &levels);
    }
    if !grade.predictions.is_empty() {
        let predictions: Vec<Bonus> = grade
            .predictions
            .iter()
            .map(|prediction| Bonus {
                class: "predictions".to_owned(),
                name: format!("step {}", prediction.step),
                missed: (prediction.score <= 0.0).then(|| {
                    crate::students::predict::describe(prediction, grade.reveal_predictions)
                }),
            })
            .collect();
        bonus(
            &mut out,
            "predictions",
            grade.predictions_score(),
            grade.predictions_points(),
            &predictions,
        );
    }
    out.push_str("</testsuites>\n");
    out
}

/// One bonus point source in JUnit: a tuning level or a prediction, and
/// why it earned nothing, if it did not.
struct Bonus {
    class: String,
    name: String,
    missed: Option<String>,
}

/// A bonus (the tuning task's levels, the predictions) as a suite of its
/// own. A bonus not earned is no failure of the student's code, so it is
/// reported as skipped, with why: a CI page stays green for a student who
/// did not predict, and still shows what each bonus came to.
fn bonus(out: &mut String, name: &str, score: f64, max: f64, cases: &[Bonus]) {
    let skipped = cases.iter().filter(|case| case.missed.is_some()).count();
    writeln!(
        out,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"0\" skipped=\"{skipped}\">",
        xml_escape(name),
        cases.len()
    )
    .unwrap();
    writeln!(
        out,
        "    <properties><property name=\"score\" value=\"{}\"/><property name=\"max_score\" value=\"{}\"/><property name=\"bonus\" value=\"true\"/></properties>",
        points(score),
        points(max)
    )
    .unwrap();
    for case in cases {
        write!(
            out,
            "    <testcase name=\"{}\" classname=\"{}\"",
            xml_escape(&case.name),
            xml_escape(&case.class)
        )
        .unwrap();
        match &case.missed {
            None => out.push_str("/>\n"),
            Some(why) => writeln!(
                out,
                "><skipped message=\"{}\"/></testcase>",
                xml_escape(why)
            )
            .unwrap(),
        }
    }
    out.push_str("  </testsuite>\n");
}

fn suite(out: &mut String, name: &str, score: f64, max: f64, tests: &[GradedTest]) {
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

    /// A grade of `steps` with nothing else to say: no build error, no
    /// refusal, no bonus, no race.
    fn graded(steps: Vec<StepScore>) -> Grade {
        Grade {
            graded: "the crate".to_owned(),
            steps,
            provided: Vec::new(),
            provided_points: 0.0,
            provided_score: 0.0,
            held_back: 0,
            build_error: None,
            refused: Vec::new(),
            ignored: Vec::new(),
            forgeries: Vec::new(),
            seed: crate::grading::grade::Seed {
                student: None,
                value: 1,
                explore: None,
                cases: None,
            },
            held_back_visibility: "after_published".to_owned(),
            confinement: None,
            predictions: Vec::new(),
            reveal_predictions: true,
            races: Vec::new(),
            unscored: Vec::new(),
            tuning: None,
        }
    }

    fn verdict(name: &str, passed: bool) -> GradedTest {
        GradedTest {
            name: name.to_owned(),
            passed,
            control: false,
            reason: if passed {
                String::new()
            } else {
                "scored 0.6".to_owned()
            },
            detail: String::new(),
            held_back: false,
        }
    }

    fn prediction(
        step: u32,
        predicted: Option<&str>,
        right: bool,
    ) -> crate::students::predict::Scored {
        crate::students::predict::Scored {
            step,
            predicted: predicted.map(str::to_owned),
            truth: "4 3".to_owned(),
            in_time: true,
            again: false,
            right,
            problem: None,
            points: 0.5,
            score: if right { 0.5 } else { 0.0 },
        }
    }

    #[test]
    fn a_step_worth_no_points_that_was_skipped_says_so_and_how_to_run_it() {
        let step = |number: u32, points: f64, tests: Vec<GradedTest>| StepScore {
            number,
            name: format!("s{number}"),
            points,
            score: points,
            tests,
        };
        let grade = Grade {
            unscored: vec!["step2_s2::x".to_owned(), "toolkit::y".to_owned()],
            ..graded(vec![
                step(1, 10.0, vec![verdict("step1_s1::b2_a", true)]),
                step(2, 0.0, Vec::new()),
            ])
        };
        let text = summary(&grade);
        assert!(text.contains("step 1  s1"), "{text}");
        assert!(
            text.lines()
                .any(|line| line.contains("step 2  s2") && line.contains("not run")),
            "{text}"
        );
        assert!(
            text.lines()
                .any(|line| line.contains("provided parts") && line.contains("not run")),
            "{text}"
        );
        assert!(
            text.contains("(2 test(s) worth no points not run: `run_unscored = true`"),
            "{text}"
        );
        let results = gradescope(&grade);
        assert!(results.contains("Not run: worth no points."), "{results}");
    }

    #[test]
    fn junit_reports_the_tuning_levels_and_the_predictions_as_bonuses_skipped_when_unearned() {
        let grade = Grade {
            predictions: vec![prediction(6, Some("4 3"), true), prediction(7, None, false)],
            tuning: Some(crate::grading::grade::Tuning {
                points: 5.0,
                score: 0.5,
                levels: vec![
                    verdict("graded::score_reaches_10", true),
                    verdict("graded::score_reaches_20", false),
                ],
            }),
            ..graded(vec![StepScore {
                number: 1,
                name: "closed".to_owned(),
                points: 10.0,
                score: 5.0,
                tests: vec![
                    verdict("step01_closed::b2_a", true),
                    verdict("step01_closed::b2_b", false),
                ],
            }])
        };
        let xml = junit(&grade);
        assert!(
            xml.contains("<testsuites name=\"retry-breaker lab\" tests=\"6\" failures=\"1\">"),
            "{xml}"
        );
        assert!(
            xml.contains("<testsuite name=\"tuning\" tests=\"2\" failures=\"0\" skipped=\"1\">"),
            "{xml}"
        );
        assert!(
            xml.contains("<testcase name=\"score_reaches_10\" classname=\"graded\"/>"),
            "{xml}"
        );
        assert!(
            xml.contains(
                "<testcase name=\"score_reaches_20\" classname=\"graded\"><skipped message=\"level not reached: scored 0.6\"/></testcase>"
            ),
            "{xml}"
        );
        assert!(
            xml.contains(
                "<testsuite name=\"predictions\" tests=\"2\" failures=\"0\" skipped=\"1\">"
            ),
            "{xml}"
        );
        assert!(
            xml.contains("<property name=\"score\" value=\"0.5\"/><property name=\"max_score\" value=\"1\"/><property name=\"bonus\" value=\"true\"/>"),
            "{xml}"
        );
        assert!(
            xml.contains("<testcase name=\"step 6\" classname=\"predictions\"/>"),
            "{xml}"
        );
        assert!(
            xml.contains(
                "<testcase name=\"step 7\" classname=\"predictions\"><skipped message=\"step 7: no prediction\"/></testcase>"
            ),
            "{xml}"
        );
        assert_eq!(
            xml.matches("<failure").count(),
            1,
            "only the step's failed test: {xml}"
        );
        // Step 1 has half its points: the bonuses are shown, not counted.
        assert!(!grade.earns_bonuses());
        assert_eq!(grade.score(), 5.0);
        assert_eq!(grade.bonus_score(), 1.0);
        let summary = summary(&grade);
        assert!(summary.contains("Grade of the crate: 5 / 10"), "{summary}");
        assert!(summary.contains("a bonus of 1, not counted"), "{summary}");
        let json = gradescope(&grade);
        assert!(json.contains("\"score\": 5,"), "{json}");
        assert!(
            json.contains("Not counted: a bonus counts only once"),
            "{json}"
        );
        // With every step's points, they count.
        let mut full = grade.clone();
        full.steps[0].score = 10.0;
        assert!(full.earns_bonuses());
        assert_eq!(full.score(), 11.0);
    }

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
