//! `just tune --http threshold=3 cooldown=500ms attempts=3 backoff=25ms..200ms`:
//! runs the demo's three tuning scenarios over real HTTP with those
//! settings and checks them.
//! See LAB.md, "Tuning the breaker".

use std::process::ExitCode;

use retry_breaker_demo::scenarios::Settings;
use retry_breaker_demo::tune::{self, SCENARIOS};
use retry_breaker_demo::unfinished::{describe_panic, quiet_todo_panics};
use tokio_util::sync::CancellationToken;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    quiet_todo_panics();
    let words: Vec<String> = std::env::args().skip(1).collect();
    let settings = match tune::parse(&words, Settings::demo()) {
        Ok(settings) => settings,
        Err(why) => {
            eprintln!(
                "{why}\nusage: just tune --http threshold=3 cooldown=500ms attempts=3 backoff=25ms..200ms"
            );
            return ExitCode::from(2);
        }
    };
    println!("Tuning task, with: {settings}.");
    let mut reports = Vec::new();
    for scenario in SCENARIOS {
        let run = tokio::spawn(scenario.run(settings, CancellationToken::new())).await;
        match run {
            Ok(Ok(report)) => {
                println!("  ran {}: {}", scenario.title(), report.summary);
                reports.push(report);
            }
            Ok(Err(error)) => {
                eprintln!("{}: could not run: {error}", scenario.title());
                return ExitCode::FAILURE;
            }
            Err(join) => {
                let why = match join.try_into_panic() {
                    Ok(payload) => describe_panic(payload.as_ref()),
                    Err(join) => join.to_string(),
                };
                eprintln!("{}: stopped: {why}", scenario.title());
                return ExitCode::FAILURE;
            }
        }
    }
    println!();
    let checks = tune::score(&reports);
    let passed = checks.iter().filter(|check| check.passed).count();
    for check in &checks {
        println!("{check}");
    }
    println!("\nScore: {passed} of {} checks pass.", checks.len());
    if passed == checks.len() {
        println!("These settings protect a sick gateway and still ride out a flaky one.");
        ExitCode::SUCCESS
    } else {
        println!("Adjust and run again: LAB.md, \"Tuning the breaker\", explains the trade-off.");
        ExitCode::FAILURE
    }
}
