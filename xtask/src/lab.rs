//! What the lab is made of: its steps, read from the suite's module files,
//! the tests documented as controls, and the rules each step states.

use std::collections::BTreeMap;
use std::fs;

use crate::root;
use crate::rules::Rule;

/// What `just test` knows of the lab, besides a run's results, to say where
/// to start.
#[derive(Debug, Clone, Default)]
pub(crate) struct Syllabus {
    /// The tests documented as controls, with why ([`controls`]).
    pub controls: BTreeMap<String, String>,
    /// The rules each step teaches, in the order its section states them
    /// (`steps.toml`'s `rules`).
    pub stated: BTreeMap<u32, Vec<Rule>>,
    /// The tests documented as races ([`races`]): a start is never one.
    pub races: BTreeMap<String, String>,
    /// What each advanced step needs done first (`steps.toml`).
    pub needs: BTreeMap<u32, Vec<u32>>,
}

/// The syllabus of this lab: its controls and races, and from the steps
/// manifest what each step needs and the rules it teaches (none, if the
/// manifest cannot be read).
pub(crate) fn syllabus() -> Result<Syllabus, String> {
    let steps = crate::manifest::read(&root()).unwrap_or_default();
    Ok(Syllabus {
        controls: controls()?,
        races: races()?,
        needs: steps
            .iter()
            .map(|(&number, step)| (number, step.needs.clone()))
            .collect(),
        stated: steps
            .iter()
            .map(|(&number, step)| {
                let rules = step.rules.iter().filter_map(|id| Rule::parse(id)).collect();
                (number, rules)
            })
            .collect(),
    })
}

/// The rules each step's section of a handout (`## Step 3: ...`) states:
/// the rule ids its list opens in bold, `- **B6** ...`, in the order it
/// does. Only a check reads them: `steps.toml` lists the same.
#[cfg(test)]
pub(crate) fn stated_rules(lab: &str) -> BTreeMap<u32, Vec<Rule>> {
    let mut stated: BTreeMap<u32, Vec<Rule>> = BTreeMap::new();
    let mut step = None;
    for line in lab.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            step = heading
                .strip_prefix("Step ")
                .and_then(|rest| rest.split(':').next())
                .and_then(|number| number.parse().ok());
        } else if let (Some(step), Some(rest)) = (step, line.strip_prefix("- **")) {
            if let Some(rule) = rest.split("**").next().and_then(Rule::parse) {
                let rules = stated.entry(step).or_default();
                if !rules.contains(&rule) {
                    rules.push(rule);
                }
            }
        }
    }
    stated
}

/// The steps MISTAKES.md has a section for, with each section's heading
/// (`Step 3: ...`, as LAB.md names the step); none if it cannot be read.
pub(crate) fn mistake_sections() -> BTreeMap<u32, String> {
    fs::read_to_string(root().join("MISTAKES.md"))
        .map(|text| step_sections(&text))
        .unwrap_or_default()
}

/// The `## Step N: ...` headings of a handout, by step number.
pub(crate) fn step_sections(text: &str) -> BTreeMap<u32, String> {
    text.lines()
        .filter_map(|line| {
            let heading = line.strip_prefix("## ")?;
            let number = heading.strip_prefix("Step ")?.split(':').next()?;
            Some((number.parse().ok()?, heading.to_owned()))
        })
        .collect()
}

/// The lab's steps, as `(number, name)`, read from the suite's module files
/// (`tests/lab/step03_half_open.rs` is step 3, `half_open`). A step's number
/// takes two digits, so that files, tests and hints sort in step order
/// (`step10` after `step09`, not before `step2`); one without is an error.
pub(crate) fn steps() -> Result<Vec<(u32, String)>, String> {
    let dir = root().join("tests/lab");
    let mut steps = Vec::new();
    for entry in fs::read_dir(&dir).map_err(|e| format!("cannot read tests/lab: {e}"))? {
        let name = entry.map_err(|e| e.to_string())?.file_name();
        let name = name.to_string_lossy();
        let Some(stem) = name
            .strip_prefix("step")
            .and_then(|n| n.strip_suffix(".rs"))
        else {
            continue;
        };
        if let Some((digits, title)) = stem.split_once('_') {
            if let Ok(number) = digits.parse::<u32>() {
                if digits.len() != 2 {
                    return Err(format!(
                        "tests/lab/{name}: a step's number takes two digits \
                         (tests/lab/step{number:02}_{title}.rs), so the steps sort in order"
                    ));
                }
                steps.push((number, title.to_owned()));
            }
        }
    }
    steps.sort();
    Ok(steps)
}

/// Tests documented as controls (`/// A control: why`): they check that a
/// rule is not over-applied, so they may pass before their step is done.
pub(crate) fn controls() -> Result<BTreeMap<String, String>, String> {
    documented(CONTROL)
}

/// Tests documented as races (`/// A race: why`): they run real threads
/// against each other, so for some wrong crates their verdict depends on
/// how the operating system schedules them. `just test` runs them, since a
/// race they catch is worth seeing; a grade never does, so that one
/// submission always gets one grade.
pub(crate) fn races() -> Result<BTreeMap<String, String>, String> {
    documented(RACE)
}

/// The doc line that opens a control's reason.
const CONTROL: &str = "A control:";
/// The doc line that opens a race's reason.
pub(crate) const RACE: &str = "A race:";

/// The tests of the suite documented with `/// MARKER why`, by full name,
/// with why: in every module file under `tests/lab` but `main.rs` and the
/// support code (`tests/lab/step06_retry/policy.rs` is `step06_retry::policy`).
fn documented(marker: &str) -> Result<BTreeMap<String, String>, String> {
    let mut found = BTreeMap::new();
    submodule_docs(&root().join("tests/lab"), "", marker, &mut found)?;
    Ok(found)
}

/// The tests documented with `marker` in the module files of `dir`, whose
/// module is `module` (the suite's root when empty), and in their folders'
/// files in turn.
fn submodule_docs(
    dir: &std::path::Path,
    module: &str,
    marker: &str,
    found: &mut BTreeMap<String, String>,
) -> Result<(), String> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        let Some(stem) = path
            .file_name()
            .and_then(|name| name.to_str())
            .and_then(|name| name.strip_suffix(".rs"))
        else {
            continue;
        };
        let inner = if module.is_empty() {
            if stem == "main" {
                continue;
            }
            stem.to_owned()
        } else {
            format!("{module}::{stem}")
        };
        let text = fs::read_to_string(&path).map_err(|e| e.to_string())?;
        found.extend(documented_in(&inner, &text, marker));
        submodule_docs(&dir.join(stem), &inner, marker, found)?;
    }
    Ok(())
}

/// The controls of one test module, by full test name.
pub(crate) fn controls_in(module: &str, text: &str) -> BTreeMap<String, String> {
    documented_in(module, text, CONTROL)
}

/// The races of one test module, by full test name.
pub(crate) fn races_in(module: &str, text: &str) -> BTreeMap<String, String> {
    documented_in(module, text, RACE)
}

/// The tests of one module whose doc comment has a line opening with
/// `marker`, by full test name, with the rest of that paragraph of docs.
fn documented_in(module: &str, text: &str, marker: &str) -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    let mut reason: Option<String> = None;
    for line in text.lines().map(str::trim) {
        if let Some(doc) = line.strip_prefix("///") {
            let doc = doc.trim();
            match (&mut reason, doc.strip_prefix(marker)) {
                (_, Some(start)) => reason = Some(start.trim().to_owned()),
                (Some(reason), None) if !doc.is_empty() => {
                    reason.push(' ');
                    reason.push_str(doc);
                }
                _ => {}
            }
        } else if let Some(rest) = line.strip_prefix("fn ") {
            if let (Some(why), Some(test)) = (reason.take(), rest.split('(').next()) {
                found.insert(format!("{module}::{test}"), why);
            }
        } else if !line.starts_with("#[") {
            reason = None;
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_controls_of_submodules_are_found_under_their_full_names() {
        let dir = std::env::temp_dir().join(format!("xtask-controls-{}", std::process::id()));
        fs::create_dir_all(dir.join("step06_retry/policy")).unwrap();
        let control = "/// A control: jitter is\n/// per call.\n#[test]\nfn e8_x() {}\n\
                       #[test]\nfn e8_y() {}\n";
        fs::write(dir.join("step06_retry/policy.rs"), control).unwrap();
        fs::write(dir.join("step06_retry/policy/deep.rs"), control).unwrap();
        let mut found = BTreeMap::new();
        submodule_docs(
            &dir.join("step06_retry"),
            "step06_retry",
            CONTROL,
            &mut found,
        )
        .unwrap();
        fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            found.into_iter().collect::<Vec<_>>(),
            [
                (
                    "step06_retry::policy::deep::e8_x".into(),
                    "jitter is per call.".into()
                ),
                (
                    "step06_retry::policy::e8_x".into(),
                    "jitter is per call.".into()
                ),
            ]
        );
    }

    /// The `{NAME}`s in a string literal that `expect` or `assert!`
    /// without arguments prints as it is: they look formatted in the
    /// source, and the student reads the braces.
    fn unformatted(text: &str) -> Vec<String> {
        let mut found = Vec::new();
        for (number, line) in text.lines().enumerate() {
            let Some(at) = line.find(".expect(\"") else {
                continue;
            };
            let literal = &line[at + ".expect(\"".len()..];
            let literal = literal.split('"').next().unwrap_or_default();
            let mut rest = literal.replace("{{", "");
            while let Some(open) = rest.find('{') {
                let after = &rest[open + 1..];
                let Some(close) = after.find('}') else { break };
                let name = &after[..close];
                if !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                    found.push(format!("line {}: {{{name}}}", number + 1));
                }
                rest = after[close..].to_owned();
            }
        }
        found
    }

    #[test]
    fn no_message_of_the_suite_prints_a_placeholder_unformatted() {
        assert_eq!(
            unformatted("x.expect(\"{DROP_TODO}: free\");"),
            ["line 1: {DROP_TODO}"]
        );
        assert!(unformatted("x.expect(\"B2: {{failures: 0}}\");").is_empty());
        let root = root();
        let mut found = Vec::new();
        let mut folders = vec![root.join("tests"), root.join("grading/held-back")];
        while let Some(folder) = folders.pop() {
            // The student edition has no held-back tests.
            let Ok(entries) = fs::read_dir(&folder) else {
                continue;
            };
            for entry in entries {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    folders.push(path);
                } else if path.extension().is_some_and(|ext| ext == "rs") {
                    let text = fs::read_to_string(&path).unwrap();
                    for line in unformatted(&text) {
                        let shown = path.strip_prefix(&root).unwrap_or(&path);
                        found.push(format!("{}: {line}", shown.display()));
                    }
                }
            }
        }
        assert!(
            found.is_empty(),
            "placeholders printed as they are:\n{}",
            found.join("\n")
        );
    }

    /// The tests of one module whose body runs threads against each
    /// other: it spawns OS threads, or holds a barrier for them.
    fn threaded_in(module: &str, text: &str) -> Vec<String> {
        let mut found = Vec::new();
        for part in text.split("#[test]").skip(1) {
            let Some(name) = part
                .split("fn ")
                .nth(1)
                .and_then(|rest| rest.split('(').next())
            else {
                continue;
            };
            if ["thread::spawn", "thread::scope", "Barrier::new"]
                .iter()
                .any(|threads| part.contains(threads))
            {
                found.push(format!("{module}::{name}"));
            }
        }
        found
    }

    /// Every test that runs threads against each other is documented as a
    /// race, so that no grade runs it: on a wrong crate its verdict could
    /// change from one run to the next.
    #[test]
    fn every_test_that_runs_threads_against_each_other_is_a_race() {
        assert_eq!(
            threaded_in(
                "m",
                "#[test]\nfn a() { thread::spawn(f); }\n#[test]\nfn b() {}\n"
            ),
            ["m::a"]
        );
        let root = root();
        let races = races().unwrap();
        let mut found = Vec::new();
        let mut folders = vec![(root.join("tests/lab"), String::new())];
        while let Some((folder, module)) = folders.pop() {
            for entry in fs::read_dir(&folder).unwrap() {
                let path = entry.unwrap().path();
                let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
                let inner = if module.is_empty() {
                    stem.clone()
                } else {
                    format!("{module}::{stem}")
                };
                if path.is_dir() && stem != "support" && stem != "snapshots" {
                    folders.push((path, inner));
                } else if path.extension().is_some_and(|ext| ext == "rs") && stem != "main" {
                    let text = fs::read_to_string(&path).unwrap();
                    found.extend(threaded_in(&inner, &text));
                }
            }
        }
        // The held-back tests, where the grader has them.
        if let Ok(entries) = fs::read_dir(root.join("grading/held-back")) {
            for entry in entries {
                let path = entry.unwrap().path();
                let module = path.file_stem().unwrap().to_string_lossy().into_owned();
                let text = fs::read_to_string(&path).unwrap();
                let held_races = races_in(&module, &text);
                for test in threaded_in(&module, &text) {
                    if !held_races.contains_key(&test) {
                        found.push(test);
                    }
                }
            }
        }
        found.retain(|test| !races.contains_key(test));
        found.sort();
        assert!(
            found.is_empty(),
            "tests that run threads against each other without a `/// A race: why` line:\n{}",
            found.join("\n")
        );
        assert!(races.len() >= 7, "{races:?}");
    }

    /// Each step's section opens its list of rules in bold, `- **B6** ...`,
    /// in the order `steps.toml` lists them, and names no other: the
    /// student reads the handout, the tools the manifest.
    #[test]
    fn each_steps_section_states_the_rules_the_manifest_lists() {
        let text = crate::manifest::lab_text(&root()).unwrap();
        let stated = stated_rules(&text);
        let listed = syllabus().unwrap().stated;
        for (number, step) in crate::manifest::read(&root()).unwrap() {
            let ids = |rules: Option<&Vec<Rule>>| -> Vec<String> {
                rules
                    .map(|rules| rules.iter().map(Rule::to_string).collect())
                    .unwrap_or_default()
            };
            assert_eq!(
                ids(stated.get(&number)),
                step.rules,
                "{}, step {number}: its bold list against steps.toml:{}",
                crate::manifest::handout_of(number),
                step.line
            );
            assert_eq!(ids(listed.get(&number)), step.rules, "every id reads");
        }
    }

    #[test]
    fn each_step_states_the_rules_its_list_opens_in_bold() {
        let lab = "## How to work\n\n- **B9** not a step\n\n## Step 1: closed (TODO 1)\n\n\
                   - **B1** zero\n- **B2** counts, unlike **B3**\n\n## Step 6: retry\n\n\
                   - **E5** the value\n- **B8** no lock\n- **E5** again\n\n\
                   ## Common mistakes\n\n- **E9**\n";
        let stated = stated_rules(lab);
        let ids = |step| -> Vec<String> { stated[&step].iter().map(Rule::to_string).collect() };
        assert_eq!(stated.keys().copied().collect::<Vec<_>>(), [1, 6]);
        assert_eq!(ids(1), ["B1", "B2"]);
        assert_eq!(ids(6), ["E5", "B8"]);
    }

    /// Words, as a reader counts them: code and tables included.
    fn words(text: &str) -> usize {
        text.split_whitespace().count()
    }

    /// The sections of a handout under `## ` headings, in order.
    fn sections(text: &str) -> Vec<(String, String)> {
        let mut found: Vec<(String, String)> = Vec::new();
        for line in text.lines() {
            if let Some(heading) = line.strip_prefix("## ") {
                found.push((heading.to_owned(), String::new()));
            } else if let Some((_, body)) = found.last_mut() {
                body.push_str(line);
                body.push('\n');
            }
        }
        found
    }

    /// A step's section without its rule list (the `- **B1** ...` items
    /// and their continuation lines), which is as long as its rules need.
    fn without_rules(body: &str) -> String {
        let mut kept = String::new();
        let mut in_rule = false;
        for line in body.lines() {
            if let Some(item) = line.strip_prefix("- **") {
                in_rule = Rule::parse(item.split("**").next().unwrap_or("")).is_some();
            } else if !line.starts_with("  ") {
                in_rule = false;
            }
            if !in_rule {
                kept.push_str(line);
                kept.push('\n');
            }
        }
        kept
    }

    /// The core lab is read in one sitting: at most 4,000 words from the
    /// top of LAB.md to the end of step 10, "How to work" at most 250, and
    /// each core step at most 450 besides its rules. What a student needs
    /// only when a test sends them there lives after step 10.
    #[test]
    fn the_core_lab_reads_in_one_sitting() {
        let lab = fs::read_to_string(root().join("LAB.md")).unwrap();
        let sections = sections(&lab);
        let end = sections
            .iter()
            .position(|(heading, _)| heading.starts_with("Step 10:"))
            .expect("LAB.md has a step 10");
        let top = lab.split("\n## ").next().unwrap_or_default();
        let core = words(top)
            + sections[..=end]
                .iter()
                .map(|(heading, body)| words(heading) + 1 + words(body))
                .sum::<usize>();
        let mut wrong = Vec::new();
        if core > 4_000 {
            wrong.push(format!("{core} words to the end of step 10, past 4,000"));
        }
        for (heading, body) in &sections[..=end] {
            let (limit, counted) = match heading.as_str() {
                "How to work" => (250, words(body)),
                step if step.starts_with("Step ") => (450, words(&without_rules(body))),
                _ => continue,
            };
            if counted > limit {
                wrong.push(format!("`{heading}`: {counted} words, past {limit}"));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
