//! Step 17, a bulkhead: a limit on the attempts in flight to one dependency
//! (TODO(17); rules H1-H5). A CLOSED circuit admits everything until
//! failures come back, so a burst of callers all reach a dependency that
//! stopped answering before the breaker has any evidence: fifty callers,
//! fifty requests into the hole. The bulkhead bounds how many admitted
//! attempts may be out at once (H1); a refusal for want of room changes
//! nothing in the circuit (H2); a slot is held until the permit ends, however
//! it ends (H3); the circuit answers first (H4); and in `execute` a full
//! bulkhead is a refusal like any other (H5).
//!
//! The permits, the refusal's wiring and `execute` are steps 4 and 7's; this
//! step writes the count of slots: `Bulkhead::try_hold` and `release`.

mod drops;
mod explore;
mod layer;
mod refusals;

use retry_breaker::{Rejected, State};

use crate::support::{ms, with_room_for};

#[test]
fn h1_h4_the_probe_holds_a_slot_and_the_circuit_answers_before_the_bulkhead() {
    let breaker = with_room_for(1, 1, ms(10));
    breaker
        .try_acquire()
        .expect("TODO(1): CLOSED admits")
        .failure();
    assert_eq!(
        breaker.try_acquire().err(),
        Some(Rejected::Open { remaining: ms(10) }),
        "TODO(2): OPEN refuses with its cooldown, the bulkhead empty (B3)"
    );
    breaker.clock().advance(ms(10));
    let probe = breaker
        .try_acquire()
        .expect("TODO(2): the cooldown is over: a probe (B4)");
    assert_eq!(
        breaker.in_flight(),
        1,
        "TODO(17): H1, the probe holds the one slot"
    );
    assert_eq!(
        breaker.try_acquire().err(),
        Some(Rejected::ProbeInFlight),
        "TODO(17): H4: with the probe out and the bulkhead full, the circuit's own reason is the one \
         given (TODO(2): B5)"
    );
    probe.success();
    assert_eq!(
        (breaker.state(), breaker.in_flight()),
        (State::Closed { failures: 0 }, 0),
        "TODO(2): a good probe closes the circuit (B5), and frees its slot (H3)"
    );
}
