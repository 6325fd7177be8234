//! The errors the scripted dependency fails with.

use std::fmt;

/// How a scripted attempt fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The dependency did not answer in time: worth retrying.
    Timeout,
    /// The dependency answered 503: worth retrying.
    Unavailable,
    /// The request itself was refused (a 4xx): retrying cannot help.
    Declined,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Fault::Timeout => "timeout",
            Fault::Unavailable => "unavailable",
            Fault::Declined => "declined",
        })
    }
}

impl std::error::Error for Fault {}

/// The retry predicate used throughout: everything but `Declined`.
pub fn retryable(fault: &Fault) -> bool {
    !matches!(fault, Fault::Declined)
}
