//! One node of `just fleet --redis`, run as a process of its own (`fleet
//! node ...`): a fleet breaker on the system clock, linked over Redis or
//! not at all, sending one request a millisecond to the gateway over TCP,
//! while a thread beside the requests exchanges news with Redis every few
//! milliseconds, so that no request waits on the store. It prints one line
//! of figures.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use retry_breaker_fleet::{FleetNode, FleetSettings, NodeId, RedisStore, Refused};
use retry_breaker_solution::{Phase, RetryBreaker, SystemClock};

use crate::fleet_redis::{BOUND, COOLDOWN, PROBE_DEADLINE, THRESHOLD};

/// How often the sync thread exchanges news with Redis.
const SYNC_PERIOD: Duration = Duration::from_millis(5);

/// What one node process was told.
struct Orders {
    id: u32,
    gateway: String,
    run: Duration,
    /// The run's start, as milliseconds since the Unix epoch: the one time
    /// every process and the gateway share.
    start_unix_ms: u128,
    redis: Option<String>,
}

fn orders(args: &[String]) -> Result<Orders, String> {
    let value = |name: &str| {
        args.iter()
            .position(|arg| arg == name)
            .and_then(|at| args.get(at + 1))
            .cloned()
            .ok_or_else(|| format!("fleet node: {name} is missing"))
    };
    let number = |name: &str| -> Result<u128, String> {
        value(name)?
            .parse()
            .map_err(|_| format!("fleet node: {name} is not a number"))
    };
    Ok(Orders {
        id: u32::try_from(number("--id")?).map_err(|_| "fleet node: --id is too large")?,
        gateway: value("--gateway")?,
        run: Duration::from_millis(
            u64::try_from(number("--run-ms")?).map_err(|_| "fleet node: --run-ms is too large")?,
        ),
        start_unix_ms: number("--start-unix-ms")?,
        redis: value("--redis").ok(),
    })
}

/// Milliseconds since the run's start.
fn since_start(start_unix_ms: u128) -> u128 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    now.saturating_sub(start_unix_ms)
}

/// Runs one node until its run is over; the figures line, or why not.
pub fn run(args: &[String]) -> Result<String, String> {
    let orders = orders(args)?;
    let breaker = RetryBreaker::new(THRESHOLD, COOLDOWN, SystemClock::new())
        .map_err(|error| error.to_string())?;
    // Linked nodes add their failures up (F5): five processes in parallel
    // would otherwise each fail on their own before the first trip.
    let mut settings = FleetSettings::new(PROBE_DEADLINE).map_err(|error| error.to_string())?;
    if orders.redis.is_some() {
        settings =
            settings.with_shared_count(NonZeroU32::new(THRESHOLD).ok_or("a threshold of 0")?);
    }
    let node = Arc::new(
        FleetNode::new(NodeId(orders.id), "gateway", breaker, settings)
            .map_err(|error| error.to_string())?,
    );
    let syncing = match &orders.redis {
        Some(url) => {
            let store =
                RedisStore::connect(url, "gateway", BOUND).map_err(|error| error.to_string())?;
            Some(
                FleetNode::keep_in_sync(Arc::clone(&node), store, SYNC_PERIOD)
                    .map_err(|error| format!("fleet node: no sync thread: {error}"))?,
            )
        }
        None => None,
    };
    let stream = TcpStream::connect(&orders.gateway)
        .map_err(|error| format!("fleet node: no gateway at {}: {error}", orders.gateway))?;
    let mut send = stream.try_clone().map_err(|error| error.to_string())?;
    let mut answers = BufReader::new(stream);

    let mut figures = NodeFigures::default();
    let deadline = Instant::now() + orders.run;
    while Instant::now() < deadline {
        figures.requests += 1;
        let degraded = node.is_degraded();
        match node.try_acquire() {
            Ok(permit) => {
                let mut answer = String::new();
                let answered = send.write_all(b"call\n").is_ok()
                    && answers.read_line(&mut answer).is_ok_and(|read| read > 0);
                match (answered, answer.trim_end()) {
                    (true, "ok") => {
                        figures.served += 1;
                        permit.success();
                    }
                    (true, _) => {
                        figures.failed += 1;
                        permit.failure();
                    }
                    (false, _) => figures.lost += 1,
                }
                let open = node.breaker().state().phase() == Phase::Open || node.fleet_is_open();
                if open && figures.first_trip_ms.is_none() {
                    figures.first_trip_ms = Some(since_start(orders.start_unix_ms));
                }
            }
            Err(refused) => {
                figures.refused += 1;
                if degraded && refused == Refused::AwaitingFleetProbe {
                    figures.failed_by_store += 1;
                }
                if figures.first_refusal_ms.is_none() {
                    figures.first_refusal_ms = Some(since_start(orders.start_unix_ms));
                }
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    if let Some(syncing) = syncing {
        syncing.stop();
    }
    figures.probes = node.stats().probes;
    figures.joins = node.stats().joins;
    Ok(figures.line())
}

/// One node process's figures: written as one line by the node, parsed
/// back by the run that started it.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct NodeFigures {
    pub requests: u64,
    pub served: u64,
    pub failed: u64,
    pub refused: u64,
    /// Refusals only the store's absence caused (F4 says none).
    pub failed_by_store: u64,
    /// Requests the gateway never answered.
    pub lost: u64,
    pub probes: u64,
    pub joins: u64,
    /// Milliseconds from the run's start to the node's first trip.
    pub first_trip_ms: Option<u128>,
    /// Milliseconds from the run's start to the node's first refusal.
    pub first_refusal_ms: Option<u128>,
}

/// The fields of a figures line, in order.
const FIELDS: [&str; 10] = [
    "requests",
    "served",
    "failed",
    "refused",
    "failed_by_store",
    "lost",
    "probes",
    "joins",
    "first_trip_ms",
    "first_refusal_ms",
];

impl NodeFigures {
    fn line(&self) -> String {
        let time = |at: Option<u128>| at.map_or_else(|| "-".to_owned(), |ms| ms.to_string());
        let values = [
            self.requests.to_string(),
            self.served.to_string(),
            self.failed.to_string(),
            self.refused.to_string(),
            self.failed_by_store.to_string(),
            self.lost.to_string(),
            self.probes.to_string(),
            self.joins.to_string(),
            time(self.first_trip_ms),
            time(self.first_refusal_ms),
        ];
        let pairs: Vec<String> = FIELDS
            .iter()
            .zip(values)
            .map(|(name, value)| format!("{name}={value}"))
            .collect();
        pairs.join(" ")
    }

    /// The figures a node printed, or what is wrong with its line.
    pub fn parse(line: &str) -> Result<NodeFigures, String> {
        let field = |name: &str| {
            line.split(' ')
                .find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
                .ok_or_else(|| format!("a node's figures lack {name}: {line:?}"))
        };
        let count = |name: &str| -> Result<u64, String> {
            field(name)?
                .parse()
                .map_err(|_| format!("{name} is not a count: {line:?}"))
        };
        let time = |name: &str| -> Result<Option<u128>, String> {
            match field(name)? {
                "-" => Ok(None),
                ms => ms
                    .parse()
                    .map(Some)
                    .map_err(|_| format!("{name} is not a time: {line:?}")),
            }
        };
        Ok(NodeFigures {
            requests: count("requests")?,
            served: count("served")?,
            failed: count("failed")?,
            refused: count("refused")?,
            failed_by_store: count("failed_by_store")?,
            lost: count("lost")?,
            probes: count("probes")?,
            joins: count("joins")?,
            first_trip_ms: time("first_trip_ms")?,
            first_refusal_ms: time("first_refusal_ms")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_figures_line_reads_back_as_written_and_a_broken_one_is_an_error() {
        let figures = NodeFigures {
            requests: 9,
            served: 4,
            failed: 3,
            refused: 2,
            probes: 1,
            joins: 2,
            first_trip_ms: Some(12),
            ..NodeFigures::default()
        };
        assert_eq!(NodeFigures::parse(&figures.line()), Ok(figures));
        assert!(NodeFigures::parse("requests=9").is_err());
        let line = NodeFigures::default().line().replace("lost=0", "lost=many");
        assert!(NodeFigures::parse(&line).is_err());
    }
}
