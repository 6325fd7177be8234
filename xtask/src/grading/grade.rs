//! `cargo xtask grade [DIR] [--out OUT]`: scores a student's crate, step by
//! step, and writes the score for people and for course platforms.
//!
//! The suite always comes from this repository, never from the graded one:
//! only the student's `starter/src/*.rs` is taken from DIR (or `src/*.rs`, if
//! DIR is a crate such as `solution`), so a submission that edited its copy
//! of the tests or its manifest is graded by the real ones, and what it
//! edited is listed as not graded ([`crate::grading::submission`]). The sources must
//! pass the source check ([`crate::grading::source_check`]), and the suite runs
//! sealed ([`crate::grading::sealed`]): one process per test, with a verdict the
//! student's code cannot write. Held-back tests in `grading/held-back/` join
//! the suite for the run, seeded per student (`--student ID`, `--metadata
//! FILE`, or `LAB_STUDENT`); weights come from the manifest and `grading/weights.toml`.
//!
//! Scoring: a step's points are shared equally by its tests, controls
//! excepted, so a partly passing step earns its share; controls and the
//! provided parts count as in `just progress`. Nothing in the score depends
//! on timing or order, so a deterministic suite grades the same every run.
//! The predictions the student recorded (`predictions.toml`, see
//! [`crate::students::predict`]) add a bonus on top, when `weights.toml` gives one.

use std::fs;
use std::path::{Path, PathBuf};

use crate::grading::confine::Confinement;
use crate::grading::held_back::{self, HeldBack};
use crate::lab::{controls, controls_in, races, races_in, steps};
use crate::scratch::{copy_suite_workspace, copy_tree, sync_tree};
use crate::{
    grading::report, grading::sealed, grading::source_check, grading::submission, grading::weights,
    root, students::predict, suite,
};

/// One test as graded: its verdict, and what the reports say of it. (The
/// breaker's own `Verdict`, a success or a failure, is another thing.)
#[derive(Debug, Clone)]
pub struct GradedTest {
    /// Full name, `step3_half_open::b4_...`.
    pub name: String,
    pub passed: bool,
    /// A control earns no points (it may pass before its step is done).
    pub control: bool,
    /// Why it failed, in one line (empty if it passed).
    pub reason: String,
    /// What it printed when it failed, without the parts that change from
    /// run to run (thread ids, the backtrace hint).
    pub detail: String,
    /// A held-back test: its name and message stay out of what the student
    /// sees until the grades are published.
    pub held_back: bool,
}

/// One step's score.
#[derive(Debug, Clone)]
pub struct StepScore {
    pub number: u32,
    pub name: String,
    pub points: f64,
    pub score: f64,
    pub tests: Vec<GradedTest>,
}

impl StepScore {
    /// The tests that earn points: every test of the step but the controls.
    pub fn scored(&self) -> impl Iterator<Item = &GradedTest> {
        self.tests.iter().filter(|test| !test.control)
    }
}

/// The whole grade.
#[derive(Debug, Clone)]
pub struct Grade {
    /// What was graded, for the reports.
    pub graded: String,
    pub steps: Vec<StepScore>,
    /// The provided parts' tests (`toolkit`), and their points.
    pub provided: Vec<GradedTest>,
    pub provided_points: f64,
    pub provided_score: f64,
    /// How many held-back modules joined the suite.
    pub held_back: usize,
    /// Set when the student's crate did not build: everything scores 0.
    pub build_error: Option<String>,
    /// What the source check refused; if anything, nothing was built and
    /// everything scores 0.
    pub refused: Vec<String>,
    /// Files handed in beside the graded sources, which the grader ignored.
    pub ignored: Vec<String>,
    /// Tests whose verdict was forged, each with what was seen: they earn
    /// nothing.
    pub forgeries: Vec<(String, String)>,
    /// The seed the held-back tests and the property tests were drawn with,
    /// and whose it is.
    pub seed: Seed,
    /// Gradescope's `visibility` for the held-back tests' entries.
    pub held_back_visibility: String,
    /// How the held-back tests were kept from the code graded, when the
    /// grade had any ([`Confinement::describe`]).
    pub confinement: Option<String>,
    /// The prediction questions, each with what was predicted and what
    /// really happened; empty when `weights.toml` gives them no points.
    pub predictions: Vec<predict::Scored>,
    /// The tuning task's bonus, when `weights.toml` gives it points.
    pub tuning: Option<Tuning>,
    /// Whether the report may say what really happened for each prediction
    /// ([`predict::describe`]).
    pub reveal_predictions: bool,
    /// The suite's races ([`crate::lab::races`]), which a grade never runs.
    pub races: Vec<String>,
    /// The tests worth 0 points, which this grade did not run
    /// (`run_unscored` in `weights.toml`, or `--all-steps`, runs them).
    pub unscored: Vec<String>,
}

/// The tuning task (`just tune`), graded: the settings in the student's
/// `tuning.toml` run the simulation on their crate and their own scenario,
/// and each score level (10%, 20%, ... 100%) is a test of the `tuning`
/// target, run sealed like the suite's. What is read is only which levels
/// passed, never the figures the run printed: the crate under test runs in
/// those processes and could print anything.
#[derive(Debug, Clone)]
pub struct Tuning {
    pub points: f64,
    pub score: f64,
    /// One verdict per level, `graded::score_reaches_NN`.
    pub levels: Vec<GradedTest>,
}

impl Tuning {
    /// The highest level reached, in percent (0 if none).
    pub fn reached(&self) -> u32 {
        self.levels
            .iter()
            .filter(|level| level.passed)
            .map(|level| level_of(&level.name))
            .max()
            .unwrap_or(0)
    }
}

/// The level of `graded::score_reaches_NN`, in percent.
fn level_of(name: &str) -> u32 {
    name.rsplit('_')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// The seed of one grade: from the student's id, so that each student gets
/// cases of their own and a regrade gets the same ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seed {
    /// The student id it came from, if any.
    pub student: Option<String>,
    /// Passed to the held-back tests as `LAB_STUDENT_SEED`.
    pub value: u64,
    /// Passed to the property tests as `LAB_SEED`: an instructor's own, or
    /// the student's seed; `None` for the suite's fixed one.
    pub explore: Option<u64>,
    /// The property tests' cases (`LAB_CASES`), `None` for the suite's.
    pub cases: Option<u64>,
}

impl Seed {
    /// The seed for `student`, with the instructor's `LAB_SEED` and
    /// `LAB_CASES` overriding the property tests' when set.
    pub fn new(student: Option<String>, lab_seed: Option<u64>, cases: Option<u64>) -> Seed {
        let value = student.as_deref().map_or(0, fnv1a);
        Seed {
            explore: lab_seed.or(student.as_ref().map(|_| value)),
            student,
            value,
            cases,
        }
    }

    /// The variables the test processes get.
    fn env(&self) -> Vec<(&'static str, String)> {
        let mut env = vec![("LAB_STUDENT_SEED", self.value.to_string())];
        env.extend(self.explore.map(|seed| ("LAB_SEED", seed.to_string())));
        env.extend(self.cases.map(|cases| ("LAB_CASES", cases.to_string())));
        env
    }
}

/// FNV-1a, 64 bits: a stable hash (unlike std's, which may change between
/// releases), so a student's seed is the same on every machine and version.
pub(crate) fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

impl Grade {
    /// The total: the core's points, and the bonuses (the predictions, the
    /// tuning task) only when [`Grade::earns_bonuses`].
    pub fn score(&self) -> f64 {
        round(self.core_score() + self.counted_bonus())
    }

    /// The points of the steps and the provided parts: the lab itself.
    pub fn core_score(&self) -> f64 {
        round(self.steps.iter().map(|step| step.score).sum::<f64>() + self.provided_score)
    }

    /// The bonuses earned, counted or not.
    pub fn bonus_score(&self) -> f64 {
        round(self.predictions_score() + self.tuning.as_ref().map_or(0.0, |tuning| tuning.score))
    }

    /// The bonuses that count towards the total.
    pub fn counted_bonus(&self) -> f64 {
        if self.earns_bonuses() {
            self.bonus_score()
        } else {
            0.0
        }
    }

    /// The rule for bonuses: they count only for a crate that earns every
    /// point of every step that has points. A bonus rewards going further,
    /// so it never makes up for an idea of the lab that is missing (a wrong
    /// backoff or no fencing of stale outcomes with a tuned `tuning.toml`
    /// must not reach full marks, let alone pass them).
    pub fn earns_bonuses(&self) -> bool {
        self.steps
            .iter()
            .filter(|step| step.points > 0.0)
            .all(|step| round(step.score) >= round(step.points))
    }

    /// What the predictions earned: a bonus, which [`Grade::max_score`]
    /// leaves out, so the lab itself still sums to its 100.
    pub fn predictions_score(&self) -> f64 {
        round(self.predictions.iter().map(|p| p.score).sum())
    }

    /// The most the predictions could earn.
    pub fn predictions_points(&self) -> f64 {
        round(self.predictions.iter().map(|p| p.points).sum())
    }

    pub fn max_score(&self) -> f64 {
        round(self.steps.iter().map(|step| step.points).sum::<f64>() + self.provided_points)
    }
}

/// What to grade and where.
pub struct Options {
    /// A student repository whose `starter/src` is graded (or a crate
    /// folder, whose `src` is); `None` grades this repository's starter.
    pub student: Option<PathBuf>,
    /// Where the reports go.
    pub out: PathBuf,
    /// The cargo target folder for the scratch build.
    pub target: PathBuf,
    /// Whose grade it is, for the seed.
    pub seed: Seed,
    /// How long a test and the whole grade may take.
    pub limits: sealed::Limits,
    /// Run the tests worth 0 points too, whatever `weights.toml` says
    /// (`--all-steps`).
    pub all_steps: bool,
    /// Whether the grade may hide the held-back folders in a mount
    /// namespace; without, it grades as a machine that gives none would
    /// (`--no-namespace`: what a container without `CAP_SYS_ADMIN` does).
    pub namespaces: bool,
}

const USAGE: &str = "usage: cargo xtask grade [DIR] [--out OUT] [--student ID | --metadata submission_metadata.json] [--all-steps] [--no-namespace]";

/// The student id in Gradescope's `submission_metadata.json`: the first
/// `"id"` of its `users` list. Read by hand, as the tools need no JSON crate.
fn student_in_metadata(text: &str) -> Option<String> {
    let users = &text[text.find("\"users\"")?..];
    let after = &users[users.find("\"id\"")? + 4..];
    let value = after.trim_start().strip_prefix(':')?.trim_start();
    let id: String = match value.strip_prefix('"') {
        Some(quoted) => quoted.split('"').next()?.to_owned(),
        None => value
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect(),
    };
    (!id.is_empty()).then_some(id)
}

/// The command: grades, writes the reports, prints the summary.
pub(crate) fn grade(args: &[String]) -> Result<(), String> {
    let root = root();
    let mut student = None;
    let mut out = None;
    let mut all_steps = false;
    let mut namespaces = true;
    let mut id = std::env::var("LAB_STUDENT")
        .ok()
        .filter(|id| !id.is_empty());
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--out" => out = Some(PathBuf::from(args.next().ok_or(USAGE)?)),
            "--all-steps" => all_steps = true,
            "--no-namespace" => namespaces = false,
            "--student" => id = Some(args.next().ok_or(USAGE)?.clone()),
            "--metadata" => {
                let file = args.next().ok_or(USAGE)?;
                let text =
                    fs::read_to_string(file).map_err(|e| format!("cannot read {file}: {e}"))?;
                id = Some(student_in_metadata(&text).ok_or_else(|| {
                    format!("{file} names no student: expected Gradescope's \"users\": [{{\"id\": ...}}]")
                })?);
            }
            flag if flag.starts_with('-') => return Err(USAGE.to_owned()),
            dir if student.is_none() => student = Some(PathBuf::from(dir)),
            _ => return Err(USAGE.to_owned()),
        }
    }
    // A student grading their own repository is graded as the one they
    // predict as (`just predict` falls back on git's address too); an
    // instructor grading a repository names the student.
    if student.is_none() && id.is_none() {
        id = predict::git_email(&root);
    }
    let options = Options {
        student,
        out: out.unwrap_or_else(|| root.join("target/grade")),
        target: std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("target/grading/target")),
        seed: Seed::new(id, number_in("LAB_SEED")?, number_in("LAB_CASES")?),
        limits: sealed::Limits::from_env()?,
        all_steps,
        namespaces,
    };
    if let Some(dir) = &options.student {
        if fs::canonicalize(dir).ok() == fs::canonicalize(root.join("solution")).ok() {
            return Err(
                "the solution is not a student's crate: its provided files carry the solution's \
                 own extras, and a grade always uses the starter's copies of those. For a crate \
                 with every step done as the solution does them, run `just check-forgeries` \
                 and grade target/check-forgeries/finished"
                    .to_owned(),
            );
        }
    }
    println!("Grading {}...", describe(options.student.as_deref()));
    let grade = match run(&options) {
        Ok(grade) => grade,
        Err(why) => {
            // A course platform still gets its results: 0, and why.
            write_failure(&options.out, &why)?;
            return Err(why);
        }
    };
    write(&grade, &options.out)?;
    print!("{}", report::summary(&grade));
    let out = std::env::current_dir()
        .ok()
        .and_then(|here| options.out.strip_prefix(here).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| options.out.clone());
    println!(
        "Written to {}: results.json (Gradescope), junit.xml, summary.txt",
        out.display()
    );
    // A crate that was refused or did not build is an error for the
    // platform too: the run fails, with the zero results already written.
    if !grade.refused.is_empty() {
        return Err(
            "The grader refused the crate (see above): nothing was built or run.".to_owned(),
        );
    }
    if grade.build_error.is_some() {
        return Err("The crate did not build (see above): every step scores 0.".to_owned());
    }
    Ok(())
}

/// An instructor's number from the environment; a value that is not one is
/// an error, never silently the default.
fn number_in(variable: &str) -> Result<Option<u64>, String> {
    match std::env::var(variable) {
        Ok(text) if !text.trim().is_empty() => text
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| format!("{variable}={text:?} is not a whole number")),
        _ => Ok(None),
    }
}

fn describe(student: Option<&Path>) -> String {
    match student {
        Some(dir) => format!("the crate in {}", dir.display()),
        None => "this repository's starter".to_owned(),
    }
}

/// Runs the suite, with the held-back tests, on the student's crate.
pub(crate) fn run(options: &Options) -> Result<Grade, String> {
    run_checked(options, true)
}

/// [`run`], with the source check skipped when `check_sources` is false:
/// only for the forgery gallery, which proves that the sealed run and the
/// outside `forbid(unsafe_code)` hold on their own.
pub(crate) fn run_checked(options: &Options, check_sources: bool) -> Result<Grade, String> {
    // The budget runs from here, before anything of the student's is built.
    let deadline = std::time::Instant::now() + options.limits.budget;
    let root = root();
    let steps = steps()?;
    let weights = weights::read(&root)?;
    let held_back = held_back::read(&root.join("grading/held-back"), &steps)?;
    let mut controls = controls()?;
    let mut races = races()?;
    for module in &held_back {
        controls.extend(controls_in(&module.module, &module.text));
        races.extend(races_in(&module.module, &module.text));
    }

    let mut grade = Grade {
        graded: describe(options.student.as_deref()),
        steps: Vec::new(),
        provided: Vec::new(),
        provided_points: weights.provided,
        provided_score: 0.0,
        held_back: held_back.len(),
        build_error: None,
        refused: Vec::new(),
        ignored: Vec::new(),
        forgeries: Vec::new(),
        seed: options.seed.clone(),
        held_back_visibility: weights.held_back_visibility.clone(),
        confinement: None,
        predictions: Vec::new(),
        tuning: None,
        reveal_predictions: false,
        races: Vec::new(),
        unscored: Vec::new(),
    };
    let submission = match options.student.as_deref() {
        Some(dir) => Some(submission::read(dir, &root)?),
        None => None,
    };
    let (src, shown) = submission
        .as_ref()
        .map_or((root.join("starter/src"), "starter/src"), |s| {
            (s.src.clone(), s.shown.as_str())
        });
    grade.ignored = submission
        .as_ref()
        .map(|s| s.ignored.clone())
        .unwrap_or_default();
    // One grade at a time per kit: they share the scratch copies.
    let _lock = GradingLock::take(&root.join("target/grading"))?;
    // The sources graded: the submission's, with every provided file the
    // kit's own copy, whatever the submission's says.
    let sources = root.join("target/grading/sources");
    grade.ignored.extend(submission::assemble(
        &src,
        shown,
        &root.join("starter/src"),
        &sources,
    )?);
    grade.ignored.sort();
    if check_sources {
        grade.refused = source_check::check_dir(&sources, shown)?
            .iter()
            .map(ToString::to_string)
            .collect();
    }
    let mut verdicts = Vec::new();
    if grade.refused.is_empty() {
        let sealed_folder = root.join(SEALED);
        let (workspace, aliases) = prepare(&root, &sources, &held_back, &sealed_folder)?;
        let mut confinement = if held_back.is_empty() {
            Confinement::none()
        } else {
            Confinement::probe(
                &[root.join("grading/held-back"), sealed_folder],
                options.namespaces,
            )
        };
        confinement.close()?;
        confinement.check_builds(&workspace);
        let describe =
            |confinement: &Confinement| confinement.hides().then(|| confinement.describe());
        grade.confinement = describe(&confinement);
        match build(&workspace, &options.target, deadline, &confinement)? {
            Ok(binary) => {
                confinement.check_runs(&binary, &workspace);
                grade.confinement = describe(&confinement);
                // A race's verdict on a wrong crate can change from run to
                // run; a grade must not, so it never runs one.
                let (raced, names): (Vec<String>, Vec<String>) = sealed::list(&binary, &workspace)?
                    .iter()
                    .map(|listed| aliases.real(listed))
                    .partition(|name| races.contains_key(name));
                grade.races = raced;
                // A test worth 0 points changes no grade: it is skipped
                // unless the instructor asks for it.
                let (names, unscored): (Vec<String>, Vec<String>) =
                    names.into_iter().partition(|name| {
                        options.all_steps
                            || weights.run_unscored
                            || match suite::step_of(name) {
                                Some(step) => weights.steps[&step] > 0.0,
                                None => weights.provided > 0.0,
                            }
                    });
                grade.unscored = unscored;
                let env = options.seed.env();
                let env: Vec<(&str, &str)> = env.iter().map(|(n, v)| (*n, v.as_str())).collect();
                // Run under the workspace's names, reported under the real.
                let run_as: Vec<String> = names.iter().map(|name| aliases.opaque(name)).collect();
                let run = sealed::run(
                    &sealed::Run {
                        binary: &binary,
                        workspace: &workspace,
                        tests: &run_as,
                        env: &env,
                        limits: options.limits,
                        deadline,
                    },
                    &confinement,
                );
                let results: suite::Results = run
                    .results
                    .into_iter()
                    .map(|(name, mut outcome)| {
                        outcome.output = aliases.restore(&outcome.output);
                        (aliases.real(&name), outcome)
                    })
                    .collect();
                let held: Vec<&str> = held_back.iter().map(|m| m.module.as_str()).collect();
                verdicts = self::verdicts(&names, &results, &controls, &held);
                grade.forgeries = run
                    .forgeries
                    .into_iter()
                    .map(|(name, forgery)| (aliases.real(&name), aliases.restore(&forgery)))
                    .collect();
                if weights.tuning > 0.0 {
                    let repository = options.student.as_deref().unwrap_or(&root);
                    let tuning = tune(
                        &workspace,
                        repository,
                        options,
                        weights.tuning,
                        deadline,
                        &confinement,
                    )?;
                    grade.forgeries.extend(tuning.1);
                    grade.forgeries.sort();
                    grade.tuning = Some(tuning.0);
                }
            }
            Err(output) => grade.build_error = Some(first_error(&output)),
        }
    }
    for (number, name) in steps {
        let tests: Vec<GradedTest> = verdicts
            .iter()
            .filter(|test| suite::step_of(&test.name) == Some(number))
            .cloned()
            .collect();
        let points = weights.steps[&number];
        let mut step = StepScore {
            number,
            name,
            points,
            score: 0.0,
            tests,
        };
        step.score = share(points, step.scored());
        grade.steps.push(step);
    }
    grade.provided = verdicts
        .into_iter()
        .filter(|test| suite::step_of(&test.name).is_none())
        .collect();
    grade.provided_score = share(weights.provided, grade.provided.iter());
    // The student's predictions sit at the top of their repository (of this
    // one, when its own starter is graded); a crate handed in alone has none.
    let repository = options.student.as_deref().unwrap_or(&root);
    let recorded = fs::read_to_string(repository.join(predict::FILE)).ok();
    grade.predictions = predict::score(
        recorded.as_deref(),
        &predict::pristine(&root)?,
        weights.predictions,
        options.seed.student.as_deref(),
    )?;
    // Only a grade with the course's held-back tests (the kit's, the
    // autograder's) says what really happened: the student edition's own
    // `just grade` has none, and must not hand out the answers.
    grade.reveal_predictions = root.join("grading/held-back").is_dir();
    if !grade.reveal_predictions {
        // Not even as a score: a total that moves says which were right.
        for prediction in &mut grade.predictions {
            prediction.score = 0.0;
            prediction.right = false;
        }
    }
    // A crate refused or unbuilt scores 0 in all, as the summary says.
    if !grade.refused.is_empty() || grade.build_error.is_some() {
        for prediction in &mut grade.predictions {
            prediction.score = 0.0;
        }
    }
    Ok(grade)
}

/// The tuning task's levels, run sealed in `workspace` with the
/// `tuning.toml` of the student's `repository` (none if it has none: every
/// level then fails, saying the file is missing), and the forgeries seen.
fn tune(
    workspace: &Path,
    repository: &Path,
    options: &Options,
    points: f64,
    deadline: std::time::Instant,
    confinement: &Confinement,
) -> Result<(Tuning, Vec<(String, String)>), String> {
    let settings = workspace.join(TUNING_FILE);
    if settings.exists() {
        fs::remove_file(&settings).map_err(|e| e.to_string())?;
    }
    let theirs = repository.join(TUNING_FILE);
    if theirs.is_file() {
        fs::copy(&theirs, &settings).map_err(|e| format!("{}: {e}", theirs.display()))?;
    }
    let mut tuning = Tuning {
        points,
        score: 0.0,
        levels: Vec::new(),
    };
    let built = sealed::build(
        workspace,
        &options.target,
        sealed::Target::Test("tuning"),
        deadline,
        confinement,
    );
    let binary = match built.map(|built| built.binary) {
        Ok(Some(binary)) => binary,
        Ok(None) => return Err("the tuning target built no test binary".to_owned()),
        // Out of time while the levels built: they earn nothing, and the
        // grade still ends with its results.
        Err(_) if std::time::Instant::now() >= deadline => return Ok((tuning, Vec::new())),
        Err(output) => {
            // The suite built, so this is the kit's own target failing:
            // say so rather than blame the student.
            return Err(format!(
                "the tuning task's tests did not build:\n{}",
                first_error(&output)
            ));
        }
    };
    let names = sealed::list_ignored(&binary, workspace, "graded")?;
    if names.is_empty() {
        return Err("the tuning target has no graded levels".to_owned());
    }
    let env = options.seed.env();
    let env: Vec<(&str, &str)> = env.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let run = sealed::run(
        &sealed::Run {
            binary: &binary,
            workspace,
            tests: &names,
            env: &env,
            limits: options.limits,
            deadline,
        },
        confinement,
    );
    tuning.levels = verdicts(&names, &run.results, &Default::default(), &[]);
    // In the order of the levels, 10% first, not of their names.
    tuning.levels.sort_by_key(|level| level_of(&level.name));
    tuning.score = share(points, tuning.levels.iter());
    Ok((tuning, run.forgeries))
}

/// The tuning task's settings, at the top of the student's repository.
const TUNING_FILE: &str = "tuning.toml";

/// The grading machine's own folder, which no process that runs the
/// student's code can read: the key of the held-back tests' names, and the
/// held-back tests as the suite compiles them ([`held_back::install`]).
pub(crate) const SEALED: &str = "target/grading/sealed";

/// Builds the suite in `workspace` in two steps, so that the student's code
/// never runs where a held-back test is in reach: first their crate alone,
/// confined (its macros and constants run in this build, and the source
/// check is not all that stands between them and the held-back files), then
/// the suite with the held-back tests, which must find the crate built and
/// compile none of it. The inner result is the test binary or the
/// compiler's errors to show; the outer, a failure of the grader itself.
///
/// The compiler's errors a student sees come from the first step, or from
/// the public suite alone: when only the held-back tests fail to build,
/// their errors would quote them, so the grade says so without them.
fn build(
    workspace: &Path,
    target: &Path,
    deadline: std::time::Instant,
    confinement: &Confinement,
) -> Result<Result<PathBuf, String>, String> {
    use sealed::Target;
    if let Err(errors) = sealed::build(workspace, target, Target::Crate, deadline, confinement) {
        return Ok(Err(errors));
    }
    match sealed::build(
        workspace,
        target,
        Target::Test("lab"),
        deadline,
        &Confinement::none(),
    ) {
        Ok(built) if built.compiled_the_crate => Err(
            "the suite's build compiled the student's crate again, with the held-back tests in \
             reach: the grade stops here (a fault of the grader, not of the crate)"
                .to_owned(),
        ),
        Ok(built) => built
            .binary
            .map(Ok)
            .ok_or_else(|| "the suite built no test binary".to_owned()),
        Err(errors) if !held_back::installed(workspace)? => Ok(Err(errors)),
        Err(_) => {
            held_back::uninstall(workspace)?;
            Ok(Err(
                match sealed::build(
                    workspace,
                    target,
                    Target::Test("lab"),
                    deadline,
                    confinement,
                ) {
                    Err(public) => public,
                    Ok(_) => "error: the held-back tests do not build against this crate, though \
                              the public suite does: a public item's signature differs from the \
                              starter's (the compiler's errors are not shown, since they would \
                              quote the held-back tests)"
                        .to_owned(),
                },
            ))
        }
    }
}

/// Holds `target/grading/lock` while a grade uses the scratch copy there,
/// so that two grades started at once (an instructor's loop, a check beside
/// a grade) wait for each other instead of building each other's copy. A
/// lock left by a process that no longer runs is taken over.
struct GradingLock(PathBuf);

impl GradingLock {
    fn take(folder: &Path) -> Result<GradingLock, String> {
        fs::create_dir_all(folder).map_err(|e| e.to_string())?;
        let lock = folder.join("lock");
        let mut waited = std::time::Duration::ZERO;
        loop {
            match fs::create_dir(&lock) {
                Ok(()) => {
                    fs::write(lock.join("pid"), std::process::id().to_string())
                        .map_err(|e| e.to_string())?;
                    return Ok(GradingLock(lock));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let holder = fs::read_to_string(lock.join("pid")).unwrap_or_default();
                    let alive = Path::new("/proc").is_dir()
                        && Path::new("/proc").join(holder.trim()).is_dir();
                    let gone = !holder.trim().is_empty() && Path::new("/proc").is_dir() && !alive;
                    if gone || waited > std::time::Duration::from_secs(3600) {
                        let _ = fs::remove_dir_all(&lock);
                        continue;
                    }
                    if waited.is_zero() {
                        println!(
                            "Waiting for another grade to finish (pid {})...",
                            holder.trim()
                        );
                    }
                    std::thread::sleep(std::time::Duration::from_millis(200));
                    waited += std::time::Duration::from_millis(200);
                }
                Err(e) => return Err(format!("cannot create {}: {e}", lock.display())),
            }
        }
    }
}

impl Drop for GradingLock {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// A fresh scratch copy of the suite with the graded sources `src` as its
/// `starter/src` and the held-back tests in it, under the names
/// [`held_back::install`] gives them.
///
/// It is laid out afresh in `target/grading/staging`, then synced into
/// `target/grading/workspace`, where only what changed since the last grade
/// is written ([`sync_tree`]): a regrade of the same crate builds nothing.
fn prepare(
    root: &Path,
    src: &Path,
    held_back: &[HeldBack],
    sealed: &Path,
) -> Result<(PathBuf, held_back::Aliases), String> {
    let workspace = root.join("target/grading/staging");
    if workspace.exists() {
        fs::remove_dir_all(&workspace).map_err(|e| e.to_string())?;
    }
    fs::create_dir_all(&workspace).map_err(|e| e.to_string())?;
    copy_suite_workspace(root, &workspace)?;
    // Only the sources' `*.rs` files: nothing else of the submission.
    let ours = workspace.join("starter/src");
    fs::remove_dir_all(&ours).map_err(|e| e.to_string())?;
    copy_tree(src, &ours)?;
    // `unsafe` is forbidden from outside, where no attribute can lower it.
    let manifest = workspace.join("starter/Cargo.toml");
    let text = fs::read_to_string(&manifest).map_err(|e| e.to_string())?;
    fs::write(
        &manifest,
        text + "\n[lints.rust]\nunsafe_code = \"forbid\"\n",
    )
    .map_err(|e| e.to_string())?;
    // The key's place before it moved into the sealed folder, which no
    // confined process can read: a kit graded with before keeps no copy.
    let _ = fs::remove_file(root.join("target/grading/held-back-key"));
    let key = held_back::key(sealed)?;
    let aliases = held_back::install(held_back, &workspace, sealed, key)?;
    let lasting = root.join("target/grading/workspace");
    sync_tree(&workspace, &lasting)?;
    Ok((lasting, aliases))
}

/// Every listed test's verdict; one the run never reported (the suite
/// stopped early) failed.
fn verdicts(
    names: &[String],
    results: &suite::Results,
    controls: &std::collections::BTreeMap<String, String>,
    held_back: &[&str],
) -> Vec<GradedTest> {
    let stopped = results
        .get("(the suite stopped early)")
        .map(|outcome| outcome.output.trim().to_owned());
    let mut verdicts: Vec<GradedTest> = names
        .iter()
        .map(|name| {
            let (passed, output) = match results.get(name) {
                Some(outcome) => (outcome.passed, outcome.output.clone()),
                None => (
                    false,
                    format!(
                        "never finished: the suite stopped early ({})\n",
                        stopped.as_deref().unwrap_or("no reason given")
                    ),
                ),
            };
            GradedTest {
                name: name.clone(),
                passed,
                control: controls.contains_key(name),
                held_back: held_back
                    .iter()
                    .any(|module| name.split("::").next() == Some(*module)),
                reason: if passed {
                    String::new()
                } else {
                    reason(&output)
                },
                detail: if passed {
                    String::new()
                } else {
                    stable(&output)
                },
            }
        })
        .collect();
    verdicts.sort_by(|a, b| a.name.cmp(&b.name));
    verdicts
}

/// `points` shared equally by `tests`, for those that pass.
fn share<'a>(points: f64, tests: impl Iterator<Item = &'a GradedTest>) -> f64 {
    let (mut passed, mut total) = (0u32, 0u32);
    for test in tests {
        total += 1;
        passed += u32::from(test.passed);
    }
    if total == 0 {
        0.0
    } else {
        round(points * f64::from(passed) / f64::from(total))
    }
}

/// Scores are given to the hundredth, so sums and reports agree.
pub fn round(points: f64) -> f64 {
    (points * 100.0).round() / 100.0
}

/// The panics in a test's output, each as its message's lines, in the
/// order they were printed, and the other lines.
fn panics(output: &str) -> (Vec<String>, Vec<&str>) {
    let mut panics = Vec::new();
    let mut other = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in output.lines() {
        let starts_panic = line.starts_with("thread '") && line.contains("panicked at");
        let ends_panic = starts_panic
            || line.trim().is_empty()
            || line.starts_with("thread '")
            || line.starts_with("note: run with `RUST_BACKTRACE");
        if ends_panic {
            panics.extend(current.take().map(|lines| lines.join("\n")));
        }
        if starts_panic {
            current = Some(Vec::new());
        } else if let Some(lines) = current.as_mut() {
            lines.push(line);
        } else if !line.starts_with("thread '") && !line.starts_with("note: run with") {
            other.push(line);
        }
    }
    panics.extend(current.map(|lines| lines.join("\n")));
    (panics, other)
}

/// The lowest TODO a message names, if any.
fn lowest_todo(message: &str) -> Option<u32> {
    suite::todos_named(message).into_iter().min()
}

/// Why a test failed, in one line. A test whose threads hit several
/// unfinished TODOs reports whichever panicked first, which varies from run
/// to run; the lowest TODO named does not, and is the one to do first.
/// Without a TODO, the last panic is the one that ended the test (earlier
/// ones may be panics the test provokes on purpose).
fn reason(output: &str) -> String {
    let (panics, _) = panics(output);
    let named = panics
        .iter()
        .filter(|message| lowest_todo(message).is_some())
        .min_by_key(|message| lowest_todo(message));
    match named.or(panics.last()) {
        Some(message) => message.lines().next().unwrap_or_default().trim().to_owned(),
        None => suite::reason(output),
    }
}

/// A test's output without what changes between runs of the same failure:
/// thread ids, the backtrace hint, how often a message repeats (a property
/// test prints one per case it tries while shrinking) and in which order
/// threads panicked. The panic messages come first, lowest TODO first.
fn stable(output: &str) -> String {
    let (panics, other) = panics(output);
    let messages: std::collections::BTreeSet<(u32, String)> = panics
        .into_iter()
        .map(|message| (lowest_todo(&message).unwrap_or(u32::MAX), message))
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    let mut rest = String::new();
    for line in other {
        if line.trim().is_empty() {
            // Dropped repeats leave runs of blank lines behind: keep one.
            if !rest.is_empty() && !rest.ends_with("\n\n") {
                rest.push('\n');
            }
        } else if seen.insert(line.trim()) {
            rest.push_str(line);
            rest.push('\n');
        }
    }
    let mut parts: Vec<String> = messages.into_iter().map(|(_, message)| message).collect();
    parts.push(rest.trim().to_owned());
    parts.retain(|part| !part.trim().is_empty());
    capped(parts.join("\n\n"))
}

/// What a report keeps of one test's output: its first [`DETAIL_LIMIT`]
/// bytes (at a character boundary), and how much was left out.
fn capped(mut detail: String) -> String {
    if detail.len() <= DETAIL_LIMIT {
        return detail;
    }
    let mut end = DETAIL_LIMIT;
    while !detail.is_char_boundary(end) {
        end -= 1;
    }
    let left_out = detail.len() - end;
    detail.truncate(end);
    detail.push_str(&format!(
        "\n[... {left_out} more bytes of this test's output left out]"
    ));
    detail
}

/// The most of one test's output a report keeps.
const DETAIL_LIMIT: usize = 4096;

/// The compiler's first error, with the lines that locate it.
///
/// Only an error located in the student's own files is shown: a crate that
/// made the compiler read a file of the grader's (a macro-written `#[path]`,
/// say, which the source check could miss) must not see a line of it in
/// the error it gets back, so any other error is reported without a word
/// of what the compiler quoted.
fn first_error(output: &str) -> String {
    let lines: Vec<&str> = output.lines().collect();
    let Some(at) = lines.iter().position(|line| line.starts_with("error")) else {
        return "the suite did not build or run".to_owned();
    };
    let block: Vec<&str> = lines[at..]
        .iter()
        .take(8)
        .take_while(|line| !line.is_empty())
        .copied()
        .collect();
    let located = block
        .iter()
        .find_map(|line| line.trim_start().strip_prefix("--> "));
    match located {
        Some(place) if place.starts_with("starter/src/") && !place.contains("..") => {
            block.join("\n")
        }
        _ => "error: the build failed outside starter/src, in a file the grader does not show \
              (a crate that makes the compiler read other files is refused)"
            .to_owned(),
    }
}

/// The results of a grade the grader could not finish (an error of its
/// own, such as a missing tool): score 0 and why, in `results.json` and
/// `summary.txt`, so that a course platform shows the reason rather than a
/// failed autograder.
pub(crate) fn write_failure(out: &Path, why: &str) -> Result<(), String> {
    fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let said = format!("The grader could not grade this submission: {why}\n");
    let json = format!(
        "{{\n  \"score\": 0,\n  \"output\": {},\n  \"tests\": []\n}}\n",
        report::json_string(&said)
    );
    for (file, text) in [("results.json", json), ("summary.txt", said)] {
        fs::write(out.join(file), text).map_err(|e| format!("cannot write {file}: {e}"))?;
    }
    Ok(())
}

/// Writes `results.json` (Gradescope), `junit.xml` and `summary.txt`.
pub(crate) fn write(grade: &Grade, out: &Path) -> Result<(), String> {
    fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    for (file, text) in [
        ("results.json", report::gradescope(grade)),
        ("junit.xml", report::junit(grade)),
        ("summary.txt", report::summary(grade)),
    ] {
        fs::write(out.join(file), text).map_err(|e| format!("cannot write {file}: {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(name: &str, passed: bool, control: bool) -> GradedTest {
        GradedTest {
            name: name.to_owned(),
            passed,
            control,
            reason: String::new(),
            detail: String::new(),
            held_back: false,
        }
    }

    #[test]
    fn a_build_error_is_shown_only_when_it_is_in_the_students_files() {
        let theirs = "   Compiling x\nerror[E0425]: cannot find value `y`\n  --> starter/src/circuit.rs:3:5\n   |\n3  |     y\n";
        assert!(first_error(theirs).contains("starter/src/circuit.rs:3:5"));
        let held = "error: expected item, found `secret_case`\n  --> tests/lab/held_back/step03_held_back.rs:9:1\n   |\n9  | secret_case(7, 42);\n";
        let shown = first_error(held);
        assert!(
            !shown.contains("secret") && !shown.contains("held_back"),
            "{shown}"
        );
        let sneaky = "error: x\n  --> starter/src/../../tests/lab/held_back/a.rs:1:1\n1 | secret\n";
        assert!(!first_error(sneaky).contains("secret"));
        // No location at all: nothing quoted either.
        assert!(!first_error("error: secret here\n").contains("secret"));
    }

    #[test]
    fn a_reports_detail_is_capped_at_a_character_boundary() {
        assert_eq!(capped("short".to_owned()), "short");
        let long = "é".repeat(DETAIL_LIMIT);
        let kept = capped(long.clone());
        assert!(
            kept.len() < long.len() && kept.len() <= DETAIL_LIMIT + 80,
            "{}",
            kept.len()
        );
        assert!(
            kept.ends_with("more bytes of this test's output left out]"),
            "{kept}"
        );
    }

    #[test]
    fn the_tuning_bonus_is_shared_by_the_levels_reached() {
        let levels: Vec<GradedTest> = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
            .iter()
            .map(|level| {
                verdict(
                    &format!("graded::score_reaches_{level}"),
                    *level <= 70,
                    false,
                )
            })
            .collect();
        let tuning = Tuning {
            points: 5.0,
            score: share(5.0, levels.iter()),
            levels,
        };
        assert_eq!(tuning.score, 3.5);
        assert_eq!(tuning.reached(), 70);
        assert_eq!(level_of("graded::score_reaches_100"), 100);
    }

    #[test]
    fn the_student_is_the_first_user_of_gradescopes_metadata() {
        let metadata = r#"{"id": 987, "assignment": {"id": 55, "title": "Lab"},
            "users": [{"email": "a@example.invalid", "id": 12345, "name": "A", "sid": "s1"},
                      {"id": 678}]}"#;
        assert_eq!(student_in_metadata(metadata).as_deref(), Some("12345"));
        assert_eq!(
            student_in_metadata(r#"{"users": [{"id": "u-7"}]}"#).as_deref(),
            Some("u-7")
        );
        assert_eq!(student_in_metadata(r#"{"id": 987}"#), None);
        // The seed is a stable function of the id alone.
        assert_eq!(
            Seed::new(Some("12345".into()), None, None).value,
            fnv1a("12345")
        );
        assert_ne!(fnv1a("12345"), fnv1a("12346"));
        // The tuning task's `seed_of` (tests/tuning/sim.rs) checks the same
        // value, so `just tune --student ID` shows the scenario graded.
        assert_eq!(fnv1a("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(Seed::new(None, None, None).explore, None);
        assert_eq!(Seed::new(Some("x".into()), Some(7), None).explore, Some(7));
    }

    #[test]
    fn a_step_earns_its_share_of_passing_tests_and_controls_earn_nothing() {
        let tests = [
            verdict("step01_closed::a", true, false),
            verdict("step01_closed::b", true, false),
            verdict("step01_closed::c", false, false),
            verdict("step01_closed::d", false, true),
        ];
        let scored = tests.iter().filter(|test| !test.control);
        assert_eq!(share(10.0, scored), 6.67);
        assert_eq!(share(10.0, [].iter()), 0.0);
    }

    #[test]
    fn a_failure_names_its_lowest_todo_and_repeats_are_dropped() {
        let output = "thread 'a' (1) panicked at x.rs:1:1:\nnot yet implemented: TODO(6): loop\n\nthread 'b' (2) panicked at x.rs:2:2:\nnot yet implemented: TODO(1): count\n\nthread 'c' (3) panicked at x.rs:2:2:\nnot yet implemented: TODO(1): count\n";
        assert_eq!(reason(output), "not yet implemented: TODO(1): count");
        assert_eq!(
            stable(output),
            "not yet implemented: TODO(1): count\n\nnot yet implemented: TODO(6): loop"
        );
        assert_eq!(reason("plain\n"), "plain");
        let provoked = "thread 'a' (1) panicked at x.rs:1:1:\nbackoff exploded\nthread 'a' (1) panicked at x.rs:2:2:\nassertion `left == right` failed\n  left: 1\n right: 2\n";
        assert_eq!(reason(provoked), "assertion `left == right` failed");
        assert_eq!(
            stable(provoked),
            "assertion `left == right` failed\n  left: 1\n right: 2\n\nbackoff exploded"
        );
    }

    #[test]
    fn unreported_tests_fail_and_thread_ids_are_dropped() {
        let mut results = suite::Results::new();
        results.insert(
            "step01_closed::a".into(),
            suite::Outcome {
                passed: false,
                output: "thread 'step01_closed::a' (42) panicked at x.rs:1:1:\nboom\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n".into(),
            },
        );
        let names = ["step01_closed::a".to_owned(), "step01_closed::b".to_owned()];
        let verdicts = verdicts(&names, &results, &Default::default(), &[]);
        assert_eq!(verdicts[0].reason, "boom");
        assert_eq!(verdicts[0].detail, "boom");
        assert!(!verdicts[1].passed);
        assert!(verdicts[1].reason.starts_with("never finished"));
    }
}
