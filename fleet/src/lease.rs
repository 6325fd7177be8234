//! The fleet's probe lease: at the end of a cooldown, only the node that
//! holds it may send the probe, so the fleet sends one probe, not one per
//! node.
//!
//! The lease's time to live is the probe's deadline. A node that dies or
//! hangs mid-probe therefore frees the fleet when the lease expires, and the
//! outcome it reports after that is fenced: another node may already hold
//! the lease and be probing.

use std::time::Duration;

use retry_breaker_solution::fleet::{LeaseTerms, NodeId, Stamp};

/// A request for the probe lease, or a lease granted.
///
/// The owner token names the node, the fleet state the probe answers for
/// and the node's request number, so a release (compare-and-delete) can
/// only ever delete this very lease: never one granted after it expired,
/// to another node or to the same node again.
///
/// ```
/// use std::time::Duration;
/// use retry_breaker_fleet::{Lease, NodeId, Stamp};
///
/// let lease = Lease::new("payments", NodeId(4), Stamp::new(2, NodeId(9)), 7, Duration::from_secs(1), Duration::ZERO)?;
/// assert_eq!(lease.store_key(), "payments:probe");
/// assert_eq!(lease.owner(), "node4@e2/node9#7");
/// assert!(lease.is_valid(Duration::from_millis(999)));
/// assert!(!lease.is_valid(Duration::from_secs(1)));
/// assert!(Lease::new("payments", NodeId(4), Stamp::default(), 8, Duration::ZERO, Duration::ZERO).is_err());
/// # Ok::<(), retry_breaker_fleet::LeaseError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Lease {
    key: String,
    owner: String,
    /// The fleet state the probe answers for.
    stamp: Stamp,
    ttl: Duration,
    /// When the node stops trusting it, on its own clock. The store starts
    /// the time to live when it grants the lease, later than the node asked,
    /// so the node always gives it up first.
    expires: Duration,
}

impl Lease {
    /// A lease for `node` on `key`'s probe, answering for the fleet state
    /// `stamp`, the node's request number `serial`, asked for at `now` for
    /// `ttl`.
    ///
    /// # Errors
    ///
    /// [`LeaseError::ZeroTtl`] for a zero `ttl`, which no store can grant
    /// (Redis refuses `PX 0`), and [`LeaseError::TtlTooLong`] for one that
    /// does not fit a store's milliseconds.
    pub fn new(
        key: &str,
        node: NodeId,
        stamp: Stamp,
        serial: u64,
        ttl: Duration,
        now: Duration,
    ) -> Result<Self, LeaseError> {
        check_ttl(ttl)?;
        Ok(Lease {
            key: key.to_owned(),
            owner: format!("{node}@{stamp}#{serial}"),
            stamp,
            ttl,
            expires: now.saturating_add(ttl),
        })
    }

    /// The fleet breaker's key the lease is for.
    #[must_use]
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The store key the lease lives under: one lease per fleet breaker.
    #[must_use]
    pub fn store_key(&self) -> String {
        format!("{}:probe", self.key)
    }

    /// The owner token, the value compared before deleting.
    #[must_use]
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// The fleet state the probe answers for.
    #[must_use]
    pub fn stamp(&self) -> Stamp {
        self.stamp
    }

    /// The time to live asked for, the probe's deadline.
    #[must_use]
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// When the holder stops trusting it, on its own clock: the probe's
    /// deadline.
    #[must_use]
    pub fn expires(&self) -> Duration {
        self.expires
    }

    /// What the node's [`FleetView`](retry_breaker_solution::fleet::FleetView)
    /// needs to know of the lease: the state it answers for and its end.
    #[must_use]
    pub fn terms(&self) -> LeaseTerms {
        LeaseTerms {
            stamp: self.stamp,
            expires: self.expires,
        }
    }

    /// Whether the holder may still trust it at `now` (its own clock).
    #[must_use]
    pub fn is_valid(&self, now: Duration) -> bool {
        now < self.expires
    }
}

/// The lease's time to live in whole milliseconds, as stores count it.
pub(crate) fn ttl_millis(ttl: Duration) -> Result<u64, LeaseError> {
    check_ttl(ttl)?;
    u64::try_from(ttl.as_millis()).map_err(|_| LeaseError::TtlTooLong(ttl))
}

fn check_ttl(ttl: Duration) -> Result<(), LeaseError> {
    if ttl.as_millis() == 0 {
        return Err(LeaseError::ZeroTtl);
    }
    if u64::try_from(ttl.as_millis()).is_err() {
        return Err(LeaseError::TtlTooLong(ttl));
    }
    Ok(())
}

/// A lease that cannot be asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum LeaseError {
    /// The time to live is under a millisecond: the lease would be expired
    /// before it was granted, and no probe could ever run under it.
    #[error("the probe lease needs a time to live of at least 1 ms (it is the probe's deadline)")]
    ZeroTtl,
    /// The time to live does not fit in a store's milliseconds.
    #[error("the probe lease's time to live {0:?} is too long for a store")]
    TtlTooLong(Duration),
}
