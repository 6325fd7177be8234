//! `just fleet`: 100 nodes at threshold 5 behind one dependency that goes
//! down, each request sent to a node picked at random (a load balancer),
//! run local-only and then linked as a fleet, on the manual clock and the
//! in-memory store, so the figures are the same on every run.
//!
//! With `--redis`, five nodes, each a process of its own, do the same over
//! a real `redis-server` started for the run (see `fleet_redis`).

use std::num::NonZeroU32;
use std::time::Duration;

#[cfg(feature = "redis")]
mod faults;
#[cfg(feature = "redis")]
mod fleet_redis;
#[cfg(feature = "redis")]
mod gateway;
#[cfg(feature = "redis")]
mod node_process;
#[cfg(feature = "redis")]
mod redis_server;

use retry_breaker_fleet::{FleetNode, FleetSettings, MemoryStore, Nemesis, NodeId, Refused};
use retry_breaker_solution::{Clock, ManualClock, Phase, RetryBreaker};

const NODES: u32 = 100;
const THRESHOLD: u32 = 5;
const COOLDOWN: Duration = Duration::from_secs(5);
const PROBE_DEADLINE: Duration = Duration::from_secs(1);
/// One request every this long, across the whole fleet.
const REQUEST_EVERY: Duration = Duration::from_micros(200);
/// Each node exchanges news with the store this often.
const SYNC_EVERY: Duration = Duration::from_millis(5);
/// The store delivers each message within this long.
const MAX_DELIVERY: Duration = Duration::from_millis(2);
const OUTAGE: Duration = Duration::from_secs(30);
const RUN: Duration = Duration::from_secs(40);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    LocalOnly,
    Fleet,
    /// The fleet, adding its nodes' failures up (F5).
    FleetSharedCount,
    /// The fleet, with the store down from 2 s into the outage until 20 s.
    FleetStoreDown,
}

#[derive(Debug, Default)]
struct Figures {
    /// Requests that reached the dead dependency before the first cooldown
    /// ended: the incident's cost.
    reached_first_incident: u64,
    /// Requests that reached the dead dependency after that, and the
    /// cooldowns they fell in.
    reached_later: u64,
    first_trip: Option<Duration>,
    all_refusing: Option<Duration>,
    requests: u64,
    /// Refusals that only the store's absence caused: a node cut off from
    /// the store waiting for a fleet probe it cannot hear about.
    failed_by_store: u64,
    /// Requests with no answer at all.
    lost: u64,
    recovered_all: Option<Duration>,
    /// Fleet probes admitted under the lease.
    fleet_probes: u64,
}

/// A splitmix64 generator: the load balancer's choices, the same each run.
struct Picker(u64);

impl Picker {
    fn next(&mut self, below: u32) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % u64::from(below)) as usize
    }
}

fn run(mode: Mode) -> Figures {
    let clock = ManualClock::new();
    let link = Nemesis {
        max_delay: MAX_DELIVERY,
        reorder: true,
        ..Nemesis::default()
    };
    let store = MemoryStore::with_nemesis(clock.clone(), link, 7);
    let mut settings = FleetSettings::new(PROBE_DEADLINE).expect("a valid deadline");
    if mode == Mode::FleetSharedCount {
        settings = settings.with_shared_count(NonZeroU32::new(THRESHOLD).expect("not zero"));
    }
    let nodes: Vec<FleetNode<ManualClock>> = (0..NODES)
        .map(|id| {
            let breaker =
                RetryBreaker::new(THRESHOLD, COOLDOWN, clock.clone()).expect("a valid threshold");
            store.subscribe(NodeId(id));
            FleetNode::new(NodeId(id), "gateway", breaker, settings).expect("a valid key")
        })
        .collect();
    let linked = mode != Mode::LocalOnly;
    if linked {
        nodes.iter().for_each(|node| {
            node.sync_blocking(&store);
        });
    }
    let mut figures = Figures::default();
    let mut picker = Picker(2024);
    let start = clock.now();
    let mut next_sync = vec![Duration::ZERO; NODES as usize];
    for (index, at) in next_sync.iter_mut().enumerate() {
        // Staggered, as independent timers would be.
        *at = SYNC_EVERY * index as u32 / NODES;
    }
    while clock.now() - start < RUN {
        let now = clock.now() - start;
        let down = now < OUTAGE;
        if mode == Mode::FleetStoreDown {
            let store_down = now >= Duration::from_secs(2) && now < Duration::from_secs(20);
            store.update_nemesis(|nemesis| nemesis.down = store_down);
        }
        let index = picker.next(NODES);
        let node = &nodes[index];
        figures.requests += 1;
        let degraded = node.is_degraded();
        match node.try_acquire() {
            Ok(permit) => {
                if down {
                    let first_cooldown_over = figures
                        .first_trip
                        .is_some_and(|trip| now >= trip + COOLDOWN);
                    if first_cooldown_over {
                        figures.reached_later += 1;
                    } else {
                        figures.reached_first_incident += 1;
                    }
                    permit.failure();
                    let tripped =
                        node.breaker().state().phase() == Phase::Open || node.fleet_is_open();
                    if figures.first_trip.is_none() && tripped {
                        figures.first_trip = Some(now);
                    }
                } else {
                    permit.success();
                }
            }
            Err(Refused::AwaitingFleetProbe) if degraded && linked => figures.failed_by_store += 1,
            Err(_) => {}
        }
        if linked {
            for (index, at) in next_sync.iter_mut().enumerate() {
                if now >= *at {
                    nodes[index].sync_blocking(&store);
                    *at = now + SYNC_EVERY;
                }
            }
        }
        if figures.first_trip.is_none() && nodes.iter().any(FleetNode::fleet_is_open) {
            // A trip sent on the fleet's shared count, heard at a sync.
            figures.first_trip = Some(now);
        }
        if figures.first_trip.is_some() && figures.all_refusing.is_none() && down {
            let refusing = nodes.iter().all(|node| node.try_acquire().is_err());
            if refusing {
                figures.all_refusing = Some(now);
            }
        }
        if !down && figures.recovered_all.is_none() {
            // Local-only nodes never hear a close, so only their own
            // breakers count.
            let closed = nodes.iter().all(|node| {
                node.breaker().state().phase() == Phase::Closed
                    && (mode == Mode::LocalOnly || !node.fleet_is_open())
            });
            if closed {
                figures.recovered_all = Some(now - OUTAGE);
            }
        }
        clock.advance(REQUEST_EVERY);
    }
    figures.fleet_probes = nodes.iter().map(|node| node.stats().probes).sum();
    figures
}

fn print(label: &str, figures: &Figures) {
    let first_trip = figures.first_trip.unwrap_or_default();
    let later_cooldowns =
        (OUTAGE.saturating_sub(first_trip + COOLDOWN)).as_secs_f64() / COOLDOWN.as_secs_f64();
    println!("{label}");
    println!(
        "  requests that reached the dead dependency in the first incident: {}",
        figures.reached_first_incident
    );
    println!(
        "  requests that reached it per later cooldown (the probes):       {:.1}",
        figures.reached_later as f64 / later_cooldowns.max(1.0)
    );
    println!(
        "  fleet probes under the lease, over the whole run:                {}",
        figures.fleet_probes
    );
    match figures.all_refusing {
        Some(at) => println!(
            "  from the first trip to the whole fleet refusing:                 {:?}",
            at - first_trip
        ),
        None => {
            println!("  from the first trip to the whole fleet refusing:                 never")
        }
    }
    match figures.recovered_all {
        Some(after) => {
            println!("  from the dependency's recovery to every node closed:             {after:?}")
        }
        None => println!(
            "  from the dependency's recovery to every node closed:             not within the run"
        ),
    }
    println!(
        "  requests: {} answered at once, {} failed because of the store, {} lost",
        figures.requests, figures.failed_by_store, figures.lost
    );
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    #[cfg(feature = "redis")]
    if args.first().is_some_and(|arg| arg == "node") {
        return fleet_redis::node(&args[1..]);
    }
    if args.first().is_some_and(|arg| arg == "faults") {
        #[cfg(feature = "redis")]
        return faults::run();
        #[cfg(not(feature = "redis"))]
        {
            eprintln!("faults needs the redis feature: `just fleet-faults` builds with it.");
            return std::process::ExitCode::FAILURE;
        }
    }
    let redis = args.iter().any(|arg| arg == "--redis");
    if args.iter().any(|arg| arg == "--redis-only") {
        #[cfg(feature = "redis")]
        fleet_redis::run();
        #[cfg(not(feature = "redis"))]
        println!("--redis-only needs the redis feature: `just fleet --redis-only` builds with it.");
        return std::process::ExitCode::SUCCESS;
    }
    println!(
        "{NODES} nodes, threshold {THRESHOLD}, cooldown {COOLDOWN:?}, probe deadline {PROBE_DEADLINE:?}; \
         one request every {REQUEST_EVERY:?} to a node picked at random; the dependency is down for \
         {OUTAGE:?}; news every {SYNC_EVERY:?} per node, delivered within {MAX_DELIVERY:?} (in-memory store, manual clock)\n"
    );
    print(
        "local-only (every node learns on its own)",
        &run(Mode::LocalOnly),
    );
    print(
        "fleet (trips shared, one probe under the lease)",
        &run(Mode::Fleet),
    );
    let shared = run(Mode::FleetSharedCount);
    print(
        &format!(
            "fleet, adding the nodes' failures up (F5: open at {THRESHOLD} in a row, anywhere)"
        ),
        &shared,
    );
    // The trip goes out at the sending node's next exchange, and reaches
    // each other node within the delivery delay and that node's next
    // exchange: calls made meanwhile still go through.
    let news_travels = SYNC_EVERY * 2 + MAX_DELIVERY;
    let in_flight = news_travels.as_nanos() / REQUEST_EVERY.as_nanos();
    println!(
        "  the bound: the count, {THRESHOLD}, plus the {in_flight} requests of the {news_travels:?} \
         the news can take: {}; reached: {}",
        u128::from(THRESHOLD) + in_flight,
        shared.reached_first_incident
    );
    print(
        "fleet, with the store down from 2 s to 20 s into the outage",
        &run(Mode::FleetStoreDown),
    );
    if redis {
        println!();
        #[cfg(feature = "redis")]
        fleet_redis::run();
        #[cfg(not(feature = "redis"))]
        println!("--redis needs the redis feature: `just fleet --redis` builds with it.");
    }
    std::process::ExitCode::SUCCESS
}
