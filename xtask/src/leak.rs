//! The proof that a student edition holds no answer: no line of any TODO
//! region's reference code in `solution/src` appears anywhere in it, and no
//! marker of the starter's generator either.
//!
//! A line "appears" if some line of an exported file contains it once both
//! are trimmed, so a patch line (`-    code`) or a quotation is caught too.
//! Lines too plain to give anything away are skipped: see [`trivial`].

use std::fs;
use std::path::{Path, PathBuf};

/// The generator's markers; none may survive into a student edition.
const MARKERS: &[&str] = &["BEGIN TODO", "END TODO", "STARTER:"];

/// One line of reference code, and where it is.
#[derive(Debug, Clone)]
pub struct Answer {
    pub line: String,
    /// `circuit.rs:120`, for the report.
    pub at: String,
}

/// Every line of reference code inside a TODO region of the solution, blank
/// lines aside (the stand-in lines after `// STARTER:` are the starter's
/// own code, so they are not answers).
pub fn answers(solution_src: &Path) -> Result<Vec<Answer>, String> {
    let mut found = Vec::new();
    for path in files(solution_src)? {
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let text = fs::read_to_string(&path).map_err(|e| format!("{name}: {e}"))?;
        let mut inside = false;
        for (index, line) in text.lines().enumerate() {
            let trimmed = line.trim();
            if trimmed.starts_with("// BEGIN TODO(") {
                inside = true;
            } else if trimmed.starts_with("// STARTER:") || trimmed.starts_with("// END TODO") {
                inside = false;
            } else if inside && !trimmed.is_empty() {
                found.push(Answer {
                    line: trimmed.to_owned(),
                    at: format!("{name}:{}", index + 1),
                });
            }
        }
    }
    if found.is_empty() {
        return Err("found no reference code in the solution's TODO regions".to_owned());
    }
    Ok(found)
}

/// Words that say nothing about an answer on their own: Rust's keywords and
/// the prelude's variants.
const PLAIN_WORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "false",
    "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref",
    "return", "self", "Self", "static", "struct", "super", "true", "type", "use", "where", "while",
    "Some", "None", "Ok", "Err",
];

/// A line too plain to reveal anything, which every Rust file is full of:
/// one that names at most one thing besides keywords and numbers, or a
/// comment of three words or fewer. In today's solution that is 30 of the
/// 70 lines: braces and `} else {`, `match self {`, `loop {`, `.await`,
/// `Ok(self.generation)`, `attempt += 1;`, and a few that restate a rule
/// LAB.md gives in words (`if threshold == 0 {`, `if attempts == 0 {`,
/// `if probe_out {`, `let mut attempt = 1;`). Everything else is checked,
/// comments included: a region's comment can explain its answer.
pub fn trivial(line: &str) -> bool {
    let words: Vec<&str> = line
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|word| !word.is_empty())
        .collect();
    if line.starts_with("//") {
        return words.len() <= 3;
    }
    let names = words
        .iter()
        .filter(|word| !PLAIN_WORDS.contains(word))
        .filter(|word| !word.starts_with(|c: char| c.is_ascii_digit()))
        .count();
    names <= 1
}

/// Answer lines the kit shows elsewhere on purpose, and why that gives
/// nothing away. Keep this list short: each entry is a judgement.
const SHOWN_ON_PURPOSE: &[(&str, &str)] = &[(
    "if cancel.is_cancelled() {",
    "the demo's own Ctrl-C check (demo/src/main.rs): one call of tokio-util's \
     public `CancellationToken` API, which rule E2 names; it shows nothing of \
     where `execute` must check",
)];

/// The answer lines worth looking for, and how many of the others were set
/// aside and why.
pub struct ToCheck {
    pub lines: Vec<Answer>,
    pub trivial: usize,
    /// Lines the starter has anyway, outside its TODO regions: every
    /// student is given those (a `match` arm the solution repeats inside a
    /// region, say), so finding them in the export proves nothing.
    pub given: usize,
    pub shown_on_purpose: usize,
}

/// Sorts the solution's answer lines into those to look for and those set
/// aside: trivial ones, ones the starter in `starter_src` has anyway, and
/// the few [`SHOWN_ON_PURPOSE`].
pub fn to_check(answers: Vec<Answer>, starter_src: &Path) -> Result<ToCheck, String> {
    let mut given = std::collections::BTreeSet::new();
    for path in files(starter_src)? {
        let text = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        given.extend(text.lines().map(|line| line.trim().to_owned()));
    }
    let mut sorted = ToCheck {
        lines: Vec::new(),
        trivial: 0,
        given: 0,
        shown_on_purpose: 0,
    };
    for answer in answers {
        if trivial(&answer.line) {
            sorted.trivial += 1;
        } else if given.contains(&answer.line) {
            sorted.given += 1;
        } else if SHOWN_ON_PURPOSE
            .iter()
            .any(|(line, _)| *line == answer.line)
        {
            sorted.shown_on_purpose += 1;
        } else {
            sorted.lines.push(answer);
        }
    }
    Ok(sorted)
}

/// Every place in `dir` (except `.git` and `target`) where an answer line or
/// a generator marker appears, as `file:line: what`.
pub fn leaks(dir: &Path, answers: &[Answer]) -> Result<Vec<String>, String> {
    let mut found = Vec::new();
    for path in files(dir)? {
        let relative = path
            .strip_prefix(dir)
            .unwrap_or(&path)
            .display()
            .to_string();
        let Ok(text) = fs::read_to_string(&path) else {
            continue; // not text: nothing a student could read an answer from
        };
        for (index, line) in text.lines().enumerate() {
            let line = line.trim();
            if let Some(marker) = MARKERS.iter().find(|marker| line.contains(*marker)) {
                found.push(format!(
                    "{relative}:{}: the generator marker `{marker}`",
                    index + 1
                ));
            }
            for answer in answers {
                if line.contains(answer.line.as_str()) {
                    found.push(format!(
                        "{relative}:{}: `{}`, the answer at solution/src/{}",
                        index + 1,
                        answer.line,
                        answer.at
                    ));
                }
            }
        }
    }
    Ok(found)
}

/// Every file under `dir`, recursively, sorted; `.git` and `target` left out.
fn files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in fs::read_dir(&folder).map_err(|e| format!("{}: {e}", folder.display()))? {
            let path = entry.map_err(|e| e.to_string())?.path();
            let name = path.file_name().unwrap_or_default();
            if path.is_dir() {
                if name != ".git" && name != "target" {
                    pending.push(path);
                }
            } else {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_lines_are_trivial_and_code_is_not() {
        for line in [
            "}",
            "} else {",
            "Ok(())",
            "None",
            "break;",
            "});",
            "// the probe",
        ] {
            assert!(trivial(line), "{line}");
        }
        for line in [
            "failures >= self.threshold",
            "generation != self.generation",
            "Deadline::At(at) => now >= at,",
            "return Err(ExecuteError::Cancelled { attempts_made });",
            "// a failed probe reopens the circuit",
        ] {
            assert!(!trivial(line), "{line}");
        }
    }
}
