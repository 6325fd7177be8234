//! Running one admitted attempt and reporting how it went.

use std::future::{Future, poll_fn};
use std::panic::{self, AssertUnwindSafe};
use std::pin::pin;

use crate::clock::Clock;
use crate::permit::Permit;

/// Starts the task, awaits it, and reports the outcome on `permit`.
///
/// A panic, whether the task panics while starting or while running, is
/// reported as a failure and then resumed unchanged (B7): it is never turned
/// into an `Err`. The permit's own drop guard would count the panic too, but
/// only if the future were dropped while the panic is still unwinding, and
/// executors (`catch_unwind` wrappers, some test harnesses) may catch the
/// panic first and drop the future later. Catching it here, at the poll,
/// does not depend on how anyone above us handles panics.
pub(crate) async fn run<C, T, E, Fut>(
    permit: Permit<'_, C>,
    start: impl FnOnce() -> Fut,
) -> Result<T, E>
where
    C: Clock,
    Fut: Future<Output = Result<T, E>>,
{
    // The permit lives in an Option so the panic path can take it out and
    // report it; if this future is dropped mid-attempt, the permit drops
    // with it and records no verdict.
    let mut permit = Some(permit);
    let mut fail_and_resume = |payload| -> ! {
        if let Some(permit) = permit.take() {
            permit.failure();
        }
        panic::resume_unwind(payload)
    };

    // Safe to assert unwind safety: after a panic nothing here is used again.
    let task = match panic::catch_unwind(AssertUnwindSafe(start)) {
        Ok(task) => task,
        Err(payload) => fail_and_resume(payload),
    };
    let mut task = pin!(task);
    let outcome =
        poll_fn(
            |cx| match panic::catch_unwind(AssertUnwindSafe(|| task.as_mut().poll(cx))) {
                Ok(poll) => poll,
                Err(payload) => fail_and_resume(payload),
            },
        )
        .await;

    if let Some(permit) = permit {
        match outcome {
            Ok(_) => permit.success(),
            Err(_) => permit.failure(),
        };
    }
    outcome
}
