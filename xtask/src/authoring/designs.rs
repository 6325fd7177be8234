//! Other correct designs of the files a student designs whole (the
//! circuit): each folder of `solution/design/examples/` holds files that
//! replace the same-named ones of the student's crate with every TODO done.
//! `check-starter` runs the whole suite on each, so the suite is known to
//! judge a design by what the breaker answers, not by how it is written.
//! `solution/design/core/` holds the design of a student who did the core
//! lab only, which must pass every core test.

use std::fs;
use std::path::{Path, PathBuf};

use crate::authoring::starter::{SOLUTION_CRATE, STARTER_CRATE};

/// One example design: its folder, and the files it replaces.
pub struct Design {
    pub folder: PathBuf,
    pub files: Vec<(String, String)>,
}

/// The design of a student who did the core lab only:
/// `solution/design/core/`.
pub fn core(root: &Path) -> Result<Design, String> {
    read(root.join("solution/design/core"))
}

/// Every example design under `root`'s `solution/design/examples/`.
pub fn examples(root: &Path) -> Result<Vec<Design>, String> {
    let dir = root.join("solution/design/examples");
    let mut folders: Vec<PathBuf> = fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|entry| Some(entry.ok()?.path()))
        .filter(|path| path.is_dir())
        .collect();
    folders.sort();
    folders.into_iter().map(read).collect()
}

/// The design in `folder`: every `.rs` file in it.
fn read(folder: PathBuf) -> Result<Design, String> {
    let mut files = Vec::new();
    for name in crate::scratch::rs_files(&folder)? {
        let text = fs::read_to_string(folder.join(&name)).map_err(|e| format!("{name}: {e}"))?;
        files.push((name, text.replace(SOLUTION_CRATE, STARTER_CRATE)));
    }
    if files.is_empty() {
        return Err(format!("{}: a design with no file", folder.display()));
    }
    Ok(Design { folder, files })
}
