//! The scoreboard that `cargo xtask progress` prints and that ends every
//! `cargo xtask test`: tests passing per step, then where to start.
//!
//! Everything here is a pure function of the results, except [`find_todos`],
//! which reads the starter, so that the unit tests can feed canned results.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::IsTerminal;
use std::path::Path;

use crate::lab::Syllabus;
use crate::rules::{self, Rule};
use crate::suite::{self, Results};

/// Text styles for a terminal; plain text when piped or when `NO_COLOR` is set.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Style {
    on: bool,
}

impl Style {
    pub(crate) fn detect() -> Style {
        Style {
            on: std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
        }
    }

    /// No colours at all, for tests and pipes.
    #[cfg(test)]
    pub(crate) fn plain() -> Style {
        Style { on: false }
    }

    pub(crate) fn paint(&self, code: &str, text: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }
}

/// One step's line on the scoreboard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StepScore {
    pub number: u32,
    pub name: String,
    /// Passing tests, controls left out.
    pub passed: usize,
    /// Tests, controls left out.
    pub total: usize,
    /// Every test passes, controls included.
    pub done: bool,
    /// Controls that fail: once the other tests pass, a rule applied too
    /// widely, which the count alone would hide.
    pub controls_failing: usize,
}

/// The scoreboard of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Board {
    /// The steps that had tests in the run, in lab order.
    pub steps: Vec<StepScore>,
    /// Passing and total tests of the provided parts, if any ran.
    pub provided: Option<(usize, usize)>,
    /// What each advanced step needs done first, from `steps.toml` (see
    /// [`Board::needing`]); empty, the scoreboard says nothing of it.
    pub needs: BTreeMap<u32, Vec<u32>>,
}

/// The last step of the core lab. The steps after it are the optional
/// advanced track: the scoreboard lists them after the core ones, marked
/// optional, and says "core lab done" once steps 1 to this one pass.
pub(crate) const LAST_CORE_STEP: u32 = 10;

/// Whether `step` belongs to the optional advanced track.
pub(crate) fn is_optional(step: u32) -> bool {
    step > LAST_CORE_STEP
}

impl Board {
    /// The board with what each step needs first, to say it beside a step
    /// whose prerequisites are not done.
    pub(crate) fn needing(mut self, needs: &BTreeMap<u32, Vec<u32>>) -> Board {
        self.needs = needs.clone();
        self
    }

    /// The steps `step` needs that are not done yet.
    pub(crate) fn undone_needs(&self, step: u32) -> Vec<u32> {
        self.needs
            .get(&step)
            .into_iter()
            .flatten()
            .copied()
            .filter(|need| !self.steps.iter().any(|s| s.number == *need && s.done))
            .collect()
    }

    /// Whether the run had every core step, and each of them is done.
    pub(crate) fn core_done(&self) -> bool {
        let core: Vec<&StepScore> = self
            .steps
            .iter()
            .filter(|step| !is_optional(step.number))
            .collect();
        core.len() == LAST_CORE_STEP as usize && core.iter().all(|step| step.done)
    }

    /// The first step that is not done.
    pub(crate) fn next(&self) -> Option<&StepScore> {
        self.steps.iter().find(|step| !step.done)
    }
}

/// Scores a run. Controls may pass before their step is done (LAB.md, "For
/// instructors"), so a step's score counts its other tests, while "done"
/// needs the controls too.
pub(crate) fn board(
    results: &Results,
    steps: &[(u32, String)],
    controls: &BTreeMap<String, String>,
) -> Board {
    let mut scores = Vec::new();
    for (number, name) in steps {
        let of_step: Vec<(&String, &suite::Outcome)> = results
            .iter()
            .filter(|(test, _)| suite::step_of(test) == Some(*number))
            .collect();
        if of_step.is_empty() {
            continue;
        }
        let scored: Vec<&suite::Outcome> = of_step
            .iter()
            .filter(|(test, _)| !controls.contains_key(*test))
            .map(|(_, outcome)| *outcome)
            .collect();
        scores.push(StepScore {
            number: *number,
            name: name.clone(),
            passed: scored.iter().filter(|outcome| outcome.passed).count(),
            total: scored.len(),
            done: of_step.iter().all(|(_, outcome)| outcome.passed),
            controls_failing: of_step
                .iter()
                .filter(|(test, outcome)| controls.contains_key(*test) && !outcome.passed)
                .count(),
        });
    }
    let provided: Vec<&suite::Outcome> = results
        .iter()
        .filter(|(test, _)| suite::step_of(test).is_none() && *test != suite::STOPPED_EARLY)
        .map(|(_, outcome)| outcome)
        .collect();
    Board {
        needs: BTreeMap::new(),
        steps: scores,
        provided: (!provided.is_empty()).then(|| {
            (
                provided.iter().filter(|outcome| outcome.passed).count(),
                provided.len(),
            )
        }),
    }
}

/// A TODO marker in the starter: file (relative to `starter/src`), line
/// number and the line's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Todo {
    pub file: String,
    pub line: usize,
    pub text: String,
}

/// Where the student should start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Start {
    /// Every test of the run passes.
    AllPass,
    /// The first step that is not done, with its TODO and its first failing
    /// test's name and reason.
    Step {
        number: u32,
        name: String,
        todo: Option<Todo>,
        failure: Option<(String, String)>,
    },
    /// Every step is done, yet something else fails (a provided part, or
    /// the suite stopped early): its name and reason.
    Other { test: String, reason: String },
}

/// Where to start: the first step that is not done, the TODO its first
/// failure ([`first_failure`]) names if that marker is still in the starter
/// (or else the step's first marker, or for a step without markers the
/// lowest TODO the failure names), and that failure. `find` looks a marker
/// up in the starter ([`find_todos`]).
pub(crate) fn start(
    results: &Results,
    board: &Board,
    syllabus: &Syllabus,
    find: impl Fn(&str) -> Vec<Todo>,
) -> Start {
    let Some(step) = board.next() else {
        return match results.iter().find(|(_, outcome)| !outcome.passed) {
            Some((test, outcome)) => Start::Other {
                test: test.clone(),
                reason: suite::reason(&outcome.output),
            },
            None => Start::AllPass,
        };
    };
    let number = step.number;
    let failure = first_failure(results, number, syllabus)
        .map(|test| (test.clone(), suite::reason(&results[test].output)));
    let reason = failure.as_ref().map(|(_, reason)| reason.as_str());
    // A step without TODOs of its own (the worked example, the exploration)
    // points at the TODO its failure names.
    let named = reason.and_then(|reason| suite::todos_named(reason).into_iter().min());
    let todo = todo_of(number, reason, &find).or_else(|| {
        named
            .filter(|&named| named != number)
            .and_then(|named| todo_of(named, reason, &find))
    });
    Start::Step {
        number,
        name: step.name.clone(),
        todo,
        failure,
    }
}

/// The failing test of step `number` to start with: the one that diagnoses
/// the mistake, rather than the first in the alphabet. A mistake in the
/// code of one rule fails that rule's tests, and with them the odd test of
/// another rule whose scenario passes through the same code: an overflow
/// test of B1 needs the circuit to open as B2 says, a test of B7 in step 6
/// runs through the retry loop, and every probe of step 2 first needs the
/// cooldown to end as B4 says. A test's name starts with the rules it
/// checks (`b5_b7_...` checks B5 and B7), and a failure's message names the
/// rule of the check that failed when that is another one (`E6: no sleep
/// before the first attempt`, in a test of E5). So, among the step's
/// failing tests:
///
/// 1. a test is *explained*, and never chosen, when another failing test
///    (not a control) checks only some of its rules: that one is the more
///    basic check;
/// 2. each failure speaks for the rules its message names, or else for
///    those its test's name does, and tests that fail with the very same
///    message count once (they failed at one and the same check); a rule
///    weighs as many different failures as speak for it (controls left
///    out), and a test as the heaviest rule its name names: the heaviest
///    first, ties going to the rule the step states first (its section of
///    LAB.md; so an untouched step starts where its list of rules does),
///    then to the rule the contract lists first (B1..B12, E1..E10, then K,
///    S, W, R, M);
/// 3. then a test whose own failure speaks for that rule, then the test
///    that checks fewer rules, then the first by name;
/// 4. a control comes after the other tests (it checks that a rule is not
///    applied too widely, which says little while the rule itself fails),
///    and a test whose name names no rule (the worked example) after all.
pub(crate) fn first_failure<'a>(
    results: &'a Results,
    number: u32,
    syllabus: &Syllabus,
) -> Option<&'a String> {
    struct Failure<'a> {
        test: &'a String,
        /// The rules the test's name names.
        checks: Vec<Rule>,
        /// The rules its failure speaks for.
        about: Vec<Rule>,
        reason: String,
    }
    let failing: Vec<Failure> = results
        .iter()
        .filter(|(test, outcome)| suite::step_of(test) == Some(number) && !outcome.passed)
        .map(|(test, outcome)| {
            let checks = rules::of_test(test);
            let reason = suite::reason(&outcome.output);
            let named = rules::in_text(&reason);
            let about = if named.is_empty() {
                checks.clone()
            } else {
                named
            };
            Failure {
                test,
                checks,
                about,
                reason,
            }
        })
        .collect();
    // A race's verdict may change from run to run, so a start is never one
    // while another test of the step fails.
    let counted =
        |test: &str| !syllabus.controls.contains_key(test) && !syllabus.races.contains_key(test);
    let stated = syllabus.stated.get(&number).map_or(&[][..], Vec::as_slice);
    // A rule the step states ranks by its place in the step's list, any
    // other rule after those, in the contract's order.
    let rank = |rule: &Rule| stated.iter().position(|r| r == rule).unwrap_or(usize::MAX);
    let mut failures: BTreeMap<Rule, BTreeSet<&str>> = BTreeMap::new();
    for failure in failing.iter().filter(|failure| counted(failure.test)) {
        for rule in &failure.about {
            failures.entry(*rule).or_default().insert(&failure.reason);
        }
    }
    let weight = |rule: &Rule| failures.get(rule).map_or(0, BTreeSet::len);
    let explained = |failure: &Failure| {
        failing.iter().any(|other| {
            other.test != failure.test
                && counted(other.test)
                && !other.checks.is_empty()
                && other.checks.len() < failure.checks.len()
                && other
                    .checks
                    .iter()
                    .all(|rule| failure.checks.contains(rule))
        })
    };
    failing
        .iter()
        .filter(|failure| !explained(failure))
        .min_by_key(|failure| {
            let heaviest = failure
                .checks
                .iter()
                .map(|rule| (Reverse(weight(rule)), rank(rule), *rule))
                .min();
            let speaks = heaviest.is_some_and(|(_, _, rule)| failure.about.contains(&rule));
            (
                heaviest.is_none(),
                !counted(failure.test),
                heaviest,
                !speaks,
                failure.checks.len(),
                suite::lab_order(failure.test),
            )
        })
        .map(|failure| failure.test)
}

/// Step `number`'s TODO in the starter: the very one `reason` names if that
/// marker still stands, or else the step's first.
fn todo_of(number: u32, reason: Option<&str>, find: &impl Fn(&str) -> Vec<Todo>) -> Option<Todo> {
    let marker = format!("TODO({number})");
    let summary = reason
        .and_then(|reason| reason.split_once(&format!("{marker}: ")))
        .map(|(_, rest)| rest.split("; see ").next().unwrap_or(rest));
    if let Some(exact) =
        summary.and_then(|summary| find(&format!("{marker}: {summary}")).into_iter().next())
    {
        return Some(exact);
    }
    // A message that words its TODO its own way still points at the
    // marker it has most in common with (the rule it names, then its
    // words), not merely the first marker of the step in the alphabet of
    // files: step 4's first failure is about a dropped permit, whose
    // marker is in `permit.rs`, after the hook's in `breaker.rs`.
    let candidates = find(&marker);
    let reason = reason.unwrap_or_default();
    let mut best: Option<(usize, usize, Todo)> = None;
    for todo in candidates {
        let rules = rules::in_text(&todo.text)
            .iter()
            .filter(|rule| rules::in_text(reason).contains(rule))
            .count();
        let words = shared_words(&todo.text, reason);
        if best
            .as_ref()
            .is_none_or(|(r, w, _)| (rules, words) > (*r, *w))
        {
            best = Some((rules, words, todo));
        }
    }
    best.map(|(_, _, todo)| todo)
}

/// How many words of four letters or more `a` and `b` share, as sets.
fn shared_words(a: &str, b: &str) -> usize {
    let words = |text: &str| -> std::collections::BTreeSet<String> {
        text.split(|c: char| !c.is_alphanumeric())
            .filter(|word| word.len() >= 4)
            .map(str::to_lowercase)
            .collect()
    };
    words(a).intersection(&words(b)).count()
}

/// The scoreboard's table: one line per step that ran, then the provided
/// parts.
pub(crate) fn table(board: &Board, style: Style) -> Vec<String> {
    let next = board.next().map(|step| step.number);
    let line_of = |step: &StepScore| {
        let mark = if step.done {
            style.paint("32", "done")
        } else if Some(step.number) == next && is_optional(step.number) {
            style.paint("33", "<- next (optional)")
        } else if Some(step.number) == next {
            style.paint("33", "<- next")
        } else {
            String::new()
        };
        let undone = if step.done {
            Vec::new()
        } else {
            board.undone_needs(step.number)
        };
        // All counted tests pass, yet the step is not done: say why.
        let controls = if !undone.is_empty() {
            let steps: Vec<String> = undone.iter().map(u32::to_string).collect();
            format!(
                " (needs step{} {} first)",
                if undone.len() == 1 { "" } else { "s" },
                steps.join(" and ")
            )
        } else if step.passed == step.total && step.controls_failing > 0 {
            format!(
                " ({} control{} failing: a rule applied too widely)",
                step.controls_failing,
                if step.controls_failing == 1 { "" } else { "s" },
            )
        } else {
            String::new()
        };
        let controls = if mark.is_empty() {
            controls.trim_start()
        } else {
            &controls
        };
        let line = format!(
            "  step {:<2} {:<18} {:>2}/{:<2}  {mark}{controls}",
            step.number, step.name, step.passed, step.total
        );
        line.trim_end().to_owned()
    };
    let (core, optional): (Vec<&StepScore>, Vec<&StepScore>) = board
        .steps
        .iter()
        .partition(|step| !is_optional(step.number));
    let mut lines: Vec<String> = core.into_iter().map(line_of).collect();
    if board.core_done() {
        lines.push(style.paint(
            "32",
            &format!("  core lab done: steps 1-{LAST_CORE_STEP} pass"),
        ));
    }
    if !optional.is_empty() {
        lines.push("  optional, after the core lab (the advanced track):".to_owned());
        lines.extend(optional.into_iter().map(line_of));
    }
    if let Some((passed, total)) = board.provided {
        let line = format!("  {:<27}{passed:>2}/{total:<2}", "provided parts");
        lines.push(line.trim_end().to_owned());
    }
    lines
}

/// The "Start here" lines. `hint` follows the step's name (say how to see
/// the failures in full); `reason_width` shortens the failure's message.
pub(crate) fn start_lines(
    start: &Start,
    hint: &str,
    reason_width: usize,
    style: Style,
) -> Vec<String> {
    match start {
        Start::AllPass => vec![style.paint(
            "32",
            "Every step passes. Well done! See LAB.md, \"Going further\".",
        )],
        Start::Other { test, reason } => vec![
            format!("Start here: {test}"),
            format!(
                "  it says: {}",
                style.paint("31", &shorten(reason, reason_width))
            ),
        ],
        Start::Step {
            number,
            name,
            todo,
            failure,
        } => {
            let mut lines = vec![format!("Start here: step {number} ({name}){hint}")];
            lines.push(match todo {
                Some(todo) => format!(
                    "  your TODO: starter/src/{}:{}  {}",
                    todo.file, todo.line, todo.text
                ),
                None => format!(
                    "  no `TODO({number})` marker is left in starter/src; {}, step {number}, says what the tests expect",
                    crate::manifest::handout_of(*number)
                ),
            });
            if let Some((test, reason)) = failure {
                lines.push(format!("  first failing test: {test}"));
                lines.push(format!(
                    "  it says: {}",
                    style.paint("31", &shorten(reason, reason_width))
                ));
            }
            if todo.is_some() {
                lines.push(format!(
                    "  stuck? `just hint {number}` gives a hint, one more each time"
                ));
            }
            lines
        }
    }
}

/// `text` cut to at most `width` characters, with an ellipsis if cut.
pub(crate) fn shorten(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let kept: String = text.chars().take(width.saturating_sub(3)).collect();
    format!("{}...", kept.trim_end())
}

/// The first line in the starter's `dir` that contains `marker`, looking
/// through its files in name order.
pub(crate) fn find_todos(dir: &Path, marker: &str) -> Vec<Todo> {
    let names = crate::scratch::rs_files(dir).unwrap_or_default();
    let mut found = Vec::new();
    for name in names {
        let Ok(text) = fs::read_to_string(dir.join(&name)) else {
            continue;
        };
        // The marker comments themselves, not a provided helper's message
        // that mentions the TODO.
        found.extend(
            text.lines()
                .enumerate()
                .filter(|(_, line)| line.trim_start().starts_with("//") && line.contains(marker))
                .map(|(index, line)| Todo {
                    file: name.clone(),
                    line: index + 1,
                    text: line.trim().to_owned(),
                }),
        );
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run in which the `failing` tests fail, each saying its own name
    /// unless it is given as `test=message`, and the `passing` ones pass.
    fn run(failing: &[&str], passing: &[&str]) -> Results {
        let failed = |test: &str| {
            let (test, said) = test.split_once('=').unwrap_or((test, test));
            let output = format!("thread '{test}' panicked at tests/lab/x.rs:1:1:\n{said}\n");
            (
                test.to_owned(),
                suite::Outcome {
                    passed: false,
                    output,
                },
            )
        };
        let passed = |test: &&str| {
            let output = String::new();
            (
                (*test).to_owned(),
                suite::Outcome {
                    passed: true,
                    output,
                },
            )
        };
        failing
            .iter()
            .map(|test| failed(test))
            .chain(passing.iter().map(passed))
            .collect()
    }

    /// The first failure of `step` in a lab whose step 1 states B1, B2 and
    /// B9, step 2 B3, B4 and B5, and step 6 E5, E6 and B8, with these
    /// `controls`.
    fn first(results: &Results, step: u32, controls: &[&str]) -> Option<String> {
        let rules = |ids: &[&str]| ids.iter().filter_map(|id| Rule::parse(id)).collect();
        let syllabus = Syllabus {
            races: Default::default(),
            needs: Default::default(),
            controls: controls
                .iter()
                .map(|test| ((*test).to_owned(), "why".to_owned()))
                .collect(),
            stated: BTreeMap::from([
                (1, rules(&["B1", "B2", "B9"])),
                (2, rules(&["B3", "B4", "B5"])),
                (6, rules(&["E5", "E6", "B8"])),
            ]),
        };
        first_failure(results, step, &syllabus).cloned()
    }

    #[test]
    fn the_first_failure_is_of_the_rule_that_fails_most_not_the_first_by_name() {
        // Opening one failure late: the B1 tests that need the circuit open
        // fail too, but fewer than B2's.
        let results = run(
            &[
                "step01_closed::b1_a_cooldown_that_overflows_keeps_the_circuit_open",
                "step01_closed::b1_a_zero_cooldown_is_legal",
                "step01_closed::b2_a_threshold_of_one_opens_on_the_first_failure",
                "step01_closed::b2_opening_starts_a_new_generation",
                "step01_closed::b2_the_circuit_opens_exactly_at_the_threshold",
                "step2_open::b3_refuses",
            ],
            &["step01_closed::b2_a_success_resets"],
        );
        assert_eq!(
            first(&results, 1, &[]).as_deref(),
            Some("step01_closed::b2_a_threshold_of_one_opens_on_the_first_failure"),
            "the rule with the most failing tests (B2) is the diagnosis, not B1 by name"
        );
        // A sleep after the last attempt: both E6 tests fail, and so does
        // one test of E5 whose scenario ends in that sleep.
        let results = run(
            &[
                "step06_retry::e5_a_failure_that_ends_the_call_is_returned",
                "step06_retry::e6_a_single_attempt_budget_never_sleeps",
                "step06_retry::e6_the_last_failure_is_returned_without_a_sleep_after_it",
            ],
            &["step06_retry::e5_a_first_time_success"],
        );
        assert_eq!(
            first(&results, 6, &[]).as_deref(),
            Some("step06_retry::e6_a_single_attempt_budget_never_sleeps")
        );
    }

    #[test]
    fn a_rule_the_failures_speak_for_comes_first_even_if_another_step_states_it() {
        // A probe after a dropped one, not marked out (B5, stated in step 2):
        // both failures of step 4 say B5, none says B7 or B12.
        let results = run(
            &[
                "step4_p::b5_b7_a_probe_admitted_after_a_dropped_one=B5: the probe is in flight",
                "step4_p::b7_b12_an_owned_permit_dropped=B5, B12: one owned probe at a time",
            ],
            &["step4_p::b7_a_dropped_probe_gives_its_slot_back"],
        );
        let syllabus = Syllabus {
            races: Default::default(),
            needs: Default::default(),
            stated: BTreeMap::from([(
                4,
                ["B7", "B11", "B12"]
                    .map(|id| Rule::parse(id).unwrap())
                    .into(),
            )]),
            ..Syllabus::default()
        };
        assert_eq!(
            first_failure(&results, 4, &syllabus).map(String::as_str),
            Some("step4_p::b5_b7_a_probe_admitted_after_a_dropped_one")
        );
    }

    #[test]
    fn tests_that_fail_with_the_same_message_count_once() {
        // A probe one instant late: every probe of step 2 fails on the very
        // same check, so B5's four tests weigh no more than B4's one, and
        // B4 comes first in the contract. B1 is no rule step 2 states.
        let late = "=TODO(2): the first attempt at or after the deadline must be admitted";
        let tests = [
            "step2_open::b1_a_huge_cooldown_ends",
            "step2_open::b1_with_a_zero_cooldown_the_next_attempt_is_the_probe",
            "step2_open::b4_the_first_attempt_exactly_at_the_deadline_becomes_the_probe",
            "step2_open::b5_a_failed_probe_reopens",
            "step2_open::b5_a_successful_probe_closes",
            "step2_open::b5_every_transition_starts_a_new_generation",
            "step2_open::b5_only_one_probe_at_a_time",
        ]
        .map(|test| format!("{test}{late}"));
        let tests: Vec<&str> = tests.iter().map(String::as_str).collect();
        assert_eq!(
            first(&run(&tests, &[]), 2, &[]).as_deref(),
            Some("step2_open::b4_the_first_attempt_exactly_at_the_deadline_becomes_the_probe")
        );
        // Said four different ways, B5's failures are four.
        let tests: Vec<&str> = tests
            .iter()
            .map(|test| test.split('=').next().unwrap())
            .collect();
        assert_eq!(
            first(&run(&tests, &[]), 2, &[]).as_deref(),
            Some("step2_open::b5_a_failed_probe_reopens")
        );
    }

    #[test]
    fn a_failure_speaks_for_the_rule_its_message_names() {
        // A sleep before every attempt: the E5 tests fail on E6's checks, and
        // say so, so E6 weighs four failures and E5 two.
        let results = run(
            &[
                "step06_retry::e5_a_first_time_success=E6: no sleep before the first attempt",
                "step06_retry::e5_a_non_retryable_error_after_a_retry=one sleep, none after the \
                 decline (E5, E6)",
                "step06_retry::e5_a_retryable_failure_is_retried=backoff(n) after attempt n fails",
                "step06_retry::e6_a_single_attempt_budget_never_sleeps=no sleep may be asked for",
                "step06_retry::e6_the_last_failure=E6: no sleep after the last attempt",
            ],
            &[],
        );
        assert_eq!(
            first(&results, 6, &[]).as_deref(),
            Some("step06_retry::e6_a_single_attempt_budget_never_sleeps")
        );
        // An untouched step 1: its todo!() is B2's, but B1 is listed first;
        // of B1's tests, the one whose own failure speaks for B1.
        let todo = "=not yet implemented: TODO(1): count the failure (B2)";
        let tests = [
            format!("step01_closed::b1_a_cooldown_that_overflows{todo}"),
            "step01_closed::b1_a_zero_threshold_is_refused=must refuse a threshold of 0 (B1)"
                .into(),
            format!("step01_closed::b2_a_success_resets{todo}"),
            format!("step01_closed::b2_opening_starts_a_new_generation{todo}"),
        ];
        let tests: Vec<&str> = tests.iter().map(String::as_str).collect();
        assert_eq!(
            first(&run(&tests, &[]), 1, &[]).as_deref(),
            Some("step01_closed::b1_a_zero_threshold_is_refused")
        );
    }

    #[test]
    fn an_untouched_step_starts_where_its_list_of_rules_starts() {
        // Every test of the step fails on its todo!(): one message, so every
        // rule weighs one, and step 6 lists E5 before B8.
        let todo = "=not yet implemented: TODO(6): the retry loop";
        let tests = [
            "step06_retry::b11_a_hook_that_panics",
            "step06_retry::b8_no_lock_is_held",
            "step06_retry::e5_a_first_time_success",
            "step06_retry::e6_a_single_attempt_budget_never_sleeps",
        ]
        .map(|test| format!("{test}{todo}"));
        let tests: Vec<&str> = tests.iter().map(String::as_str).collect();
        assert_eq!(
            first(&run(&tests, &[]), 6, &[]).as_deref(),
            Some("step06_retry::e5_a_first_time_success")
        );
    }

    #[test]
    fn a_failure_explained_by_a_more_basic_one_is_never_first_and_ties_go_to_the_contracts_order() {
        // B5 and B7 fail twice each; b5_b7 is explained by either single
        // one, and B5 comes before B7.
        let results = run(
            &[
                "step4_p::b5_b7_a_probe_after_a_dropped_one",
                "step4_p::b7_a_dropped_probe",
                "step4_p::b5_the_slot",
            ],
            &[],
        );
        assert_eq!(
            first(&results, 4, &[]).as_deref(),
            Some("step4_p::b5_the_slot")
        );
        // B11 before B2, by their numbers rather than the alphabet.
        let results = run(&["step1_c::b11_hook", "step1_c::b2_count"], &[]);
        assert_eq!(
            first(&results, 1, &[]).as_deref(),
            Some("step1_c::b2_count")
        );
        // A test of several rules is first when it is all there is.
        let results = run(&["step13_w::k1_s1_w1_model", "step12_s::s1_x"], &[]);
        assert_eq!(
            first(&results, 13, &[]).as_deref(),
            Some("step13_w::k1_s1_w1_model")
        );
    }

    #[test]
    fn a_control_or_a_test_that_names_no_rule_comes_last_and_weighs_nothing() {
        // The failing controls check E5 twice over, yet E7's test is first.
        let results = run(
            &[
                "step8_c::e5_control_one",
                "step8_c::e5_control_two",
                "step8_c::e7_a_sleep",
                "step8_c::worked_example",
            ],
            &[],
        );
        let controls = ["step8_c::e5_control_one", "step8_c::e5_control_two"];
        assert_eq!(
            first(&results, 8, &controls).as_deref(),
            Some("step8_c::e7_a_sleep")
        );
        let results = run(&["step8_c::e5_control_one", "step8_c::worked_example"], &[]);
        assert_eq!(
            first(&results, 8, &controls).as_deref(),
            Some("step8_c::e5_control_one")
        );
        let results = run(
            &["step9_w::worked_example_b", "step9_w::worked_example_a"],
            &[],
        );
        assert_eq!(
            first(&results, 9, &[]).as_deref(),
            Some("step9_w::worked_example_a")
        );
        assert_eq!(first(&results, 8, &[]), None);
    }

    /// Step 4's first failure words its TODO its own way; the marker to
    /// start at is the one it has most in common with, not the first.
    #[test]
    fn a_failure_points_at_the_marker_it_has_most_in_common_with() {
        let markers = [
            (
                "breaker.rs",
                315,
                "// TODO(4): a hook that panics here must not keep the probe slot (B11)",
            ),
            (
                "circuit.rs",
                161,
                "// TODO(4): a current probe gives its slot back (B7)",
            ),
            (
                "permit.rs",
                217,
                "// TODO(4): dropped unreported: during a panic record a failure, otherwise abandon (B7)",
            ),
        ];
        let find = |marker: &str| -> Vec<Todo> {
            markers
                .iter()
                .filter(|(_, _, text)| text.contains(marker))
                .map(|(file, line, text)| Todo {
                    file: (*file).into(),
                    line: *line,
                    text: (*text).into(),
                })
                .collect()
        };
        let at = |reason: &str| todo_of(4, Some(reason), &find).map(|todo| todo.file);
        assert_eq!(
            at("TODO(4): a permit dropped unreported must clean up after itself (B7)").as_deref(),
            Some("permit.rs")
        );
        assert_eq!(
            at("TODO(4): a hook that panics here must not keep the probe slot (B11)").as_deref(),
            Some("breaker.rs")
        );
        assert_eq!(at("B11: the hook panicked").as_deref(), Some("breaker.rs"));
        assert_eq!(at("nothing in common").as_deref(), Some("breaker.rs"));
    }

    #[test]
    fn the_todo_found_is_the_marker_comment_not_a_helper_that_names_it() {
        let dir = std::env::temp_dir().join(format!("xtask-find-todo-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        fs::write(
            dir.join("a_helper.rs"),
            "fn f() {\n    x.expect(\"M2: one attempt (TODO(15))\");\n}\n",
        )
        .unwrap();
        fs::write(
            dir.join("layer.rs"),
            "fn g() {\n    // TODO(15): run the request\n    todo!()\n}\n",
        )
        .unwrap();
        let found = find_todos(&dir, "TODO(15)");
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].file.as_str(), found[0].line), ("layer.rs", 2));
        fs::remove_dir_all(&dir).unwrap();
    }
}
