//! Held back from the student edition: interleavings in the style of step
//! 9 (no TODO of its own: the TODOs of steps 1-8; rules B2-B7, B9, E3,
//! E5), written out as scenarios whose every choice is drawn from the
//! student's seed (`LAB_STUDENT_SEED`, see `step01_seeded.rs`): how many
//! callers, the order in which their attempts report or are polled, which
//! calls are dropped, when the clock moves and how each attempt ends. The
//! expected results are worked out from the rules by counting, on one
//! thread, with the manual clock: no real time, no thread scheduling.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use retry_breaker::{Clock, ExecuteError, Recorded, Rejected, State};
use tokio_util::sync::CancellationToken;

use crate::step01_seeded::Draw;
use crate::support::breaker_core::{WAITING, assert_refused, assert_state};
use crate::support::{Fault, Gate, Lab, ms, poll_once, retryable};

const NS: Duration = Duration::from_nanos(1);

type Call<'a> = Pin<Box<dyn Future<Output = Result<u32, ExecuteError<Fault>>> + 'a>>;

/// A call's result, as "Ok(value)", "Task(attempt, fault)" and so on.
fn shown(result: &Result<u32, ExecuteError<Fault>>) -> String {
    match result {
        Ok(value) => format!("Ok({value})"),
        Err(ExecuteError::Task {
            attempt, source, ..
        }) => format!("Task({attempt}, {source})"),
        Err(ExecuteError::Rejected {
            attempt,
            rejection,
            source,
        }) => format!("Rejected({attempt}, {rejection:?}, {source:?})"),
        Err(other) => format!("{other:?}"),
    }
}

/// Polls `call` once, expecting it to finish.
fn finished(call: &mut Call<'_>, what: &str) -> String {
    match poll_once(call.as_mut()) {
        Poll::Ready(result) => shown(&result),
        Poll::Pending => panic!("{what}: the call is still waiting"),
    }
}

#[test]
fn b2_b6_b9_attempts_admitted_together_report_in_a_drawn_order() {
    let mut draw = Draw::new("b2_b6_b9_attempts_admitted_together_report_in_a_drawn_order");
    let callers = draw.count(3, 10);
    let threshold = draw.count(1, callers - 1);
    let cooldown = draw.duration(ms(1), Duration::from_secs(1));
    let lab = Lab::new(threshold, cooldown);
    let mut permits: Vec<(usize, _)> = (0..callers as usize)
        .map(|caller| {
            (
                caller,
                lab.breaker
                    .try_acquire()
                    .expect("CLOSED admits every attempt"),
            )
        })
        .collect();
    draw.shuffle(&mut permits);
    let mut story = format!(
        "threshold {threshold}, cooldown {cooldown:?}, {callers} attempts admitted CLOSED, then"
    );
    // The rules, by counting: in CLOSED a success resets the run and a
    // failure extends it; the failure that makes it `threshold` opens the
    // circuit, and every report after that is of an older generation.
    let mut run = 0;
    let mut deadline = None;
    for (caller, permit) in permits {
        lab.advance(draw.duration(Duration::ZERO, ms(3)));
        let now = lab.clock.now();
        let success = draw.chance(1, 3);
        story.push_str(&format!(
            " #{caller} {} at {now:?};",
            if success { "succeeds" } else { "fails" }
        ));
        let recorded = if success {
            permit.success()
        } else {
            permit.failure()
        };
        let expected = if deadline.is_some() {
            Recorded::Stale
        } else {
            run = if success { 0 } else { run + 1 };
            if run == threshold {
                deadline = Some(now + cooldown);
            }
            Recorded::Counted
        };
        assert_eq!(
            recorded, expected,
            "TODO(3): {story}: this report must be {expected:?} (B6, B9)"
        );
        let state = match deadline {
            Some(deadline) => State::Open {
                remaining: deadline.saturating_sub(now),
            },
            None => State::Closed { failures: run },
        };
        assert_state!(
            lab.breaker,
            state,
            "TODO(1): {story}: the consecutive count is {run} and only current reports count \
             (B2, B6)"
        );
    }
    let Some(deadline) = deadline else { return };
    lab.advance(deadline.saturating_sub(lab.clock.now()));
    let probe = lab.breaker.try_acquire().unwrap_or_else(|r| {
        panic!("TODO(2): {story} at the deadline {deadline:?} the first attempt is the probe, got {r:?} (B4)")
    });
    let contenders = draw.count(1, 4);
    for _ in 0..contenders {
        assert_refused!(
            lab.breaker,
            Rejected::ProbeInFlight,
            "TODO(2): {story} at the deadline {deadline:?} {contenders} more attempts ask while \
             the probe is out: refused (B5)"
        );
    }
    probe.success();
    assert_state!(
        lab.breaker,
        State::Closed { failures: 0 },
        "TODO(2): {story} then the probe succeeds: CLOSED (B5)"
    );
}

#[test]
fn b3_b4_b5_rounds_of_attempts_at_drawn_times_around_each_deadline() {
    let mut draw = Draw::new("b3_b4_b5_rounds_of_attempts_at_drawn_times_around_each_deadline");
    let threshold = draw.count(1, 4);
    let cooldown = draw.duration(ms(2), Duration::from_secs(2));
    let rounds = draw.count(2, 5);
    let lab = Lab::new(threshold, cooldown);
    lab.trip();
    let mut deadline = cooldown;
    let mut story = format!("threshold {threshold}, cooldown {cooldown:?}, opened at t = 0;");
    for _ in 0..rounds {
        // Asks before the deadline, at drawn times; then one at it or after,
        // and a few more while that probe is out.
        let early = draw.count(0, 3);
        let mut offsets: Vec<Duration> = (0..early)
            .map(|_| draw.duration(NS, cooldown - NS))
            .collect();
        offsets.sort_unstable_by(|a, b| b.cmp(a));
        for before in offsets {
            let at = deadline - before;
            lab.advance(at.saturating_sub(lab.clock.now()));
            let now = lab.clock.now();
            story.push_str(&format!(" ask at {now:?};"));
            assert_eq!(
                lab.breaker.try_acquire().err(),
                Some(Rejected::Open {
                    remaining: deadline - now
                }),
                "TODO(2): {story} the deadline is {deadline:?}, so this attempt is refused with \
                 the time left (B3)"
            );
        }
        let late = if draw.chance(1, 3) {
            Duration::ZERO
        } else {
            draw.duration(NS, ms(5))
        };
        lab.advance((deadline + late).saturating_sub(lab.clock.now()));
        let now = lab.clock.now();
        story.push_str(&format!(" ask at {now:?} (the deadline is {deadline:?});"));
        let probe = lab.breaker.try_acquire().unwrap_or_else(|r| {
            panic!(
                "TODO(2): {story} at or after the deadline the attempt is the probe, got {r:?} (B4)"
            )
        });
        for _ in 0..draw.count(0, 3) {
            lab.advance(draw.duration(Duration::ZERO, ms(2)));
            story.push_str(&format!(" ask at {:?};", lab.clock.now()));
            assert_refused!(
                lab.breaker,
                Rejected::ProbeInFlight,
                "TODO(2): {story} the probe is out, so this attempt is refused (B5)"
            );
        }
        lab.advance(draw.duration(Duration::ZERO, ms(4)));
        let now = lab.clock.now();
        if draw.chance(1, 3) {
            story.push_str(&format!(
                " the probe succeeds at {now:?}, {threshold} failures;"
            ));
            probe.success();
            assert_state!(
                lab.breaker,
                State::Closed { failures: 0 },
                "TODO(2): {story} a good probe closes the circuit (B5)"
            );
            lab.trip();
        } else {
            story.push_str(&format!(" the probe fails at {now:?};"));
            probe.failure();
        }
        deadline = now + cooldown;
        assert_state!(
            lab.breaker,
            State::Open {
                remaining: cooldown
            },
            "TODO(2): {story} the circuit is open until {deadline:?} (B2, B5)"
        );
    }
}

#[test]
fn e3_b5_calls_at_the_deadline_polled_in_a_drawn_order_send_one_probe() {
    let mut draw = Draw::new("e3_b5_calls_at_the_deadline_polled_in_a_drawn_order");
    let threshold = draw.count(1, 4);
    let callers = draw.count(2, 6);
    let step = draw.duration(ms(1), ms(50));
    let cooldown = step + draw.duration(NS, Duration::from_secs(1));
    let budgets: Vec<u32> = (0..callers).map(|_| draw.count(1, 3)).collect();
    let mut order: Vec<usize> = (0..callers as usize).collect();
    draw.shuffle(&mut order);
    let outcome = draw.pick(&[Ok(9), Err(Fault::Timeout), Err(Fault::Declined)]);
    let case = format!(
        "threshold {threshold}, cooldown {cooldown:?}, backoff {step:?} per attempt, calls of \
         budgets {budgets:?} at the deadline polled in the order {order:?}, the probe ends \
         {outcome:?}"
    );
    let lab = Lab::new(threshold, cooldown);
    lab.trip();
    lab.advance(cooldown);
    let cancel = CancellationToken::new();
    let gates: Vec<Gate> = budgets.iter().map(|_| Gate::new()).collect();
    let linear = move |attempt: u32| step * attempt;
    let mut calls: Vec<Call<'_>> = budgets
        .iter()
        .zip(&gates)
        .map(|(&budget, gate)| -> Call<'_> {
            Box::pin(lab.breaker.execute(
                budget,
                gate.task(),
                retryable,
                linear,
                &cancel,
                &lab.sleeper,
            ))
        })
        .collect();
    let probe = order[0];
    assert!(
        poll_once(calls[probe].as_mut()).is_pending(),
        "TODO(2): {case}: call #{probe}, polled first, is the probe and waits for its attempt \
         (B4)"
    );
    for &other in &order[1..] {
        assert_eq!(
            finished(
                &mut calls[other],
                &format!("TODO(6): {case}: call #{other}")
            ),
            format!("Rejected(1, {:?}, None)", Rejected::ProbeInFlight),
            "TODO(6): {case}: call #{other} is refused at once while the probe is out (B5, E3)"
        );
        assert_eq!(
            gates[other].started(),
            0,
            "TODO(6): {case}: call #{other} never reached its task (E3)"
        );
    }
    gates[probe].open(outcome);
    let budget = budgets[probe];
    let (expected, state) = match outcome {
        Ok(value) => (format!("Ok({value})"), State::Closed { failures: 0 }),
        // The failed probe reopens the circuit; a retry asks `step` later.
        Err(Fault::Timeout) if budget > 1 => (
            format!(
                "Rejected(2, {:?}, Some(Timeout))",
                Rejected::Open {
                    remaining: cooldown - step
                }
            ),
            State::Open {
                remaining: cooldown - step,
            },
        ),
        Err(fault) => (
            format!("Task(1, {fault})"),
            State::Open {
                remaining: cooldown,
            },
        ),
    };
    assert_eq!(
        finished(
            &mut calls[probe],
            &format!("TODO(6): {case}: the probe's call")
        ),
        expected,
        "TODO(6): {case}: the probe's call, budget {budget}, ends as its outcome says (B5, E3, \
         E5, E10)"
    );
    assert_state!(
        lab.breaker,
        state,
        "TODO(2): {case}: the probe decided (B5)"
    );
}

#[test]
fn b6_e5_late_calls_get_their_own_outcomes_while_the_probe_decides() {
    let mut draw = Draw::new("b6_e5_late_calls_get_their_own_outcomes_while_the_probe_decides");
    let threshold = draw.count(1, 4);
    let cooldown = draw.duration(ms(1), Duration::from_secs(1));
    let late = draw.count(1, 4);
    let outcomes: Vec<Result<u32, Fault>> = (0..late)
        .map(|i| {
            if draw.chance(1, 2) {
                Ok(100 + i)
            } else {
                Err(draw.pick(&[Fault::Timeout, Fault::Unavailable, Fault::Declined]))
            }
        })
        .collect();
    let mut order: Vec<usize> = (0..late as usize).collect();
    draw.shuffle(&mut order);
    let probe_outcome = draw.pick(&[Ok(1), Err(Fault::Timeout)]);
    let case = format!(
        "threshold {threshold}, cooldown {cooldown:?}, {late} one-attempt calls admitted CLOSED \
         end {outcomes:?} in the order {order:?} while the probe is out, then the probe ends \
         {probe_outcome:?}"
    );
    let lab = Lab::new(threshold, cooldown);
    let cancel = CancellationToken::new();
    let gates: Vec<Gate> = (0..=late).map(|_| Gate::new()).collect();
    let never = |_: u32| -> Duration { panic!("a one-attempt call never sleeps") };
    let mut calls: Vec<Call<'_>> = gates
        .iter()
        .map(|gate| -> Call<'_> {
            Box::pin(
                lab.breaker
                    .execute(1, gate.task(), retryable, never, &cancel, &lab.sleeper),
            )
        })
        .collect();
    for (i, call) in calls.iter_mut().enumerate().take(late as usize) {
        assert!(
            poll_once(call.as_mut()).is_pending(),
            "TODO(6): {case}: call #{i} is admitted and waits for its attempt"
        );
    }
    lab.trip();
    lab.advance(cooldown);
    let probe = late as usize;
    assert!(
        poll_once(calls[probe].as_mut()).is_pending(),
        "TODO(2): {case}: the call after the cooldown is the probe (B4)"
    );
    let probing = (
        lab.breaker.state(),
        lab.breaker.generation(),
        lab.transitions(),
    );
    for &i in &order {
        gates[i].open(outcomes[i]);
        let expected = match outcomes[i] {
            Ok(value) => format!("Ok({value})"),
            Err(fault) => format!("Task(1, {fault})"),
        };
        assert_eq!(
            finished(&mut calls[i], &format!("TODO(6): {case}: call #{i}")),
            expected,
            "TODO(3): {case}: call #{i}'s outcome is stale for the breaker, but its value or \
             error still goes back to its own caller (B6)"
        );
        assert_eq!(
            (
                lab.breaker.state(),
                lab.breaker.generation(),
                lab.transitions()
            ),
            probing,
            "TODO(3): {case}: call #{i}'s stale outcome changes nothing: the probe is still out \
             (B6)"
        );
    }
    gates[probe].open(probe_outcome);
    finished(
        &mut calls[probe],
        &format!("TODO(6): {case}: the probe's call"),
    );
    let state = match probe_outcome {
        Ok(_) => State::Closed { failures: 0 },
        Err(_) => State::Open {
            remaining: cooldown,
        },
    };
    assert_state!(
        lab.breaker,
        state,
        "TODO(2): {case}: the probe alone decides (B5, B6)"
    );
}

#[test]
fn b7_calls_dropped_in_a_drawn_order_count_nothing_and_hand_back_the_probe() {
    let mut draw = Draw::new("b7_calls_dropped_in_a_drawn_order_count_nothing");
    let threshold = draw.count(2, 5);
    let cooldown = draw.duration(ms(1), Duration::from_secs(1));
    let callers = draw.count(2, 8);
    // true: the call's attempt fails; false: the caller drops the call.
    let mut fates: Vec<bool> = (0..callers).map(|_| draw.chance(1, 2)).collect();
    // Never enough failures to open the circuit.
    let mut failing = 0;
    for fate in &mut fates {
        if *fate {
            failing += 1;
            if failing == threshold {
                *fate = false;
                failing -= 1;
            }
        }
    }
    let dropped_probes = draw.count(1, 3);
    let probe_succeeds = draw.chance(1, 2);
    let shown_fates: String = fates.iter().map(|&f| if f { 'F' } else { 'D' }).collect();
    let case = format!(
        "threshold {threshold}, cooldown {cooldown:?}, {callers} calls in flight end \
         {shown_fates} (F: the attempt fails, D: the caller drops the call), then \
         {dropped_probes} probe call(s) dropped, then a probe that {}",
        if probe_succeeds { "succeeds" } else { "fails" }
    );
    let lab = Lab::new(threshold, cooldown);
    let cancel = CancellationToken::new();
    let never = |_: u32| -> Duration { panic!("a one-attempt call never sleeps") };
    let gates: Vec<Gate> = fates.iter().map(|_| Gate::new()).collect();
    let mut calls: Vec<Option<Call<'_>>> = gates
        .iter()
        .map(|gate| -> Option<Call<'_>> {
            Some(Box::pin(lab.breaker.execute(
                1,
                gate.task(),
                retryable,
                never,
                &cancel,
                &lab.sleeper,
            )))
        })
        .collect();
    for call in calls.iter_mut().flatten() {
        assert!(
            poll_once(call.as_mut()).is_pending(),
            "TODO(6): {case}: every call is admitted and waits"
        );
    }
    let mut order: Vec<usize> = (0..callers as usize).collect();
    draw.shuffle(&mut order);
    for i in order {
        if fates[i] {
            gates[i].open(Err(Fault::Timeout));
            let mut call = calls[i].take().expect("each call ends once");
            finished(&mut call, &format!("TODO(6): {case}: call #{i}"));
        } else {
            calls[i] = None;
        }
    }
    assert_state!(
        lab.breaker,
        State::Closed { failures: failing },
        "TODO(4): {case}: a dropped call observed nothing and records no verdict; only the \
         {failing} failure(s) count (B7)"
    );
    for _ in failing..threshold {
        lab.breaker.try_acquire().expect("CLOSED").failure();
    }
    lab.advance(cooldown);
    for round in 1..=dropped_probes {
        let gate = Gate::new();
        let mut call: Call<'_> =
            Box::pin(
                lab.breaker
                    .execute(1, gate.task(), retryable, never, &cancel, &lab.sleeper),
            );
        assert!(
            poll_once(call.as_mut()).is_pending(),
            "TODO(4): {case}: probe call {round} is admitted, since the dropped ones gave the \
             slot back (B7)"
        );
        drop(call);
        assert_state!(
            lab.breaker,
            WAITING,
            "TODO(4): {case}: probe call {round} dropped mid-attempt gives the slot back with no \
             verdict (B7)"
        );
    }
    let probe = lab.probe();
    if probe_succeeds {
        probe.success();
    } else {
        probe.failure();
    }
    let state = if probe_succeeds {
        State::Closed { failures: 0 }
    } else {
        State::Open {
            remaining: cooldown,
        }
    };
    assert_state!(
        lab.breaker,
        state,
        "TODO(4): {case}: the next probe decides (B5, B7)"
    );
}
