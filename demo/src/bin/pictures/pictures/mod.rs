//! The pictures in LAB.md, generated from the reference solution's real
//! behaviour on a manual clock, never drawn by hand.
//!
//! `just pictures` writes them to `docs/pictures/`; `just check-pictures`
//! fails if a committed picture differs from what this module makes, the
//! way `just check-sync` guards the starter. Everything here runs on a
//! manual clock, so the output is the same on every machine.

mod run;
mod states;

use std::time::Duration;

use retry_breaker_demo::chart::{BandPhase, svg};
use run::Run;

/// Where the pictures live, from the workspace root.
pub const FOLDER: &str = "docs/pictures";

/// One picture: its file name in [`FOLDER`], its caption in LAB.md, and
/// its SVG text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picture {
    /// The file name.
    pub file: &'static str,
    /// The one-line caption LAB.md gives it.
    pub caption: &'static str,
    /// The SVG.
    pub svg: String,
}

/// Every picture, in the order LAB.md shows them.
pub fn all() -> Vec<Picture> {
    vec![
        Picture {
            file: "three-states.svg",
            caption: "The three states, and every transition a real run makes between them",
            svg: three_states(),
        },
        Picture {
            file: "worked-example.svg",
            caption: "The worked example of step 9 as a timeline (threshold 2, cooldown 10 ms)",
            svg: worked_example(),
        },
        Picture {
            file: "stale-outcome.svg",
            caption: "A stale outcome: a success admitted before the circuit opened arrives while the probe is out, and is ignored",
            svg: stale_outcome(),
        },
        Picture {
            file: "probe-at-deadline.svg",
            caption: "The probe at the boundary: 1 ns before the deadline is refused, the deadline itself is admitted",
            svg: probe_at_deadline(),
        },
        Picture {
            file: "retry-feeds-breaker.svg",
            caption: "A retry run feeding the breaker: two failures counted, and the circuit refuses the third attempt",
            svg: retry_feeds_breaker(),
        },
    ]
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn three_states() -> String {
    let run = Run::new(2, ms(10));
    for who in ["A", "B"] {
        let attempt = run.acquire(who, "").expect("CLOSED admits");
        run.report(attempt, false, "");
    }
    run.advance(ms(5));
    assert!(run.acquire("C", "").is_none(), "OPEN refuses");
    run.advance(ms(5));
    let probe = run.acquire("D", "").expect("the deadline admits a probe");
    assert!(run.acquire("E", "").is_none(), "HALF-OPEN refuses others");
    run.report(probe, false, "");
    run.advance(ms(10));
    let probe = run.acquire("F", "").expect("a new deadline, a new probe");
    run.report(probe, true, "");

    let label = |from, to| match (from, to) {
        (BandPhase::Closed, BandPhase::Open) => "2 consecutive failures (the threshold)".to_owned(),
        (BandPhase::Open, BandPhase::HalfOpen) => {
            "cooldown over: the next\nattempt is the probe".to_owned()
        }
        (BandPhase::HalfOpen, BandPhase::Open) => "probe fails:\na new cooldown".to_owned(),
        (BandPhase::HalfOpen, BandPhase::Closed) => "probe succeeds:\ncount back to 0".to_owned(),
        (from, to) => format!("{} to {}", from.name(), to.name()),
    };
    let mut edges = Vec::new();
    for (from, to, _) in run.transitions() {
        if !edges.iter().any(|&(f, t, _)| (f, t) == (from, to)) {
            edges.push((from, to, label(from, to)));
        }
    }
    states::diagram(
        &edges,
        "Drawn from a run of the reference solution (threshold 2, cooldown 10ms): each arrow is a transition that run made.",
    )
}

fn worked_example() -> String {
    let run = Run::new(2, ms(10));
    let backoff = ms(1);
    run.execute("call 1", 1, &[false], backoff, "fails: {state}");
    run.execute("call 2", 1, &[false], backoff, "fails: {state}");
    run.advance(ms(5));
    run.execute(
        "call 3",
        1,
        &[],
        backoff,
        "refused, task not called: {state}",
    );
    run.advance(ms(5));
    run.execute("call 4", 1, &[true], backoff, "the probe succeeds: {state}");
    run.execute(
        "call 5",
        3,
        &[false, true],
        backoff,
        "fails, sleeps 1ms, then succeeds: {state}",
    );
    let slow = run.acquire("call 6", "").expect("CLOSED admits call 6");
    run.execute("call 7", 1, &[false], backoff, "fails: {state}");
    run.execute("call 8", 1, &[false], backoff, "fails: {state}");
    run.report(
        slow,
        true,
        "admitted at 11ms while CLOSED, succeeds after call 8: stale, ignored",
    );
    run.advance(ms(10));
    let probe = run
        .acquire("call 9", "")
        .expect("the deadline admits call 9");
    run.execute("call 10", 3, &[], backoff, "refused: the probe is out");
    run.report(probe, true, "the probe succeeds: {state}");
    svg::render(
        &run.chart(
            "The worked example (step 9)",
            "Threshold 2, cooldown 10ms, backoff n ms, on a manual clock. Calls in the order they are made, one lane each.",
            ms(25),
        ),
        true,
    )
}

fn stale_outcome() -> String {
    let run = Run::new(1, ms(10));
    let slow = run.acquire("A (slow)", "").expect("CLOSED admits A");
    run.advance(ms(1));
    let b = run.acquire("B", "").expect("CLOSED admits B");
    run.report(b, false, "fails: {state}");
    run.advance(ms(10));
    let probe = run.acquire("C", "").expect("the deadline admits C");
    run.advance(ms(1));
    run.report(
        slow,
        true,
        "success from before the opening: stale, ignored; still {state}",
    );
    run.advance(ms(1));
    run.report(probe, true, "the probe succeeds: {state}");
    svg::render(
        &run.chart(
            "A stale outcome is ignored",
            "Threshold 1, cooldown 10ms. A was admitted while CLOSED; by the time it reports, the circuit has opened and sent its probe.",
            ms(16),
        ),
        true,
    )
}

fn probe_at_deadline() -> String {
    let run = Run::new(1, ms(10));
    let a = run.acquire("A", "").expect("CLOSED admits A");
    run.report(a, false, "fails: OPEN until 0 + cooldown = 10ms");
    run.advance(ms(10) - Duration::from_nanos(1));
    let early = run
        .acquire("B", "at 10ms - 1ns: refused, 1ns left")
        .is_none();
    assert!(early, "1 ns before the deadline is refused");
    run.advance(Duration::from_nanos(1));
    let probe = run
        .acquire("C", "")
        .expect("the deadline itself admits the probe");
    run.advance(ms(1));
    run.report(
        probe,
        true,
        "admitted at 10ms as the probe; succeeds: {state}",
    );
    svg::render(
        &run.chart(
            "The probe at the boundary",
            "Threshold 1, cooldown 10ms: OPEN means now < deadline, so the deadline itself admits the probe.",
            ms(13),
        ),
        true,
    )
}

fn retry_feeds_breaker() -> String {
    let run = Run::new(2, ms(10));
    run.execute(
        "execute, 3 attempts",
        3,
        &[false, false, false],
        ms(2),
        "attempt 3 refused: {state}",
    );
    run.advance(ms(3));
    run.execute("another call", 1, &[true], ms(2), "refused too: {state}");
    svg::render(
        &run.chart(
            "A retry run feeds the breaker",
            "Threshold 2, cooldown 10ms, 3 attempts with a 2ms backoff: each retry is an attempt the breaker counts, so the second failure opens the circuit.",
            ms(15),
        ),
        true,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How many elements carry every class in `classes`.
    fn count(svg: &str, classes: &[&str]) -> usize {
        let document = roxmltree::Document::parse(svg).expect("well-formed SVG");
        document
            .descendants()
            .filter(|node| {
                let class: Vec<&str> = node.attribute("class").unwrap_or("").split(' ').collect();
                classes.iter().all(|wanted| class.contains(wanted))
            })
            .count()
    }

    fn bands(svg: &str) -> Vec<String> {
        let document = roxmltree::Document::parse(svg).expect("well-formed SVG");
        document
            .descendants()
            .filter_map(|node| node.attribute("class")?.strip_prefix("band "))
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn the_pictures_are_the_same_on_every_run() {
        assert_eq!(all(), all());
    }

    #[test]
    fn the_worked_example_shows_step_8s_events() {
        let svg = worked_example();
        // Calls 1, 2, 7 and 8 fail, and call 5's first attempt.
        assert_eq!(count(&svg, &["mark", "failure"]), 5);
        // Call 4's probe, call 5's retry, call 9's probe.
        assert_eq!(count(&svg, &["mark", "success"]), 3);
        assert_eq!(count(&svg, &["mark", "probe"]), 2);
        // Call 3 at t=5 while OPEN, call 10 while call 9 probes.
        assert_eq!(count(&svg, &["mark", "refused"]), 2);
        // Call 6's success, reported after call 8 opened the circuit.
        assert_eq!(count(&svg, &["mark", "stale"]), 1);
        assert_eq!(count(&svg, &["request"]), 9, "every admitted attempt");
        assert_eq!(
            bands(&svg),
            [
                "closed",
                "open",
                "half-open",
                "closed",
                "open",
                "half-open",
                "closed"
            ]
        );
    }

    #[test]
    fn the_stale_success_leaves_the_probe_out() {
        let svg = stale_outcome();
        assert_eq!(count(&svg, &["mark", "stale"]), 1);
        assert!(svg.contains("still HALF-OPEN (probe in flight)"), "{svg}");
    }

    #[test]
    fn one_nanosecond_before_the_deadline_is_refused_and_the_deadline_admits() {
        let svg = probe_at_deadline();
        assert_eq!(count(&svg, &["mark", "refused"]), 1);
        assert_eq!(count(&svg, &["mark", "probe", "success"]), 1);
    }

    #[test]
    fn the_retry_run_opens_the_circuit_and_its_third_attempt_is_refused() {
        let svg = retry_feeds_breaker();
        assert_eq!(count(&svg, &["mark", "failure"]), 2);
        assert_eq!(count(&svg, &["mark", "refused"]), 2);
        assert_eq!(count(&svg, &["sleep"]), 2, "a backoff after each failure");
        assert_eq!(bands(&svg), ["closed", "open"]);
    }

    #[test]
    fn the_state_diagram_draws_the_four_transitions_a_run_makes() {
        assert_eq!(count(&three_states(), &["transition"]), 4);
    }
}
