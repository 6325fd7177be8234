//! The rules a step-9 exploration can find broken, as its failure messages
//! name them: the rule and the TODO where the lab teaches it.

/// A rule, as a failure message names it.
pub type Rule = &'static str;

pub const B2_CLOSED_ADMITS: Rule = "B2: CLOSED admits every attempt, TODO(1)";
pub const B2_SUCCESS_RESETS: Rule = "B2: a success resets the count, TODO(1)";
pub const B2_FAILURES_OPEN_AT_THRESHOLD: Rule =
    "B2: failures count and open at the threshold, TODO(1)";
pub const B3_OPEN_REFUSES: Rule = "B3: OPEN refuses before the deadline, TODO(2)";
pub const B4_PROBE_AT_DEADLINE: Rule =
    "B4: the first attempt at or after the deadline is the probe, TODO(2)";
pub const B5_ONE_PROBE: Rule = "B5: one probe at a time, TODO(2)";
pub const B5_PROBE_SUCCESS_CLOSES: Rule = "B5: a successful probe closes the circuit, TODO(2)";
pub const B5_PROBE_FAILURE_REOPENS: Rule = "B5: a failed probe reopens for a new cooldown, TODO(2)";
pub const B6_STALE_CHANGES_NOTHING: Rule =
    "B6: an outcome from an older generation changes nothing, TODO(3)";
pub const B7_FREED_SLOT_ADMITS: Rule =
    "B7: a probe slot given back is free for the next attempt, TODO(4)";
pub const B7_DROP_RECORDS_NOTHING: Rule =
    "B7: a dropped permit records nothing; a current probe gives its slot back, TODO(4)";

// The advanced track (steps 11-13).
pub const K1_IGNORED_RECORDS_NOTHING: Rule =
    "K1: an ignored outcome records nothing; a current probe gives its slot back, TODO(11)";
pub const S1_PROBES_BEFORE_CLOSING: Rule =
    "S1: HALF-OPEN closes only after k good probes in a row, TODO(12)";
pub const W1_SUCCESS_ENTERS_WINDOW: Rule =
    "W1: in window mode a success in CLOSED takes its place in the window, TODO(13)";
pub const W1_WINDOW_OPENS: Rule =
    "W1: in window mode CLOSED opens on the failure share over the last N verdicts, TODO(13)";
