//! `cargo xtask check-export [MISTAKE]`: the whole course cycle, end to end.
//!
//! Exports the student edition, clones it and checks, from the clone:
//! - it stands alone: the lock matches, and its own `cargo xtask grade`
//!   runs and gives 0;
//! - graded by this repository (with the held-back tests), the untouched
//!   starter scores 0 on every step, with every scored test failing;
//! - the solution's files copied into its starter score full marks;
//! - the solution with one gallery mistake applied (MISTAKE, a part of a
//!   file name in `mistakes/`) loses points in the step of the TODO that
//!   mistake touches, and nowhere else.
//!
//! Every build shares one target folder, so dependencies build once. If
//! python3 is at hand, the reports and the workflow are also read back with
//! real JSON, XML and (if installed) YAML parsers.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::grade::{self, Grade, Options};
use crate::scratch::copy_tree;
use crate::{export, root};

/// A mistake caught by its own step's tests only, so the points it loses
/// all come from that step.
const DEFAULT_MISTAKE: &str = "27-refusal-hides-the-cause";

pub(crate) fn check_export(args: &[String]) -> Result<(), String> {
    let started = Instant::now();
    let root = root();
    let mistake = find_mistake(&root, args.first().map_or(DEFAULT_MISTAKE, String::as_str))?;
    let base = root.join("target/check-export");
    let exported = base.join("student");
    let clone = base.join("clone");
    // Kept from run to run, like any target folder: only what changed builds.
    let target = base.join("target");
    for stale in [
        "student",
        "clone",
        "own-grade",
        "untouched",
        "solved",
        "mistake",
    ] {
        let stale = base.join(stale);
        if stale.exists() {
            fs::remove_dir_all(&stale).map_err(|e| e.to_string())?;
        }
    }

    println!("== exporting the student edition");
    export::export(&exported)?;
    run(Command::new("git")
        .arg("clone")
        .arg("--quiet")
        .arg(&exported)
        .arg(&clone))?;

    println!("== the clone stands alone: its lock matches, its own grade runs");
    run(cargo(&clone, &target).args(["metadata", "--locked", "--format-version", "1", "--quiet"]))?;
    let own = base.join("own-grade");
    run(cargo(&clone, &target)
        .args(["xtask", "grade", "--out"])
        .arg(&own))?;
    let results = fs::read_to_string(own.join("results.json")).map_err(|e| e.to_string())?;
    if !results.contains("\n  \"score\": 0,\n") {
        return Err(format!(
            "the untouched export's own grade is not 0:\n{results}"
        ));
    }
    parse_with_python(&own, Some(&clone.join(".github/workflows/grade.yml")))?;

    let graded = |label: &str| -> Result<Grade, String> {
        let out = base.join(label);
        let grade = grade::run(&Options {
            student: Some(clone.clone()),
            out: out.clone(),
            target: target.clone(),
        })?;
        grade::write(&grade, &out)?;
        print!("{}", crate::report::summary(&grade));
        Ok(grade)
    };

    println!("== the untouched starter scores 0 on every step");
    let untouched = graded("untouched")?;
    for step in &untouched.steps {
        if let Some(test) = step.scored().find(|test| test.passed) {
            return Err(format!(
                "the untouched starter passes {}, a scored test",
                test.name
            ));
        }
    }
    expect(
        untouched.score() == 0.0,
        "the untouched starter scores more than 0",
    )?;

    println!("== the solution's files in the starter score full marks");
    let src = clone.join("starter/src");
    fs::remove_dir_all(&src).map_err(|e| e.to_string())?;
    copy_tree(&root.join("solution/src"), &src)?;
    let solved = graded("solved")?;
    let failing: Vec<&str> = solved
        .steps
        .iter()
        .flat_map(|step| step.tests.iter())
        .chain(solved.provided.iter())
        .filter(|test| !test.passed)
        .map(|test| test.name.as_str())
        .collect();
    expect(
        failing.is_empty(),
        &format!("the solution fails {failing:?}"),
    )?;
    expect(
        solved.score() == solved.max_score(),
        "the solution misses full marks",
    )?;
    parse_with_python(&base.join("solved"), None)?;

    let name = mistake
        .file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let patch = fs::read_to_string(&mistake).map_err(|e| e.to_string())?;
    let step = mistake_step(&patch, &root.join("solution/src"))?;
    println!("== with the mistake {name}, step {step} alone loses points");
    apply(&clone, &patch.replace("solution/src/", "starter/src/"))?;
    let mistaken = graded("mistake")?;
    for scored in &mistaken.steps {
        let full = scored.score == scored.points;
        if scored.number == step && full {
            return Err(format!("{name} costs step {step} nothing"));
        }
        if scored.number != step && !full {
            let lost: Vec<&str> = scored
                .scored()
                .filter(|test| !test.passed)
                .map(|test| test.name.as_str())
                .collect();
            return Err(format!(
                "{name} belongs to step {step} but also costs step {} points: {lost:?}",
                scored.number
            ));
        }
    }
    let lost = grade::round(mistaken.max_score() - mistaken.score());
    println!(
        "\ncheck-export: untouched 0, solution {} / {}, {name} loses {lost} point(s), all in step {step} ({:.0?})",
        solved.score(),
        solved.max_score(),
        started.elapsed()
    );
    Ok(())
}

/// The patch in `mistakes/` whose name contains `part`.
fn find_mistake(root: &Path, part: &str) -> Result<PathBuf, String> {
    let mut found: Vec<PathBuf> = fs::read_dir(root.join("mistakes"))
        .map_err(|e| format!("cannot read mistakes/: {e}"))?
        .filter_map(|entry| Some(entry.ok()?.path()))
        .filter(|path| path.to_string_lossy().contains(part))
        .collect();
    found.sort();
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(format!("no patch in mistakes/ is called {part}")),
        _ => Err(format!("more than one patch in mistakes/ matches {part}")),
    }
}

/// The step a mistake belongs to: that of the TODO region around the lines
/// its hunks change, read from the solution they apply to.
pub fn mistake_step(patch: &str, solution_src: &Path) -> Result<u32, String> {
    let mut steps = Vec::new();
    let mut source: Vec<String> = Vec::new();
    let mut old_line = 0usize;
    for line in patch.lines() {
        if let Some(path) = line.strip_prefix("--- a/") {
            let file = path.rsplit('/').next().unwrap_or(path);
            let text = fs::read_to_string(solution_src.join(file))
                .map_err(|e| format!("the patch changes {path}: {e}"))?;
            source = text.lines().map(str::to_owned).collect();
        } else if let Some(range) = line.strip_prefix("@@ -") {
            let start = range.split([',', ' ']).next().unwrap_or_default();
            old_line = start
                .parse()
                .map_err(|_| format!("bad hunk header: {line}"))?;
        } else if line.starts_with('-') || line.starts_with('+') {
            if line.starts_with("+++") {
                continue;
            }
            let step = region_around(&source, old_line).ok_or_else(|| {
                format!("the change at line {old_line} is outside every TODO region")
            })?;
            steps.push(step);
            if line.starts_with('-') {
                old_line += 1;
            }
        } else if line.starts_with(' ') {
            old_line += 1;
        }
    }
    steps.sort();
    steps.dedup();
    match steps.as_slice() {
        [step] => Ok(*step),
        [] => Err("the patch changes nothing".to_owned()),
        _ => Err(format!(
            "the patch touches the TODOs of several steps: {steps:?}"
        )),
    }
}

/// The TODO step whose region holds 1-based line `line` of a solution file.
fn region_around(source: &[String], line: usize) -> Option<u32> {
    let before = source.get(..line.saturating_sub(1).min(source.len()))?;
    for text in before.iter().rev() {
        let text = text.trim();
        if text.starts_with("// END TODO") {
            return None;
        }
        if let Some(rest) = text.strip_prefix("// BEGIN TODO(") {
            return rest.split(')').next()?.parse().ok();
        }
    }
    None
}

fn apply(dir: &Path, patch: &str) -> Result<(), String> {
    use std::io::Write as _;
    let mut child = Command::new("git")
        .current_dir(dir)
        .args(["apply", "--whitespace=nowarn", "-"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run git apply: {e}"))?;
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(patch.as_bytes())
        .map_err(|e| e.to_string())?;
    let status = child.wait().map_err(|e| e.to_string())?;
    expect(
        status.success(),
        "the mistake's patch does not apply to the export",
    )
}

fn cargo(dir: &Path, target: &Path) -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command.current_dir(dir).env("CARGO_TARGET_DIR", target);
    command
}

fn run(command: &mut Command) -> Result<(), String> {
    let output = command
        .output()
        .map_err(|e| format!("cannot run {command:?}: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{command:?} failed:\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

fn expect(condition: bool, why: &str) -> Result<(), String> {
    if condition {
        Ok(())
    } else {
        Err(why.to_owned())
    }
}

/// Reads the reports back with Python's JSON and XML parsers, and the
/// workflow with PyYAML, when they are installed; CI needs only Rust, so
/// their absence is reported, not fatal.
fn parse_with_python(reports: &Path, workflow: Option<&Path>) -> Result<(), String> {
    const SCRIPT: &str = r#"
import json, sys, xml.etree.ElementTree as ET
results = json.load(open(sys.argv[1]))
assert isinstance(results["score"], (int, float)), "no total score"
for test in results["tests"]:
    assert {"name", "score", "max_score", "output"} <= set(test), test
suites = ET.parse(sys.argv[2]).getroot()
assert suites.tag == "testsuites" and len(suites) > 0
if len(sys.argv) > 3:
    try:
        import yaml
    except ImportError:
        print("  (PyYAML is not installed: the workflow was not parsed)")
    else:
        flow = yaml.safe_load(open(sys.argv[3]))
        steps = flow["jobs"]["grade"]["steps"]
        assert any(step.get("run") == "just grade" for step in steps), "the workflow does not run just grade"
        assert True in flow or "on" in flow, "the workflow has no trigger"
print("  parsed: " + ", ".join(sys.argv[1:]))
"#;
    let mut command = Command::new("python3");
    command
        .args(["-c", SCRIPT])
        .arg(reports.join("results.json"))
        .arg(reports.join("junit.xml"));
    if let Some(workflow) = workflow {
        command.arg(workflow);
    }
    match command.output() {
        Err(_) => {
            println!("  (python3 is not installed: the reports were not parsed back)");
            Ok(())
        }
        Ok(output) if output.status.success() => {
            print!("{}", String::from_utf8_lossy(&output.stdout));
            Ok(())
        }
        Ok(output) => Err(format!(
            "the reports in {} do not parse:\n{}",
            reports.display(),
            String::from_utf8_lossy(&output.stderr)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hunk_belongs_to_the_todo_region_around_its_changed_lines() {
        let source: Vec<String> =
            "fn a() {\n    // BEGIN TODO(3): x\n    one\n    two\n    // END TODO\n}\nfn b() {}\n"
                .lines()
                .map(str::to_owned)
                .collect();
        assert_eq!(region_around(&source, 3), Some(3));
        assert_eq!(region_around(&source, 4), Some(3));
        assert_eq!(region_around(&source, 7), None);
        assert_eq!(region_around(&source, 1), None);
    }
}
