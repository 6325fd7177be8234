//! A bulkhead's refusal of an attempt the circuit admitted gives the
//! admission back as a permit dropped unreported does (H2, B7): so it
//! passes once a dropped probe hands its slot back (TODO(4)).

use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use retry_breaker::{ManualClock, Phase, Recorded, Rejected, RetryBreaker, State};

/// A breaker that opens on 1 failure for `cooldown`, with room for `limit`
/// attempts in flight.
fn bulkheaded(limit: u32, cooldown: Duration) -> RetryBreaker<ManualClock> {
    RetryBreaker::builder()
        .threshold(1)
        .cooldown(cooldown)
        .max_in_flight(limit)
        .build(ManualClock::new())
        .expect("a valid configuration")
}

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
            let breaker = Arc::new(
                bulkheaded(2, Duration::ZERO).with_transition_hook(move |t| {
                    if t.to == Phase::Open {
                        let breaker = myself.get().and_then(Weak::upgrade).expect("the breaker");
                        seen.lock().unwrap().push(breaker.try_acquire().err());
                    }
                }),
            );
            me.set(Arc::downgrade(&breaker)).unwrap();
            let other = breaker.try_acquire().expect("TODO(1): CLOSED admits");
            breaker
                .try_acquire()
                .expect("TODO(1): CLOSED admits")
                .failure();
            assert_eq!(
                *answers.lock().unwrap(),
                [Some(Rejected::Full { limit: 2 })],
                "H1: the circuit would have admitted a probe (B4), but both slots were held"
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
