//! The fleet over a real `redis-server`, started on a free loopback port in
//! a folder of its own and stopped after each test. Waiting is bounded
//! polling: a test never depends on how fast the server or the machine is,
//! only on its answering within a generous overall bound.

#![cfg(feature = "redis")]

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use retry_breaker_fleet::{
    Event, FleetMessage, FleetNode, FleetSettings, FleetStore, Lease, LinkStatus, NodeId,
    RedisStore, Refused, Stamp,
};
use retry_breaker_solution::{RetryBreaker, SystemClock};

const BOUND: Duration = Duration::from_millis(200);
const PATIENCE: Duration = Duration::from_secs(20);

/// A `redis-server` of the test's own, killed when dropped.
struct Server {
    port: u16,
    dir: PathBuf,
    child: Option<Child>,
}

impl Server {
    fn start() -> Server {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free loopback port")
            .port();
        let dir = std::env::temp_dir().join(format!("fleet-redis-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a folder for redis-server");
        let mut server = Server {
            port,
            dir,
            child: None,
        };
        server.restart();
        server
    }

    /// Starts (again) on the same port, with nothing kept from before.
    fn restart(&mut self) {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|error| {
                panic!(
                    "these tests need redis-server ({error}); install it with \
                     `sudo apt-get install redis-server`"
                )
            });
        self.child = Some(child);
        let address = format!("127.0.0.1:{}", self.port);
        eventually("redis-server to accept connections", || {
            TcpStream::connect(&address).is_ok()
        });
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Makes the server forget every key at once (`FLUSHALL`), as a
    /// failover to an empty replica or a restart without persistence would,
    /// while every node stays connected.
    fn flush(&self) {
        let client = redis::Client::open(self.url()).expect("a client for the test's server");
        let mut connection = client.get_connection().expect("a connection to flush");
        redis::cmd("FLUSHALL")
            .query::<()>(&mut connection)
            .expect("FLUSHALL");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Polls `done` until it holds, failing the test after `PATIENCE`.
fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < PATIENCE, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

struct Member {
    node: FleetNode<SystemClock>,
    store: RedisStore,
}

fn member(server: &Server, id: u32, cooldown: Duration, probe_deadline: Duration) -> Member {
    let breaker = RetryBreaker::new(2, cooldown, SystemClock::new()).unwrap();
    let settings = FleetSettings::new(probe_deadline).unwrap();
    Member {
        node: FleetNode::new(NodeId(id), "db", breaker, settings).unwrap(),
        store: RedisStore::connect(&server.url(), "db", BOUND).unwrap(),
    }
}

/// `size` nodes of a fleet set up on `server` (its witness written first,
/// as when a fleet is deployed), each linked.
fn fleet_on(server: &Server, size: u32, cooldown: Duration, deadline: Duration) -> Vec<Member> {
    let members: Vec<Member> = (0..size)
        .map(|id| member(server, id, cooldown, deadline))
        .collect();
    eventually("the fleet to be set up", || {
        members[0].store.prepare().is_ok()
    });
    linked(&members);
    members
}

fn linked(members: &[Member]) {
    eventually("every node to link up", || {
        members
            .iter()
            .all(|m| m.node.sync_blocking(&m.store) == LinkStatus::Up)
    });
}

fn trip(member: &Member) {
    for _ in 0..2 {
        member.node.try_acquire().unwrap().failure();
    }
    assert!(member.node.try_acquire().is_err());
}

#[test]
fn a_trip_on_one_node_opens_the_others_over_redis() {
    let server = Server::start();
    let members: Vec<Member> = (0..3)
        .map(|id| member(&server, id, Duration::from_secs(60), Duration::from_secs(5)))
        .collect();
    linked(&members);
    trip(&members[0]);
    eventually("nodes 1 and 2 to hear of node 0's trip", || {
        members.iter().for_each(|m| {
            m.node.sync_blocking(&m.store);
        });
        members[1..].iter().all(|m| {
            matches!(
                m.node.try_acquire(),
                Err(Refused::FleetOpen {
                    tripped_by: NodeId(0),
                    ..
                })
            )
        })
    });
    // A node that joins now reads the state, since it missed the message.
    let late = member(&server, 9, Duration::from_secs(60), Duration::from_secs(5));
    linked(std::slice::from_ref(&late));
    assert!(matches!(
        late.node.try_acquire(),
        Err(Refused::FleetOpen { .. })
    ));
}

#[test]
fn failures_on_two_nodes_add_up_over_redis_and_open_both() {
    let server = Server::start();
    let shared = |id| {
        let breaker = RetryBreaker::new(2, Duration::from_secs(60), SystemClock::new()).unwrap();
        let settings = FleetSettings::new(Duration::from_secs(5))
            .unwrap()
            .with_shared_count(std::num::NonZeroU32::new(2).unwrap());
        Member {
            node: FleetNode::new(NodeId(id), "db", breaker, settings).unwrap(),
            store: RedisStore::connect(&server.url(), "db", BOUND).unwrap(),
        }
    };
    let members = [shared(0), shared(1)];
    linked(&members);
    // One failure on each node: neither's own breaker (threshold 2) opens.
    for m in &members {
        m.node.try_acquire().unwrap().failure();
    }
    eventually("the two runs to add up to the count on both nodes", || {
        members.iter().for_each(|m| {
            m.node.sync_blocking(&m.store);
        });
        members.iter().all(|m| {
            matches!(m.node.try_acquire(), Err(Refused::FleetOpen { .. }))
                && m.node.breaker().state().phase() == retry_breaker_solution::Phase::Closed
        })
    });
    let stored = members[0].store.read_state(NodeId(0), "db").unwrap();
    assert!(
        matches!(
            stored,
            Some(FleetMessage {
                event: Event::Trip { .. },
                ..
            })
        ),
        "the trip the count sent is the stored state: {stored:?}"
    );
}

#[test]
fn a_run_of_failures_travels_over_redis_and_is_never_the_stored_state() {
    let server = Server::start();
    let sender = RedisStore::connect(&server.url(), "db", BOUND).unwrap();
    let listener = RedisStore::connect(&server.url(), "db", BOUND).unwrap();
    eventually("the listener to subscribe", || listener.is_subscribed());
    let run = FleetMessage {
        key: "db".into(),
        stamp: Stamp::new(0, NodeId(3)),
        event: Event::Failures {
            run: 2,
            report: 1,
            fresh_for: Duration::from_secs(60),
        },
    };
    eventually("the run to be published", || {
        sender.publish(NodeId(3), &run).is_ok()
    });
    let mut heard = Vec::new();
    eventually("the listener to hear the run", || {
        heard.extend(listener.receive(NodeId(4)).unwrap_or_default());
        !heard.is_empty()
    });
    assert_eq!(heard, [Ok(run)]);
    assert_eq!(
        sender.read_state(NodeId(3), "db"),
        Ok(None),
        "F5: a run is news about the current epoch, never the stored state"
    );
}

#[test]
fn the_lease_is_granted_once_and_released_only_by_its_owner() {
    let server = Server::start();
    let store = RedisStore::connect(&server.url(), "db", BOUND).unwrap();
    eventually("the fleet to be set up", || store.prepare().is_ok());
    let ttl = Duration::from_secs(30);
    let a = Lease::new("db", NodeId(1), Stamp::default(), 1, ttl, Duration::ZERO).unwrap();
    let b = Lease::new("db", NodeId(2), Stamp::default(), 1, ttl, Duration::ZERO).unwrap();
    eventually("the first lease request to reach redis", || {
        store.acquire_lease(NodeId(1), &a).is_ok()
    });
    // Whether the first request was the one answered, the lease is a's.
    assert!(!store.acquire_lease(NodeId(2), &b).unwrap());
    assert!(!store.release_lease(NodeId(2), &b).unwrap());
    assert!(store.release_lease(NodeId(1), &a).unwrap());
    assert!(store.acquire_lease(NodeId(2), &b).unwrap());
}

#[test]
fn a_node_killed_mid_probe_frees_the_fleet_when_its_lease_expires() {
    let server = Server::start();
    let cooldown = Duration::from_millis(300);
    let deadline = Duration::from_millis(500);
    let members: Vec<Member> = (0..2)
        .map(|id| member(&server, id, cooldown, deadline))
        .collect();
    linked(&members);
    trip(&members[0]);
    // Whoever gets the lease first probes, and dies mid-probe.
    let mut dead = None;
    eventually("one node to hold the lease", || {
        for (index, m) in members.iter().enumerate() {
            m.node.sync_blocking(&m.store);
            if m.node.holds_lease() {
                dead = Some(index);
                return true;
            }
        }
        false
    });
    let dead = dead.unwrap();
    let probe = members[dead].node.try_acquire().unwrap();
    assert!(probe.is_fleet_probe());
    std::mem::forget(probe);
    let mut members = members;
    let dead_member = members.remove(dead);
    drop(dead_member.store);
    let survivor = &members[0];
    eventually("the survivor to take the expired lease and probe", || {
        survivor.node.sync_blocking(&survivor.store);
        survivor.node.holds_lease()
            && survivor.node.try_acquire().is_ok_and(|probe| {
                probe.is_fleet_probe() && probe.success() != retry_breaker_solution::Recorded::Stale
            })
    });
    survivor.node.sync_blocking(&survivor.store);
    assert!(survivor.node.try_acquire().is_ok(), "the fleet closed");
}

#[test]
fn redis_killed_and_restarted_mid_incident_fails_no_call() {
    let mut server = Server::start();
    let members: Vec<Member> = (0..3)
        .map(|id| member(&server, id, Duration::from_secs(60), Duration::from_secs(5)))
        .collect();
    linked(&members);
    server.kill();
    // Every node keeps serving on its own: no call fails because of Redis.
    for m in &members[1..] {
        m.node.sync_blocking(&m.store);
        for _ in 0..10 {
            m.node
                .try_acquire()
                .expect("served by the local breaker")
                .success();
        }
    }
    eventually("every node to say it is degraded", || {
        members
            .iter()
            .all(|m| m.node.sync_blocking(&m.store) != LinkStatus::Up)
    });
    // The incident goes on: node 0 trips alone, its trip kept for later.
    trip(&members[0]);
    for m in &members[1..] {
        m.node
            .try_acquire()
            .expect("the others still serve")
            .success();
    }
    server.restart();
    linked(&members);
    eventually(
        "node 0's trip to reach the others after the restart",
        || {
            members.iter().for_each(|m| {
                m.node.sync_blocking(&m.store);
            });
            members[1..]
                .iter()
                .all(|m| matches!(m.node.try_acquire(), Err(Refused::FleetOpen { .. })))
        },
    );
    assert!(
        members.iter().all(|m| m.node.stats().joins >= 2),
        "each read the state again"
    );
}

/// `just fleet --redis`'s run of separate node processes: whatever the
/// timing, Redis killed and restarted mid-incident makes no call fail and
/// loses none (F4), local-only or linked, and every node links up.
#[test]
fn node_processes_over_redis_lose_no_call_when_redis_is_killed_mid_incident() {
    let output = Command::new(env!("CARGO_BIN_EXE_fleet"))
        .arg("--redis-only")
        .output()
        .expect("the fleet program runs");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{text}");
    let sections: Vec<&str> = text.split("\n\n").collect();
    let [_, runs] = sections[..] else {
        panic!("a heading, then the two runs: {text}");
    };
    let (local, linked) = runs
        .split_once("linked over real Redis")
        .unwrap_or_else(|| panic!("a linked run: {text}"));
    for run in [local, linked] {
        let calls = run
            .lines()
            .find(|line| line.trim_start().starts_with("calls:"))
            .unwrap_or_else(|| panic!("a line of calls: {run}"));
        assert!(
            calls.ends_with(" served, 0 failed because of Redis, 0 lost"),
            "F4: {calls}"
        );
    }
    let joins: u32 = linked
        .lines()
        .find_map(|line| {
            line.trim_start()
                .strip_prefix("(re)joins, each reading the state first:")
        })
        .and_then(|count| count.trim().parse().ok())
        .unwrap_or_else(|| panic!("a count of joins: {linked}"));
    assert!(joins >= 5, "every node process linked up: {linked}");
}

/// A probe admitted by `member`, held open until the test lets it go, with
/// the time it was admitted and its deadline on the system clock.
fn fleet_probe(
    member: &Member,
) -> Option<(
    retry_breaker_fleet::FleetPermit<'_, SystemClock>,
    Duration,
    Duration,
)> {
    use retry_breaker_solution::Clock;
    let permit = member.node.try_acquire().ok()?;
    if !permit.is_fleet_probe() {
        permit.success();
        return None;
    }
    let admitted = member.node.breaker().clock().now();
    let deadline = permit.probe_deadline()?;
    Some((permit, admitted, deadline))
}

#[test]
fn a_flush_mid_probe_gives_no_other_node_the_lease_before_the_probe_has_ended() {
    use retry_breaker_solution::Clock;
    let server = Server::start();
    let cooldown = Duration::from_millis(200);
    let deadline = Duration::from_millis(600);
    let members = fleet_on(&server, 3, cooldown, deadline);
    trip(&members[0]);
    let mut probe = None;
    eventually("one node to hold the lease and probe", || {
        for (index, m) in members.iter().enumerate() {
            m.node.sync_blocking(&m.store);
            if m.node.holds_lease() {
                probe = fleet_probe(m).map(|probe| (index, probe));
                return probe.is_some();
            }
        }
        false
    });
    let (holder, (permit, _, probe_ends)) = probe.unwrap();
    server.flush();
    // The probe's deadline is on the holder's clock: so is every reading.
    let clock = members[holder].node.breaker().clock();
    // Until the probe's deadline, however often they ask, nobody else gets
    // the lease; after it, someone does.
    let mut granted_after = None;
    eventually(
        "another node to take the lease after the probe's deadline",
        || {
            for (index, m) in members.iter().enumerate().filter(|(i, _)| *i != holder) {
                let asked = clock.now();
                m.node.sync_blocking(&m.store);
                if m.node.holds_lease() {
                    assert!(
                        asked >= probe_ends,
                        "node {index} took the lease {:?} before node {holder}'s probe ended",
                        probe_ends - asked
                    );
                    granted_after = Some(asked - probe_ends);
                    return true;
                }
            }
            false
        },
    );
    assert!(granted_after.is_some());
    let forgotten: u64 = members.iter().map(|m| m.node.stats().forgotten).sum();
    assert!(forgotten > 0, "the nodes heard that the store forgot");
    assert!(
        members.iter().all(|m| m.node.stats().store_errors == 0),
        "one forgetting, within one probe deadline, degrades no node"
    );
    drop(permit);
}

#[test]
fn redis_flushed_every_25_ms_never_lets_two_fleet_probes_overlap_and_the_nodes_serve_locally() {
    use retry_breaker_solution::Clock;
    let server = Server::start();
    let cooldown = Duration::from_millis(100);
    let deadline = Duration::from_millis(150);
    let members = fleet_on(&server, 4, cooldown, deadline);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flusher = {
        let stop = std::sync::Arc::clone(&stop);
        let url = server.url();
        std::thread::spawn(move || {
            let client = redis::Client::open(url).expect("a client for the test's server");
            let mut connection = client.get_connection().expect("a connection to flush");
            let mut flushes = 0_u32;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                if redis::cmd("FLUSHALL").query::<()>(&mut connection).is_ok() {
                    flushes += 1;
                }
                std::thread::sleep(Duration::from_millis(25));
            }
            flushes
        })
    };
    // The dependency stays down. Every fleet probe is held until its
    // deadline, the longest it may be in flight, while the others go on
    // syncing and asking; every other admitted call fails at once. All
    // readings are on node 0's clock.
    let clock = members[0].node.breaker().clock();
    let mut probes: Vec<(usize, Duration, Duration)> = Vec::new();
    let mut held = Vec::new();
    let mut waited_while_degraded = 0;
    let started = clock.now();
    while clock.now() - started < Duration::from_secs(3) {
        for (index, m) in members.iter().enumerate() {
            m.node.sync_blocking(&m.store);
            let degraded = m.node.is_degraded();
            match m.node.try_acquire() {
                Ok(permit) if permit.is_fleet_probe() => {
                    let ends = permit.probe_deadline().expect("a fleet probe's deadline");
                    probes.push((index, clock.now(), ends));
                    held.push((permit, ends));
                }
                Ok(permit) => {
                    permit.failure();
                }
                Err(Refused::AwaitingFleetProbe) if degraded => waited_while_degraded += 1,
                Err(_) => {}
            }
        }
        let now = clock.now();
        held.retain(|(_, ends)| *ends > now);
        std::thread::sleep(Duration::from_millis(2));
    }
    drop(held);
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let flushes = flusher.join().expect("the flusher thread");
    assert!(flushes > 20, "Redis was flushed {flushes} times");
    probes.sort_by_key(|probe| probe.1);
    let overlaps: Vec<_> = probes
        .windows(2)
        .filter(|pair| pair[1].1 < pair[0].2)
        .collect();
    assert!(
        overlaps.is_empty(),
        "{} overlapping fleet probes, the first: {:?}",
        overlaps.len(),
        &overlaps[..overlaps.len().min(3)]
    );
    // Who hears it depends on who asks for the lease: a node that keeps
    // serving alone keeps tripping, and its trips keep the others open.
    let stats: Vec<_> = members.iter().map(|m| m.node.stats()).collect();
    assert!(
        stats.iter().any(|s| s.forgotten > 1 && s.store_errors > 0),
        "a node heard the store forget again and again, and said it was degraded: {stats:?}"
    );
    assert_eq!(
        waited_while_degraded, 0,
        "F4: a degraded node never waits for a fleet probe"
    );
}

#[test]
fn a_node_syncs_from_a_tokio_task_without_blocking_it_or_panicking() {
    let server = Server::start();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let m = member(&server, 0, Duration::from_secs(60), Duration::from_secs(5));
        let node = std::sync::Arc::new(m.node);
        // The blocking form inside a task: it waits, within the bound, and
        // does not panic ("Cannot start a runtime from within a runtime").
        let status = tokio::spawn({
            let node = std::sync::Arc::clone(&node);
            async move { node.sync_blocking(&m.store) }
        })
        .await
        .expect("sync_blocking inside tokio::spawn");
        let _ = status;
        // The loop the node owns, started from a task.
        let store = RedisStore::connect(&server.url(), "db", BOUND).unwrap();
        let syncing = tokio::spawn({
            let node = std::sync::Arc::clone(&node);
            async move { FleetNode::keep_in_sync(node, store, Duration::from_millis(5)) }
        })
        .await
        .expect("keep_in_sync inside tokio::spawn")
        .expect("a sync thread");
        let start = std::time::Instant::now();
        while node.link_status() != LinkStatus::Up {
            assert!(start.elapsed() < PATIENCE, "the node never linked up");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        syncing.stop();
    });
}
