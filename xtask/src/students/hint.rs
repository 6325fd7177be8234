//! `cargo xtask hint STEP [reset]`: one more hint for a step each time it
//! runs, from a nudge to nearly the answer, as rustlings does.
//!
//! The hints are the step's `hints` in `steps.toml`, the lab's manifest.
//! How many a student has asked for is kept under `target/`, which git
//! ignores, so asking never changes a tracked file.

use std::fs;
use std::path::Path;

use crate::root;
use crate::students::filter;

pub(crate) fn hint(step: Option<&str>, reset: Option<&str>) -> Result<(), String> {
    let Some(step) = step else {
        return Err("usage: just hint STEP (a number, as in `just hint 3`, or a name)".to_owned());
    };
    let Some((number, name)) = filter::resolve(step)? else {
        return Err("usage: just hint STEP (a number, as in `just hint 3`, or a name)".to_owned());
    };
    let root = root();
    let steps = crate::manifest::read(&root)?;
    let step = steps
        .get(&number)
        .ok_or(format!("steps.toml has no step {number}"))?;
    let hints: Vec<&str> = step.hints.iter().map(|hint| hint.trim()).collect();
    let seen_file = root.join("target/hints").join(format!("step{number:02}"));
    if reset == Some("reset") {
        let _ = fs::remove_file(&seen_file);
        println!("Hints for step {number} start again from the first.");
        return Ok(());
    }
    let seen = read_seen(&seen_file);
    let shown = (seen + 1).min(hints.len());
    for (index, hint) in hints.iter().take(shown).enumerate() {
        let marker = if index + 1 == shown { ">>" } else { "  " };
        println!(
            "{marker} Hint {} of {} for step {number} ({name}):",
            index + 1,
            hints.len()
        );
        for line in hint.lines() {
            println!("   {line}");
        }
        println!();
    }
    if shown < hints.len() {
        println!("Run `just hint {number}` again for the next one.");
    } else {
        println!(
            "That was the last hint for step {number}. {} states the rules; the failing \
             test's message says which one your code breaks. (`just hint {number} reset` starts over.)",
            crate::manifest::handout_of(number)
        );
    }
    write_seen(&seen_file, shown)
}

fn read_seen(file: &Path) -> usize {
    fs::read_to_string(file)
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(0)
}

fn write_seen(file: &Path, seen: usize) -> Result<(), String> {
    if let Some(dir) = file.parent() {
        fs::create_dir_all(dir).map_err(|e| format!("cannot write {}: {e}", dir.display()))?;
    }
    fs::write(file, seen.to_string()).map_err(|e| format!("cannot write {}: {e}", file.display()))
}
