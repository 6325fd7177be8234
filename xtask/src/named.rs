//! What a handout names must be there: every `just` recipe, file or folder,
//! test and crate that LAB.md, MISTAKES.md or a README names in code is
//! checked against the tree it ships in, so the student edition never sends
//! a student to a recipe, file or test that only the kit has
//! (`check-export` runs it on the export's clone, and on the kit's own
//! handouts).

use std::fs;
use std::path::Path;

use crate::export::prose_lines;

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
/// `grading/`) or holds a placeholder (`DIR/x`, `hints/stepN.md`) is left
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
    // `stepN`, `DIR`: a placeholder, not a name.
    let placeholder = span.split(['/', '_', '.', '-']).any(|word| {
        word.ends_with('N')
            && word.len() > 1
            && word[..word.len() - 1].ends_with(|c: char| c.is_ascii_lowercase())
            || word == "DIR"
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
/// `mistakes/48-....patch`).
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

/// A test of the suite that a code span names (`step3_generations::b6_x`,
/// `step4_panics_and_drops::clock::b7_y`): its module path and its name.
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

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempdir::Tree {
        let tree = tempdir::Tree::new("named");
        tree.write("tests/lab/step3_generations.rs", "#[test]\nfn b6_x() {}\n");
        tree.write("tests/lab/step4_panics/clock.rs", "#[test]\nfn b7_y() {}\n");
        tree.write("starter/src/circuit.rs", "");
        tree.write("mistakes/48-uncloneable.patch", "");
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
        kit.write("mistakes/01-x.patch", "");
        missing(&tree.root, &kit.root, "LAB.md", text, &recipes)
    }

    #[test]
    fn what_the_tree_has_is_not_missing() {
        let tree = tree();
        let text = "Run `just test 3` or `just hint 1`; read `starter/src/circuit.rs`,\n\
                    `starter/src/`, `mistakes/48`, `step3_generations::b6_x` and\n\
                    `step4_panics::clock::b7_y`; `target/grade/results.json` is written.\n\
                    ```console\n$ just test\n```\n";
        assert_eq!(missing_in(&tree, text), Vec::<String>::new());
    }

    #[test]
    fn a_recipe_a_path_a_test_or_a_kit_crate_the_tree_lacks_is_named_with_its_line() {
        let tree = tree();
        let text = "Run `just loom`.\n\
                    Read `solution/src/shortcut.rs` and `step3_generations::b6_gone`.\n\
                    ```console\n$ just check-mistakes\n```\n\
                    See `retry_breaker_solution::RetryBreaker`.\n";
        assert_eq!(
            missing_in(&tree, text),
            [
                "LAB.md:1: `just loom`: no such recipe",
                "LAB.md:2: `solution/src/shortcut.rs`: no such file or folder",
                "LAB.md:2: `step3_generations::b6_gone`: no such test in tests/lab",
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

    #[test]
    fn the_kits_handouts_name_only_what_the_kit_has() {
        let root = crate::root();
        let recipes = recipes(&root).expect("the kit's justfile");
        // Every handout's lines at once, so that one handout's slip does
        // not hide another's.
        let mut found = Vec::new();
        for handout in ["LAB.md", "MISTAKES.md", "README.md", "student/README.md"] {
            let text = fs::read_to_string(root.join(handout)).expect("the kit's handouts");
            found.extend(missing(&root, &root, handout, &text, &recipes));
        }
        assert_eq!(found, Vec::<String>::new());
    }

    #[test]
    fn prose_and_things_that_are_no_path_are_not_checked() {
        let tree = tree();
        let text = "just loom is prose; `http://x/y`, `a b/c`, `../lab-2026`, `/autograder/x`,\n\
                    `held-back/`, `DIR/autograder.zip`, `tests/lab/stepN_name.rs`,\n\
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
