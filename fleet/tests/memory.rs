//! The fleet's rules (F1-F4; F5 has `shared_count.rs`) on the in-memory
//! store and the manual clock: each test sets up one situation and checks
//! what every node does.

mod common;

use std::num::NonZeroU32;
use std::time::Duration;

use common::{COOLDOWN, Call, Fleet, PROBE_DEADLINE, THRESHOLD, settings};
use retry_breaker_fleet::{
    Applied, Event, FleetMessage, FleetNode, FleetSettings, FleetStore, LinkStatus, MemoryStore,
    Nemesis, NodeId, Refused, Stamp,
};
use retry_breaker_solution::{ManualClock, RetryBreaker};

fn trip_node(fleet: &mut Fleet, index: usize) {
    fleet.dependency_up = false;
    for _ in 0..THRESHOLD {
        assert_eq!(fleet.call(index), Call::Failed);
    }
}

/// A fleet of `size` nodes whose node 0 tripped, at the end of the
/// cooldown, every node synced since: with the node that holds the probe
/// lease.
fn at_the_end_of_the_cooldown(size: u32) -> (Fleet, usize) {
    let mut fleet = Fleet::with_size(size);
    trip_node(&mut fleet, 0);
    fleet.sync_all();
    fleet.advance(COOLDOWN);
    fleet.sync_all();
    let holder = (0..size as usize)
        .find(|&i| fleet.nodes[i].holds_lease())
        .expect("one node holds the lease at the end of the cooldown");
    (fleet, holder)
}

#[test]
fn one_nodes_trip_opens_every_node_for_the_rest_of_its_cooldown() {
    let mut fleet = Fleet::with_size(5);
    trip_node(&mut fleet, 0);
    fleet.advance(Duration::from_secs(4));
    fleet.sync_all();
    for index in 1..5 {
        assert_eq!(
            fleet.call(index),
            Call::Refused(Refused::FleetOpen {
                remaining: Duration::from_secs(6),
                tripped_by: NodeId(0),
            }),
            "node {index} opens for what is left of node 0's cooldown"
        );
    }
    assert_eq!(
        fleet.reached,
        u64::from(THRESHOLD),
        "only the tripping node's failures"
    );
}

#[test]
fn admission_never_touches_the_store() {
    // F1: with the store down, a node that never syncs admits as its local
    // breaker does, and no call fails because of the store.
    let mut fleet = Fleet::with_size(2);
    fleet.store.update_nemesis(|nemesis| nemesis.down = true);
    for _ in 0..100 {
        assert_eq!(fleet.call(1), Call::Served);
    }
}

#[test]
fn at_the_end_of_the_cooldown_one_lease_one_probe_and_the_others_wait() {
    let mut fleet = Fleet::with_size(5);
    trip_node(&mut fleet, 0);
    fleet.sync_all();
    fleet.advance(COOLDOWN);
    fleet.sync_all();
    let holders: Vec<usize> = (0..5).filter(|&i| fleet.nodes[i].holds_lease()).collect();
    assert_eq!(holders.len(), 1, "one node holds the lease: {holders:?}");
    assert_eq!(fleet.store.leases_granted(), 1);
    let holder = holders[0];
    for index in (0..5).filter(|&i| i != holder) {
        assert_eq!(
            fleet.call(index),
            Call::Refused(Refused::AwaitingFleetProbe)
        );
    }
    fleet.dependency_up = true;
    let before = fleet.reached;
    assert_eq!(fleet.call(holder), Call::Served);
    assert_eq!(fleet.reached - before, 1);
    assert_eq!(fleet.probes.len(), 1);
    fleet.sync_all();
    for index in 0..5 {
        assert_eq!(
            fleet.call(index),
            Call::Served,
            "node {index} closed with the fleet"
        );
    }
}

#[test]
fn a_failed_fleet_probe_reopens_every_node_for_a_whole_cooldown() {
    let (mut fleet, holder) = at_the_end_of_the_cooldown(3);
    assert_eq!(fleet.call(holder), Call::Failed);
    fleet.sync_all();
    for index in 0..3 {
        assert!(
            matches!(
                fleet.call(index),
                Call::Refused(Refused::FleetOpen { remaining, .. }) if remaining == COOLDOWN
            ),
            "node {index}"
        );
    }
}

#[test]
fn a_probe_admitted_late_in_its_lease_has_only_what_is_left_of_it() {
    let (fleet, holder) = at_the_end_of_the_cooldown(2);
    let other = 1 - holder;
    // The lease was granted at the end of the cooldown; the probe comes
    // later, and its deadline is still the lease's end (F3).
    let late = PROBE_DEADLINE * 3 / 4;
    fleet.advance(late);
    let probe = fleet.nodes[holder].try_acquire().unwrap();
    assert_eq!(probe.probe_deadline(), Some(COOLDOWN + PROBE_DEADLINE));
    // At that deadline, not a full PROBE_DEADLINE after the probe, the
    // lease is free again and the probe's outcome speaks for no one.
    fleet.advance(PROBE_DEADLINE - late);
    fleet.nodes[other].sync_blocking(&fleet.store);
    assert!(fleet.nodes[other].holds_lease());
    probe.success();
    assert_eq!(fleet.nodes[holder].stats().fenced_outcomes, 1);
}

#[test]
fn a_node_killed_mid_probe_frees_the_fleet_when_its_lease_expires_and_its_late_outcome_is_fenced() {
    let (mut fleet, holder) = at_the_end_of_the_cooldown(3);
    let hung = fleet.nodes[holder].try_acquire().unwrap();
    assert!(hung.is_fleet_probe());
    // The holder hangs; the others sync but cannot take the lease yet.
    fleet.advance(PROBE_DEADLINE - Duration::from_millis(1));
    for index in (0..3).filter(|&i| i != holder) {
        fleet.nodes[index].sync_blocking(&fleet.store);
        assert!(!fleet.nodes[index].holds_lease());
    }
    fleet.advance(Duration::from_millis(1));
    let others: Vec<usize> = (0..3).filter(|&i| i != holder).collect();
    for &index in &others {
        fleet.nodes[index].sync_blocking(&fleet.store);
    }
    let successors: Vec<usize> = others
        .iter()
        .copied()
        .filter(|&i| fleet.nodes[i].holds_lease())
        .collect();
    assert_eq!(
        successors.len(),
        1,
        "the expired lease went to one other node"
    );
    // The hung probe answers after its deadline: it speaks for no one.
    let published = fleet.nodes[holder].stats().published;
    hung.success();
    assert_eq!(fleet.nodes[holder].stats().published, published);
    assert_eq!(fleet.nodes[holder].stats().fenced_outcomes, 1);
    fleet.nodes[holder].sync_blocking(&fleet.store);
    assert_eq!(
        fleet.call(
            others
                .iter()
                .copied()
                .find(|&i| i != successors[0])
                .unwrap()
        ),
        Call::Refused(Refused::AwaitingFleetProbe)
    );
}

#[test]
fn a_store_that_forgets_its_keys_mid_probe_grants_no_second_lease_until_the_first_has_ended() {
    // F3 whatever the store forgets: a flush, a failover to a replica that
    // missed the lease, a restart without persistence.
    let (fleet, holder) = at_the_end_of_the_cooldown(3);
    let probe = fleet.nodes[holder].try_acquire().unwrap();
    assert!(probe.is_fleet_probe());
    let others: Vec<usize> = (0..3).filter(|&i| i != holder).collect();
    fleet.advance(Duration::from_millis(10));
    fleet.store.forget();
    // Until the holder's lease would have expired, nobody else gets one,
    // however often they ask.
    let lease_ends = PROBE_DEADLINE - Duration::from_millis(10);
    for _ in 0..3 {
        for &index in &others {
            fleet.nodes[index].sync_blocking(&fleet.store);
            assert!(
                !fleet.nodes[index].holds_lease(),
                "node {index} was granted a lease while node {holder}'s probe may still be out"
            );
        }
        fleet.advance(lease_ends / 4);
    }
    // The forgetting store withholds the lease for one whole time to live
    // from when it noticed, so a little longer than the probe's own.
    fleet.advance(PROBE_DEADLINE);
    for &index in &others {
        fleet.nodes[index].sync_blocking(&fleet.store);
    }
    let successors = others
        .iter()
        .filter(|&&i| fleet.nodes[i].holds_lease())
        .count();
    assert_eq!(
        successors, 1,
        "then one node, and one only, takes the lease"
    );
    drop(probe);
}

#[test]
fn duplicated_replayed_and_overtaken_messages_change_nothing() {
    let clock = ManualClock::new();
    let node = FleetNode::new(
        NodeId(1),
        "db",
        RetryBreaker::new(THRESHOLD, COOLDOWN, clock.clone()).unwrap(),
        settings(),
    )
    .unwrap();
    let trip = |epoch| FleetMessage {
        key: "db".into(),
        stamp: Stamp::new(epoch, NodeId(7)),
        event: Event::Trip {
            cooldown_left: COOLDOWN,
        },
    };
    let close = |epoch| FleetMessage {
        key: "db".into(),
        stamp: Stamp::new(epoch, NodeId(8)),
        event: Event::Close,
    };
    assert_eq!(node.apply(&trip(1)), Applied::Opened);
    assert_eq!(node.apply(&trip(1)), Applied::Fenced, "a duplicate");
    assert_eq!(node.apply(&close(2)), Applied::Closed);
    assert!(!node.fleet_is_open());
    assert_eq!(
        node.apply(&trip(1)),
        Applied::Fenced,
        "a replay never reopens"
    );
    assert!(!node.fleet_is_open());
    assert_eq!(node.apply(&trip(3)), Applied::Opened);
    assert_eq!(
        node.apply(&close(2)),
        Applied::Fenced,
        "an overtaken close never closes"
    );
    assert!(node.fleet_is_open());
    let other_key = FleetMessage {
        key: "cache".into(),
        ..close(9)
    };
    assert_eq!(
        node.apply(&other_key),
        Applied::Fenced,
        "another breaker's news"
    );
    assert!(node.fleet_is_open());
}

#[test]
fn a_malformed_line_from_the_store_is_counted_and_skipped() {
    let mut fleet = Fleet::with_size(2);
    fleet.store.inject("fleet1 trip db not-a-number 0 10000");
    fleet.store.inject("\u{0}garbage");
    fleet.store.inject("fleet9 close db 1 1");
    fleet.sync_all();
    for index in 0..2 {
        assert_eq!(fleet.nodes[index].stats().malformed, 3);
        assert_eq!(fleet.call(index), Call::Served);
    }
}

#[test]
fn bad_settings_are_errors() {
    assert!(FleetSettings::new(Duration::ZERO).is_err());
    assert!(FleetSettings::new(Duration::from_micros(999)).is_err());
    let breaker = || RetryBreaker::new(1, COOLDOWN, ManualClock::new()).unwrap();
    assert!(FleetNode::new(NodeId(1), "", breaker(), settings()).is_err());
    assert!(FleetNode::new(NodeId(1), "two words", breaker(), settings()).is_err());
}

#[test]
fn a_joining_node_reads_the_current_state_before_anything_else() {
    let mut fleet = Fleet::with_size(2);
    trip_node(&mut fleet, 0);
    fleet.sync_all();
    fleet.advance(Duration::from_secs(3));
    // A node that starts now missed the trip's pub/sub message.
    let late = FleetNode::new(
        NodeId(9),
        "db",
        RetryBreaker::new(THRESHOLD, COOLDOWN, fleet.clock.clone()).unwrap(),
        settings(),
    )
    .unwrap();
    assert_eq!(late.link_status(), LinkStatus::Joining);
    fleet.store.subscribe(late.id());
    assert_eq!(late.sync_blocking(&fleet.store), LinkStatus::Up);
    assert_eq!(
        late.try_acquire().unwrap_err(),
        Refused::FleetOpen {
            remaining: Duration::from_secs(7),
            tripped_by: NodeId(0)
        }
    );
}

#[test]
fn with_the_store_down_every_node_serves_locally_says_it_is_degraded_and_rejoins() {
    let mut fleet = Fleet::with_size(3);
    fleet.store.update_nemesis(|nemesis| nemesis.down = true);
    fleet.sync_all();
    assert!(fleet.nodes.iter().all(FleetNode::is_degraded));
    for index in 0..3 {
        assert_eq!(
            fleet.call(index),
            Call::Served,
            "the store's outage fails no call"
        );
    }
    // The local breakers still protect the dependency on their own.
    trip_node(&mut fleet, 1);
    assert!(matches!(
        fleet.call(1),
        Call::Refused(Refused::FleetOpen {
            tripped_by: NodeId(1),
            ..
        })
    ));
    assert_eq!(
        fleet.call(2),
        Call::Failed,
        "no fleet: node 2 has not heard"
    );
    fleet.store.update_nemesis(|nemesis| nemesis.down = false);
    fleet.sync_all();
    assert!(fleet.nodes.iter().all(|node| !node.is_degraded()));
    assert!(fleet.nodes.iter().all(|node| node.stats().joins == 2));
    // Node 1's trip, kept while the store was down, reaches the fleet now.
    fleet.sync_all();
    assert!(matches!(
        fleet.call(0),
        Call::Refused(Refused::FleetOpen { .. })
    ));
}

#[test]
fn a_trip_kept_past_its_cooldown_while_the_store_was_down_is_dropped_not_sent() {
    let mut fleet = Fleet::with_size(2);
    fleet.store.update_nemesis(|nemesis| nemesis.down = true);
    fleet.sync_all();
    trip_node(&mut fleet, 1);
    fleet.advance(COOLDOWN);
    fleet.store.update_nemesis(|nemesis| nemesis.down = false);
    fleet.sync_all();
    let stats = fleet.nodes[1].stats();
    assert_eq!(
        (stats.published, stats.dropped),
        (1, 1),
        "F4: the trip was made, and dropped on rejoining: its cooldown is over"
    );
    fleet.sync_all();
    assert_eq!(
        fleet.nodes[0].stats().applied,
        0,
        "F4: node 0 never hears of a trip whose cooldown ended while it was kept"
    );
}

#[test]
fn a_slow_store_times_out_and_counts_as_down() {
    let mut fleet = Fleet::with_size(2);
    fleet
        .store
        .update_nemesis(|nemesis| nemesis.latency = Duration::from_secs(5));
    assert_eq!(
        fleet.nodes[0].sync_blocking(&fleet.store),
        LinkStatus::Degraded
    );
    assert_eq!(fleet.call(0), Call::Served);
}

#[test]
fn a_partitioned_node_trips_on_its_own_and_reads_the_state_when_healed() {
    let mut fleet = Fleet::with_size(3);
    fleet
        .store
        .update_nemesis(|nemesis| nemesis.partitioned.insert(NodeId(2)).then_some(()).unwrap());
    trip_node(&mut fleet, 0);
    fleet.sync_all();
    assert!(fleet.nodes[2].is_degraded());
    assert!(matches!(
        fleet.call(1),
        Call::Refused(Refused::FleetOpen { .. })
    ));
    assert_eq!(
        fleet.call(2),
        Call::Failed,
        "cut off, node 2 learns on its own"
    );
    fleet
        .store
        .update_nemesis(|nemesis| nemesis.partitioned.clear());
    fleet.sync_all();
    assert!(matches!(
        fleet.call(2),
        Call::Refused(Refused::FleetOpen {
            tripped_by: NodeId(0),
            ..
        })
    ));
}

#[test]
fn a_lost_close_cannot_leave_a_node_waiting_for_good() {
    let mut fleet = Fleet::new(3, settings(), Nemesis::default(), 1);
    trip_node(&mut fleet, 0);
    fleet.sync_all();
    fleet.advance(COOLDOWN);
    fleet.sync_all();
    let holder = (0..3).find(|&i| fleet.nodes[i].holds_lease()).unwrap();
    fleet
        .store
        .update_nemesis(|nemesis| nemesis.loss_per_mille = 1000);
    fleet.dependency_up = true;
    assert_eq!(fleet.call(holder), Call::Served);
    fleet.sync_all();
    // Every copy of the close was lost; a waiting node reads the state.
    for index in 0..3 {
        assert_eq!(fleet.call(index), Call::Served, "node {index}");
    }
}

#[test]
fn with_a_quorum_one_nodes_trip_opens_only_that_node() {
    let quorum = settings().with_quorum(NonZeroU32::new(2).unwrap());
    let mut fleet = Fleet::new(4, quorum, Nemesis::default(), 0);
    trip_node(&mut fleet, 0);
    fleet.sync_all();
    fleet.dependency_up = true;
    assert_eq!(fleet.call(1), Call::Served, "one report is not a quorum");
    fleet.dependency_up = false;
    trip_node(&mut fleet, 1);
    fleet.sync_all();
    for index in 2..4 {
        assert!(
            matches!(fleet.call(index), Call::Refused(Refused::FleetOpen { .. })),
            "node {index}"
        );
    }
}

#[test]
fn the_store_keeps_only_the_newest_state() {
    let clock = ManualClock::new();
    let store = MemoryStore::new(clock.clone());
    let message = |epoch, event| FleetMessage {
        key: "db".into(),
        stamp: Stamp::new(epoch, NodeId(1)),
        event,
    };
    store.publish(NodeId(1), &message(2, Event::Close)).unwrap();
    store
        .publish(
            NodeId(1),
            &message(
                1,
                Event::Trip {
                    cooldown_left: COOLDOWN,
                },
            ),
        )
        .unwrap();
    assert_eq!(
        store.read_state(NodeId(1), "db").unwrap(),
        Some(message(2, Event::Close))
    );
}
