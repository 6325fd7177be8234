//! What a handout names must be there: every `just` recipe, file or folder,
//! test and crate that LAB.md, MISTAKES.md or a README names in code is
//! checked against the tree it ships in, so the student edition never sends
//! a student to a recipe, file or test that only the kit has
//! (`check-export` runs it on the export's clone, and on the kit's own
//! handouts).
//!
//! The kit's own tests hold every Markdown document of the kit to the same
//! (README.md, LAB.md, MISTAKES.md, `docs/`, each crate's README, ...:
//! every `.md` file outside `target/` and hidden folders, found by walking
//! the tree, so a new document is covered as soon as it exists), and check
//! that each relative link `[text](path)` or `[text](path#anchor)` in one
//! of them leads somewhere: the file or folder exists, and the anchor is a
//! heading of the target, as GitHub spells headings' anchors ([`anchor`]).

use std::fs;
use std::path::Path;

use crate::course::export::prose_lines;

/// Crates only the kit has: a handout of the student edition must not
/// name them.
const KIT_ONLY_CRATES: &[&str] = &["retry_breaker_solution", "retry-breaker-solution"];

/// Everything `text` (a handout of the tree at `root`) names in code that
/// the tree does not have, one line each, with the handout's line number.
/// `recipes` are the tree's `just` recipes.
///
/// A path is checked when it starts at the top of the kit (`kit`, which is
/// `root` itself when the kit's own handouts are checked): `starter/src/`,
/// `mistakes/48`; one that starts elsewhere (`held-back/`, said of
/// `grading/`) or holds a placeholder (`DIR/x`, `tests/lab/stepNN_name.rs`) is left
/// alone.
pub(crate) fn missing(
    root: &Path,
    kit: &Path,
    handout: &str,
    text: &str,
    recipes: &[String],
) -> Vec<String> {
    let mut missing = Vec::new();
    let tops: Vec<String> = fs::read_dir(kit)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .filter(|name| name != "target")
                .collect()
        })
        .unwrap_or_default();
    let is_kit = root.join("solution").is_dir();
    let suite = root.join("tests/lab");
    let from_the_top = |path: &str| {
        let first = path.split('/').next();
        tops.iter().any(|top| first == Some(top.as_str()))
    };
    for (number, span) in code(text) {
        let mut say = |what: String| missing.push(format!("{handout}:{number}: {what}"));
        for recipe in recipes_named(&span) {
            if !recipes.contains(&recipe) {
                say(format!("`just {recipe}`: no such recipe"));
            }
        }
        if !is_kit {
            for name in KIT_ONLY_CRATES.iter().filter(|name| span.contains(*name)) {
                say(format!(
                    "`{name}`: a crate the student edition does not have"
                ));
            }
        }
        let span = span.trim();
        if path_named(span).is_some_and(|path| from_the_top(path) && !exists(&root.join(path))) {
            say(format!("`{span}`: no such file or folder"));
        }
        if test_named(span).is_some_and(|(module, test)| !defines_test(&suite, module, test)) {
            say(format!("`{span}`: no such test in tests/lab"));
        }
    }
    missing
}

/// The recipes of the justfile at `root`: each line that starts a recipe
/// (`name args...:` at the start of a line; not a setting, an assignment,
/// an attribute or a comment).
pub(crate) fn recipes(root: &Path) -> Result<Vec<String>, String> {
    let justfile = fs::read_to_string(root.join("justfile"))
        .map_err(|e| format!("cannot read {}: {e}", root.join("justfile").display()))?;
    Ok(justfile
        .lines()
        .filter(|line| line.starts_with(|c: char| c.is_ascii_lowercase()))
        .filter(|line| !line.starts_with("set ") && !line.starts_with("export "))
        .filter_map(|line| {
            let (head, _) = line.split_once(':')?;
            let name = head.split_whitespace().next()?;
            let assignment = line[head.len()..].starts_with(":=");
            (!assignment).then(|| name.to_owned())
        })
        .collect())
}

/// The code of a Markdown text, with the line it is on: each line of a
/// fenced block (its fences included, which name nothing), and each inline
/// code span of the prose.
fn code(text: &str) -> Vec<(usize, String)> {
    let mut code = Vec::new();
    for (index, (line, prose)) in prose_lines(text).into_iter().enumerate() {
        let number = index + 1;
        if !prose {
            code.push((number, line.to_owned()));
            continue;
        }
        // Every second part is inside a span; a line with an odd number of
        // backquotes leaves its last part out.
        let spans: Vec<&str> = line.split('`').skip(1).collect();
        for pair in spans.chunks(2).filter(|pair| pair.len() == 2) {
            code.push((number, pair[0].to_owned()));
        }
    }
    code
}

/// The recipes a piece of code runs: the word after each `just`.
fn recipes_named(code: &str) -> Vec<String> {
    let words: Vec<&str> = code.split_whitespace().collect();
    words
        .windows(2)
        .filter(|pair| pair[0] == "just")
        .map(|pair| pair[1])
        .filter(|word| {
            word.chars().next().is_some_and(|c| c.is_ascii_lowercase())
                && word
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        })
        .map(str::to_owned)
        .collect()
}

/// A path inside the tree that a code span is, if it is one: a relative
/// path with a folder in it and nothing that makes it a pattern, a URL or
/// something a run creates (`target/`).
fn path_named(span: &str) -> Option<&str> {
    // `stepN`, `stepNN`, `DIR`: a placeholder, not a name.
    let placeholder = span.split(['/', '_', '.', '-']).any(|word| {
        let stem = word.trim_end_matches('N');
        stem.len() < word.len() && stem.ends_with(|c: char| c.is_ascii_lowercase()) || word == "DIR"
    });
    let plain = span.contains('/')
        && !placeholder
        && !span.contains("://")
        && !span.starts_with(['/', '~', '-'])
        && !span.starts_with("./")
        && !span.starts_with("../")
        && !span.starts_with("target/")
        && span
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c));
    plain.then_some(span.trim_end_matches('/'))
}

/// Whether `path` is there, or stands for the one file of its folder whose
/// name starts with it and a dash (`mistakes/48` for the gallery's
/// `mistakes/48-....mistake`).
fn exists(path: &Path) -> bool {
    if path.exists() {
        return true;
    }
    let (Some(folder), Some(name)) = (path.parent(), path.file_name()) else {
        return false;
    };
    let prefix = format!("{}-", name.to_string_lossy());
    fs::read_dir(folder).is_ok_and(|entries| {
        entries
            .filter_map(Result::ok)
            .any(|entry| entry.file_name().to_string_lossy().starts_with(&prefix))
    })
}

/// A test of the suite that a code span names (`step03_generations::b6_x`,
/// `step04_panics_and_drops::clock::b7_y`): its module path and its name.
fn test_named(span: &str) -> Option<(Vec<&str>, &str)> {
    let mut parts: Vec<&str> = span.split("::").collect();
    let first = parts.first()?;
    let suite_module = first.starts_with("step")
        && first[4..].starts_with(|c: char| c.is_ascii_digit())
        || *first == "toolkit";
    let well_formed = parts.len() >= 2
        && parts.iter().all(|part| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        });
    if !suite_module || !well_formed {
        return None;
    }
    let test = parts.pop()?;
    Some((parts, test))
}

/// Whether the suite in `suite` (tests/lab) defines `test` in `module`: in
/// the module's file (`a/b.rs`, or `a/b/mod.rs`), or in an inline module
/// of a parent's file.
fn defines_test(suite: &Path, module: Vec<&str>, test: &str) -> bool {
    let defined = format!("fn {test}(");
    (1..=module.len()).rev().any(|depth| {
        let path = module[..depth].join("/");
        [format!("{path}.rs"), format!("{path}/mod.rs")]
            .iter()
            .filter_map(|file| fs::read_to_string(suite.join(file)).ok())
            .any(|source| source.contains(&defined))
    })
}

/// The anchor GitHub gives a heading's text: lower case, each space a
/// dash, and every character but letters, digits, `-` and `_` dropped
/// (`Step 3: generations (TODO 3)` is `step-3-generations-todo-3`).
pub(crate) fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || [' ', '-', '_'].contains(c))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Every Markdown document under `root`, relative to it with `/` between
/// folders, in a stable order: the `.md` files outside `target/` and
/// hidden folders (`.git`, `.github`, ...).
#[cfg(test)]
pub(crate) fn documents(root: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, found: &mut Vec<String>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            if path.is_dir() {
                if !name.starts_with('.') && name != "target" {
                    walk(root, &path, found);
                }
            } else if name.ends_with(".md") {
                let relative = path.strip_prefix(root).unwrap_or(&path);
                found.push(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let mut found = Vec::new();
    walk(root, root, &mut found);
    found.sort();
    found
}

/// The anchors of a Markdown text's headings, as GitHub makes them: a
/// heading whose anchor an earlier one already has gets `-1`, `-2`, ...
fn anchors(text: &str) -> Vec<String> {
    let mut anchors: Vec<String> = Vec::new();
    for (line, prose) in prose_lines(text) {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if !prose || !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = anchor(line[hashes..].trim_end_matches('#'));
        let mut unique = base.clone();
        let mut n = 0;
        while anchors.contains(&unique) {
            n += 1;
            unique = format!("{base}-{n}");
        }
        anchors.push(unique);
    }
    anchors
}

/// The targets of a Markdown text's links and pictures (`[text](target)`,
/// `![alt](target)`), with the line each is on; the code (fenced blocks and
/// inline spans, which may run over several lines of a paragraph) is not
/// read. A target's title (`(path "title")`) and angle brackets are left
/// out.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut links = Vec::new();
    let mut in_span = false;
    for (index, (line, prose)) in prose_lines(text).into_iter().enumerate() {
        if !prose || line.trim().is_empty() {
            // A code span never runs past its paragraph.
            in_span = false;
            continue;
        }
        let mut outside = String::new();
        for (part_index, part) in line.split('`').enumerate() {
            if part_index > 0 {
                in_span = !in_span;
            }
            // Whatever is inside a span becomes a space, so that no link
            // is made of the text on both sides of one.
            outside.push_str(if in_span { " " } else { part });
        }
        let mut rest = outside.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let Some(close) = rest.find(')') else { break };
            let target = rest[..close]
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .trim_start_matches('<')
                .trim_end_matches('>');
            if !target.is_empty() {
                links.push((index + 1, target.to_owned()));
            }
            rest = &rest[close..];
        }
    }
    links
}

/// Every relative link of the document `document` (its path from `root`,
/// and its text) that leads nowhere, one line each with the document's
/// line number: a file or folder that is not there, a path out of the
/// tree, or an anchor that no heading of the target Markdown file has. A
/// link is read from the document's own folder, but one in `student/`
/// from the top: the export puts those files at the top of the student
/// edition. Links with a scheme (`https://`, `mailto:`) are not checked.
pub(crate) fn broken_links(root: &Path, document: &str, text: &str) -> Vec<String> {
    let folder = match document.rsplit_once('/') {
        Some((folder, _)) if folder != "student" && !folder.starts_with("student/") => folder,
        _ => "",
    };
    let mut broken = Vec::new();
    for (number, target) in links(text) {
        let mut say = |why: String| broken.push(format!("{document}:{number}: ({target}): {why}"));
        let scheme = target
            .split_once(':')
            .is_some_and(|(scheme, _)| !scheme.is_empty() && !scheme.contains(['/', '#', '.']));
        if scheme {
            continue;
        }
        let (path, fragment) = match target.split_once('#') {
            Some((path, fragment)) => (path, Some(fragment)),
            None => (target.as_str(), None),
        };
        let resolved = if path.is_empty() {
            Some(document.to_owned())
        } else {
            let mut parts: Vec<&str> = folder.split('/').filter(|part| !part.is_empty()).collect();
            let mut inside = !path.starts_with('/');
            for part in path.split('/') {
                match part {
                    "" | "." => {}
                    ".." => inside &= parts.pop().is_some(),
                    part => parts.push(part),
                }
            }
            inside.then(|| parts.join("/"))
        };
        let Some(resolved) = resolved else {
            say("a path out of the repository".to_owned());
            continue;
        };
        if !path.is_empty() && !root.join(&resolved).exists() {
            say(format!("no such file or folder ({resolved})"));
            continue;
        }
        let Some(fragment) = fragment.filter(|_| resolved.ends_with(".md")) else {
            continue;
        };
        let target_text = if path.is_empty() {
            text.to_owned()
        } else {
            match fs::read_to_string(root.join(&resolved)) {
                Ok(target_text) => target_text,
                Err(e) => {
                    say(format!("cannot read {resolved}: {e}"));
                    continue;
                }
            }
        };
        if !anchors(&target_text)
            .iter()
            .any(|anchor| anchor == fragment)
        {
            say(format!(
                "no heading of {resolved} has the anchor #{fragment}"
            ));
        }
    }
    broken
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempdir::Tree {
        let tree = tempdir::Tree::new("named");
        tree.write("tests/lab/step03_generations.rs", "#[test]\nfn b6_x() {}\n");
        tree.write("tests/lab/step4_panics/clock.rs", "#[test]\nfn b7_y() {}\n");
        tree.write("starter/src/circuit.rs", "");
        tree.write("mistakes/48-uncloneable.mistake", "");
        tree
    }

    const RECIPES: &[&str] = &["test", "hint"];

    fn missing_in(tree: &tempdir::Tree, text: &str) -> Vec<String> {
        let recipes: Vec<String> = RECIPES.iter().map(|r| (*r).to_owned()).collect();
        // The kit has a solution; the tree checked, like the export, has not.
        let kit = tempdir::Tree::new("named-kit");
        for path in [
            "solution/src/lib.rs",
            "starter/src/lib.rs",
            "tests/lab/main.rs",
        ] {
            kit.write(path, "");
        }
        kit.write("mistakes/01-x.mistake", "");
        missing(&tree.root, &kit.root, "LAB.md", text, &recipes)
    }

    #[test]
    fn what_the_tree_has_is_not_missing() {
        let tree = tree();
        let text = "Run `just test 3` or `just hint 1`; read `starter/src/circuit.rs`,\n\
                    `starter/src/`, `mistakes/48`, `step03_generations::b6_x` and\n\
                    `step4_panics::clock::b7_y`; `target/grade/results.json` is written.\n\
                    ```console\n$ just test\n```\n";
        assert_eq!(missing_in(&tree, text), Vec::<String>::new());
    }

    #[test]
    fn a_recipe_a_path_a_test_or_a_kit_crate_the_tree_lacks_is_named_with_its_line() {
        let tree = tree();
        let text = "Run `just loom`.\n\
                    Read `solution/src/shortcut.rs` and `step03_generations::b6_gone`.\n\
                    ```console\n$ just check-mistakes\n```\n\
                    See `retry_breaker_solution::RetryBreaker`.\n";
        assert_eq!(
            missing_in(&tree, text),
            [
                "LAB.md:1: `just loom`: no such recipe",
                "LAB.md:2: `solution/src/shortcut.rs`: no such file or folder",
                "LAB.md:2: `step03_generations::b6_gone`: no such test in tests/lab",
                "LAB.md:4: `just check-mistakes`: no such recipe",
                "LAB.md:6: `retry_breaker_solution`: a crate the student edition does not have",
            ]
        );
    }

    #[test]
    fn the_recipes_are_read_from_the_justfile() {
        let tree = tree();
        tree.write(
            "justfile",
            "set shell := [\"bash\"]\nflags := \"x\"\n# test: a comment\n[no-exit-message]\n\
             test step=\"\":\n    cargo test\nhint step *reset:\n    true\n",
        );
        assert_eq!(
            recipes(&tree.root),
            Ok(vec!["test".to_owned(), "hint".to_owned()])
        );
    }

    /// Every Markdown document of the kit, wherever it is: the handouts,
    /// the READMEs, `docs/`, and the hints in the manifest. Each names only what the kit has, and each
    /// of its relative links leads to a file that is there and, with an
    /// anchor, to one of its headings.
    #[test]
    fn the_kits_handouts_name_only_what_the_kit_has() {
        let root = crate::root();
        let recipes = recipes(&root).expect("the kit's justfile");
        let documents = documents(&root);
        for expected in [
            "README.md",
            "LAB.md",
            "ADVANCED.md",
            "MISTAKES.md",
            "student/README.md",
        ] {
            assert!(
                documents.iter().any(|document| document == expected),
                "{expected} is not among the documents found: {documents:?}"
            );
        }
        // Every document's lines at once, so that one document's slip does
        // not hide another's.
        let mut found = Vec::new();
        for document in &documents {
            let text = fs::read_to_string(root.join(document)).expect("the kit's documents");
            found.extend(missing(&root, &root, document, &text, &recipes));
            found.extend(broken_links(&root, document, &text));
        }
        // The hints, which `just hint` shows, live in the manifest.
        let manifest = fs::read_to_string(root.join("steps.toml")).expect("the manifest");
        found.extend(missing(&root, &root, "steps.toml", &manifest, &recipes));
        assert_eq!(found, Vec::<String>::new());
    }

    #[test]
    fn the_anchor_of_a_heading_is_githubs() {
        assert_eq!(
            anchor("Step 3: generations fence off stale outcomes (TODO 3)"),
            "step-3-generations-fence-off-stale-outcomes-todo-3"
        );
        assert_eq!(
            anchor("A growing cooldown (G1-G4) and a probe timeout (P1-P3)"),
            "a-growing-cooldown-g1-g4-and-a-probe-timeout-p1-p3"
        );
        assert_eq!(
            anchor("`just mutants_diff`, **at once**"),
            "just-mutants_diff-at-once"
        );
        assert_eq!(
            anchors("# A\n## A\n```\n# not a heading\n```\n### A b\n"),
            ["a", "a-1", "a-b"]
        );
    }

    #[test]
    fn the_documents_are_found_by_walking_the_tree() {
        let tree = tempdir::Tree::new("named-documents");
        for path in [
            "README.md",
            "docs/GUIDE.md",
            "demo/README.md",
            "target/doc/README.md",
            ".github/NOTES.md",
            "src/lib.rs",
        ] {
            tree.write(path, "");
        }
        assert_eq!(
            documents(&tree.root),
            ["README.md", "demo/README.md", "docs/GUIDE.md"]
        );
    }

    fn links_tree() -> tempdir::Tree {
        let tree = tempdir::Tree::new("named-links");
        tree.write(
            "LAB.md",
            "# The lab\n\n## Step 3: generations (TODO 3)\n\nText.\n",
        );
        tree.write("docs/pictures/a.svg", "");
        tree.write(
            "docs/GUIDE.md",
            "# Guide\n\n## A retry budget (Q1-Q5)\n\nSee [below](#a-retry-budget-q1-q5).\n",
        );
        tree
    }

    #[test]
    fn links_that_lead_somewhere_pass() {
        let tree = links_tree();
        let text = "Read [the lab](../LAB.md), [step 3](../LAB.md#step-3-generations-todo-3),\n\
                    [the budget](#a-retry-budget-q1-q5) and ![a picture](pictures/a.svg);\n\
                    [the docs](../docs/), [a site](https://example.com/x#y) and\n\
                    [mail](mailto:someone@example.com) are fine, and `[code](nowhere.md)` is code.\n\
                    ```text\n[in a block](nowhere.md)\n```\n\n\
                    ## A retry budget (Q1-Q5)\n";
        assert_eq!(
            broken_links(&tree.root, "docs/OTHER.md", text),
            Vec::<String>::new()
        );
        // A student README lands at the top of the student edition.
        assert_eq!(
            broken_links(&tree.root, "student/README.md", "See [LAB.md](LAB.md).\n"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_broken_link_or_anchor_is_named_with_its_line() {
        let tree = links_tree();
        let text = "Read [the lab](LAB.md).\n\
                    Then [step 3](../LAB.md#step-3-generations) and [gone](#nowhere).\n\
                    [Out](../../x.md) and ![missing](pictures/b.svg).\n";
        assert_eq!(
            broken_links(&tree.root, "docs/GUIDE.md", text),
            [
                "docs/GUIDE.md:1: (LAB.md): no such file or folder (docs/LAB.md)",
                "docs/GUIDE.md:2: (../LAB.md#step-3-generations): no heading of LAB.md has the anchor #step-3-generations",
                "docs/GUIDE.md:2: (#nowhere): no heading of docs/GUIDE.md has the anchor #nowhere",
                "docs/GUIDE.md:3: (../../x.md): a path out of the repository",
                "docs/GUIDE.md:3: (pictures/b.svg): no such file or folder (docs/pictures/b.svg)",
            ]
        );
    }

    #[test]
    fn prose_and_things_that_are_no_path_are_not_checked() {
        let tree = tree();
        let text = "just loom is prose; `http://x/y`, `a b/c`, `../lab-2026`, `/autograder/x`,\n\
                    `held-back/`, `DIR/autograder.zip`, `tests/lab/stepN_name.rs`, `hints/stepNN.md`,\n\
                    `Fn(&Result<T, E>) -> Verdict` and `just --list` are not names.\n";
        assert_eq!(missing_in(&tree, text), Vec::<String>::new());
    }

    /// A scratch tree under the system's temporary folder, removed on drop.
    mod tempdir {
        use std::fs;
        use std::path::PathBuf;

        pub struct Tree {
            pub root: PathBuf,
        }

        impl Tree {
            pub fn new(name: &str) -> Tree {
                let root = std::env::temp_dir().join(format!(
                    "xtask-{name}-{}-{:?}",
                    std::process::id(),
                    std::thread::current().id()
                ));
                let _ = fs::remove_dir_all(&root);
                fs::create_dir_all(&root).unwrap();
                Tree { root }
            }

            pub fn write(&self, path: &str, text: &str) {
                let path = self.root.join(path);
                fs::create_dir_all(path.parent().unwrap()).unwrap();
                fs::write(path, text).unwrap();
            }
        }

        impl Drop for Tree {
            fn drop(&mut self) {
                let _ = fs::remove_dir_all(&self.root);
            }
        }
    }
}
