//! A breaker on a manual clock, with a sleeper on the same clock and a log
//! of every transition.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use retry_breaker::{
    Builder, Clock, Event, ManualClock, ManualSleeper, Permit, RetryBreaker, Transition,
};

use super::timeline::Timeline;
use super::watchdog::Alarm;

/// Milliseconds, the unit every scenario here is written in.
pub fn ms(n: u64) -> Duration {
    super::panics::install();
    Duration::from_millis(n)
}

/// A breaker that opens after `threshold` consecutive failures for
/// `cooldown`, with a bulkhead that lets `limit` attempts out at once (H1).
pub fn with_room_for(limit: u32, threshold: u32, cooldown: Duration) -> RetryBreaker<ManualClock> {
    RetryBreaker::builder()
        .threshold(threshold)
        .cooldown(cooldown)
        .max_in_flight(limit)
        .build(ManualClock::new())
        .expect("a valid configuration")
}

pub struct Lab {
    pub clock: ManualClock,
    pub sleeper: ManualSleeper,
    pub breaker: RetryBreaker<ManualClock>,
    pub timeline: Timeline,
    transitions: Arc<Mutex<Vec<Transition>>>,
    /// The events told so far, for a lab made by [`Lab::telling`].
    told: Arc<Mutex<Vec<Event>>>,
    /// Stops the suite if the test using this lab deadlocks.
    _alarm: Alarm,
    /// Shows the end of the timeline if the test fails while the lab lives.
    _shown: ShownOnFailure,
}

/// The end of a lab's timeline, printed when the lab is dropped by a failing
/// test's unwinding: the transitions (and whatever the test wrote down) that
/// led to the failure, stamped with the manual clock, under the failure's
/// message. A panic the test caught on purpose drops no lab, and nothing is
/// printed inside [`quietly`](super::panics::quietly), where a property test
/// shrinks its case.
struct ShownOnFailure(Timeline);

impl Drop for ShownOnFailure {
    fn drop(&mut self) {
        if !std::thread::panicking() || super::panics::is_quiet() {
            return;
        }
        if let Some(note) = self.0.failure_note() {
            eprintln!("{note}");
        }
    }
}

impl Lab {
    /// A fresh breaker at t = 0.
    pub fn new(threshold: u32, cooldown: Duration) -> Lab {
        let clock = ManualClock::new();
        let breaker =
            RetryBreaker::new(threshold, cooldown, clock.clone()).expect("a valid configuration");
        Lab::around(breaker, clock)
    }

    /// A breaker opened at t = 0 whose cooldown is over at the current time,
    /// so the next attempt is the probe.
    pub fn cooled(threshold: u32, cooldown: Duration) -> Lab {
        let lab = Lab::new(threshold, cooldown);
        lab.trip();
        lab.advance(cooldown);
        lab
    }

    /// A fresh breaker at t = 0 with the advanced track's settings (steps
    /// 10-12).
    pub fn built(builder: Builder) -> Lab {
        let clock = ManualClock::new();
        let breaker = builder.build(clock.clone()).expect("a valid configuration");
        Lab::around(breaker, clock)
    }

    /// A fresh breaker at t = 0 with `builder`'s settings that tells every
    /// event to the lab's log (O1), read with [`told`](Lab::told).
    pub fn telling(builder: Builder) -> Lab {
        Lab::telling_to(builder, |_| {})
    }

    /// [`telling`](Lab::telling), with a sink that does `also` with each
    /// event once it is logged (`also` may panic).
    pub fn telling_to(builder: Builder, also: impl Fn(&Event) + Send + Sync + 'static) -> Lab {
        let clock = ManualClock::new();
        let told = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&told);
        let breaker = builder
            .build(clock.clone())
            .expect("a valid configuration")
            .with_event_sink(move |event| {
                log.lock().unwrap().push(*event);
                also(event);
            });
        Lab {
            told,
            ..Lab::around(breaker, clock)
        }
    }

    /// The events told since the last look, oldest first.
    pub fn told(&self) -> Vec<Event> {
        let told = std::mem::take(&mut *self.told.lock().unwrap());
        told.into_iter().filter(is_decision).collect()
    }

    /// [`told`](Lab::told), one short line per event (see [`line`]).
    pub fn trace(&self) -> Vec<String> {
        self.told().iter().map(line).collect()
    }

    fn around(breaker: RetryBreaker<ManualClock>, clock: ManualClock) -> Lab {
        super::panics::install();
        let timeline = Timeline::new(clock.clone());
        let transitions = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&transitions);
        let traced = timeline.clone();
        let shown = ShownOnFailure(timeline.clone());
        let breaker = breaker.with_transition_hook(move |t| {
            log.lock().unwrap().push(*t);
            traced.transition(t);
        });
        Lab {
            sleeper: ManualSleeper::new(clock.clone()),
            clock,
            breaker,
            timeline,
            transitions,
            told: Arc::default(),
            _alarm: Alarm::set(Duration::from_secs(10)),
            _shown: shown,
        }
    }

    /// Moves the clock forward.
    pub fn advance(&self, by: Duration) {
        self.clock.advance(by);
    }

    /// Every transition so far.
    pub fn transitions(&self) -> Vec<Transition> {
        self.transitions.lock().unwrap().clone()
    }

    /// Admits the probe of a circuit whose cooldown is over (the shared [`probe`](fn@probe)).
    pub fn probe(&self) -> Permit<'_, ManualClock> {
        probe(&self.breaker)
    }

    /// Opens the circuit at the current time (the shared [`trip`](fn@trip)).
    pub fn trip(&self) {
        trip(&self.breaker);
    }
}

/// Opens `breaker`'s circuit with `threshold` reported failures, at the
/// current time. Every fixture's `trip` is this one, whatever its clock.
pub fn trip<C: Clock>(breaker: &RetryBreaker<C>) {
    for _ in 0..breaker.threshold() {
        breaker
            .try_acquire()
            .expect("a closed circuit admits every attempt")
            .failure();
    }
}

/// Admits the probe of `breaker`, whose cooldown is over. Steps after 3
/// need one, so a missing probe names the TODO that admits it.
pub fn probe<C: Clock>(breaker: &RetryBreaker<C>) -> Permit<'_, C> {
    breaker
        .try_acquire()
        .expect("TODO(2): the first attempt at or after the deadline must be admitted as the probe")
}

/// An event as a scenario writes it: `admitted g0`, `admitted g2 probe`,
/// `failure g0 counted`, `success g0 stale`, `released g0`,
/// `CLOSED -> OPEN g1`, `rejected Open { remaining: 10ms }`, `attempt 1`,
/// `backoff 1 10ms`, `gave up 3 NoAttemptsLeft`, `cancelled 0`.
pub fn line(event: &Event) -> String {
    match event {
        Event::Admitted { generation, probe } => {
            format!(
                "admitted {generation}{}",
                if *probe { " probe" } else { "" }
            )
        }
        Event::Rejected(rejection) => format!("rejected {rejection:?}"),
        Event::Recorded {
            generation,
            verdict,
            recorded,
        } => format!(
            "{} {generation} {}",
            format!("{verdict:?}").to_lowercase(),
            format!("{recorded:?}").to_lowercase()
        ),
        Event::Released { generation } => format!("released {generation}"),
        Event::Transition(t) => format!("{} -> {} {}", t.from, t.to, t.generation),
        Event::AttemptStarted { attempt } => format!("attempt {attempt}"),
        Event::Backoff { attempt, delay } => format!("backoff {attempt} {delay:?}"),
        Event::GaveUp { attempt, reason } => format!("gave up {attempt} {reason:?}"),
        Event::Cancelled { attempts_made } => format!("cancelled {attempts_made}"),
        other => format!("{other:?}"),
    }
}

/// Whether `event` is one of the decisions the lab's rules speak of (O1).
/// The solution also times attempts and calls for its production adapters
/// (O9, tested in the solution's own suite); the lab's traces leave those
/// timings out, so that they read the same for the student's crate.
pub fn is_decision(event: &Event) -> bool {
    !matches!(event.name(), "attempt_ended" | "call_ended")
}
