//! Project chores, in Rust so that nothing beyond cargo is needed:
//! `cargo xtask <command>`.

// By audience: what students run, what grades, what instructors hand out,
// what maintainers change the lab with; beside them, what they all share
// (the lab's steps and rules, the suite's report, scratch folders).
mod authoring;
mod course;
mod grading;
mod students;

mod lab;
mod manifest;
mod rules;
mod scratch;
mod suite;
mod workspace_root;

use authoring::{
    check_forgeries, check_mistakes, check_readme, check_starter, check_verdict, library, sync,
};
use course::{autograder, check_export, export};
use grading::grade;
use students::{filter, hint, predict, progress, test, watch};

use std::process::ExitCode;
use workspace_root::root;

const USAGE: &str = "usage: cargo xtask <command>

commands:
  sync-starter    regenerate starter/src from the TODO markers in solution/src
  check-sync      fail if the committed starter differs from what sync-starter writes
  todos           list the TODOs in the order LAB.md teaches them
  test [STEP]     run the suite on the starter: failing tests by step, then a scoreboard
                  and where to start; with a STEP, that step's failures in full
  filter [STEP]   print the test filter for a step, given as a number (3) or a name (generations)
  progress        run the suite on the starter and print a scoreboard by step
  watch [STEP]    `test [STEP]` again every time a file under starter/ is saved
  hint STEP [reset]  one more hint for a step each time, from a nudge to nearly the answer
  predict STEP [--answer A] [--student ID] [--again]
                  ask the student's own question for a step (1-7) before its code is written, and
                  record the answer in predictions.toml, which `grade` scores
  check-starter   prove that every step's tests fail until that step is done, naming its TODO
  check-verdict [RUNS]  judge one wrong student crate RUNS times by both routes: one verdict, no file written
  check-mistakes  put each mistake of mistakes/ into a scratch copy of the solution and run the suite
                  (`--apply-only`: only check each still applies, building nothing)
  library-edition DIR
                  write the solution as a crate of its own, ready for `cargo package`
  export-student DIR
                  write the student edition, without the answers, as a fresh git repository in DIR
  grade [DIR] [--out OUT] [--student ID | --metadata FILE] [--all-steps] [--no-namespace]
                  score the starter (or DIR's, a student repository) by step, held-back tests included
                  and seeded by the student id (or LAB_STUDENT); only starter/src/*.rs is taken (and
                  tuning.toml, for the tuning task's bonus), it
                  must pass the source check, and each test runs sealed in a process of its own;
                  writes results.json (Gradescope), junit.xml and summary.txt to OUT (target/grade);
                  --all-steps runs the tests worth 0 points too, --no-namespace grades as a machine
                  without mount namespaces would
  check-forgeries [NAME]
                  grade each forgery in grading/forgeries/: each must score 0 and be named
  check-export [MISTAKE]
                  the whole cycle: export, then grade the untouched starter, the solution and one mistake
  autograder DIR  write a Gradescope autograder to DIR: setup.sh, run_autograder, the grading sources
                  (held-back tests included, no answers) and DIR/autograder.zip to upload
  check-autograder
                  build the autograder, run its setup.sh and run_autograder in a scratch Gradescope root:
                  the untouched starter scores 0, a crate with every step done full marks
  check-readme    run the README's set-up block as a newcomer would (scratch HOME, system PATH):
                  `just --version` and `just --list` must then work in a fresh clone";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("test") => test::test(args.get(1).map(String::as_str).unwrap_or("")),
        Some("watch") => watch::watch(args.get(1).map(String::as_str).unwrap_or("")),
        other => dispatch(other, &args).map(|()| ExitCode::SUCCESS),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

/// The commands that either succeed or fail with a message.
fn dispatch(command: Option<&str>, args: &[String]) -> Result<(), String> {
    match command {
        Some("sync-starter") => sync::sync_starter(),
        Some("check-sync") => sync::check_sync(),
        Some("todos") => sync::list_todos(),
        Some("progress") => progress::progress(),
        Some("check-starter") => check_starter::check_starter(),
        Some("check-mistakes") => check_mistakes::check_mistakes(&args[1..]),
        Some("check-verdict") => check_verdict::check_verdict(args.get(1).map(String::as_str)),
        Some("hint") => hint::hint(
            args.get(1).map(String::as_str),
            args.get(2).map(String::as_str),
        ),
        Some("export-student") => export::export_student(&args[1..]),
        Some("grade") => grade::grade(&args[1..]),
        // The grader's own: a sealed run inside the namespace it made.
        Some(grading::runner::COMMAND) => grading::runner::serve(),
        Some("check-export") => check_export::check_export(&args[1..]),
        Some("check-forgeries") => check_forgeries::check_forgeries(&args[1..]),
        Some("autograder") => autograder::autograder(&args[1..]),
        Some("check-autograder") => autograder::check_autograder(&args[1..]),
        Some("check-readme") => check_readme::check_readme(&args[1..]),
        Some("filter") => filter::step_filter(args.get(1).map(String::as_str).unwrap_or("")),
        Some("predict") => predict::predict(&args[1..]),
        Some("library-edition") => library::library_edition(&args[1..]),
        _ => Err(USAGE.to_owned()),
    }
}
