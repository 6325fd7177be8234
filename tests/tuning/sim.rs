//! The tuning task's simulation: one checkout worker pays a stream of orders
//! through YOUR breaker and retry loop (the `retry_breaker` façade), against
//! a sick payment gateway, all on a manual clock. Nothing sleeps and nothing
//! goes over the network, so a run takes milliseconds and gives the same
//! figures every time.
//!
//! What is measured comes from the simulation's own books, never from what
//! the crate under test returns or prints: a request counts when the
//! gateway receives it, an order is paid when the gateway's ledger holds its
//! charge, and time is the simulation's own count of what each request and
//! each backoff took. A crate that claims success without calling the
//! gateway, or that skips its sleeps, is measured as what it did.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use retry_breaker::{ManualClock, ManualSleeper, RetryBreaker, Sleeper, TimeSource, backoff};
use tokio_util::sync::CancellationToken;

/// The settings file, at the root of the repository.
pub const FILE: &str = "tuning.toml";

/// The student's choices, from [`FILE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Consecutive failed attempts that open the circuit.
    pub threshold: u32,
    /// How long the circuit stays open before one probe may try, in ms.
    pub cooldown_ms: u64,
    /// Attempts per order, the first one included.
    pub attempts: u32,
    /// The backoff after the first failure, doubled after each further one...
    pub backoff_base_ms: u64,
    /// ...up to this cap.
    pub backoff_cap_ms: u64,
}

/// The names of [`FILE`]'s lines, in the order they are explained.
const NAMES: [&str; 5] = [
    "threshold",
    "cooldown_ms",
    "attempts",
    "backoff_base_ms",
    "backoff_cap_ms",
];

impl Settings {
    /// The settings the kit hands out in `tuning.toml`: the baseline the
    /// bonus measures a student's settings against, so that handing them
    /// back unchanged earns nothing ([`gain`]).
    pub const SHIPPED: Settings = Settings {
        threshold: 5,
        cooldown_ms: 1000,
        attempts: 3,
        backoff_base_ms: 25,
        backoff_cap_ms: 200,
    };

    /// Reads `name = whole number` lines; `#` starts a comment. Every one of
    /// the five names must appear exactly once, and nothing else.
    ///
    /// # Errors
    ///
    /// A sentence naming the line and what was expected.
    pub fn parse(text: &str) -> Result<Settings, String> {
        let mut values: [Option<u64>; 5] = [None; 5];
        for (number, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or_default().trim();
            if line.is_empty() {
                continue;
            }
            let at = format!("{FILE}, line {}", number + 1);
            let (name, value) = line
                .split_once('=')
                .ok_or_else(|| format!("{at}: expected `name = number`, as in `threshold = 3`"))?;
            let (name, value) = (name.trim(), value.trim());
            let index = NAMES
                .iter()
                .position(|known| *known == name)
                .ok_or_else(|| {
                    format!(
                        "{at}: `{name}` is not a setting; the settings are {}",
                        NAMES.join(", ")
                    )
                })?;
            let value: u64 = value.replace('_', "").parse().map_err(|_| {
                format!("{at}: `{name} = {value}`: expected a whole number (durations are in ms)")
            })?;
            if values[index].replace(value).is_some() {
                return Err(format!("{at}: `{name}` is set twice"));
            }
        }
        let missing: Vec<&str> = NAMES
            .iter()
            .zip(values)
            .filter(|(_, value)| value.is_none())
            .map(|(name, _)| *name)
            .collect();
        if !missing.is_empty() {
            return Err(format!("{FILE}: missing {}", missing.join(", ")));
        }
        let [
            threshold,
            cooldown_ms,
            attempts,
            backoff_base_ms,
            backoff_cap_ms,
        ] = values.map(Option::unwrap_or_default);
        let within = |name: &str, value: u64, low: u64, high: u64| {
            if (low..=high).contains(&value) {
                Ok(value)
            } else {
                Err(format!("{FILE}: {name} = {value}: pick {low} to {high}"))
            }
        };
        let settings = Settings {
            threshold: u32::try_from(within("threshold", threshold, 1, 100)?).unwrap_or(1),
            cooldown_ms: within("cooldown_ms", cooldown_ms, 1, 60_000)?,
            attempts: u32::try_from(within("attempts", attempts, 1, 10)?).unwrap_or(1),
            backoff_base_ms: within("backoff_base_ms", backoff_base_ms, 0, 60_000)?,
            backoff_cap_ms: within("backoff_cap_ms", backoff_cap_ms, 0, 60_000)?,
        };
        if settings.backoff_base_ms > settings.backoff_cap_ms {
            return Err(format!(
                "{FILE}: backoff_base_ms = {} is above backoff_cap_ms = {}",
                settings.backoff_base_ms, settings.backoff_cap_ms
            ));
        }
        Ok(settings)
    }

    /// [`Settings::parse`] of the file at `path`.
    ///
    /// # Errors
    ///
    /// A missing or unreadable file, or what [`Settings::parse`] refuses.
    pub fn read(path: &std::path::Path) -> Result<Settings, String> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            format!(
                "cannot read {}: {e}; it holds your settings, see LAB.md, \"Tuning the breaker\"",
                path.display()
            )
        })?;
        Settings::parse(&text)
    }
}

impl fmt::Display for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "threshold {}, cooldown {} ms, {} attempts, backoff {}..{} ms",
            self.threshold,
            self.cooldown_ms,
            self.attempts,
            self.backoff_base_ms,
            self.backoff_cap_ms
        )
    }
}

/// What the figures are judged against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budgets {
    /// The most requests the sick gateway should receive, over the run.
    pub requests: u64,
    /// The fewest orders that should get paid.
    pub paid: u32,
    /// The longest mean wait of an order, from its arrival to its answer.
    pub wait_ms: u64,
}

/// One student's sick gateway and budgets, drawn from their seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scenario {
    /// Orders, arriving one every `every_ms`.
    pub orders: u32,
    pub every_ms: u64,
    /// The gateway is down from `down_from_ms` for `down_ms`: every request
    /// then hangs until the client gives up after `timeout_ms`.
    pub down_from_ms: u64,
    pub down_ms: u64,
    pub timeout_ms: u64,
    /// Outside the outage the gateway has bad moments: time comes in spells
    /// of `spell_ms`, and in this share of spells every request fails at
    /// once (a 503). A retry in the same spell fails again; one after it
    /// has its own luck.
    pub flaky_percent: u64,
    pub spell_ms: u64,
    /// How long a request the gateway answers takes.
    pub answer_ms: u64,
    /// The seed the flaky failures are drawn from.
    pub seed: u64,
    pub budgets: Budgets,
}

/// SplitMix64: a tiny, well-mixed generator, so a seed's scenario is the
/// same on every machine and Rust version.
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A whole number from `low` to `high`, both included.
    fn between(&mut self, low: u64, high: u64) -> u64 {
        low + self.next() % (high - low + 1)
    }
}

impl Scenario {
    /// The scenario of the student whose seed is `seed` (the grader's seed,
    /// FNV-1a of the student id; 0 without one).
    pub fn for_seed(seed: u64) -> Scenario {
        let mut draw = Draw(seed);
        let orders = 200;
        let every_ms = draw.between(20, 40) * 10;
        let run_ms = u64::from(orders) * every_ms;
        let down_ms = draw.between(6, 16) * 1_000;
        let down_from_ms = draw.between(run_ms / 5, run_ms / 2) / 100 * 100;
        let timeout_ms = draw.between(2, 6) * 100;
        let flaky_percent = draw.between(10, 30);
        let answer_ms = draw.between(2, 6) * 10;
        let spell_ms = draw.between(4, 12) * 25;
        // The budgets are set so that no knob at either extreme meets all
        // three: the outage and the bad spells must both be respected.
        let healthy_orders = u64::from(orders) - down_ms / every_ms;
        let budgets = Budgets {
            // One request per order, half a retry for each bad spell an
            // order meets, and a few to open the circuit and probe.
            requests: u64::from(orders) + u64::from(orders) * flaky_percent / 200 + 8,
            // The orders outside the outage, bar one in twenty.
            paid: u32::try_from(healthy_orders * 95 / 100).unwrap_or(0),
            // An answer, a retry now and then, and a little of a hang.
            wait_ms: answer_ms + answer_ms * flaky_percent * 3 / 100 + timeout_ms / 4,
        };
        Scenario {
            orders,
            every_ms,
            down_from_ms,
            down_ms,
            timeout_ms,
            flaky_percent,
            spell_ms,
            answer_ms,
            seed,
            budgets,
        }
    }

    fn down_at(&self, at_ms: u64) -> bool {
        (self.down_from_ms..self.down_from_ms + self.down_ms).contains(&at_ms)
    }

    /// Whether a request at `at_ms` falls in a bad spell: a pure function
    /// of the seed and the spell, whatever the settings.
    fn bad_spell(&self, at_ms: u64) -> bool {
        let spell = at_ms / self.spell_ms.max(1);
        let mut draw = Draw(self.seed ^ spell.wrapping_mul(0xa076_1d64_78bd_642f));
        draw.next() % 100 < self.flaky_percent
    }
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} orders, one every {} ms; the gateway answers in {} ms, fails every request at once in {}% of its {} ms spells, and is down from {:.1} s for {:.1} s (each request then hangs {} ms until the client gives up)",
            self.orders,
            self.every_ms,
            self.answer_ms,
            self.flaky_percent,
            self.spell_ms,
            ms_to_s(self.down_from_ms),
            ms_to_s(self.down_ms),
            self.timeout_ms
        )
    }
}

#[allow(
    clippy::cast_precision_loss,
    reason = "a few minutes in ms, far below f64's exact integers"
)]
fn ms_to_s(ms: u64) -> f64 {
    ms as f64 / 1_000.0
}

/// What a run measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Figures {
    /// Requests the gateway received.
    pub requests: u64,
    /// Of them, during the outage.
    pub requests_while_down: u64,
    /// Orders whose charge is in the gateway's ledger.
    pub paid: u32,
    /// All orders.
    pub orders: u32,
    /// The mean time from an order's arrival to its answer, in ms.
    pub wait_ms: u64,
}

/// Why a run could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unfinished {
    /// The crate under test hit a `todo!()` or another panic: the message.
    Panicked(String),
    /// The breaker refused the settings.
    Refused(String),
    /// A call waited on something other than the simulation's clock.
    Waited,
}

impl fmt::Display for Unfinished {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unfinished::Panicked(message) => {
                let message = message.trim_start_matches("not yet implemented: ");
                write!(
                    f,
                    "your crate is not done yet: {message}\nThe tuning task runs on steps 1-8: finish them first (`just test` shows what is left)."
                )
            }
            Unfinished::Refused(why) => write!(f, "the breaker refused these settings: {why}"),
            Unfinished::Waited => write!(
                f,
                "a call waited on something other than the simulation's manual clock, so it could never finish"
            ),
        }
    }
}

/// The simulation's own time, and the breaker's manual clock moved with it.
#[derive(Clone)]
struct SimSleeper<'a> {
    now_ms: &'a Cell<u64>,
    inner: ManualSleeper,
    clock: ManualClock,
}

impl SimSleeper<'_> {
    /// Time passes for the simulation and the breaker alike.
    fn pass(&self, ms: u64) {
        self.now_ms.set(self.now_ms.get().saturating_add(ms));
        self.clock.advance(Duration::from_millis(ms));
    }
}

impl Sleeper for SimSleeper<'_> {
    type Sleep = <ManualSleeper as Sleeper>::Sleep;

    fn sleep(&self, delay: Duration) -> Self::Sleep {
        // The crate asks for the delay; the simulation counts it itself,
        // rounded up to the ms, so a backoff always costs what it says.
        let ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
        let ms = if Duration::from_millis(ms) < delay {
            ms + 1
        } else {
            ms
        };
        self.now_ms.set(self.now_ms.get().saturating_add(ms));
        self.inner.sleep(Duration::from_millis(ms))
    }

    fn time_source(&self) -> TimeSource {
        self.inner.time_source()
    }
}

/// Runs a future that never waits: the sleeper and the gateway answer at
/// once, on the manual clock.
fn finish<F: Future>(future: F) -> Option<F::Output> {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => Some(output),
        Poll::Pending => None,
    }
}

/// One run of `scenario` with `settings` on the crate under test.
///
/// # Errors
///
/// [`Unfinished`]: the crate panicked (an unfinished TODO), refused the
/// settings, or waited.
pub fn run(scenario: &Scenario, settings: &Settings) -> Result<Figures, Unfinished> {
    std::panic::catch_unwind(|| run_unguarded(scenario, settings)).unwrap_or_else(|panic| {
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "a panic".to_owned());
        Err(Unfinished::Panicked(message))
    })
}

fn run_unguarded(scenario: &Scenario, settings: &Settings) -> Result<Figures, Unfinished> {
    let clock = ManualClock::new();
    let breaker = RetryBreaker::new(
        settings.threshold,
        Duration::from_millis(settings.cooldown_ms),
        clock.clone(),
    )
    .map_err(|e| Unfinished::Refused(e.to_string()))?;
    let now_ms = Cell::new(0);
    let sleeper = SimSleeper {
        now_ms: &now_ms,
        inner: clock.sleeper(),
        clock: clock.clone(),
    };
    // The gateway's books: requests received, and the ledger of charges.
    let requests = Cell::new(0u64);
    let requests_while_down = Cell::new(0u64);
    let ledger = RefCell::new(vec![false; scenario.orders as usize]);
    let backoff = backoff::exponential(
        Duration::from_millis(settings.backoff_base_ms),
        Duration::from_millis(settings.backoff_cap_ms),
    );
    let cancel = CancellationToken::new();
    let mut waited_ms = 0u64;
    for order in 0..scenario.orders {
        let arrival = u64::from(order) * scenario.every_ms;
        // One worker: an order that arrives while the previous one is still
        // being paid waits for it, so slow answers pile up.
        if now_ms.get() < arrival {
            sleeper.pass(arrival - now_ms.get());
        }
        let charge = || {
            requests.set(requests.get() + 1);
            let at = now_ms.get();
            let paid = if scenario.down_at(at) {
                requests_while_down.set(requests_while_down.get() + 1);
                sleeper.pass(scenario.timeout_ms);
                false
            } else {
                sleeper.pass(scenario.answer_ms);
                !scenario.bad_spell(at)
            };
            if paid {
                ledger.borrow_mut()[order as usize] = true;
            }
            std::future::ready(if paid { Ok(()) } else { Err("gateway failed") })
        };
        let call = breaker.execute(
            settings.attempts,
            charge,
            |_: &&str| true,
            &backoff,
            &cancel,
            &sleeper,
        );
        // The answer is ignored on purpose: what counts is the ledger.
        finish(call).ok_or(Unfinished::Waited)?.ok();
        waited_ms += now_ms.get() - arrival;
    }
    let paid = ledger.borrow().iter().filter(|paid| **paid).count();
    Ok(Figures {
        requests: requests.get(),
        requests_while_down: requests_while_down.get(),
        paid: u32::try_from(paid).unwrap_or(u32::MAX),
        orders: scenario.orders,
        wait_ms: waited_ms / u64::from(scenario.orders.max(1)),
    })
}

/// One figure's part of the score: 1 within budget, falling linearly to 0
/// at 1.5 times the budget for a most (`at_most`), at half of it for a
/// fewest.
#[allow(
    clippy::cast_precision_loss,
    reason = "counts and ms of one run, far below f64's exact integers"
)]
pub fn part(figure: u64, budget: u64, at_most: bool) -> f64 {
    let (figure, budget) = (figure as f64, budget.max(1) as f64);
    let over = if at_most {
        figure / budget - 1.0
    } else {
        1.0 - figure / budget
    };
    (1.0 - over.max(0.0) * 2.0).clamp(0.0, 1.0)
}

/// Each figure's part and the score, the three parts' geometric mean: 1
/// only when all three are within budget, 0 when any is hopelessly out, and
/// continuous in between, so no single figure can be sacrificed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Score {
    pub requests: f64,
    pub paid: f64,
    pub wait: f64,
    pub total: f64,
}

pub fn score(figures: &Figures, budgets: &Budgets) -> Score {
    let requests = part(figures.requests, budgets.requests, true);
    let paid = part(u64::from(figures.paid), u64::from(budgets.paid), false);
    let wait = part(figures.wait_ms, budgets.wait_ms, true);
    Score {
        requests,
        paid,
        wait,
        total: (requests * paid * wait).cbrt(),
    }
}

/// What the tuning earned on a scenario: the share of the way from the
/// shipped settings' score to a perfect 1 that `score` covers, 0 when it is
/// no better, 1 at a perfect score. A scenario that the shipped settings
/// already score perfectly leaves no way to go: nothing to earn there.
pub fn gain(score: f64, shipped: f64) -> f64 {
    if shipped >= 1.0 {
        return 0.0;
    }
    ((score - shipped) / (1.0 - shipped)).clamp(0.0, 1.0)
}

/// The report `just tune` prints.
pub fn report(scenario: &Scenario, settings: &Settings, figures: &Figures) -> String {
    let score = score(figures, &scenario.budgets);
    let budgets = &scenario.budgets;
    format!(
        "Your gateway: {scenario}.\nYour settings: {settings}.\n\n  {:<34} {:>8} {:>14} {:>6}\n  {:<34} {:>8} {:>14} {:>6.2}\n  {:<34} {:>8} {:>14} {:>6.2}\n  {:<34} {:>8} {:>14} {:>6.2}\n\n  (of the requests, {} reached the gateway while it was down)\n\nScore: {:.2} (each part is 1 within budget, and 0 at 1.5 times an at-most budget or half an at-least one; the score is their geometric mean)\n{}",
        "figure",
        "measured",
        "budget",
        "part",
        "requests reaching the gateway",
        figures.requests,
        format!("at most {}", budgets.requests),
        score.requests,
        format!("orders paid (of {})", figures.orders),
        figures.paid,
        format!("at least {}", budgets.paid),
        score.paid,
        "mean wait per order (ms)",
        figures.wait_ms,
        format!("at most {}", budgets.wait_ms),
        score.wait,
        figures.requests_while_down,
        score.total,
        match shipped_score(scenario) {
            Some(shipped) => format!(
                "Gain: {:.2} (the shipped settings score {shipped:.2} here; the bonus counts how much of the way from there to 1 yours cover)\n",
                gain(score.total, shipped)
            ),
            None => String::new(),
        },
    )
}

/// The shipped settings' score on `scenario`, if the crate runs them.
pub fn shipped_score(scenario: &Scenario) -> Option<f64> {
    run(scenario, &Settings::SHIPPED)
        .ok()
        .map(|figures| score(&figures, &scenario.budgets).total)
}

/// FNV-1a, 64 bits, of a student id: the grader's seed (`Seed` in the
/// grader), so `just tune --student ID` shows the scenario the grade uses.
pub fn seed_of(student: &str) -> u64 {
    student.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
