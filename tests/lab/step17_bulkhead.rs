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

/// Two callers ask a bulkhead of one for its slot, in every order the
/// suite's scheduler can make of the bulkhead's counter operations
/// (`lab_schedule::explore`): switching between checking for room and
/// taking the slot is one of them, so a check-then-act is caught on every
/// run, with one verdict, which a grade can count.
#[test]
fn h1_two_callers_asking_for_the_last_slot_in_every_order_never_both_get_it() {
    use std::sync::atomic::{AtomicU32, Ordering};
    let schedules = lab_schedule::explore(
        2,
        || (with_room_for(1, 1_000_000, ms(10)), AtomicU32::new(0)),
        |(breaker, admitted), _caller| {
            if let Ok(permit) = breaker.try_acquire() {
                admitted.fetch_add(1, Ordering::SeqCst);
                // Held to the end: no report runs while the other caller
                // may still ask.
                std::mem::forget(permit);
            }
        },
        |(breaker, admitted)| {
            assert_eq!(
                admitted.load(Ordering::SeqCst),
                1,
                "TODO(17): two callers asked a bulkhead of 1 for its slot and {} got it: one \
                 must, and never both, whatever order their steps run in; checking for room \
                 and taking the slot must be one atomic step (`fetch_update`, or a \
                 compare-and-swap loop) (H1)",
                admitted.load(Ordering::SeqCst)
            );
            assert_eq!(
                breaker.in_flight(),
                1,
                "TODO(17): one permit holds the bulkhead's one slot (H1)"
            );
        },
    );
    assert!(
        schedules > 2,
        "TODO(17): `try_hold` must count with the bulkhead's own counter \
         (`in_flight`, a `crate::sync::AtomicU32`), whose operations the suite's scheduler \
         can switch callers at; it saw none (H1)"
    );
}

/// A race: real threads take the last slot at once; a bulkhead that reads
/// the count and then adds to it, in two steps, lets two of them in only
/// when they meet between its two steps. Not graded: on a wrong crate its
/// verdict can change from run to run, and a grade must not; `just test`
/// runs it.
///
/// Rounds of threads released together by a barrier ask a bulkhead of one
/// for its slot at the same instant; whoever gets it counts itself in and
/// out. A correct `try_hold` takes the slot in one atomic step, so at most
/// one is ever in.
#[test]
fn h1_threads_asking_for_the_last_slot_at_once_never_both_get_it() {
    use std::sync::Barrier;
    use std::sync::atomic::{AtomicU32, Ordering};
    const THREADS: usize = 4;
    const ROUNDS: usize = 2_000;
    let breaker = with_room_for(1, 1_000_000, ms(10));
    let (inside, most) = (AtomicU32::new(0), AtomicU32::new(0));
    let start = Barrier::new(THREADS);
    std::thread::scope(|scope| {
        for _ in 0..THREADS {
            scope.spawn(|| {
                for _ in 0..ROUNDS {
                    start.wait();
                    if let Ok(permit) = breaker.try_acquire() {
                        let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::hint::spin_loop();
                        inside.fetch_sub(1, Ordering::SeqCst);
                        permit.success();
                    }
                    start.wait();
                }
            });
        }
    });
    assert_eq!(
        most.load(Ordering::SeqCst),
        1,
        "TODO(17): a bulkhead of 1 let more than one attempt in at once: checking for room \
         and taking the slot must be one atomic step (`fetch_update`, or a compare-and-swap \
         loop), or two callers can both see the last slot free and both take it (H1)"
    );
}
