//! The lock-free shortcut: the CLOSED and OPEN cases, without the lock.
//!
//! Nearly every attempt meets a CLOSED circuit, and there the two halves of
//! its bookkeeping change nothing at all: admission only hands out the
//! current generation, and a success with no failures counted resets a count
//! that is already zero. An OPEN circuit is the other hot case: callers keep
//! asking while the dependency is down, and every one of them is refused
//! before the deadline, which changes nothing either. Taking the breaker's
//! lock for these is most of what they cost, and under contention two
//! threads that do nothing but read would fight over the lock's cache line.
//!
//! So next to the circuit the breaker keeps one atomic word that says
//! "CLOSED in generation g" (and whether any failure is counted), "OPEN until
//! t" (t in nanoseconds on the breaker's clock, or never), or "ask the
//! circuit". It is written only under the lock, from what the circuit
//! reports about itself; the three read-only cases above read it instead of
//! locking. Everything else (failures, HALF-OPEN, an admission at or after
//! the deadline, permits of an older generation) takes the lock and asks the
//! circuit, as before.
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
//!   lock order, and whenever the lock is free, the word is true of the
//!   circuit.
//! - An operation under the lock takes effect inside its critical section,
//!   when it writes the word: no other operation can see its change before
//!   then. Fast readers see only the word, and other locked operations wait
//!   for the lock.
//! - A fast CLOSED operation takes effect when it loads the word. At that
//!   instant the circuit is, as far as every other operation can tell,
//!   CLOSED in that generation, and the locked operation would have returned
//!   the same answer and changed nothing. Changing nothing is what makes
//!   skipping the lock sound: an attempt admitted just before a concurrent
//!   failure opens the circuit is an attempt of the old generation, exactly
//!   as if it had taken the lock first, and its outcome will be stale.
//! - A fast OPEN refusal loads the word first and reads the clock second,
//!   and refuses only if the reading `now` is before the deadline `t`; it
//!   takes effect at the clock reading. When the word was loaded the circuit
//!   was OPEN until `t`. In OPEN nothing but an admission can change the
//!   circuit: no permit of the OPEN generation exists (opening starts a new
//!   generation, and admitting moves the circuit to HALF-OPEN before handing
//!   one out), so every outcome and every dropped permit reported there is
//!   stale and changes nothing. And an admission leaves OPEN only if its own
//!   clock reading is at or after `t`. The clock never goes backwards
//!   (`Clock`'s contract), so that reading was taken after ours, which was
//!   before `t`, and the admission takes effect later still, when it writes
//!   the word. So from the load to our clock reading the circuit stayed OPEN
//!   until `t`, and a locked admission at our reading would have refused
//!   with the same `t - now` and changed nothing. A refusal hands out no
//!   permit, so no generation of it is ever reported: the word does not
//!   need to carry the generation, and two OPEN spells with the same
//!   deadline are, for a refusal, the same state.
//! - A coarse reading (`Clock::coarse_now`) stands in for the exact one
//!   only when, even at its latest (`reading + lag`), it is before `t`: the
//!   exact clock at that moment was before `t` too, so the argument above
//!   holds with the coarse reading's moment as the refusal's instant. The
//!   time left it states, `t - reading`, may be up to `lag` too long. Within
//!   `lag` of the deadline the exact clock is read, so the probe still
//!   comes at `t`, never later.
//! - A deadline that never comes (`Deadline::Never`, a cooldown too long for
//!   the clock) is published as such: no admission ever leaves it, so the
//!   refusal, with `Duration::MAX` left, needs no clock reading at all. A
//!   deadline too far away to fit in the word's 62 bits (about 146 years on
//!   the clock) is published as "ask the circuit", which is never wrong.
//!
//! What this rests on is that the shortcut is one word, written only under
//! the lock, and that a fast operation reads that word and nothing else of
//! the breaker (the generation and the deadline travel inside it). All
//! writes to a single atomic fall into one modification order, here the
//! order in which the critical sections ran, and a read returns some value
//! of that order no older than any the reader has already seen. So a fast
//! reader always sees the word exactly as some critical section left it,
//! never a mix, and no other memory has to be ordered with it. The `Release`
//! store and `Acquire` load are kept for a reader of the future who adds
//! data beside the word; the argument above does not depend on them. The
//! loom tests (`tests/loom.rs`) check it by exploring the interleavings of
//! two and three threads at the transition points.
//!
//! The circuit never changes anything before it has checked everything (see
//! `RetryBreaker::circuit`), so an operation that panics leaves the circuit
//! as it was, and the word, which it did not get to rewrite, still true. The
//! rewrite itself cannot panic. A fast refusal calls the user's clock
//! outside the lock; if the clock panics, nothing has changed.

// SOLUTION ONLY FILE: the starter's breaker asks the student's Circuit every time.

use std::time::Duration;

use crate::breaker::circuit::Circuit;
use crate::breaker::state::State;
use crate::breaker::sync::{AtomicU64, Ordering};
use crate::breaker::transition::Generation;
use crate::error::Rejected;
use crate::time::clock::Clock;
use crate::time::deadline::Deadline;

/// "Ask the circuit": HALF-OPEN, or nothing the shortcut may answer.
const ASK: u64 = 0;
/// Flag: the circuit is CLOSED, in the generation in the high bits.
const CLOSED: u64 = 0b01;
/// Flag, beside `CLOSED`: no failure is counted.
const CLEAN: u64 = 0b10;
/// The flags alone, without `CLOSED`: the circuit is OPEN until the
/// deadline in the high bits.
const OPEN: u64 = 0b10;
/// Bits taken by the flags; the generation or deadline is stored above them.
const FLAG_BITS: u32 = 2;
/// The flag bits of a word.
const FLAGS: u64 = (1 << FLAG_BITS) - 1;
/// The deadline field of an OPEN word whose cooldown never ends; every
/// deadline that the word holds is below it.
const NEVER: u64 = u64::MAX >> FLAG_BITS;

/// One atomic word mirroring whether the circuit is CLOSED (in which
/// generation, and with or without failures counted) or OPEN (until when).
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

    /// The answer to an admission request, if the word has it: the
    /// generation to admit the attempt in while CLOSED, or the refusal while
    /// OPEN before the deadline on `clock`. `None`: ask the circuit.
    #[inline]
    pub(crate) fn admit(&self, clock: &impl Clock) -> Option<Result<Generation, Rejected>> {
        // BEGIN ANCHOR(shortcut-admit)
        // The word first, the clock second: see the module's argument.
        let word = self.word.load(Ordering::Acquire);
        let field = word >> FLAG_BITS;
        if word & CLOSED != 0 {
            return Some(Ok(Generation::from_raw(field)));
        }
        if word & FLAGS != OPEN {
            return None;
        }
        let remaining = if field == NEVER {
            Duration::MAX
        } else {
            // Zero or nothing left: the cooldown is over, and this admission
            // may be the probe. This path is mostly the clock read, so every
            // step around it shows: the reading is turned into whole
            // nanoseconds, as the word keeps the deadline, and one checked
            // subtraction of integers both compares and measures (a reading
            // past `u64::MAX` nanoseconds, 584 years, is past any deadline).
            // A coarse reading that is surely before the deadline, even at
            // its latest, refuses as well as the exact one and costs less;
            // near the deadline only the exact clock can say.
            let deadline = Duration::from_nanos(field);
            let now = match clock.coarse_now() {
                Some(coarse) if coarse.surely_before(deadline) => coarse.reading,
                _ => clock.now(),
            };
            let now = u64::try_from(now.as_nanos()).unwrap_or(u64::MAX);
            let left = field.checked_sub(now).filter(|&left| left != 0)?;
            Duration::from_nanos(left)
        };
        Some(Err(Rejected::Open { remaining }))
        // END ANCHOR
    }

    /// Whether a success of an attempt admitted in `generation` would be
    /// counted and change nothing: the circuit is CLOSED in that very
    /// generation, with no failures to reset.
    #[inline]
    pub(crate) fn success_changes_nothing(&self, generation: Generation) -> bool {
        let word = self.word.load(Ordering::Acquire);
        // `word == encode(generation, true)`, without `encode`'s check for a
        // generation too large for the word: such a generation never equals
        // the word's field, which is smaller.
        word & FLAGS == CLOSED | CLEAN && word >> FLAG_BITS == generation.get()
    }

    /// Rewrites the word from what `circuit` says about itself. Call it
    /// under the lock, at the end of every critical section.
    pub(crate) fn refresh(&self, circuit: &Circuit) {
        if let Some(until) = circuit.open_until() {
            self.word.store(encode_open(until), Ordering::Release);
            return;
        }
        let word = match circuit.state(&NoTime) {
            // In window mode every success takes a place in the window, so a
            // success is never "nothing to do" there (W1).
            // BEGIN ANCHOR(shortcut-closed-word)
            State::Closed { failures } => encode(
                circuit.generation(),
                failures == 0 && !circuit.counts_successes(),
            ),
            // END ANCHOR
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

/// The word for a circuit OPEN until `until`, or "ask the circuit" for a
/// deadline too far away to fit beside the flags.
fn encode_open(until: Deadline) -> u64 {
    let field = match until {
        Deadline::Never => NEVER,
        Deadline::At(at) => match u64::try_from(at.as_nanos()) {
            Ok(nanos) if nanos < NEVER => nanos,
            _ => return ASK,
        },
    };
    field << FLAG_BITS | OPEN
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
    use crate::time::clock::ManualClock;

    /// The generation the word admits in, if it says CLOSED.
    fn closed_in(shortcut: &ClosedShortcut) -> Option<Generation> {
        shortcut.admit(&NoTime).and_then(Result::ok)
    }

    #[test]
    fn a_new_circuit_is_closed_and_clean_in_generation_0() {
        let shortcut = ClosedShortcut::new();
        assert_eq!(closed_in(&shortcut), Some(Generation::default()));
        assert!(shortcut.success_changes_nothing(Generation::default()));
        assert!(!shortcut.success_changes_nothing(Generation::default().next()));
    }

    #[test]
    fn the_word_follows_the_circuit() {
        let clock = ManualClock::new();
        let mut circuit = Circuit::new(2, Duration::from_secs(1));
        let shortcut = ClosedShortcut::new();
        let first = circuit.generation();

        circuit.on_failure(first, &clock);
        shortcut.refresh(&circuit);
        assert_eq!(closed_in(&shortcut), Some(first), "still CLOSED");
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
        assert_eq!(
            shortcut.admit(&clock),
            Some(Err(Rejected::Open {
                remaining: Duration::from_secs(1)
            })),
            "OPEN: refused without the lock"
        );
        assert!(!shortcut.success_changes_nothing(first));
        assert!(!shortcut.success_changes_nothing(circuit.generation()));
    }

    #[test]
    fn in_window_mode_a_success_always_asks_the_circuit() {
        use crate::breaker::window::{Window, WindowConfig};
        let circuit = Circuit::new(1, Duration::from_secs(1))
            .with_modes(1, Some(Window::new(WindowConfig::new(4, 2, 0.5))));
        let shortcut = ClosedShortcut::new();
        shortcut.refresh(&circuit);
        let first = circuit.generation();
        assert_eq!(closed_in(&shortcut), Some(first), "admission is still free");
        assert!(
            !shortcut.success_changes_nothing(first),
            "a success must reach the window"
        );
    }

    #[test]
    fn with_a_success_threshold_the_shortcut_is_as_before() {
        // The success threshold only matters in HALF-OPEN, where the word
        // already says "ask the circuit".
        let clock = ManualClock::new();
        let mut circuit = Circuit::new(1, Duration::ZERO).with_modes(2, None);
        let shortcut = ClosedShortcut::new();
        circuit.on_failure(circuit.generation(), &clock);
        circuit.admit(&clock).expect("the first probe");
        shortcut.refresh(&circuit);
        assert_eq!(shortcut.admit(&clock), None, "HALF-OPEN: ask the circuit");
        circuit.on_success(circuit.generation(), &clock);
        shortcut.refresh(&circuit);
        assert_eq!(
            shortcut.admit(&clock),
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
        assert_eq!(shortcut.admit(&NoTime), None);
        assert!(!shortcut.success_changes_nothing(huge));

        // A huge generation whose low bits are those of the word's field
        // is still another generation.
        let low = Generation::from_raw(5);
        let shortcut = ClosedShortcut {
            word: AtomicU64::new(encode(low, true)),
        };
        assert!(shortcut.success_changes_nothing(low));
        assert!(!shortcut.success_changes_nothing(Generation::from_raw(5 | 1 << 62)));
        assert!(!shortcut.success_changes_nothing(Generation::from_raw(5 | 1 << 63)));
    }

    /// A circuit with `threshold` 1 and `cooldown`, opened at `now`, and its
    /// word.
    fn opened(cooldown: Duration, now: Duration) -> (Circuit, ClosedShortcut) {
        let clock = ManualClock::new();
        clock.advance(now);
        let mut circuit = Circuit::new(1, cooldown);
        circuit.on_failure(circuit.generation(), &clock);
        let shortcut = ClosedShortcut::new();
        shortcut.refresh(&circuit);
        (circuit, shortcut)
    }

    #[test]
    fn open_refuses_before_the_deadline_and_asks_from_it_on() {
        let clock = ManualClock::new();
        let (mut circuit, shortcut) = opened(Duration::from_nanos(10), Duration::ZERO);
        assert_eq!(
            shortcut.admit(&clock),
            Some(Err(Rejected::Open {
                remaining: Duration::from_nanos(10)
            }))
        );
        clock.advance(Duration::from_nanos(9));
        assert_eq!(
            shortcut.admit(&clock),
            Some(Err(Rejected::Open {
                remaining: Duration::from_nanos(1)
            })),
            "one nanosecond before the deadline"
        );
        assert!(!shortcut.success_changes_nothing(circuit.generation()));
        clock.advance(Duration::from_nanos(1));
        assert_eq!(
            shortcut.admit(&clock),
            None,
            "at the deadline the circuit decides who probes (B4)"
        );
        circuit.admit(&clock).expect("the probe");
        shortcut.refresh(&circuit);
        assert_eq!(shortcut.admit(&clock), None, "HALF-OPEN");
    }

    #[test]
    fn a_deadline_keeps_every_nanosecond() {
        let now = Duration::new(3, 123_456_789);
        let (_, shortcut) = opened(Duration::from_nanos(1_000_000_007), now);
        let clock = ManualClock::new();
        clock.advance(now);
        assert_eq!(
            shortcut.admit(&clock),
            Some(Err(Rejected::Open {
                remaining: Duration::from_nanos(1_000_000_007)
            }))
        );
    }

    #[test]
    fn a_reading_past_every_nanosecond_the_word_holds_is_past_the_deadline() {
        struct Late;
        impl Clock for Late {
            fn now(&self) -> Duration {
                Duration::MAX
            }
        }
        let (_, shortcut) = opened(Duration::from_secs(1), Duration::ZERO);
        assert_eq!(
            shortcut.admit(&Late),
            None,
            "cooldown over: ask the circuit"
        );
    }

    #[test]
    fn a_cooldown_that_never_ends_refuses_without_reading_the_clock() {
        struct Unreadable;
        impl Clock for Unreadable {
            fn now(&self) -> Duration {
                panic!("a never-ending cooldown needs no time")
            }
        }
        let (_, shortcut) = opened(Duration::MAX, Duration::from_secs(1));
        assert_eq!(
            shortcut.admit(&Unreadable),
            Some(Err(Rejected::Open {
                remaining: Duration::MAX
            }))
        );
    }

    #[test]
    fn a_deadline_too_far_for_the_word_asks_the_circuit() {
        let last = Duration::from_nanos(NEVER - 1);
        assert_eq!(
            encode_open(Deadline::At(last)),
            (NEVER - 1) << FLAG_BITS | OPEN
        );
        assert_eq!(encode_open(Deadline::At(Duration::from_nanos(NEVER))), ASK);
        assert_eq!(encode_open(Deadline::At(Duration::MAX)), ASK);
        assert_eq!(encode_open(Deadline::Never), NEVER << FLAG_BITS | OPEN);

        let (_, shortcut) = opened(Duration::from_nanos(NEVER), Duration::ZERO);
        assert_eq!(shortcut.admit(&ManualClock::new()), None);
        let (_, shortcut) = opened(Duration::from_nanos(NEVER - 1), Duration::ZERO);
        assert_eq!(
            shortcut.admit(&ManualClock::new()),
            Some(Err(Rejected::Open {
                remaining: Duration::from_nanos(NEVER - 1)
            }))
        );
    }

    #[test]
    fn an_open_word_is_never_mistaken_for_a_closed_one() {
        let (circuit, shortcut) = opened(Duration::ZERO, Duration::ZERO);
        // Deadline 0: the word's deadline field is 0, the OPEN flag alone.
        assert_eq!(shortcut.word.load(Ordering::Relaxed), OPEN);
        assert!(!shortcut.success_changes_nothing(circuit.generation()));
        assert!(!shortcut.success_changes_nothing(Generation::default()));
        assert_eq!(shortcut.admit(&ManualClock::new()), None, "cooldown over");
    }
}
