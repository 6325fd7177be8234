//! Step 16 (advanced, optional): what one node knows of its fleet.
//!
//! A fleet of nodes each keeps its own breaker for the same dependency. A
//! node whose breaker trips tells the others, so that they stop calling the
//! dependency before each has failed on its own; at the end of the cooldown
//! one node, the holder of the fleet's probe lease, probes for everyone.
//! The network part (a store, pub/sub, the lease's `SET NX PX`) lives in
//! the `retry-breaker-fleet` crate; this module is the part that decides,
//! with no input or output of its own:
//!
//! - [`FleetView::hear`]: what a message does to the node's view (F2).
//!   Messages arrive late, twice, out of order or replayed, so each carries
//!   a [`Stamp`], and only news newer than what the node knows counts: the
//!   fleet's version of the generations that fence stale outcomes (B6).
//! - [`FleetView::admission`]: whether the node refuses, waits for the
//!   fleet's probe, probes under the lease, or leaves the call to its own
//!   breaker (F1, F3, F4).
//! - [`FleetView::speaks_for_fleet`]: whether a probe's outcome still
//!   answers for the fleet (F3).

// BEGIN WITH TODO(16): one way to remember the fleet; a student designs their own
use std::collections::BTreeMap;
// END WITH TODO
use std::fmt;
use std::num::NonZeroU32;
use std::time::Duration;

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
/// use retry_breaker_solution::fleet::{NodeId, Stamp};
///
/// let first = Stamp::new(1, NodeId(7));
/// let next = first.after(NodeId(2));
/// assert!(next > first);
/// assert!(Stamp::new(1, NodeId(8)) > first, "same epoch: the node breaks the tie");
/// assert_eq!(next.sender(), NodeId(2));
/// assert_eq!(format!("{next}, sent by {}", next.sender()), "e2/node2, sent by node2");
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

    /// The node that sent the message.
    #[must_use]
    pub fn sender(self) -> NodeId {
        NodeId(self.node)
    }
}

impl fmt::Display for Stamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "e{}/node{}", self.epoch, self.node)
    }
}

/// What a fleet message says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum News {
    /// The sender's breaker opened, with `cooldown_left` of its cooldown
    /// left when the message left. The rest of the cooldown travels, not
    /// its end: the nodes share no clock.
    Trip {
        /// What was left of the cooldown when the message was sent.
        cooldown_left: Duration,
    },
    /// The fleet's probe succeeded: the fleet is closed again.
    Close,
}

/// What hearing a message did to the view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Heard {
    /// A trip that counts: newer than everything heard (one node opens
    /// the fleet), or, with a quorum, newer than the last close and than
    /// its sender's last trip. The sender counts as open until its
    /// cooldown ends.
    Opened,
    /// A close newer than the last close: every trip before it is over (a
    /// trip sent after it still counts).
    Closed,
    /// Nothing the view did not know (a duplicate, a replay, news
    /// overtaken on the way): nothing changed.
    Fenced,
}

/// The probe lease a node holds, as the view needs to know it: the fleet
/// state it answers for, and when the node stops trusting it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LeaseTerms {
    /// The fleet state (the newest stamp) the lease was asked for.
    pub stamp: Stamp,
    /// When the lease ends, on this node's clock: valid strictly before.
    pub expires: Duration,
}

/// What the node does with an attempt, as far as the fleet is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Admission {
    /// The fleet is open and its cooldown has `remaining` left: refuse
    /// without calling the dependency.
    Refuse {
        /// What is left of the fleet's cooldown.
        remaining: Duration,
        /// The node whose trip ends last.
        tripped_by: NodeId,
    },
    /// The cooldown is over and the fleet's probe is not this node's to
    /// send: refuse, and try again shortly.
    AwaitProbe,
    /// Send the fleet's probe, through the local breaker, under the lease.
    Probe,
    /// The fleet has no say: the local breaker decides, as with no fleet.
    Local,
}

// BEGIN WITH TODO(16): one way to remember the fleet; a student designs their own
/// One node's trip as the view remembers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Report {
    stamp: Stamp,
    /// When the trip's cooldown ends, on this node's clock.
    until: Duration,
}
// END WITH TODO

/// What one node knows of the fleet's trips and closes.
///
/// ```
/// use std::num::NonZeroU32;
/// use std::time::Duration;
/// use retry_breaker_solution::fleet::{Admission, FleetView, Heard, News, NodeId, Stamp};
///
/// let mut view = FleetView::new(NonZeroU32::MIN);
/// let trip = Stamp::new(1, NodeId(3));
/// let ten_seconds = News::Trip { cooldown_left: Duration::from_secs(10) };
/// assert_eq!(view.hear(trip, ten_seconds, Duration::ZERO), Heard::Opened);
/// assert_eq!(view.hear(trip, ten_seconds, Duration::ZERO), Heard::Fenced, "a duplicate");
///
/// let later = Duration::from_secs(4);
/// assert_eq!(
///     view.admission(later, true, None, false),
///     Admission::Refuse { remaining: Duration::from_secs(6), tripped_by: NodeId(3) },
/// );
/// assert_eq!(view.hear(trip.after(NodeId(5)), News::Close, later), Heard::Closed);
/// assert_eq!(view.admission(later, true, None, false), Admission::Local);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetView {
    /// How many nodes must report open for the fleet to be open.
    quorum: NonZeroU32,
    // BEGIN WITH TODO(16): one way to remember the fleet; a student designs their own
    /// The newest stamp heard (or sent: a node hears its own messages).
    latest: Stamp,
    /// The stamp of the last close heard: trips at or before it are over.
    closed_at: Stamp,
    /// Each node's newest trip since that close.
    reports: BTreeMap<NodeId, Report>,
    // END WITH TODO
}

impl FleetView {
    /// A view of a fleet that has said nothing yet, which opens once
    /// `quorum` nodes report open (1: one node's trip opens all).
    #[must_use]
    pub fn new(quorum: NonZeroU32) -> Self {
        FleetView {
            quorum,
            // BEGIN WITH TODO(16): one way to remember the fleet; a student designs their own
            latest: Stamp::default(),
            closed_at: Stamp::default(),
            reports: BTreeMap::new(),
            // END WITH TODO
        }
    }

    /// The newest stamp the node has heard: a message it sends next is
    /// stamped [`Stamp::after`] it.
    #[must_use]
    pub fn latest(&self) -> Stamp {
        // BEGIN TODO(16): the newest stamp heard so far (F2)
        self.latest
        // STARTER: Stamp::default()
        // END TODO
    }

    /// Hears one message, at `now` on this node's clock. Only news newer
    /// than the view changes it (F2); a node hears its own messages too.
    pub fn hear(&mut self, stamp: Stamp, news: News, now: Duration) -> Heard {
        // BEGIN TODO(16): fence messages no newer than the view; apply a newer trip or close (F2)
        let heard = match news {
            // One node opens the fleet: a trip counts only if it is newer
            // than all the news, as one line of history.
            News::Trip { .. } if self.quorum == NonZeroU32::MIN => stamp > self.latest,
            // A quorum counts nodes: each node's newest trip after the last
            // close counts once, whatever arrived first.
            News::Trip { .. } => {
                let newer_than_its_own = self
                    .reports
                    .get(&stamp.sender())
                    .is_none_or(|report| stamp > report.stamp);
                stamp > self.closed_at && newer_than_its_own
            }
            // A close answers the trips before it, and only those: a trip
            // sent after it is a new incident. So it is compared with the
            // last close, and nodes that heard the same news in different
            // orders agree on what is still open.
            News::Close => stamp > self.closed_at,
        };
        if !heard {
            return Heard::Fenced;
        }
        self.latest = self.latest.max(stamp);
        match news {
            News::Trip { cooldown_left } => {
                let until = now.saturating_add(cooldown_left);
                self.reports.insert(stamp.sender(), Report { stamp, until });
                Heard::Opened
            }
            News::Close => {
                // The close ends the trips before it. A trip heard first but
                // sent after it (a node that failed again once the probe had
                // succeeded) keeps counting.
                self.reports.retain(|_, report| report.stamp > stamp);
                self.closed_at = stamp;
                Heard::Closed
            }
        }
        // STARTER: Heard::Fenced
        // END TODO
    }

    /// Until when the fleet is open, and the node whose trip ends last, if
    /// at least the quorum of nodes reported open since the last close. It
    /// stays open past that time until a close is heard: the cooldown is
    /// over, and the fleet waits for its probe.
    #[must_use]
    pub fn open_until(&self) -> Option<(Duration, NodeId)> {
        // BEGIN TODO(16): open while at least the quorum of nodes reported open since the last close; until the latest end (F2)
        if self.reports.len() < self.quorum.get() as usize {
            return None;
        }
        self.reports
            .iter()
            .max_by_key(|(_, report)| (report.until, report.stamp))
            .map(|(node, report)| (report.until, *node))
        // STARTER: None
        // END TODO
    }

    /// What the node does with an attempt at `now` (F1, F3, F4): `linked`
    /// says whether it hears the fleet, `lease` is the probe lease it
    /// holds, if any, and `probe_out` whether a probe it sent under that
    /// lease has not reported yet.
    #[must_use]
    pub fn admission(
        &self,
        now: Duration,
        linked: bool,
        lease: Option<LeaseTerms>,
        probe_out: bool,
    ) -> Admission {
        // BEGIN TODO(16): refuse in the fleet's cooldown; after it, probe only under a valid lease for the newest news, one probe at a time; cut off, the local breaker decides (F1, F3, F4)
        let Some((until, tripped_by)) = self.open_until() else {
            return Admission::Local;
        };
        if now < until {
            return Admission::Refuse {
                remaining: until - now,
                tripped_by,
            };
        }
        // Cut off from the fleet after its cooldown, the node cannot take
        // the lease: its own breaker decides, as with no fleet (F4).
        if !linked {
            return Admission::Local;
        }
        match lease {
            Some(lease) if self.speaks_for_fleet(lease, now) && !probe_out => Admission::Probe,
            _ => Admission::AwaitProbe,
        }
        // STARTER: Admission::Local
        // END TODO
    }

    /// Whether a probe under `lease` still answers for the fleet at `now`:
    /// the lease has not expired and no newer news came since it was asked
    /// for (F3). An outcome that does not is fenced.
    #[must_use]
    pub fn speaks_for_fleet(&self, lease: LeaseTerms, now: Duration) -> bool {
        // BEGIN TODO(16): only a lease still valid, for the newest news (F3)
        now < lease.expires && lease.stamp == self.latest
        // STARTER: false
        // END TODO
    }
}
