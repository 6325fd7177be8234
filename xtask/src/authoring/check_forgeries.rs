//! `cargo xtask check-forgeries`: the grader against a gallery of attempts
//! to forge a grade, kept in `grading/forgeries/` (never exported).
//!
//! Each forgery is edits to a student repository made of this kit's untouched
//! `starter/` and `tests/`, which honestly scores 0. The forgery's header
//! says what the grader must answer:
//!
//! - `Expect-refused: NAME`: the source check refuses the crate for `NAME`;
//! - `Expect-ignored: PATH`: `PATH` is listed as not graded;
//! - `Unchecked: forged`, `Unchecked: did not build` or `Unchecked: 0`:
//!   graded again with the source check skipped, the next layer still holds
//!   (the sealed run names a forged verdict; the outside `forbid(unsafe_code)`
//!   stops the build; or simply nothing is earned);
//! - `Without-namespace: ...` (the same answers as `Unchecked:`): graded
//!   once more, the source check skipped, as a machine without mount
//!   namespaces grades (`grade --no-namespace`), where only the user the
//!   build and the tests run as keeps a held-back folder closed;
//! - `Expect: no work`: a crate that implements no rule (each `todo!()`
//!   filled with the cheapest value that does not panic) passes no test
//!   that earns points, in any step, whatever its weight: a test such a
//!   crate passes proves nothing done, so it must be a control (`/// A
//!   control:`) or ask for its rule's positive side too.
//!
//! Every forgery must score 0 and be named, in the summary and in
//! results.json, and no grade may show a line of a held-back test, a
//! held-back file's name or the grading machine's key, unless the forgery
//! wrote it itself. A crate that was built must have been built and run
//! confined ([`crate::grading::confine`]): the check fails on a machine
//! that cannot confine a grade, since there the gallery would prove less
//! than it says. Then the regrade checks: a crate with every step done,
//! graded three times with one student id, gives the same bytes each time
//! (and full marks), and so does each of ten gallery mistakes; and two
//! student ids draw different held-back cases that the finished crate
//! passes both.

use std::fs;
use std::path::{Path, PathBuf};

use crate::grading::confine;
use crate::grading::grade::{self, Grade, Options, Seed};
use crate::{grading::report, root};

/// How often the same submission is regraded for the byte-identity check.
const REGRADES: usize = 3;

/// Gallery mistakes regraded [`MISTAKE_REGRADES`] times each: one verdict
/// per submission must hold for wrong crates too, where a test that leans
/// on thread timing or a map's order would show it. One of each step with
/// points, and the advanced steps whose rules concurrency or a hash order
/// could blur (a registry listing in the map's order, a bulkhead).
const REGRADED_MISTAKES: [&str; 10] = [
    "02-", "07-", "05-", "76-", "31-", "09-", "27-", "13-", "61-", "104-",
];
const MISTAKE_REGRADES: usize = 3;

/// Mistakes that leave out one of the lab's ideas, each with the core
/// score it must stay below: the weights put the ideas first, so a crate
/// without stale-outcome fencing cannot pass for a nearly full one.
const IDEAS: [(&str, f64); 1] = [("05-", 80.0)];

/// One edit of a forgery.
#[derive(Debug, PartialEq, Eq)]
enum Edit {
    /// Append the text to the file.
    Append(String, String),
    /// Write the file with the text, creating or replacing it.
    Write(String, String),
    /// Insert the text after the first line of the file containing `needle`.
    After {
        file: String,
        needle: String,
        text: String,
    },
    /// Make the file a symbolic link to a file of the grading machine, given
    /// from the kit's root (a held-back test, say).
    Link(String, String),
    /// Replace the first `todo!(...)` after the first line of the file
    /// containing `needle` with the text: a TODO answered without work.
    Fill {
        file: String,
        needle: String,
        text: String,
    },
}

/// One forgery of the gallery.
#[derive(Debug, Default)]
struct Forgery {
    name: String,
    /// The forgery's own text: what it names is no leak when a grade
    /// shows it (a compiler's error quoting the path it tried).
    text: String,
    what: String,
    refused: Vec<String>,
    ignored: Vec<String>,
    unchecked: Option<String>,
    /// What the grader must answer without a mount namespace, if the
    /// forgery is graded that way too.
    without_namespace: Option<String>,
    /// `Expect: no work`: the crate implements no rule.
    no_work: bool,
    edits: Vec<Edit>,
}

/// How a forgery is graded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pass {
    /// As a grade runs: the source check first.
    Sealed,
    /// The source check skipped: the next layer must hold alone.
    Unchecked,
    /// The source check skipped, on a machine without mount namespaces.
    WithoutNamespace,
}

impl Pass {
    fn label(self) -> &'static str {
        match self {
            Pass::Sealed => "sealed",
            Pass::Unchecked => "unchecked",
            Pass::WithoutNamespace => "without a namespace",
        }
    }
}

/// The argument that runs the forgeries' last pass: the check starts
/// itself again with it, where the toolchain is open to `nobody`.
const WITHOUT_NAMESPACE: &str = "--without-namespace";

pub(crate) fn check_forgeries(args: &[String]) -> Result<(), String> {
    let without_namespace = args.first().is_some_and(|arg| arg == WITHOUT_NAMESPACE);
    let only = args
        .iter()
        .find(|arg| *arg != WITHOUT_NAMESPACE)
        .map(String::as_str);
    let root = root();
    let gallery = read_gallery(&root.join("grading/forgeries"))?;
    let gallery: Vec<Forgery> = gallery
        .into_iter()
        .filter(|forgery| only.is_none_or(|only| forgery.name.contains(only)))
        .filter(|forgery| !without_namespace || forgery.without_namespace.is_some())
        .collect();
    if gallery.is_empty() {
        return Err("no forgery matches".to_owned());
    }
    let base = root.join("target/check-forgeries");
    let target = root.join("target/grading/target");
    let mut secrets = held_back_lines(&root)?;
    let mut failures = Vec::new();
    for forgery in &gallery {
        println!("== {}: {}", forgery.name, forgery.what);
        let student = base.join(&forgery.name);
        lay_out(&root, &student, forgery)?;
        let passes = if without_namespace {
            vec![Pass::WithoutNamespace]
        } else if forgery.unchecked.is_some() {
            vec![Pass::Sealed, Pass::Unchecked]
        } else {
            vec![Pass::Sealed]
        };
        for pass in passes {
            let label = pass.label();
            let out = base.join(format!("{}-{}", forgery.name, label.replace(' ', "-")));
            let graded = grade(&student, &out, &target, None, pass)?;
            // The grading machine's key, drawn by the first grade: a forgery
            // that read it would know which held-back test runs.
            if let Some(key) = sealed_key(&root).filter(|key| !secrets.contains(key)) {
                secrets.push(key);
            }
            let mut problems = judge(forgery, &graded, &out, pass)?;
            // Refused, the crate was never built: nothing ran to confine.
            if graded.refused.is_empty()
                && !graded
                    .confinement
                    .as_deref()
                    .is_some_and(|how| how.starts_with(confine::SEALED_BUILD))
            {
                problems.push(format!(
                    "this machine cannot keep the held-back tests out of reach of the code graded ({}): run as root, or where users may make mount namespaces",
                    graded.confinement.as_deref().unwrap_or("no confinement reported")
                ));
            }
            problems.extend(leaked(&out, &secrets, &forgery.text)?);
            for problem in &problems {
                println!("   FAILED ({label}): {problem}");
            }
            if problems.is_empty() {
                println!("   {label}: scores 0 and is named");
            }
            failures.extend(
                problems
                    .into_iter()
                    .map(|p| format!("{} ({label}): {p}", forgery.name)),
            );
        }
    }
    if !without_namespace {
        if gallery
            .iter()
            .any(|forgery| forgery.without_namespace.is_some())
        {
            failures.extend(without_a_namespace(&root, only)?);
        }
        if only.is_none() {
            failures.extend(regrades(&root, &base, &target)?);
        }
    }
    if failures.is_empty() {
        println!("All {} forgeries score 0 and are named.", gallery.len());
        Ok(())
    } else {
        Err(format!(
            "the grader let forgeries through:\n  {}",
            failures.join("\n  ")
        ))
    }
}

/// Grades the forgeries marked `Without-namespace:` as a machine that gives
/// no mount namespace would, Gradescope's container perhaps: there the
/// builds and the tests run as `nobody`, which needs a toolchain `nobody`
/// can run (the autograder's `setup.sh` installs Rust so). This machine's
/// may sit in a home folder closed to others, as root's is; the check then
/// runs itself again in a mount namespace of its own where that folder is
/// open to others, everything in it where it was, so the toolchain, the
/// cargo home and the target folder's builds are the same. The grades
/// themselves make no namespace.
fn without_a_namespace(root: &Path, only: Option<&str>) -> Result<Vec<String>, String> {
    println!("== graded as a machine without mount namespaces would");
    if !confine::is_root() {
        println!(
            "   not checked here: only root can grade as such a machine (there, each build and test runs as `nobody`)"
        );
        return Ok(Vec::new());
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the check: {e}"))?;
    let mut command = match std::env::var_os("HOME").map(PathBuf::from) {
        Some(home) if closed_to_others(&home) => {
            let open = root.join("target/check-forgeries/opened-home");
            fs::create_dir_all(&open).map_err(|e| format!("{}: {e}", open.display()))?;
            let mut command = std::process::Command::new("unshare");
            command
                .args(["--mount", "--propagation", "private", "--", "sh", "-c"])
                .arg(OPEN_HOME)
                .arg("open-home")
                .arg(&home)
                .arg(&open)
                .arg(&exe);
            command
        }
        _ => std::process::Command::new(&exe),
    };
    command.arg("check-forgeries").arg(WITHOUT_NAMESPACE);
    if let Some(only) = only {
        command.arg(only);
    }
    let status = command
        .status()
        .map_err(|e| format!("cannot run the check without a namespace: {e}"))?;
    Ok(if status.success() {
        Vec::new()
    } else {
        vec![format!(
            "graded without a mount namespace, the grader let forgeries through (above)"
        )]
    })
}

/// `sh -c` with `HOME OPEN PROGRAM ARGS...`: in the mount namespace the
/// caller made, `HOME` becomes a folder open to others (a `tmpfs`, mode
/// 0711) holding each of its entries where it was, then `PROGRAM` runs.
const OPEN_HOME: &str = r#"set -e
home="$1"; open="$2"; shift 2
mount -t tmpfs -o mode=0711 opened-home "$open"
for entry in "$home"/* "$home"/.[!.]* "$home"/..?*; do
    [ -e "$entry" ] || [ -L "$entry" ] || continue
    name="${entry##*/}"
    if [ -L "$entry" ]; then
        cp -P "$entry" "$open/$name"
        continue
    elif [ -d "$entry" ]; then
        mkdir "$open/$name"
    else
        : >"$open/$name"
    fi
    mount --bind "$entry" "$open/$name"
done
mount --rbind "$open" "$home"
exec "$@"
"#;

/// Whether others may not pass through `dir` (mode without `o+x`).
fn closed_to_others(dir: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::metadata(dir).is_ok_and(|meta| meta.permissions().mode() & 0o001 == 0)
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        false
    }
}

fn grade(
    student: &Path,
    out: &Path,
    target: &Path,
    id: Option<&str>,
    pass: Pass,
) -> Result<Grade, String> {
    let graded = grade::run_checked(
        &Options {
            student: Some(student.to_path_buf()),
            out: out.to_path_buf(),
            target: target.to_path_buf(),
            seed: Seed::new(id.map(str::to_owned), None, None),
            limits: crate::grading::sealed::Limits::from_env()?,
            // Every step, whatever its weight: a forgery must earn nothing
            // anywhere, and a regrade give the same bytes everywhere.
            all_steps: true,
            namespaces: pass != Pass::WithoutNamespace,
        },
        pass == Pass::Sealed,
    )?;
    grade::write(&graded, out)?;
    Ok(graded)
}

/// The lines of the held-back tests that are their own, and their files'
/// names, for [`leaked`]: a grade must never show one. A line the public
/// suite or the starter has too (an import, a closing brace) gives nothing
/// away.
fn held_back_lines(root: &Path) -> Result<Vec<String>, String> {
    let mut public = std::collections::HashSet::new();
    for folder in ["tests/lab", "starter/src"] {
        for path in crate::authoring::library::files_under(&root.join(folder))? {
            if let Ok(text) = fs::read_to_string(&path) {
                public.extend(text.lines().map(|line| line.trim().to_owned()));
            }
        }
    }
    let mut lines = Vec::new();
    for path in crate::authoring::library::files_under(&root.join("grading/held-back"))? {
        let text = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        lines.extend(
            path.file_name()
                .map(|name| name.to_string_lossy().into_owned()),
        );
        lines.extend(
            text.lines()
                .map(str::trim)
                .filter(|line| line.len() >= 16 && !public.contains(*line))
                .map(str::to_owned),
        );
    }
    lines.sort();
    lines.dedup();
    Ok(lines)
}

/// The grading machine's key of the held-back tests' names, once drawn.
fn sealed_key(root: &Path) -> Option<String> {
    let key = fs::read_to_string(root.join(grade::SEALED).join("held-back-key")).ok()?;
    Some(key.trim().to_owned()).filter(|key| !key.is_empty())
}

/// A line of a held-back test that the grade in `out` shows the student,
/// whatever the forgery aimed at.
///
/// The held-back tests' own entries are left out: they are shown only when
/// the instructor publishes them (`held_back_visibility`), and their
/// messages are written to be read then (a drawn case's description may
/// name a value the test declares). Everything else a student sees before
/// that, the summary, the compiler's errors and the public steps' entries,
/// must hold none.
fn leaked(out: &Path, secrets: &[String], own: &str) -> Result<Vec<String>, String> {
    let results = fs::read_to_string(out.join("results.json")).map_err(|e| e.to_string())?;
    // One entry a line, as `report::gradescope` writes them.
    let results: String = results
        .lines()
        .filter(|line| !line.contains("(held-back tests)\", \"score\""))
        .collect::<Vec<_>>()
        .join("\n");
    // results.json escapes quotes and backslashes; compare like with like.
    let shown = results.replace("\\\"", "\"").replace("\\\\", "\\");
    Ok(secrets
        .iter()
        .filter(|line| shown.contains(line.as_str()) && !own.contains(line.as_str()))
        .take(1)
        .map(|line| format!("the grade shows a line or a name of a held-back test: {line}"))
        .collect())
}

/// What is wrong with the grade of `forgery`: it must score 0 and be named.
fn judge(forgery: &Forgery, graded: &Grade, out: &Path, pass: Pass) -> Result<Vec<String>, String> {
    let summary = report::summary(graded);
    let results = fs::read_to_string(out.join("results.json")).map_err(|e| e.to_string())?;
    let mut problems = Vec::new();
    if graded.score() != 0.0 {
        problems.push(format!("scored {} instead of 0", graded.score()));
    }
    if forgery.no_work {
        if let Some(error) = &graded.build_error {
            problems.push(format!("a crate that does no work must build: {error}"));
        }
        problems.extend(
            graded
                .steps
                .iter()
                .flat_map(|step| step.scored())
                .filter(|test| test.passed)
                .map(|test| {
                    format!(
                        "{} passes on a crate that implements no rule: make it a control (`/// A control: why`) or have it ask for its rule's positive side too",
                        test.name
                    )
                }),
        );
    }
    let mut named = |seen: bool, what: String| {
        if !seen {
            problems.push(what);
        }
    };
    for path in &forgery.ignored {
        named(
            graded
                .ignored
                .iter()
                .any(|line| line.starts_with(path.as_str()))
                && results.contains(path.as_str()),
            format!("{path} is not listed as not graded"),
        );
    }
    let expected = match pass {
        Pass::Sealed => None,
        Pass::Unchecked => forgery.unchecked.as_deref(),
        Pass::WithoutNamespace => forgery.without_namespace.as_deref(),
    };
    if pass == Pass::Sealed {
        for name in &forgery.refused {
            let refused = graded
                .refused
                .iter()
                .any(|line| line.contains(&format!("`{name}`")));
            named(
                refused && summary.contains("REFUSED") && results.contains(&format!("`{name}`")),
                format!("the source check did not refuse `{name}`"),
            );
        }
    } else {
        match expected {
            Some("forged") => named(
                !graded.forgeries.is_empty()
                    && summary.contains("FORGED")
                    && results.contains("\"seen\""),
                "the sealed run named no forged verdict".to_owned(),
            ),
            Some("did not build") => named(graded.build_error.is_some(), "it built".to_owned()),
            _ => {}
        }
    }
    Ok(problems)
}

/// A student repository: the untouched starter and suite, then the edits.
fn lay_out(root: &Path, student: &Path, forgery: &Forgery) -> Result<(), String> {
    if student.exists() {
        fs::remove_dir_all(student).map_err(|e| e.to_string())?;
    }
    for folder in ["starter", "tests"] {
        crate::scratch::copy_tree(&root.join(folder), &student.join(folder))?;
    }
    for edit in &forgery.edits {
        let (file, text) = match edit {
            Edit::Append(file, text) | Edit::Write(file, text) => (file, text),
            Edit::After { file, .. } | Edit::Fill { file, .. } => (file, &String::new()),
            Edit::Link(file, target) => {
                link(&student.join(file), &root.join(target))?;
                continue;
            }
        };
        let path = student.join(file);
        let old = fs::read_to_string(&path).unwrap_or_default();
        let new = match edit {
            Edit::Append(..) => old + "\n" + text,
            Edit::Write(..) | Edit::Link(..) => text.clone(),
            Edit::After { needle, text, .. } => {
                let at = old.find(needle.as_str()).ok_or_else(|| {
                    format!(
                        "{}: `{needle}` is not in {file}; update the forgery",
                        forgery.name
                    )
                })?;
                let end = at + old[at..].find('\n').map_or(old.len() - at, |n| n + 1);
                format!("{}{text}{}", &old[..end], &old[end..])
            }
            Edit::Fill { needle, text, .. } => {
                fill(&old, needle, text.trim()).ok_or_else(|| {
                    format!(
                        "{}: no `todo!(...)` after `{needle}` in {file}; update the forgery",
                        forgery.name
                    )
                })?
            }
        };
        fs::create_dir_all(path.parent().expect("a file has a folder"))
            .map_err(|e| e.to_string())?;
        fs::write(&path, new).map_err(|e| format!("{file}: {e}"))?;
    }
    Ok(())
}

/// `old` with the first `todo!(...)` after `needle` replaced by `text`.
fn fill(old: &str, needle: &str, text: &str) -> Option<String> {
    let from = old.find(needle)?;
    let start = from + old[from..].find("todo!(")?;
    let mut depth = 0usize;
    for (offset, c) in old[start..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 1 => {
                let end = start + offset + 1;
                return Some(format!("{}{text}{}", &old[..start], &old[end..]));
            }
            ')' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// Makes `file` a symbolic link to `target`, where links exist.
fn link(file: &Path, target: &Path) -> Result<(), String> {
    let _ = fs::remove_file(file);
    #[cfg(unix)]
    return std::os::unix::fs::symlink(target, file)
        .map_err(|e| format!("{}: {e}", file.display()));
    #[cfg(not(unix))]
    return Err(format!(
        "{}: no symbolic links on this system",
        file.display()
    ));
}

/// Regrading gives the same bytes, and the seed follows the student.
fn regrades(root: &Path, base: &Path, target: &Path) -> Result<Vec<String>, String> {
    let mut failures = Vec::new();
    // Every step done as the solution does it: a student's crate with full
    // marks.
    let solution = base.join("finished");
    crate::authoring::starter::write_crate(
        &root.join("solution/src"),
        u32::MAX,
        &solution.join("src"),
    )?;
    println!(
        "== the finished crate, graded {REGRADES} times for one student: the same bytes every time"
    );
    let mut first: Option<Vec<Vec<u8>>> = None;
    for run in 0..REGRADES {
        let out = base.join(format!("regrade-{run}"));
        let graded = grade(&solution, &out, target, Some("student-1"), Pass::Sealed)?;
        if graded.score() != graded.max_score() {
            failures.push(format!(
                "regrade {run}: the finished crate scored {} of {}",
                graded.score(),
                graded.max_score()
            ));
        }
        let bytes = ["results.json", "junit.xml", "summary.txt"]
            .iter()
            .map(|file| fs::read(out.join(file)).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, _>>()?;
        match &first {
            None => first = Some(bytes),
            Some(first) if *first != bytes => {
                failures.push(format!("regrade {run} differs from regrade 0"))
            }
            Some(_) => {}
        }
    }
    for part in REGRADED_MISTAKES {
        let paths = crate::authoring::mistake::gallery(root, Some(part))?;
        let Some(path) = paths.iter().find(|path| {
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(part)
        }) else {
            failures.push(format!("no mistake of the gallery is numbered {part}"));
            continue;
        };
        let mistake = crate::authoring::mistake::Mistake::read(path)?;
        let name = mistake.name.clone();
        let mistaken = base.join("mistaken-solution");
        if mistaken.exists() {
            fs::remove_dir_all(&mistaken).map_err(|e| e.to_string())?;
        }
        // The whole crate: the generator reads its designs beside `src`.
        crate::scratch::copy_tree(&root.join("solution"), &mistaken)?;
        crate::authoring::mistake::apply(&mistake, &mistaken.join("src"))?;
        let student = base.join(format!("mistake-{name}"));
        crate::authoring::starter::write_crate(
            &mistaken.join("src"),
            u32::MAX,
            &student.join("src"),
        )?;
        println!("== {name}, graded {MISTAKE_REGRADES} times for one student: the same bytes");
        let mut first: Option<(Vec<Vec<u8>>, f64)> = None;
        for run in 0..MISTAKE_REGRADES {
            let out = base.join(format!("mistake-{name}-{run}"));
            let graded = grade(&student, &out, target, Some("student-1"), Pass::Sealed)?;
            let bytes = ["results.json", "junit.xml", "summary.txt"]
                .iter()
                .map(|file| fs::read(out.join(file)).map_err(|e| e.to_string()))
                .collect::<Result<Vec<_>, _>>()?;
            match &first {
                None => first = Some((bytes, graded.score())),
                Some((first, score)) if *first != bytes => failures.push(format!(
                    "{name}: regrade {run} differs from regrade 0 ({} against {score})",
                    graded.score()
                )),
                Some(_) => {}
            }
        }
        if let Some((_, score)) = first {
            println!("   {score} every time");
            for (idea, below) in IDEAS {
                if part == idea && score >= below {
                    failures.push(format!(
                        "{name} leaves out one of the lab's ideas, but scores {score}, not below \
                         {below}: the weights must put the ideas first"
                    ));
                }
            }
        }
    }
    println!("== two students: different held-back cases, both passed by the finished crate");
    // The finished crate for both first, then the starter for both: each switch
    // of crate is a rebuild.
    let ids = ["student-1", "student-2"];
    for id in ids {
        let graded = grade(
            &solution,
            &base.join(format!("seed-{id}")),
            target,
            Some(id),
            Pass::Sealed,
        )?;
        if graded.score() != graded.max_score() {
            failures.push(format!(
                "{id}: the finished crate scored {} of {}",
                graded.score(),
                graded.max_score()
            ));
        }
    }
    // A crate with step 1 done builds breakers, so every later held-back
    // test fails on an assertion that shows the cases it drew. (The
    // untouched starter stops at its circuit's first `todo!()`, with the same
    // message for every student.)
    let partial = base.join("step-1-done");
    crate::authoring::starter::write_crate(&root.join("solution/src"), 2, &partial.join("src"))?;
    let mut messages = Vec::new();
    for id in ids {
        let graded = grade(
            &partial,
            &base.join(format!("step-1-done-{id}")),
            target,
            Some(id),
            Pass::Sealed,
        )?;
        let drawn: Vec<String> = graded
            .steps
            .iter()
            .flat_map(|step| step.tests.iter())
            .filter(|test| test.held_back)
            .map(|test| format!("{}: {}", test.name, test.detail))
            .collect();
        messages.push(drawn);
    }
    if messages[0].is_empty() {
        failures.push("no held-back test ran".to_owned());
    } else if messages[0] == messages[1] {
        failures.push("two students drew the same held-back cases".to_owned());
    }
    Ok(failures)
}

/// Reads every `*.forgery` file of the gallery.
fn read_gallery(dir: &Path) -> Result<Vec<Forgery>, String> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|entry| Some(entry.ok()?.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "forgery"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|file| {
            let name = file
                .file_stem()
                .expect("a file has a name")
                .to_string_lossy()
                .into_owned();
            parse(&name, &fs::read_to_string(file).map_err(|e| e.to_string())?)
        })
        .collect()
}

/// A forgery file: `Key: value` header lines, then edits, each opened by a
/// line `==> append FILE`, `==> write FILE`, `==> after "NEEDLE" in FILE`,
/// `==> fill "NEEDLE" in FILE` or `==> link FILE to TARGET`.
fn parse(name: &str, text: &str) -> Result<Forgery, String> {
    let mut forgery = Forgery {
        name: name.to_owned(),
        text: text.to_owned(),
        ..Forgery::default()
    };
    let mut edit: Option<(String, String)> = None;
    let flush =
        |edit: &mut Option<(String, String)>, forgery: &mut Forgery| -> Result<(), String> {
            if let Some((opening, text)) = edit.take() {
                forgery.edits.push(edit_of(name, &opening, text)?);
            }
            Ok(())
        };
    for line in text.lines() {
        if let Some(opening) = line.strip_prefix("==> ") {
            flush(&mut edit, &mut forgery)?;
            edit = Some((opening.to_owned(), String::new()));
        } else if let Some((_, text)) = edit.as_mut() {
            text.push_str(line);
            text.push('\n');
        } else if let Some((key, value)) = line.split_once(": ") {
            let value = value.trim().to_owned();
            match key {
                "Forgery" => forgery.what = value,
                "Expect-refused" => forgery.refused.push(value),
                "Expect-ignored" => forgery.ignored.push(value),
                "Unchecked" => forgery.unchecked = Some(value),
                "Without-namespace" => forgery.without_namespace = Some(value),
                "Expect" if value == "no work" => forgery.no_work = true,
                _ => return Err(format!("{name}: unknown header `{key}`")),
            }
        }
    }
    flush(&mut edit, &mut forgery)?;
    if forgery.what.is_empty() || forgery.edits.is_empty() {
        return Err(format!(
            "{name}: a forgery needs a `Forgery:` line and at least one edit"
        ));
    }
    if forgery.refused.is_empty() && forgery.ignored.is_empty() && !forgery.no_work {
        return Err(format!(
            "{name}: say what the grader must answer (Expect-refused, Expect-ignored or Expect: no work)"
        ));
    }
    Ok(forgery)
}

fn edit_of(name: &str, opening: &str, text: String) -> Result<Edit, String> {
    if let Some(file) = opening.strip_prefix("append ") {
        return Ok(Edit::Append(file.trim().to_owned(), text));
    }
    if let Some(file) = opening.strip_prefix("write ") {
        return Ok(Edit::Write(file.trim().to_owned(), text));
    }
    if let Some((file, target)) = opening
        .strip_prefix("link ")
        .and_then(|rest| rest.split_once(" to "))
    {
        return Ok(Edit::Link(file.trim().to_owned(), target.trim().to_owned()));
    }
    if let Some(rest) = opening.strip_prefix("after \"") {
        if let Some((needle, file)) = rest.split_once("\" in ") {
            return Ok(Edit::After {
                file: file.trim().to_owned(),
                needle: needle.to_owned(),
                text,
            });
        }
    }
    if let Some(rest) = opening.strip_prefix("fill \"") {
        if let Some((needle, file)) = rest.split_once("\" in ") {
            return Ok(Edit::Fill {
                file: file.trim().to_owned(),
                needle: needle.to_owned(),
                text,
            });
        }
    }
    Err(format!(
        "{name}: `==> {opening}`: expected append FILE, write FILE, after \"NEEDLE\" in FILE, fill \"NEEDLE\" in FILE or link FILE to TARGET"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forgery_file_reads_as_its_header_and_edits() {
        let text = "Forgery: exits with success\nExpect-refused: process\nUnchecked: forged\n==> after \"fn f() {\" in starter/src/a.rs\n    std::process::exit(0);\n==> write starter/build.rs\nfn main() {}\n";
        let forgery = parse("01-x", text).unwrap();
        assert_eq!(forgery.what, "exits with success");
        assert_eq!(forgery.refused, ["process"]);
        assert_eq!(forgery.unchecked.as_deref(), Some("forged"));
        assert_eq!(
            forgery.edits,
            [
                Edit::After {
                    file: "starter/src/a.rs".into(),
                    needle: "fn f() {".into(),
                    text: "    std::process::exit(0);\n".into()
                },
                Edit::Write("starter/build.rs".into(), "fn main() {}\n".into()),
            ]
        );
        assert!(parse("x", "Forgery: nothing expected\n==> append a\nb\n").is_err());
        let no_work = parse(
            "x",
            "Forgery: no work\nExpect: no work\n==> fill \"fn f(\" in a.rs\n    0\n",
        )
        .unwrap();
        assert!(no_work.no_work);
        assert_eq!(
            no_work.edits,
            [Edit::Fill {
                file: "a.rs".into(),
                needle: "fn f(".into(),
                text: "    0\n".into()
            }]
        );
        assert!(parse("x", "Forgery: bad edit\nExpect-refused: io\n==> move a\n").is_err());
    }

    #[test]
    fn a_fill_replaces_the_first_todo_after_its_needle_parentheses_and_all() {
        let old = "fn e() { todo!() }\nfn f() -> u32 {\n    todo!(\"a (nested) note\")\n}\n";
        assert_eq!(
            fill(old, "fn f(", "0").as_deref(),
            Some("fn e() { todo!() }\nfn f() -> u32 {\n    0\n}\n")
        );
        assert_eq!(fill(old, "fn g(", "0"), None);
        assert_eq!(fill("fn f() { todo!(\"open\" }", "fn f(", "0"), None);
    }

    #[test]
    fn the_gallery_reads() {
        let gallery = read_gallery(&root().join("grading/forgeries")).unwrap();
        assert!(gallery.len() >= 12, "{}", gallery.len());
    }
}
