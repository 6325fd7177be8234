//! The fleet store in memory, on the manual clock, with a nemesis that the
//! test sets: delay, loss, duplication, reordering, a partition, a store
//! that is down or slow, and malformed lines.
//!
//! Everything the nemesis does is drawn from a seeded generator, so a run is
//! a function of its settings and its seed, and a failing property replays.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use retry_breaker_solution::{Clock, ManualClock};

use crate::lease::{Lease, ttl_millis};
use crate::message::{Event, FleetMessage, MessageError};
use crate::store::{FleetStore, StoreError};
use retry_breaker_solution::fleet::NodeId;

/// What goes wrong between the nodes and the store, chosen by the test.
/// The default is a perfect link.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Nemesis {
    /// Each message reaches each node after a delay drawn up to this.
    pub max_delay: Duration,
    /// Whether messages may overtake each other; without it each node gets
    /// them in the order they were sent, delays and all.
    pub reorder: bool,
    /// Chance in a thousand that a message never reaches a node.
    pub loss_per_mille: u32,
    /// Chance in a thousand that a message reaches a node twice.
    pub duplicate_per_mille: u32,
    /// Chance in a thousand that a node receives a garbled line instead.
    pub garble_per_mille: u32,
    /// Nodes cut off from the store: every call fails, and what is
    /// published meanwhile never reaches them.
    pub partitioned: BTreeSet<NodeId>,
    /// The store is down for everyone.
    pub down: bool,
    /// How long every call takes; past the store's bound it times out.
    pub latency: Duration,
}

#[derive(Debug)]
struct Stored {
    message: FleetMessage,
    /// For a trip, when its cooldown ends on the store's clock.
    open_until: Option<Duration>,
}

#[derive(Debug)]
struct World {
    nemesis: Nemesis,
    seed: u64,
    sequence: u64,
    state: BTreeMap<String, Stored>,
    leases: BTreeMap<String, (String, Duration)>,
    /// Per subscribed node: (delivery time, order sent, line).
    inboxes: BTreeMap<NodeId, Vec<(Duration, u64, String)>>,
    leases_granted: u64,
    /// The fleet's witness: whether the store still holds what it was told.
    /// A store made in memory starts with it; [`MemoryStore::forget`]
    /// takes it away with everything else.
    witnessed: bool,
}

impl World {
    /// The next draw of a splitmix64 generator.
    fn draw(&mut self) -> u64 {
        self.seed = self.seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn chance(&mut self, per_mille: u32) -> bool {
        per_mille > 0 && self.draw() % 1000 < u64::from(per_mille)
    }

    fn delay(&mut self) -> Duration {
        let max = u64::try_from(self.nemesis.max_delay.as_micros()).unwrap_or(u64::MAX);
        if max == 0 {
            return Duration::ZERO;
        }
        Duration::from_micros(self.draw() % (max + 1))
    }
}

/// The fleet store in memory, for tests, the `fleet` simulation and a
/// fleet of nodes in one process: on the manual clock (the default), or on
/// any other, such as the demo's tokio clock.
///
/// ```
/// use std::time::Duration;
/// use retry_breaker_fleet::{FleetStore, Lease, MemoryStore, NodeId, Stamp};
/// use retry_breaker_solution::ManualClock;
///
/// let clock = ManualClock::new();
/// let store = MemoryStore::new(clock.clone());
/// let ttl = Duration::from_millis(500);
/// let a = Lease::new("db", NodeId(1), Stamp::default(), 1, ttl, Duration::ZERO)?;
/// let b = Lease::new("db", NodeId(2), Stamp::default(), 1, ttl, Duration::ZERO)?;
/// assert!(store.acquire_lease(NodeId(1), &a)?);
/// assert!(!store.acquire_lease(NodeId(2), &b)?, "one holder at a time");
/// clock.advance(ttl);
/// assert!(store.acquire_lease(NodeId(2), &b)?, "an expired lease frees the fleet");
/// assert!(!store.release_lease(NodeId(1), &a)?, "a late release deletes nothing");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct MemoryStore<C = ManualClock> {
    clock: C,
    bound: Duration,
    world: Mutex<World>,
}

impl<C: Clock> MemoryStore<C> {
    /// A perfect store on `clock`, whose calls are bounded at 50 ms.
    pub fn new(clock: C) -> Self {
        MemoryStore::with_nemesis(clock, Nemesis::default(), 0)
    }

    /// A store that misbehaves as `nemesis` says, its draws seeded by `seed`.
    pub fn with_nemesis(clock: C, nemesis: Nemesis, seed: u64) -> Self {
        MemoryStore {
            clock,
            bound: Duration::from_millis(50),
            world: Mutex::new(World {
                nemesis,
                seed,
                sequence: 0,
                state: BTreeMap::new(),
                leases: BTreeMap::new(),
                inboxes: BTreeMap::new(),
                leases_granted: 0,
                witnessed: true,
            }),
        }
    }

    /// Subscribes `node` to the fleet's messages from now on.
    pub fn subscribe(&self, node: NodeId) {
        self.world().inboxes.entry(node).or_default();
    }

    /// Changes what goes wrong, from now on.
    pub fn set_nemesis(&self, nemesis: Nemesis) {
        self.world().nemesis = nemesis;
    }

    /// Changes what goes wrong, from now on, in place.
    pub fn update_nemesis(&self, change: impl FnOnce(&mut Nemesis)) {
        change(&mut self.world().nemesis);
    }

    /// Probe leases granted so far.
    pub fn leases_granted(&self) -> u64 {
        self.world().leases_granted
    }

    /// Loses every key, as a Redis `FLUSHALL`, a failover to a replica that
    /// missed them, or a restart without persistence would: the state, the
    /// leases and the fleet's witness. Subscriptions stay, as they do over
    /// `FLUSHALL`. The next lease request finds the witness gone and grants
    /// nothing for one probe deadline (see [`FleetStore::acquire_lease`]).
    pub fn forget(&self) {
        let mut world = self.world();
        world.state.clear();
        world.leases.clear();
        world.witnessed = false;
    }

    /// Delivers `line` to every subscribed node as if it had been
    /// published, for testing what a node does with a malformed line or a
    /// replayed message.
    pub fn inject(&self, line: &str) {
        let now = self.clock.now();
        let mut world = self.world();
        world.sequence += 1;
        let sequence = world.sequence;
        for inbox in world.inboxes.values_mut() {
            inbox.push((now, sequence, line.to_owned()));
        }
    }

    /// Whether `node` may reach the store now, as the nemesis says.
    fn reach(&self, world: &World, node: NodeId) -> Result<(), StoreError> {
        if world.nemesis.down {
            return Err(StoreError::Unavailable("the store is down".into()));
        }
        if world.nemesis.partitioned.contains(&node) {
            return Err(StoreError::Unavailable(format!("{node} is cut off")));
        }
        if world.nemesis.latency > self.bound {
            // A real client would have waited the bound; the manual clock
            // has no need to.
            return Err(StoreError::TimedOut(self.bound));
        }
        Ok(())
    }

    fn world(&self) -> MutexGuard<'_, World> {
        self.world.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<C: Clock> FleetStore for MemoryStore<C> {
    fn publish(&self, from: NodeId, message: &FleetMessage) -> Result<(), StoreError> {
        let now = self.clock.now();
        let mut world = self.world();
        self.reach(&world, from)?;
        // A run of failures is news about the current epoch, never state.
        let stateful = !matches!(message.event, Event::Failures { .. });
        let newer = world
            .state
            .get(&message.key)
            .is_none_or(|stored| message.stamp > stored.message.stamp);
        if stateful && newer {
            let open_until = match message.event {
                Event::Trip { cooldown_left } => Some(now.saturating_add(cooldown_left)),
                Event::Close | Event::Failures { .. } => None,
            };
            world.state.insert(
                message.key.clone(),
                Stored {
                    message: message.clone(),
                    open_until,
                },
            );
        }
        world.sequence += 1;
        let sequence = world.sequence;
        let line = message.encode();
        let nodes: Vec<NodeId> = world.inboxes.keys().copied().collect();
        let (loss, duplicate, garble) = (
            world.nemesis.loss_per_mille,
            world.nemesis.duplicate_per_mille,
            world.nemesis.garble_per_mille,
        );
        for node in nodes {
            if world.nemesis.partitioned.contains(&node) || world.chance(loss) {
                continue;
            }
            let copies = if world.chance(duplicate) { 2 } else { 1 };
            for _ in 0..copies {
                let delay = world.delay();
                let garbled = world.chance(garble);
                let line = if garbled {
                    line.replacen(' ', "?", 2)
                } else {
                    line.clone()
                };
                if let Some(inbox) = world.inboxes.get_mut(&node) {
                    inbox.push((now + delay, sequence, line));
                }
            }
        }
        Ok(())
    }

    fn receive(&self, node: NodeId) -> Result<Vec<Result<FleetMessage, MessageError>>, StoreError> {
        let now = self.clock.now();
        let mut world = self.world();
        self.reach(&world, node)?;
        let reorder = world.nemesis.reorder;
        let Some(inbox) = world.inboxes.get_mut(&node) else {
            return Ok(Vec::new());
        };
        if reorder {
            inbox.sort_by_key(|(at, sequence, _)| (*at, *sequence));
        } else {
            // In order, each message waiting for the ones sent before it.
            let mut latest = Duration::ZERO;
            for (at, _, _) in inbox.iter_mut() {
                latest = latest.max(*at);
                *at = latest;
            }
        }
        let ready = inbox.iter().take_while(|(at, _, _)| *at <= now).count();
        Ok(inbox
            .drain(..ready)
            .map(|(_, _, line)| FleetMessage::decode(&line))
            .collect())
    }

    fn read_state(&self, node: NodeId, key: &str) -> Result<Option<FleetMessage>, StoreError> {
        let now = self.clock.now();
        let world = self.world();
        self.reach(&world, node)?;
        Ok(world.state.get(key).map(|stored| {
            let mut message = stored.message.clone();
            if let Some(until) = stored.open_until {
                message.event = Event::Trip {
                    cooldown_left: until.saturating_sub(now),
                };
            }
            message
        }))
    }

    fn acquire_lease(&self, node: NodeId, lease: &Lease) -> Result<bool, StoreError> {
        let now = self.clock.now();
        let ttl = Duration::from_millis(
            ttl_millis(lease.ttl()).map_err(|e| StoreError::Unavailable(e.to_string()))?,
        );
        let mut world = self.world();
        self.reach(&world, node)?;
        let key = lease.store_key();
        if !world.witnessed {
            // The store forgot: a lease it granted before may still be
            // held. Nobody gets one until that lease would have expired.
            world.witnessed = true;
            world.leases.insert(key, (String::new(), now + ttl));
            return Err(StoreError::Forgot(ttl));
        }
        if world
            .leases
            .get(&key)
            .is_some_and(|(_, expires)| now < *expires)
        {
            return Ok(false);
        }
        world
            .leases
            .insert(key, (lease.owner().to_owned(), now + ttl));
        world.leases_granted += 1;
        Ok(true)
    }

    fn release_lease(&self, node: NodeId, lease: &Lease) -> Result<bool, StoreError> {
        let now = self.clock.now();
        let mut world = self.world();
        self.reach(&world, node)?;
        let key = lease.store_key();
        let held = world
            .leases
            .get(&key)
            .is_some_and(|(owner, expires)| owner == lease.owner() && now < *expires);
        if held {
            world.leases.remove(&key);
        }
        Ok(held)
    }
}
