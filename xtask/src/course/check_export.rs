//! `cargo xtask check-export [MISTAKE]`: the whole course cycle, end to
//! end, the way a student and an instructor meet it.
//!
//! Exports the student edition to a temporary folder, `git clone`s it
//! afresh (so only what was committed counts) and checks, in the clone:
//! - it stands alone: the lock matches, every picture LAB.md, MISTAKES.md
//!   and README.md show is there, no heading of theirs is left empty, and
//!   every recipe, file, test and crate they name in code is there (the
//!   kit's own handouts are held to the same, against the kit);
//! - its own recipes, run through `just` as a student runs them: `just test`
//!   builds and fails because tests fail (not because the build does),
//!   `just progress` and `just hint 1` work, `just predict 1` writes
//!   `predictions.toml` and nothing else, `just grade` scores 0,
//!   `just demo` and `just tune` build and say the starter is unfinished,
//!   and no step shows 0 tests;
//! - a starter that does not compile makes `just grade` exit non-zero,
//!   after writing a results.json that scores 0;
//! - graded by this repository (`cargo xtask grade CLONE`, sharing the
//!   clone's target folder, so the binary the clone built last is at hand),
//!   the untouched starter scores 0 on every step, with the held-back tests
//!   in the run: the kit's suite, not the export's;
//! - the solution's files copied into its starter score full marks, and
//!   then `just demo` and `just tune` succeed;
//! - the solution with one gallery mistake applied (MISTAKE, a part of a
//!   file name in `mistakes/`) loses points in the step of the TODO that
//!   mistake touches, and nowhere else.
//!
//! Every check runs, and all failures are listed at the end. Every build
//! shares one target folder, `target/check-export/target`, so dependencies
//! build once and stay built from run to run. If python3 is at hand, the
//! reports and the workflow are also read back with real JSON, XML and (if
//! installed) YAML parsers.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::course::export::{self, empty_sections, image_links, local_path};
use crate::scratch::copy_tree;
use crate::{authoring::named, root};

/// A mistake caught by its own step's tests only, so the points it loses
/// all come from that step.
const DEFAULT_MISTAKE: &str = "27-refusal-hides-the-cause";

/// The Markdown files a student reads; their pictures must resolve.
const HANDOUTS: &[&str] = &["LAB.md", "ADVANCED.md", "MISTAKES.md", "README.md"];

pub(crate) fn check_export(args: &[String]) -> Result<(), String> {
    let started = Instant::now();
    let root = root();
    let mistake = find_mistake(&root, args.first().map_or(DEFAULT_MISTAKE, String::as_str))?;
    let base = root.join("target/check-export");
    // Kept from run to run, like any target folder: only what changed builds.
    let target = base.join("target");
    for stale in ["untouched", "solved", "mistake"] {
        let stale = base.join(stale);
        if stale.exists() {
            fs::remove_dir_all(&stale).map_err(|e| e.to_string())?;
        }
    }
    // Outside this repository, as a student's clone is: nothing above it
    // can be mistaken for its workspace.
    let scratch = std::env::temp_dir().join(format!("check-export-{}", std::process::id()));
    if scratch.exists() {
        fs::remove_dir_all(&scratch).map_err(|e| e.to_string())?;
    }
    let exported = scratch.join("student");
    let clone = scratch.join("clone");
    let mut checks = Checks::default();

    println!(
        "== exporting the student edition (the default, the core lab) to {}",
        exported.display()
    );
    export::export_track(&exported, export::Track::Core)?;
    run(Command::new("git")
        .arg("clone")
        .arg("--quiet")
        .arg(&exported)
        .arg(&clone))?;
    // The core edition's handouts: the advanced track's document stays out.
    let advanced = crate::manifest::HANDOUTS[1];
    let core_handouts: Vec<&str> = HANDOUTS
        .iter()
        .copied()
        .filter(|handout| *handout != advanced)
        .collect();
    checks.check(
        "the core edition holds no step after step 10: no ADVANCED.md, test, hint, weight or manifest entry of one",
        only_core_steps(&clone),
    );

    println!("== the clone stands alone");
    checks.check(
        "its lock matches its manifests",
        run(cargo(&clone, &target).args([
            "metadata",
            "--locked",
            "--format-version",
            "1",
            "--quiet",
        ])),
    );
    for handout in &core_handouts {
        let handout = *handout;
        checks.check(
            &format!("{handout}'s pictures are in the export"),
            missing_pictures(&clone, handout),
        );
        checks.check(
            &format!("{handout}'s links lead to files and headings of the export"),
            links_lead_somewhere(&clone, handout),
        );
        checks.check(
            &format!("{handout} has no empty section"),
            fs::read_to_string(clone.join(handout))
                .map_err(|e| format!("{handout}: {e}"))
                .and_then(|text| no_empty_section(handout, &text)),
        );
    }
    for (tree, which, handouts) in [
        (&clone, "the export", core_handouts.as_slice()),
        (&root, "the kit", HANDOUTS),
    ] {
        // The hints `just hint` shows are in the manifest.
        for handout in handouts.iter().chain(&["steps.toml"]) {
            checks.check(
                &format!("{which}'s {handout} names only recipes, files, tests and crates it has"),
                names_only_what_it_has(tree, &root, handout),
            );
        }
    }
    // The kit's own tools, built into the shared folder before the clone
    // builds its own there: the kit's grade below must still be the kit's.
    checks.check(
        "the kit's tools build in the shared target folder",
        run(cargo(&root, &target).args(["build", "--quiet", "-p", "xtask"])),
    );

    println!("== the export's own recipes, on the untouched starter");
    let test = just(&clone, &target, &["test"])?;
    checks.check("`just test` fails because tests fail", {
        test.exits(false)
            .and_then(|()| test.built())
            .and_then(|()| test.counts_every_step())
            .and_then(|()| {
                expect(
                    test.output.contains(" fail"),
                    "`just test` names no failing test",
                )
            })
    });
    checks.check(
        "the first `just test` prints under 150 lines besides cargo's own",
        test.printed_under(150),
    );
    let progress = just(&clone, &target, &["progress"])?;
    checks.check(
        "`just progress` shows every step",
        progress
            .exits(true)
            .and_then(|()| progress.counts_every_step()),
    );
    let hint = just(&clone, &target, &["hint", "1"])?;
    checks.check(
        "`just hint 1` gives a hint",
        hint.exits(true).and_then(|()| {
            expect(
                hint.output.contains("Hint 1"),
                &format!("`just hint 1` gave no hint:\n{}", hint.output),
            )
        }),
    );
    // A prediction goes into predictions.toml and nowhere else; the file is
    // then removed, so the grades below see a student who never predicted.
    let before = git_status(&clone)?;
    let predict = just(
        &clone,
        &target,
        &["predict", "1", "--student", "check-export", "--answer", "0"],
    )?;
    checks.check(
        "`just predict 1` records a prediction in time, in predictions.toml alone",
        predict.exits(true).and_then(|()| {
            let after = git_status(&clone)?;
            let added: Vec<&String> = after.iter().filter(|line| !before.contains(line)).collect();
            expect(
                predict.output.contains("In time") && added == ["?? predictions.toml"],
                &format!(
                    "`just predict 1` changed {added:?}, or was not in time:\n{}",
                    predict.tail()
                ),
            )
        }),
    );
    let _ = fs::remove_file(clone.join("predictions.toml"));
    let own = clone.join("target/grade");
    let grade = just(&clone, &target, &["grade"])?;
    checks.check("`just grade` scores the untouched starter 0", {
        grade
            .exits(true)
            .and_then(|()| grade.counts_every_step())
            .and_then(|()| Report::read(&own))
            .and_then(|report| expect(report.score == 0.0, &format!("it scores {}", report.score)))
            .and_then(|()| {
                parse_with_python(&own, Some(&clone.join(".github/workflows/grade.yml")))
            })
    });
    let demo = just(&clone, &target, &["demo"])?;
    checks.check("`just demo` builds and says the starter is unfinished", {
        demo.exits(false)
            .and_then(|()| demo.built())
            .and_then(|()| {
                expect(
                    demo.output.contains("stopped on unfinished starter code"),
                    &format!(
                        "`just demo` did not stop on the starter's TODOs:\n{}",
                        demo.tail()
                    ),
                )
            })
    });
    let tune = just(&clone, &target, &["tune"])?;
    checks.check("`just tune` builds and says the starter is unfinished", {
        tune.exits(false)
            .and_then(|()| tune.built())
            .and_then(|()| {
                expect(
                    tune.output.contains("not done yet"),
                    &format!(
                        "`just tune` did not stop on the starter's TODOs:\n{}",
                        tune.tail()
                    ),
                )
            })
    });

    println!("== a starter that does not build");
    let lib = clone.join("starter/src/lib.rs");
    let original = fs::read_to_string(&lib).map_err(|e| e.to_string())?;
    fs::write(&lib, format!("{original}\nfn broken( {{\n")).map_err(|e| e.to_string())?;
    if own.exists() {
        fs::remove_dir_all(&own).map_err(|e| e.to_string())?;
    }
    let broken = just(&clone, &target, &["grade"])?;
    checks.check(
        "`just grade` exits non-zero on a build error, with results that score 0",
        broken.exits(false).and_then(|()| {
            let report =
                Report::read(&own).map_err(|e| format!("no results after the build error: {e}"))?;
            expect(
                report.score == 0.0,
                &format!("a crate that does not build scores {}", report.score),
            )
        }),
    );
    fs::write(&lib, &original).map_err(|e| e.to_string())?;

    println!("== graded by this repository, in the same target folder");
    let held_back = held_back_modules(&root)?;
    let untouched = kit_grade(&root, &target, &clone, &base.join("untouched"));
    checks.check(
        "the kit grades the untouched starter 0 on every step, held-back tests included",
        untouched.and_then(|(run, report)| {
            run.counts_every_step()?;
            if let Some((step, score)) = report.steps.iter().find(|(_, (score, _))| *score > 0.0) {
                return Err(format!("step {step} scores {}", score.0));
            }
            expect(report.score == 0.0, &format!("it scores {}", report.score))?;
            expect(!held_back.is_empty(), "grading/held-back/ holds no module")?;
            let junit = fs::read_to_string(base.join("untouched/junit.xml"))
                .map_err(|e| format!("junit.xml: {e}"))?;
            // JUnit names a test's module as its class, or in its name.
            let absent: Vec<&String> = held_back
                .iter()
                .filter(|module| {
                    !junit.contains(&format!("classname=\"{module}\""))
                        && !junit.contains(&format!("{module}::"))
                })
                .collect();
            expect(
                absent.is_empty(),
                &format!(
                    "the kit's grade ran none of the held-back tests of {absent:?}: it graded \
                     with the export's suite"
                ),
            )
        }),
    );

    println!("== every step done, as the solution does it, in the starter");
    let src = clone.join("starter/src");
    crate::authoring::starter::write_crate(&root.join("solution/src"), u32::MAX, &src)?;
    let solved = kit_grade(&root, &target, &clone, &base.join("solved"));
    let solved_score = solved
        .as_ref()
        .map(|(_, report)| report.score)
        .unwrap_or(0.0);
    let max = solved.as_ref().map(|(_, report)| report.max).unwrap_or(0.0);
    checks.check(
        "the kit grades the solution full marks, every test passing",
        solved.and_then(|(_, report)| {
            expect(
                // Bonuses (the tuning task's) may add to the lab's total.
                report.score >= report.max,
                &format!("the solution scores {} / {}", report.score, report.max),
            )?;
            let junit = fs::read_to_string(base.join("solved/junit.xml"))
                .map_err(|e| format!("junit.xml: {e}"))?;
            expect(
                junit.contains("<testcase")
                    && !junit.contains("<failure")
                    && !junit.contains("<error"),
                "the solution fails a test (see target/check-export/solved/junit.xml)",
            )?;
            parse_with_python(&base.join("solved"), None)
        }),
    );
    // `just test` on the solution would build the suite once more for what
    // the grade above already showed; the demo and the tuning task have no
    // other check that they work on a finished crate.
    let demo = just(&clone, &target, &["demo"])?;
    checks.check(
        "`just demo` runs every scenario on the solution",
        demo.exits(true),
    );
    let tune = just(&clone, &target, &["tune"])?;
    checks.check(
        "`just tune` scores the solution with the exported tuning.toml",
        tune.exits(true).and_then(|()| {
            expect(
                tune.output.contains("Score: "),
                &format!("`just tune` printed no score:\n{}", tune.tail()),
            )
        }),
    );
    let http = just(
        &clone,
        &target,
        &["tune", "--http", "threshold=2", "attempts=3"],
    )?;
    checks.check(
        "`just tune --http threshold=2 attempts=3` runs the demo's scenarios on the solution",
        http.exits(true),
    );

    let mistake = crate::authoring::mistake::Mistake::read(&mistake)?;
    let name = mistake.name.clone();
    let mistaken = base.join("mistaken-solution");
    if mistaken.exists() {
        fs::remove_dir_all(&mistaken).map_err(|e| e.to_string())?;
    }
    // The whole crate: the generator reads its designs beside `src`.
    copy_tree(&root.join("solution"), &mistaken)?;
    let step = apply_mistake(&mistake, &mistaken.join("src"))?;
    crate::authoring::starter::write_crate(&mistaken.join("src"), u32::MAX, &src)?;
    println!("== with the mistake {name}, step {step} alone loses points");
    let mistaken = kit_grade(&root, &target, &clone, &base.join("mistake"));
    let mut lost = 0.0;
    checks.check(
        &format!("{name} costs points in step {step} only"),
        mistaken.and_then(|(_, report)| {
            // From the steps, not the total, which a bonus may lift.
            lost = report
                .steps
                .values()
                .map(|(score, points)| points - score)
                .sum();
            for (number, (score, points)) in &report.steps {
                let full = score == points;
                if *number == step && full {
                    return Err(format!("{name} costs step {step} nothing"));
                }
                if *number != step && !full {
                    return Err(format!(
                        "{name} belongs to step {step} but also costs step {number} points \
                         ({score} / {points})"
                    ));
                }
            }
            Ok(())
        }),
    );

    println!("== the advanced edition (`--track advanced`): steps 1-17, with ADVANCED.md");
    let advanced_export = scratch.join("student-advanced");
    let advanced_clone = scratch.join("clone-advanced");
    export::export_track(&advanced_export, export::Track::Advanced)?;
    run(Command::new("git")
        .arg("clone")
        .arg("--quiet")
        .arg(&advanced_export)
        .arg(&advanced_clone))?;
    checks.check(
        "the advanced edition's steps.toml (its hints) names only what the edition has",
        names_only_what_it_has(&advanced_clone, &root, "steps.toml"),
    );
    for handout in HANDOUTS {
        checks.check(
            &format!("the advanced edition's {handout}: its pictures, links and names are there"),
            missing_pictures(&advanced_clone, handout)
                .and_then(|()| links_lead_somewhere(&advanced_clone, handout))
                .and_then(|()| names_only_what_it_has(&advanced_clone, &root, handout)),
        );
    }
    let test = just(&advanced_clone, &target, &["test"])?;
    checks.check(
        "the advanced edition's `just test` counts every step, 1 to 17",
        test.exits(false)
            .and_then(|()| test.counts_every_step())
            .and_then(|()| {
                let steps: Vec<u32> = step_counts(&test.output)
                    .into_iter()
                    .map(|(step, _)| step)
                    .collect();
                let all: Vec<u32> = crate::lab::steps()?.into_iter().map(|(n, _)| n).collect();
                expect(
                    steps == all,
                    &format!("it shows steps {steps:?}, the kit has {all:?}"),
                )
            }),
    );

    let elapsed = started.elapsed();
    if checks.failed.is_empty() {
        let _ = fs::remove_dir_all(&scratch);
        println!(
            "\ncheck-export: {} checks pass; untouched 0, solution {solved_score} / {max}, {name} \
             loses {lost:.2} point(s), all in step {step} ({elapsed:.0?})",
            checks.passed
        );
        Ok(())
    } else {
        Err(format!(
            "check-export: {} of {} checks fail ({elapsed:.0?}); the export and its clone are \
             kept in {}:\n- {}",
            checks.failed.len(),
            checks.failed.len() + checks.passed,
            scratch.display(),
            checks.failed.join("\n- ")
        ))
    }
}

/// The checks' tally: each is printed as it ends, and a failed one does
/// not stop the others, so one run shows everything that is wrong.
#[derive(Default)]
struct Checks {
    passed: usize,
    failed: Vec<String>,
}

impl Checks {
    fn check(&mut self, what: &str, result: Result<(), String>) {
        match result {
            Ok(()) => {
                println!("  ok    {what}");
                self.passed += 1;
            }
            Err(why) => {
                println!("  FAIL  {what}: {}", why.trim_end());
                self.failed.push(format!("{what}: {}", why.trim_end()));
            }
        }
    }
}

/// One recipe's run: how it ended and what it printed.
struct Ran {
    what: String,
    code: Option<i32>,
    output: String,
}

impl Ran {
    /// Succeeded, or (`success` false) exited 1, as a recipe does when
    /// something it reports failed; a crash or a signal is never expected.
    fn exits(&self, success: bool) -> Result<(), String> {
        let expected = if success { 0 } else { 1 };
        if self.code == Some(expected) {
            Ok(())
        } else {
            Err(format!(
                "`{}` exited with {}, expected {expected}:\n{}",
                self.what,
                self.code
                    .map_or("a signal".to_owned(), |code| code.to_string()),
                self.tail()
            ))
        }
    }

    /// Nothing in the output says the build failed.
    fn built(&self) -> Result<(), String> {
        let failed = ["error[E", "error: could not compile", "did not build"]
            .iter()
            .find(|sign| self.output.contains(*sign));
        match failed {
            None => Ok(()),
            Some(sign) => Err(format!(
                "`{}` failed to build ({sign}):\n{}",
                self.what,
                self.tail()
            )),
        }
    }

    /// The scoreboard lists steps, and none with 0 tests.
    fn counts_every_step(&self) -> Result<(), String> {
        let steps = step_counts(&self.output);
        if steps.is_empty() {
            return Err(format!("`{}` shows no step:\n{}", self.what, self.tail()));
        }
        let empty: Vec<u32> = steps
            .iter()
            .filter(|(_, total)| *total == 0)
            .map(|(step, _)| *step)
            .collect();
        expect(
            empty.is_empty(),
            &format!("`{}` shows 0 tests for step(s) {empty:?}", self.what),
        )
    }

    /// Whether the recipe printed fewer than `limit` lines of its own: cargo's
    /// progress lines (`Compiling ...`, `Finished ...`, `Running ...`) do
    /// not count, since they come only with a build.
    fn printed_under(&self, limit: usize) -> Result<(), String> {
        let own = self
            .output
            .lines()
            .filter(|line| {
                let word = line.split_whitespace().next().unwrap_or_default();
                !matches!(
                    word,
                    "Compiling"
                        | "Finished"
                        | "Running"
                        | "Downloaded"
                        | "Downloading"
                        | "Locking"
                        | "Blocking"
                        | "Updating"
                        | "Adding"
                )
            })
            .count();
        expect(
            own < limit,
            &format!("`{}` printed {own} lines of its own", self.what),
        )
    }

    /// The last lines, where a recipe says what went wrong.
    fn tail(&self) -> String {
        let lines: Vec<&str> = self.output.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}

/// Whether the core edition in `clone` leaves every step after step 10
/// out: no ADVANCED.md, and no test module, hint, weight or manifest entry
/// of such a step.
fn only_core_steps(clone: &Path) -> Result<(), String> {
    let last = crate::manifest::CORE_LAST;
    let mut found = Vec::new();
    let advanced = crate::manifest::HANDOUTS[1];
    if clone.join(advanced).exists() {
        found.push(advanced.to_owned());
    }
    let later = |name: &str| {
        name.strip_prefix("step")
            .map(|rest| {
                rest.chars()
                    .take_while(char::is_ascii_digit)
                    .collect::<String>()
            })
            .and_then(|digits| digits.parse::<u32>().ok())
            .is_some_and(|n| n > last)
    };
    for entry in fs::read_dir(clone.join("tests/lab")).map_err(|e| format!("tests/lab: {e}"))? {
        let name = entry.map_err(|e| e.to_string())?.file_name();
        let name = name.to_string_lossy();
        if later(&name) {
            found.push(format!("tests/lab/{name}"));
        }
    }
    for file in ["grading/weights.toml", "steps.toml", "tests/lab/main.rs"] {
        let text = fs::read_to_string(clone.join(file)).map_err(|e| format!("{file}: {e}"))?;
        for line in text.lines() {
            let key = line
                .trim()
                .trim_start_matches("mod ")
                .split(['=', ';', ' '])
                .next()
                .unwrap_or_default();
            let number = line.trim().strip_prefix("number = ");
            if later(key)
                || number
                    .and_then(|n| n.parse::<u32>().ok())
                    .is_some_and(|n| n > last)
            {
                found.push(format!("{file}: {line}"));
            }
        }
    }
    expect(found.is_empty(), &found.join("\n"))
}

/// The steps of a scoreboard (`step 3  generations  0/6 ...`), each with its
/// number of tests.
fn step_counts(output: &str) -> Vec<(u32, u32)> {
    output
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            if words.next() != Some("step") {
                return None;
            }
            let step: u32 = words.next()?.parse().ok()?;
            let total = words.find_map(|word| {
                let (passed, total) = word.split_once('/')?;
                passed.parse::<u32>().ok()?;
                total.parse::<u32>().ok()
            })?;
            Some((step, total))
        })
        .collect()
}

/// Runs `just ARGS` in `dir`, as a student would.
fn just(dir: &Path, target: &Path, args: &[&str]) -> Result<Ran, String> {
    let what = format!("just {}", args.join(" "));
    let started = Instant::now();
    let output = student_env(Command::new("just").args(args), dir, target)
        .output()
        .map_err(|e| {
            format!(
                "cannot run `{what}` ({e}): check-export runs the export's recipes through \
                 `just`; install it (README.md, Installing just)"
            )
        })?;
    let ran = Ran {
        what,
        code: output.status.code(),
        output: String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr),
    };
    println!(
        "  ran   {} (exit {}, {:.0?})",
        ran.what,
        ran.code
            .map_or("by a signal".to_owned(), |code| code.to_string()),
        started.elapsed()
    );
    Ok(ran)
}

/// The kit's `cargo xtask grade CLONE --out OUT`, as an instructor runs it.
fn kit_grade(
    root: &Path,
    target: &Path,
    clone: &Path,
    out: &Path,
) -> Result<(Ran, Report), String> {
    let started = Instant::now();
    let output = cargo(root, target)
        .args(["xtask", "grade"])
        .arg(clone)
        .arg("--out")
        .arg(out)
        .output()
        .map_err(|e| format!("cannot run cargo xtask grade: {e}"))?;
    let ran = Ran {
        what: "cargo xtask grade CLONE (the kit's)".to_owned(),
        code: output.status.code(),
        output: String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr),
    };
    println!(
        "  ran   {} (exit {}, {:.0?})",
        ran.what,
        ran.code
            .map_or("by a signal".to_owned(), |code| code.to_string()),
        started.elapsed()
    );
    ran.exits(true)?;
    let report = Report::read(out)?;
    Ok((ran, report))
}

/// The held-back modules of the kit that hold tests (one may only hold the
/// helpers the others share), whose tests a kit grade must run.
fn held_back_modules(root: &Path) -> Result<Vec<String>, String> {
    let dir = root.join("grading/held-back");
    let mut modules: Vec<String> = fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let text = fs::read_to_string(&path).ok()?;
            let module = path.file_name()?.to_str()?.strip_suffix(".rs")?.to_owned();
            (text.contains("#[test]") || text.contains("proptest!")).then_some(module)
        })
        .collect();
    modules.sort();
    Ok(modules)
}

/// Whether every relative link of `handout` in `clone` leads to a file and,
/// with an anchor, to one of its headings.
fn links_lead_somewhere(clone: &Path, handout: &str) -> Result<(), String> {
    let text = fs::read_to_string(clone.join(handout)).map_err(|e| format!("{handout}: {e}"))?;
    let broken = named::broken_links(clone, handout, &text);
    expect(broken.is_empty(), &broken.join("\n"))
}

/// The pictures `handout` shows that the clone does not have.
fn missing_pictures(clone: &Path, handout: &str) -> Result<(), String> {
    let text = fs::read_to_string(clone.join(handout)).map_err(|e| format!("{handout}: {e}"))?;
    let mut missing = Vec::new();
    for link in image_links(&text) {
        match local_path(&link)? {
            Some(path) if !clone.join(&path).is_file() => missing.push(link),
            _ => {}
        }
    }
    expect(
        missing.is_empty(),
        &format!("{handout} shows pictures the export does not have: {missing:?}"),
    )
}

/// What `handout` names in code (a `just` recipe, a file, a test, a crate)
/// that the tree at `tree` does not have ([`named::missing`]).
fn names_only_what_it_has(tree: &Path, kit: &Path, handout: &str) -> Result<(), String> {
    let text = fs::read_to_string(tree.join(handout)).map_err(|e| format!("{handout}: {e}"))?;
    let missing = named::missing(tree, kit, handout, &text, &named::recipes(tree)?);
    expect(
        missing.is_empty(),
        &format!(
            "a reader would look for what is not there:\n    {}",
            missing.join("\n    ")
        ),
    )
}

fn no_empty_section(handout: &str, text: &str) -> Result<(), String> {
    let empty: Vec<String> = empty_sections(text)
        .into_iter()
        .map(|(line, heading)| format!("line {line}: {heading}"))
        .collect();
    expect(
        empty.is_empty(),
        &format!("{handout} has headings with nothing under them: {empty:?}"),
    )
}

/// What a grade's `results.json` says: the total, the most it could be, and
/// each step's score and points (its held-back entry added in).
struct Report {
    score: f64,
    max: f64,
    steps: std::collections::BTreeMap<u32, (f64, f64)>,
}

impl Report {
    fn read(out: &Path) -> Result<Report, String> {
        let path = out.join("results.json");
        let text = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let json = Json::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let number = |value: Option<&Json>, what: &str| match value {
            Some(Json::Number(n)) => Ok(*n),
            _ => Err(format!("{}: no number for {what}", path.display())),
        };
        let score = number(json.get("score"), "score")?;
        let Some(Json::Array(tests)) = json.get("tests") else {
            return Err(format!("{}: no tests", path.display()));
        };
        let mut report = Report {
            score,
            max: 0.0,
            steps: Default::default(),
        };
        for test in tests {
            let points = number(test.get("max_score"), "max_score")?;
            let got = number(test.get("score"), "a test's score")?;
            report.max += points;
            let Some(Json::String(name)) = test.get("name") else {
                continue;
            };
            // "Step 3: generations", maybe "(held-back tests)" after it.
            let step = name
                .strip_prefix("Step ")
                .and_then(|rest| rest.split(':').next())
                .and_then(|n| n.parse::<u32>().ok());
            if let Some(step) = step {
                let entry = report.steps.entry(step).or_insert((0.0, 0.0));
                entry.0 = round(entry.0 + got);
                entry.1 = round(entry.1 + points);
            }
        }
        report.max = round(report.max);
        if report.steps.is_empty() {
            return Err(format!("{}: no step is scored", path.display()));
        }
        Ok(report)
    }
}

fn round(points: f64) -> f64 {
    (points * 100.0).round() / 100.0
}

/// Just enough JSON to read a grade back (the tools have no JSON crate).
#[derive(Debug, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    fn parse(text: &str) -> Result<Json, String> {
        let mut chars = text.char_indices().peekable();
        let value = parse_value(text, &mut chars)?;
        skip_space(&mut chars);
        match chars.next() {
            None => Ok(value),
            Some((at, _)) => Err(format!("trailing text at byte {at}")),
        }
    }

    fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(fields) => fields.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

type Chars<'a> = std::iter::Peekable<std::str::CharIndices<'a>>;

fn skip_space(chars: &mut Chars<'_>) {
    while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
}

fn parse_value(text: &str, chars: &mut Chars<'_>) -> Result<Json, String> {
    skip_space(chars);
    let Some(&(at, first)) = chars.peek() else {
        return Err("unexpected end".to_owned());
    };
    match first {
        '{' => {
            chars.next();
            let mut fields = Vec::new();
            loop {
                skip_space(chars);
                if chars.next_if(|(_, c)| *c == '}').is_some() {
                    return Ok(Json::Object(fields));
                }
                let Json::String(key) = parse_value(text, chars)? else {
                    return Err(format!("a key that is not a string near byte {at}"));
                };
                skip_space(chars);
                if chars.next().map(|(_, c)| c) != Some(':') {
                    return Err(format!("no `:` after {key:?}"));
                }
                fields.push((key, parse_value(text, chars)?));
                skip_space(chars);
                chars.next_if(|(_, c)| *c == ',');
            }
        }
        '[' => {
            chars.next();
            let mut items = Vec::new();
            loop {
                skip_space(chars);
                if chars.next_if(|(_, c)| *c == ']').is_some() {
                    return Ok(Json::Array(items));
                }
                items.push(parse_value(text, chars)?);
                skip_space(chars);
                chars.next_if(|(_, c)| *c == ',');
            }
        }
        '"' => {
            chars.next();
            let mut out = String::new();
            while let Some((_, c)) = chars.next() {
                match c {
                    '"' => return Ok(Json::String(out)),
                    '\\' => match chars.next().map(|(_, c)| c) {
                        Some('n') => out.push('\n'),
                        Some('t') => out.push('\t'),
                        Some('r') => out.push('\r'),
                        Some('b') => out.push('\u{8}'),
                        Some('f') => out.push('\u{c}'),
                        Some('u') => {
                            let hex: String = (0..4)
                                .filter_map(|_| chars.next().map(|(_, c)| c))
                                .collect();
                            let code = u32::from_str_radix(&hex, 16)
                                .map_err(|_| format!("bad escape \\u{hex}"))?;
                            out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                        }
                        Some(other) => out.push(other),
                        None => break,
                    },
                    c => out.push(c),
                }
            }
            Err("a string that does not end".to_owned())
        }
        _ => {
            let mut end = at;
            while let Some(&(i, c)) = chars.peek() {
                if c == ',' || c == '}' || c == ']' || c.is_whitespace() {
                    break;
                }
                end = i + c.len_utf8();
                chars.next();
            }
            match &text[at..end] {
                "null" => Ok(Json::Null),
                "true" => Ok(Json::Bool(true)),
                "false" => Ok(Json::Bool(false)),
                number => number
                    .parse()
                    .map(Json::Number)
                    .map_err(|_| format!("unexpected `{number}` at byte {at}")),
            }
        }
    }
}

/// The mistake in `mistakes/` whose name contains `part`.
fn find_mistake(root: &Path, part: &str) -> Result<PathBuf, String> {
    let found = crate::authoring::mistake::gallery(root, Some(part))?;
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(format!("no mistake in mistakes/ is called {part}")),
        _ => Err(format!("more than one mistake in mistakes/ matches {part}")),
    }
}

/// Puts `mistake` into the crate sources at `src` (the solution's, copied
/// into the export's starter) and says the step of the TODO regions it
/// changes: a mistake of provided code has no step of its own to lose.
fn apply_mistake(mistake: &crate::authoring::mistake::Mistake, src: &Path) -> Result<u32, String> {
    let landed = crate::authoring::mistake::apply(mistake, src)?;
    let mut steps: Vec<Option<u32>> = landed.iter().map(|landed| landed.todo).collect();
    steps.sort_unstable();
    steps.dedup();
    match steps.as_slice() {
        [Some(step)] => Ok(*step),
        _ => Err(format!(
            "{} does not change the TODOs of exactly one step: choose one that does",
            mistake.name
        )),
    }
}

/// A command run in `dir` with the shared target folder, in the
/// environment a student has: without the variables `cargo run` set for
/// this tool, which name this repository.
fn student_env<'a>(command: &'a mut Command, dir: &Path, target: &Path) -> &'a mut Command {
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if name == "CARGO_MANIFEST_DIR"
            || name == "CARGO_MANIFEST_PATH"
            || name == "CARGO_PRIMARY_PACKAGE"
            || name.starts_with("CARGO_PKG_")
            || name.starts_with("CARGO_BIN_")
            || name == "CARGO_CRATE_NAME"
        {
            command.env_remove(name.as_ref());
        }
    }
    // Every run builds a fresh clone's crates, so incremental caches are
    // never reused: without them each build is faster, and no different.
    command
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .env("CARGO_INCREMENTAL", "0")
}

fn cargo(dir: &Path, target: &Path) -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    student_env(&mut command, dir, target);
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

/// `git status --porcelain`'s lines in `dir`: what a command changed there.
fn git_status(dir: &Path) -> Result<Vec<String>, String> {
    let output = Command::new("git")
        .current_dir(dir)
        .args(["status", "--porcelain", "--untracked-files=all"])
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    Ok(String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_owned)
        .collect())
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
    fn a_scoreboard_gives_each_step_its_number_of_tests() {
        let progress = "  step 1  closed              0/15  <- next\n  step 15 layer               0/8\n  provided parts              9/9\nStart here: step 1 (closed).\n";
        assert_eq!(step_counts(progress), [(1, 15), (15, 8)]);
        let grade = "  step 10 explore             0/0  tests       0 / 1\n";
        assert_eq!(step_counts(grade), [(10, 0)]);
        let ran = Ran {
            what: "just grade".to_owned(),
            code: Some(0),
            output: grade.to_owned(),
        };
        assert!(ran.counts_every_step().is_err());
        assert!(ran.exits(true).is_ok() && ran.exits(false).is_err());
    }

    #[test]
    fn a_grade_is_read_back_step_by_step() {
        let out = std::env::temp_dir().join(format!("check-export-report-{}", std::process::id()));
        fs::create_dir_all(&out).unwrap();
        fs::write(
            out.join("results.json"),
            r#"{
  "score": 3.5,
  "output": "Grade: 3.5 \"of\" 10\n",
  "extra_data": {"seed": 0, "student": null, "refused": [], "ok": true},
  "tests": [
    {"name": "Step 1: closed", "score": 2, "max_score": 4, "output": "pass  step01_closed::a\n"},
    {"name": "Step 1: closed (held-back tests)", "score": 1.5, "max_score": 2, "output": ""},
    {"name": "Step 2: open", "score": 0, "max_score": 4, "output": "\u00e9"},
    {"name": "Provided parts", "score": 0, "max_score": 0, "output": ""}
  ]
}
"#,
        )
        .unwrap();
        let report = Report::read(&out).unwrap();
        assert_eq!((report.score, report.max), (3.5, 10.0));
        assert_eq!(report.steps[&1], (3.5, 6.0));
        assert_eq!(report.steps[&2], (0.0, 4.0));
        fs::write(out.join("results.json"), "{\"score\": 0,").unwrap();
        assert!(Report::read(&out).is_err());
        fs::remove_dir_all(&out).unwrap();
    }
}
