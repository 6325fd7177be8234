//! `cargo xtask export-student DIR`: the student edition, a standalone
//! repository without the answers.
//!
//! It holds the starter as the crate students edit, the shared suite
//! byte for byte, LAB.md and MISTAKES.md without their instructors' parts,
//! the demo running on the starter, the tools students use (`test`,
//! `progress`, `grade`) and a `Cargo.lock` trimmed to what is left;
//! `student/` supplies the files only the student edition has (README,
//! justfile, cargo aliases, the grading workflow, the tools' `main.rs`).
//! It leaves out `solution/`, `mistakes/`, the benchmarks (they measure the
//! solution), the instructors' tools and this repository's history.
//! [`crate::course::leak`] then proves that no line of reference code made it in,
//! and the result is committed once in a fresh git repository.
//!
//! What goes out is derived from the kit rather than listed here, so a new
//! step cannot silently break the student edition: the features (the
//! `starter` feature keeps every starter feature it turns on, such as
//! `tower` for step 15), the tools (the modules `student/xtask/src/main.rs`
//! declares), the demo (each target's module tree, without the items gated
//! off and the binaries that need the solution), the pictures (those the
//! handouts show) and LAB.md's headings (none left empty). `just
//! check-export` then uses the result the way a student does.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::course::leak;
use crate::root;
use crate::scratch::copy_tree;

/// The reference crate, as manifests name it: the student edition has none,
/// so its dependency lines go, with the features that turn it on.
const SOLUTION: &str = "retry-breaker-solution";
/// The students' crate: in the student edition it is always there, so it is
/// a plain dependency and the features that chose it are always on.
const STARTER: &str = "retry-breaker-starter";
/// The fleet crate, reference code built on the solution: not exported, so
/// the demo's dependency on it goes too (its fleet section is compiled out
/// with the solution's).
const FLEET: &str = "retry-breaker-fleet";

/// Handout paragraphs (or list items) that mention any of these point at
/// what the student edition does not have, so they are left out.
const INSTRUCTOR_ONLY: &[&str] = &[
    "solution/",
    "mistakes/",
    "check-mistakes",
    "check-starter",
    "sync-starter",
    "test-solution",
    "accept-snapshots",
    // The kit's guides, for instructors, maintainers and library users.
    "docs/INSTRUCTORS.md",
    "docs/MAINTAINERS.md",
    "docs/LIBRARY.md",
    "docs/FIGURES.md",
];

/// Handout sections (by their heading's start) about what only the kit has:
/// the instructors' notes, and the fleet crate around step 16's view, which
/// the student edition leaves out (step 16 itself goes out).
const KIT_ONLY_SECTIONS: &[&str] = &["## For instructors", "## One breaker across a fleet"];

/// The kit's handouts that go out as [`handout`] makes them: the same
/// words for students, without what points at the kit. (The student
/// edition's README is its own, in `student/`.)
const KIT_HANDOUTS: &[&str] = &["LAB.md", "ADVANCED.md", "MISTAKES.md"];

/// The Markdown files of the student edition whose pictures must go with it.
const HANDOUTS: &[&str] = &["LAB.md", "ADVANCED.md", "MISTAKES.md", "README.md"];

/// Which steps an edition teaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Track {
    /// The core lab, steps 1-10: an afternoon. The default.
    Core,
    /// The core lab and the advanced track, steps 11-17, with ADVANCED.md.
    Advanced,
}

const EXPORT_USAGE: &str = "usage: cargo xtask export-student DIR [--track core|advanced]
  core (the default): steps 1-10, the afternoon's lab
  advanced: steps 1-10 and the optional steps 11-17, with ADVANCED.md";

pub(crate) fn export_student(args: &[String]) -> Result<(), String> {
    let (dir, track) = match args {
        [dir] => (dir, Track::Core),
        [dir, flag, track] | [flag, track, dir] if flag == "--track" => (
            dir,
            match track.as_str() {
                "core" => Track::Core,
                "advanced" => Track::Advanced,
                other => return Err(format!("unknown track `{other}`\n{EXPORT_USAGE}")),
            },
        ),
        _ => return Err(EXPORT_USAGE.to_owned()),
    };
    let dir = Path::new(dir);
    export_track(dir, track)?;
    println!(
        "Student edition ({}) written to {}: one commit, no answers.",
        match track {
            Track::Core => "the core lab, steps 1-10; `--track advanced` adds steps 11-17",
            Track::Advanced => "the core lab and the advanced track, steps 1-17",
        },
        dir.display()
    );
    println!(
        "Check it: cd {} && just test   (or: cargo test --test lab)",
        dir.display()
    );
    Ok(())
}

/// Writes the whole student edition, the advanced track included, into
/// `dir`, which must not exist or be empty: the autograder's base, since it
/// grades either edition (a core student's crate is the whole starter).
pub(crate) fn export(dir: &Path) -> Result<(), String> {
    export_track(dir, Track::Advanced)
}

/// Writes the student edition of `track` into `dir`, which must not exist
/// or be empty.
pub(crate) fn export_track(dir: &Path, track: Track) -> Result<(), String> {
    let root = root();
    if dir.exists()
        && fs::read_dir(dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?
            .next()
            .is_some()
    {
        return Err(format!(
            "{} is not empty; export into a new folder",
            dir.display()
        ));
    }
    let file = |path: &str| fs::read_to_string(root.join(path)).map_err(|e| format!("{path}: {e}"));
    let put = |path: &str, text: &str| -> Result<(), String> {
        let target = dir.join(path);
        fs::create_dir_all(target.parent().expect("a file has a folder"))
            .map_err(|e| e.to_string())?;
        fs::write(&target, text).map_err(|e| format!("{path}: {e}"))
    };

    // The shared suite, untouched, and the student's crate. The tuning
    // task's simulation goes whole (a run leaves nothing behind in it), the
    // example `just tune` runs it from, and the settings file the student
    // edits.
    copy_tracked(&root, "tests", &dir.join("tests"))?;
    copy_tree(&root.join("tests/tuning"), &dir.join("tests/tuning"))?;
    put("examples/tune.rs", &file("examples/tune.rs")?)?;
    put("tuning.toml", &file("tuning.toml")?)?;
    // What each advanced step needs first, which `just progress` says.
    put("steps.toml", &steps_manifest(&file("steps.toml")?, track))?;
    copy_tracked(&root, "starter", &dir.join("starter"))?;
    // The scheduler step 17's tests run callers under.
    copy_tracked(&root, "schedule", &dir.join("schedule"))?;
    // The untouched starter's fingerprints, since the student's own starter
    // is what `just predict` then compares with them.
    put(
        crate::students::predict::PRISTINE_FILE,
        &crate::students::predict::pristine_file(&dir.join("starter/src"))?,
    )?;
    let lib = dir.join("starter/src/lib.rs");
    let text = fs::read_to_string(&lib).map_err(|e| e.to_string())?;
    fs::write(
        &lib,
        text.replace(
            " Generated from the solution by `cargo xtask sync-starter`.",
            "",
        ),
    )
    .map_err(|e| e.to_string())?;

    // The files only the student edition has (README, justfile, the tools'
    // `main.rs`, the façade) first: what else goes out is read from them.
    copy_tracked(&root, "student", dir)?;

    // The demo on the starter: its manifest without the solution, and the
    // modules its targets still reach once what needs the solution is gone.
    let demo = manifest(&file("demo/Cargo.toml")?, Member::Demo, |_| true)?;
    put("demo/Cargo.toml", &demo.text)?;
    let dropped = export_demo(&root, dir, &demo.gate)?;
    if !dropped.is_empty() {
        println!(
            "left out of the demo, as it needs the solution: {}",
            dropped.join(", ")
        );
    }

    // The students' tools: the modules the student edition's `main.rs`
    // declares, and theirs in turn, so a tool added there cannot be missed.
    put("xtask/Cargo.toml", &file("xtask/Cargo.toml")?)?;
    let main = fs::read_to_string(dir.join("xtask/src/main.rs"))
        .map_err(|e| format!("student/xtask/src/main.rs: {e}"))?;
    copy_modules(
        &root,
        dir,
        Path::new("xtask/src/main.rs"),
        &main,
        &Gate::default(),
    )?;

    // The workspace around them: the façade over the starter alone, with the
    // members that went out.
    let root_manifest = manifest(&file("Cargo.toml")?, Member::Root, |member| {
        member == "." || dir.join(member).join("Cargo.toml").is_file()
    })?;
    put("Cargo.toml", &root_manifest.text)?;
    put("grading/weights.toml", &file("grading/weights.toml")?)?;
    for name in KIT_HANDOUTS {
        if track == Track::Core && *name == crate::manifest::HANDOUTS[1] {
            continue;
        }
        put(name, &handout(&file(name)?, track))?;
    }
    if track == Track::Core {
        keep_core(dir)?;
    }
    // The pictures the handouts show, wherever they live in the kit.
    for handout in HANDOUTS {
        let Ok(text) = fs::read_to_string(dir.join(handout)) else {
            continue;
        };
        for link in image_links(&text) {
            let path = local_path(&link).map_err(|why| format!("{handout}: {why}"))?;
            let Some(path) = path else { continue };
            if !dir.join(&path).is_file() {
                let from = root.join(&path);
                if !from.is_file() {
                    return Err(format!(
                        "{handout} shows {link}, which this repository does not have"
                    ));
                }
                fs::create_dir_all(dir.join(&path).parent().expect("a file has a folder"))
                    .map_err(|e| e.to_string())?;
                fs::copy(&from, dir.join(&path)).map_err(|e| format!("{link}: {e}"))?;
            }
        }
    }
    put("Cargo.lock", &file("Cargo.lock")?)?;
    trim_lock(dir)?;

    let answers = leak::answers(&root.join("solution/src"))?;
    let total = answers.len();
    let answers = leak::to_check(answers, &root.join("starter/src"))?;
    let leaks = leak::leaks(dir, &answers.lines)?;
    let regions = leak::regions(&root.join("solution/src"))?;
    let leaks: Vec<String> = leaks
        .into_iter()
        .chain(leak::lookalikes(dir, &regions)?)
        .chain(leak::twins(dir, &root.join("solution/src"))?)
        .collect();
    if !leaks.is_empty() {
        return Err(format!(
            "the student edition in {} would reveal answers:\n  {}",
            dir.display(),
            leaks.join("\n  ")
        ));
    }
    println!(
        "checked: the code students write (TODO regions, the helpers that come with a step, the files they design) is {total} lines in the solution; {} are too plain to \
         count, {} are in the starter anyway, {} shown on purpose; none of the other {}, and no \
         generator marker, is in the export; no test, hint or handout is shaped like any of \
         the {} regions long enough to have a shape, and no test or hint function takes and \
         gives what a function with a TODO does",
        answers.trivial,
        answers.given,
        answers.shown_on_purpose,
        answers.lines.len(),
        regions.len()
    );
    commit(dir)
}

/// What the core edition's LAB.md says of the starter's later TODOs, after
/// its table of files: the starter is the whole crate, so a student meets
/// them.
const CORE_NOTE: &str = "This edition is the core lab, steps 1-10. The TODOs numbered 11 and up,
and the files that hold only them (`registry.rs`, `layer.rs`,
`readiness.rs`, `bulkhead.rs`, `fleet.rs`), belong to an optional advanced
track that your course may hand out later: leave them as they are, with
their stand-ins; no test here runs them.
";

/// Makes the edition in `dir` the core lab: no test, hint, weight,
/// manifest entry or snapshot of a step after step 10 (the handouts have
/// already lost their sections), and LAB.md says what the starter's later
/// TODOs are. The starter stays whole: the core breaker is built with the
/// advanced track's parts in it, each behind a stand-in that keeps the core
/// behaviour.
fn keep_core(dir: &Path) -> Result<(), String> {
    let last = crate::manifest::CORE_LAST;
    // `step14_registry.rs`, `step14_registry/`: step 14.
    let step_of = |name: &str| -> Option<u32> {
        let rest = name.strip_prefix("step")?;
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    };
    let advanced = |name: &str| step_of(name).is_some_and(|n| n > last);
    let remove = |path: &Path| -> Result<(), String> {
        let removed = if path.is_dir() {
            fs::remove_dir_all(path)
        } else {
            fs::remove_file(path)
        };
        removed.map_err(|e| format!("{}: {e}", path.display()))
    };
    let suite = dir.join("tests/lab");
    for entry in fs::read_dir(&suite).map_err(|e| format!("tests/lab: {e}"))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if advanced(&name) {
            remove(&path)?;
        }
    }
    // Snapshots are named after their test's module: `lab__step14_...`.
    let snapshots = dir.join("tests/lab/snapshots");
    if snapshots.is_dir() {
        for entry in fs::read_dir(&snapshots).map_err(|e| e.to_string())? {
            let path = entry.map_err(|e| e.to_string())?.path();
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            if name.strip_prefix("lab__").is_some_and(advanced) {
                remove(&path)?;
            }
        }
    }
    let rewrite = |file: &str, change: &dyn Fn(&str) -> Result<String, String>| {
        let path = dir.join(file);
        let text = fs::read_to_string(&path).map_err(|e| format!("{file}: {e}"))?;
        fs::write(&path, change(&text)?).map_err(|e| format!("{file}: {e}"))
    };
    // The suite's modules, and the weights, of the steps that stay.
    rewrite("tests/lab/main.rs", &|text| {
        let text = lines_without(text, |line| line.strip_prefix("mod ").is_some_and(advanced));
        let at = text
            .find("\nmod ")
            .ok_or_else(|| "tests/lab/main.rs declares no module".to_owned())?;
        Ok(format!(
            "{}\n// The core edition: the suite's helpers that only the advanced track's\n\
             // tests use stay, unused.\n#![allow(dead_code, unused_imports)]\n{}",
            &text[..at],
            &text[at..]
        ))
    })?;
    rewrite("grading/weights.toml", &|text| {
        Ok(without_commented_lines(text, |line| {
            line.split_once('=')
                .is_some_and(|(key, _)| advanced(key.trim()))
        }))
    })?;
    // The manifest's steps that stay.
    rewrite("steps.toml", &|text| {
        let mut parts = text.split("[[step]]");
        let mut out = parts.next().unwrap_or_default().to_owned();
        for part in parts {
            let number = part
                .lines()
                .find_map(|line| line.trim().strip_prefix("number = "))
                .and_then(|n| n.trim().parse::<u32>().ok())
                .ok_or_else(|| "steps.toml: a step without its number".to_owned())?;
            if number <= last {
                out.push_str("[[step]]");
                out.push_str(part);
            }
        }
        Ok(out.trim_end().to_owned() + "\n")
    })?;
    rewrite("LAB.md", &|text| {
        let at = text
            .find("\n## Step 1:")
            .ok_or_else(|| "LAB.md: no `## Step 1:` heading".to_owned())?;
        Ok(format!("{}\n{CORE_NOTE}{}", &text[..=at], &text[at..]))
    })?;
    Ok(())
}

/// The steps manifest as `track`'s edition has it: its opening comment
/// without the paragraphs that point at what the edition lacks (the kit's
/// guides; in the core edition, ADVANCED.md). The steps themselves are
/// [`keep_core`]'s.
fn steps_manifest(text: &str, track: Track) -> String {
    let at = text.find("[[step]]").unwrap_or(text.len());
    let (head, steps) = text.split_at(at);
    let points_away = |paragraph: &str| {
        INSTRUCTOR_ONLY.iter().any(|name| paragraph.contains(name))
            || (track == Track::Core && paragraph.contains(crate::manifest::HANDOUTS[1]))
    };
    let kept: Vec<&str> = head
        .trim_end()
        .split("\n#\n")
        .filter(|paragraph| !points_away(paragraph))
        .collect();
    format!("{}\n\n{steps}", kept.join("\n#\n"))
}

/// `text` without the lines `drop` says, line ends kept.
fn lines_without(text: &str, drop: impl Fn(&str) -> bool) -> String {
    text.split_inclusive('\n')
        .filter(|line| !drop(line.trim()))
        .collect()
}

/// `text` without the lines `drop` says and the comment lines right above
/// each (they introduced it), nor a blank line left doubled.
fn without_commented_lines(text: &str, drop: impl Fn(&str) -> bool) -> String {
    let mut out: Vec<&str> = Vec::new();
    let mut comments: Vec<&str> = Vec::new();
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        if trimmed.starts_with('#') {
            comments.push(line);
        } else if drop(trimmed) {
            comments.clear();
        } else {
            out.append(&mut comments);
            if !(trimmed.is_empty() && out.last().is_some_and(|last| last.trim().is_empty())) {
                out.push(line);
            }
        }
    }
    out.append(&mut comments);
    out.concat()
}

/// Writes the demo's sources: each target's module tree, with the items the
/// student edition compiles out removed (see [`Gate`]). A binary that still
/// names the solution is the kit's own (the pictures, drawn from the
/// solution) and is left out whole; the library or the main binary naming
/// it is an error, since the student edition could not build it. Returns
/// the binaries left out.
fn export_demo(root: &Path, dir: &Path, gate: &Gate) -> Result<Vec<String>, String> {
    let solution = SOLUTION.replace('-', "_");
    let listed = tracked(root, "demo/src")?;
    let mut dropped = Vec::new();
    for target in crate_roots(&listed) {
        let scratch = Scratch::new(&format!("demo-{}", target.display()))?;
        let files = copy_modules(root, &scratch.0, &target, &file_text(root, &target)?, gate)?;
        let names_solution = files.iter().find(|file| {
            fs::read_to_string(scratch.0.join(file))
                .is_ok_and(|text| mentions_ident(&text, &solution))
        });
        match names_solution {
            None => copy_tree(&scratch.0, dir)?,
            Some(file) if target.starts_with("demo/src/bin") => {
                dropped.push(format!(
                    "the `{}` binary ({} names `{solution}`)",
                    bin_name(&target),
                    file.display()
                ));
            }
            Some(file) => {
                return Err(format!(
                    "{} names `{solution}` outside an item the student edition compiles out, so \
                     the exported demo would not build: gate it on a feature (`#[cfg(not(feature \
                     = \"starter\"))]`) or move it into a binary of its own",
                    file.display()
                ));
            }
        }
    }
    // Files that are not Rust (data a module includes) go as they are.
    for file in listed
        .iter()
        .filter(|file| file.extension().is_none_or(|e| e != "rs"))
    {
        fs::create_dir_all(dir.join(file).parent().expect("a file has a folder"))
            .map_err(|e| e.to_string())?;
        fs::copy(root.join(file), dir.join(file))
            .map_err(|e| format!("{}: {e}", file.display()))?;
    }
    Ok(dropped)
}

/// A scratch folder under the system's temporary folder, removed when
/// dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(label: &str) -> Result<Scratch, String> {
        let path = std::env::temp_dir().join(format!(
            "export-{}-{}",
            std::process::id(),
            label.replace(['/', '\\'], "-")
        ));
        if path.exists() {
            fs::remove_dir_all(&path).map_err(|e| e.to_string())?;
        }
        fs::create_dir_all(&path).map_err(|e| e.to_string())?;
        Ok(Scratch(path))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn file_text(root: &Path, path: &Path) -> Result<String, String> {
    fs::read_to_string(root.join(path)).map_err(|e| format!("{}: {e}", path.display()))
}

/// The files git tracks under `folder`, relative to `root`; without git,
/// every file there.
fn tracked(root: &Path, folder: &str) -> Result<Vec<PathBuf>, String> {
    let listed = Command::new("git")
        .current_dir(root)
        .args(["ls-files", "-z", "--", folder])
        .output();
    if let Ok(output) = listed {
        if output.status.success() && !output.stdout.is_empty() {
            return Ok(output
                .stdout
                .split(|byte| *byte == 0)
                .filter(|file| !file.is_empty())
                .map(|file| PathBuf::from(String::from_utf8_lossy(file).into_owned()))
                // Listed but deleted in the working tree: not exported.
                .filter(|file| root.join(file).is_file())
                .collect());
        }
    }
    let mut found = Vec::new();
    let mut pending = vec![PathBuf::from(folder)];
    while let Some(at) = pending.pop() {
        for entry in fs::read_dir(root.join(&at)).map_err(|e| e.to_string())? {
            let entry = entry.map_err(|e| e.to_string())?;
            let path = at.join(entry.file_name());
            if entry.path().is_dir() {
                pending.push(path);
            } else {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

/// The crate roots cargo finds by itself among a package's source files:
/// `src/lib.rs`, `src/main.rs`, `src/bin/NAME.rs` and `src/bin/NAME/main.rs`.
fn crate_roots(files: &[PathBuf]) -> Vec<PathBuf> {
    files
        .iter()
        .filter(|file| {
            let parts: Vec<&str> = file.iter().filter_map(|part| part.to_str()).collect();
            match parts.as_slice() {
                [.., "src", "lib.rs" | "main.rs"] => true,
                [.., "src", "bin", name] => name.ends_with(".rs"),
                [.., "src", "bin", _, "main.rs"] => true,
                _ => false,
            }
        })
        .cloned()
        .collect()
}

fn bin_name(root_file: &Path) -> String {
    let name = if root_file.ends_with("main.rs") {
        root_file.parent().and_then(Path::file_name)
    } else {
        root_file.file_stem()
    };
    name.unwrap_or_default().to_string_lossy().into_owned()
}

/// Whether `text` uses the identifier `ident` (not as part of a longer one).
fn mentions_ident(text: &str, ident: &str) -> bool {
    text.match_indices(ident).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + ident.len()..].chars().next();
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !word(before) && !word(after)
    })
}

/// Writes `file` (a path relative to the kit's root, whose exported text is
/// `text`) into `dir` with its gated-out items removed, then every module it
/// declares (`mod name;`), read from the kit, in turn. Returns the files
/// written, relative to `dir`.
fn copy_modules(
    root: &Path,
    dir: &Path,
    file: &Path,
    text: &str,
    gate: &Gate,
) -> Result<Vec<PathBuf>, String> {
    let text = gate
        .apply(text)
        .map_err(|why| format!("{}: {why}", file.display()))?;
    let target = dir.join(file);
    fs::create_dir_all(target.parent().expect("a file has a folder")).map_err(|e| e.to_string())?;
    fs::write(&target, &text).map_err(|e| format!("{}: {e}", file.display()))?;
    let mut written = vec![file.to_path_buf()];
    // A crate root's or a `mod.rs`'s modules sit beside it; those of
    // `name.rs`, in the folder `name/`.
    let folder = file.parent().unwrap_or(Path::new(""));
    let is_root = matches!(
        file.file_name().and_then(|name| name.to_str()),
        Some("mod.rs" | "lib.rs" | "main.rs")
    ) || folder.ends_with("src/bin");
    let children = if is_root {
        folder.to_path_buf()
    } else {
        folder.join(file.file_stem().unwrap_or_default())
    };
    for module in declared_modules(&text) {
        let candidates = [
            children.join(format!("{module}.rs")),
            children.join(&module).join("mod.rs"),
        ];
        let child = candidates
            .iter()
            .find(|path| root.join(path).is_file())
            .ok_or_else(|| {
                format!(
                    "{} declares `mod {module};`, but neither {} nor {} exists",
                    file.display(),
                    candidates[0].display(),
                    candidates[1].display()
                )
            })?;
        let child_text = file_text(root, child)?;
        written.extend(copy_modules(root, dir, child, &child_text, gate)?);
    }
    Ok(written)
}

/// The modules a Rust file declares in files of their own: `mod name;`,
/// with any visibility. Inline modules (`mod tests { .. }`) are part of the
/// file.
fn declared_modules(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            let rest = line
                .strip_prefix("pub(crate) ")
                .or_else(|| line.strip_prefix("pub(super) "))
                .or_else(|| line.strip_prefix("pub "))
                .unwrap_or(line);
            let name = rest.strip_prefix("mod ")?.strip_suffix(';')?.trim();
            name.chars()
                .all(|c| c.is_alphanumeric() || c == '_')
                .then(|| name.to_owned())
        })
        .collect()
}

/// What the student edition's features are, for reading `#[cfg]`s: the
/// features that chose the starter are always on there, those that chose
/// the solution do not exist. An item whose `#[cfg(..)]` is false under
/// that is left out of the export, with its doc comment and attributes, so
/// no student file names a crate they do not have. Other cfgs (`test`,
/// other features) are kept as they are.
#[derive(Debug, Default, Clone)]
struct Gate {
    on: BTreeSet<String>,
    off: BTreeSet<String>,
}

impl Gate {
    /// `feature = "x"`, `not(..)`, `all(..)`, `any(..)`: true or false when
    /// the student edition decides it, `None` when it does not.
    fn decide(&self, predicate: &str) -> Option<bool> {
        let predicate = predicate.trim();
        if let Some(name) = predicate
            .strip_prefix("feature")
            .map(str::trim_start)
            .and_then(|rest| rest.strip_prefix('='))
        {
            let name = name.trim().trim_matches('"');
            return if self.on.contains(name) {
                Some(true)
            } else if self.off.contains(name) {
                Some(false)
            } else {
                None
            };
        }
        let call = |name: &str| {
            predicate
                .strip_prefix(name)
                .map(str::trim_start)
                .and_then(|rest| rest.strip_prefix('('))
                .and_then(|rest| rest.strip_suffix(')'))
        };
        if let Some(inner) = call("not") {
            return self.decide(inner).map(|value| !value);
        }
        for (name, all) in [("all", true), ("any", false)] {
            if let Some(inner) = call(name) {
                let values: Vec<Option<bool>> = split_top_level(inner)
                    .iter()
                    .map(|p| self.decide(p))
                    .collect();
                // all(): false if any is false; any(): true if any is true.
                return if values.contains(&Some(!all)) {
                    Some(!all)
                } else if values.iter().all(Option::is_some) {
                    Some(all)
                } else {
                    None
                };
            }
        }
        None
    }

    /// `text` without the items whose `#[cfg]` is false in the student
    /// edition.
    fn apply(&self, text: &str) -> Result<String, String> {
        if self.on.is_empty() && self.off.is_empty() {
            return Ok(text.to_owned());
        }
        let lines: Vec<&str> = text.lines().collect();
        let mut out: Vec<&str> = Vec::new();
        let mut at = 0;
        while at < lines.len() {
            let line = lines[at].trim();
            let predicate = line
                .strip_prefix("#[cfg(")
                .and_then(|rest| rest.strip_suffix(")]"));
            if predicate.is_some_and(|p| self.decide(p) == Some(false)) {
                // The doc comment and attributes above belong to the item.
                while out.last().is_some_and(|above| {
                    let above = above.trim();
                    above.starts_with("///") || above.starts_with("#[")
                }) {
                    out.pop();
                }
                at = item_end(&lines, at + 1).ok_or_else(|| {
                    format!(
                        "line {}: cannot tell where the item under `{line}` ends",
                        at + 1
                    )
                })?;
                continue;
            }
            out.push(lines[at]);
            at += 1;
        }
        Ok(out.join("\n") + "\n")
    }
}

/// The index just past the item starting at `start` (after any further
/// attributes): the line where its braces close, or its `;`.
fn item_end(lines: &[&str], start: usize) -> Option<usize> {
    let mut depth = 0i32;
    let mut opened = false;
    for (index, line) in lines.iter().enumerate().skip(start) {
        let trimmed = line.trim();
        if depth == 0 && trimmed.starts_with("#[") {
            continue;
        }
        for c in trimmed.chars() {
            match c {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
        if depth == 0 && (trimmed.ends_with(';') || (opened && trimmed.ends_with('}'))) {
            return Some(index + 1);
        }
    }
    None
}

/// `a, b(c, d), e` split at its top-level commas.
fn split_top_level(list: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (at, c) in list.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&list[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(&list[start..]);
    parts
        .into_iter()
        .filter(|part| !part.trim().is_empty())
        .collect()
}

/// Copies the files of `folder` that git tracks (with their working-tree
/// contents) into `to`, so nothing a run left behind goes out: a pending
/// snapshot, a proptest file from a failing run. Without git, the whole
/// folder.
fn copy_tracked(root: &Path, folder: &str, to: &Path) -> Result<(), String> {
    let listed = Command::new("git")
        .current_dir(root)
        .args(["ls-files", "-z", "--", folder])
        .output();
    let files = match listed {
        Ok(output) if output.status.success() && !output.stdout.is_empty() => output.stdout,
        _ => return copy_tree(&root.join(folder), to),
    };
    for file in files
        .split(|byte| *byte == 0)
        .filter(|file| !file.is_empty())
    {
        let file = String::from_utf8_lossy(file).into_owned();
        let inside = Path::new(&file)
            .strip_prefix(folder)
            .map_err(|e| e.to_string())?;
        let target = to.join(inside);
        fs::create_dir_all(target.parent().expect("a file has a folder"))
            .map_err(|e| e.to_string())?;
        fs::copy(root.join(&file), &target).map_err(|e| format!("{file}: {e}"))?;
    }
    Ok(())
}

/// Which manifest to rewrite for the student edition.
#[derive(Clone, Copy)]
enum Member {
    Root,
    Demo,
}

/// A manifest rewritten for the student edition, and what its features are
/// there.
struct Exported {
    text: String,
    gate: Gate,
}

/// A manifest without the solution: the starter becomes a plain dependency,
/// the workspace keeps the members `keep` says were exported, and the
/// features are derived from the kit's (see [`student_features`]).
fn manifest(kit: &str, member: Member, keep: impl Fn(&str) -> bool) -> Result<Exported, String> {
    let mut out: Vec<String> = Vec::new();
    let mut section = String::new();
    let mut features: Vec<(String, Vec<String>)> = Vec::new();
    let mut features_at = None;
    for line in kit.lines() {
        if line.starts_with('[') {
            section = line.trim().to_owned();
            if section == "[features]" {
                features_at = Some(out.len());
                continue;
            }
            if section == "[package]" {
                // The comment above it explained the kit's façade.
                while out.last().is_some_and(|line| line.starts_with('#')) {
                    out.pop();
                }
                if let Member::Root = member {
                    out.push("# The root package is a thin façade: the shared test suite in `tests/` is its".into());
                    out.push(
                        "# integration suite, and it re-exports your starter crate under one name."
                            .into(),
                    );
                }
            }
        } else if section == "[features]" {
            // Its comments explain the kit's choice of crate; the derived
            // section gets its own.
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            features.push(feature_entry(line)?);
            continue;
        } else if line.contains(SOLUTION) {
            continue;
        } else if line.contains(FLEET) {
            // Its comment is about it alone.
            while out.last().is_some_and(|line| line.starts_with('#')) {
                out.pop();
            }
            continue;
        }
        let line = if let Some(list) = line.strip_prefix("members = ") {
            let members: Vec<String> = toml_strings(list)?
                .into_iter()
                .filter(|member| keep(member))
                .map(|member| format!("{member:?}"))
                .collect();
            format!("members = [{}]", members.join(", "))
        } else if let (Member::Root, true) = (member, line.starts_with("description = ")) {
            "description = \"Façade over the starter crate, so the shared suite tests it.\""
                .to_owned()
        } else if line.starts_with(&format!("{STARTER} = ")) {
            line.replace(", optional = true", "")
        } else {
            line.to_owned()
        };
        out.push(line);
    }
    let (derived, gate) = student_features(&features);
    if let (Some(at), false) = (features_at, derived.is_empty()) {
        let mut section = vec![
            "[features]".to_owned(),
            "# Your crate, the starter, is always built: the `starter` feature is on by".to_owned(),
            "# default, with the parts of the starter (its own features) the tests and the"
                .to_owned(),
            "# demo use.".to_owned(),
        ];
        for (name, values) in &derived {
            let values: Vec<String> = values.iter().map(|value| format!("{value:?}")).collect();
            section.push(format!("{name} = [{}]", values.join(", ")));
        }
        if at < out.len() {
            section.push(String::new());
        }
        out.splice(at..at, section);
    }
    let text = out.join("\n") + "\n";
    if text.contains("solution") {
        return Err(
            "the exported manifest still mentions the solution; update export.rs".to_owned(),
        );
    }
    Ok(Exported { text, gate })
}

/// One `name = ["a", "b"]` line of a `[features]` section.
fn feature_entry(line: &str) -> Result<(String, Vec<String>), String> {
    let (name, list) = line
        .split_once('=')
        .ok_or_else(|| format!("cannot read the feature line `{line}`"))?;
    Ok((name.trim().to_owned(), toml_strings(list)?))
}

/// The strings of a one-line TOML array, `["a", "b"]`.
fn toml_strings(list: &str) -> Result<Vec<String>, String> {
    let inner = list
        .trim()
        .strip_prefix('[')
        .and_then(|rest| rest.split('#').next())
        .map(str::trim_end)
        .and_then(|rest| rest.strip_suffix(']'))
        .ok_or_else(|| format!("export.rs reads one-line arrays only, and cannot read `{list}`"))?;
    Ok(inner
        .split(',')
        .map(|item| item.trim().trim_matches('"').to_owned())
        .filter(|item| !item.is_empty())
        .collect())
}

/// The student edition's features, derived from the kit's:
/// - a feature that turns on the solution does not exist there (`off`);
/// - a feature that turns on the starter is always on (`on`), so it joins
///   `default`, and keeps everything else it turns on, such as the
///   starter's own features (`retry-breaker-starter/tower` for step 15): a
///   step that needs another starter feature only has to add it in the kit;
/// - the other features stay, without what refers to the solution.
fn student_features(kit: &[(String, Vec<String>)]) -> (Vec<(String, Vec<String>)>, Gate) {
    let names_solution = |value: &str| {
        value == format!("dep:{SOLUTION}")
            || value.starts_with(&format!("{SOLUTION}/"))
            || value.starts_with(&format!("{SOLUTION}?/"))
    };
    let mut gate = Gate::default();
    for (name, values) in kit {
        if values.iter().any(|value| names_solution(value)) {
            gate.off.insert(name.clone());
        } else if values
            .iter()
            .any(|value| *value == format!("dep:{STARTER}"))
        {
            gate.on.insert(name.clone());
        }
    }
    let kept = |values: &[String]| -> Vec<String> {
        values
            .iter()
            .filter(|value| !names_solution(value) && **value != format!("dep:{STARTER}"))
            .filter(|value| !gate.off.contains(*value))
            .cloned()
            .collect()
    };
    let mut default: Vec<String> = kit
        .iter()
        .find(|(name, _)| name == "default")
        .map(|(_, values)| kept(values))
        .unwrap_or_default();
    for on in &gate.on {
        if !default.contains(on) {
            default.push(on.clone());
        }
    }
    let mut derived = Vec::new();
    if !default.is_empty() {
        derived.push(("default".to_owned(), default));
    }
    for (name, values) in kit {
        if name != "default" && !gate.off.contains(name) {
            derived.push((name.clone(), kept(values)));
        }
    }
    (derived, gate)
}

/// A handout (LAB.md, MISTAKES.md) for students: without the instructors'
/// sections, without the paragraphs (or list items) that point at what
/// only the kit has, without a lead-in whose list went, and without a
/// heading left with nothing under it. A table is one paragraph, so a row
/// that points at the kit would take its whole table along.
fn handout(lab: &str, track: Track) -> String {
    let mut sections: Vec<&str> = Vec::new();
    let mut start = 0;
    for (at, _) in lab.match_indices("\n## ") {
        sections.push(&lab[start..at + 1]);
        start = at + 1;
    }
    sections.push(&lab[start..]);
    let advanced_step = |section: &str| {
        crate::lab::step_sections(section.lines().next().unwrap_or_default())
            .into_keys()
            .any(|n| n > crate::manifest::CORE_LAST)
    };
    let kept: String = sections
        .into_iter()
        .filter(|section| {
            let kit_only = KIT_ONLY_SECTIONS
                .iter()
                .any(|heading| section.starts_with(heading));
            let left_out = track == Track::Core && advanced_step(section);
            !(kit_only || left_out)
        })
        .collect();
    let advanced = crate::manifest::HANDOUTS[1];
    let kit_only = |text: &str| {
        INSTRUCTOR_ONLY.iter().any(|word| text.contains(word))
            || (track == Track::Core && text.contains(advanced))
    };
    let mut paragraphs: Vec<String> = Vec::new();
    for paragraph in kept.split("\n\n") {
        let kept = match list_items(paragraph) {
            // A list loses only its items about the kit.
            Some(items) => {
                let items: Vec<&str> = items.into_iter().filter(|item| !kit_only(item)).collect();
                (!items.is_empty()).then(|| items.join("\n"))
            }
            None => (!kit_only(paragraph)).then(|| paragraph.to_owned()),
        };
        match kept {
            Some(paragraph) => paragraphs.push(paragraph),
            // "Try one of these:" introduces nothing once "these" went.
            None => {
                if paragraphs
                    .last()
                    .is_some_and(|last| last.trim_end().ends_with(':') && !is_heading(last))
                {
                    paragraphs.pop();
                }
            }
        }
    }
    let text = paragraphs.join("\n\n").trim_end().to_owned() + "\n";
    without_empty_sections(&text)
}

/// The items of a Markdown list paragraph (each with its continuation
/// lines), or `None` if the paragraph is not a list.
fn list_items(paragraph: &str) -> Option<Vec<&str>> {
    let starts_item = |line: &str| {
        line.starts_with("- ")
            || line.starts_with("* ")
            || line
                .split_once(". ")
                .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    };
    let paragraph = paragraph.trim_matches('\n');
    if !paragraph.lines().next().is_some_and(starts_item) {
        return None;
    }
    let mut items = Vec::new();
    let mut start = 0;
    let mut offset = 0;
    for line in paragraph.split_inclusive('\n') {
        if starts_item(line) {
            if offset > start {
                items.push(paragraph[start..offset].trim_end_matches('\n'));
            }
            start = offset;
        } else if !line.starts_with(' ') {
            return None;
        }
        offset += line.len();
    }
    items.push(paragraph[start..].trim_end_matches('\n'));
    Some(items)
}

/// The level of a Markdown heading line (`## x` is 2), if it is one.
fn heading_level(line: &str) -> Option<usize> {
    let level = line.chars().take_while(|c| *c == '#').count();
    ((1..=6).contains(&level) && line[level..].starts_with(' ')).then_some(level)
}

fn is_heading(paragraph: &str) -> bool {
    paragraph.lines().count() == 1 && heading_level(paragraph).is_some()
}

/// The lines of a Markdown text, each with whether it is outside a fenced
/// code block (where `# ` is a shell comment, not a heading).
pub(crate) fn prose_lines(text: &str) -> Vec<(&str, bool)> {
    let mut fenced = false;
    text.lines()
        .map(|line| {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                return (line, false);
            }
            (line, !fenced)
        })
        .collect()
}

/// The headings with nothing under them: followed, blank lines aside, by a
/// heading of the same or a higher level, or by the end of the text. Each
/// is given with its 1-based line number.
pub(crate) fn empty_sections(text: &str) -> Vec<(usize, String)> {
    let lines = prose_lines(text);
    let mut empty = Vec::new();
    for (index, (line, prose)) in lines.iter().enumerate() {
        let Some(level) = heading_level(line).filter(|_| *prose) else {
            continue;
        };
        let next = lines[index + 1..]
            .iter()
            .find(|(line, _)| !line.trim().is_empty());
        let closed = match next {
            None => true,
            Some((next, prose)) => *prose && heading_level(next).is_some_and(|next| next <= level),
        };
        if closed {
            empty.push((index + 1, line.to_string()));
        }
    }
    empty
}

/// `text` without its empty sections' headings, until none is left (a
/// section whose subsections were all empty becomes empty in turn).
fn without_empty_sections(text: &str) -> String {
    let mut text = text.to_owned();
    loop {
        let empty: BTreeSet<usize> = empty_sections(&text)
            .into_iter()
            .map(|(at, _)| at)
            .collect();
        if empty.is_empty() {
            return text;
        }
        let mut out: Vec<&str> = Vec::new();
        let mut skip_blank = false;
        for (index, line) in text.lines().enumerate() {
            if empty.contains(&(index + 1)) {
                skip_blank = true;
                continue;
            }
            if skip_blank && line.trim().is_empty() {
                continue;
            }
            skip_blank = false;
            out.push(line);
        }
        text = out.join("\n").trim_end().to_owned() + "\n";
    }
}

/// The targets of the Markdown images in `text` (`![alt](target)`), code
/// blocks aside.
pub(crate) fn image_links(text: &str) -> Vec<String> {
    let mut links = Vec::new();
    for (line, prose) in prose_lines(text) {
        if !prose {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("![") {
            rest = &rest[at + 2..];
            // The alt text may hold brackets and backquotes; the target
            // starts at the first `](`.
            let Some(open) = rest.find("](") else { break };
            rest = &rest[open + 2..];
            let Some(close) = rest.find(')') else { break };
            let target = rest[..close].split_whitespace().next().unwrap_or_default();
            links.push(target.to_owned());
            rest = &rest[close..];
        }
    }
    links
}

/// The repository path of an image link, or `None` for a link elsewhere (a
/// URL); an error for a path that leaves the repository.
pub(crate) fn local_path(link: &str) -> Result<Option<PathBuf>, String> {
    if link.contains("://") || link.starts_with("data:") || link.starts_with('#') {
        return Ok(None);
    }
    let path = link.split(['#', '?']).next().unwrap_or_default();
    let path = Path::new(path.trim_start_matches("./"));
    if path.is_absolute()
        || path
            .components()
            .any(|c| c == std::path::Component::ParentDir)
    {
        return Err(format!(
            "{link}: a picture must be a path inside the repository"
        ));
    }
    Ok(Some(path.to_path_buf()))
}

/// Trims the kit's `Cargo.lock` to the exported workspace: cargo drops the
/// packages nothing uses any more (the benchmarks' peers) and keeps every
/// version, so the student builds exactly what the kit was tested with.
fn trim_lock(dir: &Path) -> Result<(), String> {
    let metadata = |offline: bool| {
        let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        command
            .current_dir(dir)
            .args(["metadata", "--format-version", "1", "--quiet"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        if offline {
            command.arg("--offline");
        }
        command.status().is_ok_and(|status| status.success())
    };
    if metadata(true) || metadata(false) {
        Ok(())
    } else {
        Err("cargo metadata failed on the exported workspace".to_owned())
    }
}

/// A fresh repository with the export as its one commit.
fn commit(dir: &Path) -> Result<(), String> {
    // An instructor's own name goes on the commit if git knows it.
    let mut identity = vec!["-c".to_owned(), "commit.gpgsign=false".to_owned()];
    for (key, fallback) in [
        ("user.name", "Instructor"),
        ("user.email", "instructor@example.invalid"),
    ] {
        let known = Command::new("git")
            .args(["config", key])
            .output()
            .is_ok_and(|output| output.status.success());
        if !known {
            identity.extend(["-c".to_owned(), format!("{key}={fallback}")]);
        }
    }
    let git = |args: &[&str]| -> Result<(), String> {
        let output = Command::new("git")
            .current_dir(dir)
            .args(&identity)
            .args(args)
            .output()
            .map_err(|e| format!("cannot run git: {e}"))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(format!(
                "git {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&output.stderr)
            ))
        }
    };
    git(&["init", "--quiet"])?;
    git(&["add", "--all"])?;
    git(&["commit", "--quiet", "-m", "The retry-breaker lab"])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tuning task's bonus counts the gain over the settings handed
    /// out, which the simulation knows as `Settings::SHIPPED`: the file the
    /// kit hands out must hold exactly those, or it would earn points.
    #[test]
    fn the_tuning_file_handed_out_holds_the_shipped_settings() {
        let root = root();
        let file = fs::read_to_string(root.join("tuning.toml")).unwrap();
        let sim = fs::read_to_string(root.join("tests/tuning/sim.rs")).unwrap();
        let shipped = &sim[sim.find("pub const SHIPPED").expect("Settings::SHIPPED")..];
        let shipped = &shipped[..shipped.find("};").unwrap()];
        let mut names = 0;
        for line in file.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (name, value) = line.split_once('=').unwrap();
            let field = format!("{}: {},", name.trim(), value.trim());
            assert!(
                shipped.contains(&field),
                "tuning.toml's `{line}` is not in SHIPPED"
            );
            names += 1;
        }
        assert_eq!(names, 5, "tuning.toml holds the five settings");
    }

    #[test]
    fn the_handout_drops_the_instructors_section_and_kit_only_paragraphs() {
        let lab = "# Lab\n\nIntro.\n\n## Step 1\n\nDo it.\n\nSee `mistakes/`.\n\n## For instructors\n\nSecrets.\n\n## One breaker across a fleet (reference)\n\nRun `just fleet`.\n\n## After\n\nMore.\n";
        assert_eq!(
            handout(lab, Track::Advanced),
            "# Lab\n\nIntro.\n\n## Step 1\n\nDo it.\n\n## After\n\nMore.\n"
        );
    }

    #[test]
    fn a_list_loses_only_its_kit_only_items() {
        let lab = "# Lab\n\n## Going further\n\nTry one:\n\n- **Metrics.** Count opens.\n- **Fast.** See\n  `solution/src/shortcut.rs`.\n- **Budget.** Cap retries.\n";
        assert_eq!(
            handout(lab, Track::Advanced),
            "# Lab\n\n## Going further\n\nTry one:\n\n- **Metrics.** Count opens.\n- **Budget.** Cap retries.\n"
        );
    }

    #[test]
    fn a_section_left_empty_goes_with_its_heading_and_lead_in() {
        // Its one list pointed at the kit only: the lead-in introduces
        // nothing, and the heading has nothing under it.
        let lab = "# Lab\n\n## Step 1\n\nDo it.\n\n## Going further\n\nTry one:\n\n- See `solution/`.\n- Run `just check-mistakes`.\n\n## Last\n\n### Only kit\n\nSee `mistakes/`.\n";
        let out = handout(lab, Track::Advanced);
        assert_eq!(out, "# Lab\n\n## Step 1\n\nDo it.\n");
        assert!(empty_sections(&out).is_empty());
    }

    #[test]
    fn an_empty_section_is_a_heading_closed_by_one_of_its_level_or_higher() {
        let text = "# A\n\n## B\n\n### C\n\ntext\n\n## D\n\n```sh\n# a comment, not a heading\n```\n\n## E\n\n# F\n";
        let empty: Vec<String> = empty_sections(text).into_iter().map(|(_, h)| h).collect();
        assert_eq!(empty, ["## E", "# F"]);
        assert_eq!(
            without_empty_sections(text),
            "# A\n\n## B\n\n### C\n\ntext\n\n## D\n\n```sh\n# a comment, not a heading\n```\n"
        );
    }

    #[test]
    fn the_real_handout_has_no_empty_section_and_keeps_going_further() {
        let lab = fs::read_to_string(root().join("LAB.md")).unwrap();
        let out = handout(&lab, Track::Advanced);
        assert_eq!(empty_sections(&out), []);
        assert!(out.contains("## Going further\n\nOnce everything is green"));
        assert!(out.contains("- **A retry budget.**"));
        assert!(!out.contains("solution/src/shortcut.rs"));
    }

    #[test]
    fn the_core_handouts_keep_steps_1_to_10_and_nothing_that_points_at_the_advanced_track() {
        for name in ["LAB.md", "MISTAKES.md"] {
            let kit = fs::read_to_string(root().join(name)).unwrap();
            let core = handout(&kit, Track::Core);
            let steps: Vec<u32> = crate::lab::step_sections(&core).into_keys().collect();
            assert!(
                steps.iter().all(|&n| n <= crate::manifest::CORE_LAST),
                "{name}: {steps:?}"
            );
            assert!(steps.contains(&1), "{name} keeps step 1");
            assert!(
                !core.contains("ADVANCED.md"),
                "{name} points at ADVANCED.md"
            );
            let advanced = handout(&kit, Track::Advanced);
            assert_eq!(
                crate::lab::step_sections(&advanced).len(),
                crate::lab::step_sections(&kit).len(),
                "{name}: the advanced edition keeps every step"
            );
        }
    }

    #[test]
    fn the_steps_manifest_of_an_edition_points_at_nothing_it_lacks() {
        let kit = fs::read_to_string(root().join("steps.toml")).unwrap();
        // The kit's own points at both: the test has something to take out.
        assert!(kit.contains("docs/FIGURES.md") && kit.contains("ADVANCED.md"));
        for track in [Track::Core, Track::Advanced] {
            let out = steps_manifest(&kit, track);
            let head = &out[..out.find("[[step]]").unwrap()];
            assert!(!head.contains("docs/"), "{track:?}: {head}");
            assert_eq!(
                head.contains("ADVANCED.md"),
                track == Track::Advanced,
                "{head}"
            );
            assert!(
                head.starts_with("# The lab's steps") && head.contains("`hints`"),
                "{head}"
            );
            assert_eq!(
                &out[out.find("[[step]]").unwrap()..],
                &kit[kit.find("[[step]]").unwrap()..]
            );
        }
    }

    #[test]
    fn a_line_dropped_from_a_manifest_takes_the_comments_right_above_it() {
        let text = "# The lab.\n\nstep1 = 18\n\n# Optional.\nstep11 = 0\n# Also.\nstep12 = 0\n\ntuning = 5\n";
        let kept = without_commented_lines(text, |line| {
            line.starts_with("step11") || line.starts_with("step12")
        });
        assert_eq!(kept, "# The lab.\n\nstep1 = 18\n\ntuning = 5\n");
    }

    #[test]
    fn the_real_mistakes_handout_keeps_every_row_and_no_word_of_the_kit() {
        // A row that named the gallery would take its whole table out of
        // the student edition, and nothing would say so.
        let rows = |text: &str| {
            prose_lines(text)
                .into_iter()
                .filter(|(line, prose)| *prose && line.starts_with("| ") && !line.contains("---"))
                .count()
        };
        let kit = fs::read_to_string(root().join("MISTAKES.md")).unwrap();
        let out = handout(&kit, Track::Advanced);
        assert_eq!(empty_sections(&out), []);
        assert!(rows(&kit) > 0);
        assert_eq!(rows(&out), rows(&kit));
        for word in INSTRUCTOR_ONLY {
            assert!(
                !out.contains(word),
                "the student's MISTAKES.md names {word}"
            );
        }
        assert!(out.contains("Read a\nstep's section once that step passes"));
    }

    #[test]
    fn pictures_are_found_in_image_links_only() {
        let text = "See [LAB](LAB.md).\n\n![The `three` states (from `just pictures`)](docs/pictures/a.svg)\n\n```md\n![not](in/code.svg)\n```\n![b](./docs/b.png \"title\") and ![c](https://example.com/c.svg)\n";
        let links = image_links(text);
        assert_eq!(
            links,
            [
                "docs/pictures/a.svg",
                "./docs/b.png",
                "https://example.com/c.svg"
            ]
        );
        let paths: Vec<Option<PathBuf>> = links.iter().map(|l| local_path(l).unwrap()).collect();
        assert_eq!(
            paths,
            [
                Some(PathBuf::from("docs/pictures/a.svg")),
                Some(PathBuf::from("docs/b.png")),
                None
            ]
        );
        assert!(local_path("../outside.svg").is_err());
    }

    #[test]
    fn the_real_handout_shows_pictures_this_repository_has() {
        let shown = image_links(&handout(
            &fs::read_to_string(root().join("LAB.md")).unwrap(),
            Track::Core,
        ));
        assert!(shown.len() >= 5, "LAB.md shows its pictures: {shown:?}");
        for link in shown {
            let path = local_path(&link).unwrap().unwrap();
            assert!(root().join(&path).is_file(), "{link}");
        }
    }

    #[test]
    fn the_root_manifest_keeps_the_starter_alone() {
        let kit = "[workspace]\nmembers = [\".\", \"solution\", \"starter\", \"bench\"]\n\n# façade\n[package]\ndescription = \"x\"\n\n[features]\ndefault = [\"starter\"]\nstarter = [\"dep:retry-breaker-starter\"]\nsolution = [\"dep:retry-breaker-solution\"]\n\n[dependencies]\nretry-breaker-starter = { path = \"starter\", optional = true }\nretry-breaker-solution = { path = \"solution\", optional = true }\n";
        // The members the export writes: here, all but the solution and bench.
        let exported = |member: &str| !["solution", "bench"].contains(&member);
        let out = manifest(kit, Member::Root, exported).unwrap();
        assert!(out.text.contains("members = [\".\", \"starter\"]\n"));
        assert!(
            out.text
                .contains("retry-breaker-starter = { path = \"starter\" }\n")
        );
        assert!(
            out.text
                .contains("default = [\"starter\"]\nstarter = []\n\n[dependencies]")
        );
        assert!(!out.text.contains("solution"));
    }

    #[test]
    fn the_starter_feature_keeps_the_starter_features_it_turns_on() {
        // Step 15 needs `tower`; a later step's feature must come along too,
        // without export.rs knowing its name.
        let kit = "[features]\ndefault = [\"starter\"]\n# The suite covers the advanced steps.\nstarter = [\"dep:retry-breaker-starter\", \"retry-breaker-starter/tower\", \"retry-breaker-starter/step16\"]\nsolution = [\"dep:retry-breaker-solution\", \"retry-breaker-solution/tower\"]\nextra = [\"solution\", \"retry-breaker-starter/tower\"]\n\n[dependencies]\nretry-breaker-starter = { path = \"starter\", optional = true }\n";
        let out = manifest(kit, Member::Root, |_| true).unwrap();
        assert!(
            out.text.contains(
                "default = [\"starter\"]\nstarter = [\"retry-breaker-starter/tower\", \"retry-breaker-starter/step16\"]\nextra = [\"retry-breaker-starter/tower\"]\n"
            ),
            "{}",
            out.text
        );
        assert!(out.gate.on.contains("starter") && out.gate.off.contains("solution"));
    }

    #[test]
    fn the_real_manifests_turn_on_what_the_kits_starter_feature_does() {
        let starter_features = |text: &str| -> BTreeSet<String> {
            text.lines()
                .filter(|line| line.starts_with("starter = "))
                .flat_map(|line| feature_entry(line).unwrap().1)
                .filter(|value| value.starts_with(&format!("{STARTER}/")))
                .collect()
        };
        let kit = fs::read_to_string(root().join("Cargo.toml")).unwrap();
        let wanted = starter_features(&kit);
        assert!(wanted.contains("retry-breaker-starter/tower"), "{wanted:?}");
        let exported = |member: &str| root().join(member).is_dir() && member != "solution";
        let out = manifest(&kit, Member::Root, exported).unwrap();
        assert_eq!(starter_features(&out.text), wanted);
        assert!(out.text.contains("default = [\"starter\"]"));
        let demo = manifest(
            &fs::read_to_string(root().join("demo/Cargo.toml")).unwrap(),
            Member::Demo,
            |_| true,
        )
        .unwrap();
        assert!(demo.text.contains("default = [\"starter\"]"));
        assert!(demo.text.contains(&format!(
            "{STARTER} = {{ path = \"../starter\", features = [\"tower\"] }}"
        )));
    }

    #[test]
    fn items_the_student_edition_compiles_out_go_with_their_docs() {
        let gate = Gate {
            on: ["starter".to_owned()].into(),
            off: ["solution".to_owned()].into(),
        };
        let lib = "//! Doc.\n\n/// The solution.\n#[cfg(not(feature = \"starter\"))]\npub use retry_breaker_solution as kit;\n/// The starter.\n#[cfg(feature = \"starter\")]\npub use retry_breaker_starter as kit;\n\n#[cfg(all(feature = \"solution\", test))]\nmod pictures {\n    fn f() {}\n}\n#[cfg(test)]\nmod tests;\npub mod chart;\n";
        let out = gate.apply(lib).unwrap();
        assert_eq!(
            out,
            "//! Doc.\n\n/// The starter.\n#[cfg(feature = \"starter\")]\npub use retry_breaker_starter as kit;\n\n#[cfg(test)]\nmod tests;\npub mod chart;\n"
        );
        assert_eq!(declared_modules(&out), ["tests", "chart"]);
        assert!(mentions_ident(lib, "retry_breaker_solution"));
        assert!(!mentions_ident(
            "my_retry_breaker_solution_x",
            "retry_breaker_solution"
        ));
    }

    #[test]
    fn the_demo_exports_without_the_solution_and_the_tools_follow_main() {
        let scratch = Scratch::new("unit-test-demo").unwrap();
        let kit = root();
        let demo = manifest(
            &fs::read_to_string(kit.join("demo/Cargo.toml")).unwrap(),
            Member::Demo,
            |_| true,
        )
        .unwrap();
        let dropped = export_demo(&kit, &scratch.0, &demo.gate).unwrap();
        assert!(
            dropped.iter().any(|bin| bin.contains("`pictures`")),
            "{dropped:?}"
        );
        let lib = fs::read_to_string(scratch.0.join("demo/src/lib.rs")).unwrap();
        assert!(!mentions_ident(&lib, "retry_breaker_solution"));
        assert!(scratch.0.join("demo/src/chart/svg.rs").is_file());
        assert!(scratch.0.join("demo/src/bin/tune.rs").is_file());
        assert!(!scratch.0.join("demo/src/bin/pictures").exists());
        // The tools: whatever the student edition's main.rs declares.
        let main = fs::read_to_string(kit.join("student/xtask/src/main.rs")).unwrap();
        let files = copy_modules(
            &kit,
            &scratch.0,
            Path::new("xtask/src/main.rs"),
            &main,
            &Gate::default(),
        )
        .unwrap();
        for module in declared_modules(&main) {
            assert!(
                files.contains(&PathBuf::from(format!("xtask/src/{module}.rs")))
                    || files.contains(&PathBuf::from(format!("xtask/src/{module}/mod.rs")))
            );
        }
        // And a folder's modules with it: the grader is in grading/.
        assert!(files.contains(&PathBuf::from("xtask/src/grading/grade.rs")));
    }
}
