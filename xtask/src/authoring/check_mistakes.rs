//! `cargo xtask check-mistakes`: every typical mistake in `mistakes/` is
//! caught by a test of its own step, whose message names the rule and the
//! TODO to look at, and `just test` starts the student at a test of the
//! rule the mistake breaks (its `# Rule:` header line).
//!
//! `--apply-only` puts every mistake into a scratch copy of the solution
//! without building anything, and reports each one whose region is gone:
//! a mistake is anchored to its region ([`crate::authoring::mistake`]), so any edit
//! outside the regions, or to a reference answer, leaves them all applying.

use std::fs;
use std::path::{Path, PathBuf};

use crate::authoring::mistake::{self, Declared, Mistake};
use crate::lab::{steps, syllabus};
use crate::rules::{self, Rule};
use crate::scratch::{copy_suite_workspace, copy_tree, worker_target};
use crate::students::scoreboard::{self, Start};
use crate::suite::Results;
use crate::{authoring::starter, root, suite};

/// The part of the lab a mistake belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    /// A student's TODO region of this step.
    Todo(u32),
    /// Provided code that this step's tests cover (declared `# Step: N`).
    Step(u32),
    /// Provided code that the `toolkit` tests cover (`# Step: toolkit`).
    Toolkit,
}

impl Owner {
    fn owns(self, test: &str) -> bool {
        match self {
            Owner::Todo(step) | Owner::Step(step) => suite::step_of(test) == Some(step),
            Owner::Toolkit => test.starts_with("toolkit::"),
        }
    }

    fn label(self) -> String {
        match self {
            Owner::Todo(step) => format!("TODO({step})"),
            Owner::Step(step) => format!("step {step}"),
            Owner::Toolkit => "toolkit".to_owned(),
        }
    }
}

/// What the suite made of one mistake.
enum Catch {
    /// Tests of its own step failed: the whole run, and the failing tests.
    Caught {
        results: Results,
        failed: Vec<String>,
    },
    /// Tests failed, but none of the step the mistake belongs to.
    CaughtElsewhere(Vec<String>),
    /// The suite did not build: the first compiler error.
    DoesNotBuild(String),
    Missed,
}

/// Puts every mistake in `mistakes/` (or those whose name contains
/// `only`) into a scratch copy of the solution, runs the suite against it as
/// a student run would, and prints one line per mistake. Every mistake must
/// be caught by its own step, with a first message naming a rule id and
/// (for a TODO region) the TODO; and the test that `just test` names first
/// for that run ("Start here", [`scoreboard::start`]) must name a rule of
/// the mistake's `# Rule:` line. A mistake whose crate does not build is a
/// problem too: a student's mistake compiles, and one that no longer does
/// has drifted from the code around its region. The suite run holds the
/// mistake's own step and those before it ([`suite_up_to`]). Each run's
/// results are kept in `target/check-mistakes/runs/NAME.txt`, in libtest's
/// format.
///
/// Mistakes are judged on as many workers as the machine has cores
/// (`MISTAKES_JOBS` overrides it), each with a scratch workspace and a
/// target folder of its own: most of a mistake's time is one crate's
/// compiler front end, which uses one core, and cargo lets only one build
/// at a time into a target folder. They take the mistakes step by step
/// ([`by_step`]); the lines still come out in the gallery's order.
pub(crate) fn check_mistakes(args: &[String]) -> Result<(), String> {
    let apply_only = args.iter().any(|arg| arg == "--apply-only");
    let only = args
        .iter()
        .find(|arg| !arg.starts_with("--"))
        .map(String::as_str);
    let root = root();
    let patches = mistake::gallery(&root, only)?;
    let scratch = root.join("target/check-mistakes");
    fs::create_dir_all(scratch.join("runs")).map_err(|e| e.to_string())?;
    if apply_only {
        return apply_only_check(&root, &scratch, &patches);
    }
    let context = Context {
        root,
        scratch,
        steps: steps()?,
        syllabus: syllabus()?,
    };
    let jobs = jobs().min(patches.len()).max(1);
    let order = by_step(&patches);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let (sender, receiver) = std::sync::mpsc::channel::<(usize, Result<Judged, String>)>();
    let mut judged: Vec<Option<Result<Judged, String>>> = patches.iter().map(|_| None).collect();
    let mut problems = Vec::new();
    // The mistakes with a problem, however many each has.
    let mut troubled = 0;
    std::thread::scope(|scope| {
        for worker in 0..jobs {
            let (context, patches, order, next, sender) =
                (&context, &patches, &order, &next, sender.clone());
            scope.spawn(move || {
                // A workspace of this worker's own, so that two checks at
                // once (of two new mistakes, say) never patch each other's
                // copy; and a target folder of its own, so that its builds
                // never wait for another worker's.
                let workspace = context
                    .scratch
                    .join(format!("workspace-{}-{worker}", std::process::id()));
                let target = worker_target(&context.root, worker);
                loop {
                    let taken = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(&index) = order.get(taken) else {
                        break;
                    };
                    let patch = &patches[index];
                    let verdict = judge_mistake(context, patch, &workspace, &target);
                    if sender.send((index, verdict)).is_err() {
                        break;
                    }
                }
                if workspace.exists() {
                    let _ = fs::remove_dir_all(&workspace);
                }
            });
        }
        drop(sender);
        // Print each mistake's lines as soon as every mistake before it is
        // judged, so the output reads in the gallery's order.
        let mut printed = 0;
        for (index, verdict) in receiver {
            judged[index] = Some(verdict);
            while let Some(Some(verdict)) = judged.get_mut(printed).map(Option::take) {
                match verdict {
                    Ok(judged) => {
                        print!("{}", judged.lines);
                        if !judged.problems.is_empty() {
                            troubled += 1;
                        }
                        problems.extend(judged.problems);
                    }
                    Err(why) => {
                        println!("ERROR   {why}");
                        problems.push(why);
                        troubled += 1;
                    }
                }
                printed += 1;
            }
        }
    });
    println!(
        "\n{} mistake(s), {} caught by their own step with `just test` starting at their rule, \
         {} problem(s)",
        patches.len(),
        patches.len() - troubled,
        problems.len()
    );
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the gallery is not caught as it must be:\n  {}",
            problems.join("\n  ")
        ))
    }
}

/// The order the workers take the mistakes in: by the step whose test
/// catches each (the toolkit's last), the gallery's order within a step.
/// A worker's scratch workspace keeps its path, so the compiler reuses
/// what its last build of the suite left; a mistake of the same step as
/// the last keeps the same modules of the suite, and most of that build
/// is reused (the gallery's time with and without: docs/FIGURES.md).
fn by_step(patches: &[PathBuf]) -> Vec<usize> {
    let step = |path: &PathBuf| {
        Mistake::read(path)
            .ok()
            .and_then(|mistake| suite::step_of(&mistake.caught_by))
            .unwrap_or(u32::MAX)
    };
    let mut order: Vec<(u32, usize)> = patches
        .iter()
        .enumerate()
        .map(|(index, path)| (step(path), index))
        .collect();
    order.sort_unstable();
    order.into_iter().map(|(_, index)| index).collect()
}

/// `--apply-only`: every mistake put into one scratch copy of the
/// solution's sources after another, nothing built; each that no longer
/// applies is named with the reason.
fn apply_only_check(root: &Path, scratch: &Path, patches: &[PathBuf]) -> Result<(), String> {
    let src = scratch.join(format!("apply-only-{}", std::process::id()));
    let broken = applies(&root.join("solution/src"), &src, patches);
    let _ = fs::remove_dir_all(&src);
    for why in &broken {
        println!("BROKEN  {why}");
    }
    println!(
        "\n{} mistake(s), {} apply to the solution's regions",
        patches.len(),
        patches.len() - broken.len()
    );
    if broken.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} mistake(s) no longer apply:\n  {}",
            broken.len(),
            broken.join("\n  ")
        ))
    }
}

/// Puts each mistake of `patches` into a fresh copy of the crate sources
/// `solution` (at `scratch`) and says why each that cannot be applied
/// fails, with the owner it would be judged under.
fn applies(solution: &Path, scratch: &Path, patches: &[PathBuf]) -> Vec<String> {
    let mut broken = Vec::new();
    for path in patches {
        let result = Mistake::read(path).and_then(|mistake| {
            let _ = fs::remove_dir_all(scratch);
            copy_tree(solution, scratch)?;
            let landed = mistake::apply(&mistake, scratch)
                .map_err(|why| format!("{}: {why}", mistake.name))?;
            owner(&mistake, &landed).map_err(|why| format!("{}: {why}", mistake.name))
        });
        if let Err(why) = result {
            broken.push(why);
        }
    }
    broken
}

/// How many mistakes are judged at once: `MISTAKES_JOBS`, or one per core.
fn jobs() -> usize {
    std::env::var("MISTAKES_JOBS")
        .ok()
        .and_then(|jobs| jobs.parse().ok())
        .filter(|&jobs| jobs > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// What every worker reads and nothing changes.
struct Context {
    root: PathBuf,
    scratch: PathBuf,
    steps: Vec<(u32, String)>,
    syllabus: crate::lab::Syllabus,
}

/// One mistake's report: the lines to print, and what is wrong with it.
struct Judged {
    lines: String,
    problems: Vec<String>,
}

/// Puts one mistake into `workspace`, runs the suite with its builds in
/// `target`, and says what came of it. An `Err` is a failure of the
/// check itself (a file it could not write), not of the mistake.
fn judge_mistake(
    context: &Context,
    path: &Path,
    workspace: &Path,
    target: &Path,
) -> Result<Judged, String> {
    use std::fmt::Write as _;
    let Context {
        root,
        scratch,
        steps,
        syllabus,
    } = context;
    let mut lines = String::new();
    let mut problems = Vec::new();
    let applied = Mistake::read(path).and_then(|mistake| {
        let name = mistake.name.clone();
        let landed = apply(root, workspace, &mistake).map_err(|why| format!("{name}: {why}"))?;
        let owner = owner(&mistake, &landed).map_err(|why| format!("{name}: {why}"))?;
        let solution_only = landed.iter().any(|landed| landed.solution_only);
        Ok((mistake, owner, solution_only))
    });
    let (mistake, owner, solution_only) = match applied {
        Ok(applied) => applied,
        Err(why) => {
            let _ = writeln!(lines, "BROKEN  {why}");
            problems.push(why);
            return Ok(Judged { lines, problems });
        }
    };
    let name = &mistake.name;
    // A student's mistake is judged on a student's crate: the starter
    // with every TODO done as the mistaken solution does them, and none
    // of the solution's own extras (its fast paths would answer for the
    // student's code). Only a mistake in those extras is judged on the
    // solution itself.
    let crate_flags: &[&str] = if solution_only {
        &SOLUTION
    } else {
        as_student(workspace)?;
        &[]
    };
    suite_up_to(workspace, owner)?;
    let verdict = judge(workspace, target, owner, crate_flags, &syllabus.races)?;
    if let Catch::Caught { results, .. } = &verdict {
        fs::write(
            scratch.join("runs").join(format!("{name}.txt")),
            libtest_text(results),
        )
        .map_err(|e| e.to_string())?;
    }
    if mistake.compiler_error.is_some() && !matches!(verdict, Catch::DoesNotBuild(_)) {
        let _ = writeln!(lines, "BUILDS  {name}");
        problems.push(format!(
            "{name}: its header says the compiler refuses it, but the crate builds"
        ));
        return Ok(Judged { lines, problems });
    }
    match verdict {
        Catch::Caught { results, failed } => {
            let src = workspace.join("starter/src");
            let board = scoreboard::board(&results, steps, &syllabus.controls);
            let start = scoreboard::start(&results, &board, syllabus, |marker| {
                scoreboard::find_todos(&src, marker)
            });
            let chosen = match &start {
                Start::Step {
                    failure: Some((test, _)),
                    ..
                }
                | Start::Other { test, .. } => Some(test.clone()),
                _ => None,
            };
            // The message checked is the one the student reads first,
            // if it is of the mistake's own step.
            let first = chosen
                .clone()
                .filter(|test| owner.owns(test))
                .or_else(|| failed.iter().find(|test| owner.owns(test)).cloned())
                .unwrap_or_default();
            let said = &results[&first].output;
            let _ = writeln!(
                lines,
                "caught  {name:<46} {:<8} by {:>2} test(s), first {first}: {}",
                owner.label(),
                failed.len(),
                suite::reason(said)
            );
            if std::env::var_os("MISTAKES_VERBOSE").is_some() {
                for test in &failed {
                    let _ = writeln!(lines, "          {test}");
                }
            }
            // MISTAKES.md's row says which test catches it: that one must.
            let named = &mistake.caught_by;
            let module = format!("{named}::");
            if !failed
                .iter()
                .any(|test| test == named || test.starts_with(&module))
            {
                problems.push(format!(
                    "{name}: its `# Caught by: {named}` (its row in MISTAKES.md) does not fail; \
                     {} test(s) do, {first} first: name one of those",
                    failed.len()
                ));
            }
            if let Some(missing) = unnamed(said, owner) {
                problems.push(format!(
                    "{name}: {first} does not name {missing} in its message"
                ));
            }
            if let Some(why) = misdiagnosed(chosen.as_deref(), &mistake.rules) {
                let _ = writeln!(lines, "MISLED  {name}: {why}");
                problems.push(format!("{name}: {why}"));
            }
        }
        Catch::CaughtElsewhere(failed) => {
            let _ = writeln!(
                lines,
                "ELSEWHERE {name}: no test of its own {} failed, only {}",
                owner.label(),
                failed.join(", ")
            );
            problems.push(format!("{name}: not caught by its own {}", owner.label()));
        }
        Catch::DoesNotBuild(error) => match &mistake.compiler_error {
            Some(expected) if error.contains(expected.as_str()) => {
                let _ = writeln!(lines, "caught  {name:<46} by the compiler: {error}");
            }
            _ => {
                let _ = writeln!(lines, "NOBUILD {name}: {error}");
                problems.push(format!(
                    "{name}: the crate with this mistake does not build ({error}); unless its \
                     header says `# Compiler error: ...` with a part of that error, its code has \
                     drifted from the code around its regions: bring it up to date"
                ));
            }
        },
        Catch::Missed => {
            let _ = writeln!(lines, "MISSED  {name}");
            problems.push(format!("{name}: missed"));
        }
    }
    Ok(Judged { lines, problems })
}

/// Why the test `just test` names first (`chosen`) misleads a student who
/// made a mistake breaking the `broken` rules: it names none of them, or
/// there is none.
fn misdiagnosed(chosen: Option<&str>, broken: &[Rule]) -> Option<String> {
    let list = |rules: &[Rule]| {
        rules
            .iter()
            .map(Rule::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(test) = chosen else {
        return Some(format!(
            "it breaks {}, but `just test` names no failing test to start at",
            list(broken)
        ));
    };
    let named = rules::of_test(test);
    if named.iter().any(|rule| broken.contains(rule)) {
        return None;
    }
    Some(format!(
        "it breaks {}, but `just test` starts at {test}, which checks {}",
        list(broken),
        if named.is_empty() {
            "no rule by name".to_owned()
        } else {
            list(&named)
        }
    ))
}

/// A run's results in libtest's own format, which [`suite::parse`] reads
/// back: a verdict line per test, then what each failing test printed.
fn libtest_text(results: &Results) -> String {
    let mut text = String::new();
    for (test, outcome) in results {
        let verdict = if outcome.passed { "ok" } else { "FAILED" };
        text.push_str(&format!("test {test} ... {verdict}\n"));
    }
    text.push_str("\nfailures:\n");
    for (test, outcome) in results.iter().filter(|(_, outcome)| !outcome.passed) {
        text.push_str(&format!("\n---- {test} stdout ----\n{}", outcome.output));
    }
    text.push_str("\nfailures:\n");
    text
}

/// A fresh scratch copy of the suite's workspace with `mistake` put into
/// its solution; where each change landed.
fn apply(root: &Path, workspace: &Path, mistake: &Mistake) -> Result<Vec<mistake::Landed>, String> {
    if workspace.exists() {
        fs::remove_dir_all(workspace).map_err(|e| e.to_string())?;
    }
    fs::create_dir_all(workspace).map_err(|e| e.to_string())?;
    copy_suite_workspace(root, workspace)?;
    mistake::apply(mistake, &workspace.join("solution/src"))
}

/// Leaves in the scratch suite only the steps a mistake of `owner` is
/// judged by: its own and those before it. Whether its own step catches it,
/// and where `just test` starts, depend on nothing after it (a student's
/// run starts at the first step that fails), and the later steps' tests,
/// a third of the suite for a core step, are most of what each mistake
/// would otherwise rebuild. The provided code's `toolkit` tests are left
/// in only for a mistake of the toolkit's, with every step.
fn suite_up_to(workspace: &Path, owner: Owner) -> Result<(), String> {
    let main = workspace.join("tests/lab/main.rs");
    let text = fs::read_to_string(&main).map_err(|e| format!("{}: {e}", main.display()))?;
    fs::write(&main, modules_up_to(&text, owner)).map_err(|e| format!("{}: {e}", main.display()))
}

/// The suite's `main.rs` text with only the modules [`suite_up_to`] keeps.
fn modules_up_to(main: &str, owner: Owner) -> String {
    let last = match owner {
        Owner::Todo(step) | Owner::Step(step) => step,
        Owner::Toolkit => return main.to_owned(),
    };
    main.lines()
        .filter(|line| {
            let Some(module) = line.strip_prefix("mod ").and_then(|m| m.strip_suffix(';')) else {
                return true;
            };
            match suite::step_of(module) {
                Some(step) => step <= last,
                None => module != "toolkit",
            }
        })
        .map(|line| format!("{line}\n"))
        .collect()
}

/// The suite's features for testing the solution rather than the starter.
const SOLUTION: [&str; 3] = [
    "--no-default-features",
    "--features",
    "retry-breaker/solution",
];

/// Makes the scratch workspace's starter the student's finished crate,
/// generated from its (mistaken) solution.
fn as_student(workspace: &Path) -> Result<(), String> {
    let finished = starter::generate(&workspace.join("solution/src"), u32::MAX)?;
    let src = workspace.join("starter/src");
    fs::remove_dir_all(&src).map_err(|e| e.to_string())?;
    fs::create_dir_all(&src).map_err(|e| e.to_string())?;
    for (name, text) in &finished.files {
        crate::scratch::write_file(&src, name, text)?;
    }
    Ok(())
}

/// The step a mistake belongs to: the one its header declares (`# Step:
/// 6`, `# Step: toolkit`) for a mistake in provided code, else that of the
/// TODO regions it changes, which must all be one step's.
fn owner(mistake: &Mistake, landed: &[mistake::Landed]) -> Result<Owner, String> {
    match mistake.step {
        Some(Declared::Step(step)) => return Ok(Owner::Step(step)),
        Some(Declared::Toolkit) => return Ok(Owner::Toolkit),
        None => {}
    }
    let mut steps = Vec::new();
    for (change, landed) in mistake.changes.iter().zip(landed) {
        match landed.todo {
            Some(step) => steps.push(step),
            None => {
                return Err(format!(
                    "`{}` (in {}) is provided code; declare the step whose tests cover it \
                     with a `# Step: N` header line",
                    change.region, landed.file
                ));
            }
        }
    }
    steps.sort_unstable();
    steps.dedup();
    match steps.as_slice() {
        [step] => Ok(Owner::Todo(*step)),
        [] => Err("the mistake changes nothing".to_owned()),
        _ => Err(format!(
            "the mistake changes the TODOs of several steps ({steps:?}); one mistake, one step"
        )),
    }
}

/// What the first catching message fails to name, if anything: a rule id
/// (B3, E10, ...) always, and the TODO for a mistake in a TODO region.
fn unnamed(said: &str, owner: Owner) -> Option<String> {
    let names_rule = !rules::in_text(said).is_empty();
    let names_todo = match owner {
        Owner::Todo(step) => said.contains(&format!("TODO({step})")),
        Owner::Step(_) | Owner::Toolkit => true,
    };
    match (names_rule, names_todo) {
        (true, true) => None,
        (false, true) => Some("a rule id".to_owned()),
        (true, false) => Some(owner.label()),
        (false, false) => Some(format!("a rule id or {}", owner.label())),
    }
}

/// Runs the suite against the (patched) solution in `workspace`.
fn judge(
    workspace: &Path,
    target: &Path,
    owner: Owner,
    flags: &[&str],
    races: &std::collections::BTreeMap<String, String>,
) -> Result<Catch, String> {
    let results = match suite::run_lab(workspace, Some(target), flags) {
        Ok(results) => results,
        Err(output) => {
            let error = output
                .lines()
                .find(|line| line.starts_with("error"))
                .unwrap_or("the suite did not build")
                .to_owned();
            return Ok(Catch::DoesNotBuild(error));
        }
    };
    // A race's verdict may change from run to run: a mistake is judged by
    // the rest of the suite, the same on every run.
    let mut results = results;
    results.retain(|test, _| !races.contains_key(test));
    let failed: Vec<String> = results
        .iter()
        .filter(|(_, outcome)| !outcome.passed)
        .map(|(test, _)| test.clone())
        .collect();
    if failed.is_empty() {
        return Ok(Catch::Missed);
    }
    Ok(if failed.iter().any(|test| owner.owns(test)) {
        Catch::Caught { results, failed }
    } else {
        Catch::CaughtElsewhere(failed)
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn a_mistake_is_judged_by_its_own_step_and_those_before_it() {
        let main = "//! The suite.\n\nmod support;\n\nmod step01_closed;\nmod step02_open;\nmod step10_explore;\nmod step13_window;\nmod toolkit;\n";
        assert_eq!(
            modules_up_to(main, Owner::Todo(2)),
            "//! The suite.\n\nmod support;\n\nmod step01_closed;\nmod step02_open;\n"
        );
        assert_eq!(
            modules_up_to(main, Owner::Step(13)),
            "//! The suite.\n\nmod support;\n\nmod step01_closed;\nmod step02_open;\nmod step10_explore;\nmod step13_window;\n"
        );
        assert_eq!(modules_up_to(main, Owner::Toolkit), main);
    }

    #[test]
    fn the_workers_take_the_mistakes_step_by_step() {
        let patches = mistake::gallery(&crate::root(), None).unwrap();
        let order = by_step(&patches);
        let mut taken = order.clone();
        taken.sort_unstable();
        assert_eq!(taken, (0..patches.len()).collect::<Vec<_>>(), "each once");
        let steps: Vec<u32> = order
            .iter()
            .map(|&index| {
                let mistake = Mistake::read(&patches[index]).unwrap();
                suite::step_of(&mistake.caught_by).unwrap_or(u32::MAX)
            })
            .collect();
        assert!(steps.windows(2).all(|pair| pair[0] <= pair[1]), "{steps:?}");
        assert!(steps.first() < steps.last(), "the gallery spans steps");
    }

    #[test]
    fn a_message_must_name_the_rule_and_the_todo() {
        assert_eq!(unnamed("TODO(3): the probe (B5)", Owner::Todo(3)), None);
        assert!(unnamed("TODO(3): the probe", Owner::Todo(3)).is_some());
        assert!(unnamed("the probe (B5)", Owner::Todo(3)).is_some());
        assert_eq!(unnamed("B11: the slot", Owner::Step(3)), None);
        assert!(unnamed("assertion failed: SUB5", Owner::Step(3)).is_some());
    }

    #[test]
    fn the_first_test_must_name_a_rule_the_mistake_breaks() {
        let b2 = [Rule::parse("B2").unwrap()];
        assert_eq!(misdiagnosed(Some("step01_closed::b2_opens"), &b2), None);
        assert_eq!(misdiagnosed(Some("step4_p::b2_b7_two_rules"), &b2), None);
        assert_eq!(
            misdiagnosed(Some("step01_closed::b1_overflows"), &b2).as_deref(),
            Some(
                "it breaks B2, but `just test` starts at step01_closed::b1_overflows, which checks B1"
            )
        );
        assert!(
            misdiagnosed(Some("step9_w::worked_example"), &b2)
                .unwrap()
                .ends_with("which checks no rule by name")
        );
        assert!(misdiagnosed(None, &b2).is_some());
    }

    /// The solution's sources at `from`, copied to `to` with every line
    /// outside the regions moved down by a comment and a blank line, and
    /// every region's reference code rewritten: what an edit of the
    /// solution around its regions, or of an answer, may do.
    fn rewritten_around_the_regions(from: &Path, to: &Path) {
        for file in crate::scratch::rs_files(from).unwrap() {
            let text = fs::read_to_string(from.join(&file)).unwrap();
            let mut out = String::new();
            let mut inside: Option<&str> = None;
            for line in text.lines() {
                let trimmed = line.trim_start();
                match inside {
                    None => {
                        out.push_str(line);
                        out.push('\n');
                        if trimmed.starts_with("// BEGIN TODO(") {
                            inside = Some("// END TODO");
                            out.push_str("        let _rewritten = \"another answer\";\n");
                        } else if trimmed.starts_with(mistake::BEGIN_ANCHOR) {
                            inside = Some(mistake::END_ANCHOR);
                            out.push_str("        let _rewritten = \"other code\";\n");
                        } else {
                            out.push_str("// A comment added around the regions.\n\n");
                        }
                    }
                    Some(end) => {
                        if trimmed.starts_with(end) {
                            inside = None;
                        }
                        if trimmed.starts_with(end) || trimmed.starts_with("// STARTER:") {
                            out.push_str(line);
                            out.push('\n');
                        }
                    }
                }
            }
            let path = to.join(&file);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, out).unwrap();
        }
    }

    /// Every mistake of the gallery applies, and still does once the code
    /// around its region and the region's own answer have changed: a
    /// mistake is anchored to its region, not to the text around it. Its
    /// header names the rules it breaks and, for provided code, the step.
    #[test]
    fn every_mistake_applies_after_the_code_around_its_region_changes() {
        let root = crate::root();
        let scratch = std::env::temp_dir().join(format!("xtask-rewritten-{}", std::process::id()));
        let rewritten = scratch.join("rewritten");
        rewritten_around_the_regions(&root.join("solution/src"), &rewritten);
        let patches = mistake::gallery(&root, None).unwrap();
        assert!(patches.len() > 50, "the gallery is nearly empty");
        let as_is = applies(&root.join("solution/src"), &scratch.join("as-is"), &patches);
        let moved = applies(&rewritten, &scratch.join("copy"), &patches);
        fs::remove_dir_all(&scratch).unwrap();
        assert!(as_is.is_empty(), "{}", as_is.join("\n"));
        assert!(moved.is_empty(), "after the rewrite:\n{}", moved.join("\n"));
    }

    /// The steps with code to write: those whose TODOs the solution marks.
    fn todo_steps(root: &Path) -> std::collections::BTreeSet<u32> {
        let mut steps = std::collections::BTreeSet::new();
        let src = root.join("solution/src");
        for name in crate::scratch::rs_files(&src).unwrap() {
            let text = fs::read_to_string(src.join(name)).unwrap();
            steps.extend(crate::suite::todos_named(&text));
        }
        steps
    }

    /// The step a table row's last cell ("caught by") names a test of:
    /// the `N` of its first `stepN_`.
    fn step_of_row(row: &str) -> Option<u32> {
        let caught_by = row.trim().trim_end_matches('|').rsplit('|').next()?;
        caught_by.match_indices("step").find_map(|(at, _)| {
            let rest = &caught_by[at + 4..];
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            let named = !digits.is_empty() && rest[digits.len()..].starts_with('_');
            named.then(|| digits.parse().ok()).flatten()
        })
    }

    /// The lab's text (LAB.md and ADVANCED.md) is what a student reads
    /// before writing code, so it must not turn back into a checklist of
    /// mistakes: they live in MISTAKES.md, one section per step with code to
    /// write (its heading the lab text's, in step order), each row under the
    /// step whose test catches it, and each of those steps' sections ends by
    /// pointing at its section.
    #[test]
    fn the_mistakes_live_in_mistakes_md_by_step_and_lab_md_only_points_there() {
        let root = crate::root();
        let lab = crate::manifest::lab_text(&root).unwrap();
        let text = fs::read_to_string(root.join("MISTAKES.md")).unwrap();
        let mut wrong = Vec::new();

        // Words wrapped over two lines count too.
        let words = lab.split_whitespace().collect::<Vec<_>>().join(" ");
        let words = words.to_lowercase();
        for said in ["common mistakes", "typical mistakes"] {
            if words.contains(said) {
                wrong.push(format!(
                    "the lab text says \"{said}\": that belongs in MISTAKES.md"
                ));
            }
        }
        for (number, line) in lab.lines().enumerate() {
            if line.replace(' ', "").to_lowercase().contains("|mistake|") {
                wrong.push(format!(
                    "the lab text, line {}: a mistakes table: {line}",
                    number + 1
                ));
            }
        }

        let lab_steps = crate::lab::step_sections(&lab);
        let sections = crate::lab::step_sections(&text);
        let mut rows: BTreeMap<u32, usize> = BTreeMap::new();
        let mut section: Option<u32> = None;
        let mut last = 0;
        for (index, (line, prose)) in crate::course::export::prose_lines(&text)
            .into_iter()
            .enumerate()
        {
            let at = format!("MISTAKES.md:{}", index + 1);
            if !prose {
                continue;
            }
            if let Some(heading) = line.strip_prefix("## ") {
                section = crate::lab::step_sections(line).into_keys().next();
                match section {
                    None => wrong.push(format!("{at}: `{heading}` is no step's section")),
                    Some(n) if n <= last => wrong.push(format!("{at}: step {n} after step {last}")),
                    Some(n) => {
                        last = n;
                        if lab_steps.get(&n) != Some(&heading.to_owned()) {
                            wrong.push(format!(
                                "{at}: `{heading}` is not {}'s heading",
                                crate::manifest::handout_of(n)
                            ));
                        }
                    }
                }
                continue;
            }
            let row = line.starts_with('|') && !line.contains("---");
            if !row || line.replace(' ', "") == "|mistake|caughtby|" {
                continue;
            }
            match (section, step_of_row(line)) {
                (Some(n), Some(caught)) if n == caught => *rows.entry(n).or_default() += 1,
                (_, None) => wrong.push(format!("{at}: a row that names no step's test")),
                (Some(n), Some(caught)) => wrong.push(format!(
                    "{at}: caught by a test of step {caught}, under step {n}"
                )),
                (None, Some(caught)) => wrong.push(format!(
                    "{at}: caught by a test of step {caught}, under no step"
                )),
            }
        }
        let with_tests: Vec<u32> = crate::lab::steps()
            .unwrap()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        for n in todo_steps(&root)
            .into_iter()
            .filter(|n| with_tests.contains(n))
        {
            if !rows.contains_key(&n) {
                wrong.push(format!("MISTAKES.md: no section with rows for step {n}"));
            }
        }
        for (n, heading) in &sections {
            if !rows.contains_key(n) {
                wrong.push(format!("MISTAKES.md: the section of step {n} has no rows"));
            }
            // The step's own section of LAB.md ends by pointing here.
            let link = format!("MISTAKES.md#{})", crate::authoring::named::anchor(heading));
            let own = lab
                .split("\n## ")
                .find(|part| part.starts_with(&format!("Step {n}:")))
                .unwrap_or_default();
            if !own
                .trim_end()
                .lines()
                .last()
                .is_some_and(|line| line.contains(&link))
            {
                wrong.push(format!(
                    "{}, step {n}: its last line must link {link}",
                    crate::manifest::handout_of(*n)
                ));
            }
        }
        // And no link of LAB.md's into MISTAKES.md misses its heading.
        let anchors: Vec<String> = sections
            .values()
            .map(|heading| crate::authoring::named::anchor(heading))
            .collect();
        for (at, _) in lab.match_indices("MISTAKES.md#") {
            let target = &lab[at + "MISTAKES.md#".len()..];
            let target = target.split(')').next().unwrap_or_default();
            if !anchors.iter().any(|anchor| anchor == target) {
                wrong.push(format!(
                    "the lab text links MISTAKES.md#{target}, which no heading has"
                ));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// docs/MAINTAINERS.md's "To add a step" lists what a step is made of; this fails
    /// when a step of the suite lacks one: its manifest entry with points
    /// and hints (the manifest's own reader insists), a typical mistake for
    /// each step with code to write, and held-back tests for each step that
    /// earns points.
    #[test]
    fn every_step_has_its_manifest_entry_mistakes_and_held_back_tests() {
        let root = crate::root();
        let steps = crate::lab::steps().unwrap();
        let weights = crate::grading::weights::read(&root).unwrap();
        let held_back =
            crate::grading::held_back::read(&root.join("grading/held-back"), &steps).unwrap();
        let todo_steps = todo_steps(&root);
        let mut mistakes = std::collections::BTreeSet::new();
        for path in mistake::gallery(&root, None).unwrap() {
            mistakes.extend(Mistake::declared_step(&Mistake::read(&path).unwrap()));
        }
        let mut missing = Vec::new();
        for (number, name) in &steps {
            if todo_steps.contains(number) && !mistakes.contains(number) {
                missing.push(format!("step {number} ({name}): a mistake in mistakes/"));
            }
            let earns = weights.steps[number] > 0.0;
            let held = held_back
                .iter()
                .any(|module| module.module.starts_with(&format!("step{number:02}_")));
            if earns && !held {
                missing.push(format!(
                    "step {number} ({name}): held-back tests in grading/held-back/"
                ));
            }
        }
        assert!(
            missing.is_empty(),
            "steps without their files:\n  {}",
            missing.join("\n  ")
        );
    }
}
