//! `just tune`: runs the tuning task's simulation on YOUR crate with the
//! settings in `tuning.toml`, and prints the figures, the budget each one
//! is judged against, and the score. See LAB.md, "Tuning the breaker".

use std::path::Path;
use std::process::ExitCode;

#[path = "../tests/tuning/sim.rs"]
mod sim;

const USAGE: &str = "usage: just tune [--student ID]   (or LAB_STUDENT=ID, else git's user.email; \
                     settings in tuning.toml)";

fn main() -> ExitCode {
    let mut student = std::env::var("LAB_STUDENT")
        .ok()
        .filter(|id| !id.is_empty());
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--student", Some(id)) => student = Some(id),
            _ => {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    // As `just predict` and `just grade` do: without an id, git's address.
    if student.is_none() {
        student = std::process::Command::new("git")
            .args(["config", "user.email"])
            .output()
            .ok()
            .filter(|output| output.status.success())
            .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_owned())
            .filter(|email| !email.is_empty());
    }
    // The file at the repository's root, wherever cargo was started from.
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(sim::FILE);
    let settings = match sim::Settings::read(&file) {
        Ok(settings) => settings,
        Err(why) => {
            eprintln!("{why}");
            return ExitCode::from(2);
        }
    };
    let seed = student.as_deref().map_or(0, sim::seed_of);
    match &student {
        Some(id) => println!("Student {id}: the scenario your grade uses."),
        None => println!(
            "No student id (`just tune --student ID`, or `git config user.email`): the shared \
             practice scenario; your grade uses your own."
        ),
    }
    let scenario = sim::Scenario::for_seed(seed);
    // A `todo!()` of the crate is reported once, below, not as a panic dump.
    std::panic::set_hook(Box::new(|_| {}));
    match sim::run(&scenario, &settings) {
        Ok(figures) => {
            print!("{}", sim::report(&scenario, &settings, &figures));
            ExitCode::SUCCESS
        }
        Err(why) => {
            eprintln!("{why}");
            ExitCode::FAILURE
        }
    }
}
