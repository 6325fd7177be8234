//! Running one admitted attempt and reporting how it went.

use std::any::Any;
use std::future::{Future, poll_fn};
use std::panic::{self, AssertUnwindSafe};
use std::pin::pin;

use crate::breaker::event::SinkPanic;
use crate::breaker::permit::Permit;
use crate::breaker::verdict::Verdict;
use crate::time::clock::Clock;

/// Starts the task, awaits it, and reports the outcome on `permit`.
///
/// A panic, whether the task panics while starting or while running, is
/// reported as a failure and then resumed unchanged (B7): it is never turned
/// into an `Err`. It is caught here, at the poll, because only here is it
/// certain to be the task's own: a permit's drop guard sees any panic on the
/// thread, and executors (`catch_unwind` wrappers, some test harnesses) may
/// catch the panic first and drop the future later.
///
/// If this future is dropped mid-attempt for any other reason (a timeout
/// around `execute`, a `select!`, a sibling's panic under `join!`), nothing
/// was observed: the permit goes back with no verdict.
pub(crate) async fn run<C, O, Fut>(
    permit: Permit<'_, C>,
    start: impl FnOnce() -> Fut,
) -> Result<O::Value, O::Error>
where
    C: Clock,
    O: Outcome,
    Fut: Future<Output = O>,
{
    let mut permit = Unobserved(Some(permit));

    // Safe to assert unwind safety: after a panic nothing here is used again.
    let task = match panic::catch_unwind(AssertUnwindSafe(start)) {
        Ok(task) => task,
        Err(payload) => permit.fail_and_resume(payload),
    };
    let mut task = pin!(task);
    let outcome =
        poll_fn(
            |cx| match panic::catch_unwind(AssertUnwindSafe(|| task.as_mut().poll(cx))) {
                Ok(poll) => poll,
                Err(payload) => permit.fail_and_resume(payload),
            },
        )
        .await;

    if let Some(permit) = permit.0.take() {
        // BEGIN TODO(11): report the outcome's verdict, not whether it is Ok (K1)
        permit.report(outcome.verdict());
        // STARTER: if outcome.is_ok() {
        // STARTER:     permit.success();
        // STARTER: } else {
        // STARTER:     permit.failure();
        // STARTER: }
        // END TODO
    }
    outcome.into_result()
}

/// An attempt's outcome, as the retry loop sees it: what the caller gets
/// back, and what the breaker should make of it.
pub(crate) trait Outcome {
    type Value;
    type Error;
    /// What the breaker counts (K1).
    fn verdict(&self) -> Verdict;
    /// Whether the task returned `Ok`.
    #[allow(dead_code, reason = "the starter reports by it until step 11")]
    fn is_ok(&self) -> bool;
    /// What the caller gets back, whatever the verdict (K3).
    fn into_result(self) -> Result<Self::Value, Self::Error>;
}

/// A plain result has the core lab's verdict.
impl<T, E> Outcome for Result<T, E> {
    type Value = T;
    type Error = E;

    fn verdict(&self) -> Verdict {
        Verdict::of(self)
    }

    fn is_ok(&self) -> bool {
        Result::is_ok(self)
    }

    fn into_result(self) -> Result<T, E> {
        self
    }
}

/// A result with the verdict a classifier gave it.
pub(crate) struct Classified<T, E> {
    pub(crate) outcome: Result<T, E>,
    pub(crate) verdict: Verdict,
}

impl<T, E> Outcome for Classified<T, E> {
    type Value = T;
    type Error = E;

    fn verdict(&self) -> Verdict {
        self.verdict
    }

    fn is_ok(&self) -> bool {
        self.outcome.is_ok()
    }

    fn into_result(self) -> Result<T, E> {
        self.outcome
    }
}

/// The permit of an attempt whose outcome is not known yet.
struct Unobserved<'a, C: Clock>(Option<Permit<'a, C>>);

impl<C: Clock> Unobserved<'_, C> {
    /// Reports the task's panic as a failure, then resumes it.
    fn fail_and_resume(&mut self, payload: Box<dyn Any + Send>) -> ! {
        let payload = match payload.downcast::<SinkPanic>() {
            // The event sink panicked before the task was called: the
            // dependency saw nothing, so the attempt goes back with no
            // verdict, untold, and the sink's panic goes on as it was (O4).
            Ok(sink) => {
                if let Some(permit) = self.0.take() {
                    permit.withdraw();
                }
                sink.0
            }
            Err(payload) => payload,
        };
        if let Some(permit) = self.0.take() {
            // The task's panic is the one the caller must see: a panic in the
            // transition hook while reporting it is dropped (B11).
            let _ = panic::catch_unwind(AssertUnwindSafe(|| permit.failure()));
        }
        panic::resume_unwind(payload)
    }
}

impl<C: Clock> Drop for Unobserved<'_, C> {
    fn drop(&mut self) {
        // Not the permit's own drop guard: that one would blame a panic
        // unwinding past us on the dependency, and the task's own panics
        // never get here (B7).
        // BEGIN ANCHOR(unobserved-drop)
        if let Some(permit) = self.0.take() {
            permit.abandon();
        }
        // END ANCHOR
    }
}
