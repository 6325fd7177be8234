//! `cargo xtask watch [STEP]` (`just watch`): `just test [STEP]` again every
//! time a file of your crate is saved.
//!
//! It polls: twice a second it takes a snapshot of `starter/` (each file's
//! path, length and modification time) and runs the tests when the snapshot
//! differs from the last one. Subscribing to the operating system's file
//! events would need a dependency on every student's build path and behaves
//! differently on each system (editors that save by renaming, network and
//! container file systems that send no events at all); a snapshot of a
//! crate's few files costs nothing next to a test run, and sees every kind
//! of save the same way everywhere.
//!
//! A burst of saves (an editor writing several files, `cargo fmt`) is
//! waited out: the tests run once the snapshot has stayed the same for one
//! poll, so one edit gives one run.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use crate::root;

/// How often the crate is looked at.
const POLL: Duration = Duration::from_millis(500);

/// What a save can change about a file, for every file of a folder: a
/// save that changes none of these (the same length, within the file
/// system's clock resolution) is not seen, which for source code being
/// edited by hand does not happen.
pub(crate) type Snapshot = BTreeMap<PathBuf, (u64, Option<SystemTime>)>;

/// Runs the step's tests now, then after every save, until interrupted.
pub(crate) fn watch(step: &str) -> Result<ExitCode, String> {
    // Fail on an unknown step now, not after the first save.
    crate::students::filter::resolve(step)?;
    let crate_dir = root().join("starter");
    let step = step.to_owned();
    watch_with(
        || snapshot(&crate_dir),
        || std::thread::sleep(POLL),
        |changed| {
            if changed {
                // Clear the terminal, so the summary on screen is this run's.
                print!("\x1b[2J\x1b[H");
            }
            // A run that could not happen (cargo missing, say) will not
            // happen on the next save either: that ends the watch.
            crate::students::test::test(&step)?;
            println!("\nWaiting for a save under starter/ (Ctrl-C stops).");
            Ok(true)
        },
    )
}

/// The loop, with the world passed in: `look` takes a snapshot, `wait`
/// passes one poll, and `run` runs the tests (`true`: after a change, not
/// the first run) and says whether to go on watching.
pub(crate) fn watch_with(
    mut look: impl FnMut() -> Snapshot,
    mut wait: impl FnMut(),
    mut run: impl FnMut(bool) -> Result<bool, String>,
) -> Result<ExitCode, String> {
    let mut seen = look();
    if !run(false)? {
        return Ok(ExitCode::SUCCESS);
    }
    loop {
        wait();
        let now = look();
        if now == seen {
            continue;
        }
        // Something was saved: wait until the saving is over.
        let mut settled = now;
        loop {
            wait();
            let again = look();
            if again == settled {
                break;
            }
            settled = again;
        }
        seen = settled;
        if !run(true)? {
            return Ok(ExitCode::SUCCESS);
        }
    }
}

/// Every file under `dir` except build output, with its length and
/// modification time. A file that vanishes while being read is left out:
/// it is gone from the next snapshot too.
pub(crate) fn snapshot(dir: &Path) -> Snapshot {
    let mut files = Snapshot::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            if meta.is_dir() {
                if entry.file_name() != "target" {
                    folders.push(path);
                }
            } else {
                files.insert(path, (meta.len(), meta.modified().ok()));
            }
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    fn snap(files: &[(&str, u64)]) -> Snapshot {
        files
            .iter()
            .map(|(name, len)| (PathBuf::from(name), (*len, None)))
            .collect()
    }

    /// Replays `looks` (one snapshot per look) and records what ran.
    fn replay(looks: Vec<Snapshot>, runs_allowed: usize) -> Vec<bool> {
        let looks = RefCell::new(looks.into_iter());
        let last = RefCell::new(Snapshot::new());
        let runs = RefCell::new(Vec::new());
        watch_with(
            || {
                let next = looks.borrow_mut().next();
                let next = next.unwrap_or_else(|| last.borrow().clone());
                *last.borrow_mut() = next.clone();
                next
            },
            || {},
            |changed| {
                runs.borrow_mut().push(changed);
                Ok(runs.borrow().len() < runs_allowed)
            },
        )
        .unwrap();
        runs.into_inner()
    }

    #[test]
    fn the_tests_run_at_once_and_then_after_each_save() {
        let a = snap(&[("lib.rs", 1)]);
        let b = snap(&[("lib.rs", 2)]);
        let c = snap(&[("lib.rs", 3)]);
        let looks = vec![a.clone(), a.clone(), b.clone(), b.clone(), c.clone(), c];
        assert_eq!(replay(looks, 3), [false, true, true]);
    }

    #[test]
    fn a_burst_of_saves_gives_one_run_once_it_is_over() {
        let looks = vec![
            snap(&[("lib.rs", 1)]),
            snap(&[("lib.rs", 2)]),
            snap(&[("lib.rs", 2), ("circuit.rs", 5)]),
            snap(&[("lib.rs", 2), ("circuit.rs", 6)]),
            snap(&[("lib.rs", 2), ("circuit.rs", 6)]),
            // Nothing more is saved: the watcher would wait for ever, so
            // the run after the burst is the last one allowed.
        ];
        assert_eq!(replay(looks, 2), [false, true]);
    }

    #[test]
    fn a_deleted_or_added_file_is_a_change() {
        let looks = vec![
            snap(&[("lib.rs", 1), ("old.rs", 1)]),
            snap(&[("lib.rs", 1)]),
            snap(&[("lib.rs", 1)]),
            snap(&[("lib.rs", 1), ("new.rs", 1)]),
            snap(&[("lib.rs", 1), ("new.rs", 1)]),
        ];
        assert_eq!(replay(looks, 3), [false, true, true]);
    }

    #[test]
    fn a_run_that_cannot_happen_stops_the_watch_with_its_error() {
        let error = watch_with(Snapshot::new, || {}, |_| Err("cargo not found".to_owned()));
        assert_eq!(error.unwrap_err(), "cargo not found");
    }

    #[test]
    fn the_snapshot_sees_a_saved_file_and_skips_build_output() {
        let dir = std::env::temp_dir().join(format!("watch-snapshot-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("src")).unwrap();
        fs::create_dir_all(dir.join("target/debug")).unwrap();
        fs::write(dir.join("src/lib.rs"), "fn a() {}").unwrap();
        fs::write(dir.join("target/debug/out"), "built").unwrap();
        let before = snapshot(&dir);
        assert_eq!(before.keys().collect::<Vec<_>>(), [&dir.join("src/lib.rs")]);
        fs::write(dir.join("src/lib.rs"), "fn a() { todo!() }").unwrap();
        fs::write(dir.join("target/debug/out"), "built again").unwrap();
        let after = snapshot(&dir);
        fs::remove_dir_all(&dir).unwrap();
        assert_ne!(before, after, "a save that changes the length is seen");
        assert_eq!(after.len(), 1, "target/ is never watched");
    }
}
