//! The fleet's order of events: every message carries a [`Stamp`], and a
//! node applies a message only if it is newer than what it already knows.
//!
//! This is the fleet's version of the breaker's generations (B6): a local
//! outcome from an older generation is stale, and so is a fleet message
//! older than the node's view. Duplicates, replays and messages overtaken
//! on the way all fail the same test, so one comparison fences them all.

use std::fmt;

/// A node of the fleet, named by a number unique within the fleet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "node{}", self.0)
    }
}

/// Where a message stands in the fleet's history: its epoch, then the node
/// that sent it, so two nodes that trip at the same moment still get a
/// total order and every node picks the same winner.
///
/// A node stamps a new message with the epoch after the newest it has
/// seen, so a message sent with knowledge of another is always newer.
///
/// ```
/// use retry_breaker_fleet::{NodeId, Stamp};
///
/// let first = Stamp::new(1, NodeId(7));
/// let next = first.after(NodeId(2));
/// assert!(next > first);
/// assert!(Stamp::new(1, NodeId(8)) > first, "same epoch: the node breaks the tie");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Stamp {
    /// The fleet epoch: one more than the newest the sender had seen.
    pub epoch: u64,
    /// The sender, the tie-breaker within an epoch.
    pub node: u32,
}

impl Stamp {
    /// The stamp of epoch `epoch` sent by `node`.
    #[must_use]
    pub fn new(epoch: u64, node: NodeId) -> Self {
        Stamp {
            epoch,
            node: node.0,
        }
    }

    /// The stamp `node` gives a message it sends after seeing this one.
    #[must_use]
    pub fn after(self, node: NodeId) -> Self {
        Stamp::new(self.epoch.saturating_add(1), node)
    }
}

impl fmt::Display for Stamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "e{}/node{}", self.epoch, self.node)
    }
}
