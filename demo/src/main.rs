//! `just demo`: runs every scenario back to back and prints its timeline and
//! summary, then writes the same timelines as pictures to one HTML report.
//! `just demo starter` runs the same against the student's crate.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use retry_breaker_demo::html::{self, Section};
#[cfg(all(feature = "metrics-page", not(feature = "starter")))]
use retry_breaker_demo::metrics_page;
use retry_breaker_demo::report::{ScenarioReport, duration};
use retry_breaker_demo::routes;
use retry_breaker_demo::scenarios::{Scenario, Settings};
use retry_breaker_demo::unfinished::{describe_panic, quiet_todo_panics};
use tokio_util::sync::CancellationToken;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    quiet_todo_panics();
    let cancel = CancellationToken::new();
    tokio::spawn(cancel_on_ctrl_c(cancel.clone()));

    let settings = Settings::demo();
    let kit = if cfg!(feature = "starter") {
        "your starter crate"
    } else {
        "the reference solution"
    };
    println!(
        "Retry breaker, live: a checkout and a fake payment gateway over HTTP on 127.0.0.1, running {kit}."
    );
    println!("Settings: {settings}.");
    println!();

    let started = Instant::now();
    let mut reports = Vec::new();
    let mut stopped = Vec::new();
    let mut unfinished = 0;
    let mut refused = Vec::new();
    let mut timed_out = Vec::new();
    for scenario in Scenario::ALL {
        if cancel.is_cancelled() {
            break;
        }
        // Each scenario runs as its own task, so that a panic in the crate
        // under test (the starter's todo!()s) ends that scenario only, and
        // comes back here as a JoinError to report in one line.
        let run = tokio::spawn(scenario.run(settings, cancel.clone())).await;
        match run {
            Ok(Ok(report)) => {
                print!("{report}");
                println!();
                collect_latencies(&report, &mut refused, &mut timed_out);
                reports.push((scenario, Ok(report)));
            }
            Ok(Err(error)) => {
                eprintln!("== {} ==\ncould not run: {error}\n", scenario.heading());
                return ExitCode::FAILURE;
            }
            Err(join) => {
                let why = match join.try_into_panic() {
                    Ok(payload) => describe_panic(payload.as_ref()),
                    Err(join) => join.to_string(),
                };
                println!("== {} ==\nstopped: {why}\n", scenario.heading());
                reports.push((scenario, Err(why)));
                unfinished += 1;
            }
        }
    }

    // Per-route breakers through the tower layer (steps 14-15). Printed
    // only: the HTML report charts the single-breaker scenarios above.
    if !cancel.is_cancelled() {
        #[cfg(all(feature = "metrics-page", not(feature = "starter")))]
        let page = metrics_page::MetricsPage::start().await;
        match tokio::spawn(routes::one_route_down(settings, cancel.clone())).await {
            Ok(Ok(report)) => {
                print!("{report}");
                #[cfg(all(feature = "metrics-page", not(feature = "starter")))]
                show_metrics(page).await;
                println!();
            }
            Ok(Err(error)) => {
                eprintln!("one route down: could not run: {error}");
                return ExitCode::FAILURE;
            }
            Err(join) => {
                let why = match join.try_into_panic() {
                    Ok(payload) => describe_panic(payload.as_ref()),
                    Err(join) => join.to_string(),
                };
                println!("== One route down ==\nstopped: {why}\n");
                unfinished += 1;
            }
        }
    }

    // One breaker across a fleet of checkout nodes, printed and charted.
    let mut fleet_chart = None;
    if !cancel.is_cancelled() {
        match fleet(settings, cancel.clone()).await {
            Ok(chart) => fleet_chart = chart,
            Err(error) => {
                eprintln!("one gateway, three checkout nodes: could not run: {error}");
                return ExitCode::FAILURE;
            }
        }
    }

    if let (Some(refused), Some(timed_out)) = (median(refused), median(timed_out)) {
        println!(
            "Overall: a call refused by the open circuit returned in {}; a request that ran into the deadline took {}.",
            duration(refused),
            duration(timed_out)
        );
    }
    println!("Ran for {:.1}s.", started.elapsed().as_secs_f64());

    for (scenario, report) in &reports {
        stopped.push(match report {
            Ok(report) => (scenario.heading(), Ok(report)),
            Err(why) => (scenario.heading(), Err(why.as_str())),
        });
    }
    let mut sections: Vec<Section<'_>> = stopped
        .iter()
        .map(|(heading, report)| match report {
            Ok(report) => Section::Ran(report),
            Err(why) => Section::Stopped { heading, why },
        })
        .collect();
    if let Some((svg, caption)) = &fleet_chart {
        sections.push(Section::Picture { svg, caption });
    }
    let code = if cancel.is_cancelled() {
        println!("Interrupted by Ctrl-C.");
        ExitCode::from(130)
    } else if unfinished > 0 {
        println!(
            "{unfinished} scenario(s) stopped on unfinished starter code: see the lines above, and LAB.md."
        );
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    };
    // Last, so that the path is the line a reader finds at the bottom.
    let page = html::page(kit, &settings.to_string(), &sections);
    match html::default_path().and_then(|path| html::write(&path, &page).map(|()| path)) {
        Ok(path) => println!(
            "Report with every timeline as a picture: {}",
            html::shown(&path)
        ),
        Err(error) => {
            eprintln!("could not write the HTML report: {error}");
            return ExitCode::FAILURE;
        }
    }
    code
}

/// Three checkout nodes behind a load balancer, on their own and then
/// linked as a fleet, printed.
#[cfg(not(feature = "starter"))]
async fn fleet(
    settings: Settings,
    cancel: CancellationToken,
) -> Result<Option<(String, String)>, retry_breaker_demo::scenarios::DemoError> {
    let report = retry_breaker_demo::fleet::three_nodes(settings, cancel).await?;
    println!("{report}");
    let chart = retry_breaker_demo::chart::fleet::render(&report);
    Ok(Some((chart, report.caption())))
}

/// The fleet is reference code built on the solution, so a run on your
/// starter leaves it out, saying so.
#[cfg(feature = "starter")]
async fn fleet(
    _: Settings,
    _: CancellationToken,
) -> Result<Option<(String, String)>, retry_breaker_demo::scenarios::DemoError> {
    println!(
        "== One gateway, three checkout nodes ==\nThe fleet is reference code on the reference \
         solution: the kit's `just demo` runs it, a starter does not.\n"
    );
    Ok(None)
}

/// Cancels `cancel` on the first Ctrl-C: calls stop between attempts, waits
/// stop at once, and the demo ends after printing what it has.
/// A few lines of the `/metrics` page, scraped over HTTP as Prometheus
/// would: each route's state and the refusals its breaker counted.
#[cfg(all(feature = "metrics-page", not(feature = "starter")))]
async fn show_metrics(page: Result<metrics_page::MetricsPage, String>) {
    let scraped = match &page {
        Ok(page) => page
            .scrape()
            .await
            .map(|text| (page.url(), text))
            .map_err(|e| e.to_string()),
        Err(why) => Err(why.clone()),
    };
    match scraped {
        Ok((url, text)) => {
            println!("GET {url} (Prometheus text format), in part:");
            for line in text.lines().filter(|line| {
                line.starts_with("resilience_breaker_state")
                    || line.contains("event_name=\"rejected\"")
                    || line.contains("event_name=\"circuit_opened\"")
            }) {
                println!("  {line}");
            }
        }
        Err(why) => println!("/metrics: not served ({why})"),
    }
}

async fn cancel_on_ctrl_c(cancel: CancellationToken) {
    if tokio::signal::ctrl_c().await.is_ok() {
        cancel.cancel();
    }
}

fn collect_latencies(
    report: &ScenarioReport,
    refused: &mut Vec<Duration>,
    timed_out: &mut Vec<Duration>,
) {
    refused.extend(report.summary.refused_call);
    timed_out.extend(report.summary.timed_out_request);
}

fn median(mut samples: Vec<Duration>) -> Option<Duration> {
    samples.sort_unstable();
    samples.get(samples.len() / 2).copied()
}
