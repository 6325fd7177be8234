//! The lab's tools, in Rust so that nothing beyond cargo is needed:
//! `cargo xtask <command>`.

// The modules are shared with the course kit's own tools, and a few of their
// helpers serve commands that only the kit has.
#![allow(dead_code)]

// By audience, as in the course kit: what you run while doing the lab,
// and what grades your crate; beside them, what both share.
mod grading;
mod students;

mod lab;
mod manifest;
mod rules;
mod scratch;
mod suite;
mod workspace_root;

use grading::grade;
use students::{filter, hint, predict, progress, test, watch};

use workspace_root::root;
use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask <command>

commands:
  test [STEP]     run the suite on your starter: failing tests by step, then a scoreboard
                  and where to start; with a STEP, that step's failures in full
  progress        run the suite on your starter and print a scoreboard by step
  watch [STEP]    `test [STEP]` again every time a file under starter/ is saved
  hint STEP [reset]  one more hint for a step each time, from a nudge to nearly the answer
  predict STEP [--answer A] [--again]
                  your own question for a step (1-7), to answer before you write its code; the
                  answer goes into predictions.toml (commit it), and `grade` scores it
  filter [STEP]   print the test filter for a step, given as a number (3) or a name (generations)
  grade [--out OUT]
                  score your starter by step, as the course grades it (the same source check and
                  sealed run); writes results.json, junit.xml and summary.txt";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("test") => test::test(args.get(1).map(String::as_str).unwrap_or("")),
        Some("watch") => watch::watch(args.get(1).map(String::as_str).unwrap_or("")),
        Some("progress") => progress::progress().map(|()| ExitCode::SUCCESS),
        Some("hint") => hint::hint(
            args.get(1).map(String::as_str),
            args.get(2).map(String::as_str),
        )
        .map(|()| ExitCode::SUCCESS),
        Some("filter") => filter::step_filter(args.get(1).map(String::as_str).unwrap_or(""))
            .map(|()| ExitCode::SUCCESS),
        Some("predict") => predict::predict(&args[1..]).map(|()| ExitCode::SUCCESS),
        Some("grade") => grade::grade(&args[1..]).map(|()| ExitCode::SUCCESS),
        // The grader's own: a sealed run inside the namespace it made.
        Some(grading::runner::COMMAND) => grading::runner::serve().map(|()| ExitCode::SUCCESS),
        _ => Err(USAGE.to_owned()),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

