//! The CLOSED shortcut: the common case, without the lock.
//!
//! Nearly every attempt meets a CLOSED circuit, and there the two halves of
//! its bookkeeping change nothing at all: admission only hands out the
//! current generation, and a success with no failures counted resets a count
//! that is already zero. Taking the breaker's lock for them is most of what a
//! call through a healthy breaker costs, and under contention two threads
//! that do nothing but read would fight over the lock's cache line.
//!
//! So next to the circuit the breaker keeps one atomic word that says either
//! "CLOSED in generation g" (and whether any failure is counted) or "ask the
//! circuit". It is written only under the lock, from what the circuit
//! reports about itself; the two read-only cases above read it instead of
//! locking. Everything else (failures, OPEN, HALF-OPEN, permits of an older
//! generation) takes the lock and asks the circuit, as before.
//!
//! # Why this is still one breaker (linearizability)
//!
//! Every operation must appear to take effect at one instant between its
//! call and its return, in an order that one breaker, used from one thread,
//! could have produced.
//!
//! - The word is written only while the lock is held, once at the end of a
//!   critical section, and always from the circuit's own state (or as "ask
//!   the circuit", which is never wrong). So the words written follow the
//!   lock order, and whenever the lock is free, a word that says "CLOSED in
//!   g" is true of the circuit.
//! - An operation under the lock takes effect inside its critical section,
//!   when it writes the word if it writes one: no other operation can see
//!   its change before then. Fast readers see only the word, and other
//!   locked operations wait for the lock.
//! - A fast operation takes effect when it loads the word. At that instant
//!   the circuit is, as far as every other operation can tell, CLOSED in
//!   that generation, and the locked operation would have returned the same
//!   answer and changed nothing. Changing nothing is what makes skipping the
//!   lock sound: an attempt admitted just before a concurrent failure opens
//!   the circuit is an attempt of the old generation, exactly as if it had
//!   taken the lock first, and its outcome will be stale.
//!
//! What this rests on is that the shortcut is one word, written only under
//! the lock, and that a fast operation reads that word and nothing else (the
//! generation travels inside it). All writes to a single atomic fall into
//! one modification order, here the order in which the critical sections
//! ran, and a read returns some value of that order no older than any the
//! reader has already seen. So a fast reader always sees the word exactly
//! as some critical section left it, never a mix, and no other memory has
//! to be ordered with it. The `Release` store and `Acquire` load are kept
//! for a reader of the future who adds data beside the word; the argument
//! above does not depend on them.
//!
//! The circuit never changes anything before it has checked everything (see
//! `RetryBreaker::circuit`), so an operation that panics leaves the circuit
//! as it was, and the word, which it did not get to rewrite, still true. The
//! rewrite itself cannot panic.

// SOLUTION ONLY FILE: the starter's breaker asks the student's Circuit every time.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::circuit::Circuit;
use crate::clock::Clock;
use crate::state::State;
use crate::transition::Generation;

/// "Ask the circuit": not CLOSED, or nothing the shortcut may answer.
const ASK: u64 = 0;
/// Flag: the circuit is CLOSED, in the generation in the high bits.
const CLOSED: u64 = 0b01;
/// Flag: no failure is counted.
const CLEAN: u64 = 0b10;
/// Bits taken by the flags; the generation is stored above them.
const FLAG_BITS: u32 = 2;

/// One atomic word mirroring whether the circuit is CLOSED, in which
/// generation, and with or without failures counted.
#[derive(Debug)]
pub(crate) struct ClosedShortcut {
    word: AtomicU64,
}

impl ClosedShortcut {
    /// The word for a new circuit: CLOSED, generation 0, nothing counted.
    pub(crate) fn new() -> Self {
        ClosedShortcut {
            word: AtomicU64::new(encode(Generation::default(), true)),
        }
    }

    /// The generation to admit an attempt in, if the circuit is CLOSED.
    pub(crate) fn admit(&self) -> Option<Generation> {
        let word = self.word.load(Ordering::Acquire);
        (word & CLOSED != 0).then(|| Generation::from_raw(word >> FLAG_BITS))
    }

    /// Whether a success of an attempt admitted in `generation` would be
    /// counted and change nothing: the circuit is CLOSED in that very
    /// generation, with no failures to reset.
    pub(crate) fn success_changes_nothing(&self, generation: Generation) -> bool {
        let word = self.word.load(Ordering::Acquire);
        word & CLEAN != 0 && word == encode(generation, true)
    }

    /// Rewrites the word from what `circuit` says about itself. Call it
    /// under the lock, at the end of every critical section.
    pub(crate) fn refresh(&self, circuit: &Circuit) {
        let word = match circuit.state(&NoTime) {
            // In window mode every success takes a place in the window, so a
            // success is never "nothing to do" there (W1).
            State::Closed { failures } => encode(
                circuit.generation(),
                failures == 0 && !circuit.counts_successes(),
            ),
            State::Open { .. } | State::HalfOpen { .. } => ASK,
        };
        self.word.store(word, Ordering::Release);
    }
}

/// A clock for reading the circuit's state without the time.
///
/// `Circuit::state` reads its clock only to say how much of a cooldown is
/// left, which the shortcut never needs. Not asking the breaker's real clock
/// keeps a refresh cheap, and keeps it from panicking (an injected clock
/// might) after the operation has already changed the circuit, which would
/// leave the word out of date.
struct NoTime;

impl Clock for NoTime {
    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

/// The word for a CLOSED circuit in `generation`, or "ask the circuit" for a
/// generation too large to fit beside the flags (after 2^62 transitions,
/// which no breaker lives to see, the breaker would simply always lock).
fn encode(generation: Generation, clean: bool) -> u64 {
    let raw = generation.get();
    if raw >> (u64::BITS - FLAG_BITS) != 0 {
        return ASK;
    }
    let flags = if clean { CLOSED | CLEAN } else { CLOSED };
    raw << FLAG_BITS | flags
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_circuit_is_closed_and_clean_in_generation_0() {
        let shortcut = ClosedShortcut::new();
        assert_eq!(shortcut.admit(), Some(Generation::default()));
        assert!(shortcut.success_changes_nothing(Generation::default()));
        assert!(!shortcut.success_changes_nothing(Generation::default().next()));
    }

    #[test]
    fn the_word_follows_the_circuit() {
        let clock = crate::clock::ManualClock::new();
        let mut circuit = Circuit::new(2, Duration::from_secs(1));
        let shortcut = ClosedShortcut::new();
        let first = circuit.generation();

        circuit.on_failure(first, &clock);
        shortcut.refresh(&circuit);
        assert_eq!(shortcut.admit(), Some(first), "still CLOSED");
        assert!(
            !shortcut.success_changes_nothing(first),
            "one failure to reset"
        );

        circuit.on_success(first, &clock);
        shortcut.refresh(&circuit);
        assert!(shortcut.success_changes_nothing(first));

        circuit.on_failure(first, &clock);
        circuit.on_failure(first, &clock);
        shortcut.refresh(&circuit);
        assert_eq!(shortcut.admit(), None, "OPEN: ask the circuit");
        assert!(!shortcut.success_changes_nothing(first));
        assert!(!shortcut.success_changes_nothing(circuit.generation()));
    }

    #[test]
    fn in_window_mode_a_success_always_asks_the_circuit() {
        use crate::window::{Window, WindowConfig};
        let circuit = Circuit::new(1, Duration::from_secs(1)).with_modes(
            1,
            Some(Window::new(WindowConfig {
                size: 4,
                minimum: 2,
                failure_rate: 0.5,
            })),
        );
        let shortcut = ClosedShortcut::new();
        shortcut.refresh(&circuit);
        let first = circuit.generation();
        assert_eq!(shortcut.admit(), Some(first), "admission is still free");
        assert!(
            !shortcut.success_changes_nothing(first),
            "a success must reach the window"
        );
    }

    #[test]
    fn with_a_success_threshold_the_shortcut_is_as_before() {
        // The success threshold only matters in HALF-OPEN, where the word
        // already says "ask the circuit".
        let clock = crate::clock::ManualClock::new();
        let mut circuit = Circuit::new(1, Duration::ZERO).with_modes(2, None);
        let shortcut = ClosedShortcut::new();
        circuit.on_failure(circuit.generation(), &clock);
        circuit.admit(&clock).expect("the first probe");
        shortcut.refresh(&circuit);
        assert_eq!(shortcut.admit(), None, "HALF-OPEN: ask the circuit");
        circuit.on_success(circuit.generation(), &clock);
        shortcut.refresh(&circuit);
        assert_eq!(
            shortcut.admit(),
            None,
            "one good probe of two: still HALF-OPEN"
        );
    }

    #[test]
    fn generations_round_trip_through_the_word() {
        for raw in [0, 1, 41, (1 << 62) - 1] {
            let generation = Generation::from_raw(raw);
            for clean in [false, true] {
                let word = encode(generation, clean);
                assert_ne!(word, ASK);
                assert_eq!(Generation::from_raw(word >> FLAG_BITS), generation);
                assert_eq!(word & CLEAN != 0, clean);
            }
        }
    }

    #[test]
    fn a_generation_too_large_for_the_word_means_ask_the_circuit() {
        let huge = Generation::from_raw(1 << 62);
        assert_eq!(encode(huge, true), ASK);
        assert_eq!(encode(Generation::from_raw(u64::MAX), false), ASK);

        let shortcut = ClosedShortcut {
            word: AtomicU64::new(ASK),
        };
        assert_eq!(shortcut.admit(), None);
        assert!(!shortcut.success_changes_nothing(huge));
    }
}
