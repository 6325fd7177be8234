//! Manual control (C1-C3): an operator isolates a breaker and closes it
//! again. Each is a transition in a new generation, whatever the state it
//! starts from, so an outcome admitted before it is stale.

use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use retry_breaker_solution::{
    Event, ManualClock, Phase, Recorded, Registry, RetryBreaker, State, WindowConfig,
};

use crate::{Breaking, COOLDOWN, ISOLATED, REFUSED_FOR_GOOD, TEN_YEARS, heard_breaker, moves};

#[test]
fn c1_an_isolated_breaker_refuses_every_attempt_however_long_it_waits() {
    // No hook and no sink: the lock-free fast path must see the isolation too.
    let clock = ManualClock::new();
    let breaker = RetryBreaker::new(3, COOLDOWN, clock.clone()).expect("valid settings");
    breaker.try_acquire().unwrap().failure();

    breaker.isolate();
    assert_eq!(breaker.generation().get(), 1);
    for _ in 0..3 {
        assert_eq!(breaker.state(), ISOLATED);
        assert_eq!(breaker.try_acquire().unwrap_err(), REFUSED_FOR_GOOD);
        clock.advance(TEN_YEARS);
    }
    assert_eq!(breaker.generation().get(), 1, "refusals are no transitions");
}

#[test]
fn c1_isolating_is_a_transition_at_the_clock_reading_from_every_state() {
    let (breaker, clock, heard) = heard_breaker(1);
    clock.advance(Duration::from_secs(1));
    breaker.isolate(); // from CLOSED
    breaker.isolate(); // from OPEN: a new generation all the same
    breaker.close();
    breaker.try_acquire().unwrap().failure(); // trips
    clock.advance(COOLDOWN);
    let _probe = breaker.try_acquire().unwrap(); // HALF-OPEN
    breaker.isolate();

    assert_eq!(
        moves(&heard),
        [
            (Phase::Closed, Phase::Open, 1),
            (Phase::Open, Phase::Open, 2),
            (Phase::Open, Phase::Closed, 3),
            (Phase::Closed, Phase::Open, 4),
            (Phase::Open, Phase::HalfOpen, 5),
            (Phase::HalfOpen, Phase::Open, 6),
        ]
    );
    let heard = heard.lock().unwrap();
    assert_eq!(heard[0].at, Duration::from_secs(1));
    assert_eq!(heard[5].at, Duration::from_secs(31));
    assert_eq!(breaker.state(), ISOLATED);
}

#[test]
fn c1_c3_an_isolated_probe_that_succeeds_is_stale_and_closes_nothing() {
    let (breaker, clock, _) = heard_breaker(1);
    breaker.try_acquire().unwrap().failure();
    clock.advance(COOLDOWN);
    let probe = breaker.try_acquire().unwrap();
    let before = breaker.generation();

    breaker.isolate();
    assert_eq!(probe.success(), Recorded::Stale);
    assert_eq!(breaker.state(), ISOLATED);
    assert_eq!(breaker.generation().get(), before.get() + 1);
    clock.advance(TEN_YEARS);
    assert_eq!(breaker.try_acquire().unwrap_err(), REFUSED_FOR_GOOD);
}

#[test]
fn c2_close_ends_an_isolation_and_admits_again() {
    let (breaker, _, heard) = heard_breaker(2);
    breaker.isolate();
    breaker.close();

    assert_eq!(breaker.state(), State::Closed { failures: 0 });
    assert_eq!(breaker.try_acquire().unwrap().success(), Recorded::Counted);
    assert_eq!(
        moves(&heard),
        [
            (Phase::Closed, Phase::Open, 1),
            (Phase::Open, Phase::Closed, 2)
        ]
    );
}

#[test]
fn c2_close_forgets_the_failures_counted_so_far() {
    let (breaker, _, heard) = heard_breaker(3);
    breaker.try_acquire().unwrap().failure();
    breaker.try_acquire().unwrap().failure();

    breaker.close();
    assert_eq!(breaker.state(), State::Closed { failures: 0 });
    breaker.try_acquire().unwrap().failure();
    breaker.try_acquire().unwrap().failure();
    assert_eq!(breaker.state(), State::Closed { failures: 2 });
    breaker.try_acquire().unwrap().failure();
    assert_eq!(
        moves(&heard),
        [
            (Phase::Closed, Phase::Closed, 1),
            (Phase::Closed, Phase::Open, 2)
        ]
    );
}

#[test]
fn c2_c3_close_fences_the_probe_and_every_attempt_admitted_before() {
    let (breaker, clock, _) = heard_breaker(1);
    breaker.try_acquire().unwrap().failure();
    clock.advance(COOLDOWN);
    let probe = breaker.try_acquire().unwrap();

    breaker.close();
    let after = breaker
        .try_acquire()
        .expect("a closed circuit admits, probe or not");
    assert_eq!(probe.failure(), Recorded::Stale);
    assert_eq!(breaker.state(), State::Closed { failures: 0 });
    assert_eq!(after.failure(), Recorded::Counted);
    assert_eq!(breaker.state(), TRIPPED);
}

/// What a trip shows at once.
const TRIPPED: State = State::Open {
    remaining: COOLDOWN,
};

#[test]
fn c3_a_failure_admitted_before_close_cannot_count_towards_the_next_trip() {
    let (breaker, _, _) = heard_breaker(2);
    breaker.try_acquire().unwrap().failure();
    let before = breaker.try_acquire().unwrap();

    breaker.close();
    assert_eq!(before.failure(), Recorded::Stale);
    assert_eq!(breaker.state(), State::Closed { failures: 0 });
}

#[test]
fn c2_close_empties_the_failure_rate_window() {
    let clock = ManualClock::new();
    let breaker = RetryBreaker::builder()
        .cooldown(COOLDOWN)
        .window(WindowConfig::new(4, 4, 0.5))
        .build(clock)
        .expect("valid settings");
    breaker.try_acquire().unwrap().failure();
    breaker.try_acquire().unwrap().failure();
    breaker.try_acquire().unwrap().success();

    breaker.close();
    // With the three verdicts above still in the window, this would be 3
    // failures in 4 and open the circuit; after a close it is 1 in 1, below
    // the minimum.
    breaker.try_acquire().unwrap().failure();
    assert!(breaker.try_acquire().is_ok(), "{:?}", breaker.state());
}

#[test]
fn c3_the_event_sink_hears_each_operation_as_a_transition_and_its_refusals() {
    let told = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&told);
    let breaker = RetryBreaker::new(3, COOLDOWN, ManualClock::new())
        .expect("valid settings")
        .with_event_sink(move |event| log.lock().unwrap().push(*event));

    breaker.isolate();
    assert!(breaker.try_acquire().is_err());
    breaker.close();

    let told = told.lock().unwrap();
    let names: Vec<_> = told.iter().map(Event::name).collect();
    assert_eq!(names, ["circuit_opened", "rejected", "circuit_closed"]);
    assert!(matches!(
        told[0],
        Event::Transition(t) if (t.from, t.to) == (Phase::Closed, Phase::Open)
    ));
    assert_eq!(told[1], Event::Rejected(REFUSED_FOR_GOOD));
}

#[test]
fn c3_a_hook_that_panics_reaches_the_operator_with_the_isolation_made() {
    let breaker = RetryBreaker::new(3, COOLDOWN, ManualClock::new())
        .expect("valid settings")
        .with_transition_hook(|_| panic!("the hook broke"));

    let caught = panic::catch_unwind(AssertUnwindSafe(|| breaker.isolate()));
    assert!(caught.is_err(), "the hook's panic reaches the caller");
    assert_eq!(breaker.state(), ISOLATED);
    assert_eq!(breaker.try_acquire().unwrap_err(), REFUSED_FOR_GOOD);
}

#[test]
fn c1_c2_a_clock_that_panics_leaves_the_circuit_as_it_was() {
    let clock = Breaking::default();
    let breaker = RetryBreaker::new(3, COOLDOWN, &clock).expect("valid settings");
    breaker.try_acquire().unwrap().failure();
    clock.broken.store(true, Ordering::SeqCst);

    for operation in [RetryBreaker::isolate, RetryBreaker::close] {
        let caught = panic::catch_unwind(AssertUnwindSafe(|| operation(&breaker)));
        assert!(caught.is_err(), "the clock's panic reaches the caller");
        assert_eq!(breaker.generation().get(), 0);
    }
    clock.broken.store(false, Ordering::SeqCst);
    assert_eq!(breaker.state(), State::Closed { failures: 1 });
}

#[test]
fn c1_an_operator_isolates_one_key_of_a_registry_and_the_others_carry_on() {
    let registry: Registry<String, ManualClock> = Registry::new(
        RetryBreaker::builder().threshold(2).cooldown(COOLDOWN),
        ManualClock::new(),
    )
    .expect("valid settings");
    let charges = registry.breaker("charges");
    let refunds = registry.breaker("refunds");

    charges.isolate();
    assert_eq!(
        registry.breaker("charges").try_acquire().unwrap_err(),
        REFUSED_FOR_GOOD
    );
    assert!(refunds.try_acquire().is_ok());
    let states: BTreeMap<_, _> = registry.states().into_iter().collect();
    assert_eq!(
        states,
        BTreeMap::from([
            ("charges".to_owned(), ISOLATED),
            ("refunds".to_owned(), State::Closed { failures: 0 }),
        ])
    );
}
