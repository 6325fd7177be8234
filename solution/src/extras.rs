//! What production adds around one breaker: a breaker per key, the view a
//! node has of its fleet, and the event stream's adapters.

pub mod fleet;
pub(crate) mod registry;
// BEGIN SOLUTION ONLY: production adapters for the event stream, off by default
#[cfg(any(feature = "tracing", feature = "metrics"))]
pub mod telemetry;
// END SOLUTION ONLY
