//! A registry with a key limit (L1-L3): it keeps at most so many keys that
//! nobody holds, forgets the least recently used first, and never a key in
//! use (R1).

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

use retry_breaker_solution::{Event, ManualClock, Registry, RetryBreaker, State};

use crate::COOLDOWN;

/// A registry of breakers that open at the first failure, keeping at most
/// `limit` keys nobody holds.
fn bounded(limit: usize) -> Registry<String, ManualClock> {
    let settings = RetryBreaker::builder().threshold(1).cooldown(COOLDOWN);
    Registry::new(settings, ManualClock::new())
        .expect("valid settings")
        .with_key_limit(NonZeroUsize::new(limit).expect("a limit above 0"))
}

/// The registry's keys, sorted.
fn keys(registry: &Registry<String, ManualClock>) -> Vec<String> {
    registry.states().into_iter().map(|(key, _)| key).collect()
}

#[test]
fn l1_a_new_key_past_the_limit_forgets_the_key_created_first_when_none_was_used_since() {
    let registry = bounded(2);
    registry.breaker("a");
    registry.breaker("b");
    assert_eq!(
        keys(&registry),
        ["a", "b"],
        "within the limit, every key stays"
    );
    registry.breaker("c");
    assert_eq!(
        keys(&registry),
        ["b", "c"],
        "L1: \"a\" was used least recently"
    );
    registry.breaker("d");
    assert_eq!(keys(&registry), ["c", "d"]);
}

#[test]
fn l1_a_lookup_makes_a_key_the_most_recently_used_however_old() {
    let registry = bounded(3);
    for key in ["a", "b", "c"] {
        registry.breaker(key);
    }
    registry.breaker("a");
    registry.breaker("d");
    assert_eq!(
        keys(&registry),
        ["a", "c", "d"],
        "L1: \"b\" was used least recently"
    );
    registry.breaker("c");
    registry.breaker("a");
    registry.breaker("e");
    assert_eq!(keys(&registry), ["a", "c", "e"], "L1: then \"d\"");
}

#[test]
fn l1_asking_whether_a_key_has_a_breaker_is_a_use_too() {
    let registry = bounded(2);
    registry.breaker("a");
    registry.breaker("b");
    assert!(registry.get("a").is_some());
    registry.breaker("c");
    assert_eq!(keys(&registry), ["a", "c"]);
}

#[test]
fn l1_looking_up_keys_already_there_forgets_nothing() {
    let registry = bounded(2);
    registry.breaker("a");
    registry.breaker("b");
    for _ in 0..3 {
        for key in ["b", "a"] {
            registry.breaker(key);
        }
    }
    assert_eq!(keys(&registry), ["a", "b"]);
}

#[test]
fn l1_a_limit_of_one_keeps_the_last_key_alone() {
    let registry = bounded(1);
    for key in ["a", "b", "c"] {
        registry.breaker(key).try_acquire().unwrap().failure();
        assert_eq!(keys(&registry), [key]);
    }
}

#[test]
fn l2_a_key_in_use_is_never_forgotten_and_keeps_its_one_breaker() {
    let registry = bounded(1);
    let held = registry.breaker("held");
    held.try_acquire().unwrap().failure();
    for key in ["a", "b", "c"] {
        registry.breaker(key);
        assert_eq!(
            keys(&registry),
            [key, "held"],
            "L2: the key in use stays past the limit; the one let go is forgotten at the next \
             new key"
        );
    }
    assert!(
        Arc::ptr_eq(&held, &registry.breaker("held")),
        "R1: a key in use keeps the breaker its holder has"
    );
    assert_eq!(
        registry.breaker("held").state(),
        State::Open {
            remaining: COOLDOWN
        }
    );
}

#[test]
fn l2_keys_in_use_at_once_all_stay_until_let_go() {
    let registry = bounded(2);
    let held: Vec<_> = ["a", "b", "c", "d"]
        .into_iter()
        .map(|key| registry.breaker(key))
        .collect();
    assert_eq!(
        registry.len(),
        4,
        "L2: four keys in use, all kept past the limit"
    );
    drop(held);
    assert_eq!(registry.len(), 4, "letting go forgets nothing by itself");
    registry.breaker("e");
    assert_eq!(
        keys(&registry),
        ["d", "e"],
        "L1: the next new key brings the registry back within its limit, the most recent kept"
    );
}

#[test]
fn l2_a_permit_holds_its_key_as_its_breaker_does() {
    let registry = bounded(1);
    let breaker = registry.breaker("a");
    let permit = breaker.try_acquire_owned().unwrap();
    drop(breaker);
    registry.breaker("b");
    assert_eq!(
        keys(&registry),
        ["a", "b"],
        "L2: an attempt of \"a\" is in flight"
    );
    permit.failure();
    registry.breaker("c");
    assert_eq!(keys(&registry), ["c"]);
}

#[test]
fn l3_a_forgotten_key_comes_back_closed_with_the_registry_s_sink() {
    let heard = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&heard);
    let registry = bounded(1).with_event_sink(move |key: &String, event: &Event| {
        log.lock().unwrap().push((key.clone(), event.name()));
    });
    registry.breaker("a").try_acquire().unwrap().failure();
    registry.breaker("b");
    assert_eq!(keys(&registry), ["b"]);

    let back = registry.breaker("a");
    assert_eq!(
        back.state(),
        State::Closed { failures: 0 },
        "L3: the open breaker of \"a\" was forgotten; its key comes back closed"
    );
    back.try_acquire().unwrap().success();
    let heard = heard.lock().unwrap();
    assert_eq!(
        heard[heard.len() - 2..],
        [("a".to_owned(), "admitted"), ("a".to_owned(), "recorded")],
        "L3: a breaker made again gets the registry's sink, with its key"
    );
}

#[test]
fn l1_keys_last_used_together_go_one_at_a_time() {
    let registry = bounded(2);
    registry.breaker("a");
    registry.breaker("b");
    // Two lookups with no new key between them rank the same: either may go,
    // but only as many keys as the limit needs.
    registry.breaker("a");
    registry.breaker("b");
    registry.breaker("c");
    assert_eq!(
        registry.len(),
        2,
        "L1: back within the limit, and no further"
    );
    assert!(registry.get("c").is_some(), "the new key stays");
}

#[test]
fn l1_a_key_made_after_another_was_looked_up_is_the_more_recent() {
    // Keys that rank the same go in the map's order, which differs from one
    // registry to the next: were "a" ranked with "x", some of these 64
    // registries would keep "x" (all keep "a" but once in 2^64).
    for _ in 0..64 {
        let registry = bounded(2);
        registry.breaker("x");
        registry.breaker("x");
        registry.breaker("a");
        registry.breaker("b");
        assert_eq!(
            keys(&registry),
            ["a", "b"],
            "L1: \"x\" was last used before \"a\" was made"
        );
    }
}
