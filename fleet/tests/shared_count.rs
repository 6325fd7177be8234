//! F5, a fleet that adds its nodes' failures up: runs of consecutive
//! failures seen on different nodes open the fleet together, on the
//! in-memory store and the manual clock.

mod common;

use std::num::NonZeroU32;
use std::time::Duration;

use common::{COOLDOWN, Call, Fleet, PROBE_DEADLINE, THRESHOLD, settings};
use retry_breaker_fleet::{
    Applied, Event, FleetMessage, FleetNode, FleetSettings, FleetStore, MemoryStore, Nemesis,
    NodeId, Refused, Stamp,
};
use retry_breaker_solution::{ManualClock, Phase, RetryBreaker};

/// `size` nodes that open the fleet at THRESHOLD failures in a row, on any
/// nodes, behind a dependency that is down.
fn counting(size: u32) -> Fleet {
    let shared = settings().with_shared_count(NonZeroU32::new(THRESHOLD).unwrap());
    let mut fleet = Fleet::new(size, shared, Nemesis::default(), 0);
    // Well after the clock's start, so that no time counted from zero can
    // pass for one counted from the last read.
    fleet.advance(COOLDOWN * 3);
    fleet.sync_all();
    fleet.dependency_up = false;
    fleet
}

fn refuses_as_open(fleet: &mut Fleet, index: usize) -> bool {
    matches!(fleet.call(index), Call::Refused(Refused::FleetOpen { .. }))
}

#[test]
fn f5_failures_on_different_nodes_add_up_and_open_the_whole_fleet() {
    let mut fleet = counting(4);
    // THRESHOLD - 1 failures, one per node, each below any node's own
    // threshold.
    for index in 0..(THRESHOLD - 1) as usize {
        assert_eq!(fleet.call(index), Call::Failed);
    }
    fleet.sync_all();
    fleet.sync_all();
    assert!(
        !fleet.nodes[3].fleet_is_open(),
        "F5: one short of the count"
    );
    assert_eq!(fleet.call(3), Call::Failed);
    assert!(
        fleet.nodes[3].fleet_is_open(),
        "F5: the failure that makes the count opens the fleet at once on its node"
    );
    // One round for node 3 to send its trip, one for the others to hear it.
    fleet.sync_all();
    fleet.sync_all();
    for index in 0..4 {
        assert!(refuses_as_open(&mut fleet, index), "node {index} refuses");
        assert_eq!(
            fleet.nodes[index].breaker().state().phase(),
            Phase::Closed,
            "F5: no node's own breaker opened: the fleet's count did"
        );
    }
    assert_eq!(
        fleet.reached,
        u64::from(THRESHOLD),
        "exactly the count reached the dependency"
    );
}

#[test]
fn f5_without_a_shared_count_failures_on_different_nodes_open_nothing() {
    let mut fleet = Fleet::with_size(4);
    fleet.dependency_up = false;
    for round in 0..2 {
        for index in 0..4 {
            assert_eq!(
                fleet.call(index),
                Call::Failed,
                "round {round}, node {index}"
            );
        }
        fleet.sync_all();
    }
    assert!(fleet.nodes.iter().all(|node| !node.fleet_is_open()));
}

#[test]
fn f5_a_success_ends_its_nodes_run_for_the_fleet_too() {
    let mut fleet = counting(2);
    for _ in 0..THRESHOLD - 1 {
        assert_eq!(fleet.call(0), Call::Failed);
    }
    fleet.sync_all();
    fleet.dependency_up = true;
    assert_eq!(fleet.call(0), Call::Served);
    fleet.sync_all();
    fleet.dependency_up = false;
    assert_eq!(fleet.call(1), Call::Failed);
    fleet.sync_all();
    assert!(
        fleet.nodes.iter().all(|node| !node.fleet_is_open()),
        "F5: node 0's run ended with its success, so one more failure is not the count"
    );
}

#[test]
fn f5_a_run_heard_more_than_a_cooldown_ago_counts_nothing() {
    let mut fleet = counting(2);
    for _ in 0..THRESHOLD - 1 {
        assert_eq!(fleet.call(0), Call::Failed);
    }
    fleet.sync_all();
    fleet.sync_all();
    // Node 0 goes quiet (or dies) with its run one short of the count.
    fleet.advance(COOLDOWN);
    assert_eq!(fleet.call(1), Call::Failed);
    assert!(
        !fleet.nodes[1].fleet_is_open(),
        "F5: node 0's run is a cooldown old: old news, not part of the count"
    );
    fleet.advance(Duration::from_millis(1));
    let mut fresh = counting(2);
    for _ in 0..THRESHOLD - 1 {
        assert_eq!(fresh.call(0), Call::Failed);
    }
    fresh.sync_all();
    fresh.sync_all();
    fresh.advance(COOLDOWN - Duration::from_millis(1));
    assert_eq!(fresh.call(1), Call::Failed);
    assert!(
        fresh.nodes[1].fleet_is_open(),
        "F5: a run heard just under a cooldown ago still counts"
    );
}

#[test]
fn f5_after_the_fleet_closes_the_count_starts_afresh() {
    let mut fleet = counting(3);
    for index in 0..3 {
        assert_eq!(fleet.call(index), Call::Failed);
        fleet.sync_all();
    }
    fleet.sync_all();
    assert!(fleet.nodes.iter().all(|node| node.fleet_is_open()));
    fleet.advance(COOLDOWN);
    fleet.sync_all();
    fleet.dependency_up = true;
    let holder = (0..3).find(|&i| fleet.nodes[i].holds_lease()).unwrap();
    assert_eq!(fleet.call(holder), Call::Served);
    fleet.sync_all();
    fleet.dependency_up = false;
    // The runs from before the close are over: one new failure is one.
    assert_eq!(fleet.call(0), Call::Failed);
    fleet.sync_all();
    fleet.sync_all();
    assert!(
        fleet.nodes.iter().all(|node| !node.fleet_is_open()),
        "F5: a close starts the count afresh on every node"
    );
}

#[test]
fn f5_stale_duplicated_echoed_or_older_runs_count_once_or_not_at_all() {
    let clock = ManualClock::new();
    let shared = settings().with_shared_count(NonZeroU32::new(3).unwrap());
    let breaker = RetryBreaker::new(THRESHOLD, COOLDOWN, clock.clone()).unwrap();
    let node = FleetNode::new(NodeId(7), "db", breaker, shared).unwrap();
    let run = |epoch, sender, report, run| FleetMessage {
        key: "db".into(),
        stamp: Stamp::new(epoch, NodeId(sender)),
        event: Event::Failures {
            run,
            report,
            fresh_for: COOLDOWN,
        },
    };
    assert_eq!(node.apply(&run(0, 1, 2, 2)), Applied::Counted);
    assert_eq!(node.apply(&run(0, 1, 2, 2)), Applied::Fenced, "a duplicate");
    assert_eq!(
        node.apply(&run(0, 1, 1, 1)),
        Applied::Fenced,
        "an older report"
    );
    assert_eq!(
        node.apply(&run(0, 7, 1, 9)),
        Applied::Fenced,
        "its own run, echoed"
    );
    assert_eq!(
        node.apply(&run(1, 2, 1, 9)),
        Applied::Fenced,
        "another epoch"
    );
    assert!(
        !node.fleet_is_open(),
        "runs alone never open a node by hand"
    );
    // Node 1's run of 2 and one failure here make 3.
    let store = MemoryStore::new(clock.clone());
    store.subscribe(node.id());
    node.try_acquire().unwrap().failure();
    assert!(node.fleet_is_open(), "F5: 2 heard + 1 own = the count");
    node.sync_blocking(&store);
    assert_eq!(
        node.try_acquire().unwrap_err(),
        Refused::FleetOpen {
            remaining: COOLDOWN,
            tripped_by: NodeId(7)
        }
    );
}

#[test]
fn f5_runs_travel_as_one_line_and_a_malformed_one_is_an_error() {
    let message = FleetMessage {
        key: "db".into(),
        stamp: Stamp::new(4, NodeId(2)),
        event: Event::Failures {
            run: 3,
            report: 11,
            fresh_for: Duration::from_millis(2_500),
        },
    };
    let line = message.encode();
    assert_eq!(line, "fleet1 failures db 4 2 11 3 2500");
    assert_eq!(FleetMessage::decode(&line), Ok(message));
    for bad in [
        "fleet1 failures db 4 2 11 3",
        "fleet1 failures db 4 2 11 3 9 9",
        "fleet1 failures db 4 2 eleven 3 9",
        "fleet1 failures db 4 2 11 4294967296 9",
        "fleet1 failures db 4 2 11 3 soon",
    ] {
        assert!(FleetMessage::decode(bad).is_err(), "{bad}");
    }
}

#[test]
fn f5_a_probe_deadline_and_one_probe_still_hold_when_the_count_opened_the_fleet() {
    let mut fleet = counting(3);
    for index in 0..3 {
        assert_eq!(fleet.call(index), Call::Failed);
        fleet.sync_all();
    }
    fleet.sync_all();
    fleet.advance(COOLDOWN);
    fleet.sync_all();
    let holders: Vec<usize> = (0..3).filter(|&i| fleet.nodes[i].holds_lease()).collect();
    assert_eq!(holders.len(), 1, "F3: one lease for the fleet");
    let probe = fleet.nodes[holders[0]].try_acquire().unwrap();
    assert!(probe.is_fleet_probe());
    assert_eq!(
        probe.probe_deadline(),
        Some(COOLDOWN * 4 + PROBE_DEADLINE),
        "F3: the lease's end, a probe deadline after the cooldown"
    );
    for other in (0..3).filter(|&i| i != holders[0]) {
        assert_eq!(
            fleet.nodes[other].try_acquire().unwrap_err(),
            Refused::AwaitingFleetProbe
        );
    }
    probe.failure();
}

#[test]
fn f5_news_of_a_close_starts_the_count_afresh_and_an_attempt_from_before_counts_nothing() {
    let clock = ManualClock::new();
    let shared = settings().with_shared_count(NonZeroU32::new(3).unwrap());
    let breaker = RetryBreaker::new(THRESHOLD + 10, COOLDOWN, clock.clone()).unwrap();
    let node = FleetNode::new(NodeId(7), "db", breaker, shared).unwrap();
    let message = |stamp, event| FleetMessage {
        key: "db".into(),
        stamp,
        event,
    };
    // Node 1's run of 1, and one failure here: 2 of 3.
    let heard = message(
        Stamp::new(0, NodeId(1)),
        Event::Failures {
            run: 1,
            report: 1,
            fresh_for: COOLDOWN,
        },
    );
    assert_eq!(node.apply(&heard), Applied::Counted);
    node.try_acquire().unwrap().failure();
    let admitted_before = node.try_acquire().unwrap();
    // A close this node only hears of (its trip was lost on the way).
    let close = message(Stamp::new(2, NodeId(4)), Event::Close);
    assert_eq!(node.apply(&close), Applied::Closed);
    // An attempt admitted before the close speaks of the old count.
    admitted_before.failure();
    node.try_acquire().unwrap().failure();
    node.try_acquire().unwrap().failure();
    assert!(
        !node.fleet_is_open(),
        "F5: after the close, two new failures are two: node 1's run, this node's own and \
         the attempt admitted before the close are all the old count's"
    );
    node.try_acquire().unwrap().failure();
    assert!(node.fleet_is_open(), "F5: and a third makes the count");
}

#[test]
fn f5_a_node_sends_its_run_only_when_it_changed() {
    let mut fleet = counting(2);
    assert_eq!(fleet.call(0), Call::Failed);
    fleet.sync_all();
    let sent = fleet.nodes[0].stats().published;
    assert_eq!(sent, 1, "F5: the new run of 1 went out");
    fleet.advance(Duration::from_millis(5));
    fleet.sync_all();
    assert_eq!(
        fleet.nodes[0].stats().published,
        sent,
        "F5: an unchanged run is not sent again"
    );
}

#[test]
fn f5_a_run_read_late_counts_only_as_long_as_it_could_have_been_news() {
    let mut fleet = counting(2);
    for _ in 0..THRESHOLD - 1 {
        assert_eq!(fleet.call(0), Call::Failed);
    }
    fleet.nodes[0].sync_blocking(&fleet.store);
    // Node 1 reads next only after a cooldown: node 0's run may have
    // waited in the store all that while, so it is old news.
    fleet.advance(COOLDOWN + Duration::from_millis(1));
    assert_eq!(fleet.call(1), Call::Failed);
    fleet.nodes[1].sync_blocking(&fleet.store);
    assert!(
        !fleet.nodes[1].fleet_is_open(),
        "F5: a run is news for a cooldown from the reader's last read at the latest"
    );
}

#[test]
fn f5_a_nodes_own_run_is_old_news_a_cooldown_after_its_last_failure() {
    let mut fleet = counting(2);
    for _ in 0..THRESHOLD - 1 {
        assert_eq!(fleet.call(0), Call::Failed);
    }
    fleet.advance(COOLDOWN);
    assert_eq!(fleet.call(1), Call::Failed);
    fleet.sync_all();
    fleet.sync_all();
    assert!(
        fleet.nodes.iter().all(|node| !node.fleet_is_open()),
        "F5: node 0's own run ended a cooldown ago, so node 1's one failure is the whole count"
    );
}

/// Requests that reach a dead dependency behind 100 nodes before the whole
/// fleet refuses: one call at a time to the nodes in turn, every node
/// exchanging news after each `round` calls.
fn reached_before_all_refuse(settings: FleetSettings, round: usize) -> u64 {
    let mut fleet = Fleet::new(100, settings, Nemesis::default(), 0);
    fleet.dependency_up = false;
    for call in 0..100_000 {
        fleet.call(call * 37 % 100);
        if (call + 1) % round == 0 {
            fleet.sync_all();
            if (0..100).all(|index| refuses_as_open(&mut fleet, index)) {
                return fleet.reached;
            }
        }
    }
    panic!("the fleet never refused as one");
}

#[test]
fn f5_a_hundred_nodes_stop_within_the_count_plus_the_calls_made_while_the_news_travels() {
    let round = 20;
    let shared = settings().with_shared_count(NonZeroU32::new(THRESHOLD).unwrap());
    let counted = reached_before_all_refuse(shared, round);
    // A run goes out at its node's next exchange and the trip at the next
    // one: two rounds of calls at most go through meanwhile.
    let bound = u64::from(THRESHOLD) + 2 * round as u64;
    assert!(
        counted <= bound,
        "F5: {counted} requests reached the dead dependency, more than the count plus two \
         rounds of news ({bound})"
    );
    let trips_only = reached_before_all_refuse(settings(), round);
    assert!(
        trips_only > bound,
        "without the shared count every node fails on its own first: {trips_only} requests"
    );
}

#[test]
fn f5_the_memory_store_delivers_a_run_and_never_keeps_it_as_the_state() {
    let clock = ManualClock::new();
    let store = MemoryStore::new(clock);
    store.subscribe(NodeId(1));
    let run = FleetMessage {
        key: "db".into(),
        stamp: Stamp::new(0, NodeId(2)),
        event: Event::Failures {
            run: 1,
            report: 1,
            fresh_for: COOLDOWN,
        },
    };
    store.publish(NodeId(2), &run).unwrap();
    assert_eq!(store.read_state(NodeId(1), "db"), Ok(None));
    assert_eq!(store.receive(NodeId(1)), Ok(vec![Ok(run)]));
}

#[test]
fn f5_a_run_kept_while_its_node_was_cut_off_leaves_with_what_is_left_of_its_time() {
    let mut fleet = counting(2);
    for _ in 0..THRESHOLD - 1 {
        assert_eq!(fleet.call(0), Call::Failed);
    }
    // Node 0 is cut off: its run waits in its outbox. Node 1 reads on.
    fleet
        .store
        .update_nemesis(|nemesis| nemesis.partitioned = [NodeId(0)].into());
    fleet.sync_all();
    let nearly = COOLDOWN - Duration::from_millis(100);
    fleet.advance(nearly);
    fleet.nodes[1].sync_blocking(&fleet.store);
    fleet
        .store
        .update_nemesis(|nemesis| nemesis.partitioned.clear());
    fleet.nodes[0].sync_blocking(&fleet.store);
    fleet.nodes[1].sync_blocking(&fleet.store);
    // The run left with 100 ms of its cooldown as news, not a whole one.
    fleet.advance(Duration::from_millis(200));
    assert_eq!(fleet.call(1), Call::Failed);
    assert!(
        !fleet.nodes[1].fleet_is_open(),
        "F5: node 0's run is old news by now: it left its outbox with what was left of its time"
    );
}
