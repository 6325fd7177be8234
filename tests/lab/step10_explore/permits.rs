//! Generated sequences of permit operations from several callers, run on a
//! real breaker and judged step by step by the laws (B1-B7, B9, B10).

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use proptest::prelude::*;
use retry_breaker::{
    Clock, ManualClock, Permit, Recorded, Rejected, RetryBreaker, State, Verdict, WindowConfig,
};

use super::laws::Laws;
use crate::support::ms;

/// One thing a caller, or time, can do.
#[derive(Debug, Clone, Copy)]
pub enum Op {
    /// Caller `#n` asks for a permit.
    Acquire(u8),
    /// An outstanding permit (chosen by index, modulo how many are out)
    /// reports an outcome.
    Report(usize, bool),
    /// An outstanding permit is dropped unreported.
    Drop(usize),
    /// An outstanding permit reports an outcome its classifier ignored
    /// (the advanced track only).
    Ignore(usize),
    /// The code holding an outstanding permit panics.
    Panic(usize),
    /// Time passes.
    Advance(Duration),
    /// Time passes exactly to the end of the cooldown, if the circuit is open.
    ToDeadline,
    /// Someone reads the state.
    Read,
}

/// A breaker configuration and the operations to run on it. Its `Debug`,
/// which proptest prints for a shrunk counterexample, lists them; the
/// failure message above it tells what the breaker did with them.
#[derive(Clone)]
pub struct Scenario {
    pub threshold: u32,
    pub cooldown: Duration,
    pub ops: Vec<Op>,
    /// Good probes to close (S1): 1 in the core lab.
    pub success_threshold: u32,
    /// Window mode (W1): `None` in the core lab.
    pub window: Option<WindowConfig>,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..4).prop_map(Op::Acquire),
        4 => (any::<usize>(), any::<bool>()).prop_map(|(i, ok)| Op::Report(i, ok)),
        1 => any::<usize>().prop_map(Op::Drop),
        1 => any::<usize>().prop_map(Op::Panic),
        2 => (0u64..=12).prop_map(|n| Op::Advance(ms(n))),
        2 => Just(Op::ToDeadline),
        1 => Just(Op::Read),
    ]
}

pub fn scenario() -> impl Strategy<Value = Scenario> {
    let cooldown = prop_oneof![
        6 => (0u64..=10).prop_map(ms),
        1 => Just(Duration::MAX),
    ];
    (1u32..=3, cooldown, prop::collection::vec(op(), 1..60)).prop_map(
        |(threshold, cooldown, ops)| Scenario {
            threshold,
            cooldown,
            ops,
            success_threshold: 1,
            window: None,
        },
    )
}

/// The advanced track's scenarios (steps 11-13): ignored outcomes among the
/// operations, a success threshold of 1 to 3, and consecutive or window
/// mode with small windows, so that every rule is met often.
pub fn advanced_scenario() -> impl Strategy<Value = Scenario> {
    let window = (1u32..=6)
        .prop_flat_map(|size| (Just(size), 1..=size, 1usize..=4))
        .prop_map(|(size, minimum, quarter)| {
            WindowConfig::new(size, minimum, quarter as f64 / 4.0)
        });
    let op = prop_oneof![
        6 => op(),
        1 => any::<usize>().prop_map(Op::Ignore),
    ];
    (
        scenario(),
        1u32..=3,
        prop::option::weighted(0.6, window),
        prop::collection::vec(op, 1..80),
    )
        .prop_map(|(core, k, window, ops)| Scenario {
            ops,
            success_threshold: k,
            window,
            ..core
        })
}

impl fmt::Debug for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "threshold {}, cooldown {:?}",
            self.threshold, self.cooldown
        )?;
        if self.success_threshold != 1 {
            write!(f, ", {} good probes to close", self.success_threshold)?;
        }
        if let Some(w) = self.window {
            write!(
                f,
                ", window of {} (opens from {} verdicts at a failure share of {})",
                w.size, w.minimum, w.failure_rate
            )?;
        }
        writeln!(f, ":")?;
        for (n, op) in self.ops.iter().enumerate() {
            writeln!(f, "  {:>2}. {op:?}", n + 1)?;
        }
        Ok(())
    }
}

impl Scenario {
    /// The laws this scenario's breaker must obey.
    pub fn laws(&self) -> Laws {
        Laws::new(
            self.threshold,
            self.cooldown,
            self.success_threshold,
            self.window,
        )
    }

    /// The breaker under test: the core lab's constructor, or the builder
    /// when an advanced mode is on.
    fn breaker(&self, clock: &ManualClock) -> Result<RetryBreaker<ManualClock>, String> {
        if self.success_threshold == 1 && self.window.is_none() {
            return RetryBreaker::new(self.threshold, self.cooldown, clock.clone())
                .map_err(|e| format!("B1: a valid configuration was refused: {e} (TODO(1))"));
        }
        let mut builder = RetryBreaker::builder()
            .threshold(self.threshold)
            .cooldown(self.cooldown)
            .success_threshold(self.success_threshold);
        if let Some(window) = self.window {
            builder = builder.window(window);
        }
        builder.build(clock.clone()).map_err(|e| {
            format!("S2, W3: a valid configuration was refused: {e} (TODO(12), TODO(13))")
        })
    }
}

/// The payload of the panics this test raises on purpose.
struct Deliberate;

/// Keeps the thousands of deliberate panics out of the test's output; every
/// other panic is reported as usual.
fn quiet_panics() {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        let report = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !info.payload().is::<Deliberate>() {
                report(info);
            }
        }));
    });
}

/// Opens a fresh breaker with the scenario's settings at t = 1 ms, where
/// `now + cooldown` may not fit in a `Duration`, and fails if that panics.
/// The scenario itself would meet the same panic inside a permit dropped by
/// `Op::Panic`, while unwinding, and a panic there aborts the whole test
/// process: every test still running or not yet run would lose its verdict,
/// and which ones did would depend on thread timing (E9). Asked here, outside
/// any unwinding, the panic is an ordinary failure of this property.
fn opening_never_panics(scenario: &Scenario) -> Result<(), String> {
    let clock = ManualClock::new();
    let breaker = scenario.breaker(&clock)?;
    clock.advance(ms(1));
    quiet_panics();
    // Failures until the circuit opens: at most the threshold, or a full
    // window of them.
    for _ in 0..64 {
        if !matches!(breaker.state(), State::Closed { .. }) {
            break;
        }
        let Ok(permit) = breaker.try_acquire() else {
            break;
        };
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| permit.failure())) {
            return Err(format!(
                "with a cooldown of {:?}, a failure reported at t = 1ms panicked ({}); B1: where \
                 now + cooldown does not fit in a Duration, the circuit simply stays open, TODO(1). \
                 (Checked before the scenario runs: the same panic in a permit dropped by a panic \
                 would abort the test process.)",
                scenario.cooldown,
                crate::support::panic_message(&*payload)
            ));
        }
    }
    Ok(())
}

/// One step as it was observed: what the breaker said before and after,
/// and what the operation returned.
#[derive(Debug, Clone)]
pub struct Seen {
    pub op: Op,
    /// For an operation on an outstanding permit: its generation, as the
    /// breaker stamped it.
    pub permit: Option<u64>,
    /// The step in words, for a failure message.
    pub description: String,
    pub before: State,
    pub generation_before: u64,
    pub after: State,
    pub generation_after: u64,
    /// The clock after the step.
    pub now: Duration,
    /// For a request: the permit's generation, or the refusal.
    pub admission: Option<Result<u64, Rejected>>,
    /// For a success or a failure reported: what the breaker answered.
    pub recorded: Option<Recorded>,
}

/// Whoever decides whether an observed step was right: the laws, in every
/// run; an instructor's exact model, in grading.
pub trait Judge {
    fn judge(&mut self, seen: &Seen) -> Result<(), String>;
}

impl Judge for Laws {
    fn judge(&mut self, seen: &Seen) -> Result<(), String> {
        Laws::judge(self, seen)
    }
}

/// A permit still out: its name in the story, its caller, the permit.
struct Out<'a> {
    name: String,
    caller: u8,
    permit: Permit<'a, ManualClock>,
}

/// Runs the scenario on a real breaker and judges every step by the laws;
/// returns the first broken one, as a sentence, with the story so far.
pub fn check(scenario: &Scenario) -> Result<(), String> {
    check_with(scenario, scenario.laws())
}

/// [`check`], judged by `judge`.
pub fn check_with(scenario: &Scenario, mut judge: impl Judge) -> Result<(), String> {
    opening_never_panics(scenario)?;
    let clock = ManualClock::new();
    let breaker = scenario.breaker(&clock)?;
    let mut out: Vec<Out<'_>> = Vec::new();
    let mut issued = 0;
    let mut story = String::from("what the breaker did:\n");

    for (n, &op) in scenario.ops.iter().enumerate() {
        let at = clock.now();
        let before = breaker.state();
        let generation_before = breaker.generation().get();
        let slot = match op {
            Op::Report(i, _) | Op::Drop(i) | Op::Ignore(i) | Op::Panic(i) if !out.is_empty() => {
                Some(i % out.len())
            }
            _ => None,
        };
        let taken = slot.map(|slot| out.remove(slot));
        let permit = taken.as_ref().map(|taken| taken.permit.generation().get());
        let who = taken
            .as_ref()
            .map(|taken| format!("{} (caller #{})", taken.name, taken.caller));
        let (mut admission, mut recorded) = (None, None);
        let description = match (op, taken) {
            (Op::Acquire(caller), _) => match breaker.try_acquire() {
                Ok(permit) => {
                    issued += 1;
                    let name = format!("p{issued}");
                    let generation = permit.generation().get();
                    admission = Some(Ok(generation));
                    out.push(Out {
                        name: name.clone(),
                        caller,
                        permit,
                    });
                    format!("caller #{caller} asks: admitted as {name} (g{generation})")
                }
                Err(rejection) => {
                    admission = Some(Err(rejection));
                    format!("caller #{caller} asks: rejected, {rejection:?}")
                }
            },
            (Op::Report(_, success), Some(taken)) => {
                let answer = if success {
                    taken.permit.success()
                } else {
                    taken.permit.failure()
                };
                recorded = Some(answer);
                let verdict = if success { "success" } else { "failure" };
                format!("{} reports {verdict}: {answer:?}", who.unwrap_or_default())
            }
            (Op::Drop(_), Some(taken)) => {
                drop(taken.permit);
                format!("{} is dropped unreported", who.unwrap_or_default())
            }
            (Op::Ignore(_), Some(taken)) => {
                let who = who.unwrap_or_default();
                if let Some(answer) = taken.permit.report(Verdict::Ignored) {
                    return Err(format!(
                        "step {}: {who} reports an ignored outcome: the breaker recorded \
                         {answer:?}, where nothing is recorded [{}]\n\n{story}",
                        n + 1,
                        super::rules::K1_IGNORED_RECORDS_NOTHING
                    ));
                }
                format!("{who} reports an ignored outcome")
            }
            (Op::Panic(_), Some(taken)) => {
                quiet_panics();
                let caught = catch_unwind(AssertUnwindSafe(move || {
                    let _held = taken.permit;
                    std::panic::panic_any(Deliberate);
                }));
                assert!(caught.is_err());
                let who = who.unwrap_or_default();
                format!("the caller of {who} panics holding it: a failure")
            }
            (Op::Advance(by), _) => {
                clock.advance(by);
                format!("{}ms pass", by.as_millis())
            }
            (Op::ToDeadline, _) => {
                let by = match before {
                    State::Open { remaining } if at.checked_add(remaining).is_some() => remaining,
                    _ => Duration::ZERO,
                };
                clock.advance(by);
                format!("time moves to the deadline (+{by:?})")
            }
            (Op::Read, _) => "someone reads the state".to_owned(),
            (_, None) => "(no permit out, so nothing happens)".to_owned(),
        };
        let after = breaker.state();
        story.push_str(&format!(
            "  {:>2}. t={:<6} {description}  => {after}\n",
            n + 1,
            format!("{}ms", at.as_millis()),
        ));
        let seen = Seen {
            op,
            permit,
            description,
            before,
            generation_before,
            after,
            generation_after: breaker.generation().get(),
            now: clock.now(),
            admission,
            recorded,
        };
        judge
            .judge(&seen)
            .map_err(|why| format!("step {}: {why}\n\n{story}", n + 1))?;
        // Never more than one probe out: in HALF-OPEN, every permit of the
        // current generation is a probe.
        if let State::HalfOpen { .. } = after {
            let current = seen.generation_after;
            let probes = out
                .iter()
                .filter(|out| out.permit.generation().get() == current)
                .count();
            if probes > 1 {
                return Err(format!(
                    "step {}: {probes} probes are out at once [{}]\n\n{story}",
                    n + 1,
                    super::rules::B5_ONE_PROBE
                ));
            }
        }
    }
    // Whatever is still out is dropped at the end: that must not panic.
    drop(out);
    Ok(())
}
