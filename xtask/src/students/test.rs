//! `cargo xtask test [STEP]` (`just test`): the suite against the student's
//! starter, reported for a student.
//!
//! libtest's own report prints every failure in full, in the order the
//! tests happened to finish; on the untouched starter that is a thousand
//! lines whose useful part scrolls away. This prints, in lab order:
//!
//! - for the whole suite, one line per failing test (its first message line)
//!   of the step to do next, and of anything outside the steps; the other
//!   steps' failures are only counted, on the scoreboard (on the untouched
//!   starter they would be some three hundred lines about later steps);
//! - for one step, that step's failures in full (stories, snapshot diffs,
//!   counterexamples);
//!
//! and ends with the scoreboard and where to start, so that the last lines
//! on the screen are the ones that matter. The output is the same from run
//! to run: no timings, no thread ids.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};

use crate::lab::{mistake_sections, steps, syllabus};
use crate::students::scoreboard::{self, Board, Start, Style};
use crate::suite::{self, Build, Results};
use crate::{root, students::filter};

/// How much of a failure's message fits on its one line.
const REASON_WIDTH: usize = 160;

/// How many lines of one failure `just test STEP` prints at most: room for
/// a snapshot diff of the worked example.
const DETAIL_LINES: usize = 120;

pub(crate) fn test(step: &str) -> Result<ExitCode, String> {
    let root = root();
    let style = Style::detect();
    let step = filter::resolve(step)?;
    let filter = step
        .as_ref()
        .map(|(number, name)| filter::filter_for(*number, name));
    match &step {
        Some((number, name)) => {
            println!("Running step {number} ({name}) of the suite against your starter...")
        }
        None => println!("Running the suite against your starter..."),
    }
    let results = suite::run(&root, None, &[], filter.as_deref(), Build::Shown, &[])?;
    let syllabus = syllabus()?;
    let board = scoreboard::board(&results, &steps()?, &syllabus.controls).needing(&syllabus.needs);
    let src = root.join("starter/src");
    let start = scoreboard::start(&results, &board, &syllabus, |marker| {
        scoreboard::find_todos(&src, marker)
    });

    let mut lines = match (&step, &start) {
        (Some(_), _) => failures_in_full(&results, DETAIL_LINES),
        (None, Start::Step { number, .. }) => {
            let next = *number;
            let mut lines = failure_list(&results, REASON_WIDTH, |step| {
                step.is_none_or(|step| step == next)
            });
            let later = results
                .iter()
                .filter(|(test, outcome)| {
                    !outcome.passed && suite::step_of(test).is_some_and(|step| step != next)
                })
                .count();
            if later > 0 {
                lines.push(format!(
                    "({later} failing test(s) of other steps, counted below; `just test N` lists step N's)"
                ));
            }
            lines
        }
        (None, _) => failure_list(&results, REASON_WIDTH, |_| true),
    };
    let refused = crate::grading::source_check::check_dir(&src, "starter/src")?;
    if !refused.is_empty() {
        // Said now, while it is cheap to fix, rather than at grading time.
        lines.push(String::new());
        lines.push(
            "warning: `just grade` will refuse your crate and score it 0, since it uses what \
             the lab never needs (the grader allows no way to write the test report or end the \
             test process):"
                .to_owned(),
        );
        lines.extend(refused.iter().map(|refusal| format!("  {refusal}")));
    }
    if snapshots_changed(&root) {
        lines.push(String::new());
        lines.push(
            "warning: the committed snapshots in tests/lab/snapshots were changed; the suite \
             compares against them, so restore them with: git checkout tests/lab/snapshots"
                .to_owned(),
        );
    }
    let sections: BTreeSet<u32> = mistake_sections().into_keys().collect();
    lines.extend(summary(
        &results,
        &board,
        &start,
        step.is_some(),
        &sections,
        style,
    ));
    for line in lines {
        println!("{line}");
    }
    if results.values().all(|outcome| outcome.passed) {
        Ok(ExitCode::SUCCESS)
    } else {
        Ok(ExitCode::FAILURE)
    }
}

/// The failing tests in lab order: by step, then by name, with the tests
/// outside the steps (the provided parts, a run that stopped early) last.
fn failing(results: &Results) -> Vec<(&String, &suite::Outcome)> {
    let mut failing: Vec<(&String, &suite::Outcome)> = results
        .iter()
        .filter(|(_, outcome)| !outcome.passed)
        .collect();
    failing.sort_by_key(|(test, _)| {
        (
            suite::step_of(test).unwrap_or(u32::MAX),
            suite::lab_order(test),
        )
    });
    failing
}

/// One line per failing test, `FAILED NAME : REASON`, grouped by step with
/// a blank line between the groups, for the steps `shown` keeps (`None`:
/// the tests outside the steps).
pub(crate) fn failure_list(
    results: &Results,
    reason_width: usize,
    shown: impl Fn(Option<u32>) -> bool,
) -> Vec<String> {
    let mut lines = Vec::new();
    let mut group = None;
    for (test, outcome) in failing(results) {
        let step = suite::step_of(test);
        if !shown(step) {
            continue;
        }
        if group != Some(step) {
            lines.push(String::new());
            group = Some(step);
        }
        lines.push(format!(
            "FAILED {test} : {}",
            scoreboard::shorten(&suite::reason(&outcome.output), reason_width)
        ));
    }
    lines
}

/// Every failing test with what it printed (at most `max_lines` lines each),
/// for a run of one step.
pub(crate) fn failures_in_full(results: &Results, max_lines: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for (test, outcome) in failing(results) {
        lines.push(String::new());
        lines.push(format!("---- {test} ----"));
        lines.extend(suite::readable(&outcome.output, max_lines));
    }
    lines
}

/// The closing summary: a headline, the scoreboard (one line per step),
/// where MISTAKES.md has more on the steps that pass (`sections`: the steps
/// it has a section for) and where to start.
pub(crate) fn summary(
    results: &Results,
    board: &Board,
    start: &Start,
    one_step: bool,
    sections: &BTreeSet<u32>,
    style: Style,
) -> Vec<String> {
    let total = results.len();
    let passed = results.values().filter(|outcome| outcome.passed).count();
    let scope = match (one_step, board.steps.first()) {
        (true, Some(step)) => format!("step {} ({}): ", step.number, step.name),
        _ => String::new(),
    };
    let mut lines = vec![
        String::new(),
        format!(
            "Summary: {scope}{passed} of {total} tests pass, {} fail.",
            total - passed
        ),
    ];
    lines.extend(scoreboard::table(board, style));
    lines.extend(mistakes_line(board, sections));
    let hint = match start {
        Start::Step { .. } if one_step => "; its failures are shown in full above.".to_owned(),
        Start::Step { number, .. } => {
            format!("; `just test {number}` shows its failures in full.")
        }
        _ => String::new(),
    };
    match (start, board.steps.first()) {
        (Start::AllPass, Some(step)) if one_step => lines.push(style.paint(
            "32",
            &format!(
                "Step {} passes. `just test` runs the whole suite.",
                step.number
            ),
        )),
        _ => lines.extend(scoreboard::start_lines(start, &hint, REASON_WIDTH, style)),
    }
    lines
}

/// One line sending the student to MISTAKES.md for the steps of the run
/// that pass and have a section there. Never for a step that does not pass
/// yet: its section would give the answers away.
fn mistakes_line(board: &Board, sections: &BTreeSet<u32>) -> Option<String> {
    let passed: Vec<u32> = board
        .steps
        .iter()
        .filter(|step| step.done && sections.contains(&step.number))
        .map(|step| step.number)
        .collect();
    match passed.as_slice() {
        [] => None,
        [one] => Some(format!(
            "Mistakes others made in step {one}, now that it passes: MISTAKES.md, \"Step {one}\"."
        )),
        _ => Some(format!(
            "Mistakes others made in steps {}, now that they pass: MISTAKES.md, a section each.",
            spans(&passed)
        )),
    }
}

/// Step numbers (ascending) as a reader says them: `1 and 2`, `1-3, 5 and
/// 10-14`.
fn spans(numbers: &[u32]) -> String {
    let mut runs = Vec::<(u32, u32)>::new();
    for &n in numbers {
        match runs.last_mut() {
            Some((_, last)) if *last + 1 == n => *last = n,
            _ => runs.push((n, n)),
        }
    }
    let mut items = Vec::new();
    for (first, last) in runs {
        match last - first {
            0 => items.push(first.to_string()),
            // Two in a row read better as a pair than as a range.
            1 => items.extend([first.to_string(), last.to_string()]),
            _ => items.push(format!("{first}-{last}")),
        }
    }
    match items.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => items.concat(),
    }
}

/// Whether the committed snapshots were edited (a student "fixing" a
/// snapshot test). Silently no when git is missing or this is no checkout.
fn snapshots_changed(root: &Path) -> bool {
    Command::new("git")
        .current_dir(root)
        .args(["diff", "--quiet", "HEAD", "--", "tests/lab/snapshots"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.code() == Some(1))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::students::scoreboard::Todo;

    /// libtest's report of a small suite: step 1 half done, step 2 failing
    /// (with a control that passes), the provided parts passing. The tests
    /// finished out of order, as they do on two threads.
    const RUN: &str = "
running 6 tests
test step2_open::b3_refuses ... FAILED
test step01_closed::b2_counts ... ok
test step01_closed::b2_opens ... FAILED
test step2_open::b3_control ... ok
test toolkit::clock ... ok
test step01_closed::b1_zero ... FAILED

failures:

---- step2_open::b3_refuses stdout ----

thread 'step2_open::b3_refuses' (41) panicked at starter/src/circuit.rs:96:17:
not yet implemented: TODO(2): refuse the attempt; see LAB.md, step 2
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

---- step01_closed::b2_opens stdout ----

thread 'step01_closed::b2_opens' (42) panicked at tests/lab/step01_closed.rs:30:5:
assertion `left == right` failed: TODO(1): the circuit opens at the threshold (B2)
  left: Closed { failures: 3 }
 right: Open

---- step01_closed::b1_zero stdout ----

thread 'step01_closed::b1_zero' (43) panicked at starter/src/circuit.rs:141:17:
not yet implemented: TODO(1): count the failure; see LAB.md, step 1


failures:
    step01_closed::b1_zero
    step01_closed::b2_opens
    step2_open::b3_refuses

test result: FAILED. 3 passed; 3 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s
";

    fn steps() -> Vec<(u32, String)> {
        vec![
            (1, "closed".into()),
            (2, "open".into()),
            (3, "half_open".into()),
        ]
    }

    fn controls() -> BTreeMap<String, String> {
        BTreeMap::from([("step2_open::b3_control".into(), "why".into())])
    }

    /// A starter whose only markers are `TODO(1): count the failure` and
    /// `TODO(2): refuse the attempt`.
    fn find(marker: &str) -> Vec<Todo> {
        let markers = [
            ("circuit.rs", 140, "// TODO(1): count the failure"),
            ("circuit.rs", 95, "// TODO(2): refuse the attempt"),
        ];
        markers
            .iter()
            .filter(|(_, _, text)| text.contains(marker))
            .map(|(file, line, text)| Todo {
                file: (*file).into(),
                line: *line,
                text: (*text).into(),
            })
            .collect()
    }

    /// The summary of a run, in a lab whose MISTAKES.md has a section for
    /// the steps in `sections`.
    fn report_with(results: &Results, one_step: bool, sections: &[u32]) -> Vec<String> {
        let board = scoreboard::board(results, &steps(), &controls());
        let syllabus = crate::lab::Syllabus {
            races: Default::default(),
            needs: Default::default(),
            controls: controls(),
            ..Default::default()
        };
        let start = scoreboard::start(results, &board, &syllabus, find);
        let sections: BTreeSet<u32> = sections.iter().copied().collect();
        summary(results, &board, &start, one_step, &sections, Style::plain())
    }

    /// The summary of a run, in a lab whose MISTAKES.md has a section for
    /// steps 1 and 2.
    fn report(results: &Results, one_step: bool) -> Vec<String> {
        report_with(results, one_step, &[1, 2])
    }

    #[test]
    fn the_whole_suite_gives_one_line_per_failure_in_lab_order_then_the_summary() {
        let results = suite::parse(RUN);
        assert_eq!(
            failure_list(&results, 60, |_| true),
            [
                "",
                "FAILED step01_closed::b1_zero : not yet implemented: TODO(1): count the failure; see LAB....",
                "FAILED step01_closed::b2_opens : assertion `left == right` failed: TODO(1): the circuit op...",
                "",
                "FAILED step2_open::b3_refuses : not yet implemented: TODO(2): refuse the attempt; see LAB...",
            ]
        );
        // `just test` lists the next step's failures only.
        assert_eq!(
            failure_list(&results, 60, |step| step.is_none_or(|step| step == 2)),
            [
                "",
                "FAILED step2_open::b3_refuses : not yet implemented: TODO(2): refuse the attempt; see LAB...",
            ]
        );
        assert_eq!(
            report(&results, false),
            [
                "",
                "Summary: 3 of 6 tests pass, 3 fail.",
                "  step 1  closed              1/3   <- next",
                "  step 2  open                0/1",
                "  provided parts              1/1",
                "Start here: step 1 (closed); `just test 1` shows its failures in full.",
                "  your TODO: starter/src/circuit.rs:140  // TODO(1): count the failure",
                "  first failing test: step01_closed::b1_zero",
                "  it says: not yet implemented: TODO(1): count the failure; see LAB.md, step 1",
                "  stuck? `just hint 1` gives a hint, one more each time",
            ]
        );
    }

    #[test]
    fn one_step_gives_its_failures_in_full_then_its_own_summary() {
        let results: Results = suite::parse(RUN)
            .into_iter()
            .filter(|(test, _)| test.starts_with("step2_open::"))
            .collect();
        assert_eq!(
            failures_in_full(&results, 60),
            [
                "",
                "---- step2_open::b3_refuses ----",
                "thread 'step2_open::b3_refuses' panicked at starter/src/circuit.rs:96:17:",
                "not yet implemented: TODO(2): refuse the attempt; see LAB.md, step 2",
            ]
        );
        assert_eq!(
            report(&results, true),
            [
                "",
                "Summary: step 2 (open): 1 of 2 tests pass, 1 fail.",
                "  step 2  open                0/1   <- next",
                "Start here: step 2 (open); its failures are shown in full above.",
                "  your TODO: starter/src/circuit.rs:95  // TODO(2): refuse the attempt",
                "  first failing test: step2_open::b3_refuses",
                "  it says: not yet implemented: TODO(2): refuse the attempt; see LAB.md, step 2",
                "  stuck? `just hint 2` gives a hint, one more each time",
            ]
        );
    }

    #[test]
    fn a_step_without_todos_of_its_own_points_at_the_todo_its_failure_names() {
        let run = "
test step3_half_open::b4_probe ... FAILED

failures:

---- step3_half_open::b4_probe stdout ----

thread 'lab-watchdog' (7) panicked at starter/src/circuit.rs:141:17:
not yet implemented: TODO(1): count the failure; see LAB.md, step 1

test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s
";
        let results = suite::parse(run);
        assert_eq!(
            report(&results, true)[3..5],
            [
                "Start here: step 3 (half_open); its failures are shown in full above.",
                "  your TODO: starter/src/circuit.rs:140  // TODO(1): count the failure",
            ]
        );
    }

    #[test]
    fn when_everything_passes_the_summary_says_so() {
        let mut results = suite::parse(RUN);
        for outcome in results.values_mut() {
            outcome.passed = true;
        }
        let lines = report(&results, false);
        assert_eq!(
            lines[1..],
            [
                "Summary: 6 of 6 tests pass, 0 fail.",
                "  step 1  closed              3/3   done",
                "  step 2  open                1/1   done",
                "  provided parts              1/1",
                "Mistakes others made in steps 1 and 2, now that they pass: MISTAKES.md, a section each.",
                "Every step passes. Well done! See LAB.md, \"Going further\".",
            ]
        );
        results.retain(|test, _| test.starts_with("step01_"));
        assert_eq!(
            report(&results, true)[2..],
            [
                "  step 1  closed              3/3   done",
                "Mistakes others made in step 1, now that it passes: MISTAKES.md, \"Step 1\".",
                "Step 1 passes. `just test` runs the whole suite.",
            ]
        );
    }

    #[test]
    fn only_a_step_that_passes_is_sent_to_its_mistakes() {
        // Step 1 half done, step 2 failing: no spoilers for either.
        let results = suite::parse(RUN);
        assert!(
            !report(&results, false)
                .iter()
                .any(|line| line.contains("MISTAKES.md"))
        );
        // Step 1 done, step 2 failing: step 1 only, whether its section or
        // the whole suite is run.
        let mut results = suite::parse(RUN);
        for (test, outcome) in results.iter_mut() {
            outcome.passed = !test.starts_with("step2_");
        }
        let said = |lines: Vec<String>| -> Vec<String> {
            lines
                .into_iter()
                .filter(|line| line.contains("MISTAKES.md"))
                .collect()
        };
        assert_eq!(
            said(report(&results, false)),
            ["Mistakes others made in step 1, now that it passes: MISTAKES.md, \"Step 1\"."]
        );
        // A step that passes but has no section there: nothing to point at.
        assert_eq!(said(report_with(&results, false, &[2, 3])), [] as [&str; 0]);
    }

    #[test]
    fn the_steps_that_pass_are_said_as_runs() {
        assert_eq!(spans(&[4]), "4");
        assert_eq!(spans(&[1, 2]), "1 and 2");
        assert_eq!(spans(&[1, 2, 3, 5]), "1-3 and 5");
        assert_eq!(
            spans(&[1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14]),
            "1-7 and 10-14"
        );
        assert_eq!(spans(&[1, 3, 4, 6, 7, 8]), "1, 3, 4 and 6-8");
    }

    #[test]
    fn a_suite_that_stopped_early_is_a_failure_listed_after_the_steps() {
        let mut results = suite::parse(RUN);
        for outcome in results.values_mut() {
            outcome.passed = true;
        }
        results.insert(
            suite::STOPPED_EARLY.to_owned(),
            suite::Outcome {
                passed: false,
                output: "watchdog: step01_closed::b2_opens was still running after 5s\n".into(),
            },
        );
        assert_eq!(
            failure_list(&results, 160, |_| true),
            [
                "",
                "FAILED (the suite stopped early) : watchdog: step01_closed::b2_opens was still running after 5s",
            ]
        );
        assert_eq!(
            report(&results, false)[5..],
            [
                "Mistakes others made in steps 1 and 2, now that they pass: MISTAKES.md, a section each.",
                "Start here: (the suite stopped early)",
                "  it says: watchdog: step01_closed::b2_opens was still running after 5s",
            ]
        );
    }

    /// Steps 1-10 and one optional step 11, each with one test, passing as
    /// `passed` says.
    fn advanced_run(passed: impl Fn(u32) -> bool) -> Results {
        (1..=11)
            .map(|n| {
                (
                    format!("step{n}_s::k1_t"),
                    suite::Outcome {
                        passed: passed(n),
                        output: String::new(),
                    },
                )
            })
            .collect()
    }

    fn advanced_table(results: &Results) -> Vec<String> {
        let steps: Vec<(u32, String)> = (1..=11).map(|n| (n, "s".to_owned())).collect();
        let board = scoreboard::board(results, &steps, &BTreeMap::new());
        scoreboard::table(&board, Style::plain())
    }

    #[test]
    fn the_optional_steps_come_after_the_core_and_say_so() {
        let lines = advanced_table(&advanced_run(|n| n < 3));
        assert_eq!(lines[2], "  step 3  s                   0/1   <- next");
        assert_eq!(
            lines[10..],
            [
                "  optional, after the core lab (the advanced track):",
                "  step 11 s                   0/1",
            ]
        );
    }

    #[test]
    fn a_step_whose_counted_tests_pass_but_a_control_fails_says_so() {
        let mut results = advanced_run(|n| n < 4);
        results.insert(
            "step3_s::b6_control".to_owned(),
            suite::Outcome {
                passed: false,
                output: String::new(),
            },
        );
        let steps: Vec<(u32, String)> = (1..=11).map(|n| (n, "s".to_owned())).collect();
        let controls = BTreeMap::from([("step3_s::b6_control".to_owned(), "why".to_owned())]);
        let board = scoreboard::board(&results, &steps, &controls);
        assert_eq!(
            scoreboard::table(&board, Style::plain())[2],
            "  step 3  s                   1/1   <- next (1 control failing: a rule applied too widely)"
        );
    }

    #[test]
    fn with_steps_1_to_10_passing_the_core_lab_is_done() {
        let lines = advanced_table(&advanced_run(|n| n <= 10));
        assert_eq!(
            lines[9..],
            [
                "  step 10 s                   1/1   done",
                "  core lab done: steps 1-10 pass",
                "  optional, after the core lab (the advanced track):",
                "  step 11 s                   0/1   <- next (optional)",
            ]
        );
        let all = advanced_table(&advanced_run(|_| true));
        assert_eq!(all[10], "  core lab done: steps 1-10 pass");
        assert_eq!(all[12], "  step 11 s                   1/1   done");
    }

    /// A step whose prerequisite is not done says which to do first; once
    /// it is done, the step says nothing of it.
    #[test]
    fn an_optional_step_says_which_step_it_needs_first() {
        let mut results = advanced_run(|n| n <= 10);
        results.insert(
            "step12_s::s1_t".to_owned(),
            suite::Outcome {
                passed: false,
                output: String::new(),
            },
        );
        let steps: Vec<(u32, String)> = (1..=12).map(|n| (n, "s".to_owned())).collect();
        let needs = BTreeMap::from([(12, vec![11])]);
        let board = scoreboard::board(&results, &steps, &BTreeMap::new()).needing(&needs);
        assert_eq!(
            scoreboard::table(&board, Style::plain())[13],
            "  step 12 s                   0/1   (needs step 11 first)"
        );
        results.insert(
            "step11_s::k1_t".to_owned(),
            suite::Outcome {
                passed: true,
                output: String::new(),
            },
        );
        let board = scoreboard::board(&results, &steps, &BTreeMap::new()).needing(&needs);
        assert_eq!(
            scoreboard::table(&board, Style::plain())[13],
            "  step 12 s                   0/1   <- next (optional)"
        );
    }

    #[test]
    fn one_core_step_alone_is_not_the_core_lab_done() {
        let mut results = advanced_run(|_| true);
        results.retain(|test, _| test.starts_with("step10_"));
        let lines = advanced_table(&results);
        assert_eq!(lines, ["  step 10 s                   1/1   done"]);
    }
}
