//! `just tune --http`: the demo's three fixed scenarios, over real HTTP,
//! with the breaker's threshold and cooldown and the retry loop's attempts
//! and backoff given as words, each scenario checked.
//!
//! - DOWN: the gateway fails everything. Every request it gets is load on a
//!   sick service: at most [`MAX_REQUESTS_WHEN_DOWN`] may reach it.
//! - FLAKY: the gateway fails a share of requests. Retries should get every
//!   order paid, and the breaker should not mistake bad luck for an outage.
//! - An outage, then settlement: no order taken during the outage is lost.
//!
//! These are the same for every student and are not graded: they show
//! settings against a real server. The graded tuning task (`just tune`) is
//! the simulation in `tests/tuning/`, on a gateway of each student's own.

use std::fmt;
use std::time::Duration;

use crate::checkout::{BreakerSettings, RetryPolicy};
use crate::report::ScenarioReport;
use crate::scenarios::{Scenario, Settings};

/// The most requests that may reach a gateway that is down.
pub const MAX_REQUESTS_WHEN_DOWN: u64 = 2;

/// The scenarios the task runs, in order.
pub const SCENARIOS: [Scenario; 3] = [
    Scenario::DownWithBreaker,
    Scenario::FlakyWithRetries,
    Scenario::OutageThenSettlement,
];

/// Parses `threshold=3 cooldown=500ms attempts=3 backoff=25ms..200ms`, any
/// of them, in any order, over the demo's own settings.
///
/// # Errors
///
/// A word that is not `name=value`, an unknown name, or a value out of range,
/// each with a sentence saying what was expected.
pub fn parse(words: &[String], mut settings: Settings) -> Result<Settings, String> {
    for word in words {
        let (name, value) = word
            .split_once('=')
            .ok_or_else(|| format!("`{word}`: expected name=value, as in threshold=3"))?;
        match name {
            "threshold" => {
                let threshold: u32 = value
                    .parse()
                    .map_err(|_| format!("threshold `{value}`: expected a whole number"))?;
                if threshold == 0 {
                    return Err("threshold 0: the breaker needs at least one failure".to_owned());
                }
                settings.breaker = BreakerSettings {
                    threshold,
                    ..settings.breaker
                };
            }
            "cooldown" => {
                settings.breaker = BreakerSettings {
                    cooldown: parse_duration(value)?,
                    ..settings.breaker
                };
            }
            "attempts" => {
                let attempts: u32 = value
                    .parse()
                    .map_err(|_| format!("attempts `{value}`: expected a whole number"))?;
                if !(1..=10).contains(&attempts) {
                    return Err(format!("attempts {attempts}: pick 1 to 10"));
                }
                settings.retry = RetryPolicy {
                    attempts,
                    ..settings.retry
                };
            }
            "backoff" => {
                let (base, cap) = value.split_once("..").ok_or_else(|| {
                    format!("backoff `{value}`: expected BASE..CAP, as in 25ms..200ms")
                })?;
                let (base, cap) = (parse_duration(base)?, parse_duration(cap)?);
                if base > cap {
                    return Err(format!("backoff `{value}`: the base is above the cap"));
                }
                settings.retry = RetryPolicy {
                    backoff_base: base,
                    backoff_cap: cap,
                    ..settings.retry
                };
            }
            other => {
                return Err(format!(
                    "`{other}`: the settings are threshold, cooldown, attempts and backoff"
                ));
            }
        }
    }
    Ok(settings)
}

/// `250ms` or `2s`, at most a minute: the demo runs in real time.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let parsed = if let Some(ms) = text.strip_suffix("ms") {
        ms.parse().ok().map(Duration::from_millis)
    } else if let Some(s) = text.strip_suffix('s') {
        s.parse().ok().map(Duration::from_secs)
    } else {
        None
    };
    match parsed {
        Some(duration) if duration <= Duration::from_secs(60) => Ok(duration),
        Some(_) => Err(format!("`{text}`: at most 60s, the demo runs in real time")),
        None => Err(format!("`{text}`: expected a duration such as 250ms or 2s")),
    }
}

/// One of the task's checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    pub what: String,
    pub passed: bool,
    pub measured: String,
}

/// The checks, from the reports of [`SCENARIOS`] in order.
pub fn score(reports: &[ScenarioReport]) -> Vec<Check> {
    let find = |scenario: Scenario| {
        reports
            .iter()
            .find(|r| r.heading.ends_with(scenario.title()))
    };
    let mut checks = Vec::new();
    if let Some(down) = find(Scenario::DownWithBreaker) {
        let requests = down.summary.requests;
        checks.push(Check {
            what: format!("DOWN: at most {MAX_REQUESTS_WHEN_DOWN} requests reach the sick gateway"),
            passed: requests <= MAX_REQUESTS_WHEN_DOWN,
            measured: format!("{requests} reached it"),
        });
    }
    if let Some(flaky) = find(Scenario::FlakyWithRetries) {
        let orders = flaky.summary.paid + flaky.summary.pending + flaky.summary.declined;
        checks.push(Check {
            what: "FLAKY: every order gets paid".to_owned(),
            passed: flaky.summary.paid == orders && orders > 0,
            measured: format!("{} of {orders} paid", flaky.summary.paid),
        });
    }
    let lost: u32 = reports.iter().map(|r| r.summary.lost).sum();
    checks.push(Check {
        what: "no order is ever lost".to_owned(),
        passed: lost == 0,
        measured: format!("{lost} lost"),
    });
    checks
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mark = if self.passed { "pass" } else { "FAIL" };
        write!(f, "  {mark}  {:<62} {}", self.what, self.measured)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn settings_are_read_by_name_over_the_demos_own() {
        let demo = Settings::demo();
        let tuned = parse(
            &words("attempts=2 threshold=5 backoff=10ms..1s cooldown=2s"),
            demo,
        )
        .unwrap();
        assert_eq!(tuned.breaker.threshold, 5);
        assert_eq!(tuned.breaker.cooldown, Duration::from_secs(2));
        assert_eq!(tuned.retry.attempts, 2);
        assert_eq!(tuned.retry.backoff_base, Duration::from_millis(10));
        assert_eq!(tuned.retry.backoff_cap, Duration::from_secs(1));
        assert_eq!(parse(&[], demo).unwrap(), demo);
    }

    fn report(
        scenario: Scenario,
        requests: u64,
        paid: u32,
        pending: u32,
        lost: u32,
    ) -> ScenarioReport {
        ScenarioReport {
            heading: scenario.heading(),
            story: scenario.story(),
            rows: Vec::new(),
            transitions: Vec::new(),
            gateway: crate::gateway::GatewayStats::default(),
            book: crate::orders::BookCounts::default(),
            summary: crate::report::Summary {
                calls: paid + pending,
                requests,
                avoided: 0,
                paid,
                pending,
                declined: 0,
                lost,
                refused_call: None,
                timed_out_request: None,
            },
            interrupted: false,
        }
    }

    #[test]
    fn each_check_judges_its_own_scenario() {
        let passed = |reports: &[ScenarioReport]| -> Vec<bool> {
            score(reports).iter().map(|check| check.passed).collect()
        };
        let good = [
            report(Scenario::DownWithBreaker, MAX_REQUESTS_WHEN_DOWN, 0, 6, 0),
            report(Scenario::FlakyWithRetries, 13, 8, 0, 0),
            report(Scenario::OutageThenSettlement, 9, 6, 0, 0),
        ];
        assert_eq!(passed(&good), [true, true, true]);
        let hammered = [report(
            Scenario::DownWithBreaker,
            MAX_REQUESTS_WHEN_DOWN + 1,
            0,
            6,
            0,
        )];
        assert_eq!(passed(&hammered), [false, true]);
        let gave_up = [report(Scenario::FlakyWithRetries, 4, 7, 1, 0)];
        assert_eq!(passed(&gave_up), [false, true]);
        let lost = [report(Scenario::OutageThenSettlement, 9, 5, 0, 1)];
        assert_eq!(passed(&lost), [false]);
    }

    #[test]
    fn nonsense_gets_a_sentence_not_a_panic() {
        for bad in [
            "threshold=0",
            "threshold=many",
            "attempts=0",
            "attempts=11",
            "cooldown=5",
            "cooldown=2h",
            "cooldown=61s",
            "backoff=10ms",
            "backoff=1s..10ms",
            "speed=3",
            "threshold",
        ] {
            let error = parse(&words(bad), Settings::demo()).unwrap_err();
            assert!(error.len() > 10, "{bad}: {error}");
        }
    }
}
