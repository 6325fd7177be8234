//! `cargo xtask check-starter`: every step's tests fail until that step is
//! done, naming its TODO.

use std::fs;

use crate::lab::controls;
use crate::scratch::copy_suite_workspace;
use crate::{root, starter, suite};

/// For every step v, builds the starter as a student who has finished
/// steps 1..v would have it (the reference code kept for those TODOs, the
/// rest cut), runs the suite, and checks that exactly the finished steps
/// pass, and that every failure names the TODO to work on.
pub(crate) fn check_starter() -> Result<(), String> {
    let root = root();
    let scratch = root.join("target/check-starter");
    let workspace = scratch.join("workspace");
    if workspace.exists() {
        fs::remove_dir_all(&workspace).map_err(|e| e.to_string())?;
    }
    fs::create_dir_all(&workspace).map_err(|e| e.to_string())?;
    copy_suite_workspace(&root, &workspace)?;

    let todo_steps: Vec<u32> = {
        let mut steps: Vec<u32> = starter::generate(&root.join("solution/src"), 0)?
            .todos
            .iter()
            .map(|todo| todo.step)
            .collect();
        steps.dedup();
        steps
    };
    let last = *todo_steps
        .last()
        .ok_or("the solution has no TODO regions")?;
    let controls = controls()?;
    let mut problems = Vec::new();

    for done in 0..=last {
        let variant = starter::generate(&root.join("solution/src"), done + 1)?;
        let src = workspace.join("starter/src");
        fs::remove_dir_all(&src).map_err(|e| e.to_string())?;
        fs::create_dir_all(&src).map_err(|e| e.to_string())?;
        for (name, text) in &variant.files {
            fs::write(src.join(name), text).map_err(|e| e.to_string())?;
        }
        let label = if done == 0 {
            "the untouched starter".to_owned()
        } else {
            format!("steps 1-{done} done")
        };
        // `done + 1` keeps TODOs 1..=done: the student has finished those.
        let results = suite::run_lab(&workspace, Some(&scratch.join("target")), &[])?;
        let failed = results.values().filter(|outcome| !outcome.passed).count();
        println!(
            "{label:<22} {:>3} passed, {failed:>3} failed",
            results.len() - failed
        );
        let working_on = done + 1;
        for (test, outcome) in &results {
            let step = suite::step_of(test);
            let must_pass = match step {
                None => true,
                Some(k) => k <= done || (!todo_steps.contains(&k) && done == last),
            };
            if must_pass {
                if !outcome.passed {
                    problems.push(format!(
                        "{label}: {test} fails, but everything it needs is done: {}",
                        suite::reason(&outcome.output)
                    ));
                }
                continue;
            }
            let k = step.expect("provided tests always must pass");
            if outcome.passed {
                if todo_steps.contains(&k) && k == working_on && !controls.contains_key(test) {
                    problems.push(format!(
                        "{label}: {test} passes although TODO({k}) is not done: it asserts nothing about step {k}, or it is a control (document it with `/// A control: why`)"
                    ));
                }
                continue;
            }
            let named = suite::todos_named(&outcome.output);
            let expected = if k == working_on {
                named.contains(&working_on)
            } else {
                named.iter().any(|&j| j >= working_on && j <= k)
            };
            if !expected {
                problems.push(format!(
                    "{label}: {test} fails without naming TODO({working_on}){}: {}",
                    if k == working_on {
                        String::new()
                    } else {
                        format!("..TODO({k})")
                    },
                    suite::reason(&outcome.output)
                ));
            }
        }
    }

    // Another design of the files a student designs whole must pass too:
    // the suite judges what the breaker answers, not how it is written.
    let done = starter::generate(&root.join("solution/src"), u32::MAX)?;
    for design in crate::designs::examples(&root)? {
        let src = workspace.join("starter/src");
        fs::remove_dir_all(&src).map_err(|e| e.to_string())?;
        fs::create_dir_all(&src).map_err(|e| e.to_string())?;
        for (name, text) in &done.files {
            fs::write(src.join(name), text).map_err(|e| e.to_string())?;
        }
        for (name, text) in &design.files {
            if !done.files.iter().any(|(file, _)| file == name) {
                problems.push(format!(
                    "{}: {name} replaces no file of the student's crate",
                    design.folder.display()
                ));
            }
            fs::write(src.join(name), text).map_err(|e| e.to_string())?;
        }
        let results = suite::run_lab(&workspace, Some(&scratch.join("target")), &[])?;
        let failed: Vec<&String> = results
            .iter()
            .filter(|(_, outcome)| !outcome.passed)
            .map(|(test, _)| test)
            .collect();
        let label = design
            .folder
            .strip_prefix(&root)
            .unwrap_or(&design.folder)
            .display()
            .to_string();
        println!(
            "{label}: every step done another way, {} passed, {} failed",
            results.len() - failed.len(),
            failed.len()
        );
        if results.is_empty() || !failed.is_empty() {
            let first: Vec<&&String> = failed.iter().take(5).collect();
            problems.push(format!(
                "{label}: a correct design of its own must pass the whole suite, but {} test(s) \
                 failed, first {first:?}",
                failed.len()
            ));
        }
    }

    println!(
        "\ncontrols (may pass before their step is done; they guard against over-applying a rule):"
    );
    for (test, why) in &controls {
        println!("  {test}: {why}");
    }
    println!("provided parts (pass from the start): the `toolkit` tests");
    if problems.is_empty() {
        println!(
            "\ncheck-starter: every step's tests fail until that step is done, each naming its TODO"
        );
        Ok(())
    } else {
        Err(format!(
            "\ncheck-starter found {} problem(s):\n  {}",
            problems.len(),
            problems.join("\n  ")
        ))
    }
}
