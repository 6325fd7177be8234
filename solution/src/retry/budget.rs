//! A retry budget: retries as a share of the calls that earned them, shared
//! by every call that holds the budget.
//!
//! An attempt budget bounds one call; it does not bound the load that retries
//! add across calls. When a dependency slows down for everyone, every call
//! retries and the dependency sees several times its normal load just as it
//! can least bear it. The circuit breaker stops that only once it opens; a
//! budget stops it before: retries may be at most a set share of recent
//! calls, plus a small floor so that a quiet service can still retry.

use std::fmt;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use crate::breaker::slots::Slots;
use crate::error::ConfigError;

/// Retries allowed as a share of recent calls, shared by every call that
/// holds the budget (usually through an `Arc`, in a
/// [`RetryPolicy`](crate::RetryPolicy)).
///
/// Within the last `window`, on the breaker's clock, the calls may retry
/// `min_per_second × window` times whatever the traffic, plus `percent` out
/// of every 100 calls that made a first attempt (Q1). Each retry spends one
/// (Q2). Calls and retries leave the window slot by slot (Q3).
///
/// ```
/// use std::time::Duration;
/// use retry_breaker_solution::RetryBudget;
///
/// // At most 1 retry per 5 calls over the last 10 s, and none for free.
/// let budget = RetryBudget::new(Duration::from_secs(10), 0, 20)?;
/// let now = Duration::ZERO;
/// assert_eq!(budget.available(now), 0);
/// for _ in 0..5 {
///     budget.deposit(now);
/// }
/// assert!(budget.withdraw(now), "five calls earned one retry");
/// assert!(!budget.withdraw(now), "and only one");
/// // Ten seconds on, the calls and the retry have left the window.
/// assert_eq!(budget.available(Duration::from_secs(10)), 0);
/// # Ok::<(), retry_breaker_solution::ConfigError>(())
/// ```
pub struct RetryBudget {
    window: Duration,
    /// The retries allowed in any window with no calls at all.
    floor: u64,
    percent: u32,
    /// The calls (events) and retries (marks) of the last `window`, in ten
    /// slots: a call or a retry ages out at most a tenth of the window
    /// early (Q3), for a fixed cost per call.
    ledger: Mutex<Slots>,
}

impl RetryBudget {
    /// A budget over the last `window`: `min_per_second` retries a second
    /// whatever the traffic, plus `percent` retries for every 100 calls.
    ///
    /// `percent` may exceed 100 (250 lets each call retry two and a half
    /// times on average); a budget with both at 0 never allows a retry.
    ///
    /// # Errors
    ///
    /// [`ConfigError::BudgetWindowTooShort`] for a window under 10 ns: it is
    /// kept in 10 slots, and a slot cannot be shorter than a nanosecond (Q5).
    pub fn new(window: Duration, min_per_second: u32, percent: u32) -> Result<Self, ConfigError> {
        let Some(slots) = Slots::over(window) else {
            return Err(ConfigError::BudgetWindowTooShort { window });
        };
        let floor = u128::from(min_per_second) * window.as_nanos() / 1_000_000_000;
        Ok(RetryBudget {
            window,
            floor: u64::try_from(floor).unwrap_or(u64::MAX),
            percent,
            ledger: Mutex::new(slots),
        })
    }

    /// The window the budget counts over.
    #[must_use]
    pub fn window(&self) -> Duration {
        self.window
    }

    /// Counts a call that made its first attempt at `now` (Q1).
    pub fn deposit(&self, now: Duration) {
        self.ledger_at(now).count(false);
    }

    /// Spends one retry at `now` if the window has one left, and says
    /// whether it did (Q2). Two calls asking at once never both get the
    /// last one (Q4).
    #[must_use = "a retry the budget refused must not be made"]
    pub fn withdraw(&self, now: Duration) -> bool {
        let mut ledger = self.ledger_at(now);
        let sum = ledger.sum();
        if sum.marked >= self.allowed(sum.events) {
            return false;
        }
        ledger.mark();
        true
    }

    /// How many retries the window has left at `now`.
    #[must_use]
    pub fn available(&self, now: Duration) -> u64 {
        let sum = self.ledger_at(now).sum();
        self.allowed(sum.events).saturating_sub(sum.marked)
    }

    /// The retries that `calls` calls in the window allow, floor included.
    fn allowed(&self, calls: u64) -> u64 {
        let earned = u128::from(calls) * u128::from(self.percent) / 100;
        self.floor
            .saturating_add(u64::try_from(earned).unwrap_or(u64::MAX))
    }

    /// The ledger with every slot that has left the window by `now` emptied.
    fn ledger_at(&self, now: Duration) -> std::sync::MutexGuard<'_, Slots> {
        // Nothing here can panic while the lock is held, so a poisoned lock
        // still holds consistent counts.
        let mut ledger = self.ledger.lock().unwrap_or_else(PoisonError::into_inner);
        ledger.advance_to(now);
        ledger
    }
}

impl fmt::Debug for RetryBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sum = self
            .ledger
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .sum();
        f.debug_struct("RetryBudget")
            .field("window", &self.window)
            .field("floor", &self.floor)
            .field("percent", &self.percent)
            .field("calls", &sum.events)
            .field("retries", &sum.marked)
            .finish()
    }
}
