//! One call of `execute`, as a scenario says it: "three attempts at this
//! script". Everything else takes the lab's defaults, and a test names only
//! what its rule is about:
//!
//! ```ignore
//! let result = lab.call(3, &script).run().await;
//! let result = lab.call(3, &script).retrying(|_| true).cancel(&token).run().await;
//! let result = lab.call(3, &script).classified(gateway).run().await;
//! ```
//!
//! The defaults: [`retryable`] (every fault but a decline is retried),
//! [`linear`] backoff, a token nobody cancels, the lab's own sleeper, and no
//! classifier (the plain `execute`).

use std::future::{Future, Ready};
use std::time::Duration;

use retry_breaker::{ExecuteError, GaveUp, ManualSleeper, Rejected, Sleeper, Verdict};
use tokio_util::sync::CancellationToken;

use super::fault::{Fault, retryable};
use super::lab::{Lab, ms};
use super::script::Script;

/// The default backoff: 10 ms after the first failure, 20 ms after the
/// second, and so on.
pub fn linear(attempt: u32) -> Duration {
    ms(10) * attempt
}

/// A backoff of nothing at all, for scenarios where time must not move.
pub fn no_backoff(_: u32) -> Duration {
    Duration::ZERO
}

/// A classifier's type, when the call has none.
type Unclassified<T, E> = fn(&Result<T, E>) -> Verdict;

/// One call of `execute` (or `execute_classified`) being set up; `run` makes
/// it.
#[must_use = "a call does nothing until it is run"]
pub struct Call<'a, T, E, Task, R, B, S, K = Unclassified<T, E>> {
    lab: &'a Lab,
    attempts: u32,
    task: Task,
    retryable: R,
    backoff: B,
    cancel: CancellationToken,
    sleeper: &'a S,
    classify: Option<K>,
    _outcome: std::marker::PhantomData<fn() -> Result<T, E>>,
}

/// A call with every default: [`retryable`], [`linear`], the lab's sleeper.
pub type Defaults<'a, T, Task> =
    Call<'a, T, Fault, Task, fn(&Fault) -> bool, fn(u32) -> Duration, ManualSleeper>;

impl Lab {
    /// A call of `attempts` attempts at `script`, with the defaults.
    pub fn call(
        &self,
        attempts: u32,
        script: &Script,
    ) -> Defaults<'_, u32, impl FnMut() -> Ready<Result<u32, Fault>> + Send + 'static> {
        self.call_with(attempts, script.task())
    }

    /// A call of `attempts` attempts at any task, with the defaults.
    pub fn call_with<T, Task, Fut>(&self, attempts: u32, task: Task) -> Defaults<'_, T, Task>
    where
        Task: FnMut() -> Fut,
        Fut: Future<Output = Result<T, Fault>>,
    {
        Call {
            lab: self,
            attempts,
            task,
            retryable,
            backoff: linear,
            cancel: CancellationToken::new(),
            sleeper: &self.sleeper,
            classify: None,
            _outcome: std::marker::PhantomData,
        }
    }
}

impl<'a, T, E, Task, R, B, S, K> Call<'a, T, E, Task, R, B, S, K> {
    /// Retries what `retryable` accepts, instead of every fault but a decline.
    pub fn retrying<R2: Fn(&E) -> bool>(self, retryable: R2) -> Call<'a, T, E, Task, R2, B, S, K> {
        self.with(|_, backoff, sleeper, classify| (retryable, backoff, sleeper, classify))
    }

    /// Sleeps `backoff(n)` after attempt `n` fails, instead of [`linear`].
    pub fn backoff<B2: Fn(u32) -> Duration>(
        self,
        backoff: B2,
    ) -> Call<'a, T, E, Task, R, B2, S, K> {
        self.with(|retryable, _, sleeper, classify| (retryable, backoff, sleeper, classify))
    }

    /// Watches `token` (a clone of it) instead of a token nobody cancels.
    pub fn cancel(mut self, token: &CancellationToken) -> Self {
        self.cancel = token.clone();
        self
    }

    /// Sleeps through `sleeper` instead of the lab's own.
    pub fn sleeper<S2: Sleeper>(self, sleeper: &'a S2) -> Call<'a, T, E, Task, R, B, S2, K> {
        self.with(|retryable, backoff, _, classify| (retryable, backoff, sleeper, classify))
    }

    /// Goes through `execute_classified`, with `classify` giving the verdicts.
    pub fn classified<K2>(self, classify: K2) -> Call<'a, T, E, Task, R, B, S, K2>
    where
        K2: Fn(&Result<T, E>) -> Verdict,
    {
        self.with(|retryable, backoff, sleeper, _| (retryable, backoff, sleeper, Some(classify)))
    }

    /// The same call with its retryable, backoff, sleeper and classifier
    /// replaced by what `parts` makes of them: the builders above, each of
    /// which changes one part (and with it the call's type).
    fn with<R2, B2, S2, K2>(
        self,
        parts: impl FnOnce(R, B, &'a S, Option<K>) -> (R2, B2, &'a S2, Option<K2>),
    ) -> Call<'a, T, E, Task, R2, B2, S2, K2> {
        let (retryable, backoff, sleeper, classify) =
            parts(self.retryable, self.backoff, self.sleeper, self.classify);
        Call {
            lab: self.lab,
            attempts: self.attempts,
            task: self.task,
            retryable,
            backoff,
            cancel: self.cancel,
            sleeper,
            classify,
            _outcome: self._outcome,
        }
    }

    /// Makes the call through the lab's breaker.
    pub async fn run<Fut>(self) -> Result<T, ExecuteError<E>>
    where
        Task: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        R: Fn(&E) -> bool,
        B: Fn(u32) -> Duration,
        S: Sleeper,
        K: Fn(&Result<T, E>) -> Verdict,
    {
        let breaker = &self.lab.breaker;
        match self.classify {
            None => {
                breaker
                    .execute(
                        self.attempts,
                        self.task,
                        self.retryable,
                        self.backoff,
                        &self.cancel,
                        self.sleeper,
                    )
                    .await
            }
            Some(classify) => {
                breaker
                    .execute_classified(
                        self.attempts,
                        self.task,
                        classify,
                        self.retryable,
                        self.backoff,
                        &self.cancel,
                        self.sleeper,
                    )
                    .await
            }
        }
    }
}

/// How a call ended, one claim at a time, so that each assertion checks one
/// thing and says which rule it is. For a call's result, or its error.
pub trait Ending<E> {
    /// The variant the call ended with: `"Ok"`, `"NoAttempts"`,
    /// `"Cancelled"`, `"Rejected"`, `"TimeMismatch"` or `"Task"`.
    fn ending(&self) -> &'static str;
    /// The attempt a `Task` or `Rejected` error names.
    fn attempt(&self) -> Option<u32>;
    /// Why a `Task` error was not retried.
    fn reason(&self) -> Option<GaveUp>;
    /// Why the breaker refused a `Rejected` attempt.
    fn rejection(&self) -> Option<Rejected>;
    /// How many attempts a `Cancelled` error says ran.
    fn attempts_made(&self) -> Option<u32>;
    /// The task's error the call ended with, if it carries one.
    fn cause(&self) -> Option<&E>;
}

impl<E> Ending<E> for ExecuteError<E> {
    fn ending(&self) -> &'static str {
        match self {
            ExecuteError::NoAttempts => "NoAttempts",
            ExecuteError::Cancelled { .. } => "Cancelled",
            ExecuteError::Rejected { .. } => "Rejected",
            ExecuteError::TimeMismatch { .. } => "TimeMismatch",
            ExecuteError::Task { .. } => "Task",
            _ => "an ExecuteError this suite does not know",
        }
    }

    fn attempt(&self) -> Option<u32> {
        match self {
            ExecuteError::Task { attempt, .. } | ExecuteError::Rejected { attempt, .. } => {
                Some(*attempt)
            }
            _ => None,
        }
    }

    fn reason(&self) -> Option<GaveUp> {
        match self {
            ExecuteError::Task { reason, .. } => Some(*reason),
            _ => None,
        }
    }

    fn rejection(&self) -> Option<Rejected> {
        match self {
            ExecuteError::Rejected { rejection, .. } => Some(*rejection),
            _ => None,
        }
    }

    fn attempts_made(&self) -> Option<u32> {
        match self {
            ExecuteError::Cancelled { attempts_made, .. } => Some(*attempts_made),
            _ => None,
        }
    }

    fn cause(&self) -> Option<&E> {
        self.task_error()
    }
}

impl<T, E> Ending<E> for Result<T, ExecuteError<E>> {
    fn ending(&self) -> &'static str {
        self.as_ref().map_or_else(Ending::ending, |_| "Ok")
    }

    fn attempt(&self) -> Option<u32> {
        self.as_ref().err().and_then(Ending::attempt)
    }

    fn reason(&self) -> Option<GaveUp> {
        self.as_ref().err().and_then(Ending::reason)
    }

    fn rejection(&self) -> Option<Rejected> {
        self.as_ref().err().and_then(Ending::rejection)
    }

    fn attempts_made(&self) -> Option<u32> {
        self.as_ref().err().and_then(Ending::attempts_made)
    }

    fn cause(&self) -> Option<&E> {
        self.as_ref().err().and_then(Ending::cause)
    }
}
