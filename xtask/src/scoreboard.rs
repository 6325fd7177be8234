//! The scoreboard that `cargo xtask progress` prints and that ends every
//! `cargo xtask test`: tests passing per step, then where to start.
//!
//! Everything here is a pure function of the results, except [`find_todo`],
//! which reads the starter, so that the unit tests can feed canned results.

use std::collections::BTreeMap;
use std::fs;
use std::io::IsTerminal;
use std::path::Path;

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
}

/// The last step of the core lab. The steps after it are the optional
/// advanced track: the scoreboard lists them after the core ones, marked
/// optional, and says "core lab done" once steps 1 to this one pass.
pub(crate) const LAST_CORE_STEP: u32 = 9;

/// Whether `step` belongs to the optional advanced track.
pub(crate) fn is_optional(step: u32) -> bool {
    step > LAST_CORE_STEP
}

impl Board {
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
/// failure names if that marker is still in the starter (or else the
/// step's first marker, or for a step without markers the lowest TODO the
/// failure names), and that failure. `find` looks a marker up in the
/// starter ([`find_todo`]).
pub(crate) fn start(
    results: &Results,
    board: &Board,
    find: impl Fn(&str) -> Option<Todo>,
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
    let failure = results
        .iter()
        .filter(|(test, outcome)| suite::step_of(test) == Some(number) && !outcome.passed)
        .min_by_key(|(test, _)| suite::lab_order(test))
        .map(|(test, outcome)| (test.clone(), suite::reason(&outcome.output)));
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

/// Step `number`'s TODO in the starter: the very one `reason` names if that
/// marker still stands, or else the step's first.
fn todo_of(
    number: u32,
    reason: Option<&str>,
    find: &impl Fn(&str) -> Option<Todo>,
) -> Option<Todo> {
    let summary = reason
        .and_then(|reason| reason.split_once(&format!("TODO({number}): ")))
        .map(|(_, rest)| rest.split("; see LAB.md").next().unwrap_or(rest));
    summary
        .and_then(|summary| find(&format!("TODO({number}): {summary}")))
        .or_else(|| find(&format!("TODO({number})")))
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
        // All counted tests pass, yet the step is not done: say why.
        let controls = if step.passed == step.total && step.controls_failing > 0 {
            format!(
                " ({} control{} failing: a rule applied too widely)",
                step.controls_failing,
                if step.controls_failing == 1 { "" } else { "s" },
            )
        } else {
            String::new()
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
                    "  no `TODO({number})` marker is left in starter/src; LAB.md, step {number}, says what the tests expect"
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
pub(crate) fn find_todo(dir: &Path, marker: &str) -> Option<Todo> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .ok()?
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".rs"))
        .collect();
    names.sort();
    names.into_iter().find_map(|name| {
        let text = fs::read_to_string(dir.join(&name)).ok()?;
        let (index, line) = text
            .lines()
            .enumerate()
            // The marker comment itself, not a provided helper's message
            // that mentions the TODO.
            .find(|(_, line)| line.trim_start().starts_with("//") && line.contains(marker))?;
        Some(Todo {
            file: name,
            line: index + 1,
            text: line.trim().to_owned(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_todo_found_is_the_marker_comment_not_a_helper_that_names_it() {
        let dir = std::env::temp_dir().join(format!("xtask-find-todo-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        fs::write(
            dir.join("a_helper.rs"),
            "fn f() {\n    x.expect(\"M2: one attempt (TODO(14))\");\n}\n",
        )
        .unwrap();
        fs::write(
            dir.join("layer.rs"),
            "fn g() {\n    // TODO(14): run the request\n    todo!()\n}\n",
        )
        .unwrap();
        let found = find_todo(&dir, "TODO(14)").unwrap();
        assert_eq!((found.file.as_str(), found.line), ("layer.rs", 2));
        fs::remove_dir_all(&dir).unwrap();
    }
}
