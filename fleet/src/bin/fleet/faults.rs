//! `just fleet-faults`: the fleet over a real `redis-server` under every
//! fault a store can have, one row each: kill -9 and a restart, SIGSTOP,
//! `DEBUG SLEEP`, `FLUSHALL` once and every 25 ms, a restart with nothing
//! kept, and one node cut off from the store. Four nodes in this process,
//! each with its own connections and a sync thread beside its requests,
//! send one request a millisecond to a dependency that is down all along,
//! and the fault lasts from 1 s to 2 s into the run.
//!
//! Two columns are promises, and a run that breaks one fails: no call is
//! refused because of the store (a degraded node never waits for a fleet
//! probe, F4), and no two fleet probes are in flight at once (F3). The
//! others are measured: the longest a request's admission took (it never
//! waits on the store, F1), the calls that reached the dead dependency
//! beside the local-only and healthy-store baselines, and how long after
//! the fault the whole fleet was linked again. Real time, so the measured
//! columns vary a little from run to run.

use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use retry_breaker_fleet::{FleetNode, FleetSettings, LinkStatus, NodeId, RedisStore, Refused};
use retry_breaker_solution::{RetryBreaker, SystemClock};

use crate::redis_server::RedisServer;

const NODES: u32 = 4;
const THRESHOLD: u32 = 3;
const COOLDOWN: Duration = Duration::from_millis(300);
const PROBE_DEADLINE: Duration = Duration::from_millis(100);
/// How long a call to the dead dependency takes to fail when it is the
/// fleet's probe: long enough for a second probe to overlap it, if any did.
const PROBE_TAKES: Duration = Duration::from_millis(30);
/// The longest any call to Redis may wait.
const BOUND: Duration = Duration::from_millis(50);
const SYNC_EVERY: Duration = Duration::from_millis(5);
const REQUEST_EVERY: Duration = Duration::from_millis(1);
const FAULT_AT: Duration = Duration::from_secs(1);
const FAULT_ENDS: Duration = Duration::from_secs(2);
const RUN: Duration = Duration::from_secs(4);
const KEY: &str = "dependency";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    /// A baseline: no store at all, every node on its own.
    LocalOnly,
    /// A baseline: the store healthy all along.
    Healthy,
    Kill9,
    Stop,
    DebugSleep,
    FlushOnce,
    FlushLoop,
    RestartEmpty,
    CutOff,
}

const FAULTS: [Fault; 9] = [
    Fault::LocalOnly,
    Fault::Healthy,
    Fault::Kill9,
    Fault::Stop,
    Fault::DebugSleep,
    Fault::FlushOnce,
    Fault::FlushLoop,
    Fault::RestartEmpty,
    Fault::CutOff,
];

impl Fault {
    fn label(self) -> &'static str {
        match self {
            Fault::LocalOnly => "local-only, no store (baseline)",
            Fault::Healthy => "healthy store (baseline)",
            Fault::Kill9 => "kill -9, restarted empty 1 s later",
            Fault::Stop => "SIGSTOP for 1 s",
            Fault::DebugSleep => "DEBUG SLEEP 1",
            Fault::FlushOnce => "FLUSHALL once",
            Fault::FlushLoop => "FLUSHALL every 25 ms for 1 s",
            Fault::RestartEmpty => "SHUTDOWN NOSAVE, restarted at once",
            Fault::CutOff => "node 0 cut off from the store for 1 s",
        }
    }
}

/// One row of the table.
#[derive(Debug, Default)]
struct Row {
    /// Refusals only the store caused: a degraded node waiting for a fleet
    /// probe it cannot hear about (F4 says none).
    failed_by_store: u64,
    /// The longest a request's admission took.
    most_waited: Duration,
    fleet_probes: usize,
    /// Pairs of fleet probes in flight at once (F3 says none).
    overlapping: usize,
    /// Calls that reached the dead dependency.
    reached: u64,
    /// From the fault's end to every node linked again; `None` if no node
    /// ever left the fleet, or not all were back by the end of the run.
    rejoined: Option<Duration>,
    /// Whether some node was degraded at some point after the fault began.
    degraded: bool,
}

/// What every node thread adds up.
#[derive(Debug, Default)]
struct Tally {
    failed_by_store: u64,
    most_waited: Duration,
    reached: u64,
    /// Each fleet probe: when it was admitted and when it reported, from
    /// the run's start.
    probes: Vec<(Duration, Duration)>,
}

/// Runs every fault and prints the table; fails if a promise broke.
pub fn run() -> ExitCode {
    println!(
        "{NODES} nodes over a real redis-server on loopback, one request a millisecond each to a \
         dependency that is down all along; threshold {THRESHOLD}, cooldown {COOLDOWN:?}, probe \
         deadline {PROBE_DEADLINE:?} (a probe takes {PROBE_TAKES:?} to fail), store calls bounded \
         at {BOUND:?}, news every {SYNC_EVERY:?} on a thread beside the requests; each fault from \
         {FAULT_AT:?} to {FAULT_ENDS:?} into a run of {RUN:?}\n"
    );
    println!(
        "{:<40} {:>9} {:>10} {:>7} {:>8} {:>8} {:>9}",
        "fault", "by store", "most wait", "probes", "overlap", "reached", "rejoined"
    );
    let mut broken = Vec::new();
    for fault in FAULTS {
        let row = match one(fault) {
            Ok(row) => row,
            Err(error) => {
                println!("{:<40} could not run: {error}", fault.label());
                return ExitCode::FAILURE;
            }
        };
        let rejoined = match (row.degraded, row.rejoined) {
            (false, _) => "stayed".to_owned(),
            (true, Some(after)) => format!("{}ms", after.as_millis()),
            (true, None) => "not yet".to_owned(),
        };
        println!(
            "{:<40} {:>9} {:>8}µs {:>7} {:>8} {:>8} {:>9}",
            fault.label(),
            row.failed_by_store,
            row.most_waited.as_micros(),
            row.fleet_probes,
            row.overlapping,
            row.reached,
            rejoined
        );
        if row.failed_by_store > 0 {
            broken.push(format!(
                "{}: {} call(s) refused because of the store (F4)",
                fault.label(),
                row.failed_by_store
            ));
        }
        if row.overlapping > 0 {
            broken.push(format!(
                "{}: {} pair(s) of fleet probes in flight at once (F3)",
                fault.label(),
                row.overlapping
            ));
        }
    }
    println!(
        "\nby store: calls refused only because the store was away (must be 0); most wait: the \
         longest admission; probes: fleet probes under the lease; overlap: pairs of them in flight \
         at once (must be 0); reached: calls that reached the dead dependency, against the two \
         baselines; rejoined: from the fault's end to every node linked again"
    );
    if broken.is_empty() {
        println!(
            "fleet-faults: no call failed because of the store, and no two fleet probes overlapped"
        );
        ExitCode::SUCCESS
    } else {
        println!("\nfleet-faults: {}", broken.join("\nfleet-faults: "));
        ExitCode::FAILURE
    }
}

/// One run of the fleet under `fault`.
fn one(fault: Fault) -> Result<Row, String> {
    let mut server = match fault {
        Fault::LocalOnly => None,
        _ => Some(RedisServer::start_new("fleet-faults")?),
    };
    let url = server.as_ref().map(RedisServer::url);
    // Node 0 reaches the store through a proxy this run can cut.
    let proxy = match (&server, fault) {
        (Some(server), Fault::CutOff) => Some(Proxy::start(server.port())?),
        _ => None,
    };
    if let Some(url) = &url {
        RedisStore::connect(url, KEY, BOUND)
            .map_err(|error| error.to_string())?
            .prepare()
            .map_err(|error| format!("the fleet could not be set up: {error}"))?;
    }
    let tally = Arc::new(Mutex::new(Tally::default()));
    let start = Instant::now();
    let mut nodes = Vec::new();
    let mut workers = Vec::new();
    for id in 0..NODES {
        let breaker = RetryBreaker::new(THRESHOLD, COOLDOWN, SystemClock::new())
            .map_err(|error| error.to_string())?;
        let settings = FleetSettings::new(PROBE_DEADLINE).map_err(|error| error.to_string())?;
        let node = Arc::new(
            FleetNode::new(NodeId(id), KEY, breaker, settings)
                .map_err(|error| error.to_string())?,
        );
        let syncing = match (&url, &proxy) {
            (None, _) => None,
            (Some(_), Some(proxy)) if id == 0 => Some(proxy.url()),
            (Some(url), _) => Some(url.clone()),
        }
        .map(|url| {
            let store = RedisStore::connect(&url, KEY, BOUND).map_err(|error| error.to_string())?;
            FleetNode::keep_in_sync(Arc::clone(&node), store, SYNC_EVERY)
                .map_err(|error| error.to_string())
        })
        .transpose()?;
        let worker = {
            let (node, tally) = (Arc::clone(&node), Arc::clone(&tally));
            thread::spawn(move || requests(&node, &tally, start))
        };
        nodes.push((node, syncing));
        workers.push(worker);
    }

    let mut row = Row::default();
    let mut fault_begun = false;
    let mut fault_ended = false;
    let flushing = Arc::new(AtomicBool::new(false));
    while start.elapsed() < RUN {
        let now = start.elapsed();
        if !fault_begun && now >= FAULT_AT {
            fault_begun = true;
            begin(fault, server.as_mut(), proxy.as_ref(), &flushing)?;
        }
        if fault_begun && !fault_ended && now >= FAULT_ENDS {
            fault_ended = true;
            end(fault, server.as_mut(), proxy.as_ref(), &flushing)?;
        }
        if fault_begun && fault != Fault::LocalOnly {
            let all_up = nodes
                .iter()
                .all(|(node, _)| node.link_status() == LinkStatus::Up);
            row.degraded |= !all_up;
            if fault_ended && all_up && row.degraded && row.rejoined.is_none() {
                row.rejoined = Some(now.saturating_sub(FAULT_ENDS));
            }
        }
        thread::sleep(Duration::from_millis(2));
    }
    for worker in workers {
        worker
            .join()
            .map_err(|_| "a node's request thread panicked".to_owned())?;
    }
    for (_, syncing) in nodes {
        if let Some(syncing) = syncing {
            syncing.stop();
        }
    }
    let mut tally = std::mem::take(&mut *tally.lock().unwrap_or_else(PoisonError::into_inner));
    tally.probes.sort();
    row.failed_by_store = tally.failed_by_store;
    row.most_waited = tally.most_waited;
    row.reached = tally.reached;
    row.fleet_probes = tally.probes.len();
    row.overlapping = tally
        .probes
        .windows(2)
        .filter(|pair| pair[1].0 < pair[0].1)
        .count();
    Ok(row)
}

/// One node's requests until the run ends: each admission timed, each
/// admitted call failing (the dependency is down), a fleet probe after
/// [`PROBE_TAKES`].
fn requests(node: &FleetNode<SystemClock>, tally: &Mutex<Tally>, start: Instant) {
    let mut mine = Tally::default();
    while start.elapsed() < RUN {
        let degraded = node.is_degraded();
        let asked = Instant::now();
        let admission = node.try_acquire();
        mine.most_waited = mine.most_waited.max(asked.elapsed());
        match admission {
            Ok(permit) if permit.is_fleet_probe() => {
                mine.reached += 1;
                let began = start.elapsed();
                thread::sleep(PROBE_TAKES);
                permit.failure();
                mine.probes.push((began, start.elapsed()));
            }
            Ok(permit) => {
                mine.reached += 1;
                permit.failure();
            }
            Err(Refused::AwaitingFleetProbe) if degraded => mine.failed_by_store += 1,
            Err(_) => {}
        }
        thread::sleep(REQUEST_EVERY);
    }
    let mut tally = tally.lock().unwrap_or_else(PoisonError::into_inner);
    tally.failed_by_store += mine.failed_by_store;
    tally.most_waited = tally.most_waited.max(mine.most_waited);
    tally.reached += mine.reached;
    tally.probes.extend(mine.probes);
}

fn begin(
    fault: Fault,
    server: Option<&mut RedisServer>,
    proxy: Option<&Proxy>,
    flushing: &Arc<AtomicBool>,
) -> Result<(), String> {
    let Some(server) = server else { return Ok(()) };
    match fault {
        Fault::LocalOnly | Fault::Healthy => {}
        Fault::Kill9 => server.kill(),
        Fault::Stop => server.signal("STOP")?,
        Fault::DebugSleep => {
            let url = server.url();
            // The command blocks the server, and this connection, for 1 s.
            thread::spawn(move || command(&url, &["DEBUG", "SLEEP", "1"]));
        }
        Fault::FlushOnce => command(&server.url(), &["FLUSHALL"])?,
        Fault::FlushLoop => {
            flushing.store(true, Ordering::SeqCst);
            let (url, flushing) = (server.url(), Arc::clone(flushing));
            thread::spawn(move || {
                while flushing.load(Ordering::SeqCst) {
                    let _ = command(&url, &["FLUSHALL"]);
                    thread::sleep(Duration::from_millis(25));
                }
            });
        }
        Fault::RestartEmpty => {
            // The connection ends with the server: no answer to wait for.
            let _ = command(&server.url(), &["SHUTDOWN", "NOSAVE"]);
            server.kill();
            server.start()?;
        }
        Fault::CutOff => proxy.ok_or("no proxy to cut")?.cut(true),
    }
    Ok(())
}

fn end(
    fault: Fault,
    server: Option<&mut RedisServer>,
    proxy: Option<&Proxy>,
    flushing: &AtomicBool,
) -> Result<(), String> {
    let Some(server) = server else { return Ok(()) };
    match fault {
        Fault::Kill9 => server.start()?,
        Fault::Stop => server.signal("CONT")?,
        Fault::FlushLoop => flushing.store(false, Ordering::SeqCst),
        Fault::CutOff => proxy.ok_or("no proxy to heal")?.cut(false),
        Fault::LocalOnly
        | Fault::Healthy
        | Fault::DebugSleep
        | Fault::FlushOnce
        | Fault::RestartEmpty => {}
    }
    Ok(())
}

/// One command to the server, on a connection of its own.
fn command(url: &str, words: &[&str]) -> Result<(), String> {
    let client = redis::Client::open(url).map_err(|error| error.to_string())?;
    let mut connection = client.get_connection().map_err(|error| error.to_string())?;
    let mut command = redis::cmd(words[0]);
    for word in &words[1..] {
        command.arg(*word);
    }
    command
        .query::<redis::Value>(&mut connection)
        .map(drop)
        .map_err(|error| format!("{}: {error}", words.join(" ")))
}

/// A TCP proxy in front of the server for one node, which the run can cut:
/// every connection through it closed, and new ones closed as they come,
/// until it heals.
struct Proxy {
    port: u16,
    cut: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<TcpStream>>>,
}

impl Proxy {
    fn start(upstream: u16) -> Result<Proxy, String> {
        let listener = TcpListener::bind("127.0.0.1:0").map_err(|error| error.to_string())?;
        let port = listener
            .local_addr()
            .map_err(|error| error.to_string())?
            .port();
        let cut = Arc::new(AtomicBool::new(false));
        let open: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let (accepting_cut, accepting_open) = (Arc::clone(&cut), Arc::clone(&open));
        // Accepts for as long as the program runs: one proxy a run.
        thread::spawn(move || {
            for client in listener.incoming().flatten() {
                if accepting_cut.load(Ordering::SeqCst) {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                }
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                    continue;
                };
                let pairs = [
                    (client.try_clone(), server.try_clone()),
                    (server.try_clone(), client.try_clone()),
                ];
                let mut open = accepting_open
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                for (from, to) in pairs {
                    if let (Ok(mut from), Ok(mut to)) = (from, to) {
                        thread::spawn(move || {
                            let _ = std::io::copy(&mut from, &mut to);
                            let _ = to.shutdown(Shutdown::Both);
                        });
                    }
                }
                open.push(client);
                open.push(server);
            }
        });
        Ok(Proxy { port, cut, open })
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    fn cut(&self, cut: bool) {
        self.cut.store(cut, Ordering::SeqCst);
        if cut {
            for stream in self
                .open
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .drain(..)
            {
                let _ = stream.shutdown(Shutdown::Both);
            }
        }
    }
}
