//! Whole `execute` calls interleaved on one thread by a scheduler whose
//! every choice comes from proptest: which call to poll, which running
//! attempt to let finish, when the clock moves, which call is cancelled or
//! abandoned. The calls' observations are then checked against the contract
//! (E2-E7, B3-B7).

use std::cell::RefCell;
use std::fmt;
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;

use proptest::prelude::*;
use retry_breaker::{Clock, ExecuteError, ManualClock, Rejected, RetryBreaker, Sleeper, State};
use tokio_util::sync::CancellationToken;

use crate::support::{Fault, ms, poll_once};

/// How one attempt of a call ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    Timeout,
    Declined,
}

/// Which failures a call retries.
#[derive(Debug, Clone, Copy)]
pub enum Retry {
    All,
    Never,
    TimeoutsOnly,
}

impl Retry {
    fn accepts(self, fault: &Fault) -> bool {
        match self {
            Retry::All => true,
            Retry::Never => false,
            Retry::TimeoutsOnly => *fault == Fault::Timeout,
        }
    }
}

/// One call's arguments and its dependency's script.
#[derive(Debug, Clone)]
pub struct Call {
    pub attempts: u32,
    pub retry: Retry,
    /// The backoff after attempt n is `n * step`.
    pub step: Duration,
    pub script: Vec<Outcome>,
}

impl Call {
    fn backoff(&self, attempt: u32) -> Duration {
        self.step * attempt
    }
}

/// One scheduler decision.
#[derive(Debug, Clone, Copy)]
pub enum Choice {
    Poll(usize),
    /// Lets the running attempt of a call finish (it still needs a poll).
    Finish(usize),
    Advance(Duration),
    Cancel(usize),
    /// The caller drops the call's future, wherever it is.
    Abandon(usize),
}

#[derive(Clone)]
pub struct Interleaving {
    pub threshold: u32,
    pub cooldown: Duration,
    pub calls: Vec<Call>,
    pub choices: Vec<Choice>,
}

impl fmt::Debug for Interleaving {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "threshold {}, cooldown {:?}, calls:",
            self.threshold, self.cooldown
        )?;
        for (k, call) in self.calls.iter().enumerate() {
            writeln!(
                f,
                "  call #{k}: {} attempt(s), retries {:?}, backoff n*{:?}, the dependency answers {:?}",
                call.attempts, call.retry, call.step, call.script
            )?;
        }
        writeln!(f, "scheduler:")?;
        for (n, choice) in self.choices.iter().enumerate() {
            let text = match choice {
                Choice::Poll(k) => format!("poll call #{}", k % self.calls.len()),
                Choice::Finish(k) => format!("call #{}'s attempt may finish", k % self.calls.len()),
                Choice::Advance(by) => format!("{}ms pass", by.as_millis()),
                Choice::Cancel(k) => format!("cancel call #{}", k % self.calls.len()),
                Choice::Abandon(k) => format!("drop call #{}", k % self.calls.len()),
            };
            writeln!(f, "  {:>2}. {text}", n + 1)?;
        }
        Ok(())
    }
}

pub fn interleaving() -> impl Strategy<Value = Interleaving> {
    let outcome = prop_oneof![3 => Just(Outcome::Ok), 4 => Just(Outcome::Timeout), 1 => Just(Outcome::Declined)];
    let retry =
        prop_oneof![4 => Just(Retry::All), 1 => Just(Retry::Never), 2 => Just(Retry::TimeoutsOnly)];
    let call = (
        0u32..=4,
        retry,
        (0u64..=6).prop_map(ms),
        prop::collection::vec(outcome, 4),
    )
        .prop_map(|(attempts, retry, step, script)| Call {
            attempts,
            retry,
            step,
            script,
        });
    let choice = prop_oneof![
        6 => (0usize..4).prop_map(Choice::Poll),
        4 => (0usize..4).prop_map(Choice::Finish),
        3 => (0u64..=12).prop_map(|n| Choice::Advance(ms(n))),
        1 => (0usize..4).prop_map(Choice::Cancel),
        1 => (0usize..4).prop_map(Choice::Abandon),
    ];
    (
        1u32..=3,
        (0u64..=10).prop_map(ms),
        prop::collection::vec(call, 1..=4),
        prop::collection::vec(choice, 0..40),
    )
        .prop_map(|(threshold, cooldown, calls, choices)| Interleaving {
            threshold,
            cooldown,
            calls,
            choices,
        })
}

/// What the scheduler saw, in order.
#[derive(Debug, Clone)]
pub enum Event {
    /// The task of `call` was invoked for `attempt`, admitted in `generation`.
    Invoked {
        call: usize,
        attempt: u32,
        generation: u64,
    },
    /// That attempt returned; its outcome is reported right after.
    Returned {
        call: usize,
        ok: bool,
    },
    Slept {
        call: usize,
        delay: Duration,
    },
    Advanced(Duration),
    Cancelled {
        call: usize,
    },
    /// The call's future was dropped while its attempt was in flight.
    AbandonedAttempt {
        call: usize,
    },
    Finished {
        call: usize,
        result: String,
    },
    Rejected {
        call: usize,
        rejection: Rejected,
    },
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Invoked {
                call,
                attempt,
                generation,
            } => {
                write!(
                    f,
                    "call #{call}: attempt {attempt} reaches the dependency (admitted in g{generation})"
                )
            }
            Event::Returned { call, ok: true } => write!(f, "call #{call}: the attempt succeeds"),
            Event::Returned { call, ok: false } => write!(f, "call #{call}: the attempt fails"),
            Event::Slept { call, delay } => {
                write!(f, "call #{call}: starts a backoff sleep of {delay:?}")
            }
            Event::Advanced(by) => write!(f, "{by:?} pass"),
            Event::Cancelled { call } => write!(f, "call #{call}: its token is cancelled"),
            Event::AbandonedAttempt { call } => {
                write!(
                    f,
                    "call #{call}: dropped by its caller with an attempt in flight"
                )
            }
            Event::Finished { call, result } => write!(f, "call #{call}: returns {result}"),
            Event::Rejected { call, rejection } => {
                write!(f, "call #{call}: refused, {rejection:?}")
            }
        }
    }
}

/// Shared by the scheduler, the tasks and the sleepers.
struct World {
    clock: ManualClock,
    log: Vec<(Duration, Event)>,
    /// Per call: the running attempt may finish.
    gate: Vec<bool>,
    /// Per call: the generation of its attempt in flight, if any.
    in_flight: Vec<Option<u64>>,
    /// Per call: asleep until this time.
    asleep_until: Vec<Option<Duration>>,
    invocations: Vec<u32>,
    /// The first contract violation seen from inside a task.
    violation: Option<String>,
}

impl World {
    fn record(&mut self, event: Event) {
        let now = self.clock.now();
        self.log.push((now, event));
    }

    fn story(&self) -> String {
        let mut text = String::from("what happened:\n");
        for (n, (at, event)) in self.log.iter().enumerate() {
            let at = format!("{}ms", at.as_millis());
            text.push_str(&format!("  {:>2}. t={at:<6} {event}\n", n + 1));
        }
        text
    }
}

type Shared = Rc<RefCell<World>>;

/// A sleeper on the manual clock that only wakes when the scheduler has
/// moved the clock far enough.
struct SchedulerSleeper {
    world: Shared,
    call: usize,
}

impl Sleeper for SchedulerSleeper {
    type Sleep = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

    #[allow(clippy::manual_async_fn)]
    fn sleep(&self, delay: Duration) -> Self::Sleep {
        // The sleep future must be Send; the world is not, so the sleep
        // registers itself here and polls only the clock.
        let mut world = self.world.borrow_mut();
        let until = world.clock.now().saturating_add(delay);
        world.asleep_until[self.call] = Some(until);
        world.record(Event::Slept {
            call: self.call,
            delay,
        });
        let clock = world.clock.clone();
        Box::pin(async move {
            poll_fn(|_| {
                if clock.now() >= until {
                    Poll::Ready(())
                } else {
                    Poll::Pending
                }
            })
            .await
        })
    }
}

type CallFuture<'a> = Pin<Box<dyn Future<Output = Result<u32, ExecuteError<Fault>>> + 'a>>;

/// A last look at the whole log of a run, and the breaker's state after it.
pub type Replay = fn(&Interleaving, &[(Duration, Event)], State) -> Result<(), String>;

/// Runs one interleaving; returns the first broken rule with the story.
pub fn check(case: &Interleaving) -> Result<(), String> {
    check_with(case, settled)
}

/// [`check`], with `replay` as its last look at the log.
pub fn check_with(case: &Interleaving, replay: Replay) -> Result<(), String> {
    let clock = ManualClock::new();
    let breaker = RetryBreaker::new(case.threshold, case.cooldown, clock.clone()).expect("valid");
    let n = case.calls.len();
    let world: Shared = Rc::new(RefCell::new(World {
        clock: clock.clone(),
        log: Vec::new(),
        gate: vec![false; n],
        in_flight: vec![None; n],
        asleep_until: vec![None; n],
        invocations: vec![0; n],
        violation: None,
    }));
    let tokens: Vec<CancellationToken> = (0..n).map(|_| CancellationToken::new()).collect();
    let sleepers: Vec<SchedulerSleeper> = (0..n)
        .map(|call| SchedulerSleeper {
            world: Rc::clone(&world),
            call,
        })
        .collect();

    let breaker = &breaker;
    let mut futures: Vec<Option<CallFuture<'_>>> = case
        .calls
        .iter()
        .enumerate()
        .map(|(k, spec)| {
            let world = Rc::clone(&world);
            let task = move || {
                let mut w = world.borrow_mut();
                w.invocations[k] += 1;
                let attempt = w.invocations[k];
                let generation = breaker.generation().get();
                w.record(Event::Invoked { call: k, attempt, generation });
                // No attempt may reach the dependency while the circuit
                // refuses, and in HALF-OPEN only the single probe may.
                match breaker.state() {
                    State::Open { .. } => {
                        w.violation.get_or_insert(format!(
                            "call #{k} attempt {attempt} reached the task while the circuit was OPEN (B3/E3: a rejection must not invoke the task, TODO(6))"
                        ));
                    }
                    State::HalfOpen { .. } => {
                        let probes = w.in_flight.iter().filter(|g| **g == Some(generation)).count();
                        if probes >= 1 {
                            w.violation.get_or_insert(format!(
                                "call #{k} attempt {attempt} is a second probe in flight (B5, TODO(2))"
                            ));
                        }
                    }
                    // CLOSED, or a state this model does not know yet.
                    _ => {}
                }
                w.in_flight[k] = Some(generation);
                w.gate[k] = false;
                let outcome = spec.script.get(attempt as usize - 1).copied();
                let world = Rc::clone(&world);
                async move {
                    poll_fn(|_| if world.borrow().gate[k] { Poll::Ready(()) } else { Poll::Pending }).await;
                    let mut w = world.borrow_mut();
                    w.in_flight[k] = None;
                    let result = match outcome {
                        Some(Outcome::Ok) => Ok(10 * k as u32 + attempt),
                        Some(Outcome::Timeout) => Err(Fault::Timeout),
                        Some(Outcome::Declined) | None => Err(Fault::Declined),
                    };
                    w.record(Event::Returned { call: k, ok: result.is_ok() });
                    result
                }
            };
            let retry = spec.retry;
            let call = spec.clone();
            let future: CallFuture<'_> = Box::pin(breaker.execute(
                spec.attempts,
                task,
                move |fault: &Fault| retry.accepts(fault),
                move |attempt| call.backoff(attempt),
                &tokens[k],
                &sleepers[k],
            ));
            Some(future)
        })
        .collect();
    let mut results: Vec<Option<Result<u32, ExecuteError<Fault>>>> = (0..n).map(|_| None).collect();

    let poll = |k: usize,
                futures: &mut Vec<Option<CallFuture<'_>>>,
                results: &mut Vec<Option<Result<u32, ExecuteError<Fault>>>>|
     -> Result<(), String> {
        let Some(future) = futures[k].as_mut() else {
            return Ok(());
        };
        let sleeping_cancelled = {
            let w = world.borrow();
            tokens[k].is_cancelled() && w.asleep_until[k].is_some() && w.in_flight[k].is_none()
        };
        match poll_once(future.as_mut()) {
            Poll::Ready(result) => {
                let mut w = world.borrow_mut();
                w.asleep_until[k] = None;
                if let Err(ExecuteError::Rejected { rejection, .. }) = &result {
                    w.record(Event::Rejected {
                        call: k,
                        rejection: *rejection,
                    });
                }
                w.record(Event::Finished {
                    call: k,
                    result: format!("{result:?}"),
                });
                results[k] = Some(result);
                futures[k] = None;
            }
            Poll::Pending => {
                if sleeping_cancelled {
                    return Err(format!(
                        "call #{k} was cancelled while asleep, yet polling it did not end it (E7: stop sleeping when cancelled, TODO(8))"
                    ));
                }
                let mut w = world.borrow_mut();
                let until = w.asleep_until[k];
                if until.is_some_and(|until| w.clock.now() >= until) {
                    w.asleep_until[k] = None;
                }
            }
        }
        Ok(())
    };

    let fail = |message: String| Err(format!("{message}\n{}", world.borrow().story()));

    for &choice in &case.choices {
        match choice {
            Choice::Poll(k) => {
                if let Err(message) = poll(k % n, &mut futures, &mut results) {
                    return fail(message);
                }
            }
            Choice::Finish(k) => world.borrow_mut().gate[k % n] = true,
            Choice::Advance(by) => {
                clock.advance(by);
                world.borrow_mut().record(Event::Advanced(by));
            }
            Choice::Cancel(k) => {
                tokens[k % n].cancel();
                world.borrow_mut().record(Event::Cancelled { call: k % n });
            }
            Choice::Abandon(k) => {
                let k = k % n;
                if futures[k].take().is_some() {
                    let mut w = world.borrow_mut();
                    if w.in_flight[k].take().is_some() {
                        w.record(Event::AbandonedAttempt { call: k });
                    }
                    w.asleep_until[k] = None;
                    w.record(Event::Finished {
                        call: k,
                        result: "dropped by its caller".into(),
                    });
                }
            }
        }
        if let Some(violation) = world.borrow().violation.clone() {
            return fail(violation);
        }
    }

    // Run everything that is left to completion: let every attempt finish,
    // poll, and move the clock to the next wake-up when nothing else moves.
    for _ in 0..200 {
        if futures.iter().all(Option::is_none) {
            break;
        }
        for k in 0..n {
            world.borrow_mut().gate[k] = true;
            if let Err(message) = poll(k, &mut futures, &mut results) {
                return fail(message);
            }
        }
        let next_wake = world.borrow().asleep_until.iter().flatten().min().copied();
        if let Some(until) = next_wake {
            let by = until.saturating_sub(clock.now());
            clock.advance(by);
            world.borrow_mut().record(Event::Advanced(by));
        }
        if let Some(violation) = world.borrow().violation.clone() {
            return fail(violation);
        }
    }
    if futures.iter().any(Option::is_some) {
        return fail("some calls never finished although every attempt was allowed to and the clock moved past every sleep (a lost wake-up or a loop that never ends)".into());
    }
    drop(futures);

    if let Err(message) = check_calls(case, &world.borrow(), &results) {
        return fail(message);
    }
    if let Err(message) = replay(case, &world.borrow().log, breaker.state()) {
        return fail(message);
    }
    Ok(())
}

/// Per call: budget, retries, sleeps and cancellation (E1-E7).
fn check_calls(
    case: &Interleaving,
    world: &World,
    results: &[Option<Result<u32, ExecuteError<Fault>>>],
) -> Result<(), String> {
    for (k, call) in case.calls.iter().enumerate() {
        let events: Vec<&Event> = world
            .log
            .iter()
            .map(|(_, event)| event)
            .filter(|event| event_call(event) == Some(k))
            .collect();
        let invocations = events
            .iter()
            .filter(|e| matches!(e, Event::Invoked { .. }))
            .count() as u32;
        let sleeps: Vec<Duration> = events
            .iter()
            .filter_map(|e| match e {
                Event::Slept { delay, .. } => Some(*delay),
                _ => None,
            })
            .collect();
        let expected_sleeps: Vec<Duration> =
            (1..=sleeps.len() as u32).map(|n| call.backoff(n)).collect();
        if sleeps != expected_sleeps {
            return Err(format!(
                "call #{k} slept {sleeps:?}, not backoff(1), backoff(2), ... = {expected_sleeps:?} (E5, TODO(6))"
            ));
        }
        if invocations > call.attempts {
            return Err(format!(
                "call #{k} invoked its task {invocations} times with a budget of {} (E1/E5, TODO(6))",
                call.attempts
            ));
        }
        if matches!(events.first(), Some(Event::Slept { .. })) {
            return Err(format!(
                "call #{k} slept before its first attempt (E6, TODO(6))"
            ));
        }
        // Nothing reaches the dependency after the call's token is cancelled.
        if let Some(at) = events
            .iter()
            .position(|e| matches!(e, Event::Cancelled { .. }))
        {
            if events[at..]
                .iter()
                .any(|e| matches!(e, Event::Invoked { .. }))
            {
                return Err(format!(
                    "call #{k} made an attempt after its token was cancelled (E2, TODO(8))"
                ));
            }
        }
        let Some(result) = &results[k] else { continue };
        let slept = sleeps.len() as u32;
        let shape_ok = match result {
            Err(ExecuteError::NoAttempts) => call.attempts == 0 && invocations == 0,
            Ok(_) => slept + 1 == invocations,
            Err(ExecuteError::Task {
                attempt, source, ..
            }) => {
                *attempt == invocations
                    && slept + 1 == invocations
                    && (*attempt == call.attempts || !call.retry.accepts(source))
            }
            Err(ExecuteError::Rejected { attempt, .. }) => {
                *attempt == invocations + 1 && slept == invocations
            }
            Err(ExecuteError::Cancelled { attempts_made, .. }) => {
                let cancelled_at = events
                    .iter()
                    .position(|e| matches!(e, Event::Cancelled { .. }));
                let last_sleep = events
                    .iter()
                    .rposition(|e| matches!(e, Event::Slept { .. }));
                *attempts_made == invocations
                    && cancelled_at.is_some()
                    && (slept + 1 == invocations.max(1)
                        || (slept == invocations && last_sleep < cancelled_at))
            }
            // An error this model does not know: not a shape it can accept.
            Err(_) => false,
        };
        if !shape_ok {
            return Err(format!(
                "call #{k} returned {result:?} after {invocations} attempt(s) and {slept} sleep(s): no sleep before the first attempt or after the last, retry only what is retryable, stop at a rejection (E3-E6, TODO(6); E2/E7, TODO(8))"
            ));
        }
    }
    Ok(())
}

fn event_call(event: &Event) -> Option<usize> {
    match event {
        Event::Invoked { call, .. }
        | Event::Returned { call, .. }
        | Event::Slept { call, .. }
        | Event::Cancelled { call }
        | Event::AbandonedAttempt { call }
        | Event::Finished { call, .. }
        | Event::Rejected { call, .. } => Some(*call),
        Event::Advanced(_) => None,
    }
}

/// What the log and the breaker's final state must agree on whatever the
/// calls did: generations only grow (B6), a refusal for an open circuit
/// says how much of a cooldown is left (B3), and once every call is over no
/// probe can still be out (B7).
fn settled(case: &Interleaving, log: &[(Duration, Event)], state: State) -> Result<(), String> {
    let mut newest = 0;
    for (_, event) in log {
        match event {
            Event::Invoked {
                call,
                attempt,
                generation,
            } => {
                if *generation < newest {
                    return Err(format!(
                        "call #{call} attempt {attempt} was admitted in g{generation}, after an attempt in g{newest}: generations only grow (B6, TODO(1))"
                    ));
                }
                newest = *generation;
            }
            Event::Rejected {
                call,
                rejection: Rejected::Open { remaining },
            } if remaining.is_zero() || *remaining > case.cooldown => {
                return Err(format!(
                    "call #{call} was refused with {remaining:?} of a {:?} cooldown left: OPEN refuses only before its deadline, and says what is left of it (B3, TODO(2))",
                    case.cooldown
                ));
            }
            _ => {}
        }
    }
    if let State::HalfOpen {
        probe_in_flight: true,
    } = state
    {
        return Err(format!(
            "after every call ended the breaker is {state}: no attempt is running, so no probe can be out (B7: a probe that ends, however it ends, gives its slot back, TODO(4))"
        ));
    }
    Ok(())
}
