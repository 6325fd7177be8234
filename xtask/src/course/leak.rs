//! The proof that a student edition holds no answer: no line of any TODO
//! region's reference code in `solution/src` appears anywhere in it, and no
//! marker of the starter's generator either.
//!
//! A line "appears" if some line of an exported file contains it once both
//! are trimmed, so a patch line (`-    code`) or a quotation is caught too.
//! Lines too plain to give anything away are skipped: see [`trivial`].
//!
//! A line check misses an answer written with other names: a model of the
//! breaker whose match arms are the TODO regions, renamed. [`lookalikes`]
//! looks for those by shape: each region's tokens with every name replaced
//! by a placeholder, found in long runs in a test, a hint or a handout's
//! code.

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

/// Every line of reference code the student writes, blank lines aside:
/// inside a TODO region (the stand-in lines after `// STARTER:` are the
/// starter's own code, so they are not answers), inside a `WITH TODO`
/// block (helpers an untouched starter lacks), and anywhere in a file the
/// student designs whole (`// STARTER DESIGN:`), where [`to_check`] then sets
/// aside what the starter's design file gives anyway.
pub fn answers(solution_src: &Path) -> Result<Vec<Answer>, String> {
    let mut found = Vec::new();
    for (name, text) in sources(solution_src)? {
        let designed = text
            .lines()
            .any(|line| line.trim_start().starts_with("// STARTER DESIGN:"));
        let (mut inside, mut with, mut solution_only) = (false, false, false);
        for (index, line) in text.lines().enumerate() {
            let trimmed = line.trim();
            if trimmed.starts_with("// BEGIN TODO(") {
                inside = true;
            } else if trimmed.starts_with("// STARTER:") || trimmed.starts_with("// END TODO") {
                inside = false;
            } else if trimmed.starts_with("// BEGIN WITH TODO(") {
                with = true;
            } else if trimmed.starts_with("// END WITH TODO") {
                with = false;
            } else if trimmed.starts_with("// BEGIN SOLUTION ONLY") {
                solution_only = true;
            } else if trimmed.starts_with("// END SOLUTION ONLY") {
                solution_only = false;
            } else if (inside || with || (designed && !solution_only)) && !trimmed.is_empty() {
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
/// one that names at most one thing besides keywords and numbers, a
/// `#[derive(...)]` of standard traits, an import from `std`, or a comment
/// of three words or fewer. In today's solution that is 30 of the
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
    // Every other type in the kit derives the same standard traits: which
    // of them a type derives shows nothing of what it holds or does.
    if line.starts_with("#[derive(") {
        return true;
    }
    // Nor does an import from the standard library: every tool in the kit
    // imports its collections, and a student's design that needs a map
    // finds one in `std` without a hint.
    if line.starts_with("use std::") {
        return true;
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
const SHOWN_ON_PURPOSE: &[(&str, &str)] = &[
    (
        "Recorded::Counted",
        "the public answer to a report (B9), which the tests, the permit and \
         the handout all name; it shows nothing of where a design counts",
    ),
    (
        "Heard::Opened",
        "the public answer of `hear` to a newer trip (F2), which the tests and \
         the handout name; it shows nothing of how a view tells news from a \
         duplicate",
    ),
    (
        "Heard::Closed",
        "the public answer of `hear` to a newer close (F2), named by the tests \
         as `Heard::Opened` is",
    ),
    (
        "stamp: Stamp,",
        "a parameter of every method that hears a message, and a field of the \
         given `LeaseTerms`; it shows nothing of what a view remembers",
    ),
    (
        "delay: Duration,",
        "a parameter of any function that waits (the demo's gateway and \
         scenarios have one); it shows nothing of the retry loop",
    ),
    (
        "mode: Mode,",
        "the demo's gateway keeps a `Mode` of its own (how it fails); the \
         same two words say nothing of how a circuit is represented",
    ),
    (
        "if cancel.is_cancelled() {",
        "the demo's own Ctrl-C check (demo/src/main.rs): one call of tokio-util's \
     public `CancellationToken` API, which rule E2 names; it shows nothing of \
     where `execute` must check",
    ),
];

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

/// Every file of the solution's sources, by name, with its text.
fn sources(solution_src: &Path) -> Result<Vec<(String, String)>, String> {
    crate::scratch::rs_files(solution_src)?
        .into_iter()
        .map(|name| {
            let text =
                fs::read_to_string(solution_src.join(&name)).map_err(|e| format!("{name}: {e}"))?;
            Ok((name, text))
        })
        .collect()
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

/// Regions shorter than this, in tokens, are left to the line check: a
/// shape that short (`self.x = Y::Z { w: 0 };`) is everywhere in Rust.
const SHAPE_MIN_TOKENS: usize = 24;
/// A run shorter than this, in tokens, is a common idiom, not a copy.
const SHAPE_RUN: usize = 12;
/// The share of a region's tokens, in long runs, that makes a file an
/// answer to it. A model of the breaker whose arms were the circuit's TODO
/// regions covered 54-97% of four of them; no test, hint or handout of the
/// kit covers more than 40% of any region.
const SHAPE_SHARE: f64 = 0.5;

/// A TODO region of the solution as a sequence of shape tokens.
#[derive(Debug, Clone)]
pub struct Region {
    /// `circuit.rs:249`, the line of its `BEGIN TODO`.
    pub at: String,
    tokens: Vec<String>,
}

/// Every TODO region of the solution long enough to have a shape of its own.
pub fn regions(solution_src: &Path) -> Result<Vec<Region>, String> {
    let mut found = Vec::new();
    for (name, text) in sources(solution_src)? {
        let mut open: Option<(String, String)> = None;
        for (index, line) in text.lines().enumerate() {
            let trimmed = line.trim();
            if trimmed.starts_with("// BEGIN TODO(") {
                open = Some((format!("{name}:{}", index + 1), String::new()));
            } else if trimmed.starts_with("// STARTER:") || trimmed.starts_with("// END TODO") {
                if let Some((at, code)) = open.take() {
                    found.push(Region {
                        at,
                        tokens: shape(&code),
                    });
                }
            } else if let Some((_, code)) = open.as_mut() {
                code.push_str(line);
                code.push('\n');
            }
        }
    }
    found.retain(|region| region.tokens.len() >= SHAPE_MIN_TOKENS);
    Ok(found)
}

/// Rust code as tokens, comments dropped, every name but a keyword (or a
/// prelude variant) replaced by `_`: what is left is the code's shape.
fn shape(code: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    for line in code.lines() {
        let line = line.split("//").next().unwrap_or_default();
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if c.is_whitespace() {
                continue;
            }
            if c.is_alphanumeric() || c == '_' {
                let mut word = c.to_string();
                while let Some(&next) = chars.peek() {
                    if !(next.is_alphanumeric() || next == '_') {
                        break;
                    }
                    word.push(next);
                    chars.next();
                }
                let keep = PLAIN_WORDS.contains(&word.as_str()) || c.is_ascii_digit();
                tokens.push(if keep { word } else { "_".to_owned() });
                continue;
            }
            let pair: String = [c].into_iter().chain(chars.peek().copied()).collect();
            if [
                "::", "->", "=>", ">=", "<=", "==", "!=", "&&", "||", "+=", "-=",
            ]
            .contains(&pair.as_str())
            {
                chars.next();
                tokens.push(pair);
            } else {
                tokens.push(c.to_string());
            }
        }
    }
    tokens
}

/// The code a student could paste from a file: all of a Rust file, the
/// fenced blocks of a Markdown one, nothing of any other.
fn pasteable(path: &Path, text: &str) -> Option<String> {
    match path.extension().and_then(|extension| extension.to_str()) {
        Some("rs") => Some(text.to_owned()),
        Some("md") => Some(
            text.split("```")
                .skip(1)
                .step_by(2)
                .map(|block| block.split_once('\n').map_or("", |(_, code)| code))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
}

/// The share of `region`'s tokens that lie in a run of [`SHAPE_RUN`] or
/// more tokens that `file` also has, in the same order.
fn covered(region: &[String], file: &[String]) -> f64 {
    if region.len() < SHAPE_RUN || file.len() < SHAPE_RUN {
        return 0.0;
    }
    // A common run of L >= SHAPE_RUN tokens is L - SHAPE_RUN + 1 common
    // windows of SHAPE_RUN, and a common window is such a run: so the
    // region's tokens in long common runs are those its common windows cover.
    let windows: std::collections::HashSet<&[String]> = file.windows(SHAPE_RUN).collect();
    let mut in_run = vec![false; region.len()];
    for (start, window) in region.windows(SHAPE_RUN).enumerate() {
        if windows.contains(window) {
            in_run[start..start + SHAPE_RUN].fill(true);
        }
    }
    in_run.iter().filter(|covered| **covered).count() as f64 / region.len() as f64
}

/// Where a student looks for help while writing a step: the suite, the
/// hints and the handouts. The tools are left to the line check: a tool's
/// generic code (a sorted listing, a map lookup) can share a region's
/// shape without answering anything about a breaker.
fn read_while_working(relative: &Path) -> bool {
    relative.starts_with("tests")
        || relative == Path::new("steps.toml")
        || relative
            .extension()
            .is_some_and(|extension| extension == "md")
}

/// Every test, hint or handout in `dir` shaped like a TODO region's answer,
/// as `file: what`.
pub fn lookalikes(dir: &Path, regions: &[Region]) -> Result<Vec<String>, String> {
    let mut found = Vec::new();
    for path in files(dir)? {
        let relative = path.strip_prefix(dir).unwrap_or(&path);
        if !read_while_working(relative) {
            continue;
        }
        let Ok(text) = fs::read_to_string(&path) else {
            continue;
        };
        let Some(code) = pasteable(&path, &text) else {
            continue;
        };
        let tokens = shape(&code);
        for region in regions {
            let share = covered(&region.tokens, &tokens);
            if share >= SHAPE_SHARE {
                found.push(format!(
                    "{}: shaped like the answer at solution/src/{}: {:.0}% of its {} tokens, \
                     names aside, in runs of {SHAPE_RUN} or more",
                    relative.display(),
                    region.at,
                    share * 100.0,
                    region.tokens.len()
                ));
            }
        }
    }
    Ok(found)
}

/// What a free function takes and gives, names aside: its parameter types,
/// sorted, and its return type. A function that returns `impl Fn(A) -> R`
/// (a backoff policy) takes `A` too and gives `R`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Signature {
    takes: Vec<String>,
    gives: String,
}

/// The text of `code` from `start` to the bracket that closes the one at
/// `start`, counting `()`, `<>` and `[]` (`->` is not a bracket).
fn bracketed(code: &str, start: usize) -> Option<&str> {
    let mut depth = 0i32;
    let mut previous = ' ';
    for (offset, c) in code[start..].char_indices() {
        match c {
            '(' | '<' | '[' => depth += 1,
            '>' if previous == '-' => {}
            ')' | '>' | ']' => depth -= 1,
            _ => {}
        }
        previous = c;
        if depth == 0 {
            return Some(&code[start + 1..start + offset]);
        }
    }
    None
}

/// `text` split at the commas outside any bracket.
fn top_level(text: &str) -> Vec<String> {
    let (mut parts, mut part, mut depth, mut previous) = (Vec::new(), String::new(), 0, ' ');
    for c in text.chars() {
        match c {
            '(' | '<' | '[' => depth += 1,
            '>' if previous == '-' => {}
            ')' | '>' | ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut part));
                previous = c;
                continue;
            }
            _ => {}
        }
        previous = c;
        part.push(c);
    }
    parts.push(part);
    parts
        .into_iter()
        .map(|part| part.split_whitespace().collect::<String>())
        .filter(|part| !part.is_empty())
        .collect()
}

/// Every `fn` in `code` that takes no `self`, by where it starts, with its
/// name and what it takes and gives.
fn signatures(code: &str) -> Vec<(usize, String, Signature)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(offset) = code[from..].find("fn ") {
        let start = from + offset;
        from = start + 3;
        let boundary = code[..start]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        let name: String = code[from..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !boundary || name.is_empty() {
            continue;
        }
        let mut at = from + name.len();
        if code[at..].starts_with('<') {
            let Some(generics) = bracketed(code, at) else {
                continue;
            };
            at += generics.len() + 2;
        }
        if !code[at..].starts_with('(') {
            continue;
        }
        let Some(parameters) = bracketed(code, at) else {
            continue;
        };
        let parameters = top_level(parameters);
        if parameters
            .iter()
            .any(|parameter| parameter.ends_with("self"))
        {
            continue;
        }
        let mut takes: Vec<String> = parameters
            .iter()
            .map(|parameter| {
                parameter
                    .split_once(':')
                    .map_or("", |(_, ty)| ty)
                    .to_owned()
            })
            .collect();
        let rest = code[at + parameters_len(code, at)..].trim_start();
        let mut gives = match rest.strip_prefix("->") {
            Some(rest) => {
                let end = rest.find(['{', ';']).unwrap_or(rest.len());
                let end = rest[..end].find(" where").unwrap_or(end);
                rest[..end].split_whitespace().collect::<String>()
            }
            None => "()".to_owned(),
        };
        // A policy: what its closure takes and gives.
        if let Some(closure) = gives.strip_prefix("implFn(").map(str::to_owned) {
            let inner = bracketed(&gives, "implFn".len())
                .unwrap_or_default()
                .to_owned();
            takes.extend(top_level(&inner));
            let after = &closure[inner.len() + 1..];
            gives = after
                .strip_prefix("->")
                .map_or("()", |rest| rest.split('+').next().unwrap_or_default())
                .to_owned();
        }
        takes.sort();
        found.push((start, name, Signature { takes, gives }));
    }
    found
}

/// How far the parameter list that opens at `at` reaches, brackets
/// included.
fn parameters_len(code: &str, at: usize) -> usize {
    bracketed(code, at).map_or(0, |inside| inside.len() + 2)
}

/// The free functions of the solution that hold a TODO region: a student
/// writes their bodies, so a test function that takes and gives the same
/// could be pasted in whole.
fn answered_functions(solution_src: &Path) -> Result<Vec<(String, Signature)>, String> {
    let mut found = Vec::new();
    for (name, code) in sources(solution_src)? {
        let functions = signatures(&code);
        let mut from = 0;
        while let Some(offset) = code[from..].find("// BEGIN TODO(") {
            let region = from + offset;
            from = region + 1;
            // The innermost function that starts before the region; one
            // with a `self` is not in the list, and then neither is this.
            let enclosing = code[..region]
                .rfind("fn ")
                .and_then(|start| functions.iter().find(|(at, ..)| *at == start));
            if let Some((_, function, signature)) = enclosing {
                let entry = (format!("{name}: fn {function}"), signature.clone());
                if !found.contains(&entry) {
                    found.push(entry);
                }
            }
        }
    }
    Ok(found)
}

/// Every test or hint function in `dir` that takes and gives what a
/// function the student writes does, as `file: what`. A test's helper that
/// works out the expected delay from the same inputs is that answer.
pub fn twins(dir: &Path, solution_src: &Path) -> Result<Vec<String>, String> {
    let answered = answered_functions(solution_src)?;
    let mut found = Vec::new();
    for path in files(dir)? {
        let relative = path.strip_prefix(dir).unwrap_or(&path);
        if !read_while_working(relative) {
            continue;
        }
        let Some(code) = fs::read_to_string(&path)
            .ok()
            .and_then(|text| pasteable(&path, &text))
        else {
            continue;
        };
        for (_, name, signature) in signatures(&code) {
            for (function, answered) in &answered {
                if signature == *answered && !answered.takes.is_empty() {
                    found.push(format!(
                        "{}: fn {name} takes {:?} and gives {}, as solution/src/{function} does: \
                         it could be pasted as that answer",
                        relative.display(),
                        signature.takes,
                        signature.gives
                    ));
                }
            }
        }
    }
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
            "#[derive(Debug, Clone, Copy, PartialEq, Eq)]",
            "use std::collections::BTreeMap;",
        ] {
            assert!(trivial(line), "{line}");
        }
        for line in [
            "failures >= self.threshold",
            "generation != self.generation",
            "Deadline::At(at) => now >= at,",
            "return Err(ExecuteError::Cancelled { attempts_made });",
            "// a failed probe reopens the circuit",
            "use crate::deadline::Deadline;",
        ] {
            assert!(!trivial(line), "{line}");
        }
    }

    #[test]
    fn a_renamed_answer_has_the_answer_s_shape_and_a_check_of_the_rule_does_not() {
        let answer = "let failures = failures + 1;\nif failures >= self.threshold {\n    \
                      self.trip(clock.now());\n} else {\n    self.mode = Mode::Closed { failures };\n}\n";
        let renamed = "let counted = consecutive + 1;\nif counted >= self.limit {\n    \
                       self.open(time.read());\n} else {\n    self.circuit = Circuit::Closed { consecutive };\n}\n";
        let law = "let failures = failures + 1;\nif failures >= self.threshold {\n    \
                   moves(seen, self.opened(seen), RULE)\n} else {\n    \
                   stays(seen, State::Closed { failures }, RULE)\n}\n";
        let region = shape(answer);
        assert_eq!(region.len(), 40);
        assert_eq!(covered(&region, &shape(renamed)), 1.0);
        let share = covered(&region, &shape(law));
        assert!(share < SHAPE_SHARE, "{share}");
        // Names and comments never count; numbers and keywords do.
        assert_eq!(
            shape("self.x = 0; // why"),
            ["self", ".", "_", "=", "0", ";"]
        );
    }

    #[test]
    fn markdown_is_pasteable_only_inside_its_fences() {
        let text = "prose with self.mode = x\n```rust\nlet a = 1;\n```\nmore\n```\nb\n```\n";
        assert_eq!(
            pasteable(Path::new("LAB.md"), text).as_deref(),
            Some("let a = 1;\n\nb\n")
        );
        assert_eq!(pasteable(Path::new("x.svg"), text), None);
    }

    #[test]
    fn a_test_function_that_takes_and_gives_what_an_answer_does_is_its_twin() {
        let solution = "pub fn exponential(\n    base: Duration,\n    cap: Duration,\n) -> impl Fn(u32) -> Duration + Clone + Send + Sync {\n    move |attempt| {\n        // BEGIN TODO(5): x\n    }\n}\nfn doubled(base: Duration, doublings: u32) -> Duration {\n}\nimpl X {\n    fn state(&self, now: Duration) -> State {\n    }\n}\n";
        let found = signatures(solution);
        let shapes: Vec<(&str, Vec<&str>, &str)> = found
            .iter()
            .map(|(_, name, s)| {
                (
                    name.as_str(),
                    s.takes.iter().map(String::as_str).collect(),
                    s.gives.as_str(),
                )
            })
            .collect();
        assert_eq!(
            shapes,
            [
                (
                    "exponential",
                    vec!["Duration", "Duration", "u32"],
                    "Duration"
                ),
                ("doubled", vec!["Duration", "u32"], "Duration"),
            ]
        );
        let oracle =
            "fn exact_exponential(base: Duration, cap: Duration, attempt: u32) -> Duration {";
        assert_eq!(signatures(oracle)[0].2, found[0].2);
        let helper = "fn ms(n: u64) -> Duration { Duration::from_millis(n) }";
        assert_ne!(signatures(helper)[0].2, found[1].2);
    }
}
