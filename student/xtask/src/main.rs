//! The lab's tools, in Rust so that nothing beyond cargo is needed:
//! `cargo xtask <command>`.

// The modules are shared with the course kit's own tools, and a few of their
// helpers serve commands that only the kit has.
#![allow(dead_code)]

mod filter;
mod grade;
mod held_back;
mod lab;
mod progress;
mod report;
mod scratch;
mod suite;
mod weights;

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask <command>

commands:
  filter [STEP]   print the test filter for a step, given as a number (3) or a name (half_open)
  progress        run the suite on your starter and print a scoreboard by step
  grade [--out OUT]
                  score your starter by step; writes results.json, junit.xml and summary.txt";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("progress") => progress::progress(),
        Some("filter") => filter::step_filter(args.get(1).map(String::as_str).unwrap_or("")),
        Some("grade") => grade::grade(&args[1..]),
        _ => Err(USAGE.to_owned()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace's root folder.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives inside the workspace")
        .to_path_buf()
}
