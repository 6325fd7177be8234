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
  todos           list the TODOs in the order LAB.md teaches them";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("sync-starter") => sync_starter(),
        Some("check-sync") => check_sync(),
        Some("todos") => list_todos(),
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
    let (files, todos) = starter::generate(&root.join("solution/src"), 0)?;
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
    let (files, _) = starter::generate(&root.join("solution/src"), 0)?;
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
    let (_, todos) = starter::generate(&root().join("solution/src"), 0)?;
    for todo in todos {
        println!(
            "TODO({}) starter/src/{}:{}  {}",
            todo.step, todo.file, todo.starter_line, todo.summary
        );
    }
    Ok(())
}
