//! Generated sequences of permit operations from several callers, checked
//! step by step against the model (B1-B7, B9, B10).

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use proptest::prelude::*;
use retry_breaker::{
    ManualClock, Permit, Recorded, Rejected, RetryBreaker, State, Verdict, WindowConfig,
};

use super::model::{Model, Rule};
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

/// A breaker configuration and the operations to run on it. Its `Debug` is
/// the numbered, timed story of the run, as the model expects it, which is
/// what proptest prints for a shrunk counterexample.
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

/// The advanced track's scenarios (steps 10-12): ignored outcomes among the
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

/// What one operation did, as the model sees it.
#[derive(Default)]
struct Step {
    description: String,
    rule: Rule,
    /// A second rule the step also follows: a panic is B7, and then the
    /// failure it counts as follows the rules of a failure.
    also: Option<Rule>,
    /// For an admission request: the permit's generation, or the rejection.
    admission: Option<Result<u64, Rejected>>,
    /// For a report: whether it counted.
    recorded: Option<Recorded>,
}

impl Step {
    /// The rules a disagreement at this step breaks, for its message.
    fn rules(&self) -> String {
        match self.also {
            Some(also) => format!("{}; counted as a failure, {also}", self.rule),
            None => self.rule.to_owned(),
        }
    }
}

/// Permits still out in the model's story: (name, caller, generation).
type Outstanding = Vec<(String, u8, u64)>;

/// Applies `op` to the model, describing it for a reader.
fn model_step(model: &mut Model, out: &mut Outstanding, issued: &mut u32, op: Op) -> Step {
    match op {
        Op::Acquire(caller) => {
            let (admission, rule) = model.admit();
            let description = match admission {
                Ok(generation) => {
                    *issued += 1;
                    let name = format!("p{issued}");
                    out.push((name.clone(), caller, generation));
                    format!("caller #{caller} asks: admitted as {name} (g{generation})")
                }
                Err(rejection) => format!("caller #{caller} asks: rejected, {rejection:?}"),
            };
            Step {
                description,
                rule,
                admission: Some(admission),
                ..Step::default()
            }
        }
        // Every operation on an outstanding permit needs one to be out.
        Op::Report(..) | Op::Drop(_) | Op::Ignore(_) | Op::Panic(_) if out.is_empty() => Step {
            description: "(no permit out, so nothing happens)".into(),
            ..Step::default()
        },
        Op::Report(i, success) => {
            let (name, caller, generation) = out.remove(i % out.len());
            let (recorded, rule) = model.report(generation, success);
            let verdict = if success { "success" } else { "failure" };
            Step {
                description: format!("{name} (caller #{caller}) reports {verdict}: {recorded:?}"),
                rule,
                recorded: Some(recorded),
                ..Step::default()
            }
        }
        // Neither is a verdict: the model hands the permit's slot back.
        Op::Ignore(i) | Op::Drop(i) => {
            let (name, caller, generation) = out.remove(i % out.len());
            let (rule, what) = if let Op::Ignore(_) = op {
                (model.ignore(generation), "reports an ignored outcome")
            } else {
                (model.abandon(generation), "is dropped unreported")
            };
            Step {
                description: format!("{name} (caller #{caller}) {what}"),
                rule,
                ..Step::default()
            }
        }
        Op::Panic(i) => {
            let (name, caller, generation) = out.remove(i % out.len());
            let (recorded, as_a_failure) = model.report(generation, false);
            Step {
                description: format!(
                    "caller #{caller} panics holding {name}: a failure, {recorded:?}"
                ),
                rule: "B7: a panic while holding a permit counts as a failure (subject to B6), TODO(4)",
                also: Some(as_a_failure),
                recorded: Some(recorded),
                ..Step::default()
            }
        }
        Op::Advance(by) => {
            model.advance(by);
            Step {
                description: format!("{}ms pass", by.as_millis()),
                ..Step::default()
            }
        }
        Op::ToDeadline => {
            let by = model.until_deadline().unwrap_or_default();
            model.advance(by);
            Step {
                description: format!("time moves to the deadline (+{by:?})"),
                ..Step::default()
            }
        }
        Op::Read => Step {
            description: "someone reads the state".into(),
            rule: "B10: reading the state changes nothing",
            ..Step::default()
        },
    }
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
        let mut model = self.model();
        let (mut out, mut issued) = (Vec::new(), 0);
        for (n, &op) in self.ops.iter().enumerate() {
            let at = model.now();
            let step = model_step(&mut model, &mut out, &mut issued, op);
            writeln!(
                f,
                "  {:>2}. t={:<6} {}  => {}",
                n + 1,
                format!("{}ms", at.as_millis()),
                step.description,
                model.state()
            )?;
        }
        Ok(())
    }
}

impl Scenario {
    fn model(&self) -> Model {
        Model::new(self.threshold, self.cooldown).with_modes(self.success_threshold, self.window)
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
            format!("S2, W3: a valid configuration was refused: {e} (TODO(11), TODO(12))")
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

/// Runs the scenario on a real breaker and the model side by side; returns
/// the first disagreement or broken invariant, as a sentence.
pub fn check(scenario: &Scenario) -> Result<(), String> {
    opening_never_panics(scenario)?;
    let clock = ManualClock::new();
    let breaker = scenario.breaker(&clock)?;
    let mut model = scenario.model();
    let mut out: Outstanding = Vec::new();
    let mut permits: Vec<Permit<'_, ManualClock>> = Vec::new();
    let mut issued = 0;

    for (n, &op) in scenario.ops.iter().enumerate() {
        let before = breaker.state();
        let generation_before = breaker.generation();
        let fail = |what: String, rules: String| Err(format!("step {}: {what} [{rules}]", n + 1));
        // Apply to the breaker first, choosing the same permit as the model.
        let chosen = |i: usize| (!permits.is_empty()).then(|| i % permits.len());
        let actual: Option<Result<Option<Recorded>, Rejected>> = match op {
            Op::Acquire(_) => Some(breaker.try_acquire().map(|permit| {
                permits.push(permit);
                None
            })),
            Op::Report(i, success) => chosen(i).map(|i| {
                let permit = permits.remove(i);
                Ok(Some(if success {
                    permit.success()
                } else {
                    permit.failure()
                }))
            }),
            Op::Drop(i) => chosen(i).map(|i| {
                drop(permits.remove(i));
                Ok(None)
            }),
            Op::Ignore(i) => chosen(i).map(|i| Ok(permits.remove(i).report(Verdict::Ignored))),
            Op::Panic(i) => chosen(i).map(|i| {
                let permit = permits.remove(i);
                quiet_panics();
                let caught = catch_unwind(AssertUnwindSafe(move || {
                    let _held = permit;
                    std::panic::panic_any(Deliberate);
                }));
                assert!(caught.is_err());
                Ok(None)
            }),
            Op::Advance(by) => {
                clock.advance(by);
                None
            }
            Op::ToDeadline => {
                clock.advance(model.until_deadline().unwrap_or_default());
                None
            }
            Op::Read => None,
        };
        let step = model_step(&mut model, &mut out, &mut issued, op);

        if let (Some(expected), Some(actual)) = (step.admission, &actual) {
            let admitted = actual.as_ref().map(|_| ()).map_err(|r| *r);
            let expected_admitted = expected.map(|_| ());
            if admitted != expected_admitted {
                return fail(
                    format!("{}: the breaker answered {admitted:?}", step.description),
                    step.rules(),
                );
            }
        }
        if let (Op::Ignore(_), Some(Ok(Some(recorded)))) = (op, &actual) {
            return fail(
                format!(
                    "{}: the breaker recorded {recorded:?}, where nothing is recorded",
                    step.description
                ),
                step.rules(),
            );
        }
        if let (Some(expected), Some(Ok(Some(recorded)))) = (step.recorded, &actual) {
            if *recorded != expected {
                return fail(
                    format!(
                        "{}: the breaker recorded {recorded:?} (B9)",
                        step.description
                    ),
                    step.rules(),
                );
            }
        }
        let state = breaker.state();
        if state != model.state() {
            return fail(
                format!(
                    "after \"{}\" the breaker is {state}, the model says {}",
                    step.description,
                    model.state()
                ),
                step.rules(),
            );
        }
        if step.recorded == Some(Recorded::Stale)
            && (state != before || breaker.generation() != generation_before)
        {
            return fail(
                format!("a stale outcome changed the breaker from {before} to {state}"),
                "B6: stale outcomes change nothing, TODO(3)".to_owned(),
            );
        }
        // Never more than one probe out: in HALF-OPEN, every permit of the
        // current generation is a probe.
        if let State::HalfOpen { .. } = state {
            let current = breaker.generation();
            let probes = permits.iter().filter(|p| p.generation() == current).count();
            if probes > 1 {
                return fail(
                    format!("{probes} probes are out at once"),
                    "B5: one probe at a time, TODO(2)".to_owned(),
                );
            }
        }
    }
    // Whatever is still out is dropped at the end: that must not panic.
    drop(permits);
    Ok(())
}
