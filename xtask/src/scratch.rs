//! Scratch copies of the workspace, for runs of the suite on a changed crate.

use std::fs;
use std::path::Path;

/// The workspace members the suite needs; the scratch copy leaves out the
/// rest (the demo, the benchmarks), which the suite never builds.
const SUITE_MEMBERS: &[&str] = &[".", "solution", "starter", "xtask"];

/// Copies what the suite needs of the workspace to `to`.
pub(crate) fn copy_suite_workspace(from: &Path, to: &Path) -> Result<(), String> {
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
    // A student repository has no `solution`: list only the members present.
    let members: Vec<String> = SUITE_MEMBERS
        .iter()
        .filter(|member| from.join(member).is_dir())
        .map(|m| format!("{m:?}"))
        .collect();
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
pub(crate) fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
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

/// The target folder of scratch worker `worker`, shared by the checks
/// that run the suite on scratch copies of the workspace (`check-starter`,
/// `check-mistakes`, `check-verdict`): their dependencies build with the
/// same settings, so whichever runs first builds them for the others. Two
/// checks at once on one worker's folder wait for each other's builds,
/// as cargo does.
pub(crate) fn worker_target(root: &Path, worker: usize) -> std::path::PathBuf {
    root.join("target/scratch").join(format!("target-{worker}"))
}
