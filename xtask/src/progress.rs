//! `cargo xtask progress`: the student's scoreboard.

use std::fs;
use std::io::IsTerminal;
use std::path::Path;

use crate::lab::{controls, steps};
use crate::{root, suite};

/// Text styles for a terminal; plain text when piped or when `NO_COLOR` is set.
struct Style {
    on: bool,
}

impl Style {
    fn detect() -> Style {
        Style {
            on: std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
        }
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }
}

pub(crate) fn progress() -> Result<(), String> {
    let root = root();
    let style = Style::detect();
    println!("Running the suite against your starter...");
    let results = suite::run_lab(&root, None, &[])?;
    let controls = controls()?;
    let mut next: Option<(u32, String)> = None;
    println!();
    for (number, name) in steps()? {
        // Controls may pass before their step is done (LAB.md, "For
        // instructors"), so the score counts the step's other tests.
        let tests: Vec<(&String, &suite::Outcome)> = results
            .iter()
            .filter(|(test, _)| suite::step_of(test) == Some(number))
            .filter(|(test, _)| !controls.contains_key(*test))
            .collect();
        let passed = tests.iter().filter(|(_, outcome)| outcome.passed).count();
        let done = passed == tests.len()
            && results
                .iter()
                .filter(|(test, _)| {
                    controls.contains_key(*test) && suite::step_of(test) == Some(number)
                })
                .all(|(_, outcome)| outcome.passed);
        let mark = if done {
            style.paint("32", "done")
        } else if next.is_none() {
            next = Some((number, name.clone()));
            style.paint("33", "<- next")
        } else {
            String::new()
        };
        let line = format!(
            "  step {number}  {name:<18} {passed:>2}/{:<2}  {mark}",
            tests.len()
        );
        println!("{}", line.trim_end());
    }
    let provided: Vec<&suite::Outcome> = results
        .iter()
        .filter(|(test, _)| suite::step_of(test).is_none())
        .map(|(_, outcome)| outcome)
        .collect();
    let ok = provided.iter().filter(|outcome| outcome.passed).count();
    println!("  provided parts          {ok:>2}/{:<2}", provided.len());
    println!();

    let Some((step, name)) = next else {
        println!(
            "{}",
            style.paint(
                "32",
                "Every step passes. Well done! See LAB.md, \"Going further\"."
            )
        );
        return Ok(());
    };
    println!("Next: step {step} ({name}). Run it alone with `just test {step}`.");
    let failure = results
        .iter()
        .find(|(test, outcome)| suite::step_of(test) == Some(step) && !outcome.passed);
    let reason = failure.map(|(_, outcome)| suite::reason(&outcome.output));
    // Point at the very TODO the failure names if it still stands in the
    // starter, or else at the step's first remaining marker.
    let named = reason
        .as_deref()
        .and_then(|reason| reason.split_once(&format!("TODO({step}): ")))
        .map(|(_, rest)| rest.split("; see LAB.md").next().unwrap_or(rest).to_owned());
    let src = root.join("starter/src");
    let todo = named
        .and_then(|summary| find_todo(&src, &format!("TODO({step}): {summary}")))
        .or_else(|| find_todo(&src, &format!("TODO({step})")));
    match todo {
        Some((file, line, text)) => println!("  your TODO: starter/src/{file}:{line}  {text}"),
        None => println!(
            "  no `TODO({step})` marker is left in starter/src; LAB.md, step {step}, says what the tests expect"
        ),
    }
    if let (Some((test, _)), Some(reason)) = (failure, reason) {
        println!("  first failing test: {test}");
        println!("  it says: {}", style.paint("31", &reason));
    }
    Ok(())
}

/// The first line in the starter that contains `marker`.
fn find_todo(dir: &Path, marker: &str) -> Option<(String, usize, String)> {
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
            .find(|(_, line)| line.contains(marker))?;
        Some((name, index + 1, line.trim().to_owned()))
    })
}
