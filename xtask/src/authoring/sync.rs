//! `cargo xtask sync-starter`, `check-sync` and `todos`: the starter generated
//! from the solution's TODO markers, and MISTAKES.md's tables from the
//! gallery of mistakes.

use std::fs;

use crate::{
    authoring::{mistakes_md, starter},
    root,
};

pub(crate) fn sync_starter() -> Result<(), String> {
    let root = root();
    let starter::Starter { files, todos } = starter::generate(&root.join("solution/src"), 0)?;
    let target = root.join("starter/src");
    // Start from an empty folder so a file removed from the solution goes too.
    if target.exists() {
        fs::remove_dir_all(&target).map_err(|e| format!("cannot clear starter/src: {e}"))?;
    }
    fs::create_dir_all(&target).map_err(|e| format!("cannot create starter/src: {e}"))?;
    for (name, text) in &files {
        crate::scratch::write_file(&target, name, text)?;
    }
    println!(
        "starter/src regenerated: {} files, {} TODO regions",
        files.len(),
        todos.len()
    );
    let mistakes = mistakes_md::write(&root)?;
    fs::write(root.join(mistakes_md::FILE), mistakes)
        .map_err(|e| format!("cannot write {}: {e}", mistakes_md::FILE))?;
    println!("{} written from mistakes/", mistakes_md::FILE);
    Ok(())
}

pub(crate) fn check_sync() -> Result<(), String> {
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
    for name in crate::scratch::rs_files(&root.join("starter/src"))? {
        if !expected.contains(&&name) {
            stale.push(format!("{name} (not in the solution)"));
        }
    }
    let mistakes = fs::read_to_string(root.join(mistakes_md::FILE)).unwrap_or_default();
    if mistakes != mistakes_md::write(&root)? {
        stale.push(format!(
            "{} (its tables are not mistakes/'s)",
            mistakes_md::FILE
        ));
    }
    if stale.is_empty() {
        println!("starter/src matches the solution's TODO markers, and MISTAKES.md the gallery");
        Ok(())
    } else {
        Err(format!(
            "out of date with solution/src or mistakes/: {}\nrun `just sync-starter` (or `cargo xtask sync-starter`) and commit the result",
            stale.join(", ")
        ))
    }
}

pub(crate) fn list_todos() -> Result<(), String> {
    let todos = starter::generate(&root().join("solution/src"), 0)?.todos;
    for todo in todos {
        println!(
            "TODO({}) starter/src/{}:{}  {}",
            todo.step, todo.file, todo.starter_line, todo.summary
        );
    }
    Ok(())
}
