//! A reference breaker on a manual clock, driven by hand, with every
//! admission, outcome and transition written down as chart items.
//!
//! This is the pictures' only contact with the breaker's API: it always
//! uses the reference solution, whatever crate the demo runs, because the
//! pictures show what the lab asks for.

use std::cell::RefCell;
use std::future::Future;
use std::pin::pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use retry_breaker_solution::{
    Clock, ManualClock, ManualSleeper, Permit, Phase, Recorded, RetryBreaker, State, Transition,
};
use tokio_util::sync::CancellationToken;

use retry_breaker_demo::chart::{
    Attempt, AttemptMark, BandPhase, Chart, Item, Lane, Marker, bands,
};

/// An attempt admitted and not reported yet.
pub struct Admitted<'a> {
    permit: Permit<'a, ManualClock>,
    who: &'static str,
    start: Duration,
    probe: bool,
}

/// One breaker's story, as it happens.
pub struct Run {
    clock: ManualClock,
    cooldown: Duration,
    breaker: RetryBreaker<ManualClock>,
    transitions: Arc<Mutex<Vec<Transition>>>,
    lanes: RefCell<Vec<Lane>>,
    requests: RefCell<Vec<Duration>>,
}

impl Run {
    /// A closed breaker with `threshold` and `cooldown`, at t = 0.
    pub fn new(threshold: u32, cooldown: Duration) -> Run {
        let clock = ManualClock::new();
        let transitions = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&transitions);
        let breaker = RetryBreaker::new(threshold, cooldown, clock.clone())
            .expect("the pictures use a valid threshold")
            .with_transition_hook(move |t| lock(&log).push(*t));
        Run {
            clock,
            cooldown,
            breaker,
            transitions,
            lanes: RefCell::new(Vec::new()),
            requests: RefCell::new(Vec::new()),
        }
    }

    /// The clock's reading.
    pub fn now(&self) -> Duration {
        self.clock.now()
    }

    /// Moves the clock forward.
    pub fn advance(&self, by: Duration) {
        self.clock.advance(by);
    }

    /// The breaker's state, as the lab prints it.
    pub fn state(&self) -> String {
        self.breaker.to_string()
    }

    /// Every transition so far: (from, to, when).
    pub fn transitions(&self) -> Vec<(BandPhase, BandPhase, Duration)> {
        lock(&self.transitions)
            .iter()
            .map(|t| (band(t.from), band(t.to), t.at))
            .collect()
    }

    /// `who` asks for a permit. A refusal is drawn at once, labelled with
    /// `label` and the breaker's reason.
    pub fn acquire(&self, who: &'static str, label: &str) -> Option<Admitted<'_>> {
        let start = self.now();
        match self.breaker.try_acquire() {
            Ok(permit) => {
                // Only an admission that made the circuit half-open is the
                // probe; in HALF-OPEN every other attempt is refused.
                let probe = matches!(self.breaker.state(), State::HalfOpen { .. });
                self.requests.borrow_mut().push(start);
                // The lane exists from the admission on, so lanes keep the
                // order in which callers were admitted.
                self.lane(who);
                Some(Admitted {
                    permit,
                    who,
                    start,
                    probe,
                })
            }
            Err(rejection) => {
                let detail = format!("{who} at {}: refused, {rejection}", time(start));
                self.push(
                    who,
                    attempt(start, start, AttemptMark::Refused, false, label, detail),
                );
                None
            }
        }
    }

    /// Reports an admitted attempt; the mark says whether it counted.
    pub fn report(&self, admitted: Admitted<'_>, ok: bool, label: &str) {
        let Admitted {
            permit,
            who,
            start,
            probe,
        } = admitted;
        let recorded = if ok {
            permit.success()
        } else {
            permit.failure()
        };
        // `Recorded` is non-exhaustive: whatever is not counted draws as stale.
        let mark = match (recorded, ok) {
            (Recorded::Counted, true) => AttemptMark::Success,
            (Recorded::Counted, false) => AttemptMark::Failure,
            _ => AttemptMark::Stale,
        };
        let verdict = if ok { "success" } else { "failure" };
        let detail = format!(
            "{who}: admitted at {}, reports {verdict} at {}: {recorded:?}; now {}",
            time(start),
            time(self.now()),
            self.state()
        );
        let label = label.replace("{state}", &self.state());
        self.push(who, attempt(start, self.now(), mark, probe, &label, detail));
    }

    /// One `execute` call by `who` with `attempts` attempts, whose task
    /// answers `outcomes` in turn (`true`: success), every failure being
    /// retryable, with a constant `backoff`. `label` goes beside the call's
    /// last mark; `{state}` in it becomes the breaker's state afterwards.
    pub fn execute(
        &self,
        who: &'static str,
        attempts: u32,
        outcomes: &[bool],
        backoff: Duration,
        label: &str,
    ) {
        // Filled in by the task when an attempt starts, and by the backoff
        // and the end of the call once the breaker has its outcome.
        let started: RefCell<Vec<(Duration, bool, bool)>> = RefCell::new(Vec::new());
        let after: RefCell<Vec<String>> = RefCell::new(Vec::new());
        let task = || {
            let n = started.borrow().len();
            let ok = outcomes.get(n).copied().unwrap_or(false);
            let probe = matches!(self.breaker.state(), State::HalfOpen { .. });
            started.borrow_mut().push((self.now(), ok, probe));
            self.requests.borrow_mut().push(self.now());
            std::future::ready(if ok { Ok(()) } else { Err(()) })
        };
        let pause = |_failed: u32| {
            after.borrow_mut().push(self.state());
            backoff
        };
        let sleeper = ManualSleeper::new(self.clock.clone());
        let result = finish(self.breaker.execute(
            attempts,
            task,
            |_| true,
            pause,
            &CancellationToken::new(),
            &sleeper,
        ));
        let state = self.state();
        let started = started.into_inner();
        let mut after = after.into_inner();
        if after.len() < started.len() {
            after.push(state.clone());
        }
        // With retryable failures only and no cancellation, a call that
        // failed before using up its attempts was refused by the breaker.
        let refused = result.is_err() && (started.len() as u32) < attempts;
        let mut end_of_previous = None;
        for (n, ((start, ok, probe), state_after)) in started.iter().zip(&after).enumerate() {
            if let Some(end) = end_of_previous {
                self.push(
                    who,
                    Item::Sleep {
                        from: end,
                        to: *start,
                    },
                );
            }
            let last = n + 1 == started.len() && !refused;
            let verdict = if *ok { "succeeds" } else { "fails" };
            let detail = format!(
                "{who}, attempt {} at {}: {verdict}; then {state_after}",
                n + 1,
                time(*start)
            );
            let mark = if *ok {
                AttemptMark::Success
            } else {
                AttemptMark::Failure
            };
            let text = if last {
                label.replace("{state}", &state)
            } else {
                String::new()
            };
            self.push(who, attempt(*start, *start, mark, *probe, &text, detail));
            end_of_previous = Some(*start);
        }
        if refused {
            let at = self.now();
            if let Some(end) = end_of_previous {
                self.push(who, Item::Sleep { from: end, to: at });
            }
            let detail = format!(
                "{who}, attempt {} at {}: refused; {state}",
                started.len() + 1,
                time(at)
            );
            let text = label.replace("{state}", &state);
            self.push(
                who,
                attempt(at, at, AttemptMark::Refused, false, &text, detail),
            );
        }
    }

    fn push(&self, who: &str, item: Item) {
        let index = self.lane(who);
        self.lanes.borrow_mut()[index].items.push(item);
    }

    /// The index of `who`'s lane, added at the bottom if it is new.
    fn lane(&self, who: &str) -> usize {
        let mut lanes = self.lanes.borrow_mut();
        match lanes.iter().position(|lane| lane.name == who) {
            Some(index) => index,
            None => {
                lanes.push(Lane {
                    name: who.to_owned(),
                    items: Vec::new(),
                });
                lanes.len() - 1
            }
        }
    }

    /// The story so far as a chart ending at `span`, with a dashed line
    /// wherever a cooldown ran out.
    pub fn chart(self, title: &str, subtitle: &str, span: Duration) -> Chart {
        let transitions = self.transitions();
        let changes: Vec<(Duration, BandPhase)> =
            transitions.iter().map(|&(_, to, at)| (at, to)).collect();
        let markers = transitions
            .iter()
            .filter(|&&(_, to, _)| to == BandPhase::Open)
            .map(|&(_, _, at)| Marker {
                at: at + self.cooldown,
                label: format!("cooldown over at {}", time(at + self.cooldown)),
            })
            .filter(|marker| marker.at <= span)
            .collect();
        Chart {
            title: title.to_owned(),
            subtitle: subtitle.to_owned(),
            span,
            axis: "time on the breaker's manual clock".to_owned(),
            bands: bands(BandPhase::Closed, &changes, span),
            requests_lane: "dependency".to_owned(),
            requests: self.requests.into_inner(),
            markers,
            lanes: self.lanes.into_inner(),
        }
    }
}

fn attempt(
    start: Duration,
    end: Duration,
    outcome: AttemptMark,
    probe: bool,
    label: &str,
    detail: String,
) -> Item {
    Item::Attempt(Attempt {
        start,
        end,
        outcome,
        probe,
        label: (!label.is_empty()).then(|| label.to_owned()),
        detail,
    })
}

fn time(at: Duration) -> String {
    retry_breaker_demo::chart::svg::time(at)
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs a future that has nothing to wait for: on a manual clock and a
/// manual sleeper, every `execute` call finishes on its first poll.
fn finish<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("a call on the manual clock waited for something"),
    }
}

/// The band of a solution phase. The chart converts the phases of the crate
/// the demo runs (`kit`), which is the starter under `--features starter`;
/// the pictures always run the solution, and this binary cannot implement
/// `From` for the library's `BandPhase` (both are foreign here), so it maps
/// them itself.
fn band(phase: Phase) -> BandPhase {
    match phase {
        Phase::Closed => BandPhase::Closed,
        Phase::Open => BandPhase::Open,
        Phase::HalfOpen => BandPhase::HalfOpen,
        // As in the chart: a phase with no colour is the neutral band.
        _ => BandPhase::NoBreaker,
    }
}
