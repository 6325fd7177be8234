//! `just fleet --redis`: five nodes, each a separate OS process (this
//! binary run as `fleet node ...`, see `node_process`), calling one gateway
//! over TCP on loopback (see `gateway`), first local-only, then linked over
//! a real `redis-server` started for the run on a free loopback port, with
//! Redis killed and restarted mid-incident. Real time and real processes,
//! so the figures vary a little from run to run; the in-memory run is the
//! deterministic one.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::gateway::Gateway;
use crate::node_process::NodeFigures;
use crate::redis_server::RedisServer;
use retry_breaker_fleet::RedisStore;

pub const NODES: u32 = 5;
pub const THRESHOLD: u32 = 5;
pub const COOLDOWN: Duration = Duration::from_millis(500);
pub const PROBE_DEADLINE: Duration = Duration::from_millis(200);
/// The longest any call to Redis may wait.
pub const BOUND: Duration = Duration::from_millis(100);
const OUTAGE: Duration = Duration::from_secs(3);
const RUN: Duration = Duration::from_secs(4);
const KILL_AT: Duration = Duration::from_millis(1500);
const RESTART_AT: Duration = Duration::from_millis(2500);

/// One run of the node processes against a fresh gateway, linked over
/// `redis` if given; `server`, if given, is killed and restarted mid-run.
fn run_nodes(
    exe: &Path,
    redis: Option<&str>,
    server: Option<&mut RedisServer>,
) -> Result<(Vec<NodeFigures>, Vec<Duration>), String> {
    let start = Instant::now();
    let start_unix_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    let gateway = Gateway::start(start, OUTAGE).map_err(|error| error.to_string())?;
    let mut children = Vec::new();
    for id in 0..NODES {
        let mut command = Command::new(exe);
        command
            .args(["node", "--id", &id.to_string()])
            .args(["--gateway", &gateway.address().to_string()])
            .args(["--run-ms", &RUN.as_millis().to_string()])
            .args(["--start-unix-ms", &start_unix_ms.to_string()])
            .stdout(Stdio::piped());
        if let Some(url) = redis {
            command.args(["--redis", url]);
        }
        children.push(command.spawn().map_err(|error| error.to_string())?);
    }
    if let Some(server) = server {
        std::thread::sleep(KILL_AT.saturating_sub(start.elapsed()));
        server.kill();
        std::thread::sleep(RESTART_AT.saturating_sub(start.elapsed()));
        server.start()?;
    }
    let mut figures = Vec::new();
    for child in children {
        let output = child
            .wait_with_output()
            .map_err(|error| error.to_string())?;
        let text = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() {
            return Err(format!("a node process failed: {}", text.trim()));
        }
        figures.push(NodeFigures::parse(text.trim())?);
    }
    Ok((figures, gateway.calls_while_down(OUTAGE)))
}

fn print(label: &str, nodes: &[NodeFigures], calls_while_down: &[Duration]) {
    let first_trip = nodes.iter().filter_map(|node| node.first_trip_ms).min();
    let all_refusing = nodes
        .iter()
        .map(|node| node.first_refusal_ms)
        .collect::<Option<Vec<u128>>>()
        .and_then(|times| times.into_iter().max());
    let first_incident_ends = first_trip.map(|ms| {
        Duration::from_millis(u64::try_from(ms).unwrap_or(u64::MAX)).saturating_add(COOLDOWN)
    });
    let in_first = calls_while_down
        .iter()
        .filter(|at| first_incident_ends.is_none_or(|end| **at < end))
        .count();
    let later = calls_while_down.len() - in_first;
    let later_cooldowns = first_incident_ends.map_or(0.0, |end| {
        OUTAGE.saturating_sub(end).as_secs_f64() / COOLDOWN.as_secs_f64()
    });
    let sum = |count: fn(&NodeFigures) -> u64| nodes.iter().map(count).sum::<u64>();
    println!("{label}");
    println!("  requests that reached the dead gateway in the first incident: {in_first}");
    println!(
        "  requests that reached it per later cooldown (the probes):     {:.1}",
        later as f64 / later_cooldowns.max(1.0)
    );
    println!(
        "  fleet probes under the lease, over the whole run:              {}",
        sum(|node| node.probes)
    );
    match (first_trip, all_refusing) {
        (Some(trip), Some(all)) => println!(
            "  from the first trip to every node refusing:                    {} ms",
            all.saturating_sub(trip)
        ),
        _ => println!("  from the first trip to every node refusing:                    never"),
    }
    println!(
        "  (re)joins, each reading the state first:                       {}",
        sum(|node| node.joins)
    );
    println!(
        "  calls: {} served, {} failed because of Redis, {} lost",
        sum(|node| node.served),
        sum(|node| node.failed_by_store),
        sum(|node| node.lost)
    );
}

/// Runs the node processes local-only and then over Redis, printing their
/// figures; or says why it could not (no `redis-server`).
pub fn run() {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(error) => return println!("--redis: cannot find this program ({error})"),
    };
    let mut server = match RedisServer::start_new("fleet-run") {
        Ok(server) => server,
        Err(error) => {
            return println!("--redis: {error}; the figures above are the in-memory store's.");
        }
    };
    println!(
        "{NODES} nodes, each a process of its own, one request a millisecond each to a gateway \
         over TCP on loopback that is down for {OUTAGE:?}; threshold {THRESHOLD}, cooldown \
         {COOLDOWN:?}, news exchanged every 5ms by a thread beside the requests\n"
    );
    match run_nodes(&exe, None, None) {
        Ok((nodes, calls)) => print(
            "local-only (every process learns on its own)",
            &nodes,
            &calls,
        ),
        Err(error) => return println!("--redis: the local-only run failed: {error}"),
    }
    let url = server.url();
    // The fleet is set up once, before its nodes start: the store's witness
    // says it has forgotten nothing since.
    let prepared = RedisStore::connect(&url, "gateway", BOUND)
        .map_err(|error| error.to_string())
        .and_then(|store| store.prepare().map_err(|error| error.to_string()));
    if let Err(error) = prepared {
        return println!("--redis: the fleet could not be set up on redis-server: {error}");
    }
    match run_nodes(&exe, Some(&url), Some(&mut server)) {
        Ok((nodes, calls)) => print(
            &format!(
                "linked over real Redis, failures added up (F5), Redis killed at {KILL_AT:?} and \
                 restarted at {RESTART_AT:?}"
            ),
            &nodes,
            &calls,
        ),
        Err(error) => println!("--redis: the linked run failed: {error}"),
    }
}

/// `fleet node ...`: one node process.
pub fn node(args: &[String]) -> std::process::ExitCode {
    match crate::node_process::run(args) {
        Ok(line) => {
            println!("{line}");
            std::process::ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("{error}");
            std::process::ExitCode::FAILURE
        }
    }
}
