//! One gateway, three checkout nodes, over real HTTP on loopback: each node
//! keeps its own breaker, and the nodes are linked as a fleet through an
//! in-memory store in this process (between processes the same link runs
//! over Redis: `just fleet --redis`). Printed, and charted in the HTML report.
//!
//! The orders go to the nodes in turn, as a load balancer would send them,
//! while the gateway is down and then healthy again. Run once with every
//! node on its own, and once linked with the nodes' failures added up
//! (F5): the gateway counts the requests that reached it while it was
//! down, and a timeline per node shows what each node did with its orders.

use std::fmt;
use std::num::NonZeroU32;
use std::time::Duration;

use retry_breaker_fleet::{FleetNode, FleetSettings, MemoryStore, NodeId, Refused};
use retry_breaker_solution::{RetryBreaker, TokioClock};
use tokio_util::sync::CancellationToken;

use crate::client::PaymentClient;
use crate::gateway::{Gateway, Mode};
use crate::orders::Order;
use crate::scenarios::{DemoError, Settings};

/// Checkout nodes behind the load balancer.
pub const NODES: usize = 3;
/// Orders placed while the gateway is down, then as many while it is
/// healthy again.
const ORDERS_DOWN: u32 = 36;
/// The time between two orders, across the nodes.
const SPACING: Duration = Duration::from_millis(40);

/// What one node did with one of its orders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// Sent, and the gateway answered.
    Served,
    /// Sent, and it failed: the request reached the gateway.
    Failed,
    /// Sent as the fleet's probe, under the lease, and it failed.
    ProbeFailed,
    /// Sent as the fleet's probe, and the gateway answered: the fleet closes.
    ProbeServed,
    /// Refused by the node, without calling the gateway.
    Refused,
}

impl Mark {
    fn symbol(self) -> char {
        match self {
            Mark::Served => '✓',
            Mark::Failed => '✗',
            Mark::ProbeFailed => 'P',
            Mark::ProbeServed => 'p',
            Mark::Refused => '·',
        }
    }

    /// Whether the order's request reached the gateway.
    pub fn reached(self) -> bool {
        self != Mark::Refused
    }
}

/// One run of the nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetRun {
    /// Whether the nodes were linked as a fleet.
    pub linked: bool,
    /// Each node's orders, in the order they came.
    pub timelines: Vec<Vec<Mark>>,
    /// Requests the gateway received while it was down (its own count).
    pub reached_while_down: u64,
    /// Requests that reached the gateway before every node had refused an
    /// order at least once: the incident's cost.
    pub first_incident: u64,
}

impl FleetRun {
    /// Whether every node's last order was served: the fleet recovered.
    pub fn recovered(&self) -> bool {
        self.timelines.iter().all(|marks| {
            marks
                .last()
                .is_some_and(|mark| matches!(mark, Mark::Served | Mark::ProbeServed))
        })
    }
}

/// Both runs, for printing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetReport {
    /// Every node on its own.
    pub local: FleetRun,
    /// Linked, the nodes' failures added up.
    pub linked: FleetRun,
    settings: Settings,
    /// Orders placed while the gateway was down, across the nodes.
    orders_down: u32,
}

impl FleetReport {
    /// The run's settings in one line, for the report's chart.
    pub fn subtitle(&self) -> String {
        format!(
            "Orders go to the nodes in turn, one every {:?}: the gateway is down for the first {} \
             and healthy for the next {}. Threshold {} and cooldown {:?} on every node.",
            SPACING,
            self.orders_down,
            self.orders_down,
            self.settings.breaker.threshold,
            self.settings.breaker.cooldown
        )
    }

    /// What the chart shows, as the sentence under it.
    pub fn caption(&self) -> String {
        format!(
            "Three checkout nodes, each with its own breaker, take orders in turn from one load \
             balancer while the payment gateway is down, then healthy. On their own, every node \
             has to fail {} times before it stops sending requests: {} reached the dead gateway. \
             Linked as a fleet, their failures add up and one probe under the fleet's lease \
             speaks for all: {} reached it.",
            self.settings.breaker.threshold,
            self.local.reached_while_down,
            self.linked.reached_while_down
        )
    }

    /// How many of each node's orders came while the gateway was down (the
    /// orders go to the nodes in turn).
    pub fn down_per_node(&self) -> usize {
        (self.orders_down as usize).div_ceil(NODES)
    }
}

/// Runs the three nodes local-only and then linked.
///
/// # Errors
///
/// A gateway that cannot start or be steered.
pub async fn three_nodes(
    settings: Settings,
    cancel: CancellationToken,
) -> Result<FleetReport, DemoError> {
    let local = run(settings, false, &cancel).await?;
    let linked = run(settings, true, &cancel).await?;
    Ok(FleetReport {
        local,
        linked,
        settings,
        orders_down: ORDERS_DOWN,
    })
}

async fn run(
    settings: Settings,
    linked: bool,
    cancel: &CancellationToken,
) -> Result<FleetRun, DemoError> {
    let gateway = Gateway::start().await?;
    gateway.set_mode(Mode::Down).await?;
    let client = PaymentClient::new(&gateway.url(), settings.deadline);
    let clock = TokioClock::new();
    let store = MemoryStore::new(clock);
    // The probe's deadline, the lease's time to live, covers one request.
    let mut fleet = FleetSettings::new(settings.deadline * 2)?;
    if linked {
        fleet = fleet.with_shared_count(
            NonZeroU32::new(settings.breaker.threshold).ok_or("a threshold of 0")?,
        );
    }
    let mut nodes = Vec::new();
    for id in 0..NODES {
        let breaker =
            RetryBreaker::new(settings.breaker.threshold, settings.breaker.cooldown, clock)?;
        let id = NodeId(u32::try_from(id)?);
        store.subscribe(id);
        nodes.push(FleetNode::new(id, "/charges", breaker, fleet)?);
    }
    let sync = |node: &FleetNode<TokioClock>| {
        if linked {
            node.sync_blocking(&store);
        }
    };
    nodes.iter().for_each(sync);

    let mut timelines = vec![Vec::new(); NODES];
    let (mut reached, mut first_incident, mut reached_while_down) = (0, None, 0);
    for n in 0..ORDERS_DOWN * 2 {
        if cancel.is_cancelled() {
            break;
        }
        if n == ORDERS_DOWN {
            reached_while_down = gateway.stats().requests;
            gateway.set_mode(Mode::Healthy).await?;
        }
        let index = n as usize % NODES;
        let node = &nodes[index];
        let mark = match node.try_acquire() {
            Err(Refused::FleetOpen { .. } | Refused::AwaitingFleetProbe | Refused::Local(_)) => {
                Mark::Refused
            }
            Ok(permit) => {
                let probe = permit.is_fleet_probe();
                let order = Order::numbered(n + 1);
                match client.charge(&order).await {
                    Ok(_) => {
                        permit.success();
                        if probe {
                            Mark::ProbeServed
                        } else {
                            Mark::Served
                        }
                    }
                    Err(_) => {
                        permit.failure();
                        if probe {
                            Mark::ProbeFailed
                        } else {
                            Mark::Failed
                        }
                    }
                }
            }
        };
        sync(node);
        if mark.reached() {
            reached += 1;
        }
        timelines[index].push(mark);
        let all_refused = timelines.iter().all(|marks| marks.contains(&Mark::Refused));
        if first_incident.is_none() && all_refused {
            first_incident = Some(reached);
        }
        tokio::time::sleep(SPACING).await;
    }
    gateway.stop().await;
    Ok(FleetRun {
        linked,
        timelines,
        reached_while_down,
        first_incident: first_incident.unwrap_or(reached),
    })
}

impl fmt::Display for FleetRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, marks) in self.timelines.iter().enumerate() {
            let line: String = marks.iter().map(|mark| mark.symbol()).collect();
            writeln!(f, "  node {index}  {line}")?;
        }
        writeln!(
            f,
            "  requests that reached the gateway while it was down: {} ({} before every node refused)",
            self.reached_while_down, self.first_incident
        )?;
        let recovered = if self.recovered() {
            "every node serves again"
        } else {
            "not every node serves again yet"
        };
        writeln!(f, "  after the gateway recovered: {recovered}")
    }
}

impl fmt::Display for FleetReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "== One gateway, three checkout nodes ==")?;
        writeln!(
            f,
            "Orders go to the nodes in turn, one every {:?}; the gateway is down for the first {} \
             and healthy for the next {}. Each node keeps its own breaker (threshold {}, cooldown \
             {:?}). ✓ served, ✗ failed, · refused without a request, P and p the fleet's probe \
             failing and succeeding.",
            SPACING,
            self.orders_down,
            self.orders_down,
            self.settings.breaker.threshold,
            self.settings.breaker.cooldown
        )?;
        writeln!(
            f,
            "Every node on its own: each fails {} times before it opens, and probes on its own.",
            self.settings.breaker.threshold
        )?;
        write!(f, "{}", self.local)?;
        writeln!(
            f,
            "Linked as a fleet, failures added up: {} failures anywhere open every node, and one \
             node at a time probes, under the fleet's lease.",
            self.settings.breaker.threshold
        )?;
        write!(f, "{}", self.linked)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Three nodes of three orders each, two of them while the gateway was
    /// down: on their own every node fails twice; linked, two failures open
    /// the fleet and one probe closes it.
    pub(crate) fn report() -> FleetReport {
        use Mark::{Failed, ProbeServed, Refused, Served};
        FleetReport {
            local: FleetRun {
                linked: false,
                timelines: vec![vec![Failed, Failed, Served]; NODES],
                reached_while_down: 6,
                first_incident: 6,
            },
            linked: FleetRun {
                linked: true,
                timelines: vec![
                    vec![Failed, Refused, ProbeServed],
                    vec![Failed, Refused, Served],
                    vec![Refused, Served, Served],
                ],
                reached_while_down: 2,
                first_incident: 2,
            },
            settings: Settings::demo(),
            orders_down: 6,
        }
    }
}
