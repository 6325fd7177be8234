//! One circuit breaker shared across a fleet of nodes.
//!
//! Each node keeps its own [`RetryBreaker`](retry_breaker_solution::RetryBreaker)
//! and decides every admission from memory (F1): the fleet only ever adds
//! news. A node whose breaker opens publishes the trip, and the others open
//! for the rest of that cooldown; each message carries a [`Stamp`], and a
//! node applies only news newer than its own, so duplicates, replays and
//! messages overtaken on the way change nothing (F2). Those decisions, and
//! who may probe, are made by the node's
//! [`FleetView`](retry_breaker_solution::fleet::FleetView), which has no
//! input or output of its own (it is step 16 of the lab); this crate adds
//! the store, the outbox, the lease and the shared count around it.
//!
//! At the end of the cooldown one node, the holder of the probe [`Lease`],
//! probes for the whole fleet, and its outcome closes or reopens everyone
//! (F3). When the store is down, slow or out of reach, each node serves
//! with its local breaker, says it is degraded, and reads the fleet's state
//! first when the store is back (F4).
//!
//! The store is a trait, [`FleetStore`]: [`MemoryStore`] runs on the manual
//! clock with a [`Nemesis`] for tests and the `fleet` simulation, and the
//! `redis` feature adds `RedisStore`.
//!
//! # Features
//!
//! - `redis` (off by default): `RedisStore`, over
//!   redis-rs and tokio. The core never compiles it.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod lease;
mod memory;
mod message;
mod node;
#[cfg(feature = "redis")]
mod redis_store;
mod settings;
mod store;
mod sync_loop;

pub use lease::{Lease, LeaseError};
pub use memory::{MemoryStore, Nemesis};
pub use message::{Event, FleetMessage, MessageError};
pub use node::{Applied, FleetNode, FleetPermit, FleetStats, KeyError, LinkStatus, Refused};
#[cfg(feature = "redis")]
pub use redis_store::{RedisStore, RedisStoreError};
pub use retry_breaker_solution::fleet::{NodeId, Stamp};
pub use settings::FleetSettings;
pub use store::{FleetStore, StoreError};
pub use sync_loop::SyncLoop;
