//! Step 14 (advanced, optional), one breaker per dependency: a registry
//! hands out a breaker per key, made on first use with shared settings
//! (TODO(14); rules R1-R3).

use std::collections::BTreeMap;
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::Duration;

use retry_breaker::{ManualClock, Phase, Registry, RetryBreaker, State, Transition};

use crate::support::{guard, ms};

/// The status listing in key order, whatever order it came in: the tests of
/// rules other than R3 read the listing through this, so that a listing out
/// of order fails R3's tests and no other's (R3 is where that is diagnosed).
fn by_key<K: Ord, S>(listing: Vec<(K, S)>) -> Vec<(K, S)> {
    let in_key_order: BTreeMap<K, S> = listing.into_iter().collect();
    in_key_order.into_iter().collect()
}

/// Two consecutive failures open a breaker for 10 ms.
fn registry() -> Registry<String, ManualClock> {
    registry_with(2, ManualClock::new())
}

fn registry_with(threshold: u32, clock: ManualClock) -> Registry<String, ManualClock> {
    Registry::new(
        RetryBreaker::builder()
            .threshold(threshold)
            .cooldown(ms(10)),
        clock,
    )
    .expect("valid settings")
}

fn fail(registry: &Registry<String, ManualClock>, key: &str) {
    registry
        .breaker(key)
        .try_acquire()
        .expect("a closed circuit admits")
        .failure();
}

#[test]
fn r1_the_same_key_always_gets_the_same_breaker() {
    let registry = registry();
    let first = registry.breaker("search");
    let again = registry.breaker("search");
    assert!(
        Arc::ptr_eq(&first, &again),
        "R1: a second lookup of \"search\" returned another breaker; keep the first one (TODO(14))"
    );
    assert_eq!(registry.len(), 1, "R1: one key, one breaker (TODO(14))");
}

#[test]
fn r1_a_new_breaker_has_the_registry_settings_and_keeps_its_state() {
    let registry = registry();
    fail(&registry, "search");
    fail(&registry, "search");
    assert_eq!(
        registry.breaker("search").state(),
        State::Open { remaining: ms(10) },
        "R1: two failures through the registry must open the breaker of \"search\" (threshold 2): \
         the failures must land on one breaker that the registry keeps (TODO(14))"
    );
}

/// A control: the settings are checked by provided code; this guards against
/// a registry that would only fail at its first lookup.
#[test]
fn r1_settings_that_cannot_work_are_refused_by_the_registry() {
    let refused =
        Registry::<String, _>::new(RetryBreaker::builder().threshold(0), ManualClock::new());
    assert!(
        refused.is_err(),
        "R1: a registry whose breakers could never be built is a configuration error"
    );
}

/// A key that takes a while to hash, for the race below: every lookup
/// hashes the key, so threads that look up a new key at the same time all
/// spend that while in the lookup, side by side, before any of them can
/// insert it. (A busy loop of fixed length, not a clock: no real time.)
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct SlowKey(usize);

impl std::hash::Hash for SlowKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let mut spin = 0_u64;
        for i in 0..20_000_u64 {
            spin = std::hint::black_box(spin.wrapping_add(i));
        }
        std::hint::black_box(spin);
        self.0.hash(state);
    }
}

/// A race: real threads race for new keys; a registry that inserts without looking again is
/// caught only when they meet inside the gap. Not graded: on a wrong crate its verdict can
/// change from run to run, and a grade must not; `just test` runs it.
///
/// A stress test, like step 10's: the one test here whose verdict on a
/// wrong answer rests on thread timing. A correct registry passes every
/// run. A registry that looks a key up and then inserts without looking
/// again loses only when two threads are between its two locks at once,
/// where no user code runs that a test could pause. So the threads meet at
/// a barrier before each new key, and the key is slow to hash, which keeps
/// every thread that asks inside the shared lookup until all have missed.
/// A registry that inserts without looking again failed 30 runs of 30 on
/// an idle 2-core machine, and 12 of 15 with both cores busy with other
/// work. The sequential R1 tests above catch every other way of handing
/// out two breakers for one key.
#[test]
fn r1_callers_racing_for_new_keys_get_one_breaker_per_key() {
    const THREADS: usize = 4;
    const KEYS: usize = 256;
    let found = guard(
        "R1: racing lookups did not finish: a lock is probably never released (TODO(14))",
        Duration::from_secs(20),
        || {
            let registry: Arc<Registry<SlowKey, ManualClock>> = Arc::new(
                Registry::new(RetryBreaker::builder(), ManualClock::new()).expect("valid settings"),
            );
            let start = Arc::new(Barrier::new(THREADS));
            let workers: Vec<_> = (0..THREADS)
                .map(|_| {
                    let registry = Arc::clone(&registry);
                    let start = Arc::clone(&start);
                    thread::spawn(move || {
                        (0..KEYS)
                            .map(|key| {
                                start.wait();
                                registry.breaker(&SlowKey(key))
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            let found: Vec<Vec<_>> = workers
                .into_iter()
                .map(|worker| worker.join().expect("a worker"))
                .collect();
            (found, Arc::try_unwrap(registry).ok().map(|r| r.len()))
        },
    );
    let (found, len) = found;
    for key in 0..KEYS {
        let kept = found[0][key].clone();
        for thread in &found {
            assert!(
                Arc::ptr_eq(&kept, &thread[key]),
                "R1: two threads asking for the new key \"key{key}\" got two breakers: \
                 create under the exclusive lock, after looking again (TODO(14))"
            );
        }
    }
    assert_eq!(len, Some(KEYS), "R1: one breaker per key (TODO(14))");
}

#[test]
fn r2_failures_of_one_key_never_touch_another() {
    let registry = registry();
    registry
        .breaker("database")
        .try_acquire()
        .unwrap()
        .success();
    fail(&registry, "search");
    fail(&registry, "search");
    assert_eq!(
        registry.breaker("database").state(),
        State::Closed { failures: 0 },
        "R2: the database's breaker moved when the search service failed (TODO(14))"
    );
    assert!(
        registry.breaker("database").try_acquire().is_ok(),
        "R2: the database must still be admitted (TODO(14))"
    );
    assert_eq!(
        registry.breaker("search").state(),
        State::Open { remaining: ms(10) },
        "R2: the search service's own breaker must be open (TODO(14))"
    );
}

/// A race: real threads on many keys at once. Not graded: on a wrong crate its verdict can
/// change from run to run, and a grade must not; `just test` runs it.
#[test]
fn r2_many_threads_on_many_keys_keep_every_key_apart() {
    const THREADS: u32 = 4;
    const KEYS: u32 = 32;
    const ROUNDS: u32 = 25;
    let states = guard(
        "R2: the stress test did not finish: a lock is probably never released (TODO(14))",
        Duration::from_secs(20),
        || {
            // Odd keys fail on every attempt, even keys succeed. The
            // threshold is exactly the number of failures an odd key gets,
            // so an odd key opens only if none of its failures is lost or
            // reset by another key's success.
            let registry = Arc::new(registry_with(THREADS * ROUNDS, ManualClock::new()));
            let start = Arc::new(Barrier::new(THREADS as usize));
            let workers: Vec<_> = (0..THREADS)
                .map(|t| {
                    let registry = Arc::clone(&registry);
                    let start = Arc::clone(&start);
                    thread::spawn(move || {
                        start.wait();
                        for round in 0..ROUNDS {
                            for i in 0..KEYS {
                                // Each thread walks the keys in its own order.
                                let key = (i * (2 * t + 1) + round) % KEYS;
                                let breaker = registry.breaker(&format!("key{key:02}"));
                                let permit = breaker.try_acquire().expect("still closed");
                                if key % 2 == 1 {
                                    permit.failure();
                                } else {
                                    permit.success();
                                }
                            }
                        }
                    })
                })
                .collect();
            for worker in workers {
                worker.join().expect("a worker");
            }
            registry.states()
        },
    );
    assert_eq!(
        states.len(),
        KEYS as usize,
        "R3: the listing must hold every key once (TODO(14))"
    );
    for (key, state) in states {
        let number: u32 = key[3..].parse().expect("a key number");
        let expected = if number % 2 == 1 {
            State::Open { remaining: ms(10) }
        } else {
            State::Closed { failures: 0 }
        };
        assert_eq!(
            state, expected,
            "R2: {key} must only see its own outcomes (TODO(14))"
        );
    }
}

#[test]
fn r2_keys_that_only_look_alike_have_breakers_of_their_own() {
    // Case, whitespace, a prefix, a longer key that starts with the tripped
    // one, and the empty key: all different keys.
    const OTHERS: [&str; 6] = ["Search", " search", "search ", "sea", "search/v2", ""];
    let registry = registry();
    for key in OTHERS {
        registry.breaker(key);
    }
    fail(&registry, "search");
    fail(&registry, "search");
    for key in OTHERS {
        assert_eq!(
            registry.breaker(key).state(),
            State::Closed { failures: 0 },
            "R2: tripping \"search\" moved the breaker of {key:?}, another key (TODO(14))"
        );
    }
    assert_eq!(
        registry.states().len(),
        OTHERS.len() + 1,
        "R2: the listing shows each of the 7 keys separately (TODO(14))"
    );
}

/// A key whose every value hashes the same: only `Eq` tells two apart, as
/// a hash map's own collisions do.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Colliding(&'static str);

impl std::hash::Hash for Colliding {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u8(0);
    }
}

#[test]
fn r2_keys_whose_hashes_collide_have_breakers_of_their_own() {
    let registry: Registry<Colliding, ManualClock> = Registry::new(
        RetryBreaker::builder().threshold(2).cooldown(ms(10)),
        ManualClock::new(),
    )
    .expect("valid settings");
    registry.breaker(&Colliding("database"));
    for _ in 0..2 {
        registry
            .breaker(&Colliding("search"))
            .try_acquire()
            .expect("a closed circuit admits")
            .failure();
    }
    assert_eq!(
        registry.breaker(&Colliding("database")).state(),
        State::Closed { failures: 0 },
        "R2: a key with the same hash as the tripped one shares its breaker: keys are told apart \
         by Eq, a hash is only where to look (TODO(14))"
    );
    assert_eq!(
        by_key(registry.states()),
        [
            (Colliding("database"), State::Closed { failures: 0 }),
            (Colliding("search"), State::Open { remaining: ms(10) }),
        ],
        "R2: the listing shows both keys, each with its own state (TODO(14))"
    );
}

/// A tiny deterministic generator, so that the property below explores the
/// same cases on every run (E9).
struct Cases(u64);

impl Cases {
    fn next(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % below
    }
}

#[test]
fn r1_r2_each_key_behaves_as_a_breaker_of_its_own() {
    // The comparison below means something only if the breakers compared
    // count: two failures open k0's, and k1's still admits.
    let registry = registry_with(2, ManualClock::new());
    fail(&registry, "k0");
    fail(&registry, "k0");
    assert_eq!(
        (
            registry.breaker("k0").state().phase(),
            registry.breaker("k1").state().phase()
        ),
        (Phase::Open, Phase::Closed),
        "R1, R2: two failures open k0's breaker and leave k1's closed (TODO(14), and the core's \
         steps 1-2)"
    );
    let mut cases = Cases(0x2026_1129);
    for case in 0..200 {
        let clock = ManualClock::new();
        let registry = registry_with(2, clock.clone());
        // The model: one breaker per key, built apart, fed the same outcomes.
        let alone: Vec<RetryBreaker<ManualClock>> = (0..3)
            .map(|_| {
                RetryBreaker::builder()
                    .threshold(2)
                    .cooldown(ms(10))
                    .build(clock.clone())
                    .unwrap()
            })
            .collect();
        let mut script = Vec::new();
        for _ in 0..30 {
            let key = cases.next(3) as usize;
            let step = cases.next(4);
            script.push((key, step));
            if step == 3 {
                clock.advance(ms(4));
                continue;
            }
            let name = format!("k{key}");
            let breaker = registry.breaker(&name);
            let shared = breaker.try_acquire();
            let own = alone[key].try_acquire();
            assert_eq!(
                shared.is_ok(),
                own.is_ok(),
                "R1, R2: case {case}, after {script:?}: k{key} was admitted differently \
                 than a breaker of its own would be: the same breaker every time, shared with \
                 no other key (TODO(14))"
            );
            if let (Ok(shared), Ok(own)) = (shared, own) {
                if step == 0 {
                    shared.success();
                    own.success();
                } else {
                    shared.failure();
                    own.failure();
                }
            }
            for (k, breaker) in alone.iter().enumerate() {
                if let Some(found) = registry.get(&format!("k{k}")) {
                    assert_eq!(
                        found.state(),
                        breaker.state(),
                        "R1, R2: case {case}, after {script:?}: k{k} differs from a breaker of its \
                         own: the same breaker every time, shared with no other key (TODO(14))"
                    );
                }
            }
        }
    }
}

#[test]
fn r3_the_listing_names_every_key_with_its_state_in_order() {
    let registry = registry();
    registry.breaker("refunds");
    fail(&registry, "charges");
    fail(&registry, "charges");
    registry.breaker("accounts");
    // In key order whatever order it came in: the order is the next test's
    // (with three keys a map's order is sorted now and then by chance, and
    // a grade's verdict must not change from run to run).
    let listing = registry.states();
    let listed: BTreeMap<String, State> = listing.iter().cloned().collect();
    assert_eq!(
        listing.len(),
        listed.len(),
        "R3: the status listing shows each key once (TODO(14))"
    );
    assert_eq!(
        listed,
        BTreeMap::from([
            ("accounts".to_owned(), State::Closed { failures: 0 }),
            ("charges".to_owned(), State::Open { remaining: ms(10) }),
            ("refunds".to_owned(), State::Closed { failures: 0 }),
        ]),
        "R3: the status listing shows each key with its breaker's state (TODO(14))"
    );
}

#[test]
fn r3_the_listing_is_sorted_by_key_however_the_keys_arrived() {
    // A hash map iterates in an order that changes from run to run, and
    // with a handful of keys that order is now and then sorted by chance.
    // With 40 keys made in a scrambled order it never is (the odds are
    // 1 in 40!), so only a listing that sorts passes every run.
    const KEYS: u64 = 40;
    let registry = registry();
    // 17 and 40 share no factor, so this visits every key once, out of order.
    let made: Vec<String> = (0..KEYS)
        .map(|i| format!("route-{:02}", i * 17 % KEYS))
        .collect();
    for key in &made {
        registry.breaker(key);
    }
    fail(&registry, "route-07");
    fail(&registry, "route-07");
    let mut sorted = made.clone();
    sorted.sort();
    let listed: Vec<String> = registry.states().into_iter().map(|(key, _)| key).collect();
    // What is listed, then its order: a listing in a map's order changes
    // from run to run, so the second message shows none of it, and a
    // grade's bytes stay the same on every run.
    let mut keys = listed.clone();
    keys.sort();
    assert_eq!(
        keys, sorted,
        "R3: the status listing names every key once (TODO(14))"
    );
    assert!(
        listed == sorted,
        "R3: the status listing is sorted by key, not in the map's order: the {KEYS} keys are \
         all there, in another order (TODO(14))"
    );
    let states = registry.states();
    assert_eq!(
        states[7],
        ("route-07".to_owned(), State::Open { remaining: ms(10) }),
        "R3: each key is listed with its own breaker's state (TODO(14))"
    );
}

#[test]
fn r3_a_lookup_without_creating_finds_only_existing_keys() {
    let registry = registry();
    assert!(registry.get("search").is_none(), "R3: get never creates");
    let made = registry.breaker("search");
    let found = registry.get("search");
    assert!(
        found.is_some_and(|found| Arc::ptr_eq(&found, &made)),
        "R3: get must find the breaker that breaker() made and kept (TODO(14))"
    );
    assert_eq!(registry.len(), 1, "R3: one key so far (TODO(14))");
}

/// What a registry's hook heard: each key with the phase it moved to.
type Heard = Arc<Mutex<Vec<(String, Phase)>>>;

/// A registry whose every breaker (threshold 2, 10 ms) writes its key and
/// each transition's end into the returned log.
fn heard_registry() -> (Registry<String, ManualClock>, Heard) {
    let heard = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&heard);
    let registry = Registry::with_transition_hook(
        RetryBreaker::builder().threshold(2).cooldown(ms(10)),
        ManualClock::new(),
        move |key: &String, transition: &Transition| {
            log.lock().unwrap().push((key.clone(), transition.to));
        },
    )
    .expect("valid settings");
    (registry, heard)
}

#[test]
fn r4_the_registry_hook_hears_each_transition_of_every_key_once_with_its_key() {
    let (registry, heard) = heard_registry();
    fail(&registry, "search");
    fail(&registry, "database");
    fail(&registry, "search");
    registry
        .breaker("database")
        .try_acquire()
        .unwrap()
        .success();
    fail(&registry, "database");
    fail(&registry, "database");
    assert_eq!(
        *heard.lock().unwrap(),
        [
            ("search".to_owned(), Phase::Open),
            ("database".to_owned(), Phase::Open),
        ],
        "R4: each key's breaker opened once, after its own two failures in a row, and the \
         registry's hook heard each transition once, with its key: every lookup of a key must \
         give the breaker the registry made for it with `self.fresh(&key)` (TODO(14))"
    );
}

#[test]
fn r4_a_panicking_registry_hook_reaches_its_caller_and_every_key_keeps_working() {
    let registry = Registry::with_transition_hook(
        RetryBreaker::builder().threshold(1).cooldown(ms(10)),
        ManualClock::new(),
        |key: &String, _: &Transition| {
            if key == "search" {
                panic!("the search hook fails");
            }
        },
    )
    .expect("valid settings");
    let search = registry.breaker("search");
    let permit = search.try_acquire().expect("a closed circuit admits");
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| permit.failure()));
    assert!(
        caught.is_err(),
        "R4, B11: the hook's panic reaches the caller whose failure opened the circuit"
    );
    assert_eq!(
        registry.breaker("search").state(),
        State::Open { remaining: ms(10) },
        "R4, B11: the transition happened and the breaker is not wedged by its hook's panic \
         (TODO(14))"
    );
    let database = registry.breaker("database");
    database
        .try_acquire()
        .expect("a closed circuit admits")
        .success();
    assert_eq!(
        by_key(registry.states()),
        [
            ("database".to_owned(), State::Closed { failures: 0 }),
            ("search".to_owned(), State::Open { remaining: ms(10) }),
        ],
        "R4: the registry and the other keys keep working after one key's hook panicked \
         (TODO(14))"
    );
}

#[test]
fn r1_forgetting_unused_keys_keeps_every_breaker_in_use_and_every_one_with_something_to_remember() {
    let registry = registry();
    registry.breaker("clean").try_acquire().unwrap().success();
    fail(&registry, "counting");
    fail(&registry, "open");
    fail(&registry, "open");
    let held = registry.breaker("held");
    assert_eq!(
        registry.len(),
        4,
        "R1: four keys looked up, four breakers kept (TODO(14))"
    );
    assert_eq!(
        registry.forget_unused(),
        1,
        "R1: only the clean breaker that nobody holds is forgotten (TODO(14))"
    );
    assert_eq!(
        by_key(registry.states()),
        [
            ("counting".to_owned(), State::Closed { failures: 1 }),
            ("held".to_owned(), State::Closed { failures: 0 }),
            ("open".to_owned(), State::Open { remaining: ms(10) }),
        ],
        "R1: a failure counted, an open circuit and a breaker in use are all kept (TODO(14))"
    );
    assert!(
        Arc::ptr_eq(&held, &registry.breaker("held")),
        "R1: the breaker someone holds is still the key's breaker (TODO(14))"
    );
    assert_eq!(
        registry.breaker("clean").state(),
        State::Closed { failures: 0 },
        "R1: a forgotten key comes back as a fresh breaker, in the state it was forgotten in"
    );
    assert_eq!(
        registry.forget_unused(),
        1,
        "R1: and can be forgotten again"
    );
    drop(held);
    for key in ["a", "b"] {
        registry.breaker(key).try_acquire().unwrap().success();
    }
    assert_eq!(
        registry.forget_unused(),
        3,
        "R1: once no one holds it, the clean breaker of \"held\" goes too, with the two new \
         clean ones: three of five forgotten (TODO(14))"
    );
    assert_eq!(
        registry.len(),
        2,
        "R1: the failure counted and the open circuit stay"
    );
}

#[test]
fn r1_a_key_no_lookup_asked_for_in_a_whole_period_is_forgotten_whatever_it_remembers() {
    let registry = registry();
    fail(&registry, "open");
    fail(&registry, "open");
    registry.breaker("busy").try_acquire().unwrap().success();
    let held = registry.breaker("held");
    assert_eq!(
        registry.forget_idle(),
        0,
        "R1: every key was asked for in the first period, so none is forgotten (TODO(14))"
    );
    registry.breaker("busy");
    assert_eq!(
        registry.forget_idle(),
        1,
        "R1: a period later only \"busy\" was asked for again: the idle open breaker goes, the \
         held one stays (TODO(14))"
    );
    // In any order: the listing's order is R3's business, checked on its own.
    let kept: BTreeMap<String, State> = registry.states().into_iter().collect();
    assert_eq!(
        kept,
        BTreeMap::from([
            ("busy".to_owned(), State::Closed { failures: 0 }),
            ("held".to_owned(), State::Closed { failures: 0 }),
        ]),
        "R1: the breaker of \"open\" is forgotten with its open circuit (TODO(14))"
    );
    assert!(
        Arc::ptr_eq(&held, &registry.breaker("held")),
        "R1: however idle, a breaker someone holds stays the key's breaker (TODO(14))"
    );
    assert_eq!(
        registry.breaker("open").state(),
        State::Closed { failures: 0 },
        "R1: a forgotten key comes back as a fresh, closed breaker"
    );
    drop(held);
    assert_eq!(
        registry.forget_idle(),
        1,
        "R1: \"busy\" went a whole period without a lookup; \"held\" and \"open\" were just \
         asked for (TODO(14))"
    );
    assert_eq!(
        registry.forget_idle(),
        2,
        "R1: a period later no one asked for them either, and no one holds them (TODO(14))"
    );
    assert!(registry.is_empty());
}

/// A race: real lookups on threads against `forget_idle` on another. Not graded: on a wrong
/// crate its verdict can change from run to run, and a grade must not; `just test` runs it.
#[test]
fn r1_however_lookups_and_idle_forgetting_interleave_a_key_never_has_two_live_breakers() {
    guard(
        "a lookup racing `forget_idle` did not end: TODO(14)",
        Duration::from_secs(20),
        || {
            let registry = Arc::new(registry());
            let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let forgetter = {
                let (registry, stop) = (Arc::clone(&registry), Arc::clone(&stop));
                thread::spawn(move || {
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        registry.forget_idle();
                    }
                })
            };
            for _ in 0..2_000 {
                let held = registry.breaker("k");
                registry.forget_idle();
                registry.forget_idle();
                assert!(
                    Arc::ptr_eq(&held, &registry.breaker("k")),
                    "R1: a breaker in use was forgotten however idle (TODO(14))"
                );
            }
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            forgetter.join().unwrap();
        },
    );
}

/// A race: real lookups on threads against `forget_unused` on another. Not graded: on a wrong
/// crate its verdict can change from run to run, and a grade must not; `just test` runs it.
#[test]
fn r1_however_lookups_and_forgetting_interleave_a_key_never_has_two_live_breakers() {
    guard(
        "a lookup racing `forget_unused` did not end: TODO(14)",
        Duration::from_secs(20),
        || {
            let registry = Arc::new(registry());
            let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let forgetter = {
                let (registry, stop) = (Arc::clone(&registry), Arc::clone(&stop));
                thread::spawn(move || {
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        registry.forget_unused();
                    }
                })
            };
            let lookers: Vec<_> = (0..2)
                .map(|_| {
                    let registry = Arc::clone(&registry);
                    thread::spawn(move || {
                        for _ in 0..2_000 {
                            let held = registry.breaker("k");
                            let again = registry.breaker("k");
                            assert!(
                                Arc::ptr_eq(&held, &again),
                                "R1: while one caller held the key's breaker, a lookup got \
                                 another: a breaker in use was forgotten, or never kept \
                                 (TODO(14))"
                            );
                        }
                    })
                })
                .collect();
            for looker in lookers {
                looker.join().unwrap();
            }
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            forgetter.join().unwrap();
        },
    );
}

mod events;
