//! The retry loop around the breaker: `execute` and its attempts, and the
//! settings and budget that production code keeps as values.

pub(crate) mod attempt;
pub(crate) mod budget;
mod execute;
pub(crate) mod policy;
// BEGIN SOLUTION ONLY: the durations of attempts and calls (O9)
pub(crate) mod timing;
// END SOLUTION ONLY
