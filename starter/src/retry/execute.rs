//! The retry loop: bounded attempts, each admitted by the breaker.

use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::breaker::RetryBreaker;
use crate::breaker::event::{Event, SinkPanic};
use crate::breaker::verdict::Verdict;
use crate::error::{ExecuteError, GaveUp, Rejected};
use crate::retry::attempt::{self, Classified, Outcome};
use crate::time::clock::Clock;
use crate::time::sleeper::Sleeper;
use crate::time::time_source;

impl<C: Clock> RetryBreaker<C> {
    /// Calls `task` through the breaker, retrying failures that `retryable`
    /// accepts, up to `attempts` attempts in all.
    ///
    /// For each attempt: a cancelled token ends the call; otherwise
    /// the breaker must admit the attempt, or the call ends with its
    /// rejection at once. The attempt's outcome is always reported to the
    /// breaker, so retries count towards opening the circuit. A failure is
    /// retried after sleeping `backoff(n)` (`n` = the attempt that just
    /// failed, from 1) unless it was the last attempt or is not retryable.
    /// There is no sleep before the first attempt or after the last, and a
    /// cancellation during a sleep ends the call at once. A refusal or a
    /// cancellation that ends the call after a failed attempt carries that
    /// attempt's error as its `source`.
    ///
    /// The task is not aborted when the token is cancelled: a deadline or a
    /// cancellation check inside the task is the task's business, and its
    /// outcome is reported like any other.
    ///
    /// To give each attempt a deadline, so that a hang counts as a failure,
    /// wrap the attempt in [`timeout::per_attempt`](crate::timeout::per_attempt)
    /// inside the task, not the call in a timeout outside it. For the
    /// settings as one reusable value, see [`RetryPolicy`](crate::RetryPolicy).
    ///
    /// # Why the task is `FnMut() -> Fut`
    ///
    /// Each attempt needs a fresh future, so the task is something that can
    /// be called again. Async closures (`async || ...`, with the
    /// `AsyncFnMut` bound) are stable only since Rust 1.85, which this crate
    /// supports, but a bound on them cannot yet say that the future is
    /// `Send`, so `execute` with one could not be spawned on a
    /// multi-threaded runtime. `FnMut() -> Fut` lets the caller's `Fut` keep
    /// its `Send`, and a closure that returns an `async` block works on every
    /// Rust version.
    ///
    /// # Errors
    ///
    /// See [`ExecuteError`]. A panic in the task is counted as a failure and
    /// then continues unwinding; it is never turned into an error.
    ///
    /// # Panics
    ///
    /// When the task panics, as above. (A sleeper whose sleeps would not
    /// move the breaker's clock, such as a
    /// [`ManualSleeper`](crate::ManualSleeper) of another
    /// [`ManualClock`](crate::ManualClock), or a
    /// [`TokioSleeper`](crate::TokioSleeper) with a
    /// [`SystemClock`](crate::SystemClock), is an error instead:
    /// [`ExecuteError::TimeMismatch`].)
    ///
    /// # Example
    ///
    /// ```
    /// use std::time::Duration;
    /// use retry_breaker_starter::{backoff, ManualClock, RetryBreaker};
    /// use tokio_util::sync::CancellationToken;
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let clock = ManualClock::new();
    /// let sleeper = clock.sleeper();
    /// let breaker = RetryBreaker::new(5, Duration::from_secs(30), clock)?;
    ///
    /// let mut calls = 0;
    /// let answer = breaker
    ///     .execute(
    ///         3,
    ///         || {
    ///             calls += 1;
    ///             let outcome = if calls < 2 { Err("timed out") } else { Ok(42) };
    ///             async move { outcome }
    ///         },
    ///         |_: &&str| true,
    ///         backoff::constant(Duration::from_millis(100)),
    ///         &CancellationToken::new(),
    ///         &sleeper,
    ///     )
    ///     .await
    ///     .expect("the second attempt succeeds");
    /// assert_eq!(answer, 42);
    /// assert_eq!(sleeper.delays(), [Duration::from_millis(100)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    // Contract: E1-E10.
    pub async fn execute<T, E, Task, Fut, Retryable, Backoff, S>(
        &self,
        attempts: u32,
        task: Task,
        retryable: Retryable,
        backoff: Backoff,
        cancel: &CancellationToken,
        sleeper: &S,
    ) -> Result<T, ExecuteError<E>>
    where
        Task: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        Retryable: Fn(&E) -> bool,
        Backoff: Fn(u32) -> Duration,
        S: Sleeper,
    {
        // The core lab's reading of outcomes: `Verdict::of`, through the
        // outcome itself (see `attempt::Outcome`).
        if self.has_sink() {
            let as_it_is = |result| result;
            return self
                .retry_told(
                    attempts, task, retryable, backoff, cancel, sleeper, as_it_is,
                )
                .await;
        }
        self.retry(attempts, task, retryable, backoff, cancel, sleeper)
            .await
    }

    /// [`execute`](RetryBreaker::execute), with `classify` deciding what each
    /// attempt's outcome means for the breaker (rules K1-K3).
    ///
    /// Only the breaker's bookkeeping changes: a
    /// [`Verdict::Success`] counts as a sign of life, a
    /// [`Verdict::Failure`] towards opening, and a [`Verdict::Ignored`]
    /// records nothing (a probe hands its slot back). The caller still gets
    /// the task's value or error exactly as `execute` would return it (K3),
    /// and retrying is still `retryable`'s decision alone (K2): a declined
    /// card is a success for the breaker *and* not worth retrying.
    ///
    /// ```
    /// use std::time::Duration;
    /// use retry_breaker_starter::{backoff, ExecuteError, ManualClock, RetryBreaker, State, Verdict};
    /// use tokio_util::sync::CancellationToken;
    ///
    /// #[derive(Debug)]
    /// enum PayError { Declined, Timeout }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let clock = ManualClock::new();
    /// let sleeper = clock.sleeper();
    /// let breaker = RetryBreaker::new(1, Duration::from_secs(30), clock)?;
    /// let classify = |outcome: &Result<(), PayError>| match outcome {
    ///     Ok(()) | Err(PayError::Declined) => Verdict::Success,
    ///     Err(PayError::Timeout) => Verdict::Failure,
    /// };
    /// let retryable = |e: &PayError| matches!(e, PayError::Timeout);
    ///
    /// let result = breaker
    ///     .execute_classified(
    ///         3,
    ///         || async { Err(PayError::Declined) },
    ///         classify,
    ///         retryable,
    ///         backoff::constant(Duration::from_millis(100)),
    ///         &CancellationToken::new(),
    ///         &sleeper,
    ///     )
    ///     .await;
    /// // The caller still learns of the decline, which was not retried...
    /// assert!(matches!(result, Err(ExecuteError::Task { attempt: 1, source: PayError::Declined, .. })));
    /// // ...and the breaker saw a sign of life, not a failure.
    /// assert_eq!(breaker.state(), State::Closed { failures: 0 });
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// As [`execute`](RetryBreaker::execute).
    ///
    /// # Panics
    ///
    /// As [`execute`](RetryBreaker::execute). A panicking classifier is
    /// treated as a panic of the task.
    // Contract: K1-K3, and E1-E10 as for `execute`.
    #[allow(
        clippy::too_many_arguments,
        reason = "execute's six inputs plus the classifier, each visible where it is used"
    )]
    pub async fn execute_classified<T, E, Task, Fut, Classify, Retryable, Backoff, S>(
        &self,
        attempts: u32,
        task: Task,
        classify: Classify,
        retryable: Retryable,
        backoff: Backoff,
        cancel: &CancellationToken,
        sleeper: &S,
    ) -> Result<T, ExecuteError<E>>
    where
        Task: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        Classify: Fn(&Result<T, E>) -> Verdict,
        Retryable: Fn(&E) -> bool,
        Backoff: Fn(u32) -> Duration,
        S: Sleeper,
    {
        let as_it_is = |result| result;
        self.classified(
            attempts, task, classify, retryable, backoff, cancel, sleeper, as_it_is,
        )
        .await
    }

    /// [`execute_classified`](Self::execute_classified), with `finish`
    /// making the loop's result the call's before the end is told: for a
    /// policy, which may know a better reason why the call gave up.
    #[allow(
        clippy::too_many_arguments,
        reason = "execute_classified's inputs, passed on as they are, and the finish"
    )]
    pub(crate) async fn classified<T, E, Task, Fut, Classify, Retryable, Backoff, S, Finish>(
        &self,
        attempts: u32,
        mut task: Task,
        classify: Classify,
        retryable: Retryable,
        backoff: Backoff,
        cancel: &CancellationToken,
        sleeper: &S,
        finish: Finish,
    ) -> Result<T, ExecuteError<E>>
    where
        Task: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        Classify: Fn(&Result<T, E>) -> Verdict,
        Retryable: Fn(&E) -> bool,
        Backoff: Fn(u32) -> Duration,
        S: Sleeper,
        Finish: FnOnce(Result<T, ExecuteError<E>>) -> Result<T, ExecuteError<E>>,
    {
        let classify = &classify;
        let task = || {
            let attempt = task();
            async move {
                let outcome = attempt.await;
                let verdict = classify(&outcome);
                Classified { outcome, verdict }
            }
        };
        if self.has_sink() {
            return self
                .retry_told(attempts, task, retryable, backoff, cancel, sleeper, finish)
                .await;
        }
        finish(
            self.retry(attempts, task, retryable, backoff, cancel, sleeper)
                .await,
        )
    }

    /// [`retry`](Self::retry) for a breaker with a sink: each attempt and
    /// backoff is told through the loop's own inputs, so the loop knows
    /// nothing of it (O1), then how the call ended, once `finish` has made
    /// the loop's result the call's. A call on a breaker without a sink
    /// never builds this future (O5). With the `tracing` feature the call
    /// runs in a span, and each attempt in a child span, so the sink's own
    /// `tracing` events fall inside them (O7).
    #[allow(
        clippy::too_many_arguments,
        reason = "retry's inputs, passed on as they are, and the finish"
    )]
    #[allow(
        clippy::let_and_return,
        reason = "the solution times the call between its end and its return"
    )]
    async fn retry_told<O, Task, Fut, Retryable, Backoff, S, Finish>(
        &self,
        attempts: u32,
        task: Task,
        retryable: Retryable,
        backoff: Backoff,
        cancel: &CancellationToken,
        sleeper: &S,
        finish: Finish,
    ) -> Result<O::Value, ExecuteError<O::Error>>
    where
        O: Outcome,
        Task: FnMut() -> Fut,
        Fut: Future<Output = O>,
        Retryable: Fn(&O::Error) -> bool,
        Backoff: Fn(u32) -> Duration,
        S: Sleeper,
        Finish: FnOnce(
            Result<O::Value, ExecuteError<O::Error>>,
        ) -> Result<O::Value, ExecuteError<O::Error>>,
    {
        let task = self.telling_attempts(task);
        let backoff = |attempt| {
            let delay = backoff(attempt);
            self.tell(|| Event::Backoff { attempt, delay });
            delay
        };
        let call = async {
            let result = finish(
                self.retry(attempts, task, retryable, backoff, cancel, sleeper)
                    .await,
            );
            let result = result.map_err(|error| self.told_end(error));
            result
        };
        call.await
    }

    /// The retry loop itself, for any outcome that knows its verdict.
    // (Generated: the TODO below leaves names unused until it is done.)
    #[allow(unused_variables, unused_mut, unreachable_code)]
    async fn retry<O, Task, Fut, Retryable, Backoff, S>(
        &self,
        attempts: u32,
        mut task: Task,
        retryable: Retryable,
        backoff: Backoff,
        cancel: &CancellationToken,
        sleeper: &S,
    ) -> Result<O::Value, ExecuteError<O::Error>>
    where
        O: Outcome,
        Task: FnMut() -> Fut,
        Fut: Future<Output = O>,
        Retryable: Fn(&O::Error) -> bool,
        Backoff: Fn(u32) -> Duration,
        S: Sleeper,
    {
        // TODO(7): refuse a clock and a sleeper that cannot agree, before anything else (E9)
        // (Skipped for now, so the earlier steps keep working.)
        // Refusals (TODO(7): E3, E10) and cancellation (TODO(8): E2 before
        // each attempt, E7 during each backoff sleep) belong in this loop
        // too; leave them for steps 7 and 8.
        // TODO(6): the retry loop and its budget (E1, E4-E6)
        todo!("TODO(6): the retry loop and its budget (E1, E4-E6); see LAB.md, step 6")
    }
}

impl<C: Clock> RetryBreaker<C> {
    /// `task`, telling the sink as each attempt starts. A sink that panics
    /// there panics before the dependency is called: the attempt's runner
    /// knows it by [`SinkPanic`] and gives the attempt back unreported
    /// (O4).
    fn telling_attempts<'s, Fut>(
        &'s self,
        mut task: impl FnMut() -> Fut + 's,
    ) -> impl FnMut() -> Fut + 's {
        let mut started = 0;
        move || {
            started += 1;
            self.tell_started(started);
            task()
        }
    }

    /// Tells the sink that attempt `attempt` starts.
    fn tell_started(&self, attempt: u32) {
        let told = panic::catch_unwind(AssertUnwindSafe(|| {
            self.tell(|| Event::AttemptStarted { attempt });
        }));
        if let Err(payload) = told {
            panic::resume_unwind(Box::new(SinkPanic(payload)));
        }
    }

    /// Tells the sink how a call that failed ended, if it gave up or was
    /// cancelled (a refusal was told as it happened), and hands the error
    /// on.
    pub(crate) fn told_end<E>(&self, error: ExecuteError<E>) -> ExecuteError<E> {
        match &error {
            ExecuteError::Task {
                attempt, reason, ..
            } => self.tell(|| Event::GaveUp {
                attempt: *attempt,
                reason: *reason,
            }),
            ExecuteError::Cancelled { attempts_made, .. } => self.tell(|| Event::Cancelled {
                attempts_made: *attempts_made,
            }),
            _ => {}
        }
        error
    }
}
