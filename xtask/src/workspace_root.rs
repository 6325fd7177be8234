//! Where the workspace is, found when the tool runs.
//!
//! The tools act on the repository they were started in. A compile-time path
//! (`env!("CARGO_MANIFEST_DIR")`) would name whichever repository last built
//! the binary: two checkouts sharing one `CARGO_TARGET_DIR` (a kit and its
//! student edition, say) share `target/debug/xtask`, and the kit's `just
//! grade` would silently grade with the student edition's suite. So the root
//! is read at run time: from the `CARGO_MANIFEST_DIR` that `cargo run` sets
//! for the package it runs, or else from the current folder upwards.

use std::path::{Path, PathBuf};

/// The workspace's root folder.
pub fn root() -> PathBuf {
    let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    root_from(
        std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from),
        &here,
    )
}

/// The root given the manifest folder cargo named at run time, if any, and
/// the current folder: the manifest folder's parent when it is an `xtask`
/// inside a workspace, else the nearest folder at or above `here` that holds
/// `xtask/Cargo.toml`, else `here`.
pub fn root_from(manifest_dir: Option<PathBuf>, here: &Path) -> PathBuf {
    let is_root =
        |dir: &Path| dir.join("xtask/Cargo.toml").is_file() && dir.join("Cargo.toml").is_file();
    if let Some(parent) = manifest_dir.as_deref().and_then(Path::parent) {
        if is_root(parent) {
            return parent.to_path_buf();
        }
    }
    here.ancestors()
        .find(|dir| is_root(dir))
        .unwrap_or(here)
        .to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workspace(dir: &Path) {
        std::fs::create_dir_all(dir.join("xtask")).unwrap();
        std::fs::write(dir.join("Cargo.toml"), "[workspace]\n").unwrap();
        std::fs::write(dir.join("xtask/Cargo.toml"), "[package]\n").unwrap();
    }

    #[test]
    fn the_root_is_the_repository_run_in_not_the_one_that_built_the_binary() {
        let scratch = std::env::temp_dir().join(format!("xtask-root-{}", std::process::id()));
        let (kit, export) = (scratch.join("kit"), scratch.join("export"));
        workspace(&kit);
        workspace(&export);
        // Cargo names the xtask it runs: the kit's, although the binary may
        // have been built last from the export.
        assert_eq!(
            root_from(Some(kit.join("xtask")), &export.join("tests")),
            kit
        );
        // Without cargo (the binary run by hand): the current folder decides.
        assert_eq!(root_from(None, &export.join("tests")), export);
        assert_eq!(root_from(Some(scratch.join("nowhere/xtask")), &kit), kit);
        std::fs::remove_dir_all(&scratch).unwrap();
    }
}
