//! Step 12 (advanced, optional), the success threshold: HALF-OPEN closes
//! only after k good probes in a row (TODO(12); rules S1, S2).

use retry_breaker::{
    ConfigError, ManualClock, Permit, Phase, Recorded, Rejected, RetryBreaker, State, Verdict,
};

use crate::support::advanced::{CLOSED_AGAIN, REOPENED, phases};
use crate::support::{Lab, ms};

/// Opens after one failure, 10 ms cooldown, closes after `k` good probes.
fn lab(k: u32) -> Lab {
    Lab::built(
        RetryBreaker::builder()
            .threshold(1)
            .cooldown(ms(10))
            .success_threshold(k),
    )
}

/// Trips the circuit and lets the cooldown run out.
fn half_open(lab: &Lab) {
    lab.trip();
    lab.advance(ms(10));
}

const STILL_HALF_OPEN: State = State::HalfOpen {
    probe_in_flight: false,
};

/// A good probe, after which the circuit must be `expected`.
#[track_caller]
fn good_probe(lab: &Lab, expected: State, why: &str) {
    lab.probe().success();
    assert_eq!(lab.breaker.state(), expected, "{why}");
}

#[test]
fn s2_a_success_threshold_of_zero_is_a_configuration_error() {
    let built = RetryBreaker::builder()
        .success_threshold(0)
        .build(retry_breaker::ManualClock::new());
    assert_eq!(
        built.err(),
        Some(ConfigError::ZeroSuccessThreshold),
        "TODO(12): k = 0 must be refused with ConfigError::ZeroSuccessThreshold"
    );
}

#[test]
fn s1_half_open_closes_only_after_k_good_probes() {
    let lab = lab(3);
    half_open(&lab);
    good_probe(
        &lab,
        STILL_HALF_OPEN,
        "TODO(12): one good probe of three leaves the circuit HALF-OPEN, waiting for the next probe",
    );
    good_probe(
        &lab,
        STILL_HALF_OPEN,
        "TODO(12): two good probes of three leave the circuit HALF-OPEN",
    );
    good_probe(
        &lab,
        State::Closed { failures: 0 },
        "TODO(12): the third good probe closes the circuit",
    );
    assert_eq!(
        phases(&lab),
        CLOSED_AGAIN,
        "TODO(12): good probes short of k are no transition"
    );
}

#[test]
fn s1_only_probes_count_towards_closing_a_success_in_closed_is_no_probe() {
    let lab = lab(2);
    let first = lab.breaker.try_acquire().unwrap();
    let second = lab.breaker.try_acquire().unwrap();
    first.success();
    assert_eq!(
        lab.breaker.state(),
        State::Closed { failures: 0 },
        "TODO(12): good probes are counted in HALF-OPEN only; a success in a CLOSED circuit \
         leaves it CLOSED (S1)"
    );
    second.failure(); // threshold 1: this opens the circuit
    lab.advance(ms(10));
    good_probe(
        &lab,
        STILL_HALF_OPEN,
        "TODO(12): one good probe of two leaves the circuit HALF-OPEN (S1)",
    );
    good_probe(
        &lab,
        State::Closed { failures: 0 },
        "TODO(12): the second good probe closes the circuit (S1)",
    );
    // Closed again: successes are no probes, and every attempt is admitted.
    let permits: Vec<_> = (0..3)
        .map(|_| {
            lab.breaker
                .try_acquire()
                .expect("TODO(12): a CLOSED circuit admits every attempt, whatever k is (S1)")
        })
        .collect();
    for permit in permits {
        permit.success();
        assert_eq!(
            lab.breaker.state(),
            State::Closed { failures: 0 },
            "TODO(12): a success in CLOSED only resets the failure count; it is no probe (S1)"
        );
    }
    assert_eq!(
        phases(&lab),
        CLOSED_AGAIN,
        "TODO(12): successes in CLOSED make no transition (S1)"
    );
}

#[test]
fn s1_probes_still_go_one_at_a_time() {
    let lab = lab(2);
    half_open(&lab);
    let first = lab.probe();
    assert_eq!(
        lab.breaker.try_acquire().err(),
        Some(Rejected::ProbeInFlight),
        "TODO(12): one probe at a time"
    );
    first.success();
    let second = lab
        .breaker
        .try_acquire()
        .expect("TODO(12): after a good probe short of k, the next attempt is the next probe");
    assert_eq!(
        lab.breaker.try_acquire().err(),
        Some(Rejected::ProbeInFlight),
        "TODO(12): the second probe is alone too"
    );
    second.success();
    assert_eq!(
        lab.breaker.state(),
        State::Closed { failures: 0 },
        "TODO(12): two good probes of two close"
    );
}

#[test]
fn s2_a_failure_after_good_probes_reopens_for_a_whole_cooldown() {
    let lab = lab(3);
    half_open(&lab);
    lab.probe().success();
    lab.advance(ms(3));
    lab.probe().success();
    lab.advance(ms(3));
    lab.probe().failure();
    assert_eq!(
        lab.breaker.state(),
        State::Open { remaining: ms(10) },
        "TODO(12): any failed probe reopens for a whole new cooldown"
    );
    assert_eq!(
        phases(&lab),
        REOPENED,
        "TODO(12): the circuit stayed HALF-OPEN through the good probes, and the failed one reopened it"
    );
}

#[test]
fn s2_the_next_half_open_counts_its_good_probes_from_zero() {
    let lab = lab(2);
    half_open(&lab);
    lab.probe().success();
    lab.probe().failure();
    lab.advance(ms(10));
    good_probe(
        &lab,
        STILL_HALF_OPEN,
        "TODO(12): the good probe before the reopening must not count in the new HALF-OPEN",
    );
    good_probe(
        &lab,
        State::Closed { failures: 0 },
        "TODO(12): two good probes of this HALF-OPEN close",
    );
}

#[test]
fn s1_k1_an_ignored_probe_neither_counts_nor_breaks_the_run() {
    let lab = lab(2);
    half_open(&lab);
    lab.probe().success();
    assert_eq!(
        lab.probe().report(Verdict::Ignored),
        None,
        "an ignored probe records nothing: TODO(11)"
    );
    assert_eq!(
        lab.breaker.state(),
        STILL_HALF_OPEN,
        "TODO(12): an ignored probe is no good probe"
    );
    good_probe(
        &lab,
        State::Closed { failures: 0 },
        "TODO(12): the ignored probe did not reset the run: two good probes close",
    );
}

#[test]
fn s1_the_threshold_is_reported() {
    let lab = lab(4);
    assert_eq!(
        lab.breaker.success_threshold(),
        4,
        "the breaker reports its success threshold"
    );
    half_open(&lab);
    for n in 1..4 {
        good_probe(
            &lab,
            STILL_HALF_OPEN,
            &format!("TODO(12): {n} good probe(s) of 4 leave the circuit HALF-OPEN"),
        );
    }
    lab.probe().success();
    assert_eq!(
        lab.breaker.state().phase(),
        Phase::Closed,
        "TODO(12): the fourth closes"
    );
}

/// A control: with k = 1 the core lab's answer is the right one, so this
/// passes before step 12; it guards against a success threshold counted
/// one too high.
#[test]
fn s1_k1_one_good_probe_closes_exactly_as_the_core_lab() {
    let lab = lab(1);
    half_open(&lab);
    good_probe(
        &lab,
        State::Closed { failures: 0 },
        "TODO(12): with k = 1 the first good probe closes, as in the core lab (S1)",
    );
    assert_eq!(
        phases(&lab),
        CLOSED_AGAIN,
        "TODO(12): with k = 1 the transitions are the core lab's (S1)"
    );
}

/// k = 2, one good probe made; then an attempt admitted while CLOSED, before
/// the circuit opened, reports in HALF-OPEN.
fn late_report(report: fn(Permit<'_, ManualClock>) -> Recorded) -> (Lab, Recorded) {
    let lab = lab(2);
    let old = lab.breaker.try_acquire().expect("a closed circuit admits");
    half_open(&lab);
    lab.probe().success();
    let recorded = report(old);
    (lab, recorded)
}

const TOO_LATE: &str =
    "B6: an attempt admitted before the circuit opened reports too late (TODO(3))";

#[test]
fn s1_b6_a_stale_success_is_no_good_probe() {
    let (lab, recorded) = late_report(|old| old.success());
    assert_eq!(recorded, Recorded::Stale, "{TOO_LATE}");
    assert_eq!(
        lab.breaker.state(),
        STILL_HALF_OPEN,
        "TODO(12): only a probe's success counts towards k: one good probe of two (S1, B6)"
    );
}

#[test]
fn s2_b6_a_stale_failure_does_not_break_the_run_of_good_probes() {
    let (lab, recorded) = late_report(|old| old.failure());
    assert_eq!(recorded, Recorded::Stale, "{TOO_LATE}");
    assert_eq!(
        lab.breaker.state(),
        STILL_HALF_OPEN,
        "TODO(12): a stale failure reopens nothing: one good probe of two, still HALF-OPEN \
         (S2, B6)"
    );
    good_probe(
        &lab,
        State::Closed { failures: 0 },
        "TODO(12): a stale failure is no failed probe: two good probes close (S2, B6)",
    );
}

#[test]
fn s1_a_breaker_names_its_success_threshold_while_half_open() {
    let lab = lab(3);
    half_open(&lab);
    lab.probe().success();
    assert_eq!(
        lab.breaker.to_string(),
        "HALF-OPEN (waiting for a probe; 3 good probes in a row close it)",
        "TODO(12): after one good probe of three the circuit is HALF-OPEN, and it says what \
         closes it (S1)"
    );
    let shown = format!("{:?}", lab.breaker);
    assert!(
        shown.contains("success_threshold: 3"),
        "S1: the breaker's Debug shows its success threshold: {shown}"
    );
}

/// A control: with k = 1 HALF-OPEN is the core lab's, and so is its text,
/// so this passes before step 12; it guards against naming a threshold of
/// one good probe.
#[test]
fn s1_a_breaker_that_closes_on_one_good_probe_shows_half_open_as_the_core_lab() {
    let lab = lab(1);
    half_open(&lab);
    let _probe = lab.probe();
    assert_eq!(
        lab.breaker.to_string(),
        "HALF-OPEN (probe in flight)",
        "S1: with a success threshold of 1 nothing more is said than in the core lab"
    );
}
