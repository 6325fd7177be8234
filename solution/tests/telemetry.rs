//! The event stream and its two adapters tell the same story (O6-O8): a
//! registry of three breakers goes through trips, refusals, stale outcomes,
//! a probe, an operator's isolation and a call that gives up, and the events
//! its sink heard, the `tracing` events and the `metrics` counters must
//! agree, key by key and kind by kind.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use metrics::{
    Counter, CounterFn, Gauge, GaugeFn, Histogram, HistogramFn, Key, KeyName, Metadata, Recorder,
    SharedString, Unit,
};
use retry_breaker_solution::{
    Event, ExecuteError, GaveUp, Generation, ManualClock, ManualSleeper, Phase, Recorded, Registry,
    Rejected, RetryBreaker, RetryPolicy, Transition, Verdict, telemetry,
};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Level, Metadata as TraceMetadata, Subscriber};
use tracing_core::span::Current;

type Told = Arc<Mutex<Vec<(String, Event)>>>;

/// Name-value pairs: a tracing event's fields, or a metric's labels.
type Pairs = Vec<(&'static str, &'static str)>;

/// A metric's name and its labels.
type Series = (String, Vec<(String, String)>);

#[test]
fn o6_o7_o8_the_sink_the_traces_and_the_metrics_agree_key_by_key() {
    let told: Told = Arc::default();
    let log = Arc::clone(&told);
    let clock = ManualClock::new();
    let registry: Registry<String, ManualClock> = Registry::new(
        RetryBreaker::builder()
            .threshold(2)
            .cooldown(Duration::from_millis(10)),
        clock.clone(),
    )
    .expect("valid settings")
    .with_event_sink(move |key: &String, event| {
        log.lock().unwrap().push((key.clone(), *event));
        telemetry::trace(key, event);
        telemetry::meter(key, event);
    });

    let spy = Spy::default();
    let meter = Meter::default();
    tracing::subscriber::with_default(spy.clone(), || {
        metrics::with_local_recorder(&meter, || story(&registry, &clock));
    });

    let told = told.lock().unwrap().clone();
    assert!(told.len() > 20, "the story tells a lot: {told:?}");

    // Every event the sink heard, as (breaker, event.name), counted.
    let mut heard: BTreeMap<(String, String), u64> = BTreeMap::new();
    for (key, event) in &told {
        *heard
            .entry((key.clone(), event.name().to_owned()))
            .or_default() += 1;
    }
    let mut traced: BTreeMap<(String, String), u64> = BTreeMap::new();
    for fields in spy.events.lock().unwrap().iter() {
        *traced
            .entry((fields["breaker"].clone(), fields["event.name"].clone()))
            .or_default() += 1;
    }
    assert_eq!(
        traced, heard,
        "O7: one tracing event per event, with its breaker and name"
    );
    let mut metered: BTreeMap<(String, String), u64> = BTreeMap::new();
    for (labels, count) in meter.counters(telemetry::EVENTS) {
        *metered
            .entry((labels["breaker"].clone(), labels["event.name"].clone()))
            .or_default() += count;
    }
    assert_eq!(
        metered, heard,
        "O8: the events counter counts every event, by breaker and name"
    );

    // The fence at work: one stale outcome, on the database's breaker, in
    // all three.
    let stale_told = told
        .iter()
        .filter(|(_, event)| {
            matches!(event, Event::Recorded { recorded, .. } if *recorded == Recorded::Stale)
        })
        .map(|(key, _)| key.as_str())
        .collect::<Vec<_>>();
    assert_eq!(
        stale_told,
        ["database", "database"],
        "B6, C3: the slow success and the one out during the isolation came back stale"
    );
    let stale_traced = spy
        .events
        .lock()
        .unwrap()
        .iter()
        .filter(|fields| fields.get("stale").is_some_and(|v| v == "true"))
        .map(|fields| fields["breaker"].clone())
        .collect::<Vec<_>>();
    assert_eq!(
        stale_traced,
        ["database", "database"],
        "O7: the trace marks it stale=\"true\""
    );
    let stale_metered: u64 = meter
        .counters(telemetry::EVENTS)
        .into_iter()
        .filter(|(labels, _)| labels.get("stale").is_some_and(|v| v == "true"))
        .map(|(labels, count)| {
            assert_eq!(labels["breaker"], "database");
            count
        })
        .sum();
    assert_eq!(
        stale_metered, 2,
        "O8: the counter labels them stale=\"true\""
    );

    // The state gauge follows each breaker's last transition: search OPEN,
    // database isolated after its probe closed it, payments OPEN.
    assert_eq!(
        meter.gauges(telemetry::STATE),
        BTreeMap::from([
            ("database".to_owned(), 2.0),
            ("payments".to_owned(), 2.0),
            ("search".to_owned(), 2.0),
        ]),
        "O8: the state gauge is each breaker's last transition"
    );
    // Transitions are the only INFO events, and a call that gave up the
    // only WARN one.
    let levels = spy.levels.lock().unwrap().clone();
    assert_eq!(
        levels.get(&Level::WARN).copied().unwrap_or(0),
        heard
            .iter()
            .filter(|((_, name), _)| name == "gave_up")
            .map(|(_, n)| n)
            .sum::<u64>()
    );
    assert_eq!(meter.histogram_count(telemetry::BACKOFF), 1, "one backoff");
}

#[test]
fn o7_o8_each_kind_of_event_has_its_level_its_fields_and_its_labels() {
    let g = Generation::default();
    let ms = Duration::from_millis;
    let to = |from, to| Event::Transition(Transition::new(from, to, ms(5), g));
    // Each event, its level, its fields beyond `breaker` and `event.name`,
    // and the labels of its count beyond those two.
    let cases: Vec<(Event, Level, Pairs, Pairs)> = vec![
        (
            Event::Admitted {
                generation: g,
                probe: true,
            },
            Level::TRACE,
            vec![("generation", "0"), ("probe", "true")],
            vec![],
        ),
        (
            Event::Rejected(Rejected::Open {
                remaining: ms(1500),
            }),
            Level::DEBUG,
            vec![("reason", "open"), ("remaining_ms", "1500.0")],
            vec![("reason", "open")],
        ),
        (
            Event::Rejected(Rejected::ProbeInFlight),
            Level::DEBUG,
            vec![("reason", "probe_in_flight"), ("remaining_ms", "0.0")],
            vec![("reason", "probe_in_flight")],
        ),
        (
            Event::Rejected(Rejected::Full { limit: 3 }),
            Level::DEBUG,
            vec![("reason", "full"), ("remaining_ms", "0.0")],
            vec![("reason", "full")],
        ),
        (
            Event::Recorded {
                generation: g,
                verdict: Verdict::Failure,
                recorded: Recorded::Counted,
            },
            Level::DEBUG,
            vec![
                ("generation", "0"),
                ("stale", "false"),
                ("verdict", "failure"),
            ],
            vec![("stale", "false"), ("verdict", "failure")],
        ),
        (
            Event::Recorded {
                generation: g,
                verdict: Verdict::Success,
                recorded: Recorded::Stale,
            },
            Level::DEBUG,
            vec![
                ("generation", "0"),
                ("stale", "true"),
                ("verdict", "success"),
            ],
            vec![("stale", "true"), ("verdict", "success")],
        ),
        (
            Event::Recorded {
                generation: g,
                verdict: Verdict::Ignored,
                recorded: Recorded::Counted,
            },
            Level::DEBUG,
            vec![
                ("generation", "0"),
                ("stale", "false"),
                ("verdict", "ignored"),
            ],
            vec![("stale", "false"), ("verdict", "ignored")],
        ),
        (
            Event::Released { generation: g },
            Level::DEBUG,
            vec![("generation", "0")],
            vec![],
        ),
        (
            to(Phase::Closed, Phase::Open),
            Level::INFO,
            vec![("from", "closed"), ("generation", "0"), ("to", "open")],
            vec![("to", "open")],
        ),
        (
            to(Phase::Open, Phase::HalfOpen),
            Level::INFO,
            vec![("from", "open"), ("generation", "0"), ("to", "half_open")],
            vec![("to", "half_open")],
        ),
        (
            to(Phase::HalfOpen, Phase::Closed),
            Level::INFO,
            vec![("from", "half_open"), ("generation", "0"), ("to", "closed")],
            vec![("to", "closed")],
        ),
        (
            Event::AttemptStarted { attempt: 3 },
            Level::DEBUG,
            vec![("attempt", "3"), ("http.request.resend_count", "2")],
            vec![],
        ),
        (
            Event::Backoff {
                attempt: 2,
                delay: ms(250),
            },
            Level::DEBUG,
            vec![("attempt", "2"), ("delay_ms", "250.0")],
            vec![],
        ),
        (
            Event::GaveUp {
                attempt: 1,
                reason: GaveUp::NotRetryable,
            },
            Level::WARN,
            vec![("attempt", "1"), ("reason", "not_retryable")],
            vec![("reason", "not_retryable")],
        ),
        (
            Event::GaveUp {
                attempt: 4,
                reason: GaveUp::NoAttemptsLeft,
            },
            Level::WARN,
            vec![("attempt", "4"), ("reason", "no_attempts_left")],
            vec![("reason", "no_attempts_left")],
        ),
        (
            Event::GaveUp {
                attempt: 2,
                reason: GaveUp::NoCopyLeft,
            },
            Level::WARN,
            vec![("attempt", "2"), ("reason", "no_copy_left")],
            vec![("reason", "no_copy_left")],
        ),
        (
            Event::GaveUp {
                attempt: 2,
                reason: GaveUp::RetryBudgetSpent,
            },
            Level::WARN,
            vec![("attempt", "2"), ("reason", "retry_budget_spent")],
            vec![("reason", "retry_budget_spent")],
        ),
        (
            Event::Cancelled { attempts_made: 2 },
            Level::DEBUG,
            vec![("attempts_made", "2")],
            vec![],
        ),
        (
            Event::AttemptEnded {
                attempt: 2,
                elapsed: ms(1500),
                verdict: Verdict::Failure,
            },
            Level::DEBUG,
            vec![
                ("attempt", "2"),
                ("elapsed_ms", "1500.0"),
                ("verdict", "failure"),
            ],
            vec![("verdict", "failure")],
        ),
        (
            Event::CallEnded {
                attempts: 3,
                elapsed: ms(250),
                ok: true,
            },
            Level::DEBUG,
            vec![("attempts", "3"), ("elapsed_ms", "250.0"), ("ok", "true")],
            vec![("outcome", "ok")],
        ),
        (
            Event::CallEnded {
                attempts: 0,
                elapsed: ms(0),
                ok: false,
            },
            Level::DEBUG,
            vec![("attempts", "0"), ("elapsed_ms", "0.0"), ("ok", "false")],
            vec![("outcome", "error")],
        ),
    ];
    for (event, level, fields, labels) in cases {
        let spy = Spy::default();
        let meter = Meter::default();
        tracing::subscriber::with_default(spy.clone(), || {
            metrics::with_local_recorder(&meter, || {
                telemetry::trace(&"payments", &event);
                telemetry::meter(&"payments", &event);
            });
        });
        let mut expected: BTreeMap<String, String> = fields
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        expected.insert("breaker".into(), "payments".into());
        expected.insert("event.name".into(), event.name().into());
        assert_eq!(
            *spy.events.lock().unwrap(),
            [expected],
            "O7: the fields of {event:?}"
        );
        assert_eq!(
            *spy.levels.lock().unwrap(),
            BTreeMap::from([(level, 1)]),
            "O7: the level of {event:?}"
        );
        let mut expected: BTreeMap<String, String> = labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        expected.insert("breaker".into(), "payments".into());
        expected.insert("event.name".into(), event.name().into());
        assert_eq!(
            meter.counters(telemetry::EVENTS),
            [(expected, 1)],
            "O8: the labels of {event:?}"
        );
    }
}

#[test]
fn o8_the_state_gauge_and_the_backoff_histogram_carry_their_values() {
    let meter = Meter::default();
    let g = Generation::default();
    let at = |from, to| Event::Transition(Transition::new(from, to, Duration::ZERO, g));
    metrics::with_local_recorder(&meter, || {
        for (breaker, event) in [
            ("a", at(Phase::Closed, Phase::Open)),
            ("b", at(Phase::Closed, Phase::Open)),
            ("b", at(Phase::Open, Phase::HalfOpen)),
            ("c", at(Phase::HalfOpen, Phase::Closed)),
        ] {
            telemetry::meter(&breaker, &event);
        }
        telemetry::meter(
            &"a",
            &Event::Backoff {
                attempt: 1,
                delay: Duration::from_millis(250),
            },
        );
    });
    assert_eq!(
        meter.gauges(telemetry::STATE),
        BTreeMap::from([("a".into(), 2.0), ("b".into(), 1.0), ("c".into(), 0.0)]),
        "O8: 0 CLOSED, 1 HALF-OPEN, 2 OPEN"
    );
    assert_eq!(
        meter.histogram_values(telemetry::BACKOFF),
        [("a".to_owned(), 0.25)],
        "O8: the delay, in seconds"
    );
}

#[test]
fn o7_a_call_is_a_span_and_each_attempt_a_child_span_holding_its_start() {
    let breaker = RetryBreaker::new(5, Duration::from_secs(30), ManualClock::new())
        .expect("valid settings")
        .with_event_sink(|event| telemetry::trace(&"payments", event));
    let sleeper = ManualSleeper::new(breaker.clock().clone());
    let policy = RetryPolicy::constant(Duration::from_millis(1))
        .attempts(3)
        .without_jitter();
    let mut outcomes = vec![Ok(7), Err("timeout"), Err("timeout")];
    let spy = Spy::default();
    let result = tracing::subscriber::with_default(spy.clone(), || {
        let call = policy.run(&breaker, &sleeper, || {
            let outcome = outcomes.pop().expect("three attempts at most");
            async move { outcome }
        });
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime")
            .block_on(call)
    });
    assert_eq!(result.ok(), Some(7), "the third attempt succeeds");
    let events = spy.events.lock().unwrap().clone();
    let told: Vec<(String, String)> = events
        .iter()
        .map(|fields| {
            let inside = fields
                .get("in")
                .map_or_else(String::new, |id| spy.path(id.parse().unwrap()));
            (fields["event.name"].clone(), inside)
        })
        .collect();
    let call = "retry_breaker.call()";
    let attempt = |n: u32, verdict: &str| {
        format!(
            "{call} > retry_breaker.attempt(attempt={n},generation=0,\
             http.request.resend_count={},stale=false,verdict={verdict})",
            n - 1
        )
    };
    let expected: Vec<(String, String)> = [
        ("admitted", call.to_owned()),
        ("attempt_started", attempt(1, "failure")),
        ("recorded", attempt(1, "failure")),
        ("attempt_ended", attempt(1, "failure")),
        ("backoff", call.to_owned()),
        ("admitted", call.to_owned()),
        ("attempt_started", attempt(2, "failure")),
        ("recorded", attempt(2, "failure")),
        ("attempt_ended", attempt(2, "failure")),
        ("backoff", call.to_owned()),
        ("admitted", call.to_owned()),
        ("attempt_started", attempt(3, "success")),
        ("recorded", attempt(3, "success")),
        ("attempt_ended", attempt(3, "success")),
        ("call_ended", call.to_owned()),
    ]
    .into_iter()
    .map(|(name, inside)| (name.to_owned(), inside))
    .collect();
    assert_eq!(
        told, expected,
        "O7: a call is one span, each attempt a child span holding its start, its run and its \
         outcome, which it records: the generation, the verdict, whether it was stale"
    );
}

#[test]
fn o7_an_attempt_s_span_says_when_its_outcome_came_back_stale() {
    let breaker = RetryBreaker::new(5, Duration::from_secs(30), ManualClock::new())
        .expect("valid settings")
        .with_event_sink(|event| telemetry::trace(&"payments", event));
    let sleeper = ManualSleeper::new(breaker.clock().clone());
    let policy = RetryPolicy::constant(Duration::from_millis(1)).attempts(1);
    let spy = Spy::default();
    let result = tracing::subscriber::with_default(spy.clone(), || {
        let call = policy.run(&breaker, &sleeper, || {
            // An operator isolates the breaker while the attempt runs (C1):
            // its success, admitted in generation 0, comes back stale.
            breaker.isolate();
            async { Ok::<u32, &str>(7) }
        });
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime")
            .block_on(call)
    });
    assert_eq!(
        result.ok(),
        Some(7),
        "a stale success is still the caller's"
    );
    let spans = spy.spans.lock().unwrap().clone();
    let attempt = spans
        .iter()
        .find(|span| span.name == "retry_breaker.attempt")
        .expect("an attempt span");
    let recorded: Vec<(&str, &str)> = ["generation", "verdict", "stale"]
        .into_iter()
        .map(|field| (field, attempt.fields.get(field).map_or("", String::as_str)))
        .collect();
    assert_eq!(
        recorded,
        [
            ("generation", "0"),
            ("verdict", "success"),
            ("stale", "true")
        ],
        "O7: the attempt's span shows its outcome fenced off by the isolation's generation"
    );
}

/// Three keys: `search` trips and refuses; `database` trips, hears a slow
/// success come back stale, then closes on a good probe; `payments` gives
/// up a call after a backoff and trips.
fn story(registry: &Registry<String, ManualClock>, clock: &ManualClock) {
    let search = registry.breaker("search");
    for _ in 0..2 {
        search.try_acquire().expect("CLOSED admits").failure();
    }
    assert!(search.try_acquire().is_err());
    assert!(search.try_acquire().is_err());

    let database = registry.breaker("database");
    let slow = database.try_acquire().expect("CLOSED admits");
    for _ in 0..2 {
        database.try_acquire().expect("CLOSED admits").failure();
    }
    let _stale = slow.success();
    clock.advance(Duration::from_millis(10));
    database.try_acquire().expect("the probe").success();
    drop(database.try_acquire().expect("CLOSED admits"));
    // An operator takes the database out (C1) while one attempt is out: its
    // success comes back stale (C3) and cannot close the isolated circuit.
    let before = database.try_acquire().expect("CLOSED admits");
    database.isolate();
    let _stale = before.success();
    assert!(database.try_acquire().is_err());

    let payments = registry.breaker("payments");
    let sleeper = ManualSleeper::new(clock.clone());
    let policy = RetryPolicy::constant(Duration::from_millis(1))
        .attempts(2)
        .without_jitter();
    let call = policy.run(&payments, &sleeper, || async { Err::<u32, _>("down") });
    let result = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime")
        .block_on(call);
    assert!(matches!(result, Err(ExecuteError::Task { attempt: 2, .. })));
}

/// A `tracing` subscriber that keeps every event's fields as text, with the
/// span it happened in as the field `in`, and every span with its parent.
#[derive(Clone, Default)]
struct Spy {
    events: Arc<Mutex<Vec<BTreeMap<String, String>>>>,
    levels: Arc<Mutex<BTreeMap<Level, u64>>>,
    /// Each span's name, fields and parent; a span's id is its place + 1.
    spans: Arc<Mutex<Vec<Span>>>,
    /// The spans entered, innermost last.
    entered: Arc<Mutex<Vec<u64>>>,
}

#[derive(Debug, Clone)]
struct Span {
    name: String,
    metadata: &'static TraceMetadata<'static>,
    fields: BTreeMap<String, String>,
    parent: Option<u64>,
}

impl Spy {
    /// The span `id` as `name(field=value,...)`, with its ancestors before
    /// it: `retry_breaker.call() > retry_breaker.attempt(attempt=1,...)`.
    fn path(&self, id: u64) -> String {
        let spans = self.spans.lock().unwrap();
        let mut path = Vec::new();
        let mut at = Some(id);
        while let Some(id) = at {
            let span = &spans[usize::try_from(id - 1).unwrap()];
            let fields: Vec<String> = span
                .fields
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            path.push(format!("{}({})", span.name, fields.join(",")));
            at = span.parent;
        }
        path.reverse();
        path.join(" > ")
    }
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl Subscriber for Spy {
    fn enabled(&self, _: &TraceMetadata<'_>) -> bool {
        true
    }

    fn new_span(&self, attributes: &Attributes<'_>) -> Id {
        let mut fields = BTreeMap::new();
        attributes.record(&mut Fields(&mut fields));
        let parent = match attributes.parent() {
            Some(parent) => Some(parent.into_u64()),
            None if attributes.is_contextual() => self.entered.lock().unwrap().last().copied(),
            None => None,
        };
        let mut spans = self.spans.lock().unwrap();
        spans.push(Span {
            name: attributes.metadata().name().to_owned(),
            metadata: attributes.metadata(),
            fields,
            parent,
        });
        Id::from_u64(u64::try_from(spans.len()).unwrap())
    }

    fn record(&self, id: &Id, values: &Record<'_>) {
        let mut spans = self.spans.lock().unwrap();
        let span = &mut spans[usize::try_from(id.into_u64() - 1).unwrap()];
        values.record(&mut Fields(&mut span.fields));
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        if let Some(&inside) = self.entered.lock().unwrap().last() {
            fields.insert("in".to_owned(), inside.to_string());
        }
        self.events.lock().unwrap().push(fields);
        *self
            .levels
            .lock()
            .unwrap()
            .entry(*event.metadata().level())
            .or_default() += 1;
    }

    fn current_span(&self) -> Current {
        let entered = self.entered.lock().unwrap();
        let spans = self.spans.lock().unwrap();
        match entered.last() {
            Some(&id) => Current::new(
                Id::from_u64(id),
                spans[usize::try_from(id - 1).unwrap()].metadata,
            ),
            None => Current::none(),
        }
    }

    fn enter(&self, id: &Id) {
        self.entered.lock().unwrap().push(id.into_u64());
    }

    fn exit(&self, id: &Id) {
        let mut entered = self.entered.lock().unwrap();
        assert_eq!(entered.pop(), Some(id.into_u64()), "spans exit in order");
    }
}

/// A `metrics` recorder that keeps every counter, gauge and histogram by
/// name and labels.
#[derive(Default)]
struct Meter {
    cells: Mutex<BTreeMap<Series, Arc<Cell>>>,
}

#[derive(Default)]
struct Cell {
    count: AtomicU64,
    bits: AtomicU64,
}

impl CounterFn for Cell {
    fn increment(&self, value: u64) {
        self.count.fetch_add(value, Ordering::Relaxed);
    }

    fn absolute(&self, value: u64) {
        self.count.fetch_max(value, Ordering::Relaxed);
    }
}

impl GaugeFn for Cell {
    fn increment(&self, _: f64) {
        unreachable!("the adapter only sets its gauge");
    }

    fn decrement(&self, _: f64) {
        unreachable!("the adapter only sets its gauge");
    }

    fn set(&self, value: f64) {
        self.bits.store(value.to_bits(), Ordering::Relaxed);
    }
}

impl HistogramFn for Cell {
    fn record(&self, value: f64) {
        self.count.fetch_add(1, Ordering::Relaxed);
        self.bits.store(value.to_bits(), Ordering::Relaxed);
    }
}

impl Meter {
    fn cell(&self, key: &Key) -> Arc<Cell> {
        let labels = key
            .labels()
            .map(|label| (label.key().to_owned(), label.value().to_owned()))
            .collect();
        let mut cells = self.cells.lock().unwrap();
        Arc::clone(cells.entry((key.name().to_owned(), labels)).or_default())
    }

    fn counters(&self, name: &str) -> Vec<(BTreeMap<String, String>, u64)> {
        self.cells
            .lock()
            .unwrap()
            .iter()
            .filter(|((metric, _), _)| metric == name)
            .map(|((_, labels), cell)| {
                (
                    labels.iter().cloned().collect(),
                    cell.count.load(Ordering::Relaxed),
                )
            })
            .collect()
    }

    fn gauges(&self, name: &str) -> BTreeMap<String, f64> {
        self.cells
            .lock()
            .unwrap()
            .iter()
            .filter(|((metric, _), _)| metric == name)
            .map(|((_, labels), cell)| {
                (
                    labels[0].1.clone(),
                    f64::from_bits(cell.bits.load(Ordering::Relaxed)),
                )
            })
            .collect()
    }

    /// Each histogram's breaker and the last value it recorded.
    fn histogram_values(&self, name: &str) -> Vec<(String, f64)> {
        self.gauges(name).into_iter().collect()
    }

    fn histogram_count(&self, name: &str) -> u64 {
        self.counters(name).iter().map(|(_, count)| count).sum()
    }
}

impl Recorder for Meter {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}

    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}

    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}

    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        Counter::from_arc(self.cell(key))
    }

    fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
        Gauge::from_arc(self.cell(key))
    }

    fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
        Histogram::from_arc(self.cell(key))
    }
}
