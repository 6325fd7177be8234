//! The admission ticket for one attempt.

use std::fmt;
use std::mem::ManuallyDrop;
use std::sync::Arc;

use crate::breaker::RetryBreaker;
use crate::breaker::bulkhead::{Bulkhead, SlotBack};
use crate::breaker::circuit::Recorded;
use crate::breaker::transition::Generation;
use crate::breaker::verdict::Verdict;
use crate::error::Rejected;
use crate::time::clock::Clock;

/// Permission for one attempt to call the dependency, from
/// [`RetryBreaker::try_acquire`].
///
/// Report what happened with [`success`](Permit::success) or
/// [`failure`](Permit::failure). A permit is a guard: if it is dropped
/// unreported, it still cleans up after itself. Dropped by a panic it
/// counts as a failure: the breaker cannot tell whose panic it was, and the
/// code holding the permit was in the middle of calling the dependency.
/// Dropped for any other reason, nothing was observed, so it records no
/// verdict, but a probe gives its slot back so the breaker is never wedged.
/// ([`RetryBreaker::execute`] is more precise: it catches the task's own
/// panic where it happens, so any other panic costs its permit nothing.)
///
/// With a bulkhead ([`Builder::max_in_flight`](crate::Builder::max_in_flight))
/// a permit holds one of its slots until it is reported or dropped (H3).
///
/// ```
/// use std::time::Duration;
/// use retry_breaker_starter::{ManualClock, Recorded, RetryBreaker, State};
///
/// let breaker = RetryBreaker::new(1, Duration::from_secs(5), ManualClock::new())?;
/// let permit = breaker.try_acquire()?;
/// // ... call the dependency ...
/// assert_eq!(permit.failure(), Recorded::Counted);
/// assert_eq!(breaker.state(), State::Open { remaining: Duration::from_secs(5) });
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use = "report the attempt with success() or failure(); a permit dropped unreported records nothing"]
// Contract: B7 (a permit dropped unreported).
// The `Clock` bound is here only because the drop guard needs it, and Rust
// asks a `Drop` impl for exactly the struct's bounds.
pub struct Permit<'a, C: Clock> {
    breaker: &'a RetryBreaker<C>,
    generation: Generation,
    /// Whether reporting this permit has more to do than the circuit: a
    /// slot of the breaker's bulkhead to free (every permit of a breaker
    /// with one holds a slot), an event sink to tell. A breaker with
    /// neither hands out permits that report in line.
    out_of_line: bool,
}

impl<'a, C: Clock> Permit<'a, C> {
    /// The circuit's admission in `generation`, holding no bulkhead slot
    /// yet and untold.
    pub(crate) fn new(breaker: &'a RetryBreaker<C>, generation: Generation) -> Self {
        Self::from_parts(breaker, (generation, false))
    }

    fn from_parts(
        breaker: &'a RetryBreaker<C>,
        (generation, out_of_line): (Generation, bool),
    ) -> Self {
        Permit {
            breaker,
            generation,
            out_of_line,
        }
    }

    /// The permit, reporting out of line: to free its slot or tell the
    /// breaker's sink.
    pub(crate) fn out_of_line(mut self) -> Self {
        self.out_of_line = true;
        self
    }

    /// The permit, holding a slot of `bulkhead`; if none is free, the
    /// admission is given back with no verdict, as a permit dropped
    /// unreported is, so a probe hands its slot back and nothing is counted
    /// (H1, H2).
    pub(crate) fn into_slot(self, bulkhead: &Bulkhead) -> Result<Self, Rejected> {
        if bulkhead.try_hold() {
            Ok(self.out_of_line())
        } else {
            // The circuit's admission goes back untold: the caller never
            // held it, and is told of the refusal instead (H2, O1).
            let permit = ManuallyDrop::new(self);
            permit.breaker.withdraw(permit.generation);
            Err(Rejected::Full {
                limit: bulkhead.limit(),
            })
        }
    }

    /// The guard that gives this permit's slot back, if it holds one.
    fn slot_back(&self) -> SlotBack<'a> {
        SlotBack(self.out_of_line.then(|| self.breaker.bulkhead()).flatten())
    }

    /// The generation this attempt was admitted in.
    #[must_use]
    pub fn generation(&self) -> Generation {
        self.generation
    }

    /// Reports that the attempt succeeded.
    #[allow(
        clippy::must_use_candidate,
        reason = "reporting is the point of the call; the answer is for the callers who ask whether it counted"
    )]
    #[inline]
    pub fn success(self) -> Recorded {
        // Reporting consumes the guard, so its drop-time cleanup must not run.
        let permit = ManuallyDrop::new(self);
        if permit.out_of_line {
            return permit.freeing_slot(|breaker, generation| {
                breaker.record_telling(generation, Verdict::Success)
            });
        }
        permit.breaker.record_success(permit.generation)
    }

    /// Reports that the attempt failed.
    #[allow(
        clippy::must_use_candidate,
        reason = "reporting is the point of the call; the answer is for the callers who ask whether it counted"
    )]
    pub fn failure(self) -> Recorded {
        let permit = ManuallyDrop::new(self);
        if permit.out_of_line {
            return permit.freeing_slot(RetryBreaker::record_failure);
        }
        permit.breaker.record_failure(permit.generation)
    }

    /// Reports the attempt with a classifier's verdict (K1): a success or a
    /// failure as [`success`](Permit::success) and
    /// [`failure`](Permit::failure) would, and [`Verdict::Ignored`] with no
    /// verdict at all, as a permit dropped unreported (a probe hands its
    /// slot back). Returns `None` for an ignored attempt: nothing was
    /// recorded.
    ///
    /// ```
    /// use std::time::Duration;
    /// use retry_breaker_starter::{ManualClock, Recorded, RetryBreaker, State, Verdict};
    ///
    /// let breaker = RetryBreaker::new(1, Duration::ZERO, ManualClock::new())?;
    /// breaker.try_acquire()?.failure();
    /// let probe = breaker.try_acquire()?;
    /// assert_eq!(probe.report(Verdict::Ignored), None);
    /// assert_eq!(breaker.state(), State::HalfOpen { probe_in_flight: false });
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[allow(
        clippy::must_use_candidate,
        reason = "reporting is the point of the call; the answer is for the callers who ask whether it counted"
    )]
    #[inline]
    // (Generated: the TODO below leaves names unused until it is done.)
    #[allow(unused_variables, unused_mut, unreachable_code)]
    pub fn report(self, verdict: Verdict) -> Option<Recorded> {
        // TODO(11): a success or a failure is reported as such; an ignored attempt records nothing and gives a probe slot back (K1)
        // For now, a stand-in that ignores this rule, so the earlier steps keep working:
        match verdict {
            Verdict::Success => Some(self.success()),
            Verdict::Failure | Verdict::Ignored => Some(self.failure()),
        }
    }

    /// Takes the generation out, leaving the attempt to whoever carries it on
    /// (an [`OwnedPermit`]): nothing is recorded.
    pub(crate) fn into_parts(self) -> (Generation, bool) {
        let permit = ManuallyDrop::new(self);
        (permit.generation, permit.out_of_line)
    }

    /// Gives the permit back with no verdict, panicking or not: for callers
    /// that know nothing was observed.
    pub(crate) fn abandon(self) {
        let permit = ManuallyDrop::new(self);
        if permit.out_of_line {
            return permit.freeing_slot(RetryBreaker::abandon);
        }
        permit.breaker.abandon(permit.generation);
    }

    /// Ends a permit that holds a bulkhead slot with `record`, and frees the
    /// slot however the report ends, a panicking hook or clock included
    /// (H3). Out of line, so that a permit with no slot pays nothing for it
    /// on the hot path.
    /// Gives the attempt back with no verdict and untold: for an admission
    /// whose caller never got it, since telling it panicked (O4).
    pub(crate) fn withdraw(self) {
        let permit = ManuallyDrop::new(self);
        if permit.out_of_line {
            return permit.freeing_slot(RetryBreaker::withdraw);
        }
        permit.breaker.withdraw(permit.generation);
    }

    #[inline(never)]
    fn freeing_slot<R>(&self, record: impl FnOnce(&'a RetryBreaker<C>, Generation) -> R) -> R {
        let _slot = self.slot_back();
        record(self.breaker, self.generation)
    }
}

impl<C: Clock> Drop for Permit<'_, C> {
    // (Generated: the TODO below leaves names unused until it is done.)
    #[allow(unused_variables, unused_mut, unreachable_code)]
    fn drop(&mut self) {
        let _slot = self.slot_back();
        // TODO(4): dropped unreported: during a panic record a failure, otherwise abandon (B7)
        // (Skipped for now, so the earlier steps keep working.)
    }
}

impl<C: Clock> fmt::Debug for Permit<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permit")
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
}

/// A [`Permit`] that owns a share of its breaker, from
/// [`RetryBreaker::try_acquire_owned`], so it can move into a spawned task.
///
/// It behaves exactly as a [`Permit`]: report with
/// [`success`](OwnedPermit::success) or [`failure`](OwnedPermit::failure);
/// dropped unreported by a panic it counts as a failure, dropped otherwise
/// it records no verdict and a probe gives its slot back.
#[must_use = "report the attempt with success() or failure(); a permit dropped unreported records nothing"]
pub struct OwnedPermit<C: Clock> {
    /// Taken out when the permit reports, so that its drop then does nothing.
    breaker: Option<Arc<RetryBreaker<C>>>,
    generation: Generation,
    out_of_line: bool,
}

impl<C: Clock> OwnedPermit<C> {
    /// The owned form of a permit's parts (see [`Permit::into_parts`]).
    pub(crate) fn new(
        breaker: Arc<RetryBreaker<C>>,
        (generation, out_of_line): (Generation, bool),
    ) -> Self {
        OwnedPermit {
            breaker: Some(breaker),
            generation,
            out_of_line,
        }
    }

    /// The borrowed permit that reports (or drops) for this one.
    fn borrowed<'a>(&self, breaker: &'a RetryBreaker<C>) -> Permit<'a, C> {
        Permit::from_parts(breaker, (self.generation, self.out_of_line))
    }

    /// The generation this attempt was admitted in.
    #[must_use]
    pub fn generation(&self) -> Generation {
        self.generation
    }

    /// Reports that the attempt succeeded.
    #[allow(
        clippy::must_use_candidate,
        reason = "reporting is the point of the call; the answer is for the callers who ask whether it counted"
    )]
    pub fn success(mut self) -> Recorded {
        let breaker = self.take_breaker();
        self.borrowed(&breaker).success()
    }

    /// Reports that the attempt failed.
    #[allow(
        clippy::must_use_candidate,
        reason = "reporting is the point of the call; the answer is for the callers who ask whether it counted"
    )]
    pub fn failure(mut self) -> Recorded {
        let breaker = self.take_breaker();
        self.borrowed(&breaker).failure()
    }

    /// Reports the attempt with a classifier's verdict, as
    /// [`Permit::report`].
    #[allow(
        clippy::must_use_candidate,
        reason = "reporting is the point of the call; the answer is for the callers who ask whether it counted"
    )]
    pub fn report(mut self, verdict: Verdict) -> Option<Recorded> {
        let breaker = self.take_breaker();
        self.borrowed(&breaker).report(verdict)
    }

    /// The breaker, for the borrowed permit that reports for this one.
    /// Taking it out leaves the owned permit's drop nothing to do.
    fn take_breaker(&mut self) -> Arc<RetryBreaker<C>> {
        let Some(breaker) = self.breaker.take() else {
            unreachable!("only reporting and dropping take the breaker, and both end the permit")
        };
        breaker
    }
}

impl<C: Clock> Drop for OwnedPermit<C> {
    fn drop(&mut self) {
        // Unreported: the borrowed permit's drop does exactly what a dropped
        // `Permit` does, panicking or not.
        if let Some(breaker) = self.breaker.take() {
            drop(self.borrowed(&breaker));
        }
    }
}

impl<C: Clock> fmt::Debug for OwnedPermit<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedPermit")
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
}
