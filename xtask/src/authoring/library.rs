//! `cargo xtask library-edition DIR`: the solution as a crate of its own,
//! ready for `cargo package` and `cargo publish`: the generator's markers
//! stripped, the lab's notes rewritten for a library's reader, the crate
//! renamed, its manifest standing alone (no workspace to inherit from) with
//! the metadata a registry shows, and `solution/README.md` as its README.
//!
//! Nothing of the lab may be left: every file written is searched for the
//! lab's words (a TODO number, a step, the starter, the student), and one
//! found is an error naming its line, so a new note in the solution that
//! only makes sense beside the lab is caught the day it is written.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::root;

/// The published crate's name, and its name in Rust paths.
pub const NAME: &str = "retry-breaker";
const CRATE: &str = "retry_breaker";
/// The solution's name in Rust paths, replaced by [`CRATE`].
const SOLUTION_CRATE: &str = "retry_breaker_solution";

/// What a registry shows beside the name.
const DESCRIPTION: &str = "A consecutive-failure circuit breaker inside an async retry loop: one probe at a time, generations fencing stale outcomes, an injected clock and sleeper, and every test deterministic under a manual clock.";
const KEYWORDS: [&str; 5] = ["circuit-breaker", "retry", "backoff", "resilience", "async"];
const CATEGORIES: [&str; 2] = ["asynchronous", "network-programming"];

/// Lines of the solution that only the generator reads: dropped whole.
const MARKERS: [&str; 11] = [
    "// BEGIN SOLUTION ONLY",
    "// END SOLUTION ONLY",
    "// STARTER:",
    "// STARTER DESIGN:",
    "// BEGIN TODO(",
    "// END TODO",
    "// BEGIN ANCHOR(",
    "// END ANCHOR",
    "// BEGIN WITH TODO",
    "// END WITH TODO",
    "// SOLUTION ONLY FILE",
];

/// Comment lines that cite the course's contract by rule: the rule ids stay
/// in the docs, the citation lines go.
const CITATION: &str = "// Contract:";

/// The solution's notes that speak of the lab, each with what a library's
/// reader gets instead (`None`: nothing, the line goes). Each must be found
/// exactly once in its file, so that an edit of the solution that moves one
/// fails here instead of shipping the lab's words.
const REWRITES: &[(&str, &str, Option<&str>)] = &[
    (
        "src/retry/attempt.rs",
        "    #[allow(dead_code, reason = \"the starter reports by it until step 11\")]",
        Some(
            "    #[allow(dead_code, reason = \"part of an outcome, though the breaker reads its verdict\")]",
        ),
    ),
    (
        "src/retry/attempt.rs",
        "/// A plain result has the core lab's verdict.",
        Some("/// A plain result's verdict: `Ok` is a success, `Err` a failure."),
    ),
    (
        "src/time/backoff.rs",
        "    // The arithmetic's claims (SplitMix64, the scaling by the draw, two",
        None,
    ),
    // The suite's scheduler, which a library's users never build with.
    (
        "src/breaker/sync.rs",
        "//! The bulkhead's counter is the standard `AtomicU32`, or, when the lab's",
        None,
    ),
    (
        "src/breaker/sync.rs",
        "//! suite builds the crate (the `schedule` feature), lab-schedule's: the same",
        None,
    ),
    (
        "src/breaker/sync.rs",
        "//! operations, at each of which the suite's scheduler may switch threads,",
        None,
    ),
    (
        "src/breaker/sync.rs",
        "//! so step 17's tests try every order of two callers and judge a race the",
        None,
    ),
    ("src/breaker/sync.rs", "//! same on every run.", None),
    (
        "src/breaker/sync.rs",
        "#[cfg(feature = \"schedule\")]",
        None,
    ),
    (
        "src/breaker/sync.rs",
        "pub(crate) use lab_schedule::AtomicU32;",
        None,
    ),
    (
        "src/breaker/sync.rs",
        "#[cfg(not(feature = \"schedule\"))]",
        None,
    ),
    (
        "src/breaker/bulkhead.rs",
        "// The suite's scheduler can switch threads at each operation of this",
        None,
    ),
    (
        "src/breaker/bulkhead.rs",
        "// counter (see `sync.rs`), so use it for every step of `try_hold`.",
        None,
    ),
    (
        "src/time/backoff.rs",
        "    // default policies telling apart) are the shared suite's, in step 5,",
        None,
    ),
    (
        "src/time/backoff.rs",
        "    // where they judge the student's crate too. Only the seed source is",
        None,
    ),
    ("src/time/backoff.rs", "    // the solution's own.", None),
    (
        "src/breaker/builder.rs",
        "/// Unless told otherwise the breaker is the core lab's: it opens after 5",
        Some("/// Unless told otherwise the breaker opens after 5"),
    ),
    (
        "src/breaker/builder.rs",
        "    /// Settings for a breaker, starting from the core lab's defaults (see",
        Some("    /// Settings for a breaker, starting from the defaults (see"),
    ),
    ("src/breaker/circuit.rs", "//!", None),
    (
        "src/breaker/circuit.rs",
        "//! The student designs this file whole: the starter gets only the interface",
        None,
    ),
    (
        "src/breaker/circuit.rs",
        "//! below and the rules (see `xtask/src/authoring/starter.rs`).",
        None,
    ),
    (
        "src/breaker/circuit.rs",
        "    /// limit, are the lab's.",
        Some("    /// limit, are the breaker's own."),
    ),
    (
        "src/breaker/circuit.rs",
        "    /// The lab's admission rules (B3-B5).",
        Some("    /// The admission rules (B3-B5)."),
    ),
    (
        "src/breaker/cooldown.rs",
        "/// cooldown: the same every time (the default, the core lab's), or doubling",
        Some("/// cooldown: the same every time (the default), or doubling"),
    ),
    (
        "src/retry/execute.rs",
        "        // The core lab's reading of outcomes: `Verdict::of`, through the",
        Some("        // The plain reading of outcomes: `Verdict::of`, through the"),
    ),
    (
        "src/retry/execute.rs",
        "        // Refusals (TODO(7): E3, E10) and cancellation (TODO(8): E2 before",
        None,
    ),
    (
        "src/retry/execute.rs",
        "        // each attempt, E7 during each backoff sleep) belong in this loop",
        None,
    ),
    (
        "src/retry/execute.rs",
        "        // too; leave them for steps 7 and 8.",
        None,
    ),
    (
        "src/extras/fleet.rs",
        "//! Step 16 (advanced, optional): what one node knows of its fleet.",
        Some("//! What one node knows of its fleet."),
    ),
    (
        "src/extras/fleet.rs",
        "//! the `retry-breaker-fleet` crate; this module is the part that decides,",
        Some("//! the application's store; this module is the part that decides,"),
    ),
    (
        "src/lib.rs",
        "//! across a fleet that needs no network (the `retry-breaker-fleet` crate",
        Some("//! across a fleet that needs no network (the application adds the"),
    ),
    ("src/lib.rs", "//! adds the store).", Some("//! store).")),
    (
        "src/layer.rs",
        "            .expect(\"M2: a retry was made with no request left to send: retry only while `Copies::another` says there is one (TODO(15))\")",
        Some(
            "            .expect(\"M2: a retry was made with no request left to send: retry only while `Copies::another` says there is one\")",
        ),
    ),
    (
        "src/breaker/verdict.rs",
        "    /// The core lab's reading: `Ok` is a success, `Err` a failure.",
        Some("    /// The plain reading: `Ok` is a success, `Err` a failure."),
    ),
    (
        "tests/production/main.rs",
        "//! The solution's settings beyond the lab, for production: manual control",
        Some("//! The settings for production: manual control"),
    ),
    (
        "tests/production/main.rs",
        "//! durations of attempts and calls (O9). The",
        Some("//! durations of attempts and calls (O9). One test binary, so that each"),
    ),
    (
        "tests/production/main.rs",
        "//! student's crate has none of them, so",
        None,
    ),
    (
        "tests/production/main.rs",
        "//! they are tested here rather than in the shared suite; so is an `anyhow`",
        None,
    ),
    (
        "tests/production/main.rs",
        "//! error passed on with `?`, which needs a dependency of this crate's tests",
        None,
    ),
    (
        "tests/production/main.rs",
        "//! alone. One test binary, so that each build of the suite (a mutant's,",
        None,
    ),
    (
        "tests/production/main.rs",
        "//! say) links one more, not several.",
        Some("//! build of the suite links one more, not several."),
    ),
];

/// Appended to the edition's `lib.rs`, so that `cargo test --doc` runs the
/// README's example too.
const README_DOCTEST: &str = "
/// The README's example, compiled and run as a doc test.
#[cfg(doctest)]
#[doc = include_str!(\"../README.md\")]
pub struct ReadmeDoctests;
";

/// Words that belong to the lab, never to the library.
const LAB_WORDS: [&str; 10] = [
    "TODO(",
    "starter",
    "student",
    "LAB.md",
    "ADVANCED.md",
    "the lab",
    "lab's",
    "step ",
    "steps ",
    "xtask",
];

/// The lab's word in `line`, if it has one: a step only with its number
/// (`step 5`, not `for step in`), the lab only as a word (not `labels`).
fn lab_word(line: &str) -> Option<&'static str> {
    let lower = line.to_lowercase();
    LAB_WORDS.iter().copied().find(|word| {
        lower
            .match_indices(&word.to_lowercase())
            .any(|(at, found)| {
                let after = lower[at + found.len()..].chars().next();
                match *word {
                    "step " | "steps " => after.is_some_and(|c| c.is_ascii_digit()),
                    "the lab" => !after.is_some_and(char::is_alphabetic),
                    _ => true,
                }
            })
    })
}

/// `cargo xtask library-edition DIR`.
pub(crate) fn library_edition(args: &[String]) -> Result<(), String> {
    let [dir] = args else {
        return Err("usage: cargo xtask library-edition DIR".to_owned());
    };
    let root = root();
    let into = PathBuf::from(dir);
    write_edition(&root, &into)?;
    println!(
        "wrote the library edition `{NAME}` in {} (its README, manifest, sources and tests)",
        into.display()
    );
    match name_on_registry() {
        Ok(None) => println!("the name `{NAME}` is free on crates.io"),
        Ok(Some(found)) => println!("the name `{NAME}` is taken on crates.io: {found}"),
        Err(why) => println!("the name `{NAME}` could not be looked up: {why}"),
    }
    Ok(())
}

/// Writes the edition into `into`, replacing what is there.
pub(crate) fn write_edition(root: &Path, into: &Path) -> Result<(), String> {
    if into.exists() {
        fs::remove_dir_all(into).map_err(|e| format!("{}: {e}", into.display()))?;
    }
    let solution = root.join("solution");
    let mut files: Vec<(String, String)> = Vec::new();
    for folder in ["src", "tests"] {
        for path in rust_files(&solution.join(folder))? {
            let name = path
                .strip_prefix(&solution)
                .map_err(|e| e.to_string())?
                .to_string_lossy()
                .replace('\\', "/");
            let text = fs::read_to_string(&path).map_err(|e| format!("{name}: {e}"))?;
            files.push((name, text));
        }
    }
    let mut rewritten = Vec::new();
    for (name, text) in files {
        let text = rewrite(&name, &text)?;
        rewritten.push((name, text));
    }
    rewritten.push(("Cargo.toml".to_owned(), manifest(root)?));
    let readme = fs::read_to_string(solution.join("README.md"))
        .map_err(|e| format!("solution/README.md: {e}"))?;
    rewritten.push(("README.md".to_owned(), readme));

    let mut left = Vec::new();
    for (name, text) in &rewritten {
        for (index, line) in text.lines().enumerate() {
            if let Some(word) = lab_word(line) {
                left.push(format!("{name}:{}: `{word}`: {}", index + 1, line.trim()));
            }
        }
    }
    if !left.is_empty() {
        return Err(format!(
            "the library edition would still speak of the lab; rewrite these in the solution, or \
             add them to xtask/src/authoring/library.rs's REWRITES:\n  {}",
            left.join("\n  ")
        ));
    }
    for (name, text) in rewritten {
        let path = into.join(&name);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut found: Vec<PathBuf> = files_under(dir)?
        .into_iter()
        .filter(|path| path.extension().is_some_and(|ext| ext == "rs"))
        .collect();
    found.sort();
    Ok(found)
}

/// Every file under `dir`, in no order.
pub(crate) fn files_under(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut found = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in fs::read_dir(&folder).map_err(|e| format!("{}: {e}", folder.display()))? {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.is_dir() {
                folders.push(path);
            } else {
                found.push(path);
            }
        }
    }
    Ok(found)
}

/// One file of the edition: markers and citations dropped, the lab's notes
/// rewritten, the crate renamed.
fn rewrite(name: &str, text: &str) -> Result<String, String> {
    let mut lines: Vec<String> = text
        .lines()
        .filter(|line| {
            let trimmed = line.trim_start();
            !MARKERS.iter().any(|marker| trimmed.starts_with(marker))
                && !trimmed.starts_with(CITATION)
        })
        .map(str::to_owned)
        .collect();
    for (file, from, to) in REWRITES.iter().filter(|(file, _, _)| *file == name) {
        let at: Vec<usize> = lines
            .iter()
            .enumerate()
            .filter(|(_, line)| line == from)
            .map(|(index, _)| index)
            .collect();
        // A bare `//!` is found many times: the one to drop is the blank
        // doc line just before the next rewrite of the same file.
        let index = match at.as_slice() {
            [index] => *index,
            _ if *from == "//!" => {
                let next = REWRITES
                    .iter()
                    .filter(|(other, _, _)| other == file)
                    .skip_while(|(_, other, _)| other != from)
                    .nth(1)
                    .and_then(|(_, next, _)| lines.iter().position(|line| line == next))
                    .ok_or_else(|| format!("{file}: no line follows the blank doc line to drop"))?;
                next.checked_sub(1)
                    .filter(|before| lines[*before] == "//!")
                    .ok_or_else(|| format!("{file}: no blank doc line before line {next}"))?
            }
            found => {
                return Err(format!(
                    "{file}: the line to rewrite is there {} time(s), not once: {from}",
                    found.len()
                ));
            }
        };
        match to {
            Some(to) => lines[index] = (*to).to_owned(),
            None => {
                lines.remove(index);
            }
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    if name == "src/lib.rs" {
        // The README's example is compiled and run with the doc tests.
        out.push_str(README_DOCTEST);
    }
    Ok(out.replace(SOLUTION_CRATE, CRATE))
}

/// The edition's manifest: the solution's, standing alone.
fn manifest(root: &Path) -> Result<String, String> {
    let workspace = fs::read_to_string(root.join("Cargo.toml")).map_err(|e| e.to_string())?;
    let solution =
        fs::read_to_string(root.join("solution/Cargo.toml")).map_err(|e| e.to_string())?;
    let package = |field: &str| -> Result<String, String> {
        section(&workspace, "[workspace.package]")
            .lines()
            .find_map(|line| line.strip_prefix(&format!("{field} = ")))
            .map(str::to_owned)
            .ok_or(format!("Cargo.toml: [workspace.package] has no {field}"))
    };
    let inherited = section(&workspace, "[workspace.dependencies]");
    let quoted = |items: &[&str]| {
        items
            .iter()
            .map(|item| format!("{item:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = format!(
        "[package]\nname = \"{NAME}\"\nversion = {}\nedition = {}\nrust-version = {}\n\
         license = {}\ndescription = {DESCRIPTION:?}\nreadme = \"README.md\"\n\
         documentation = \"https://docs.rs/{NAME}\"\nkeywords = [{}]\ncategories = [{}]\n\n\
         # Every feature documented on docs.rs.\n[package.metadata.docs.rs]\nall-features = true\n\n\
         # A crate of its own, wherever it is written.\n[workspace]\n",
        package("version")?,
        package("edition")?,
        package("rust-version")?,
        package("license")?,
        quoted(&KEYWORDS),
        quoted(&CATEGORIES),
    );
    let mut in_package = false;
    for line in solution.lines() {
        if line.starts_with('[') {
            in_package = line == "[package]";
            if !in_package {
                out.push('\n');
                out.push_str(line);
                out.push('\n');
            }
            continue;
        }
        // The suite's scheduler is the lab's, never a library user's.
        if in_package
            || line.trim_start().starts_with('#')
            || line.trim().is_empty()
            || line.contains("lab-schedule")
        {
            continue;
        }
        out.push_str(&inherit(line, inherited)?);
        out.push('\n');
    }
    Ok(out)
}

/// A dependency line with `workspace = true` made whole from the
/// workspace's entry; any other line as it is.
fn inherit(line: &str, inherited: &str) -> Result<String, String> {
    let Some((name, spec)) = line.split_once(" = ") else {
        return Ok(line.to_owned());
    };
    if !spec.contains("workspace = true") {
        return Ok(line.to_owned());
    }
    let entry = inherited
        .lines()
        .find_map(|entry| entry.strip_prefix(&format!("{name} = ")))
        .ok_or(format!("the workspace has no dependency `{name}`"))?;
    let whole = match entry.strip_prefix('{').and_then(|e| e.strip_suffix('}')) {
        Some(fields) => fields.trim().to_owned(),
        None => format!("version = {entry}"),
    };
    Ok(format!(
        "{name} = {}",
        spec.replace("workspace = true", &whole)
    ))
}

/// The lines of one `[section]` of a manifest, up to the next.
fn section<'a>(text: &'a str, heading: &str) -> &'a str {
    let Some(start) = text.find(&format!("{heading}\n")) else {
        return "";
    };
    let body = &text[start + heading.len() + 1..];
    let end = body.find("\n[").map_or(body.len(), |end| end + 1);
    &body[..end]
}

/// What crates.io holds under [`NAME`]: `None` if nothing, or the versions
/// it lists; an error if the registry could not be asked.
fn name_on_registry() -> Result<Option<String>, String> {
    let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["info", NAME, "--registry", "crates-io"])
        .current_dir(std::env::temp_dir())
        .output()
        .map_err(|e| format!("cannot run cargo info: {e}"))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.status.success() {
        let stdout = String::from_utf8_lossy(&output.stdout);
        return Ok(Some(stdout.lines().take(2).collect::<Vec<_>>().join(" ")));
    }
    if stderr.contains("could not find") {
        return Ok(None);
    }
    Err(stderr.lines().last().unwrap_or("no answer").to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_labs_words_are_found_as_words() {
        assert_eq!(lab_word("see LAB.md, step 3"), Some("LAB.md"));
        assert_eq!(lab_word("leave them for steps 7 and 8"), Some("steps "));
        assert_eq!(lab_word("in Step 16 (advanced)"), Some("step "));
        assert_eq!(lab_word("for step in 0..fresh {"), None);
        assert_eq!(lab_word("the labels of its count"), None);
        assert_eq!(lab_word("settings beyond the lab, for"), Some("the lab"));
        assert_eq!(lab_word("the starter's stand-in"), Some("starter"));
    }

    #[test]
    fn a_workspace_dependency_is_made_whole() {
        let inherited =
            "thiserror = \"2\"\ntokio = { version = \"1.40\", default-features = false }\n";
        assert_eq!(
            inherit("thiserror = { workspace = true }", inherited).unwrap(),
            "thiserror = { version = \"2\" }"
        );
        assert_eq!(
            inherit(
                "tokio = { workspace = true, features = [\"time\"], optional = true }",
                inherited
            )
            .unwrap(),
            "tokio = { version = \"1.40\", default-features = false, features = [\"time\"], optional = true }"
        );
        assert_eq!(
            inherit("loom = \"0.7\"", inherited).unwrap(),
            "loom = \"0.7\""
        );
        assert!(inherit("serde = { workspace = true }", inherited).is_err());
    }

    #[test]
    fn markers_and_citations_go_and_the_crate_is_renamed() {
        let text = "// BEGIN SOLUTION ONLY: x\nfn a() {}\n// STARTER: fn b() {}\n// END SOLUTION ONLY\n\
                    // Contract: B1.\n/// use retry_breaker_solution::X;\n";
        assert_eq!(
            rewrite("src/other.rs", text).unwrap(),
            "fn a() {}\n/// use retry_breaker::X;\n"
        );
    }

    /// The edition of this very solution has nothing of the lab left in it,
    /// and every rewrite still finds its line.
    #[test]
    fn the_solution_makes_an_edition_with_nothing_of_the_lab() {
        let into = std::env::temp_dir().join(format!("library-edition-{}", std::process::id()));
        let written = write_edition(&root(), &into);
        let manifest = fs::read_to_string(into.join("Cargo.toml"));
        let _ = fs::remove_dir_all(&into);
        written.unwrap();
        let manifest = manifest.unwrap();
        assert!(manifest.contains("name = \"retry-breaker\""), "{manifest}");
        assert!(!manifest.contains("workspace = true"), "{manifest}");
        assert!(!manifest.contains("publish"), "{manifest}");
    }
}
