// SOLUTION ONLY FILE: the durations of attempts and calls, for the production adapters
//! How long each attempt and each call takes, on the breaker's clock (O9),
//! told as [`Event::AttemptEnded`] and [`Event::CallEnded`]: what an
//! attempt-duration or call-duration histogram is made of.
//!
//! Only a call on a breaker with a sink is timed: it reads the clock once
//! when it starts and once when it ends, and twice for each attempt.

use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::{Context, Poll, ready};
use std::thread;
use std::time::Duration;

use pin_project_lite::pin_project;

use crate::breaker::RetryBreaker;
use crate::breaker::event::{Event, SinkPanic};
use crate::breaker::verdict::Verdict;
use crate::error::ExecuteError;
use crate::retry::attempt::Outcome;
use crate::time::clock::Clock;

/// One call's timing: when it started, and how many attempts it has made.
pub(crate) struct CallTiming<'b, C: Clock> {
    breaker: &'b RetryBreaker<C>,
    started: Duration,
    /// Atomic only so that the call's future stays `Send`: one call makes
    /// one attempt at a time.
    attempts: AtomicU32,
}

impl<'b, C: Clock> CallTiming<'b, C> {
    /// A call on `breaker` starts now.
    pub(crate) fn start(breaker: &'b RetryBreaker<C>) -> Self {
        CallTiming {
            breaker,
            started: breaker.clock().now(),
            attempts: AtomicU32::new(0),
        }
    }

    /// `task`, each of whose attempts is timed from the moment the task is
    /// called. A clock that panics there panics before the dependency is
    /// called, so the attempt's runner gives the attempt back with no
    /// verdict, as for a sink that panics as the attempt starts (O4).
    pub(crate) fn attempts<'t, Fut>(
        &'t self,
        mut task: impl FnMut() -> Fut + 't,
    ) -> impl FnMut() -> Timed<'b, Fut, C> + 't {
        move || {
            let attempt = self.attempts.load(Ordering::Relaxed).saturating_add(1);
            self.attempts.store(attempt, Ordering::Relaxed);
            let clock = self.breaker.clock();
            let started = panic::catch_unwind(AssertUnwindSafe(|| clock.now()))
                .unwrap_or_else(|payload| panic::resume_unwind(Box::new(SinkPanic(payload))));
            Timed {
                attempt: task(),
                end: AttemptEnd {
                    breaker: self.breaker,
                    attempt,
                    started,
                    verdict: None,
                },
            }
        }
    }

    /// Tells how long the call took, once it has returned `result` and how
    /// it ended has been told.
    pub(crate) fn end<T, E>(&self, result: &Result<T, ExecuteError<E>>) {
        let elapsed = self.breaker.clock().now().saturating_sub(self.started);
        self.breaker.tell(|| Event::CallEnded {
            attempts: self.attempts.load(Ordering::Relaxed),
            elapsed,
            ok: result.is_ok(),
        });
    }
}

pin_project! {
    /// An attempt's future, timed: it notes the outcome's verdict when it
    /// is done, and tells the attempt's end when it is dropped.
    pub(crate) struct Timed<'b, Fut, C: Clock> {
        #[pin]
        attempt: Fut,
        end: AttemptEnd<'b, C>,
    }
}

impl<Fut, C> Future for Timed<'_, Fut, C>
where
    Fut: Future,
    Fut::Output: Outcome,
    C: Clock,
{
    type Output = Fut::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Fut::Output> {
        let this = self.project();
        let outcome = ready!(this.attempt.poll(cx));
        this.end.verdict = Some(outcome.verdict());
        Poll::Ready(outcome)
    }
}

/// What is told when an attempt's future is let go.
struct AttemptEnd<'b, C: Clock> {
    breaker: &'b RetryBreaker<C>,
    attempt: u32,
    started: Duration,
    /// The outcome's verdict, once the attempt is done.
    verdict: Option<Verdict>,
}

impl<C: Clock> Drop for AttemptEnd<'_, C> {
    fn drop(&mut self) {
        // The attempt's runner records the outcome as soon as the future is
        // done and lets the future go right after, in the same poll: told
        // here, the end comes after the outcome (O9). An attempt cut short
        // was never done, and one whose report panicked (a hook's panic, on
        // its way to the caller) is not timed either: nothing more is told
        // while that panic unwinds.
        let Some(verdict) = self.verdict else {
            return;
        };
        if thread::panicking() {
            return;
        }
        let elapsed = self.breaker.clock().now().saturating_sub(self.started);
        self.breaker.tell(|| Event::AttemptEnded {
            attempt: self.attempt,
            elapsed,
            verdict,
        });
    }
}
