//! What a node needs from the store that links the fleet, as a trait, so the
//! node's logic runs the same against the in-memory store (with its
//! nemesis) and against Redis.
//!
//! Every call is bounded: an implementation answers within its bound or
//! fails with [`StoreError::TimedOut`]. A node never calls the store while
//! admitting an attempt (see [`FleetNode::sync_blocking`](crate::FleetNode::sync_blocking)),
//! so a slow store slows the fleet's news, never a call.

use std::sync::Arc;
use std::time::Duration;

use crate::lease::Lease;
use crate::message::{FleetMessage, MessageError};
use retry_breaker_solution::fleet::NodeId;

/// The store's side of the fleet link, seen from one node.
pub trait FleetStore {
    /// Records `message` as the key's current state if it is newer than the
    /// one stored, and publishes it to every subscribed node, at most once.
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the store cannot be reached within its bound.
    fn publish(&self, from: NodeId, message: &FleetMessage) -> Result<(), StoreError>;

    /// The messages published to `node` since its last call, oldest first,
    /// each line decoded (a malformed one is an `Err`, never a panic).
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the store cannot be reached within its bound.
    fn receive(&self, node: NodeId) -> Result<Vec<Result<FleetMessage, MessageError>>, StoreError>;

    /// The key's current state, as a message whose trip carries what is
    /// left of the cooldown now; `None` if nothing was ever published.
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the store cannot be reached within its bound, or
    /// the stored state is malformed.
    fn read_state(&self, node: NodeId, key: &str) -> Result<Option<FleetMessage>, StoreError>;

    /// Grants `lease` if no one holds the key's probe lease (`SET NX PX`).
    ///
    /// A store that has forgotten its keys (a flush, a failover to a
    /// replica that missed them, an eviction, a restart without
    /// persistence) cannot know whether a lease it granted before is still
    /// held, so it grants none for the lease's time to live: the probe that
    /// may be out ends by then (F3). It tells by the fleet's witness, a key
    /// with no expiry written when the fleet is set up; a request that finds
    /// it missing writes it back with an ownerless lease of that time to
    /// live, and is answered [`StoreError::Forgot`].
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the store cannot be reached within its bound, or
    /// [`StoreError::Forgot`] as above.
    fn acquire_lease(&self, node: NodeId, lease: &Lease) -> Result<bool, StoreError>;

    /// Deletes the probe lease if `lease`'s owner still holds it
    /// (compare-and-delete); `false` if it had expired or was another's.
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the store cannot be reached within its bound.
    fn release_lease(&self, node: NodeId, lease: &Lease) -> Result<bool, StoreError>;
}

/// Why a store call did not answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The store is down or this node is cut off from it.
    #[error("the fleet store is unreachable: {0}")]
    Unavailable(String),
    /// The store did not answer within the call's bound.
    #[error("the fleet store did not answer within {0:?}")]
    TimedOut(Duration),
    /// The store answered with something that is not fleet state.
    #[error(transparent)]
    Malformed(#[from] MessageError),
    /// The store has lost its keys (a flush, a failover, a restart without
    /// persistence), and grants no probe lease for this long, by when any
    /// probe granted before has ended.
    #[error(
        "the fleet store has lost its keys: no probe lease for {0:?}, while a probe granted before may still be out"
    )]
    Forgot(Duration),
}

/// A store shared by several nodes (in one process, or by a node and its
/// [`SyncLoop`](crate::SyncLoop)) is the store itself.
impl<S: FleetStore + ?Sized> FleetStore for Arc<S> {
    fn publish(&self, from: NodeId, message: &FleetMessage) -> Result<(), StoreError> {
        (**self).publish(from, message)
    }

    fn receive(&self, node: NodeId) -> Result<Vec<Result<FleetMessage, MessageError>>, StoreError> {
        (**self).receive(node)
    }

    fn read_state(&self, node: NodeId, key: &str) -> Result<Option<FleetMessage>, StoreError> {
        (**self).read_state(node, key)
    }

    fn acquire_lease(&self, node: NodeId, lease: &Lease) -> Result<bool, StoreError> {
        (**self).acquire_lease(node, lease)
    }

    fn release_lease(&self, node: NodeId, lease: &Lease) -> Result<bool, StoreError> {
        (**self).release_lease(node, lease)
    }
}
