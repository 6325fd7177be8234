// PROVIDED FILE: a grade always uses the kit's own copy of this file; your code goes in the TODOs.
//! What one attempt's outcome means for the breaker (the advanced track's
//! failure classification, rules K1-K3).

/// The breaker's reading of one attempt's outcome.
///
/// By default an `Ok` is a [`Success`](Verdict::Success) and an `Err` a
/// [`Failure`](Verdict::Failure): the core lab. A classifier (see
/// [`RetryBreaker::execute_classified`](crate::RetryBreaker::execute_classified))
/// may read the outcome more closely: a declined card is the caller's
/// mistake and proves the dependency alive, a cancellation by our own caller
/// says nothing about it at all.
///
/// The verdict only decides what the breaker counts. What the caller gets
/// back, and whether the call retries, do not depend on it (K2, K3).
///
/// It is `#[non_exhaustive]`: a `match` on it needs a `_` arm, since later
/// versions may read outcomes in more ways.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
// Contract: K1.
pub enum Verdict {
    /// A sign of life: the dependency answered as a healthy one would.
    Success,
    /// The dependency looks unhealthy: this counts towards opening.
    Failure,
    /// No verdict, as for a permit dropped unreported: nothing is counted,
    /// and a half-open probe hands its slot back.
    Ignored,
}

impl Verdict {
    /// The core lab's reading: `Ok` is a success, `Err` a failure.
    #[must_use]
    pub fn of<T, E>(outcome: &Result<T, E>) -> Verdict {
        match outcome {
            Ok(_) => Verdict::Success,
            Err(_) => Verdict::Failure,
        }
    }
}
