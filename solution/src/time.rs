//! Time and waiting: the clocks the breaker reads, the sleepers the retry
//! loop waits on, how long it waits (backoff), and the arithmetic of
//! deadlines. Nothing here knows of the breaker.

pub mod backoff;
pub(crate) mod clock;
// BEGIN SOLUTION ONLY: the fast OPEN refusal's cheaper clock
pub(crate) mod coarse;
// END SOLUTION ONLY
pub(crate) mod deadline;
pub(crate) mod sleeper;
pub(crate) mod time_source;
#[cfg(feature = "tokio")]
pub mod timeout;
