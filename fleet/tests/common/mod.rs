//! A fleet on the manual clock behind one dependency that the test turns
//! off and on, with every fleet probe's time in flight on record.

#![allow(dead_code)]

use std::time::Duration;

use retry_breaker_fleet::{FleetNode, FleetSettings, MemoryStore, Nemesis, NodeId, Refused};
use retry_breaker_solution::{Clock, ManualClock, RetryBreaker};

pub const THRESHOLD: u32 = 3;
pub const COOLDOWN: Duration = Duration::from_secs(10);
pub const PROBE_DEADLINE: Duration = Duration::from_secs(1);

/// What one call did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    Served,
    Failed,
    Refused(Refused),
}

/// One fleet probe: the node, when it was admitted, when it was done (its
/// outcome, or its deadline).
pub type Probe = (usize, Duration, Duration);

pub struct Fleet {
    pub clock: ManualClock,
    pub store: MemoryStore,
    pub nodes: Vec<FleetNode<ManualClock>>,
    pub dependency_up: bool,
    /// Calls that reached the dependency.
    pub reached: u64,
    /// Each fleet probe: (node, admitted at, done by).
    pub probes: Vec<Probe>,
}

impl Fleet {
    pub fn new(size: u32, settings: FleetSettings, nemesis: Nemesis, seed: u64) -> Fleet {
        let clock = ManualClock::new();
        let store = MemoryStore::with_nemesis(clock.clone(), nemesis, seed);
        let nodes = (0..size)
            .map(|id| {
                let breaker = RetryBreaker::new(THRESHOLD, COOLDOWN, clock.clone()).unwrap();
                store.subscribe(NodeId(id));
                FleetNode::new(NodeId(id), "db", breaker, settings).unwrap()
            })
            .collect();
        let mut fleet = Fleet {
            clock,
            store,
            nodes,
            dependency_up: true,
            reached: 0,
            probes: Vec::new(),
        };
        fleet.sync_all();
        fleet
    }

    pub fn with_size(size: u32) -> Fleet {
        Fleet::new(size, settings(), Nemesis::default(), 0)
    }

    pub fn sync_all(&mut self) {
        for node in &self.nodes {
            node.sync_blocking(&self.store);
        }
    }

    /// One call through node `index`, answered at once.
    pub fn call(&mut self, index: usize) -> Call {
        let node = &self.nodes[index];
        match node.try_acquire() {
            Err(refused) => Call::Refused(refused),
            Ok(permit) => {
                self.reached += 1;
                if permit.is_fleet_probe() {
                    let now = self.clock.now();
                    self.probes.push((index, now, now));
                }
                if self.dependency_up {
                    permit.success();
                    Call::Served
                } else {
                    permit.failure();
                    Call::Failed
                }
            }
        }
    }

    /// Node `index`'s fleet probe, if it holds the lease, left hanging: the
    /// node dies or hangs mid-probe and never reports. Whether it probed.
    pub fn hang_probe(&mut self, index: usize) -> bool {
        let node = &self.nodes[index];
        match node.try_acquire() {
            Ok(permit) if permit.is_fleet_probe() => {
                self.reached += 1;
                let now = self.clock.now();
                // In flight until its deadline, when the lease expires: a
                // lease granted at the sync before, so at most
                // PROBE_DEADLINE from now, and less for a late probe.
                let deadline = permit.probe_deadline().expect("a fleet probe's deadline");
                assert!(deadline > now && deadline <= now + PROBE_DEADLINE);
                self.probes.push((index, now, deadline));
                drop(permit);
                true
            }
            Ok(permit) => {
                self.reached += 1;
                permit.success();
                false
            }
            Err(_) => false,
        }
    }

    pub fn advance(&self, by: Duration) {
        self.clock.advance(by);
    }

    /// Whether any two fleet probes were in flight at once.
    pub fn overlapping_probes(&self) -> Option<(Probe, Probe)> {
        let mut probes = self.probes.clone();
        probes.sort_by_key(|probe| probe.1);
        probes
            .windows(2)
            .find(|pair| pair[1].1 < pair[0].2)
            .map(|pair| (pair[0], pair[1]))
    }
}

pub fn settings() -> FleetSettings {
    FleetSettings::new(PROBE_DEADLINE).unwrap()
}
