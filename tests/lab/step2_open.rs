//! Step 2, OPEN: refuse attempts until the deadline, without counting
//! anything (TODO(2); rules B1, B3).

use std::time::Duration;

use retry_breaker::{Phase, Rejected, State};

use crate::support::{Lab, ms};

#[test]
fn b3_an_open_circuit_refuses_attempts_and_says_how_long_is_left() {
    let lab = Lab::new(2, ms(10));
    lab.trip();
    lab.advance(ms(5));
    let rejection = lab.breaker.try_acquire().unwrap_err();
    assert_eq!(
        rejection,
        Rejected::Open { remaining: ms(5) },
        "TODO(2): expected `rejection` to equal `Rejected::Open {{remaining: ms(5)}}`"
    );
    assert_eq!(
        rejection.remaining(),
        ms(5),
        "TODO(2): expected `rejection.remaining()` to equal `ms(5)`"
    );
}

#[test]
fn b3_the_refusal_holds_until_the_last_instant_before_the_deadline() {
    let lab = Lab::new(1, ms(10));
    lab.trip();
    lab.advance(ms(10) - Duration::from_nanos(1));
    assert_eq!(
        lab.breaker.try_acquire().unwrap_err(),
        Rejected::Open {
            remaining: Duration::from_nanos(1)
        },
        "TODO(2): expected `lab.breaker.try_acquire().unwrap_err()` to equal `Rejected::Open {{remaining: Duration::from_nanos(1)}}`"
    );
}

#[test]
fn b3_refusals_change_no_count_no_deadline_and_no_generation() {
    let lab = Lab::new(2, ms(10));
    lab.trip();
    let generation = lab.breaker.generation();
    for left in [8, 6, 4] {
        lab.advance(ms(2));
        assert_eq!(
            lab.breaker.try_acquire().unwrap_err(),
            Rejected::Open {
                remaining: ms(left)
            },
            "the deadline stays where the failure put it"
        );
    }
    assert_eq!(
        lab.breaker.state(),
        State::Open { remaining: ms(4) },
        "TODO(2): the breaker must now be `State::Open {{remaining: ms(4)}}`"
    );
    assert_eq!(
        lab.breaker.generation(),
        generation,
        "TODO(2): the generation must be `generation`"
    );
    assert_eq!(
        lab.transitions().len(),
        1,
        "TODO(2): exactly 1 transition(s) so far"
    );
}

#[test]
fn b3_the_refusal_explains_itself_in_a_sentence() {
    let lab = Lab::new(1, ms(10));
    lab.trip();
    lab.advance(ms(4));
    let message = lab.breaker.try_acquire().unwrap_err().to_string();
    assert!(message.contains("open"), "{message}");
    assert!(
        message.contains("6ms"),
        "the message should give the time left: {message}"
    );
}

#[test]
fn b1_a_cooldown_too_long_to_represent_refuses_for_good() {
    let lab = Lab::new(1, Duration::MAX);
    lab.advance(ms(1));
    lab.trip();
    lab.advance(Duration::MAX);
    let rejection = lab.breaker.try_acquire().unwrap_err();
    assert_eq!(
        rejection,
        Rejected::Open {
            remaining: Duration::MAX
        },
        "TODO(2): expected `rejection` to equal `Rejected::Open {{remaining: Duration::MAX}}`"
    );
    assert!(rejection.to_string().contains("stays open"), "{rejection}");
}

#[test]
fn b8_a_hook_may_even_ask_for_a_permit_and_report_on_it() {
    crate::support::guard(
        "the hook deadlocked calling the breaker: it must run after the lock is released (B8)",
        Duration::from_secs(5),
        || {
            let hooked = crate::support::Hooked::new(1, ms(10), |breaker, transition| {
                if transition.to == Phase::Open {
                    assert!(
                        breaker.try_acquire().is_err(),
                        "TODO(2): inside the hook the circuit is already OPEN"
                    );
                }
            });
            hooked.trip();
            assert_eq!(
                hooked.breaker.state(),
                State::Open { remaining: ms(10) },
                "TODO(1): the breaker must now be `State::Open {{remaining: ms(10)}}`"
            );
            assert_eq!(
                hooked.seen().len(),
                1,
                "TODO(2): a refusal is no transition"
            );
        },
    );
}
