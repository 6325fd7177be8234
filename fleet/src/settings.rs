//! How a node joins in the fleet's decisions: the probe's deadline, and
//! what opens the fleet (one node's trip, a quorum of them, or the
//! failures of all nodes added up).

use std::num::NonZeroU32;
use std::time::Duration;

use crate::lease::{LeaseError, ttl_millis};

/// A fleet node's settings.
///
/// ```
/// use std::num::NonZeroU32;
/// use std::time::Duration;
/// use retry_breaker_fleet::FleetSettings;
///
/// let one_trip_opens_all = FleetSettings::new(Duration::from_secs(2))?;
/// assert_eq!(one_trip_opens_all.quorum().get(), 1);
/// assert_eq!(one_trip_opens_all.shared_count(), None);
/// let three_must_agree = one_trip_opens_all.with_quorum(NonZeroU32::new(3).unwrap());
/// assert_eq!(three_must_agree.quorum().get(), 3);
/// // Adding the nodes' failures up replaces a quorum, and the other way round.
/// let five_anywhere = three_must_agree.with_shared_count(NonZeroU32::new(5).unwrap());
/// assert_eq!((five_anywhere.quorum().get(), five_anywhere.shared_count()), (1, Some(5)));
/// assert!(FleetSettings::new(Duration::ZERO).is_err());
/// # Ok::<(), retry_breaker_fleet::LeaseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FleetSettings {
    probe_deadline: Duration,
    opening: Opening,
}

/// What opens the fleet. One setting, because the two ways past one node's
/// trip pull in opposite directions: a quorum asks for more evidence than
/// one node has, a shared count for less.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Opening {
    /// While at least this many nodes report their own breaker open.
    Quorum(NonZeroU32),
    /// As soon as the nodes' runs of consecutive failures add up to this.
    SharedCount(NonZeroU32),
}

impl FleetSettings {
    /// One node's trip opens the fleet, and the fleet's probe must answer
    /// within `probe_deadline`, the probe lease's time to live.
    ///
    /// # Errors
    ///
    /// [`LeaseError`] for a deadline no store can hold as a lease's time to
    /// live (under a millisecond, or too long).
    pub fn new(probe_deadline: Duration) -> Result<Self, LeaseError> {
        ttl_millis(probe_deadline)?;
        Ok(FleetSettings {
            probe_deadline,
            opening: Opening::Quorum(NonZeroU32::MIN),
        })
    }

    /// The fleet opens only while at least `quorum` nodes report their own
    /// breaker open in the same incident. One node's bad network path or
    /// starved CPU then trips only that node. Replaces a shared count.
    #[must_use]
    pub fn with_quorum(mut self, quorum: NonZeroU32) -> Self {
        self.opening = Opening::Quorum(quorum);
        self
    }

    /// The fleet opens as soon as its nodes' runs of consecutive failures
    /// add up to `threshold`, whichever nodes saw them (F5), as well as on
    /// any node's own trip. A dependency that fails everyone then costs the
    /// fleet about `threshold` failures plus the calls made while the news
    /// travels, not `threshold` per node. It is the opposite of a quorum,
    /// which it replaces: one node's own failures count towards opening
    /// everyone, so prefer it when the nodes share the path to the
    /// dependency.
    #[must_use]
    pub fn with_shared_count(mut self, threshold: NonZeroU32) -> Self {
        self.opening = Opening::SharedCount(threshold);
        self
    }

    /// The probe's deadline, and the probe lease's time to live.
    #[must_use]
    pub fn probe_deadline(&self) -> Duration {
        self.probe_deadline
    }

    /// How many nodes must report open before the fleet opens (1: any).
    #[must_use]
    pub fn quorum(&self) -> NonZeroU32 {
        match self.opening {
            Opening::Quorum(quorum) => quorum,
            Opening::SharedCount(_) => NonZeroU32::MIN,
        }
    }

    /// The fleet-wide count of failures that opens the fleet, if the nodes
    /// add their failures up.
    #[must_use]
    pub fn shared_count(&self) -> Option<u32> {
        match self.opening {
            Opening::Quorum(_) => None,
            Opening::SharedCount(threshold) => Some(threshold.get()),
        }
    }
}
