//! Held back from the student edition: refusals and the cause (TODO(7);
//! rules E3, E4, E10), with thresholds, cooldowns, budgets, backoffs, faults
//! and the moment a call meets an open circuit or a probe in flight drawn
//! from the student's seed (`LAB_STUDENT_SEED`, see `step01_seeded.rs`).
//! Every failure message says what was drawn.

use std::time::Duration;

use retry_breaker::{Rejected, State};

use crate::step01_seeded::Draw;
use crate::step06_held_back::{backoff, delays, retryable_faults, shown};
use crate::support::{Ending, Fault, Lab, Script, ms, run};

const LOOPED: &str = "the retry loop did not stop after a refusal (E3): TODO(7)";

#[test]
fn e4_retries_open_the_circuit_at_a_drawn_threshold_and_the_next_attempt_is_refused() {
    let mut draw = Draw::new("e4_retries_open_the_circuit_at_a_drawn_threshold");
    let threshold = draw.count(1, 5);
    // Attempts left after the refused one: a refusal must end the call.
    let budget = threshold + draw.count(2, 5);
    let faults = retryable_faults(&mut draw, threshold);
    let table = delays(&mut draw, budget);
    let slept = table[threshold as usize - 1];
    let cooldown = slept + draw.duration(Duration::from_nanos(1), Duration::from_secs(2));
    run(LOOPED, async move {
        let case = format!(
            "threshold {threshold}, cooldown {cooldown:?}, budget {budget}, faults {faults:?}, \
             backoff {table:?}"
        );
        let lab = Lab::new(threshold, cooldown);
        let script = Script::new(faults.iter().map(|&f| Err(f)));
        let result = lab
            .call(budget, &script)
            .backoff(backoff(&table))
            .run()
            .await;
        let left = cooldown - slept;
        assert_eq!(
            result.attempt(),
            Some(threshold + 1),
            "TODO(7): {case}: the {threshold} failed attempts open the circuit, so attempt {} is \
             the one refused (E3, E4); got {}",
            threshold + 1,
            shown(&result)
        );
        assert_eq!(
            result.rejection(),
            Some(Rejected::Open { remaining: left }),
            "TODO(7): {case}: attempt {} asks {slept:?} later, while {left:?} of the cooldown is \
             left: refused by the open circuit (E3, E4); got {}",
            threshold + 1,
            shown(&result)
        );
        assert_eq!(
            script.calls(),
            threshold,
            "TODO(7): {case}: the refused attempt never reaches the task, and no sleep follows \
             the refusal (E3): the attempts that reached the dependency"
        );
        assert_eq!(
            lab.sleeper.delays(),
            table[..threshold as usize].to_vec(),
            "TODO(7): {case}: the refused attempt never reaches the task, and no sleep follows \
             the refusal (E3): the sleeps asked for"
        );
        assert_eq!(
            lab.breaker.state(),
            State::Open { remaining: left },
            "TODO(7): {case}: every attempt was reported, so the retries opened the circuit (E4)"
        );
    });
}

#[test]
fn e10_a_refusal_carries_the_error_of_the_attempt_just_before_it_and_a_first_refusal_none() {
    let mut draw = Draw::new("e10_a_refusal_carries_the_error_of_the_attempt_just_before_it");
    let threshold = draw.count(2, 5);
    let budget = threshold + draw.count(1, 3);
    // The first fault differs from the last, so a refusal carrying the
    // first error is told apart from one carrying the last.
    let last = draw.pick(&[Fault::Timeout, Fault::Unavailable]);
    let first = if last == Fault::Timeout {
        Fault::Unavailable
    } else {
        Fault::Timeout
    };
    let mut faults = retryable_faults(&mut draw, threshold);
    faults[0] = first;
    faults[threshold as usize - 1] = last;
    let table = delays(&mut draw, budget);
    let cooldown = table[threshold as usize - 1] + draw.duration(ms(1), Duration::from_secs(1));
    run(LOOPED, async move {
        let case = format!(
            "threshold {threshold}, cooldown {cooldown:?}, budget {budget}, faults {faults:?}"
        );
        let lab = Lab::new(threshold, cooldown);
        let script = Script::new(faults.iter().map(|&f| Err(f)));
        let result = lab
            .call(budget, &script)
            .backoff(backoff(&table))
            .run()
            .await;
        let error = result.expect_err("the circuit opened");
        assert_eq!(
            error.ending(),
            "Rejected",
            "TODO(7): {case}: the circuit opened, so the call ends refused (E3); got {error:?}"
        );
        assert_eq!(
            error.attempt(),
            Some(threshold + 1),
            "TODO(7): {case}: attempt {} is the one refused (E3, E4); got {error:?}",
            threshold + 1
        );
        assert_eq!(
            error.cause(),
            Some(&last),
            "TODO(7): {case}: the refusal carries the error of attempt {threshold} ({last}), the \
             one just before it, not the first (E10); got {error:?}"
        );
        let cause = std::error::Error::source(&error).map(ToString::to_string);
        assert_eq!(
            cause,
            Some(last.to_string()),
            "TODO(7): {case}: the refusal's source() is that error (E10)"
        );
        let script = Script::new([]);
        let refused = lab
            .call(budget, &script)
            .backoff(backoff(&table))
            .run()
            .await;
        assert_eq!(
            refused.ending(),
            "Rejected",
            "TODO(7): {case}: the next call is refused (E3); got {}",
            shown(&refused)
        );
        assert_eq!(
            refused.attempt(),
            Some(1),
            "TODO(7): {case}: the next call's first attempt is the one refused (E3); got {}",
            shown(&refused)
        );
        assert_eq!(
            refused.cause(),
            None,
            "TODO(7): {case}: a refusal of the first attempt carries no error (E10); got {}",
            shown(&refused)
        );
    });
}

#[test]
fn e3_a_call_into_an_open_circuit_at_a_drawn_time_is_refused_at_once() {
    let mut draw = Draw::new("e3_a_call_into_an_open_circuit_at_a_drawn_time");
    let threshold = draw.count(1, 5);
    let cooldown = draw.duration(ms(2), Duration::from_secs(5));
    let after = draw.duration(Duration::ZERO, cooldown - Duration::from_nanos(1));
    // Attempts left after the refused one: a refusal must end the call.
    let budget = draw.count(2, 9);
    let table = delays(&mut draw, budget);
    run(LOOPED, async move {
        let case = format!(
            "threshold {threshold}, cooldown {cooldown:?}, a call of budget {budget} {after:?} \
             after the circuit opened"
        );
        let lab = Lab::new(threshold, cooldown);
        lab.trip();
        lab.advance(after);
        let generation = lab.breaker.generation();
        let script = Script::new([]);
        let result = lab
            .call(budget, &script)
            .backoff(backoff(&table))
            .run()
            .await;
        let left = cooldown - after;
        assert_eq!(
            shown(&result),
            format!(
                "Rejected(1, {:?}, None)",
                Rejected::Open { remaining: left }
            ),
            "TODO(7): {case}: the first attempt is refused with the time left, and that ends the \
             call (E3)"
        );
        assert_eq!(
            script.calls(),
            0,
            "TODO(7): {case}: no task, no sleep, no spin, and the breaker unchanged (E3): the attempts that reached the dependency"
        );
        assert_eq!(
            lab.sleeper.delays(),
            vec![],
            "TODO(7): {case}: no task, no sleep, no spin, and the breaker unchanged (E3): the sleeps asked for"
        );
        assert_eq!(
            lab.breaker.state(),
            State::Open { remaining: left },
            "TODO(7): {case}: no task, no sleep, no spin, and the breaker unchanged (E3): the breaker's state"
        );
        assert_eq!(
            lab.breaker.generation(),
            generation,
            "TODO(7): {case}: no task, no sleep, no spin, and the breaker unchanged (E3): the generation"
        );
    });
}

#[test]
fn e3_a_call_refused_because_a_probe_is_out_spends_nothing() {
    let mut draw = Draw::new("e3_a_call_refused_because_a_probe_is_out");
    let threshold = draw.count(1, 5);
    let cooldown = draw.duration(Duration::ZERO, Duration::from_secs(5));
    let late = draw.duration(Duration::ZERO, ms(100));
    let calls = draw.count(1, 5);
    let budget = draw.count(1, 9);
    let table = delays(&mut draw, budget);
    run(LOOPED, async move {
        let case = format!(
            "threshold {threshold}, cooldown {cooldown:?}, probe out {late:?} after the \
             deadline, {calls} call(s) of budget {budget}"
        );
        let lab = Lab::new(threshold, cooldown);
        lab.trip();
        lab.advance(cooldown + late);
        let probe = lab.probe();
        for call in 1..=calls {
            let script = Script::new([]);
            let result = lab
                .call(budget, &script)
                .backoff(backoff(&table))
                .run()
                .await;
            assert_eq!(
                shown(&result),
                format!("Rejected(1, {:?}, None)", Rejected::ProbeInFlight),
                "TODO(7): {case}: call {call} is refused at its first attempt because the probe \
                 is out (E3, B5)"
            );
            assert_eq!(
                script.calls(),
                0,
                "TODO(7): {case}: call {call} reached the task (E3)"
            );
        }
        assert_eq!(
            lab.sleeper.delays(),
            vec![],
            "TODO(7): {case}: refusals sleep not and are no failures (E3): the sleeps asked for"
        );
        assert_eq!(
            lab.breaker.state(),
            State::HalfOpen {
                probe_in_flight: true
            },
            "TODO(7): {case}: refusals sleep not and are no failures (E3): the breaker's state"
        );
        probe.success();
    });
}
