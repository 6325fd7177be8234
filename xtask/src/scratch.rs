//! Scratch copies of the workspace, for runs of the suite on a changed crate.

use std::fs;
use std::path::Path;

/// The workspace members the suite needs; the scratch copy leaves out the
/// rest (the demo, the benchmarks), which the suite never builds.
const SUITE_MEMBERS: &[&str] = &[".", "solution", "starter", "schedule", "xtask"];

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

/// Every `.rs` file under `dir`, as a path relative to it with `/` between
/// folders (`breaker/circuit.rs`), sorted: the crates' sources are in
/// folders by role, and the tools name a file by this path.
pub(crate) fn rs_files(dir: &Path) -> Result<Vec<String>, String> {
    fn walk(dir: &Path, prefix: &str, out: &mut Vec<String>) -> Result<(), String> {
        for entry in fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))? {
            let entry = entry.map_err(|e| e.to_string())?;
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            let path = format!("{prefix}{name}");
            if entry.file_type().map_err(|e| e.to_string())?.is_dir() {
                walk(&entry.path(), &format!("{path}/"), out)?;
            } else if name.ends_with(".rs") {
                out.push(path);
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    walk(dir, "", &mut files)?;
    files.sort();
    Ok(files)
}

/// Writes `text` to `dir`'s file `name` (a path as [`rs_files`] gives it),
/// creating its folders.
pub(crate) fn write_file(dir: &Path, name: &str, text: &str) -> Result<(), String> {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
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

/// Makes the folder `to` hold exactly what `from` holds, writing only the
/// files whose bytes differ and removing what `from` lacks: a file that did
/// not change keeps its time stamp, so cargo rebuilds nothing for it. A
/// scratch workspace laid out afresh in `from` for every run is synced
/// into one that lasts, and a second run of the same crate builds nothing.
pub(crate) fn sync_tree(from: &Path, to: &Path) -> Result<(), String> {
    if from.is_dir() {
        if to.exists() && !to.is_dir() {
            fs::remove_file(to).map_err(|e| format!("{}: {e}", to.display()))?;
        }
        fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
        let mut names = std::collections::BTreeSet::new();
        for entry in fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))? {
            let entry = entry.map_err(|e| e.to_string())?;
            names.insert(entry.file_name());
            sync_tree(&entry.path(), &to.join(entry.file_name()))?;
        }
        for entry in fs::read_dir(to).map_err(|e| format!("{}: {e}", to.display()))? {
            let entry = entry.map_err(|e| e.to_string())?;
            if !names.contains(&entry.file_name()) {
                let path = entry.path();
                if path.is_dir() {
                    fs::remove_dir_all(&path)
                } else {
                    fs::remove_file(&path)
                }
                .map_err(|e| format!("{}: {e}", path.display()))?;
            }
        }
        return Ok(());
    }
    let bytes = fs::read(from).map_err(|e| format!("{}: {e}", from.display()))?;
    if to.is_dir() {
        fs::remove_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    }
    if fs::read(to).ok().as_deref() != Some(bytes.as_slice()) {
        fs::write(to, bytes).map_err(|e| format!("{}: {e}", to.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_synced_tree_is_the_source_and_an_unchanged_file_is_not_rewritten() {
        let base = std::env::temp_dir().join(format!("xtask-sync-{}", std::process::id()));
        let (from, to) = (base.join("from"), base.join("to"));
        let _ = fs::remove_dir_all(&base);
        fs::create_dir_all(from.join("src")).unwrap();
        fs::write(from.join("src/same.rs"), "same").unwrap();
        fs::write(from.join("src/new.rs"), "new").unwrap();
        fs::create_dir_all(to.join("src/gone")).unwrap();
        fs::write(to.join("src/same.rs"), "same").unwrap();
        fs::write(to.join("src/gone/old.rs"), "old").unwrap();
        fs::write(to.join("stale.rs"), "stale").unwrap();
        let before = fs::metadata(to.join("src/same.rs"))
            .unwrap()
            .modified()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        sync_tree(&from, &to).unwrap();
        let after = fs::metadata(to.join("src/same.rs"))
            .unwrap()
            .modified()
            .unwrap();
        assert_eq!(before, after, "an unchanged file keeps its time stamp");
        assert_eq!(fs::read_to_string(to.join("src/new.rs")).unwrap(), "new");
        assert!(!to.join("src/gone").exists() && !to.join("stale.rs").exists());
        fs::remove_dir_all(&base).unwrap();
    }
}
