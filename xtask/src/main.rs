//! Project chores, in Rust so that nothing beyond cargo is needed:
//! `cargo xtask <command>`.

mod starter;
mod suite;

use std::collections::BTreeMap;
use std::fs;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask <command>

commands:
  sync-starter    regenerate starter/src from the TODO markers in solution/src
  check-sync      fail if the committed starter differs from what sync-starter writes
  todos           list the TODOs in the order LAB.md teaches them
  filter [STEP]   print the test filter for a step, given as a number (3) or a name (half_open)
  progress        run the suite on the starter and print a scoreboard by step
  check-starter   prove that every step's tests fail until that step is done, naming its TODO
  check-mistakes  apply each patch in mistakes/ to a scratch copy of the solution and run the suite";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("sync-starter") => sync_starter(),
        Some("check-sync") => check_sync(),
        Some("todos") => list_todos(),
        Some("progress") => progress(),
        Some("check-starter") => check_starter(),
        Some("check-mistakes") => check_mistakes(args.get(1).map(String::as_str)),
        Some("filter") => step_filter(args.get(1).map(String::as_str).unwrap_or("")),
        _ => Err(USAGE.to_owned()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives inside the workspace")
        .to_path_buf()
}

fn sync_starter() -> Result<(), String> {
    let root = root();
    let starter::Starter { files, todos } = starter::generate(&root.join("solution/src"), 0)?;
    let target = root.join("starter/src");
    // Start from an empty folder so a file removed from the solution goes too.
    if target.exists() {
        fs::remove_dir_all(&target).map_err(|e| format!("cannot clear starter/src: {e}"))?;
    }
    fs::create_dir_all(&target).map_err(|e| format!("cannot create starter/src: {e}"))?;
    for (name, text) in &files {
        fs::write(target.join(name), text).map_err(|e| format!("cannot write {name}: {e}"))?;
    }
    println!(
        "starter/src regenerated: {} files, {} TODO regions",
        files.len(),
        todos.len()
    );
    Ok(())
}

fn check_sync() -> Result<(), String> {
    let root = root();
    let files = starter::generate(&root.join("solution/src"), 0)?.files;
    let mut stale = Vec::new();
    for (name, text) in &files {
        let committed = fs::read_to_string(root.join("starter/src").join(name)).unwrap_or_default();
        if &committed != text {
            stale.push(name.clone());
        }
    }
    let expected: Vec<&String> = files.iter().map(|(name, _)| name).collect();
    for entry in fs::read_dir(root.join("starter/src")).map_err(|e| e.to_string())? {
        let name = entry.map_err(|e| e.to_string())?.file_name();
        let name = name.to_string_lossy().into_owned();
        if !expected.contains(&&name) {
            stale.push(format!("{name} (not in the solution)"));
        }
    }
    if stale.is_empty() {
        println!("starter/src matches the solution's TODO markers");
        Ok(())
    } else {
        Err(format!(
            "starter/src is out of date with solution/src: {}\nrun `just sync-starter` (or `cargo xtask sync-starter`) and commit the result",
            stale.join(", ")
        ))
    }
}

fn list_todos() -> Result<(), String> {
    let todos = starter::generate(&root().join("solution/src"), 0)?.todos;
    for todo in todos {
        println!(
            "TODO({}) starter/src/{}:{}  {}",
            todo.step, todo.file, todo.starter_line, todo.summary
        );
    }
    Ok(())
}

/// The lab's steps, as `(number, name)`, read from the suite's module files
/// (`tests/lab/step3_half_open.rs` is step 3, `half_open`).
fn steps() -> Result<Vec<(u32, String)>, String> {
    let dir = root().join("tests/lab");
    let mut steps = Vec::new();
    for entry in fs::read_dir(&dir).map_err(|e| format!("cannot read tests/lab: {e}"))? {
        let name = entry.map_err(|e| e.to_string())?.file_name();
        let name = name.to_string_lossy();
        let Some(stem) = name
            .strip_prefix("step")
            .and_then(|n| n.strip_suffix(".rs"))
        else {
            continue;
        };
        if let Some((number, title)) = stem.split_once('_') {
            if let Ok(number) = number.parse() {
                steps.push((number, title.to_owned()));
            }
        }
    }
    steps.sort();
    Ok(steps)
}

/// Prints the libtest filter that selects one step's tests, or nothing for
/// the whole suite.
fn step_filter(step: &str) -> Result<(), String> {
    if step.is_empty() {
        return Ok(());
    }
    let steps = steps()?;
    let wanted = step.trim_start_matches("step");
    let found = steps
        .iter()
        .find(|(number, name)| number.to_string() == wanted || name == wanted);
    match found {
        Some((number, name)) => {
            println!("step{number}_{name}::");
            Ok(())
        }
        None => {
            let known: Vec<String> = steps
                .iter()
                .map(|(n, name)| format!("{n} ({name})"))
                .collect();
            Err(format!(
                "no step called `{step}`; the steps are: {}",
                known.join(", ")
            ))
        }
    }
}

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

fn progress() -> Result<(), String> {
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

/// Tests documented as controls (`/// A control: why`): they check that a
/// rule is not over-applied, so they may pass before their step is done.
fn controls() -> Result<BTreeMap<String, String>, String> {
    let mut found = BTreeMap::new();
    for (number, name) in steps()? {
        let module = format!("step{number}_{name}");
        let text = fs::read_to_string(root().join("tests/lab").join(format!("{module}.rs")))
            .map_err(|e| e.to_string())?;
        let mut reason: Option<String> = None;
        for line in text.lines().map(str::trim) {
            if let Some(doc) = line.strip_prefix("///") {
                let doc = doc.trim();
                match (&mut reason, doc.strip_prefix("A control:")) {
                    (_, Some(start)) => reason = Some(start.trim().to_owned()),
                    (Some(reason), None) => {
                        reason.push(' ');
                        reason.push_str(doc);
                    }
                    (None, None) => {}
                }
            } else if let Some(rest) = line.strip_prefix("fn ") {
                if let (Some(why), Some(test)) = (reason.take(), rest.split('(').next()) {
                    found.insert(format!("{module}::{test}"), why);
                }
            } else if !line.starts_with("#[") {
                reason = None;
            }
        }
    }
    Ok(found)
}

/// The workspace members the suite needs; the scratch copy leaves out the
/// rest (the demo, the benchmarks), which the suite never builds.
const SUITE_MEMBERS: &[&str] = &[".", "solution", "starter", "xtask"];

/// Copies what the suite needs of the workspace to `to`.
fn copy_suite_workspace(from: &Path, to: &Path) -> Result<(), String> {
    for entry in fs::read_dir(from).map_err(|e| e.to_string())? {
        let entry = entry.map_err(|e| e.to_string())?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_dir = entry.file_type().map_err(|e| e.to_string())?.is_dir();
        let wanted = !is_dir
            || SUITE_MEMBERS.contains(&name.as_str())
            || [".cargo", "src", "tests"].contains(&name.as_str());
        if wanted {
            copy_tree(&entry.path(), &to.join(&name))?;
        }
    }
    let manifest = to.join("Cargo.toml");
    let text = fs::read_to_string(&manifest).map_err(|e| e.to_string())?;
    let members: Vec<String> = SUITE_MEMBERS.iter().map(|m| format!("{m:?}")).collect();
    let text: Vec<String> = text
        .lines()
        .map(|line| {
            if line.starts_with("members = ") {
                format!("members = [{}]", members.join(", "))
            } else {
                line.to_owned()
            }
        })
        .collect();
    fs::write(&manifest, text.join("\n") + "\n").map_err(|e| e.to_string())
}

/// Copies a file, or a folder and everything in it.
fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    if !from.is_dir() {
        return fs::copy(from, to)
            .map(drop)
            .map_err(|e| format!("{}: {e}", from.display()));
    }
    fs::create_dir_all(to).map_err(|e| e.to_string())?;
    for entry in fs::read_dir(from).map_err(|e| e.to_string())? {
        let entry = entry.map_err(|e| e.to_string())?;
        copy_tree(&entry.path(), &to.join(entry.file_name()))?;
    }
    Ok(())
}

/// For every step v, builds the starter as a student who has finished
/// steps 1..v would have it (the reference code kept for those TODOs, the
/// rest cut), runs the suite, and checks that exactly the finished steps
/// pass, and that every failure names the TODO to work on.
fn check_starter() -> Result<(), String> {
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

/// What the suite made of one mistake.
enum Verdict {
    /// Tests failed: all of them, and what the first one said.
    Caught(Vec<String>, String),
    /// The suite did not build: the first compiler error.
    CaughtByCompiler(String),
    Missed,
}

/// Applies every patch in `mistakes/` (or those whose name contains
/// `only`) to a scratch copy of the solution, runs the suite against it,
/// and prints one line per mistake. Every mistake must be caught.
fn check_mistakes(only: Option<&str>) -> Result<(), String> {
    let root = root();
    let mut patches: Vec<PathBuf> = fs::read_dir(root.join("mistakes"))
        .map_err(|e| format!("cannot read mistakes/: {e}"))?
        .filter_map(|entry| Some(entry.ok()?.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "patch"))
        .filter(|path| only.is_none_or(|only| path.to_string_lossy().contains(only)))
        .collect();
    patches.sort();
    let scratch = root.join("target/check-mistakes");
    let workspace = scratch.join("workspace");
    let mut missed = Vec::new();
    for patch in &patches {
        let name = patch
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if workspace.exists() {
            fs::remove_dir_all(&workspace).map_err(|e| e.to_string())?;
        }
        fs::create_dir_all(&workspace).map_err(|e| e.to_string())?;
        copy_suite_workspace(&root, &workspace)?;
        // The scratch copy lives inside this repository's target folder;
        // its own repository makes `git apply` patch it, not ignore it.
        std::process::Command::new("git")
            .current_dir(&workspace)
            .args(["init", "--quiet"])
            .status()
            .map_err(|e| format!("cannot run git init: {e}"))?;
        let applied = std::process::Command::new("git")
            .current_dir(&workspace)
            .args(["apply", "--whitespace=nowarn"])
            .arg(patch)
            .output()
            .map_err(|e| format!("cannot run git apply: {e}"))?;
        if !applied.status.success() {
            return Err(format!(
                "{name}: the patch no longer applies to the solution; regenerate it:\n{}",
                String::from_utf8_lossy(&applied.stderr)
            ));
        }
        let verdict = judge(&workspace, &scratch.join("target"))?;
        match &verdict {
            Verdict::Caught(tests, why) => {
                println!(
                    "caught  {name:<40} by {:>2} test(s), first {}: {why}",
                    tests.len(),
                    tests[0]
                );
                if std::env::var_os("MISTAKES_VERBOSE").is_some() {
                    for test in tests {
                        println!("          {test}");
                    }
                }
            }
            Verdict::CaughtByCompiler(error) => {
                println!("caught  {name:<44} by the compiler: {error}")
            }
            Verdict::Missed => {
                println!("MISSED  {name}");
                missed.push(name);
            }
        }
    }
    println!(
        "\n{} mistake(s), {} caught, {} missed",
        patches.len(),
        patches.len() - missed.len(),
        missed.len()
    );
    if missed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the suite let these mistakes pass: {}",
            missed.join(", ")
        ))
    }
}

/// Runs the suite against the (patched) solution in `workspace`.
fn judge(workspace: &Path, target: &Path) -> Result<Verdict, String> {
    let flags = [
        "--no-default-features",
        "--features",
        "retry-breaker/solution",
    ];
    match suite::run_lab(workspace, Some(target), &flags) {
        Ok(results) => {
            let failed: Vec<_> = results
                .iter()
                .filter(|(_, outcome)| !outcome.passed)
                .collect();
            // Name a real test first; the suite stopping early comes last.
            let mut failed = failed;
            failed.sort_by_key(|(test, _)| test.starts_with('('));
            Ok(match failed.first() {
                None => Verdict::Missed,
                Some((_, outcome)) => Verdict::Caught(
                    failed.iter().map(|(test, _)| (*test).clone()).collect(),
                    suite::reason(&outcome.output),
                ),
            })
        }
        Err(output) => {
            let error = output
                .lines()
                .find(|line| line.starts_with("error"))
                .unwrap_or("the suite did not build")
                .to_owned();
            Ok(Verdict::CaughtByCompiler(error))
        }
    }
}
