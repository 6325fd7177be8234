//! Step 13 (advanced, optional), window mode: open on the share of failures
//! among the last N counted attempts, not on a run of consecutive ones
//! (TODO(13); rules W1-W3).

use retry_breaker::{
    ConfigError, ManualClock, Permit, Recorded, Rejected, RetryBreaker, State, WindowConfig,
};

use crate::support::advanced::{closed, feed};
use crate::support::{Lab, ms};

/// A window breaker. The consecutive threshold is set to 2 so that a
/// breaker that ignores the window (and counts consecutive failures) is
/// told apart at once.
fn lab(size: u32, minimum: u32, failure_rate: f64) -> Lab {
    Lab::built(
        RetryBreaker::builder()
            .threshold(2)
            .cooldown(ms(10))
            .window(WindowConfig::new(size, minimum, failure_rate)),
    )
}

/// Feeds `verdicts`: they open the circuit, for the whole cooldown of 10 ms.
#[track_caller]
fn opens(lab: &Lab, verdicts: &str, why: &str) {
    feed(lab, verdicts);
    assert_eq!(
        lab.breaker.state(),
        State::Open { remaining: ms(10) },
        "{why}"
    );
}

/// Feeds `verdicts`: the circuit stays CLOSED with `failures` in its window.
#[track_caller]
fn stays_closed(lab: &Lab, verdicts: &str, failures: u32, why: &str) {
    feed(lab, verdicts);
    assert_eq!(lab.breaker.state(), closed(failures), "{why}");
}

#[test]
fn w3_a_window_that_cannot_work_is_a_configuration_error() {
    let build = |size, minimum, failure_rate| {
        RetryBreaker::builder()
            .window(WindowConfig::new(size, minimum, failure_rate))
            .build(ManualClock::new())
            .err()
    };
    let cases = [
        (0, 0, 0.5, Some(ConfigError::EmptyWindow)),
        (10, 0, 0.5, Some(ConfigError::ZeroMinimum)),
        (
            10,
            11,
            0.5,
            Some(ConfigError::MinimumAboveSize {
                minimum: 11,
                size: 10,
            }),
        ),
        (10, 5, 0.0, Some(ConfigError::FailureRateOutOfRange)),
        (10, 5, -0.5, Some(ConfigError::FailureRateOutOfRange)),
        (10, 5, 1.5, Some(ConfigError::FailureRateOutOfRange)),
        (10, 5, f64::NAN, Some(ConfigError::FailureRateOutOfRange)),
        (10, 10, 1.0, None),
        (1, 1, f64::MIN_POSITIVE, None),
    ];
    for (size, minimum, rate, expected) in cases {
        assert_eq!(
            build(size, minimum, rate),
            expected,
            "TODO(13): N = {size}, m = {minimum}, r = {rate}"
        );
    }
}

/// The breaker reports the window it was built with: the circuit keeps it
/// (TODO(13)), and a breaker without one has none.
#[test]
fn w1_a_breaker_reports_the_window_it_was_built_with_and_none_without() {
    let window = WindowConfig::new(8, 4, 0.5);
    let built = RetryBreaker::builder()
        .window(window)
        .build(ManualClock::new())
        .expect("valid settings");
    assert_eq!(
        built.window(),
        Some(window),
        "W1, TODO(13): the window it was built with"
    );
    let plain = RetryBreaker::new(1, ms(10), ManualClock::new()).expect("valid");
    assert_eq!(
        plain.window(),
        None,
        "W1, TODO(13): consecutive mode has no window"
    );
}

#[test]
fn w1_the_window_opens_on_the_failure_share_once_it_holds_the_minimum() {
    let lab = lab(4, 4, 0.5);
    stays_closed(
        &lab,
        "SFS",
        1,
        "TODO(13): three verdicts are below the minimum of 4; CLOSED shows the failures in the window",
    );
    opens(
        &lab,
        "F",
        "TODO(13): 2 failures of 4 is a share of 0.5: open",
    );
}

#[test]
fn w1_successes_count_in_the_window_even_with_no_failure_yet() {
    // Successes on a clean circuit change the window: a breaker that skips
    // them (as a consecutive breaker may) sees too few verdicts.
    let lab = lab(4, 4, 0.5);
    stays_closed(&lab, "SSFS", 1, "TODO(13): one failure in four verdicts");
    opens(
        &lab,
        "F",
        "TODO(13): the last four are S F S F, half of them failures; the first two successes counted too",
    );
}

#[test]
fn w1_a_success_that_brings_the_window_to_its_minimum_can_open_it() {
    // The rule is checked after every verdict: F S is a share of 1/2 over
    // the minimum of 2, even though the last verdict was a success.
    let lab = lab(4, 2, 0.5);
    stays_closed(&lab, "F", 1, "TODO(13): one verdict, below the minimum");
    opens(
        &lab,
        "S",
        "TODO(13): F S holds the minimum of 2 with a failure share of 0.5: open, although the last verdict was a success",
    );
}

#[test]
fn w1_below_the_minimum_even_all_failures_do_not_open() {
    let lab = lab(10, 5, 0.5);
    stays_closed(
        &lab,
        "FFFF",
        4,
        "TODO(13): 4 verdicts are fewer than the minimum of 5, whatever they are",
    );
    opens(&lab, "F", "TODO(13): the fifth verdict reaches the minimum");
}

#[test]
fn w1_a_steady_trickle_of_errors_does_not_open_the_window() {
    // Two failures in a row every eight attempts: a consecutive breaker
    // with threshold 2 would open every time; a quarter is below a half.
    let lab = lab(8, 8, 0.5);
    for _ in 0..10 {
        feed(&lab, "FFSSSSSS");
    }
    assert_eq!(
        lab.breaker.state(),
        closed(2),
        "TODO(13): a failure share of 1/4 never opens a window of r = 0.5"
    );
    assert!(
        lab.transitions().is_empty(),
        "TODO(13): the circuit never opened"
    );
}

#[test]
fn w1_the_oldest_verdict_leaves_a_full_window() {
    let lab = lab(3, 3, 0.6);
    stays_closed(
        &lab,
        "FSSS",
        0,
        "TODO(13): the first failure has left the window of 3",
    );
    stays_closed(
        &lab,
        "F",
        1,
        "TODO(13): S S F is one failure in three: below 0.6",
    );
    opens(
        &lab,
        "SF",
        "TODO(13): F S F is two failures in three, above 0.6",
    );
}

#[test]
fn w2_the_window_starts_empty_when_the_circuit_closes() {
    let lab = lab(4, 3, 0.5);
    opens(&lab, "FSF", "TODO(13): two failures of three");
    lab.advance(ms(10));
    lab.probe().success();
    stays_closed(
        &lab,
        "S",
        0,
        "TODO(13): after closing, the window holds only what came since: the failures before the cooldown are forgotten (W2)",
    );
    stays_closed(&lab, "F", 1, "TODO(13): S F is below the minimum of 3");
}

/// A window of (4, 2, 0.5) tripped by F F while an attempt admitted before
/// is still out, then closed by a good probe; then that attempt reports.
fn late_report(report: fn(Permit<'_, ManualClock>) -> Recorded) -> (Lab, Recorded) {
    let lab = lab(4, 2, 0.5);
    let old = lab.breaker.try_acquire().expect("a closed circuit admits");
    feed(&lab, "FF");
    lab.advance(ms(10));
    lab.probe().success();
    let recorded = report(old);
    (lab, recorded)
}

/// The second verdict in a window of (4, 2, 0.5) after one of each.
const SECOND_VERDICT: &str = "TODO(13): the second verdict brings the window to its minimum \
     of 2, with a share of failures of 0.5: open (W1)";

const TOO_LATE: &str =
    "B6: an attempt admitted before the circuit opened reports too late (TODO(3))";

#[test]
fn w1_w2_b6_a_stale_failure_never_enters_the_new_window() {
    let (lab, recorded) = late_report(|old| old.failure());
    assert_eq!(recorded, Recorded::Stale, "{TOO_LATE}");
    stays_closed(
        &lab,
        "S",
        0,
        "TODO(13): the window after closing holds S alone: neither a failure admitted before \
         the circuit opened nor the probe that closed it enters it (W1, W2, B6)",
    );
    opens(&lab, "F", SECOND_VERDICT);
}

#[test]
fn w1_w2_b6_a_stale_success_never_enters_the_new_window() {
    let (lab, recorded) = late_report(|old| old.success());
    assert_eq!(recorded, Recorded::Stale, "{TOO_LATE}");
    stays_closed(
        &lab,
        "F",
        1,
        "TODO(13): the window after closing holds F alone, below the minimum of 2: neither a \
         success admitted before the circuit opened nor the probe that closed it enters it \
         (W1, W2, B6)",
    );
    opens(&lab, "S", SECOND_VERDICT);
}

#[test]
fn w1_k1_an_ignored_verdict_never_enters_the_window() {
    // F then an ignored attempt: one verdict. Counted as either, the
    // window would hold two, its minimum, with a share of at least 0.5.
    let lab = lab(4, 2, 0.5);
    stays_closed(
        &lab,
        "FI",
        1,
        "TODO(13): an ignored attempt is no verdict: the window holds F alone (W1, K1)",
    );
    opens(&lab, "S", SECOND_VERDICT);
}

#[test]
fn w1_b7_a_dropped_permit_never_enters_the_window() {
    let lab = lab(4, 2, 0.5);
    stays_closed(
        &lab,
        "FD",
        1,
        "TODO(13): a permit dropped unreported is no verdict: the window holds F alone (W1, B7)",
    );
    opens(&lab, "S", SECOND_VERDICT);
}

#[test]
fn w1_w2_rejections_and_probes_never_enter_the_window() {
    let lab = lab(4, 2, 0.5);
    feed(&lab, "FF");
    assert_eq!(
        lab.breaker.try_acquire().err(),
        Some(Rejected::Open { remaining: ms(10) }),
        "TODO(2): an open circuit refuses"
    );
    lab.advance(ms(10));
    let probe = lab.probe();
    assert_eq!(
        lab.breaker.try_acquire().err(),
        Some(Rejected::ProbeInFlight),
        "TODO(2): one probe at a time"
    );
    probe.success();
    stays_closed(
        &lab,
        "F",
        1,
        "TODO(13): the window after closing holds F alone, below the minimum of 2: \
         neither the refusals nor the probe's success entered it (W1, W2)",
    );
    opens(&lab, "S", SECOND_VERDICT);
}

#[test]
fn w1_a_share_just_under_the_rate_does_not_open() {
    // 3 failures of 5 is 0.6, a hair under 0.601; in whole percent the two
    // are the same 60%.
    let lab = lab(5, 5, 0.601);
    stays_closed(
        &lab,
        "FFFSS",
        3,
        "TODO(13): a share of 0.6 is below a rate of 0.601: compare the share itself, \
         not a rounding of it (W1)",
    );
}

#[test]
fn w1_at_exactly_n_verdicts_the_oldest_still_counts() {
    let lab = lab(3, 3, 0.3);
    opens(
        &lab,
        "FSS",
        "TODO(13): F S S fills the window of 3 with 1 failure in 3, at least 0.3: the oldest \
         verdict leaves only when a fourth arrives (W1)",
    );
}

#[test]
fn w1_a_window_breaker_shows_the_failures_in_its_window() {
    // Six failures among nine verdicts, more than the consecutive threshold
    // of 2, and still CLOSED: nine is below the minimum of 10.
    let lab = lab(10, 10, 0.7);
    stays_closed(
        &lab,
        "FSFFSFFSF",
        6,
        "TODO(13): CLOSED shows the failures in the window",
    );
    assert_eq!(
        lab.breaker.to_string(),
        "CLOSED (6 failures in a window of 10)",
        "W1: a window breaker says what its window counts, not a run of consecutive failures"
    );
    let shown = format!("{:?}", lab.breaker);
    assert!(
        shown.contains("window: Some(WindowConfig { size: 10, minimum: 10, failure_rate: 0.7 })"),
        "W1: a window breaker's Debug shows its window: {shown}"
    );
}

/// A control: consecutive mode shows as in the core lab, so this passes
/// before step 13.
#[test]
fn w1_a_consecutive_breaker_shows_its_run_of_failures() {
    let lab = Lab::built(RetryBreaker::builder().threshold(3).cooldown(ms(10)));
    feed(&lab, "FF");
    assert_eq!(
        lab.breaker.to_string(),
        "CLOSED (2 consecutive failures)",
        "W1: consecutive mode (the default) counts a run of consecutive failures"
    );
    let shown = format!("{:?}", lab.breaker);
    assert!(
        shown.contains("window: None"),
        "W1: a consecutive breaker's Debug shows that it has no window: {shown}"
    );
}

/// A control: HALF-OPEN works as in the core lab in window mode too, so
/// this passes before step 13.
#[test]
fn w1_a_failed_probe_in_window_mode_reopens_as_before() {
    let lab = lab(4, 2, 0.5);
    feed(&lab, "FF");
    lab.advance(ms(10));
    lab.probe().failure();
    assert_eq!(
        lab.breaker.state(),
        State::Open { remaining: ms(10) },
        "TODO(13): HALF-OPEN works as in the core lab"
    );
}

#[test]
fn w1_the_share_is_compared_as_the_user_wrote_it() {
    // 7 failures of 25 is a share of 0.28, exactly the double the literal
    // `0.28` is; `0.28 * 25.0` is a little more than 7.
    let lab = lab(25, 25, 0.28);
    stays_closed(
        &lab,
        &format!("{}{}", "SF".repeat(6), "S".repeat(12)),
        6,
        "TODO(13): 6 failures in 24 verdicts, below the minimum of 25",
    );
    opens(
        &lab,
        "F",
        "TODO(13): 7 failures of 25 is a share of 0.28, which opens a window of r = 0.28",
    );
}

/// Step 10's laws, with the advanced track's modes: ignored outcomes, k good
/// probes to close, and small windows. It needs steps 11-13, so it lives in
/// the last of them.
#[test]
fn k1_s1_s2_w1_w2_permits_in_every_mode_obey_the_laws_at_every_step() {
    crate::step10_explore::explore(
        "a permit operation did not return (a deadlock?)",
        crate::step10_explore::permits::advanced_scenario(),
        crate::step10_explore::permits::check,
    );
}
