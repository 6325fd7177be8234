//! `cargo xtask predict STEP [--answer A] [--student ID] [--again]`: asks
//! the student's own question for a step, before they write its code, and
//! records the answer in `predictions.toml` for the grade.
//!
//! The question's numbers are drawn from the student's seed, the grader's
//! (FNV-1a of the student id), so neighbours predict different things. The
//! id is `--student`, else `LAB_STUDENT`, else `git config user.email`;
//! the record keeps it.
//!
//! Whether a prediction came in time is read off the code: the record keeps
//! a fingerprint of the step's TODO regions in `starter/src` as they were
//! when it was made ([`fingerprint`]), and it is in time when that equals
//! the untouched starter's ([`pristine`]). Only the first prediction of a
//! step counts; `--again` replaces it, as a late one.
//!
//! The command writes `predictions.toml` at the top of the repository and
//! nothing else; nothing else writes it.

mod questions;

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::path::Path;
use std::process::Command;

use crate::grading::grade::fnv1a;
use crate::{root, students::filter};
pub(crate) use questions::{STEPS, ask};

/// The record, at the top of the student's repository.
pub(crate) const FILE: &str = "predictions.toml";
/// The untouched starter's fingerprints, which the student edition ships
/// (its own `starter/src` is the student's work); the kit's starter is
/// untouched, so the kit computes them from it instead.
pub(crate) const PRISTINE_FILE: &str = "grading/starter-fingerprints.toml";

const USAGE: &str = "usage: just predict STEP [--answer ANSWER] [--student ID] [--again]
  asks step STEP's question (steps 1-8), before you write the step's code, and records your
  answer in predictions.toml; without --answer it reads the answer from the terminal";

const HEADER: &str = "# Your predictions, one per step, written by `just predict STEP`: commit this
# file with your work. A prediction counts when it is right and came in time,
# before the step's code was written: `fingerprint` is that of the step's
# TODO code when you answered, and it must match the untouched starter's.
";

/// One recorded prediction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Record {
    pub step: u32,
    pub student: String,
    pub seed: u64,
    pub parameters: String,
    pub answer: String,
    pub fingerprint: String,
    /// Made with `--again`, replacing an earlier one: late, whatever the code.
    pub again: bool,
}

pub(crate) fn predict(args: &[String]) -> Result<(), String> {
    let mut step = None;
    let mut answer = None;
    let mut student = None;
    let mut again = false;
    let mut args = args.iter().peekable();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--answer" => {
                // The words up to the next option: `--answer 3 2` as well
                // as `--answer "3 2"`.
                let mut words = Vec::new();
                while let Some(word) = args.next_if(|word| !word.starts_with("--")) {
                    words.push(word.clone());
                }
                if words.is_empty() {
                    return Err(format!("--answer needs the answer after it\n{USAGE}"));
                }
                answer = Some(words.join(" "));
            }
            "--student" => {
                student = Some(args.next().ok_or(USAGE)?.clone());
            }
            "--again" => again = true,
            flag if flag.starts_with('-') && flag.parse::<i64>().is_err() => {
                return Err(format!("unknown option `{flag}`\n{USAGE}"));
            }
            text if step.is_none() => step = Some(text.to_owned()),
            _ => return Err(USAGE.to_owned()),
        }
    }
    let Some(step) = step.filter(|step| !step.is_empty()) else {
        return Err(USAGE.to_owned());
    };
    let (number, name) = filter::resolve(&step)?.ok_or(USAGE)?;
    let root = root();
    let student = match student.or_else(|| std::env::var("LAB_STUDENT").ok()) {
        Some(id) if !id.trim().is_empty() => id.trim().to_owned(),
        _ => git_email(&root).ok_or(
            "who are you? pass `--student ID` (your course id), or set `git config user.email`",
        )?,
    };
    check_student(&student)?;
    let seed = fnv1a(&student);
    let Some(question) = ask(number, seed) else {
        return Err(format!(
            "step {number} ({name}) has no prediction question; steps {}-{} have one",
            STEPS[0],
            STEPS[STEPS.len() - 1]
        ));
    };
    let file = root.join(FILE);
    let mut records = match fs::read_to_string(&file) {
        Ok(text) => parse(&text)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
        Err(e) => return Err(format!("cannot read {FILE}: {e}")),
    };
    println!("Step {number} ({name}), for {student}:\n");
    println!("{}\n", wrap(&question.text, 78));
    let pristine = pristine(&root)?;
    let replaced = records.get(&number).cloned();
    if let (Some(first), false) = (&replaced, again) {
        println!(
            "You predicted `{}` already ({}); your first prediction is the one that counts, so \
             it stays. `just predict {number} --again` replaces it, as a late one (no points).",
            first.answer,
            if in_time(first, &pristine) {
                "in time"
            } else {
                "late"
            }
        );
        return Ok(());
    }
    let answer = match answer {
        Some(answer) => answer,
        None => read_answer(question.form)?,
    };
    let answer = questions::parse_answer(question.form, &answer)?;
    let fingerprint = fingerprint(&root.join("starter/src"), number)?;
    let record = Record {
        step: number,
        student,
        seed,
        parameters: question.parameters,
        answer: answer.clone(),
        fingerprint,
        again: again && replaced.is_some(),
    };
    let on_time = in_time(&record, &pristine);
    records.insert(number, record);
    fs::write(&file, render(&records)).map_err(|e| format!("cannot write {FILE}: {e}"))?;
    println!("Recorded in {FILE}: `{answer}` for step {number}.");
    if on_time {
        println!(
            "In time: step {number}'s TODO code is still the starter's. Commit {FILE} with your \
             work; `just grade` tells what really happened."
        );
    } else if again {
        println!("Late, as a second prediction: it earns nothing, but `just grade` compares it.");
    } else {
        println!(
            "Late: step {number}'s TODO code has already changed since the starter, so this \
             prediction earns nothing; `just grade` still compares it with what really happened."
        );
    }
    Ok(())
}

/// The student's address from git, if it knows one.
pub(crate) fn git_email(root: &Path) -> Option<String> {
    let output = Command::new("git")
        .current_dir(root)
        .args(["config", "user.email"])
        .output()
        .ok()?;
    let email = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    (output.status.success() && !email.is_empty()).then_some(email)
}

/// An id goes into a quoted TOML string, read back by hand.
fn check_student(id: &str) -> Result<(), String> {
    if id.chars().any(|c| c == '"' || c == '\\' || c.is_control()) {
        return Err(format!(
            "the student id {id:?} may not hold quotes, backslashes or control characters"
        ));
    }
    Ok(())
}

/// The answer, from the terminal or a pipe.
fn read_answer(form: questions::Form) -> Result<String, String> {
    print!("Your prediction ({}): ", questions::how_to_answer(form));
    std::io::stdout().flush().map_err(|e| e.to_string())?;
    let mut line = String::new();
    let stdin = std::io::stdin();
    let read = stdin
        .lock()
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    if !stdin.is_terminal() {
        // The answer came from a pipe: show it, as a terminal would have.
        println!("{}", line.trim());
    }
    if read == 0 || line.trim().is_empty() {
        return Err("no answer given: type it after the question, or pass `--answer`".to_owned());
    }
    Ok(line)
}

/// `text` broken into lines of at most `width` characters, at spaces.
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push_str(&line);
    out
}

/// Whether a prediction came in time: made first, while the step's TODO
/// code was still the untouched starter's.
pub(crate) fn in_time(record: &Record, pristine: &BTreeMap<u32, String>) -> bool {
    !record.again && pristine.get(&record.step) == Some(&record.fingerprint)
}

/// The fingerprint of step `step`'s TODO code in the crate sources `src`.
pub(crate) fn fingerprint(src: &Path, step: u32) -> Result<String, String> {
    let mut files = Vec::new();
    for name in crate::scratch::rs_files(src)? {
        let path = src.join(&name);
        let text = fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        files.push((name, text));
    }
    Ok(fingerprint_of(&files, step))
}

/// The fingerprint of step `step`'s TODO regions among `files` (name and
/// text): a hash of each region, in file order, with its file's name.
///
/// A region is a comment that names `TODO(step)`, the comment lines right
/// under it, and the stand-in the starter puts under those: a `todo!(..)`,
/// the note that it is skipped for now, or a stand-in's code up to the end
/// of its block. Whitespace is left out, so
/// reformatting changes nothing; any other change to a marker or its
/// stand-in, or a marker removed, does, while code outside the regions (the
/// other steps' included) does not.
pub(crate) fn fingerprint_of(files: &[(String, String)], step: u32) -> String {
    let mut sorted: Vec<&(String, String)> = files.iter().collect();
    sorted.sort();
    let mut hashed = String::new();
    for (name, text) in sorted {
        for region in regions(text, step) {
            hashed.push_str(name);
            hashed.push('\n');
            hashed.push_str(&region);
            hashed.push('\n');
        }
    }
    format!("{:016x}", fnv1a(&hashed))
}

/// Step `step`'s TODO regions in one file, each without its whitespace.
fn regions(text: &str, step: u32) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let marker = format!("TODO({step})");
    let indent = |line: &str| line.len() - line.trim_start().len();
    let mut found = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        // One comment may name several steps' TODOs, when one stand-in
        // holds them all, or name a step whose code goes into another
        // step's stand-in: the region is then each of those steps'.
        if !names_a_todo(line) || !line.contains(&marker) {
            continue;
        }
        let mut region = vec![*line];
        let mut rest = lines[at + 1..].iter().peekable();
        // The comment's own further lines, the markers right under it and
        // the starter's notes, up to the code.
        let mut skipped = false;
        while let Some(line) = rest.next_if(|line| is_comment(line)) {
            region.push(line);
            if line.trim_start().starts_with("// (Skipped for now") {
                skipped = true;
                break;
            }
        }
        let next = rest.peek().map_or("", |line| line.trim_start());
        if skipped {
            // Nothing stands in: the rule is simply absent for now.
        } else if next.starts_with("todo!(") {
            // Up to the line that closes the call.
            let mut depth = 0i32;
            for line in rest {
                region.push(line);
                depth += line.matches('(').count() as i32 - line.matches(')').count() as i32;
                if depth <= 0 {
                    break;
                }
            }
        } else {
            // A stand-in's code, or whatever replaced it: the rest of the
            // block, up to a blank line or the next marker.
            for line in rest {
                if line.trim().is_empty() || indent(line) < indent(lines[at]) || names_a_todo(line)
                {
                    break;
                }
                region.push(line);
            }
        }
        let squeezed: Vec<String> = region
            .iter()
            .map(|line| line.split_whitespace().collect())
            .collect();
        found.push(squeezed.concat());
    }
    found
}

/// A plain `//` comment, not a doc comment.
fn is_comment(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with("//") && !line.starts_with("///") && !line.starts_with("//!")
}

/// A comment naming a step's TODO: `TODO(` and a number.
fn names_a_todo(line: &str) -> bool {
    is_comment(line)
        && line
            .match_indices("TODO(")
            .any(|(at, found)| line[at + found.len()..].starts_with(|c: char| c.is_ascii_digit()))
}

/// The untouched starter's fingerprint for each step with a question: read
/// from [`PRISTINE_FILE`] in the student edition, computed from the kit's
/// own starter otherwise.
pub(crate) fn pristine(root: &Path) -> Result<BTreeMap<u32, String>, String> {
    match fs::read_to_string(root.join(PRISTINE_FILE)) {
        Ok(text) => parse_pristine(&text),
        Err(_) => {
            let src = root.join("starter/src");
            STEPS
                .iter()
                .map(|&step| Ok((step, fingerprint(&src, step)?)))
                .collect()
        }
    }
}

/// [`PRISTINE_FILE`]'s text for the untouched starter at `src`: the
/// exporter writes it into the student edition.
pub(crate) fn pristine_file(src: &Path) -> Result<String, String> {
    let mut out = String::from(
        "# The fingerprint of each step's TODO code in the untouched starter, written by\n\
         # the export: `just predict` and `just grade` compare a prediction's with it to\n\
         # tell whether it came before the step's code. Not to be edited.\n",
    );
    for step in STEPS {
        out.push_str(&format!("step{step} = \"{}\"\n", fingerprint(src, step)?));
    }
    Ok(out)
}

fn parse_pristine(text: &str) -> Result<BTreeMap<u32, String>, String> {
    let mut found = BTreeMap::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let parsed = line.split_once('=').and_then(|(key, value)| {
            let step = key.trim().strip_prefix("step")?.parse().ok()?;
            Some((step, unquote(value)?))
        });
        let (step, value) = parsed.ok_or_else(|| format!("{PRISTINE_FILE}: `{line}`?"))?;
        found.insert(step, value);
    }
    Ok(found)
}

fn unquote(value: &str) -> Option<String> {
    let value = value.trim();
    let inner = value.strip_prefix('"')?.strip_suffix('"')?;
    (!inner.contains('"')).then(|| inner.to_owned())
}

/// Reads `predictions.toml`: a `[stepN]` table per prediction.
pub(crate) fn parse(text: &str) -> Result<BTreeMap<u32, Record>, String> {
    let mut records = BTreeMap::new();
    let mut fields: Option<(u32, BTreeMap<String, String>)> = None;
    let finish = |fields: Option<(u32, BTreeMap<String, String>)>,
                  records: &mut BTreeMap<u32, Record>|
     -> Result<(), String> {
        let Some((step, mut fields)) = fields else {
            return Ok(());
        };
        let mut take = |key: &str| {
            fields
                .remove(key)
                .ok_or_else(|| format!("{FILE}, [step{step}]: no `{key}`"))
        };
        let record = Record {
            step,
            student: take("student")?,
            seed: take("seed")?
                .parse()
                .map_err(|_| format!("{FILE}, [step{step}]: `seed` is not a number"))?,
            parameters: take("parameters")?,
            answer: take("answer")?,
            fingerprint: take("fingerprint")?,
            again: match take("again")?.as_str() {
                "true" => true,
                "false" => false,
                _ => return Err(format!("{FILE}, [step{step}]: `again` is true or false")),
            },
        };
        if let Some(key) = fields.keys().next() {
            return Err(format!("{FILE}, [step{step}]: unknown key `{key}`"));
        }
        records.insert(step, record);
        Ok(())
    };
    for (index, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = |why: &str| format!("{FILE}:{}: {why}: `{line}`", index + 1);
        if let Some(header) = line.strip_prefix('[') {
            let step = header
                .strip_suffix(']')
                .and_then(|name| name.strip_prefix("step"))
                .and_then(|n| n.parse::<u32>().ok())
                .ok_or_else(|| at("expected a table `[stepN]`"))?;
            finish(fields.take(), &mut records)?;
            if records.contains_key(&step) {
                return Err(at("this step is recorded twice"));
            }
            fields = Some((step, BTreeMap::new()));
            continue;
        }
        let Some((_, table)) = fields.as_mut() else {
            return Err(at("expected a table `[stepN]` first"));
        };
        let (key, value) = line
            .split_once('=')
            .ok_or_else(|| at("expected `key = value`"))?;
        let value = value.trim();
        let value = if value.starts_with('"') {
            unquote(value).ok_or_else(|| at("a string without its closing quote"))?
        } else {
            value.to_owned()
        };
        table.insert(key.trim().to_owned(), value);
    }
    finish(fields, &mut records)?;
    Ok(records)
}

/// `predictions.toml`'s text for `records`, in step order.
pub(crate) fn render(records: &BTreeMap<u32, Record>) -> String {
    let mut out = String::from(HEADER);
    for record in records.values() {
        out.push_str(&format!(
            "\n[step{}]\nstudent = \"{}\"\nseed = {}\nparameters = \"{}\"\nanswer = \"{}\"\nfingerprint = \"{}\"\nagain = {}\n",
            record.step,
            record.student,
            record.seed,
            record.parameters,
            record.answer,
            record.fingerprint,
            record.again
        ));
    }
    out
}

/// One question's line in the grade.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Scored {
    pub step: u32,
    /// The recorded answer, if any.
    pub predicted: Option<String>,
    /// What really happened; shown only beside a recorded prediction, so
    /// that a grade run first cannot hand out the answers.
    pub truth: String,
    pub in_time: bool,
    /// Made with `--again`: late whatever the code.
    pub again: bool,
    pub right: bool,
    /// Why a recorded prediction was not taken at its word, if it was not.
    pub problem: Option<String>,
    pub points: f64,
    pub score: f64,
}

/// Scores the predictions in `text` (`predictions.toml`, if the student
/// handed one in): `points` are shared equally by the questions, and a
/// right prediction made in time earns its share. A record whose seed is
/// not its student's, or whose question is not the one that seed draws,
/// earns nothing.
///
/// A grade with a student id (`graded`) takes only that student's
/// predictions: a question drawn for another id is another question, and
/// trying ids until one shows a question already answered would otherwise
/// be free.
pub(crate) fn score(
    text: Option<&str>,
    pristine: &BTreeMap<u32, String>,
    points: f64,
    graded: Option<&str>,
) -> Result<Vec<Scored>, String> {
    if points <= 0.0 {
        return Ok(Vec::new());
    }
    let records = match text {
        Some(text) => parse(text)?,
        None => BTreeMap::new(),
    };
    let share = points / STEPS.len() as f64;
    let mut scored = Vec::new();
    for step in STEPS {
        let Some(record) = records.get(&step) else {
            scored.push(Scored {
                step,
                predicted: None,
                truth: String::new(),
                in_time: false,
                again: false,
                right: false,
                problem: None,
                points: share,
                score: 0.0,
            });
            continue;
        };
        let question = ask(step, record.seed).expect("every step of STEPS has a question");
        let problem = if graded.is_some_and(|graded| graded != record.student) {
            Some(format!(
                "made as {}, but this grade is {}'s: predict with `--student {}`",
                record.student,
                graded.unwrap_or_default(),
                graded.unwrap_or_default()
            ))
        } else if record.seed != fnv1a(&record.student) {
            Some(format!("seed {} is not {}'s", record.seed, record.student))
        } else if question.parameters != record.parameters {
            Some("the question recorded is not the one drawn for this student".to_owned())
        } else {
            None
        };
        let in_time = in_time(record, pristine);
        let right = problem.is_none() && record.answer == question.truth;
        scored.push(Scored {
            step,
            predicted: Some(record.answer.clone()),
            truth: question.truth,
            in_time,
            right,
            problem,
            points: share,
            again: record.again,
            // Unrounded, so that eight right shares sum to the whole bonus.
            score: if right && in_time { share } else { 0.0 },
        });
    }
    Ok(scored)
}

/// One line about a scored question, for the summary and Gradescope. What
/// really happened is shown only when `reveal` (a grade with the course's
/// held-back tests, whose report the instructor publishes): a student's own
/// `just grade` would otherwise hand out the answers, to be recorded again
/// in a fresh `predictions.toml` that no one can tell from a first one.
pub(crate) fn describe(scored: &Scored, reveal: bool) -> String {
    let Some(predicted) = &scored.predicted else {
        return format!("step {}: no prediction", scored.step);
    };
    if !reveal {
        return format!(
            "step {}: predicted `{predicted}`; recorded {}; whether it is right is shown when \
             the course grades it",
            scored.step,
            if scored.in_time { "in time" } else { "late" }
        );
    }
    let timing = if scored.in_time {
        "in time"
    } else if scored.again {
        "late (a second try)"
    } else {
        "late (made after the step's code changed)"
    };
    let mut line = format!(
        "step {}: predicted `{predicted}`; what really happened: `{}`; {}; {timing}",
        scored.step,
        scored.truth,
        if scored.right { "right" } else { "wrong" }
    );
    if let Some(problem) = &scored.problem {
        line.push_str(&format!(" ({problem})"));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of a starter: step 1 and step 2 regions of each kind, and
    /// code around them.
    const STARTER_FILE: &str = "impl Circuit {
    pub(crate) fn on_failure(&mut self, generation: Generation) -> Recorded {
        // TODO(3): a failure from an older generation changes nothing (B6, B9)
        // (Skipped for now, so the earlier steps keep working.)
        match self.phase {
            Phase::Closed => {
                // TODO(1): count the failure; at the threshold, open (B2)
                todo!(
                    \"TODO(1): count the failure; at the threshold, open (B2); see LAB.md, step 1\"
                )
            }
            Phase::HalfOpen => {
                // TODO(2): a failed probe reopens the circuit (B5)
                todo!(\"TODO(2): a failed probe reopens the circuit (B5); see LAB.md, step 2\")
            }
        }
        Recorded::Counted
    }

    fn outdated(&self, generation: Generation) -> bool {
        // TODO(3): has the circuit changed state since this generation? (B6)
        // For now, a stand-in that ignores this rule, so the earlier steps keep working:
        false
    }
}
";

    fn files(text: &str) -> Vec<(String, String)> {
        vec![("circuit.rs".to_owned(), text.to_owned())]
    }

    fn record(step: u32, student: &str, answer: &str, fingerprint: &str) -> Record {
        let seed = fnv1a(student);
        Record {
            step,
            student: student.to_owned(),
            seed,
            parameters: ask(step, seed).unwrap().parameters,
            answer: answer.to_owned(),
            fingerprint: fingerprint.to_owned(),
            again: false,
        }
    }

    #[test]
    fn the_fingerprint_follows_the_steps_todo_code_and_nothing_else() {
        let start = files(STARTER_FILE);
        let [one, two, three] = [1, 2, 3].map(|step| fingerprint_of(&start, step));
        assert_ne!(one, two);
        // Step 1's stand-in replaced: step 1 changes, steps 2 and 3 do not.
        let step1_done = STARTER_FILE.replace(
            "                todo!(\n                    \"TODO(1): count the failure; at the threshold, open (B2); see LAB.md, step 1\"\n                )\n",
            "                self.count(failures);\n",
        );
        assert_ne!(step1_done, STARTER_FILE);
        let done = files(&step1_done);
        assert_ne!(fingerprint_of(&done, 1), one);
        assert_eq!(fingerprint_of(&done, 2), two);
        assert_eq!(fingerprint_of(&done, 3), three);
        // A stand-in's code replaced counts too, and so does a marker gone.
        let stale_done = files(
            &STARTER_FILE.replace("        false\n", "        self.generation != generation\n"),
        );
        assert_ne!(fingerprint_of(&stale_done, 3), three);
        assert_eq!(fingerprint_of(&stale_done, 1), one);
        let unmarked = files(
            &STARTER_FILE.replace("// TODO(2): a failed probe reopens the circuit (B5)\n", ""),
        );
        assert_ne!(fingerprint_of(&unmarked, 2), two);
        // Other code, a comment elsewhere, reformatting: no change.
        let elsewhere = files(
            &STARTER_FILE
                .replace(
                    "Recorded::Counted",
                    "// Counted, whatever the state.\n        Recorded::Counted",
                )
                .replace("todo!(\"TODO(2)", "todo!(\n    \"TODO(2)")
                .replace(
                    "        false\n    }\n}\n",
                    "        false\n    }\n\n    fn trip(&mut self) {\n        self.open();\n    }\n}\n",
                ),
        );
        for edit in ["// Counted", "todo!(\n    \"TODO(2)", "fn trip"] {
            assert!(elsewhere[0].1.contains(edit), "{edit}");
        }
        for (step, before) in [(1, &one), (2, &two), (3, &three)] {
            assert_eq!(&fingerprint_of(&elsewhere, step), before, "step {step}");
        }
        // A marker naming two steps' TODOs is both steps' region.
        let shared = "    fn admit(&mut self) {\n        // TODO(5): closed admits; TODO(6): open refuses\n        todo!(\"TODO(5): closed admits; TODO(6): open refuses\")\n    }\n";
        let empty = fingerprint_of(&[], 5);
        assert_ne!(fingerprint_of(&files(shared), 5), empty);
        assert_ne!(fingerprint_of(&files(shared), 6), empty);
        // A step whose code goes into another's stand-in shares its region.
        let inside = "        // Cancellation (TODO(8): before each attempt) goes in this loop too.\n        // TODO(6): the retry loop\n        todo!(\"TODO(6): the retry loop\")\n    }\n";
        let written = inside.replace("todo!(\"TODO(6): the retry loop\")", "loop {}");
        for step in [6, 8] {
            assert_ne!(fingerprint_of(&files(inside), step), empty, "step {step}");
            assert_ne!(
                fingerprint_of(&files(inside), step),
                fingerprint_of(&files(&written), step),
                "step {step}"
            );
        }
        // TODO(1) is not TODO(13).
        let twelve = files(&format!(
            "{STARTER_FILE}// TODO(13): the window\n// (Skipped for now, so the earlier steps keep working.)\n"
        ));
        assert_eq!(fingerprint_of(&twelve, 1), one);
    }

    #[test]
    fn the_kits_starter_has_todo_code_for_every_question() {
        // Only the kit's starter stays untouched; a student's is their work.
        if !crate::root().join("solution").is_dir() {
            return;
        }
        let src = crate::root().join("starter/src");
        let empty = fingerprint_of(&[], 1);
        for step in STEPS {
            assert_ne!(fingerprint(&src, step).unwrap(), empty, "step {step}");
        }
        let file = pristine_file(&src).unwrap();
        assert_eq!(
            parse_pristine(&file).unwrap(),
            pristine(&crate::root()).unwrap()
        );
    }

    #[test]
    fn a_prediction_is_in_time_only_first_and_before_the_code() {
        let pristine = BTreeMap::from([(1, "aaaa".to_owned())]);
        let first = record(1, "ada", "4", "aaaa");
        assert!(in_time(&first, &pristine));
        let after_the_code = record(1, "ada", "4", "bbbb");
        assert!(!in_time(&after_the_code, &pristine));
        let again = Record {
            again: true,
            ..first.clone()
        };
        assert!(!in_time(&again, &pristine));
        assert!(!in_time(&record(2, "ada", "4", "aaaa"), &pristine));
    }

    #[test]
    fn records_survive_a_round_trip_and_bad_files_are_named() {
        let records = BTreeMap::from([
            (1, record(1, "ada@example.invalid", "4", "0123456789abcdef")),
            (
                4,
                Record {
                    again: true,
                    ..record(4, "ada@example.invalid", "half-open", "fedcba9876543210")
                },
            ),
        ]);
        let text = render(&records);
        assert_eq!(parse(&text).unwrap(), records);
        for (bad, says) in [
            ("student = \"x\"\n", "a table `[stepN]` first"),
            ("[step1]\nstudent = \"x\n", "closing quote"),
            ("[stepx]\n", "a table `[stepN]`"),
            ("[step1]\nstudent = \"x\"\n", "no `seed`"),
            (&format!("{text}\n[step1]\n"), "recorded twice"),
            (
                &text.replace("again = true", "again = maybe"),
                "true or false",
            ),
            (&text.replace("answer", "guess"), "no `answer`"),
        ] {
            let error = parse(bad).unwrap_err();
            assert!(error.contains(says), "{bad:?}: {error}");
        }
        assert!(check_student("ada\"").is_err());
        assert!(check_student("ada@example.invalid").is_ok());
    }

    #[test]
    fn a_right_prediction_in_time_earns_its_share_and_nothing_else_does() {
        let pristine: BTreeMap<u32, String> = STEPS
            .iter()
            .map(|&step| (step, format!("p{step}")))
            .collect();
        let truth = |step: u32| ask(step, fnv1a("ada")).unwrap().truth;
        let wrong = |step: u32| {
            if truth(step) == "open" || truth(step) == "closed" {
                "half-open".to_owned()
            } else {
                truth(step).replace(|c: char| c.is_ascii_digit(), "9") + "9"
            }
        };
        let mut records = BTreeMap::new();
        records.insert(1, record(1, "ada", &truth(1), "p1"));
        records.insert(2, record(2, "ada", &wrong(2), "p2"));
        records.insert(3, record(3, "ada", &truth(3), "changed"));
        records.insert(
            4,
            Record {
                again: true,
                ..record(4, "ada", &truth(4), "p4")
            },
        );
        records.insert(
            5,
            Record {
                seed: 7,
                ..record(5, "ada", &truth(5), "p5")
            },
        );
        records.insert(
            6,
            Record {
                parameters: "threshold=1".to_owned(),
                ..record(6, "ada", &truth(6), "p6")
            },
        );
        let scored = score(Some(&render(&records)), &pristine, 8.0, Some("ada")).unwrap();
        let scores: Vec<f64> = scored.iter().map(|s| s.score).collect();
        assert_eq!(scores, [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        assert!(scored[2].right && !scored[2].in_time);
        assert!(!scored[1].right && scored[1].in_time);
        assert!(scored[4].problem.as_deref().unwrap().contains("not ada's"));
        assert!(scored[5].problem.is_some());
        assert_eq!(scored[6].predicted, None);
        assert!(
            describe(&scored[0], true).contains(&format!("what really happened: `{}`", truth(1)))
        );
        // Unrevealed, a wrong prediction shows neither the answer nor that
        // it is wrong.
        let hidden = describe(&scored[1], false);
        assert!(
            !hidden.contains(&truth(2)) && !hidden.contains("wrong"),
            "{hidden}"
        );
        assert!(
            hidden.contains("shown when the course grades it"),
            "{hidden}"
        );
        assert_eq!(describe(&scored[6], true), "step 7: no prediction");
        assert!(
            score(Some(&render(&records)), &pristine, 0.0, None)
                .unwrap()
                .is_empty()
        );
        assert_eq!(score(None, &pristine, 4.0, None).unwrap()[0].points, 0.5);
        // Graded as someone else, ada's right answers earn nothing.
        let as_bob = score(Some(&render(&records)), &pristine, 8.0, Some("bob")).unwrap();
        assert_eq!(as_bob[0].score, 0.0);
        assert!(
            as_bob[0]
                .problem
                .as_deref()
                .unwrap()
                .contains("--student bob")
        );
        // Eight right shares of 5 make 5, not 8 × 0.63.
        let all: BTreeMap<u32, Record> = STEPS
            .iter()
            .map(|&step| (step, record(step, "ada", &truth(step), &format!("p{step}"))))
            .collect();
        let full = score(Some(&render(&all)), &pristine, 5.0, None).unwrap();
        let total: f64 = full.iter().map(|s| s.score).sum();
        assert_eq!(crate::grading::grade::round(total), 5.0);
    }
}
