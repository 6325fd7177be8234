//! How a node joins in the fleet's decisions: the probe's deadline and the
//! quorum.

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
/// assert_eq!(one_trip_opens_all.quorum(), 1);
/// let three_must_agree = one_trip_opens_all.with_quorum(NonZeroU32::new(3).unwrap());
/// assert_eq!(three_must_agree.quorum(), 3);
/// assert!(FleetSettings::new(Duration::ZERO).is_err());
/// # Ok::<(), retry_breaker_fleet::LeaseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FleetSettings {
    probe_deadline: Duration,
    quorum: NonZeroU32,
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
            quorum: NonZeroU32::MIN,
        })
    }

    /// The fleet opens only while at least `quorum` nodes report their own
    /// breaker open in the same incident. One node's bad network path or
    /// starved CPU then trips only that node.
    #[must_use]
    pub fn with_quorum(mut self, quorum: NonZeroU32) -> Self {
        self.quorum = quorum;
        self
    }

    /// The probe's deadline, and the probe lease's time to live.
    #[must_use]
    pub fn probe_deadline(&self) -> Duration {
        self.probe_deadline
    }

    /// How many nodes must report open before the fleet opens (1: any).
    #[must_use]
    pub fn quorum(&self) -> u32 {
        self.quorum.get()
    }
}
