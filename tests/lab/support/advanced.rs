//! The advanced track's scenarios (steps 12-15): verdicts fed one a
//! character, and the phases a circuit went through.

use retry_breaker::{Phase, State, Verdict};

use super::lab::Lab;

/// Opened, probed and closed again: the core lab's round trip.
pub const CLOSED_AGAIN: [(Phase, Phase); 3] = [
    (Phase::Closed, Phase::Open),
    (Phase::Open, Phase::HalfOpen),
    (Phase::HalfOpen, Phase::Closed),
];

/// Opened, probed and reopened by a failed probe.
pub const REOPENED: [(Phase, Phase); 3] = [
    (Phase::Closed, Phase::Open),
    (Phase::Open, Phase::HalfOpen),
    (Phase::HalfOpen, Phase::Open),
];

/// Every transition so far, as (from, to).
pub fn phases(lab: &Lab) -> Vec<(Phase, Phase)> {
    lab.transitions().iter().map(|t| (t.from, t.to)).collect()
}

/// CLOSED with `failures` counted.
pub fn closed(failures: u32) -> State {
    State::Closed { failures }
}

/// One attempt per character: `F` reports a failure, `S` a success, `I`
/// the verdict `Ignored` (step 11), and `D` drops the permit unreported.
pub fn feed(lab: &Lab, verdicts: &str) {
    for verdict in verdicts.chars() {
        let permit = lab
            .breaker
            .try_acquire()
            .expect("a closed circuit admits every attempt");
        match verdict {
            'F' => drop(permit.failure()),
            'S' => drop(permit.success()),
            'I' => drop(permit.report(Verdict::Ignored)),
            'D' => drop(permit),
            _ => unreachable!("a verdict is one of F, S, I, D"),
        }
    }
}
