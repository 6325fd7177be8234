//! The retry loop as a value: how production code usually holds it.
//!
//! [`RetryBreaker::execute`] takes its six inputs one by one, which makes
//! each rule of the loop visible where it is used. Services rather set the
//! policy once (how many attempts, which delays, which errors) and apply it
//! to many calls, as `backon` and `tower::retry` let them. [`RetryPolicy`] is
//! that value, and it runs every call through `execute` itself, so it obeys
//! exactly the same rules.

use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::breaker::RetryBreaker;
use crate::breaker::verdict::Verdict;
use crate::error::{ExecuteError, GaveUp};
use crate::retry::budget::RetryBudget;
use crate::time::backoff;
use crate::time::clock::Clock;
use crate::time::sleeper::Sleeper;

type Predicate<E> = Arc<dyn Fn(&E) -> bool + Send + Sync>;
type Hint<E> = Arc<dyn Fn(&E) -> Option<Duration> + Send + Sync>;
type Classifier<E> = Arc<dyn Fn(&E) -> Verdict + Send + Sync>;

/// How many attempts a call makes, how long it waits between them, and
/// which errors it retries: set once, applied to every call with
/// [`run`](RetryPolicy::run).
///
/// The delays are jittered by default (a fresh seed per call, see
/// [`backoff::jittered`]). [`retry_after`](RetryPolicy::retry_after) lets a
/// failure ask for a longer wait, as an HTTP `Retry-After` header does.
///
/// ```
/// use std::time::Duration;
/// use retry_breaker_solution::{ManualClock, RetryBreaker, RetryPolicy};
///
/// #[derive(Debug, PartialEq)]
/// enum Error {
///     Busy { retry_after: Duration },
///     Declined,
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let clock = ManualClock::new();
/// let breaker = RetryBreaker::new(5, Duration::from_secs(30), clock.clone())?;
/// let policy = RetryPolicy::exponential(Duration::from_millis(100), Duration::from_secs(2))
///     .attempts(3)
///     .without_jitter()
///     .retry_if(|e: &Error| matches!(e, Error::Busy { .. }))
///     .retry_after(|e: &Error| match e {
///         Error::Busy { retry_after } => Some(*retry_after),
///         Error::Declined => None,
///     });
///
/// let sleeper = clock.sleeper();
/// let mut replies = vec![Ok(7), Err(Error::Busy { retry_after: Duration::from_secs(1) })];
/// let value = policy
///     .run(&breaker, &sleeper, || std::future::ready(replies.pop().unwrap()))
///     .await
///     .expect("the second attempt succeeds");
/// assert_eq!(value, 7);
/// assert_eq!(sleeper.delays(), [Duration::from_secs(1)], "the server asked for a second");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub struct RetryPolicy<E> {
    attempts: u32,
    delays: Delays,
    jitter: Jitter,
    retryable: Predicate<E>,
    retry_after: Option<Hint<E>>,
    classify_errors: Option<Classifier<E>>,
    cancel: CancellationToken,
    budget: Option<Arc<RetryBudget>>,
}

/// The delays before jitter and hints.
#[derive(Debug, Clone, Copy)]
enum Delays {
    Constant(Duration),
    Exponential { base: Duration, cap: Duration },
}

impl Delays {
    fn after(self, attempt: u32) -> Duration {
        match self {
            Delays::Constant(delay) => backoff::constant(delay)(attempt),
            Delays::Exponential { base, cap } => backoff::exponential(base, cap)(attempt),
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Jitter {
    Off,
    FreshSeedPerCall,
    Seed(u64),
}

impl<E> RetryPolicy<E> {
    /// Three attempts, `delay` apart (jittered), retrying every error.
    #[must_use]
    pub fn constant(delay: Duration) -> Self {
        Self::with_delays(Delays::Constant(delay))
    }

    /// Three attempts, waiting `base` after the first failure and doubling
    /// up to `cap` (jittered), retrying every error.
    #[must_use]
    pub fn exponential(base: Duration, cap: Duration) -> Self {
        Self::with_delays(Delays::Exponential { base, cap })
    }

    fn with_delays(delays: Delays) -> Self {
        RetryPolicy {
            attempts: 3,
            delays,
            // BEGIN ANCHOR(default-jitter)
            jitter: Jitter::FreshSeedPerCall,
            // END ANCHOR
            retryable: Arc::new(|_| true),
            retry_after: None,
            classify_errors: None,
            cancel: CancellationToken::new(),
            budget: None,
        }
    }

    /// Attempts per call, the first included. Zero makes every call fail
    /// with [`ExecuteError::NoAttempts`].
    #[must_use]
    pub fn attempts(mut self, attempts: u32) -> Self {
        self.attempts = attempts;
        self
    }

    /// Retries only the errors `retryable` accepts; the others end the call.
    #[must_use]
    pub fn retry_if(mut self, retryable: impl Fn(&E) -> bool + Send + Sync + 'static) -> Self {
        self.retryable = Arc::new(retryable);
        self
    }

    /// Lets an error name the least wait before the next attempt (a
    /// `Retry-After`): the policy then waits the longer of that and its own
    /// delay.
    #[must_use]
    pub fn retry_after(
        mut self,
        hint: impl Fn(&E) -> Option<Duration> + Send + Sync + 'static,
    ) -> Self {
        self.retry_after = Some(Arc::new(hint));
        self
    }

    /// Lets the breaker count errors by what they mean (rules K1-K3): a
    /// value is always a success, and `classify` gives each error its
    /// [`Verdict`]. Without it every error is a failure. Retrying stays
    /// [`retry_if`](RetryPolicy::retry_if)'s decision, and the caller gets
    /// the error back whatever its verdict.
    ///
    /// ```
    /// use std::time::Duration;
    /// use retry_breaker_solution::{ManualClock, RetryBreaker, RetryPolicy, State, Verdict};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let clock = ManualClock::new();
    /// let breaker = RetryBreaker::new(1, Duration::from_secs(30), clock.clone())?;
    /// let policy = RetryPolicy::constant(Duration::from_millis(10))
    ///     .retry_if(|e: &&str| *e != "declined")
    ///     .classify_errors(|e: &&str| if *e == "declined" { Verdict::Success } else { Verdict::Failure });
    /// let result = policy.run(&breaker, &clock.sleeper(), || async { Err::<(), _>("declined") }).await;
    /// assert!(result.is_err(), "the caller still learns of the decline");
    /// assert_eq!(breaker.state(), State::Closed { failures: 0 }, "a sign of life");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    #[must_use]
    pub fn classify_errors(
        mut self,
        classify: impl Fn(&E) -> Verdict + Send + Sync + 'static,
    ) -> Self {
        self.classify_errors = Some(Arc::new(classify));
        self
    }

    /// The delays exactly as configured, with no jitter.
    #[must_use]
    pub fn without_jitter(mut self) -> Self {
        self.jitter = Jitter::Off;
        self
    }

    /// Jitter drawn from `seed`, the same for every call: for tests.
    #[must_use]
    pub fn jitter_seed(mut self, seed: u64) -> Self {
        self.jitter = Jitter::Seed(seed);
        self
    }

    /// Ends calls once `cancel` is cancelled, before an attempt or during a
    /// wait (the rules of [`RetryBreaker::execute`]).
    #[must_use]
    pub fn cancel_on(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// Draws every retry from `budget`, which the calls of this policy
    /// (and of its clones, and of any other policy handed the same budget)
    /// share: each call's first attempt earns it, each retry spends it, on
    /// the breaker's clock. A retry it refuses is not made: the call ends
    /// with the failure before it and [`GaveUp::RetryBudgetSpent`] (Q1-Q4).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use retry_breaker_solution::{ExecuteError, GaveUp, ManualClock, RetryBreaker, RetryBudget, RetryPolicy};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let clock = ManualClock::new();
    /// let breaker = RetryBreaker::new(10, Duration::from_secs(30), clock.clone())?;
    /// // No retry for free, and one for every 2 calls over the last 10 s.
    /// let budget = Arc::new(RetryBudget::new(Duration::from_secs(10), 0, 50)?);
    /// let policy = RetryPolicy::constant(Duration::from_millis(100)).retry_budget(budget);
    ///
    /// let sleeper = clock.sleeper();
    /// let busy = || std::future::ready(Err::<(), _>("busy"));
    /// let result = policy.run(&breaker, &sleeper, busy).await;
    /// // One call earned half a retry: not enough for one.
    /// assert!(matches!(
    ///     result,
    ///     Err(ExecuteError::Task { attempt: 1, reason: GaveUp::RetryBudgetSpent, .. })
    /// ));
    /// assert!(sleeper.delays().is_empty(), "a refused retry waits for nothing");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    #[must_use]
    pub fn retry_budget(mut self, budget: Arc<RetryBudget>) -> Self {
        self.budget = Some(budget);
        self
    }

    /// The budget this policy's retries are drawn from, if it has one.
    #[must_use]
    pub fn budget(&self) -> Option<&Arc<RetryBudget>> {
        self.budget.as_ref()
    }

    /// Runs `task` through `breaker` under this policy, sleeping through
    /// `sleeper`: a call of [`RetryBreaker::execute`] with the policy's
    /// settings.
    ///
    /// # Errors
    ///
    /// As [`RetryBreaker::execute`].
    ///
    /// # Panics
    ///
    /// As [`RetryBreaker::execute`].
    pub async fn run<C, T, Task, Fut, S>(
        &self,
        breaker: &RetryBreaker<C>,
        sleeper: &S,
        task: Task,
    ) -> Result<T, ExecuteError<E>>
    where
        C: Clock,
        Task: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        S: Sleeper,
    {
        self.run_retrying_while(breaker, sleeper, task, || true)
            .await
    }

    /// [`run`](RetryPolicy::run), retrying a failure only while `another`
    /// says that one more attempt can be made: it is asked after a failure
    /// that the policy would retry, never about the last attempt or an error
    /// it would not retry. The layer's way to stop once its request cannot
    /// be copied again (M2), without a copy of the policy per request.
    pub(crate) async fn run_retrying_while<C, T, Task, Fut, S>(
        &self,
        breaker: &RetryBreaker<C>,
        sleeper: &S,
        mut task: Task,
        another: impl Fn() -> bool,
    ) -> Result<T, ExecuteError<E>>
    where
        C: Clock,
        Task: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        S: Sleeper,
    {
        // The wait the last failure asked for. `execute` asks for the
        // backoff right after an attempt fails, so the hint it finds here is
        // that attempt's.
        let asked = Mutex::new(None);
        let hint = self.retry_after.as_deref();
        let budget = self.budget.as_deref();
        // The call earns its share of the budget when its first attempt
        // runs: a call the breaker refused outright sent nothing (Q1).
        let mut first = true;
        let task = || {
            if let (true, Some(budget)) = (std::mem::take(&mut first), budget) {
                budget.deposit(breaker.clock().now());
            }
            let attempt = task();
            let asked = &asked;
            async move {
                let outcome = attempt.await;
                if let (Err(error), Some(hint)) = (&outcome, hint) {
                    *asked.lock().unwrap_or_else(PoisonError::into_inner) = hint(error);
                }
                outcome
            }
        };

        let delays = self.delays;
        let planned = move |attempt| delays.after(attempt);
        // A fresh seed costs a hash of fresh random keys; only a call that
        // backs off needs one, so it is drawn at the first backoff. Atomic
        // only so that the call's future stays `Send` (one call backs off
        // once at a time), and 0 stands for "not drawn yet": a `OnceLock`
        // here cost every call instructions of its own, backing off or not.
        let fresh = AtomicU64::new(0);
        let jitter = self.jitter;
        let backoff = |attempt| {
            // BEGIN ANCHOR(jitter-seed)
            let seed = match jitter {
                Jitter::Off => None,
                Jitter::FreshSeedPerCall => Some(drawn_once(&fresh)),
                Jitter::Seed(seed) => Some(seed),
            };
            // END ANCHOR
            let delay = match seed {
                Some(seed) => backoff::jittered_with_seed(planned, seed)(attempt),
                None => planned(attempt),
            };
            let asked = asked.lock().unwrap_or_else(PoisonError::into_inner).take();
            asked.map_or(delay, |asked| asked.max(delay))
        };

        let classify_errors = self.classify_errors.as_deref();
        let classify = |outcome: &Result<T, E>| match (outcome, classify_errors) {
            (Err(error), Some(classify)) => classify(error),
            _ => Verdict::of(outcome),
        };
        // The budget is asked last, so that a retry the predicate or the
        // caller turns down spends nothing (Q2).
        // Atomic only so that the call's future stays `Send`: one call asks
        // one question at a time.
        let spent = AtomicBool::new(false);
        // Set when `another` said no: the call ran out of requests to send.
        let ran_out = AtomicBool::new(false);
        // BEGIN ANCHOR(retry-decision)
        let retryable = |error: &E| {
            (self.retryable)(error)
                && {
                    let more = another();
                    ran_out.store(!more, Ordering::Relaxed);
                    more
                }
                && budget.is_none_or(|budget| {
                    let granted = budget.withdraw(breaker.clock().now());
                    spent.store(!granted, Ordering::Relaxed);
                    granted
                })
        };
        // END ANCHOR
        // `execute` saw the predicate say no with attempts left; say why,
        // before the end is told, so that the sink hears the reason the
        // caller gets.
        let finish = |mut result: Result<T, ExecuteError<E>>| {
            if let Err(ExecuteError::Task { reason, .. }) = &mut result {
                if ran_out.load(Ordering::Relaxed) {
                    *reason = GaveUp::NoCopyLeft;
                } else if spent.load(Ordering::Relaxed) {
                    *reason = GaveUp::RetryBudgetSpent;
                }
            }
            result
        };
        breaker
            .classified(
                self.attempts,
                task,
                classify,
                retryable,
                backoff,
                &self.cancel,
                sleeper,
                finish,
            )
            .await
    }
}

impl<E> Clone for RetryPolicy<E> {
    fn clone(&self) -> Self {
        RetryPolicy {
            attempts: self.attempts,
            delays: self.delays,
            jitter: self.jitter,
            retryable: Arc::clone(&self.retryable),
            retry_after: self.retry_after.clone(),
            classify_errors: self.classify_errors.clone(),
            cancel: self.cancel.clone(),
            budget: self.budget.clone(),
        }
    }
}

impl<E> fmt::Debug for RetryPolicy<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryPolicy")
            .field("attempts", &self.attempts)
            .field("delays", &self.delays)
            .field("jitter", &self.jitter)
            .field("retry_after", &self.retry_after.is_some())
            .field("classify_errors", &self.classify_errors.is_some())
            .field("budget", &self.budget)
            .finish_non_exhaustive()
    }
}

/// The call's jitter seed, drawn at its first use and kept in `cell` for
/// the call's later backoffs. A drawn 0, which would read as "not drawn
/// yet", is taken as 1: one seed of 2^64 twice as likely, which no
/// backoff can tell.
fn drawn_once(cell: &AtomicU64) -> u64 {
    match cell.load(Ordering::Relaxed) {
        0 => {
            let seed = backoff::fresh_seed().max(1);
            cell.store(seed, Ordering::Relaxed);
            seed
        }
        seed => seed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_draws_its_seed_once_and_keeps_it() {
        let fresh = AtomicU64::new(0);
        let seed = drawn_once(&fresh);
        assert_ne!(seed, 0, "0 means not drawn yet");
        assert_eq!(fresh.load(Ordering::Relaxed), seed);
        assert_eq!(drawn_once(&fresh), seed, "the same seed for every backoff");

        let drawn = AtomicU64::new(7);
        assert_eq!(drawn_once(&drawn), 7, "a seed drawn already is kept");
    }
}
