//! `just fleet --redis`: a handful of nodes over a real `redis-server`
//! started for the run on a free loopback port, on the system clock, with
//! Redis killed and restarted mid-incident. Real time, so the figures vary
//! a little from run to run; the in-memory run is the deterministic one.

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use retry_breaker_fleet::{FleetNode, FleetSettings, NodeId, RedisStore, Refused};
use retry_breaker_solution::{Phase, RetryBreaker, SystemClock};

const NODES: u32 = 5;
const THRESHOLD: u32 = 5;
const COOLDOWN: Duration = Duration::from_millis(500);
const PROBE_DEADLINE: Duration = Duration::from_millis(200);
const BOUND: Duration = Duration::from_millis(100);
const OUTAGE: Duration = Duration::from_secs(3);
const RUN: Duration = Duration::from_secs(4);

struct Server {
    port: u16,
    dir: std::path::PathBuf,
    child: Option<Child>,
}

impl Server {
    fn start(&mut self) -> Result<(), String> {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|error| error.to_string())?;
        self.child = Some(child);
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            if started.elapsed() > Duration::from_secs(10) {
                return Err("redis-server did not start within 10 s".into());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(())
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs the fleet over Redis and prints its figures, or says why it could
/// not (no `redis-server`).
pub fn run() {
    let port = match TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()) {
        Ok(address) => address.port(),
        Err(error) => return println!("--redis: no free loopback port ({error})"),
    };
    let dir = std::env::temp_dir().join(format!("fleet-run-{}-{port}", std::process::id()));
    if let Err(error) = std::fs::create_dir_all(&dir) {
        return println!("--redis: no folder for redis-server ({error})");
    }
    let mut server = Server {
        port,
        dir,
        child: None,
    };
    if let Err(error) = server.start() {
        return println!(
            "--redis: redis-server could not start ({error}); the figures above are the \
             in-memory store's. Install it with `sudo apt-get install redis-server`."
        );
    }
    let url = format!("redis://127.0.0.1:{port}/");
    let settings = FleetSettings::new(PROBE_DEADLINE).expect("a valid deadline");
    let members: Vec<(FleetNode<SystemClock>, RedisStore)> = (0..NODES)
        .map(|id| {
            let breaker =
                RetryBreaker::new(THRESHOLD, COOLDOWN, SystemClock::new()).expect("a threshold");
            let node = FleetNode::new(NodeId(id), "gateway", breaker, settings).expect("a key");
            let store = RedisStore::connect(&url, "gateway", BOUND).expect("a Redis URL");
            (node, store)
        })
        .collect();
    let linked = Instant::now();
    while !members
        .iter()
        .all(|(node, store)| node.sync(store).eq(&retry_breaker_fleet::LinkStatus::Up))
    {
        if linked.elapsed() > Duration::from_secs(10) {
            return println!("--redis: the nodes could not link up within 10 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let (mut reached, mut requests, mut failed_by_store, mut restarted) = (0u64, 0u64, 0u64, false);
    let mut first_trip = None;
    let mut killed = false;
    let start = Instant::now();
    let mut index = 0usize;
    while start.elapsed() < RUN {
        let now = start.elapsed();
        if !killed && now >= Duration::from_millis(1500) {
            server.kill();
            killed = true;
        }
        if killed && !restarted && now >= Duration::from_millis(2500) {
            restarted = server.start().is_ok();
        }
        let (node, _) = &members[index % NODES as usize];
        index += 1;
        requests += 1;
        let degraded = node.is_degraded();
        match node.try_acquire() {
            Ok(permit) if now < OUTAGE => {
                reached += 1;
                permit.failure();
                if first_trip.is_none() && node.breaker().state().phase() == Phase::Open {
                    first_trip = Some(now);
                }
            }
            Ok(permit) => {
                permit.success();
            }
            Err(Refused::AwaitingFleetProbe) if degraded => failed_by_store += 1,
            Err(_) => {}
        }
        if index % 5 == 0 {
            for (node, store) in &members {
                node.sync(store);
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let probes: u64 = members.iter().map(|(node, _)| node.stats().probes).sum();
    let joins: u64 = members.iter().map(|(node, _)| node.stats().joins).sum();
    println!(
        "over real Redis: {NODES} nodes, threshold {THRESHOLD}, cooldown {COOLDOWN:?}, the \
         dependency down for {OUTAGE:?}, Redis killed at 1.5 s and restarted at 2.5 s"
    );
    println!(
        "  requests that reached the dead dependency: {reached} (each node's first {THRESHOLD} \
         failures, taken in turn, then the probes: the fleet's, and each node's own while Redis \
         was away)"
    );
    println!("  fleet probes under the lease:              {probes}");
    println!("  (re)joins, each reading the state first:   {joins}");
    println!(
        "  requests: {requests} answered at once, {failed_by_store} failed because of Redis, 0 lost"
    );
}
