//! Held back from the student edition: OPEN and HALF-OPEN at boundaries the
//! visible suite does not use (TODO(2); rules B1, B3, B4, B5, B9, B10). The
//! first test is fixed; the others draw their thresholds, cooldowns (to the
//! nanosecond), clock readings, probe durations and numbers of contenders
//! from the student's seed (`LAB_STUDENT_SEED`, see `step01_seeded.rs`),
//! and say what they drew in every failure message.

use std::time::Duration;

use retry_breaker::{Clock, Phase, Rejected, State};

use crate::step01_seeded::Draw;
use crate::support::breaker_core::{PROBING, assert_counted, assert_refused, assert_state};
use crate::support::{Lab, ms};

const NS: Duration = Duration::from_nanos(1);

#[test]
fn b4_the_probe_is_admitted_exactly_at_the_deadline_whatever_the_cooldown() {
    for cooldown in [1, 7, 250] {
        let lab = Lab::new(1, ms(cooldown));
        lab.trip();
        lab.advance(ms(cooldown - 1));
        assert_refused!(
            lab.breaker,
            Rejected::Open { remaining: ms(1) },
            "one millisecond before the deadline the circuit still refuses (B3)"
        );
        lab.advance(ms(1));
        let probe = lab.breaker.try_acquire().expect(
            "TODO(2): the first attempt at or after the deadline must be admitted as the probe (B4)",
        );
        assert_state!(
            lab.breaker,
            PROBING,
            "TODO(2): the probe is in flight (B5), cooldown {cooldown} ms"
        );
        probe.success();
    }
}

#[test]
fn b3_every_refusal_before_a_drawn_deadline_says_exactly_how_long_is_left() {
    let mut draw = Draw::new("b3_every_refusal_before_a_drawn_deadline");
    let threshold = draw.count(1, 5);
    let cooldown = draw.duration(ms(2), Duration::from_secs(30));
    let opened = draw.duration(Duration::ZERO, Duration::from_secs(1_000));
    let case = format!("threshold {threshold}, cooldown {cooldown:?}, opened at t = {opened:?}");
    let lab = Lab::new(threshold, cooldown);
    lab.advance(opened);
    lab.trip();
    let generation = lab.breaker.generation();
    let deadline = opened + cooldown;
    let asks = draw.count(2, 8);
    for _ in 0..asks {
        let now = lab.clock.now();
        let left = deadline - now;
        lab.advance(draw.duration(Duration::ZERO, (left - NS) / asks));
        let now = lab.clock.now();
        assert_eq!(
            lab.breaker.try_acquire().err(),
            Some(Rejected::Open {
                remaining: deadline - now
            }),
            "TODO(2): {case}: at t = {now:?}, before the deadline {deadline:?}, the attempt is \
             refused with the time left (B3)"
        );
    }
    assert_eq!(
        (lab.breaker.generation(), lab.transitions().len()),
        (generation, 1),
        "TODO(2): {case}: {asks} refusals change no generation and make no transition (B3)"
    );
    let now = lab.clock.now();
    assert_state!(
        lab.breaker,
        State::Open {
            remaining: deadline - now
        },
        "TODO(2): {case}: the refusals left the deadline where the failure put it (B3)"
    );
}

#[test]
fn b4_one_nanosecond_before_a_drawn_deadline_refuses_and_the_deadline_itself_probes() {
    let mut draw = Draw::new("b4_one_nanosecond_before_a_drawn_deadline");
    let threshold = draw.count(1, 6);
    let cooldown = draw.duration(NS, Duration::from_secs(10));
    let opened = draw.duration(Duration::ZERO, Duration::from_secs(100));
    let case = format!("threshold {threshold}, cooldown {cooldown:?}, opened at t = {opened:?}");
    let lab = Lab::new(threshold, cooldown);
    lab.advance(opened);
    lab.trip();
    lab.advance(cooldown - NS);
    assert_eq!(
        lab.breaker.try_acquire().err(),
        Some(Rejected::Open { remaining: NS }),
        "TODO(2): {case}: 1ns before the deadline the circuit still refuses (B3)"
    );
    lab.advance(NS);
    let probe = lab.breaker.try_acquire().unwrap_or_else(|r| {
        panic!(
            "TODO(2): {case}: at the deadline {:?} exactly (now >= deadline, not >) the attempt \
             is the probe, got {r:?} (B4)",
            opened + cooldown
        )
    });
    let last = lab.transitions().last().map(|t| (t.from, t.to, t.at));
    assert_eq!(
        last,
        Some((Phase::Open, Phase::HalfOpen, opened + cooldown)),
        "TODO(2): {case}: admitting the probe is the transition to HALF-OPEN (B4)"
    );
    assert_eq!(
        probe.generation(),
        lab.breaker.generation(),
        "TODO(2): {case}: the probe belongs to the HALF-OPEN generation (B4)"
    );
    probe.success();
}

#[test]
fn b4_b10_reads_after_a_drawn_deadline_change_nothing_until_an_attempt_asks() {
    let mut draw = Draw::new("b4_b10_reads_after_a_drawn_deadline");
    let threshold = draw.count(1, 4);
    let cooldown = draw.duration(NS, Duration::from_secs(5));
    let late = draw.duration(Duration::ZERO, Duration::from_secs(3_600));
    let reads = draw.count(1, 6);
    let case =
        format!("threshold {threshold}, cooldown {cooldown:?}, asked {late:?} after it ended");
    let lab = Lab::new(threshold, cooldown);
    lab.trip();
    let generation = lab.breaker.generation();
    lab.advance(cooldown + late);
    for _ in 0..reads {
        assert_state!(
            lab.breaker,
            State::Open {
                remaining: Duration::ZERO
            },
            "TODO(2): {case}: a read after the deadline shows OPEN with nothing left (B10)"
        );
    }
    assert_eq!(
        (lab.breaker.generation(), lab.transitions().len()),
        (generation, 1),
        "TODO(2): {case}: {reads} reads of the state change nothing: the cooldown is lazy (B4, B10)"
    );
    let probe = lab.breaker.try_acquire().unwrap_or_else(|r| {
        panic!("TODO(2): {case}: the first attempt after the deadline is the probe, got {r:?} (B4)")
    });
    assert_eq!(
        lab.transitions().last().map(|t| t.at),
        Some(cooldown + late),
        "TODO(2): {case}: the transition happens when the attempt asks, and is stamped then (B4)"
    );
    probe.failure();
}

#[test]
fn b5_of_a_drawn_number_of_contenders_only_the_first_probes() {
    let mut draw = Draw::new("b5_of_a_drawn_number_of_contenders");
    let threshold = draw.count(1, 5);
    let cooldown = draw.duration(ms(1), Duration::from_secs(2));
    let contenders = draw.count(2, 9);
    let succeeds = draw.chance(1, 2);
    let takes = draw.duration(Duration::ZERO, cooldown * 2);
    let case = format!(
        "threshold {threshold}, cooldown {cooldown:?}, {contenders} attempts at the deadline, \
         the probe {} after {takes:?}",
        if succeeds { "succeeds" } else { "fails" }
    );
    let lab = Lab::new(threshold, cooldown);
    lab.trip();
    lab.advance(cooldown);
    let probe = lab.probe();
    for other in 2..=contenders {
        assert_refused!(
            lab.breaker,
            Rejected::ProbeInFlight,
            "TODO(2): {case}: attempt {other} is refused while the probe is out (B5)"
        );
    }
    assert_state!(
        lab.breaker,
        PROBING,
        "TODO(2): {case}: refusals leave the probe in flight (B5)"
    );
    lab.advance(takes);
    let recorded = if succeeds {
        probe.success()
    } else {
        probe.failure()
    };
    assert_counted!(recorded, "TODO(2): {case}: the probe's report counts (B9)");
    let expected = if succeeds {
        State::Closed { failures: 0 }
    } else {
        State::Open {
            remaining: cooldown,
        }
    };
    assert_state!(
        lab.breaker,
        expected,
        "TODO(2): {case}: a good probe closes with a count of 0; a failed one reopens for a whole \
         cooldown from when it failed (B5)"
    );
}

#[test]
fn b5_failed_probes_reopen_each_time_for_a_cooldown_from_when_they_failed() {
    let mut draw = Draw::new("b5_failed_probes_reopen_each_time");
    let threshold = draw.count(1, 4);
    let cooldown = draw.duration(ms(1), Duration::from_secs(1));
    let rounds = draw.count(1, 4);
    let lab = Lab::new(threshold, cooldown);
    let start = lab.breaker.generation().get();
    lab.trip();
    let mut deadline = cooldown;
    let mut transitions = 1;
    let mut history = format!("threshold {threshold}, cooldown {cooldown:?}, opened at t = 0");
    for round in 1..=rounds {
        let late = draw.duration(Duration::ZERO, ms(5));
        let takes = draw.duration(Duration::ZERO, ms(40));
        history.push_str(&format!(
            "; probe {round} asks {late:?} late and fails {takes:?} later"
        ));
        lab.advance(deadline + late - lab.clock.now());
        let probe = lab.probe();
        lab.advance(takes);
        let failed_at = lab.clock.now();
        assert_counted!(
            probe.failure(),
            "TODO(2): {history}: the probe's failure counts (B9)"
        );
        transitions += 2;
        assert_eq!(
            lab.transitions().last().map(|t| (t.from, t.to, t.at)),
            Some((Phase::HalfOpen, Phase::Open, failed_at)),
            "TODO(2): {history}: the failed probe reopens the circuit at t = {failed_at:?} (B5)"
        );
        deadline = failed_at + cooldown;
        lab.advance(cooldown - NS);
        assert_eq!(
            lab.breaker.try_acquire().err(),
            Some(Rejected::Open { remaining: NS }),
            "TODO(2): {history}: open until {failed_at:?} + {cooldown:?}, a whole cooldown from \
             when the probe failed, so 1ns before it the circuit still refuses (B5)"
        );
    }
    lab.advance(NS);
    let probe = lab.breaker.try_acquire().unwrap_or_else(|r| {
        panic!(
            "TODO(2): {history}: at the last deadline {deadline:?} exactly the next probe is \
             admitted, got {r:?} (B4, B5)"
        )
    });
    probe.success();
    transitions += 2;
    assert_state!(
        lab.breaker,
        State::Closed { failures: 0 },
        "TODO(2): {history}; then a good probe closes the circuit (B5)"
    );
    assert_eq!(
        lab.breaker.generation().get(),
        start + transitions,
        "TODO(2): {history}: every transition starts a new generation, {transitions} in all (B5)"
    );
}

#[test]
fn b5_a_good_probe_leaves_a_clean_count_for_a_drawn_threshold() {
    let mut draw = Draw::new("b5_a_good_probe_leaves_a_clean_count");
    let threshold = draw.count(2, 9);
    let cooldown = draw.duration(NS, Duration::from_secs(1));
    let case = format!("threshold {threshold}, cooldown {cooldown:?}");
    let lab = Lab::new(threshold, cooldown);
    lab.trip();
    lab.advance(cooldown);
    lab.probe().success();
    for failures in 1..threshold {
        lab.breaker
            .try_acquire()
            .unwrap_or_else(|r| panic!("TODO(2): {case}: a closed circuit admits, got {r:?} (B5)"))
            .failure();
        assert_state!(
            lab.breaker,
            State::Closed { failures },
            "TODO(2): {case}: the good probe closed the circuit with a count of 0, so {failures} \
             failure(s) after it leave it CLOSED (B5)"
        );
    }
    lab.breaker.try_acquire().expect("still CLOSED").failure();
    assert_state!(
        lab.breaker,
        State::Open {
            remaining: cooldown
        },
        "TODO(2): {case}: failure {threshold} after the good probe opens it again (B2, B5)"
    );
}

#[test]
fn b1_with_a_zero_cooldown_every_next_attempt_is_the_probe() {
    let mut draw = Draw::new("b1_with_a_zero_cooldown_every_next_attempt");
    let threshold = draw.count(1, 6);
    let rounds = draw.count(1, 5);
    let at = draw.duration(Duration::ZERO, Duration::from_secs(10));
    let case =
        format!("threshold {threshold}, cooldown 0, opened at t = {at:?}, {rounds} failed probes");
    let lab = Lab::new(threshold, Duration::ZERO);
    lab.advance(at);
    lab.trip();
    for round in 1..=rounds {
        let probe = lab.breaker.try_acquire().unwrap_or_else(|r| {
            panic!(
                "TODO(2): {case}: with a cooldown of 0 the deadline is now, so attempt {round} \
                 at the same instant is the probe, got {r:?} (B1, B4)"
            )
        });
        assert_refused!(
            lab.breaker,
            Rejected::ProbeInFlight,
            "TODO(2): {case}: one probe at a time, even with no cooldown (B5)"
        );
        probe.failure();
        assert_state!(
            lab.breaker,
            State::Open {
                remaining: Duration::ZERO
            },
            "TODO(2): {case}: failed probe {round} reopens for a cooldown of 0 (B5)"
        );
    }
    lab.probe().success();
    assert_state!(
        lab.breaker,
        State::Closed { failures: 0 },
        "TODO(2): {case}: then a good probe closes (B5)"
    );
}

#[test]
fn b1_a_huge_cooldown_that_ends_at_duration_max_refuses_until_then() {
    let mut draw = Draw::new("b1_a_huge_cooldown_that_ends_at_duration_max");
    let threshold = draw.count(1, 3);
    let opened = draw.duration(NS, Duration::from_secs(1_000_000));
    let cooldown = Duration::MAX - opened;
    let case =
        format!("threshold {threshold}, opened at t = {opened:?}, cooldown MAX - {opened:?}");
    let lab = Lab::new(threshold, cooldown);
    lab.advance(opened);
    lab.trip();
    lab.advance(cooldown - NS);
    assert_eq!(
        lab.breaker.try_acquire().err(),
        Some(Rejected::Open { remaining: NS }),
        "TODO(2): {case}: the deadline is Duration::MAX itself, so 1ns before it the circuit \
         refuses (B1, B3)"
    );
    lab.advance(NS);
    lab.breaker
        .try_acquire()
        .unwrap_or_else(|r| {
            panic!("TODO(2): {case}: at Duration::MAX the cooldown is over, got {r:?} (B1, B4)")
        })
        .success();
}
