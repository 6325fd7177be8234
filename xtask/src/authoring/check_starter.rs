//! `cargo xtask check-starter`: every step's tests fail until that step is
//! done, naming its TODO.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use crate::lab::controls;
use crate::scratch::{copy_suite_workspace, worker_target};
use crate::suite::Results;
use crate::{authoring::starter, root, suite};

/// The steps `step` needs, all of them: the core before it, its declared
/// prerequisites and theirs.
fn needs_all(steps: &BTreeMap<u32, crate::manifest::Step>, step: u32) -> BTreeSet<u32> {
    let mut all: BTreeSet<u32> = (1..step.min(crate::manifest::CORE_LAST + 1)).collect();
    if step > crate::manifest::CORE_LAST {
        all.extend(1..=crate::manifest::CORE_LAST);
    }
    let mut todo: Vec<u32> = steps
        .get(&step)
        .map(|s| s.needs.clone())
        .unwrap_or_default();
    while let Some(next) = todo.pop() {
        if all.insert(next) {
            todo.extend(
                steps
                    .get(&next)
                    .map(|s| s.needs.clone())
                    .unwrap_or_default(),
            );
        }
    }
    all
}

/// The first step of the advanced track: steps before it are the core lab.
const ADVANCED_FROM: u32 = 11;

/// One student's crate the suite is run on.
struct Variant {
    label: String,
    /// What it is: a student part-way, or another design of the whole lab.
    kind: Kind,
    /// The crate's sources, file name and text.
    files: Vec<(String, String)>,
}

enum Kind {
    /// Steps 1..=n done, the rest still TODOs.
    Done(u32),
    /// Every step done, the files a student designs whole written another
    /// way (a folder of `solution/design/examples/`).
    Design,
    /// The core steps done and none of the advanced track, with the files a
    /// student designs whole written for the core rules only
    /// (`solution/design/core/`): the core lab must not need advanced code.
    CoreOnly(u32),
    /// The core, one advanced step and what `steps.toml` says it needs,
    /// and nothing else: the step's tests must all pass.
    Alone(u32),
}

/// For every step v, builds the starter as a student who has finished
/// steps 1..v would have it (the reference code kept for those TODOs, the
/// rest cut), runs the suite, and checks that exactly the finished steps
/// pass, and that every failure names the TODO to work on. Then the whole
/// suite must pass on every other design of the files a student designs
/// whole.
///
/// The variants are judged on as many workers as the machine has cores
/// (`STARTER_JOBS` overrides it), each with a scratch workspace and a
/// target folder of its own, as `check-mistakes` does: most of a
/// variant's time is one crate's compiler front end, on one core.
pub(crate) fn check_starter() -> Result<(), String> {
    let root = root();
    let scratch = root.join("target/check-starter");
    let solution = root.join("solution/src");

    let todo_steps: Vec<u32> = {
        let mut steps: Vec<u32> = starter::generate(&solution, 0)?
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
    // A race may pass on a crate that lacks its step by chance: it must
    // pass once its step is done, and is not held to failing before.
    let races = crate::lab::races()?;
    let mut problems = Vec::new();

    let mut variants = Vec::new();
    for done in 0..=last {
        // `done + 1` keeps TODOs 1..=done: the student has finished those.
        let variant = starter::generate(&solution, done + 1)?;
        variants.push(Variant {
            label: if done == 0 {
                "the untouched starter".to_owned()
            } else {
                format!("steps 1-{done} done")
            },
            kind: Kind::Done(done),
            files: variant.files,
        });
    }
    // Another design of the files a student designs whole must pass too:
    // the suite judges what the breaker answers, not how it is written.
    let finished = starter::generate(&solution, u32::MAX)?;
    for design in crate::authoring::designs::examples(&root)? {
        let mut files = finished.files.clone();
        for (name, text) in design.files {
            match files.iter_mut().find(|(file, _)| *file == name) {
                Some((_, replaced)) => *replaced = text,
                None => problems.push(format!(
                    "{}: {name} replaces no file of the student's crate",
                    design.folder.display()
                )),
            }
        }
        let label = design
            .folder
            .strip_prefix(&root)
            .unwrap_or(&design.folder)
            .display()
            .to_string();
        variants.push(Variant {
            label,
            kind: Kind::Design,
            files,
        });
    }

    // A student who wrote the circuit from its interface for the core
    // steps has none of the advanced track's parts of it: the generated
    // variants above keep the solution's, which would hide a core test
    // that needs them.
    let core_last = todo_steps
        .iter()
        .copied()
        .take_while(|&step| step < ADVANCED_FROM)
        .last()
        .ok_or("the solution has no TODO of the core lab")?;
    let core_done = ADVANCED_FROM - 1;
    let mut core = starter::generate(&solution, core_last + 1)?.files;
    for (name, text) in crate::authoring::designs::core(&root)?.files {
        match core.iter_mut().find(|(file, _)| *file == name) {
            Some((_, replaced)) => *replaced = text,
            None => problems.push(format!(
                "solution/design/core: {name} replaces no file of the student's crate"
            )),
        }
    }
    variants.push(Variant {
        label: format!("core only (steps 1-{core_done})"),
        kind: Kind::CoreOnly(core_done),
        files: core,
    });

    // Each advanced step with the core and its declared prerequisites
    // alone: a test that needs more is a prerequisite the manifest lacks.
    let manifest = crate::manifest::read(&root)?;
    for &step in todo_steps.iter().filter(|&&step| step >= ADVANCED_FROM) {
        let mut done = needs_all(&manifest, step);
        done.insert(step);
        let listed: Vec<String> = done
            .iter()
            .filter(|&&n| n >= ADVANCED_FROM)
            .map(u32::to_string)
            .collect();
        variants.push(Variant {
            label: format!("core and step(s) {} only", listed.join(", ")),
            kind: Kind::Alone(step),
            files: starter::generate_done(&solution, &starter::Done::Steps(done))?.files,
        });
    }

    let runs = run_all(&root, &scratch, &variants)?;

    for (variant, results) in variants.iter().zip(runs) {
        let label = &variant.label;
        let failed = results.values().filter(|outcome| !outcome.passed).count();
        let done = match variant.kind {
            Kind::Done(done) => done,
            Kind::Alone(step) => {
                let failing: Vec<String> = results
                    .iter()
                    .filter(|(test, outcome)| {
                        !outcome.passed
                            && suite::step_of(test).is_some_and(|k| k == step || k < ADVANCED_FROM)
                            && !races.contains_key(*test)
                    })
                    .map(|(test, outcome)| format!("{test}: {}", suite::reason(&outcome.output)))
                    .collect();
                println!(
                    "{label}: {} test(s) of the core or step {step} failing",
                    failing.len()
                );
                if !failing.is_empty() {
                    problems.push(format!(
                        "{label}: step {step} needs more than steps.toml says (add the step its \
                         failures name to its `needs`): {} test(s) failed, first {:?}",
                        failing.len(),
                        &failing[..failing.len().min(3)]
                    ));
                }
                continue;
            }
            Kind::CoreOnly(core_done) => {
                let failing: Vec<&String> = results
                    .iter()
                    .filter(|(test, outcome)| {
                        !outcome.passed && suite::step_of(test).is_none_or(|k| k <= core_done)
                    })
                    .map(|(test, _)| test)
                    .collect();
                println!(
                    "{label}: {} test(s) of steps 1-{core_done} failing",
                    failing.len()
                );
                if results.is_empty() || !failing.is_empty() {
                    problems.push(format!(
                        "{label}: the core lab must pass without any advanced code, but {} test(s) \
                         of steps 1-{core_done} failed, first {:?}",
                        failing.len(),
                        &failing[..failing.len().min(5)]
                    ));
                }
                continue;
            }
            Kind::Design => {
                println!(
                    "{label}: every step done another way, {} passed, {failed} failed",
                    results.len() - failed
                );
                let first: Vec<&String> = results
                    .iter()
                    .filter(|(_, outcome)| !outcome.passed)
                    .map(|(test, _)| test)
                    .take(5)
                    .collect();
                if results.is_empty() || failed > 0 {
                    problems.push(format!(
                        "{label}: a correct design of its own must pass the whole suite, but \
                         {failed} test(s) failed, first {first:?}"
                    ));
                }
                continue;
            }
        };
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
            if races.contains_key(test) {
                continue;
            }
            if outcome.passed {
                if todo_steps.contains(&k) && k == working_on && !controls.contains_key(test) {
                    problems.push(format!(
                        "{label}: {test} passes although TODO({k}) is not done: it asserts nothing about step {k}, or it is a control (document it with `/// A control: why`)"
                    ));
                }
                continue;
            }
            // The suite's panic hook adds a line naming the test's own TODO
            // (`[rule W1, TODO(13): see ADVANCED.md, step 13]`) for every
            // step with one. A test that calls none of the suite's helpers
            // installs no hook, so whether that line is there depended on
            // which test the threads ran first; the check counts it as the
            // hook would say it, the same on every run.
            let mut named = suite::todos_named(&outcome.output);
            if !(9..=crate::manifest::CORE_LAST).contains(&k) {
                named.push(k);
            }
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

/// Runs the suite on every variant, on [`jobs`] workers, and gives the
/// results in the variants' order.
fn run_all(root: &Path, scratch: &Path, variants: &[Variant]) -> Result<Vec<Results>, String> {
    let jobs = jobs().min(variants.len()).max(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut runs: Vec<Option<Result<Results, String>>> = variants.iter().map(|_| None).collect();
    let done = std::sync::Mutex::new(&mut runs);
    std::thread::scope(|scope| {
        for worker in 0..jobs {
            let (next, done) = (&next, &done);
            scope.spawn(move || {
                let workspace = scratch.join(format!("workspace-{worker}"));
                let target = worker_target(root, worker);
                let prepared = prepare(root, &workspace);
                loop {
                    let index = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(variant) = variants.get(index) else {
                        break;
                    };
                    let result = prepared
                        .clone()
                        .and_then(|()| run(&workspace, &target, &variant.files));
                    done.lock().unwrap_or_else(|e| e.into_inner())[index] = Some(result);
                }
            });
        }
    });
    runs.into_iter()
        .map(|run| run.unwrap_or_else(|| Err("a variant was never run".to_owned())))
        .collect()
}

/// A fresh scratch copy of the suite's workspace at `workspace`.
fn prepare(root: &Path, workspace: &PathBuf) -> Result<(), String> {
    if workspace.exists() {
        fs::remove_dir_all(workspace).map_err(|e| e.to_string())?;
    }
    fs::create_dir_all(workspace).map_err(|e| e.to_string())?;
    copy_suite_workspace(root, workspace)
}

/// The suite's results on the student's crate made of `files`.
fn run(workspace: &Path, target: &Path, files: &[(String, String)]) -> Result<Results, String> {
    let src = workspace.join("starter/src");
    fs::remove_dir_all(&src).map_err(|e| e.to_string())?;
    fs::create_dir_all(&src).map_err(|e| e.to_string())?;
    for (name, text) in files {
        crate::scratch::write_file(&src, name, text)?;
    }
    suite::run_lab(workspace, Some(target), &[])
}

/// How many variants are judged at once: `STARTER_JOBS`, or one per core.
fn jobs() -> usize {
    std::env::var("STARTER_JOBS")
        .ok()
        .and_then(|jobs| jobs.parse().ok())
        .filter(|&jobs| jobs > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_needs_the_core_and_its_prerequisites_and_theirs() {
        // Every step's points and hints, which the manifest insists on.
        let rest = "points = 0\nhints = [\n'''\na nudge\n''',\n'''\nnearly the answer\n''',\n]\n";
        let steps = crate::manifest::parse(
            &format!(
                "[[step]]\nnumber = 3\ntitle = \"c\"\nrules = [\"B1\"]\n{rest}\
                 [[step]]\nnumber = 11\ntitle = \"a\"\nrules = [\"K1\"]\n{rest}\
                 [[step]]\nnumber = 12\ntitle = \"b\"\nneeds = [11]\nrules = [\"S1\"]\n{rest}\
                 [[step]]\nnumber = 13\ntitle = \"d\"\nneeds = [12]\nrules = [\"W1\"]\n{rest}"
            ),
            &tested(&[3, 11, 12, 13]),
        )
        .unwrap();
        assert_eq!(needs_all(&steps, 3), tested(&[1, 2]));
        assert_eq!(needs_all(&steps, 11), (1..=10).collect());
        let mut thirteen: BTreeSet<u32> = (1..=10).collect();
        thirteen.extend([11, 12]);
        assert_eq!(needs_all(&steps, 13), thirteen);
    }

    fn tested(numbers: &[u32]) -> BTreeSet<u32> {
        numbers.iter().copied().collect()
    }
}
