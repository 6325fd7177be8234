//! A registry's event sink hears every breaker it makes, with its key (O6),
//! and what it hears agrees with the status page (R3).

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};

use retry_breaker::{Event, ManualClock, Phase, Registry, RetryBreaker, State};

use crate::support::panics::quietly;
use crate::support::{ms, panic_message};

#[test]
fn o6_r3_every_key_tells_the_registry_s_sink_and_a_panic_stays_with_its_key() {
    let heard: Arc<Mutex<Vec<(String, Event)>>> = Arc::default();
    let log = Arc::clone(&heard);
    let registry: Registry<String, ManualClock> = Registry::new(
        RetryBreaker::builder().threshold(1).cooldown(ms(10)),
        ManualClock::new(),
    )
    .expect("valid settings")
    .with_event_sink(move |key: &String, event| {
        log.lock().unwrap().push((key.clone(), *event));
        if key == "flaky-sink" && matches!(event, Event::Transition(_)) {
            panic!("the sink broke");
        }
    });

    registry
        .breaker("search")
        .try_acquire()
        .expect("CLOSED admits")
        .failure();
    assert!(registry.breaker("search").try_acquire().is_err(), "B3");
    registry
        .breaker("database")
        .try_acquire()
        .expect("CLOSED admits")
        .success();
    let flaky = registry.breaker("flaky-sink");
    let permit = flaky.try_acquire().expect("CLOSED admits");
    let caught = quietly(|| catch_unwind(AssertUnwindSafe(|| permit.failure())));
    assert_eq!(
        panic_message(&*caught.expect_err("O4: the sink's panic reaches the reporter")),
        "the sink broke"
    );

    // The phase each key was last told it entered, CLOSED if it was told none.
    let mut told: BTreeMap<String, Phase> = BTreeMap::new();
    for (key, event) in heard.lock().unwrap().iter() {
        let last = told.entry(key.clone()).or_insert(Phase::Closed);
        if let Event::Transition(transition) = event {
            *last = transition.to;
        }
    }
    let listed: BTreeMap<String, Phase> = registry
        .states()
        .into_iter()
        .map(|(key, state)| (key, state.phase()))
        .collect();
    assert_eq!(
        listed, told,
        "TODO(14): the status page lists every key the sink heard from, each in the state it \
         was last told (O6, R3)"
    );
    assert_eq!(
        registry.breaker("database").state(),
        State::Closed { failures: 0 },
        "R2: a panic in one key's sink leaves the others alone"
    );
    let refusals: Vec<String> = heard
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, event)| matches!(event, Event::Rejected(_)))
        .map(|(key, _)| key.clone())
        .collect();
    assert_eq!(
        refusals,
        ["search"],
        "O6: each event carries its breaker's key"
    );
}
