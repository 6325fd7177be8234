//! The fleet's properties over random nemesis schedules: whatever the link
//! does (delay, loss, duplication, reordering, partitions, outages, a
//! store that forgets every key), the
//! fleet probes once at a time, stale news changes nothing, a recovered
//! dependency leaves no node open, and nothing is counted twice.

mod common;

use std::num::NonZeroU32;
use std::time::Duration;

use common::{COOLDOWN, Call, Fleet, PROBE_DEADLINE, THRESHOLD, settings};
use proptest::prelude::*;
use retry_breaker_fleet::{
    Applied, Event, FleetMessage, FleetNode, FleetSettings, Nemesis, NodeId, Refused, Stamp,
};
use retry_breaker_solution::{ManualClock, RetryBreaker};

const NODES: u32 = 5;

#[derive(Debug, Clone)]
enum Step {
    Call(usize),
    HangProbe(usize),
    Sync(usize),
    SyncAll,
    Advance(Duration),
    Dependency(bool),
    Partition(usize),
    Heal,
    StoreDown(bool),
    /// The store loses every key (a flush, a failover, a restart empty).
    Forget,
}

fn step() -> impl Strategy<Value = Step> {
    let node = 0..NODES as usize;
    prop_oneof![
        6 => node.clone().prop_map(Step::Call),
        1 => node.clone().prop_map(Step::HangProbe),
        3 => node.clone().prop_map(Step::Sync),
        3 => Just(Step::SyncAll),
        4 => (0u64..4_000).prop_map(|ms| Step::Advance(Duration::from_millis(ms))),
        2 => any::<bool>().prop_map(Step::Dependency),
        1 => node.prop_map(Step::Partition),
        1 => Just(Step::Heal),
        1 => any::<bool>().prop_map(Step::StoreDown),
        1 => Just(Step::Forget),
    ]
}

fn nemesis() -> impl Strategy<Value = Nemesis> {
    (0u64..3_000, any::<bool>(), 0u32..400, 0u32..400, 0u32..50).prop_map(
        |(delay, reorder, loss, duplicate, garble)| Nemesis {
            max_delay: Duration::from_millis(delay),
            reorder,
            loss_per_mille: loss,
            duplicate_per_mille: duplicate,
            garble_per_mille: garble,
            ..Nemesis::default()
        },
    )
}

/// The fleet's settings: one node's trip opens it, or (F5) its nodes'
/// failures add up to the threshold.
fn opening(shared: bool) -> FleetSettings {
    if shared {
        settings().with_shared_count(NonZeroU32::new(THRESHOLD).unwrap())
    } else {
        settings()
    }
}

fn run(fleet: &mut Fleet, steps: &[Step]) {
    for step in steps {
        match *step {
            Step::Call(index) => {
                let degraded_and_due = fleet.nodes[index].is_degraded();
                let call = fleet.call(index);
                // F4: cut off from the store, a node never waits for a
                // fleet probe it could not hear about.
                if degraded_and_due {
                    assert_ne!(call, Call::Refused(Refused::AwaitingFleetProbe));
                }
            }
            Step::HangProbe(index) => {
                fleet.hang_probe(index);
            }
            Step::Sync(index) => {
                fleet.nodes[index].sync_blocking(&fleet.store);
            }
            Step::SyncAll => fleet.sync_all(),
            Step::Advance(by) => fleet.advance(by),
            Step::Dependency(up) => fleet.dependency_up = up,
            Step::Partition(index) => fleet.store.update_nemesis(|nemesis| {
                nemesis.partitioned.insert(NodeId(index as u32));
            }),
            Step::Heal => fleet
                .store
                .update_nemesis(|nemesis| nemesis.partitioned.clear()),
            Step::StoreDown(down) => fleet.store.update_nemesis(|nemesis| nemesis.down = down),
            Step::Forget => fleet.store.forget(),
        }
    }
}

/// The seed the simulation draws its schedules from: fixed, so that the
/// suite's verdict is the same on every run, unless `FLEET_SEED` says
/// otherwise (`just fleet-sim` explores fresh seeds, each failure replayed
/// by the seed it prints).
const SEED: u64 = 20_261_202;

fn seed() -> u64 {
    std::env::var("FLEET_SEED")
        .ok()
        .and_then(|seed| seed.trim().parse().ok())
        .unwrap_or(SEED)
}

fn cases() -> u32 {
    std::env::var("FLEET_CASES")
        .ok()
        .and_then(|cases| cases.trim().parse().ok())
        .unwrap_or(128)
}

/// What a failure says, so that it can be run again exactly.
fn replay() -> String {
    format!(
        "seed {seed}; replay with `just fleet-sim {seed}` (or FLEET_SEED={seed} cargo test -p \
         retry-breaker-fleet --test properties)",
        seed = seed()
    )
}

proptest! {
    // The same cases on every run: a verdict that depends on the run's
    // random seed is no verdict. What fresh seeds find is kept as a named
    // test (the late probe below) or in `properties.proptest-regressions`,
    // which is replayed first.
    #![proptest_config(ProptestConfig {
        cases: cases(),
        rng_seed: proptest::test_runner::RngSeed::Fixed(seed()),
        ..ProptestConfig::default()
    })]

    /// F3: the lease lives in the store, so whatever happens to the
    /// messages, no two fleet probes are ever in flight at once (a probe is
    /// in flight until it reports or until its deadline, when its lease
    /// expires and its outcome is fenced).
    #[test]
    fn at_most_one_fleet_probe_in_flight(
        nemesis in nemesis(),
        seed in any::<u64>(),
        shared in any::<bool>(),
        steps in prop::collection::vec(step(), 1..200),
    ) {
        let mut fleet = Fleet::new(NODES, opening(shared), nemesis, seed);
        run(&mut fleet, &steps);
        prop_assert_eq!(fleet.overlapping_probes(), None, "{}", replay());
    }

    /// F3 whatever the store forgets: with a fleet probe out (answering or
    /// hung), the store losing every key at any moment, once or again and
    /// again, never lets a second fleet probe start while it is in flight.
    #[test]
    fn a_store_that_forgets_never_lets_two_fleet_probes_overlap(
        hang in any::<bool>(),
        steps in prop::collection::vec(
            prop_oneof![
                3 => Just(Step::Forget),
                4 => (0..NODES as usize).prop_map(Step::Sync),
                4 => (0..NODES as usize).prop_map(Step::Call),
                1 => (0..NODES as usize).prop_map(Step::HangProbe),
                3 => (0u64..300).prop_map(|ms| Step::Advance(Duration::from_millis(ms))),
            ],
            1..80,
        ),
    ) {
        let mut fleet = Fleet::new(NODES, settings(), Nemesis::default(), 0);
        fleet.dependency_up = false;
        for _ in 0..THRESHOLD {
            fleet.call(0);
        }
        fleet.sync_all();
        fleet.advance(COOLDOWN);
        fleet.sync_all();
        let holder = (0..NODES as usize).find(|&i| fleet.nodes[i].holds_lease());
        prop_assert!(holder.is_some(), "one node holds the lease at the end of the cooldown");
        if hang {
            fleet.hang_probe(holder.unwrap_or_default());
        }
        run(&mut fleet, &steps);
        prop_assert_eq!(fleet.overlapping_probes(), None, "{}", replay());
    }

    /// F2, F3: once the link heals and the dependency is back, one probe
    /// closes the fleet and no node is left open, however the incident went.
    #[test]
    fn no_node_is_left_open_after_the_dependency_recovered_and_a_probe_succeeded(
        nemesis in nemesis(),
        seed in any::<u64>(),
        shared in any::<bool>(),
        steps in prop::collection::vec(step(), 1..200),
    ) {
        recovers(nemesis, seed, shared, &steps)?;
    }

    /// F2: nothing is counted twice. A node applies each piece of news at
    /// most once, a stale trip is fenced, a stale message never reopens a
    /// closed fleet or closes an open one (a stale close may still end the
    /// trips before it), and a node publishes each local trip once.
    #[test]
    fn stale_news_changes_nothing_and_nothing_counts_twice(
        messages in prop::collection::vec((0u64..6, 0u32..4, any::<bool>()), 1..60),
    ) {
        let node = FleetNode::new(
            NodeId(99),
            "db",
            RetryBreaker::new(3, COOLDOWN, ManualClock::new()).unwrap(),
            settings(),
        )
        .unwrap();
        let mut newest = Stamp::default();
        // A stamp names one message: the same stamp again is that message
        // again, a duplicate, never a trip and a close at once.
        let mut said = std::collections::HashMap::new();
        for (epoch, sender, trip) in messages {
            let trip = *said.entry((epoch, sender)).or_insert(trip);
            let message = FleetMessage {
                key: "db".into(),
                stamp: Stamp::new(epoch, NodeId(sender)),
                event: if trip {
                    Event::Trip { cooldown_left: COOLDOWN }
                } else {
                    Event::Close
                },
            };
            let open_before = node.fleet_is_open();
            let applied = node.apply(&message);
            if message.stamp <= newest {
                if trip {
                    prop_assert_eq!(applied, Applied::Fenced, "stale {}", message);
                }
                prop_assert_eq!(node.fleet_is_open(), open_before, "stale {}", message);
            } else {
                newest = message.stamp;
                prop_assert_eq!(node.fleet_is_open(), trip, "newest {}", message);
            }
            prop_assert_eq!(node.apply(&message), Applied::Fenced, "twice: {}", message);
        }
    }

    /// Over a whole random run, each node applies at most the messages the
    /// fleet published (duplicates are fenced, not applied again), and
    /// every call that reached the dependency was a call a node admitted.
    #[test]
    fn duplicates_are_fenced_not_applied(
        nemesis in nemesis(),
        seed in any::<u64>(),
        steps in prop::collection::vec(step(), 1..200),
    ) {
        let mut fleet = Fleet::new(NODES, settings(), nemesis, seed);
        run(&mut fleet, &steps);
        let published: u64 = fleet.nodes.iter().map(|node| node.stats().published).sum();
        for node in &fleet.nodes {
            let stats = node.stats();
            prop_assert!(stats.applied <= published, "{:?}: {:?}", node.id(), stats);
        }
    }
}

/// The recovery property of one run: once the link heals and the dependency
/// is back, one probe closes the fleet and no node is left open.
fn recovers(
    nemesis: Nemesis,
    seed: u64,
    shared: bool,
    steps: &[Step],
) -> Result<(), TestCaseError> {
    let mut fleet = Fleet::new(NODES, opening(shared), nemesis, seed);
    run(&mut fleet, steps);
    fleet.store.set_nemesis(Nemesis::default());
    fleet.dependency_up = true;
    // Out of any cooldown (a failed probe's included) and any lease.
    fleet.advance(COOLDOWN + PROBE_DEADLINE);
    // A trip sent in the same epoch as the close may outrank it (the
    // node breaks the tie), and costs one more probe: each round lets
    // a lease expire.
    for _ in 0..4 {
        fleet.sync_all();
        for index in 0..NODES as usize {
            fleet.call(index);
        }
        fleet.sync_all();
        fleet.advance(PROBE_DEADLINE);
    }
    fleet.sync_all();
    for index in 0..NODES as usize {
        prop_assert_eq!(
            fleet.call(index),
            Call::Served,
            "node {}; {}",
            index,
            replay()
        );
    }
    prop_assert_eq!(fleet.overlapping_probes(), None, "{}", replay());
    Ok(())
}

/// A schedule a fresh random seed found, shrunk: node 3 takes the lease at
/// 10 s and probes at 10.552 s, then hangs; node 0 takes the lease when it
/// expires and probes at 11.496 s. The hung probe's deadline is the lease's
/// end, 11 s, not a full probe deadline after it was admitted (F3), so the
/// two never overlap; a harness that counted the latter reported one.
#[test]
fn a_hung_probe_admitted_late_in_its_lease_ends_with_the_lease() {
    use Step::*;
    let ms = Duration::from_millis;
    let steps = [
        Dependency(false),
        Call(0),
        Call(0),
        Call(3),
        Call(3),
        Call(3),
        Advance(ms(1_496)),
        Call(0),
        Advance(ms(1_344)),
        Advance(ms(188)),
        Advance(ms(3_222)),
        Advance(ms(1_485)),
        Advance(ms(2_265)),
        SyncAll,
        Advance(ms(552)),
        HangProbe(3),
        Advance(ms(944)),
        Sync(0),
        Call(0),
    ];
    recovers(Nemesis::default(), 0, false, &steps).unwrap();
}
