//! A typical mistake of the gallery (`mistakes/*.mistake`): the code a
//! student might write in place of one region's answer.
//!
//! A mistake is anchored to the region it changes, never to the text
//! around it: it names a TODO region by its marker (`TODO(3): has the
//! circuit changed state`, a prefix of the `// BEGIN TODO(3): ...` line)
//! or a named anchor of provided code (`ANCHOR(owned-permit-drop)`, a `//
//! BEGIN ANCHOR(owned-permit-drop)` ... `// END ANCHOR` block), and gives
//! the whole code it puts there instead of the reference's. An edit
//! outside the region, or to the reference answer inside it, leaves the
//! mistake as it was; only renaming the region's marker breaks it, loudly.
//! Regions are found by name across the whole crate, so moving a file
//! does not break a mistake either.
//!
//! ```text
//! # What the student was thinking, in a sentence or two.
//! #
//! # Rule: B6
//!
//! === TODO(3): has the circuit changed state since this generation?
//!         false
//! ```
//!
//! The header's `# Rule:` line names the rules the mistake breaks, its
//! `# Mistake:` line says it in a few words (its row in MISTAKES.md), and
//! its `# Caught by:` line names the test that catches it (`stepNN_x::test`,
//! or a module, `stepNN_x`, for "its tests"; for a mistake the compiler
//! refuses, the test that cannot build): `just check-mistakes` proves that
//! test fails, and `just sync-starter` writes the row. A
//! mistake in provided code adds `# Step: N` (or `# Step: toolkit`), the
//! step whose tests cover that code; a mistake the compiler refuses adds
//! `# Compiler error: TEXT`, a part of the first error it must give (any
//! other error means its code has drifted from the code around it). Each `=== REGION` line starts the
//! code for one region, copied in verbatim (indentation included) up to
//! the next `===` line; trailing blank lines are dropped. A TODO region's
//! `// STARTER:` lines stay: the mistake replaces the reference code only.

use std::fs;
use std::path::{Path, PathBuf};

use crate::rules::Rule;

/// The file extension of a mistake.
pub(crate) const EXTENSION: &str = "mistake";

const REGION: &str = "=== ";
const BEGIN_TODO: &str = "// BEGIN TODO(";
const END_TODO: &str = "// END TODO";
const STANDIN: &str = "// STARTER:";
/// A named anchor of provided code, for a mistake outside every TODO.
pub(crate) const BEGIN_ANCHOR: &str = "// BEGIN ANCHOR(";
pub(crate) const END_ANCHOR: &str = "// END ANCHOR";
const BEGIN_SOLUTION: &str = "// BEGIN SOLUTION ONLY";
const END_SOLUTION: &str = "// END SOLUTION ONLY";
const SOLUTION_FILE: &str = "// SOLUTION ONLY FILE";

/// One mistake, as its file states it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mistake {
    /// The file's name without its extension: `05-no-generation-check`.
    pub name: String,
    /// The rules it breaks (`# Rule: B5, B7`).
    pub rules: Vec<Rule>,
    /// `# Step: N` or `# Step: toolkit`, for a mistake in provided code.
    pub step: Option<Declared>,
    /// `# Compiler error: TEXT`: the crate must not build, and its first
    /// error must contain TEXT.
    pub compiler_error: Option<String>,
    /// `# Mistake: TEXT`: the mistake in a few words, as MISTAKES.md lists it.
    pub title: String,
    /// `# Caught by: TEST`: the test (or the module of tests) that catches
    /// it, or, for a mistake the compiler refuses, the test it cannot build.
    pub caught_by: String,
    /// What it puts in place of each region's answer.
    pub changes: Vec<Change>,
}

/// The step a mistake in provided code declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Declared {
    Step(u32),
    Toolkit,
}

/// The code one region gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Change {
    pub region: Region,
    /// The lines that replace the region's reference code, verbatim.
    pub code: Vec<String>,
}

/// A place in the solution a mistake can change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Region {
    /// A student's TODO region: its step and a prefix of its summary.
    Todo { step: u32, summary: String },
    /// Provided code between `// BEGIN ANCHOR(name)` and `// END ANCHOR`.
    Anchor(String),
}

impl Region {
    fn parse(text: &str) -> Option<Region> {
        let text = text.trim();
        if let Some(rest) = text.strip_prefix("TODO(") {
            let (step, summary) = rest.split_once(')')?;
            let summary = summary.strip_prefix(':').unwrap_or(summary).trim();
            return Some(Region::Todo {
                step: step.trim().parse().ok()?,
                summary: summary.to_owned(),
            });
        }
        let name = text.strip_prefix("ANCHOR(")?.strip_suffix(')')?;
        (!name.is_empty()).then(|| Region::Anchor(name.to_owned()))
    }

    /// Whether `line` (trimmed) is the opening marker of this region.
    fn opens_at(&self, line: &str) -> bool {
        match self {
            Region::Todo { step, summary } => line
                .strip_prefix(BEGIN_TODO)
                .and_then(|rest| rest.split_once("):"))
                .is_some_and(|(number, said)| {
                    number.trim().parse() == Ok(*step) && said.trim().starts_with(summary.as_str())
                }),
            Region::Anchor(name) => line
                .strip_prefix(BEGIN_ANCHOR)
                .and_then(|rest| rest.split(')').next())
                .is_some_and(|found| found == name),
        }
    }
}

impl std::fmt::Display for Region {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Region::Todo { step, summary } => write!(f, "TODO({step}): {summary}"),
            Region::Anchor(name) => write!(f, "ANCHOR({name})"),
        }
    }
}

impl Mistake {
    /// Reads a mistake from its text; `name` is its file's stem.
    pub(crate) fn parse(name: &str, text: &str) -> Result<Mistake, String> {
        let header: Vec<&str> = text
            .lines()
            .take_while(|line| line.starts_with('#'))
            .map(|line| line.trim_start_matches('#').trim())
            .collect();
        let declared = header
            .iter()
            .find_map(|line| line.strip_prefix("Rule:"))
            .ok_or("no `# Rule: <ID>[, <ID>...]` header line says which rule it breaks")?;
        let rules = declared
            .split(',')
            .map(|id| {
                Rule::parse(id.trim())
                    .ok_or_else(|| format!("`# Rule:{declared}`: `{}` is no rule id", id.trim()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let step = match header.iter().find_map(|line| line.strip_prefix("Step:")) {
            None => None,
            Some(step) => Some(match step.trim() {
                "toolkit" => Declared::Toolkit,
                number => Declared::Step(number.parse().map_err(|_| {
                    format!("`# Step: {number}` is not a step number or `toolkit`")
                })?),
            }),
        };
        let compiler_error = header
            .iter()
            .find_map(|line| line.strip_prefix("Compiler error:"))
            .map(|text| text.trim().to_owned());
        let field = |name: &str| {
            header
                .iter()
                .find_map(|line| line.strip_prefix(name))
                .map(|text| text.trim().to_owned())
                .filter(|text| !text.is_empty())
        };
        let title = field("Mistake:")
            .ok_or("no `# Mistake: <a few words>` header line says what the mistake is")?;
        let caught_by = field("Caught by:").ok_or(
            "no `# Caught by: <stepNN_module::test>` header line names the test that catches it",
        )?;
        if !caught_by.starts_with("step") || caught_by.contains(char::is_whitespace) {
            return Err(format!(
                "`# Caught by: {caught_by}`: name a test of the suite, `stepNN_module::test_name`, or a module, `stepNN_module`"
            ));
        }
        let mut changes: Vec<Change> = Vec::new();
        for (number, line) in text.lines().enumerate() {
            if let Some(region) = line.strip_prefix(REGION) {
                let region = Region::parse(region).ok_or_else(|| {
                    format!(
                        "line {}: `{line}` names no region: `=== TODO(n): summary` or \
                         `=== ANCHOR(name)`",
                        number + 1
                    )
                })?;
                changes.push(Change {
                    region,
                    code: Vec::new(),
                });
            } else if let Some(change) = changes.last_mut() {
                change.code.push(line.to_owned());
            } else if !line.starts_with('#') && !line.trim().is_empty() {
                return Err(format!(
                    "line {}: code before the first `=== REGION` line",
                    number + 1
                ));
            }
        }
        for change in &mut changes {
            while change
                .code
                .last()
                .is_some_and(|line| line.trim().is_empty())
            {
                change.code.pop();
            }
        }
        if changes.is_empty() {
            return Err("no `=== REGION` line says where the mistake goes".to_owned());
        }
        Ok(Mistake {
            name: name.to_owned(),
            rules,
            step,
            compiler_error,
            title,
            caught_by,
            changes,
        })
    }

    /// The step the mistake belongs to, read without applying it: its
    /// `# Step: N` header, or the step of its first TODO region; none for
    /// a mistake of the toolkit.
    pub(crate) fn declared_step(&self) -> Option<u32> {
        match self.step {
            Some(Declared::Step(step)) => Some(step),
            Some(Declared::Toolkit) => None,
            None => self.changes.iter().find_map(|change| match change.region {
                Region::Todo { step, .. } => Some(step),
                Region::Anchor(_) => None,
            }),
        }
    }

    /// Reads the mistake file at `path`.
    pub(crate) fn read(path: &Path) -> Result<Mistake, String> {
        let name = path
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let text = fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
        Mistake::parse(&name, &text).map_err(|why| format!("{name}: {why}"))
    }
}

/// Where one change landed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Landed {
    /// The file, relative to the crate's `src`.
    pub file: String,
    /// The step of the TODO region, or `None` for an anchor.
    pub todo: Option<u32>,
    /// Whether the region is the solution's own (a SOLUTION ONLY block or
    /// file), which a student's crate does not have.
    pub solution_only: bool,
}

/// The gallery: every mistake file in `mistakes/`, in the order of their
/// numbers (`2-...` before `10-...`), or those whose name contains `only`.
pub(crate) fn gallery(root: &Path, only: Option<&str>) -> Result<Vec<PathBuf>, String> {
    let mut paths: Vec<PathBuf> = fs::read_dir(root.join("mistakes"))
        .map_err(|e| format!("cannot read mistakes/: {e}"))?
        .filter_map(|entry| Some(entry.ok()?.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == EXTENSION))
        .filter(|path| {
            only.is_none_or(|only| path.file_name().unwrap().to_string_lossy().contains(only))
        })
        .collect();
    paths.sort_by_key(|path| {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let number: u32 = name
            .split('-')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(u32::MAX);
        (number, name)
    });
    Ok(paths)
}

/// Puts `mistake` into the crate whose sources are in `src` (a scratch
/// copy of `solution/src`), and says where each change landed. Fails,
/// naming the region, when a region is missing or named more than once.
pub(crate) fn apply(mistake: &Mistake, src: &Path) -> Result<Vec<Landed>, String> {
    let files = crate::scratch::rs_files(src)?;
    let mut texts: Vec<String> = files
        .iter()
        .map(|file| fs::read_to_string(src.join(file)).map_err(|e| format!("{file}: {e}")))
        .collect::<Result<_, _>>()?;
    let mut landed = Vec::new();
    let mut touched = vec![false; files.len()];
    for change in &mistake.changes {
        let mut found = Vec::new();
        for (index, text) in texts.iter().enumerate() {
            for (line, content) in text.lines().enumerate() {
                if change.region.opens_at(content.trim_start()) {
                    found.push((index, line));
                }
            }
        }
        let (index, line) = match found.as_slice() {
            [one] => *one,
            [] => {
                return Err(format!(
                    "no region `{}` in the solution: was its marker renamed?",
                    change.region
                ));
            }
            many => {
                let places: Vec<String> = many
                    .iter()
                    .map(|(index, line)| format!("{}:{}", files[*index], line + 1))
                    .collect();
                return Err(format!(
                    "`{}` names more than one region ({}): say more of its summary",
                    change.region,
                    places.join(", ")
                ));
            }
        };
        let (text, solution_only) = replace(&texts[index], line, change)
            .map_err(|why| format!("{}:{}: {why}", files[index], line + 1))?;
        texts[index] = text;
        touched[index] = true;
        landed.push(Landed {
            file: files[index].clone(),
            todo: match change.region {
                Region::Todo { step, .. } => Some(step),
                Region::Anchor(_) => None,
            },
            solution_only,
        });
    }
    for (index, file) in files.iter().enumerate() {
        if touched[index] {
            crate::scratch::write_file(src, file, &texts[index])?;
        }
    }
    Ok(landed)
}

/// `text` with the region opening at (0-based) `line` given `change`'s
/// code in place of its reference code, and whether the region is the
/// solution's own.
fn replace(text: &str, line: usize, change: &Change) -> Result<(String, bool), String> {
    let lines: Vec<&str> = text.lines().collect();
    let is_todo = matches!(change.region, Region::Todo { .. });
    let close = if is_todo { END_TODO } else { END_ANCHOR };
    let end = (line + 1..lines.len())
        .find(|&at| lines[at].trim_start().starts_with(close))
        .ok_or("the region is never closed")?;
    // A TODO's `// STARTER:` lines come last and stay: they are the
    // starter's stand-in, not the student's answer.
    let code_end = if is_todo {
        (line + 1..end)
            .find(|&at| lines[at].trim_start().starts_with(STANDIN))
            .unwrap_or(end)
    } else {
        end
    };
    let solution_only = text.lines().any(|l| l.starts_with(SOLUTION_FILE))
        || lines[..line].iter().fold(false, |inside, l| {
            let l = l.trim_start();
            if l.starts_with(BEGIN_SOLUTION) {
                true
            } else if l.starts_with(END_SOLUTION) {
                false
            } else {
                inside
            }
        });
    let mut out: Vec<&str> = Vec::with_capacity(lines.len());
    out.extend(&lines[..=line]);
    out.extend(change.code.iter().map(String::as_str));
    out.extend(&lines[code_end..]);
    let mut text = out.join("\n");
    text.push('\n');
    Ok((text, solution_only))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = "\
fn f() {
    // BEGIN TODO(3): has it changed? (B6)
    generation != self.generation
    // STARTER: false
    // END TODO
}

fn g() {
    // BEGIN ANCHOR(g-body)
    one();
    two();
    // END ANCHOR
}
";

    fn scratch(name: &str, files: &[(&str, &str)]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("xtask-mistake-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        for (file, text) in files {
            let path = dir.join(file);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
        dir
    }

    #[test]
    fn a_mistake_names_its_rules_step_and_regions() {
        let mistake = Mistake::parse(
            "09-x",
            "# thought\n#\n# Rule: B5, e7\n# Mistake: m\n# Caught by: step01_x\n# Step: 4\n\n=== TODO(3): has it\n    false\n\n\n=== ANCHOR(g-body)\n    one();\n",
        )
        .unwrap();
        assert_eq!(mistake.rules.len(), 2);
        assert_eq!(mistake.step, Some(Declared::Step(4)));
        assert_eq!(mistake.compiler_error, None);
        assert_eq!(mistake.title, "m");
        assert_eq!(mistake.caught_by, "step01_x");
        let refused = Mistake::parse(
            "x",
            "# Compiler error: cannot be sent\n# Rule: B8\n# Mistake: m\n# Caught by: step01_x\n=== TODO(6): x\n",
        )
        .unwrap();
        assert_eq!(refused.compiler_error.as_deref(), Some("cannot be sent"));
        assert_eq!(
            mistake.changes,
            [
                Change {
                    region: Region::Todo {
                        step: 3,
                        summary: "has it".into()
                    },
                    code: vec!["    false".into()],
                },
                Change {
                    region: Region::Anchor("g-body".into()),
                    code: vec!["    one();".into()],
                },
            ]
        );
        assert!(
            Mistake::parse("x", "# Rule: B5\n# Mistake: m\n# Caught by: step01_x\n")
                .unwrap_err()
                .contains("=== REGION")
        );
        assert!(
            Mistake::parse("x", "# thought\n=== TODO(3): y\n")
                .unwrap_err()
                .contains("# Rule:")
        );
        assert!(
            Mistake::parse("x", "# Rule: B1\n=== TODO(1): y\n")
                .unwrap_err()
                .contains("# Mistake:")
        );
        assert!(
            Mistake::parse("x", "# Rule: B1\n# Mistake: m\n=== TODO(1): y\n")
                .unwrap_err()
                .contains("# Caught by:")
        );
        assert!(
            Mistake::parse(
                "x",
                "# Rule: B1\n# Mistake: m\n# Caught by: the tests\n=== TODO(1): y\n"
            )
            .unwrap_err()
            .contains("name a test of the suite")
        );
        assert!(
            Mistake::parse("x", "# Rule: X2\n# Mistake: m\n# Caught by: step01_x\n")
                .unwrap_err()
                .contains("`X2` is no rule id")
        );
        assert!(
            Mistake::parse(
                "x",
                "# Rule: B1\n# Mistake: m\n# Caught by: step01_x\n=== TODO(x): y\n"
            )
            .unwrap_err()
            .contains("names no region")
        );
        assert!(
            Mistake::parse(
                "x",
                "# Rule: B1\n# Mistake: m\n# Caught by: step01_x\nfalse\n=== TODO(1): y\n"
            )
            .unwrap_err()
            .contains("code before")
        );
    }

    #[test]
    fn a_mistake_replaces_the_reference_code_and_keeps_the_markers_and_stand_in() {
        let dir = scratch("replace", &[("a/x.rs", SOURCE)]);
        let mistake = Mistake::parse(
            "1-x",
            "# Rule: B6\n# Mistake: m\n# Caught by: step01_x\n=== TODO(3): has it\n    true\n    || false\n=== ANCHOR(g-body)\n    two();\n",
        )
        .unwrap();
        let landed = apply(&mistake, &dir).unwrap();
        assert_eq!(landed[0].file, "a/x.rs");
        assert_eq!(landed[0].todo, Some(3));
        assert_eq!(landed[1].todo, None);
        let text = fs::read_to_string(dir.join("a/x.rs")).unwrap();
        assert_eq!(
            text,
            SOURCE
                .replace(
                    "    generation != self.generation\n",
                    "    true\n    || false\n"
                )
                .replace("    one();\n    two();\n", "    two();\n")
        );
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_missing_or_ambiguous_region_is_an_error_naming_it() {
        let dir = scratch("missing", &[("x.rs", SOURCE), ("y.rs", SOURCE)]);
        let ambiguous = Mistake::parse(
            "1-x",
            "# Rule: B6\n# Mistake: m\n# Caught by: step01_x\n=== TODO(3): has\n  x\n",
        )
        .unwrap();
        let why = apply(&ambiguous, &dir).unwrap_err();
        assert!(why.contains("x.rs:2") && why.contains("y.rs:2"), "{why}");
        let missing = Mistake::parse(
            "1-x",
            "# Rule: B6\n# Mistake: m\n# Caught by: step01_x\n=== TODO(4): has\n  x\n",
        )
        .unwrap();
        assert!(apply(&missing, &dir).unwrap_err().contains("TODO(4): has"));
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_region_in_the_solutions_own_code_says_so() {
        let only = "// BEGIN SOLUTION ONLY: fast\n// BEGIN ANCHOR(fast)\nx();\n// END ANCHOR\n// END SOLUTION ONLY\n// BEGIN ANCHOR(slow)\ny();\n// END ANCHOR\n";
        let dir = scratch("only", &[("x.rs", only)]);
        let mistake = Mistake::parse(
            "1-x",
            "# Rule: B6\n# Mistake: m\n# Caught by: step01_x\n=== ANCHOR(fast)\nz();\n=== ANCHOR(slow)\nz();\n",
        )
        .unwrap();
        let landed = apply(&mistake, &dir).unwrap();
        assert!(landed[0].solution_only);
        assert!(!landed[1].solution_only);
        fs::remove_dir_all(dir).unwrap();
    }
}
