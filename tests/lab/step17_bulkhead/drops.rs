//! A bulkhead's slots (H1-H3). Its refusal of an attempt the circuit
//! admitted gives the admission back as a permit dropped unreported does
//! (H2, B7), and a dropped permit frees its slot: so these pass once the
//! bulkhead counts its slots (TODO(17)) and a permit cleans up after itself
//! (TODO(4)).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use retry_breaker::{Generation, ManualClock, Phase, Recorded, Rejected, RetryBreaker, State};

use crate::support::{ms, with_room_for};

#[test]
fn h2_a_probe_the_bulkhead_has_no_room_for_hands_the_probe_slot_back() {
    // A hook that asks the breaker for an attempt can loop forever in a
    // wrong answer: a watchdog ends it.
    crate::support::guard(
        "a hook asking for an attempt did not return: TODO(4)",
        Duration::from_secs(10),
        || {
            // Room for 2. The hook runs while the failing attempt still holds its
            // slot, and asks for an attempt: with a zero cooldown the circuit
            // admits it as the probe, but the bulkhead is full (the tripping
            // attempt and one more), so the probe goes back unused.
            let answers = Arc::new(Mutex::new(Vec::new()));
            let me: Arc<OnceLock<Weak<RetryBreaker<ManualClock>>>> = Arc::default();
            let (seen, myself) = (Arc::clone(&answers), Arc::clone(&me));
            let breaker = Arc::new(with_room_for(2, 1, Duration::ZERO).with_transition_hook(
                move |t| {
                    if t.to == Phase::Open {
                        let breaker = myself.get().and_then(Weak::upgrade).expect("the breaker");
                        seen.lock().unwrap().push(breaker.try_acquire().err());
                    }
                },
            ));
            me.set(Arc::downgrade(&breaker)).unwrap();
            let other = breaker.try_acquire().expect("TODO(1): CLOSED admits");
            breaker
                .try_acquire()
                .expect("TODO(1): CLOSED admits")
                .failure();
            assert_eq!(
                *answers.lock().unwrap(),
                [Some(Rejected::Full { limit: 2 })],
                "TODO(17): H1: the circuit would have admitted a probe (B4), but both slots were held"
            );
            assert_eq!(
                breaker.state(),
                State::HalfOpen {
                    probe_in_flight: false
                },
                "TODO(4): the probe the bulkhead refused went back unused, as a permit dropped \
             unreported does, so the circuit waits for another (H2, B7)"
            );
            let probe = breaker
                .try_acquire()
                .expect("TODO(4): the next attempt, with a slot free, is the probe (H2, B7)");
            assert_eq!(
                breaker.state(),
                State::HalfOpen {
                    probe_in_flight: true
                }
            );
            probe.success();
            assert_eq!(
                other.success(),
                Recorded::Stale,
                "TODO(3): the attempt from before the trip is stale (B6)"
            );
        },
    );
}

#[test]
fn h1_h2_a_bulkhead_admits_its_limit_and_refuses_the_next_without_counting_it() {
    let breaker = with_room_for(2, 3, ms(10));
    assert_eq!(breaker.max_in_flight(), Some(2));
    let first = breaker.try_acquire().expect("TODO(1): CLOSED admits (B2)");
    let second = breaker.try_acquire().expect("TODO(1): CLOSED admits (B2)");
    assert_eq!(
        breaker.in_flight(),
        2,
        "TODO(17): H1: two permits hold the two slots"
    );
    assert_eq!(
        breaker.try_acquire().err(),
        Some(Rejected::Full { limit: 2 }),
        "TODO(17): H1: a third attempt finds no room, although the circuit would admit it"
    );
    assert_eq!(
        (breaker.state(), breaker.generation(), breaker.in_flight()),
        (State::Closed { failures: 0 }, Generation::default(), 2),
        "TODO(17): H2: the refusal counted nothing, started no generation and took no slot"
    );
    first.failure();
    assert_eq!(
        breaker.in_flight(),
        1,
        "TODO(17): H3: a reported attempt frees its slot"
    );
    assert_eq!(
        breaker.state(),
        State::Closed { failures: 1 },
        "TODO(1): the failure is counted (B2)"
    );
    let third = breaker
        .try_acquire()
        .expect("TODO(17): H3: the freed slot admits the next attempt");
    second.success();
    third.success();
    assert_eq!(
        breaker.in_flight(),
        0,
        "TODO(17): H3: every slot is free again"
    );
}

#[test]
fn h3_each_permit_that_ends_gives_back_its_own_slot_and_no_other() {
    let breaker = with_room_for(3, 3, ms(10));
    let first = breaker.try_acquire().expect("TODO(1): CLOSED admits (B2)");
    let second = breaker.try_acquire().expect("TODO(1): CLOSED admits (B2)");
    let third = breaker.try_acquire().expect("TODO(1): CLOSED admits (B2)");
    second.success();
    assert_eq!(
        breaker.in_flight(),
        2,
        "TODO(17): H3: the second permit's report gives back one slot; the other two are still out"
    );
    let fourth = breaker
        .try_acquire()
        .expect("TODO(17): H1, H3: the slot given back has room for one more");
    assert_eq!(
        breaker.try_acquire().err(),
        Some(Rejected::Full { limit: 3 }),
        "TODO(17): H1: and only one: three are out again"
    );
    drop((first, third, fourth));
    assert_eq!(breaker.in_flight(), 0, "TODO(17): H3: every slot is back");
}

#[test]
fn h3_a_slot_is_freed_however_its_permit_ends() {
    let breaker = Arc::new(with_room_for(1, 3, ms(10)));
    drop(breaker.try_acquire().expect("TODO(1): CLOSED admits (B2)"));
    assert_eq!(
        breaker.in_flight(),
        0,
        "TODO(17): H3: a permit dropped unreported frees its slot"
    );
    let owned = breaker
        .try_acquire_owned()
        .expect("TODO(1): CLOSED admits (B2)");
    assert_eq!(
        breaker.try_acquire().err(),
        Some(Rejected::Full { limit: 1 }),
        "TODO(17): H1: an owned permit holds a slot too"
    );
    owned.success();
    assert_eq!(
        breaker.in_flight(),
        0,
        "TODO(17): H3: an owned permit's report frees its slot"
    );
    drop(
        breaker
            .try_acquire_owned()
            .expect("TODO(1): CLOSED admits (B2)"),
    );
    assert_eq!(
        breaker.in_flight(),
        0,
        "TODO(17): H3: so does an owned permit's drop"
    );
    let panicked = catch_unwind(AssertUnwindSafe(|| {
        let _permit = breaker.try_acquire().expect("TODO(1): CLOSED admits (B2)");
        panic!("the task panicked holding its permit");
    }));
    assert!(panicked.is_err());
    assert_eq!(
        breaker.in_flight(),
        0,
        "TODO(17): H3: a permit dropped by a panic frees its slot, or the bulkhead would shrink for good"
    );
}
