//! Project chores, in Rust so that nothing beyond cargo is needed:
//! `cargo xtask <command>`.

mod starter;

use std::fs;
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask <command>

commands:
  sync-starter    regenerate starter/src from the TODO markers in solution/src
  check-sync      fail if the committed starter differs from what sync-starter writes
  todos           list the TODOs in the order LAB.md teaches them
  filter [STEP]   print the test filter for a step, given as a number (3) or a name (half_open)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("sync-starter") => sync_starter(),
        Some("check-sync") => check_sync(),
        Some("todos") => list_todos(),
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
