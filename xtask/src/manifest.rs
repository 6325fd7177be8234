//! `steps.toml`: what each step of the lab needs done before it. The core
//! steps (1-10) build on the ones before them in order; each step of the
//! advanced track names the steps it needs, and nothing else, so a student
//! can take the advanced steps in any order that keeps to them.
//!
//! `check-starter` proves each declaration: for every advanced step it
//! builds the crate of a student who did the core, that step and its
//! prerequisites, and nothing more, and requires every test of the step to
//! pass. `just progress` reads it to say which step to do first.
//!
//! The format is a small part of TOML, read here without a parser crate:
//! `[[step]]` tables with `number = N`, `title = "..."`, `rules = ["B1",
//! ...]`, `needs = [N, ...]`, `points = N` and `hints = [ '''...''', ... ]`
//! (literal strings, each opening and closing on a line of its own). A
//! manifest that names a step the suite lacks, leaves one out, needs a step
//! that is not there or comes later, loops, or gives a step no points or
//! fewer than two hints, is an error naming its line.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// The last step of the core lab: every step up to it needs the ones before.
pub(crate) const CORE_LAST: u32 = 10;

/// The lab's text for students: the core lab, then the advanced track.
pub(crate) const HANDOUTS: [&str; 2] = ["LAB.md", "ADVANCED.md"];

/// The document whose section teaches step `number`: LAB.md for the core
/// lab, ADVANCED.md for the advanced track.
pub(crate) fn handout_of(number: u32) -> &'static str {
    if number <= CORE_LAST {
        HANDOUTS[0]
    } else {
        HANDOUTS[1]
    }
}

/// The lab's text: LAB.md, then ADVANCED.md where there is one, so the
/// steps' sections come in their order. Only checks read it: the tools
/// read this manifest.
#[cfg(test)]
pub(crate) fn lab_text(root: &std::path::Path) -> Result<String, String> {
    let mut text = String::new();
    for (index, name) in HANDOUTS.iter().enumerate() {
        match std::fs::read_to_string(root.join(name)) {
            Ok(part) => {
                text.push_str(&part);
                text.push('\n');
            }
            Err(_) if index > 0 => {}
            Err(e) => return Err(format!("{name}: {e}")),
        }
    }
    Ok(text)
}

/// One step as the manifest declares it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Step {
    pub number: u32,
    pub title: String,
    /// The steps besides the core it needs done first.
    pub needs: Vec<u32>,
    /// The rules it teaches, in the order its section states them: ids
    /// such as `B5`, a family's capital letter and a number.
    pub rules: Vec<String>,
    /// What `just grade` gives it, unless the course's weights say
    /// otherwise ([`crate::grading::weights`]).
    pub points: f64,
    /// What `just hint` shows, one more each time, from a nudge to nearly
    /// the answer.
    pub hints: Vec<String>,
    /// The manifest's line that opens it, for errors.
    pub line: usize,
}

/// The rule families in the contract's order: each family's letter as the
/// steps' rules first name it, in step order (B, E, then the advanced
/// track's).
pub(crate) fn families(root: &Path) -> Result<Vec<char>, String> {
    let mut families = Vec::new();
    for step in read(root)?.into_values() {
        for family in step.rules.iter().filter_map(|rule| rule.chars().next()) {
            if !families.contains(&family) {
                families.push(family);
            }
        }
    }
    Ok(families)
}

/// `B5`, `E10`: a capital letter, then a number.
fn is_rule_id(id: &str) -> bool {
    let mut chars = id.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase())
        && !chars.as_str().is_empty()
        && chars.as_str().bytes().all(|b| b.is_ascii_digit())
}

/// The manifest at `root`/steps.toml, checked against the suite's steps.
pub(crate) fn read(root: &Path) -> Result<BTreeMap<u32, Step>, String> {
    let text =
        fs::read_to_string(root.join("steps.toml")).map_err(|e| format!("steps.toml: {e}"))?;
    let with_tests: BTreeSet<u32> = crate::lab::steps()?.into_iter().map(|(n, _)| n).collect();
    parse(&text, &with_tests)
}

/// Reads the manifest's text; `with_tests` are the steps the suite has.
pub(crate) fn parse(text: &str, with_tests: &BTreeSet<u32>) -> Result<BTreeMap<u32, Step>, String> {
    let mut steps: Vec<Step> = Vec::new();
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    let mut lines = text.lines().enumerate();
    while let Some((index, raw)) = lines.next() {
        let at = index + 1;
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if line == "[[step]]" {
            steps.push(Step {
                number: 0,
                title: String::new(),
                needs: Vec::new(),
                rules: Vec::new(),
                points: f64::NAN,
                hints: Vec::new(),
                line: at,
            });
            seen.clear();
            continue;
        }
        let Some(step) = steps.last_mut() else {
            return Err(format!(
                "steps.toml:{at}: `{line}` before the first [[step]]"
            ));
        };
        let Some((key, value)) = line.split_once('=') else {
            return Err(format!(
                "steps.toml:{at}: expected `key = value`, found `{line}`"
            ));
        };
        let (key, value) = (key.trim(), value.trim());
        if seen.insert(key, at).is_some() {
            return Err(format!("steps.toml:{at}: `{key}` twice in one step"));
        }
        match key {
            "number" => {
                step.number = value
                    .parse()
                    .map_err(|_| format!("steps.toml:{at}: the number `{value}` is not one"))?;
            }
            "title" => {
                step.title = value
                    .strip_prefix('"')
                    .and_then(|v| v.strip_suffix('"'))
                    .ok_or(format!("steps.toml:{at}: a title is a quoted string"))?
                    .to_owned();
            }
            "needs" => {
                let inner = value
                    .strip_prefix('[')
                    .and_then(|v| v.strip_suffix(']'))
                    .ok_or(format!("steps.toml:{at}: needs is a list, `[14]`"))?;
                step.needs = inner
                    .split(',')
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(|n| {
                        n.parse()
                            .map_err(|_| format!("steps.toml:{at}: `{n}` is no step number"))
                    })
                    .collect::<Result<_, _>>()?;
            }
            "rules" => {
                let inner = value
                    .strip_prefix('[')
                    .and_then(|v| v.strip_suffix(']'))
                    .ok_or(format!(
                        "steps.toml:{at}: rules is a list, `[\"B1\", \"B2\"]`"
                    ))?;
                step.rules = inner
                    .split(',')
                    .map(str::trim)
                    .filter(|id| !id.is_empty())
                    .map(|id| {
                        let rule = id.strip_prefix('"').and_then(|id| id.strip_suffix('"'));
                        match rule {
                            Some(rule) if is_rule_id(rule) => Ok(rule.to_owned()),
                            _ => Err(format!(
                                "steps.toml:{at}: `{id}` is no rule id: a capital letter and a number, quoted (`\"B5\"`)"
                            )),
                        }
                    })
                    .collect::<Result<_, _>>()?;
            }
            "points" => {
                step.points = value
                    .parse()
                    .ok()
                    .filter(|points: &f64| points.is_finite() && *points >= 0.0)
                    .ok_or(format!(
                        "steps.toml:{at}: the points `{value}` are not a number, 0 or more"
                    ))?;
            }
            "hints" => {
                if value != "[" {
                    return Err(format!(
                        "steps.toml:{at}: hints is a list of literal strings, opening with `hints = [` on a line of its own"
                    ));
                }
                step.hints = hints(&mut lines, at)?;
            }
            other => return Err(format!("steps.toml:{at}: unknown key `{other}`")),
        }
    }
    let mut by_number = BTreeMap::new();
    for step in steps {
        if step.number == 0 || step.title.is_empty() {
            return Err(format!(
                "steps.toml:{}: a step needs a number and a title",
                step.line
            ));
        }
        if step.points.is_nan() {
            return Err(format!(
                "steps.toml:{}: step {} gives no `points` (0 for none)",
                step.line, step.number
            ));
        }
        if step.hints.len() < 2 {
            return Err(format!(
                "steps.toml:{}: step {} needs at least two `hints`, from a nudge to nearly the answer",
                step.line, step.number
            ));
        }
        if !with_tests.contains(&step.number) {
            return Err(format!(
                "steps.toml:{}: step {} has no tests (tests/lab/step{:02}_*.rs)",
                step.line, step.number, step.number
            ));
        }
        for &need in &step.needs {
            if need == step.number || !with_tests.contains(&need) {
                return Err(format!(
                    "steps.toml:{}: step {} needs step {need}, which {}",
                    step.line,
                    step.number,
                    if need == step.number {
                        "is itself"
                    } else {
                        "the suite does not have"
                    }
                ));
            }
            if step.number <= CORE_LAST {
                return Err(format!(
                    "steps.toml:{}: step {} is a core step, which needs the steps before it and nothing else",
                    step.line, step.number
                ));
            }
        }
        let line = step.line;
        if let Some(earlier) = by_number.insert(step.number, step) {
            return Err(format!(
                "steps.toml:{line}: step {} again (first at line {})",
                earlier.number, earlier.line
            ));
        }
    }
    if let Some(missing) = with_tests.iter().find(|n| !by_number.contains_key(n)) {
        return Err(format!(
            "steps.toml: step {missing} has tests but no [[step]]"
        ));
    }
    // A loop: a step that needs itself through others.
    for step in by_number.values() {
        let mut path = vec![step.number];
        if let Some(cycle) = find_loop(&by_number, &mut path) {
            return Err(format!(
                "steps.toml:{}: the prerequisites loop: {}",
                step.line,
                cycle
                    .iter()
                    .map(|n| format!("step {n}"))
                    .collect::<Vec<_>>()
                    .join(" needs ")
            ));
        }
    }
    Ok(by_number)
}

/// The hints of a `hints = [` opened at line `at`: each a literal string
/// whose `'''` opens on a line of its own and closes on one alone (`'''` or
/// `''',`), up to the list's `]`. A hint's lines are kept as they are.
fn hints<'a>(
    lines: &mut impl Iterator<Item = (usize, &'a str)>,
    at: usize,
) -> Result<Vec<String>, String> {
    let mut hints = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (index, raw) in lines.by_ref() {
        let line = raw.trim();
        match open.as_mut() {
            Some((_, hint)) if line == "'''" || line == "'''," => {
                hints.push(std::mem::take(hint));
                open = None;
            }
            Some((_, hint)) => {
                hint.push_str(raw);
                hint.push('\n');
            }
            None if line == "'''" => open = Some((index + 1, String::new())),
            None if line == "]" => return Ok(hints),
            None if line.is_empty() || line.starts_with('#') => {}
            None => {
                return Err(format!(
                    "steps.toml:{}: expected a hint opening with `'''` on a line of its own, or the list's `]`: `{line}`",
                    index + 1
                ));
            }
        }
    }
    Err(match open {
        Some((opened, _)) => format!("steps.toml:{opened}: a hint that never closes"),
        None => format!("steps.toml:{at}: a list of hints with no `]`"),
    })
}

/// A loop reached from the last step of `path`, as the steps around it.
fn find_loop(steps: &BTreeMap<u32, Step>, path: &mut Vec<u32>) -> Option<Vec<u32>> {
    let last = *path.last()?;
    for &need in steps.get(&last).map(|s| s.needs.as_slice()).unwrap_or(&[]) {
        if let Some(at) = path.iter().position(|&n| n == need) {
            let mut cycle = path[at..].to_vec();
            cycle.push(need);
            return Some(cycle);
        }
        path.push(need);
        if let Some(cycle) = find_loop(steps, path) {
            return Some(cycle);
        }
        path.pop();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tested(numbers: &[u32]) -> BTreeSet<u32> {
        numbers.iter().copied().collect()
    }

    #[test]
    fn the_kits_manifest_reads_and_names_every_step_with_tests() {
        let steps = read(&crate::root()).unwrap();
        let with_tests: Vec<u32> = crate::lab::steps()
            .unwrap()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(steps.keys().copied().collect::<Vec<_>>(), with_tests);
    }

    /// Each title is the step's heading in LAB.md, `## Step N: TITLE (...)`.
    #[test]
    fn each_title_is_lab_mds_heading() {
        let steps = read(&crate::root()).unwrap();
        let lab = lab_text(&crate::root()).unwrap();
        let headings = crate::lab::step_sections(&lab);
        for step in steps.values() {
            let heading = &headings[&step.number];
            assert!(
                heading.starts_with(&format!("Step {}: {} (", step.number, step.title)),
                "steps.toml:{}: `{}` is not {}'s `{heading}`",
                step.line,
                step.title,
                handout_of(step.number)
            );
        }
    }

    /// Each advanced step of LAB.md opens by saying what it needs first,
    /// as the manifest says.
    #[test]
    fn each_advanced_step_of_lab_md_opens_with_its_needs() {
        let steps = read(&crate::root()).unwrap();
        let lab = lab_text(&crate::root()).unwrap();
        for step in steps.values().filter(|step| step.number > CORE_LAST) {
            let expected = match step.needs.as_slice() {
                [] => "Needs: the core lab.".to_owned(),
                [one] => format!("Needs: the core lab and step {one}."),
                [first @ .., last] => format!(
                    "Needs: the core lab and steps {} and {last}.",
                    first
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            let section = lab
                .split("\n## ")
                .find(|part| part.starts_with(&format!("Step {}:", step.number)))
                .unwrap_or_default();
            let first = section.lines().skip(1).find(|line| !line.trim().is_empty());
            assert_eq!(
                first,
                Some(expected.as_str()),
                "{}'s step {} must open with what steps.toml:{} says it needs",
                handout_of(step.number),
                step.number,
                step.line
            );
        }
    }

    #[test]
    fn a_bad_manifest_is_an_error_naming_its_line() {
        let two = tested(&[11, 12]);
        let hints = "hints = [\n'''\nfirst\n''',\n'''\n# second\n  indented\n''',\n]\n";
        let ok = format!(
            "[[step]]\nnumber = 11\ntitle = \"a\"\nneeds = []\nrules = [\"K1\"]\npoints = 0\n{hints}\
             [[step]]\nnumber = 12\ntitle = \"b\"\nneeds = [11]\nrules = [\"S1\"]\npoints = 2.5\n{hints}"
        );
        let ok = ok.as_str();
        let steps = parse(ok, &two).unwrap();
        assert_eq!(steps[&12].needs, [11]);
        assert_eq!(steps[&12].points, 2.5);
        assert_eq!(steps[&11].hints, ["first\n", "# second\n  indented\n"]);
        let cases = [
            (
                ok.replace("needs = [11]", "needs = [13]"),
                "steps.toml:16: step 12 needs step 13",
            ),
            (
                ok.replace("needs = []", "needs = [12]"),
                "steps.toml:1: the prerequisites loop: step 11 needs step 12 needs step 11",
            ),
            (
                ok.replace("number = 12", "number = 14"),
                "steps.toml:16: step 14 has no tests",
            ),
            (
                ok.replace("title = \"b\"\n", ""),
                "steps.toml:16: a step needs a number and a title",
            ),
            (
                ok.replace("needs = [11]", "needs = 11"),
                "steps.toml:19: needs is a list",
            ),
            (
                ok.replace("needs = [11]", "needs = [11]\ncolour = \"red\""),
                "steps.toml:20: unknown key `colour`",
            ),
            (
                ok.replace("[\"S1\"]", "[\"s1\"]"),
                "steps.toml:20: `\"s1\"` is no rule id",
            ),
            (
                ok.replace("[\"S1\"]", "[\"S\"]"),
                "steps.toml:20: `\"S\"` is no rule id",
            ),
            (
                ok[..ok.rfind("[[step]]").unwrap()].to_owned(),
                "steps.toml: step 12 has tests but no [[step]]",
            ),
            (
                ok.replace("points = 2.5\n", ""),
                "steps.toml:16: step 12 gives no `points`",
            ),
            (
                ok.replace("points = 2.5", "points = -1"),
                "steps.toml:21: the points `-1` are not a number",
            ),
            (
                ok.replacen("''',\n'''\n# second\n  indented\n''',\n", "''',\n", 2),
                "steps.toml:1: step 11 needs at least two `hints`",
            ),
            (
                ok.replacen("hints = [\n", "hints = [\nnot a string\n", 1),
                "steps.toml:8: expected a hint opening with",
            ),
            (
                ok.replacen("\n]\n", "\n", 2),
                "steps.toml:15: expected a hint opening with `'''` on a line of its own, or the list's `]`: `[[step]]`",
            ),
            (
                format!("{}\n'''\nnever closed\n", &ok[..ok.rfind("]").unwrap()]),
                "steps.toml:31: a hint that never closes",
            ),
            (
                ok[..ok.rfind(']').unwrap()].to_owned(),
                "steps.toml:22: a list of hints with no `]`",
            ),
        ];
        for (text, expected) in cases {
            let error = parse(&text, &two).unwrap_err();
            assert!(error.starts_with(expected), "{error}\nexpected: {expected}");
        }
    }
}
