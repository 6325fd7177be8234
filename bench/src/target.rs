//! The performance targets and their verdicts.

use std::fmt;

use crate::paired::Ratio;

/// What a target asks of its ratio.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Goal {
    /// The ratio must be at least this (a speed-up over a peer).
    AtLeast(f64),
    /// The ratio must be at most this (a cost over a floor).
    AtMost(f64),
    /// Ours may take at most this many ns more than the other side (an
    /// overhead, whose size matters more than its ratio).
    AtMostNsOver(f64),
    /// No goal: shown for information.
    Shown,
}

impl Goal {
    fn met_by(self, measured: &Ratio) -> bool {
        let [ours, other] = measured.ns;
        match self {
            Goal::AtLeast(goal) => measured.median >= goal,
            Goal::AtMost(goal) => measured.median <= goal,
            Goal::AtMostNsOver(goal) => ours - other <= goal,
            Goal::Shown => true,
        }
    }
}

/// One target: what is compared, the goal, and the paired measurement.
#[derive(Debug, Clone)]
pub struct Target {
    /// What is compared with what, in words.
    pub label: String,
    /// The goal the median ratio must meet.
    pub goal: Goal,
    /// The measurement.
    pub measured: Ratio,
}

impl Target {
    /// Whether the median ratio meets the goal.
    #[must_use]
    pub fn met(&self) -> bool {
        self.goal.met_by(&self.measured)
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Ratio {
            median,
            low,
            high,
            ns: [ours, other],
        } = self.measured;
        let verdict = match self.goal {
            Goal::Shown => "",
            _ if self.met() => "met ",
            _ => "MISSED ",
        };
        let over = match self.goal {
            Goal::AtMostNsOver(_) => format!("{:+.1} ns, ", ours - other),
            _ => String::new(),
        };
        write!(
            f,
            "{}: {verdict}({over}{median:.3}x [{low:.2}x-{high:.2}x]; ours {ours:.1} ns, the other {other:.1} ns)",
            self.label
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(goal: Goal, median: f64) -> Target {
        Target {
            label: "`x` against `y`".to_owned(),
            goal,
            measured: Ratio {
                median,
                low: median - 0.1,
                high: median + 0.1,
                ns: [30.0, 20.0],
            },
        }
    }

    #[test]
    fn a_speed_up_is_met_at_the_goal_and_above() {
        assert!(target(Goal::AtLeast(1.2), 1.2).met());
        assert!(target(Goal::AtLeast(1.2), 1.5).met());
        assert!(!target(Goal::AtLeast(1.2), 1.19).met());
    }

    #[test]
    fn a_cost_is_met_at_the_goal_and_below() {
        assert!(target(Goal::AtMost(1.15), 1.15).met());
        assert!(target(Goal::AtMost(1.15), 0.9).met());
        assert!(!target(Goal::AtMost(1.15), 1.16).met());
    }

    #[test]
    fn an_overhead_is_met_up_to_its_ns_and_shows_them() {
        // ours 30 ns, the other 20 ns: 10 ns over.
        assert!(target(Goal::AtMostNsOver(10.0), 1.5).met());
        assert!(!target(Goal::AtMostNsOver(9.9), 1.5).met());
        assert_eq!(
            target(Goal::AtMostNsOver(25.0), 1.5).to_string(),
            "`x` against `y`: met (+10.0 ns, 1.500x [1.40x-1.60x]; ours 30.0 ns, the other 20.0 ns)"
        );
    }

    #[test]
    fn a_ratio_shown_for_information_has_no_verdict() {
        let shown = target(Goal::Shown, 0.8);
        assert!(shown.met());
        assert_eq!(
            shown.to_string(),
            "`x` against `y`: (0.800x [0.70x-0.90x]; ours 30.0 ns, the other 20.0 ns)"
        );
    }

    #[test]
    fn the_verdict_shows_the_median_and_the_quartiles() {
        assert_eq!(
            target(Goal::AtMost(1.15), 1.5).to_string(),
            "`x` against `y`: MISSED (1.500x [1.40x-1.60x]; ours 30.0 ns, the other 20.0 ns)"
        );
        assert_eq!(
            target(Goal::AtLeast(1.2), 1.5).to_string(),
            "`x` against `y`: met (1.500x [1.40x-1.60x]; ours 30.0 ns, the other 20.0 ns)"
        );
    }
}
