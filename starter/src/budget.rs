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

use crate::error::ConfigError;

/// How many slots the window is kept in. A call or a retry counts for as
/// long as its slot is in the window, so it ages out at most one slot's
/// length early (Q3): a tenth of the window, for a fixed cost per call.
const SLOTS: usize = 10;

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
/// use retry_breaker_starter::RetryBudget;
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
/// # Ok::<(), retry_breaker_starter::ConfigError>(())
/// ```
pub struct RetryBudget {
    window: Duration,
    /// One slot's length in nanoseconds: a tenth of the window, rounded down.
    slot: u128,
    /// The retries allowed in any window with no calls at all.
    floor: u64,
    percent: u32,
    ledger: Mutex<Ledger>,
}

/// The calls and retries of the slots in the window, newest last in turn.
#[derive(Debug, Default)]
struct Ledger {
    /// The number of the newest slot seen: the time of the latest deposit or
    /// withdrawal, divided by the slot's length.
    newest: u128,
    slots: [Slot; SLOTS],
    /// The sums over `slots`, kept so that no operation adds them up.
    calls: u64,
    retries: u64,
}

#[derive(Debug, Default, Clone, Copy)]
struct Slot {
    calls: u64,
    retries: u64,
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
        let slot = window.as_nanos() / SLOTS as u128;
        if slot == 0 {
            return Err(ConfigError::BudgetWindowTooShort { window });
        }
        let floor = u128::from(min_per_second) * window.as_nanos() / 1_000_000_000;
        Ok(RetryBudget {
            window,
            slot,
            floor: u64::try_from(floor).unwrap_or(u64::MAX),
            percent,
            ledger: Mutex::default(),
        })
    }

    /// The window the budget counts over.
    #[must_use]
    pub fn window(&self) -> Duration {
        self.window
    }

    /// Counts a call that made its first attempt at `now` (Q1).
    pub fn deposit(&self, now: Duration) {
        let mut ledger = self.ledger_at(now);
        let slot = ledger.newest_slot();
        slot.calls = slot.calls.saturating_add(1);
        ledger.calls = ledger.calls.saturating_add(1);
    }

    /// Spends one retry at `now` if the window has one left, and says
    /// whether it did (Q2). Two calls asking at once never both get the
    /// last one (Q4).
    #[must_use = "a retry the budget refused must not be made"]
    pub fn withdraw(&self, now: Duration) -> bool {
        let mut ledger = self.ledger_at(now);
        if ledger.retries >= self.allowed(ledger.calls) {
            return false;
        }
        ledger.newest_slot().retries += 1;
        ledger.retries += 1;
        true
    }

    /// How many retries the window has left at `now`.
    #[must_use]
    pub fn available(&self, now: Duration) -> u64 {
        let ledger = self.ledger_at(now);
        self.allowed(ledger.calls).saturating_sub(ledger.retries)
    }

    /// The retries that `calls` calls in the window allow, floor included.
    fn allowed(&self, calls: u64) -> u64 {
        let earned = u128::from(calls) * u128::from(self.percent) / 100;
        self.floor
            .saturating_add(u64::try_from(earned).unwrap_or(u64::MAX))
    }

    /// The ledger with every slot that has left the window by `now` emptied.
    fn ledger_at(&self, now: Duration) -> std::sync::MutexGuard<'_, Ledger> {
        // Nothing here can panic while the lock is held, so a poisoned lock
        // still holds consistent counts.
        let mut ledger = self.ledger.lock().unwrap_or_else(PoisonError::into_inner);
        ledger.move_to(now.as_nanos() / self.slot);
        ledger
    }
}

impl Ledger {
    /// Makes `slot` the newest, emptying the slots it pushes out of the
    /// window. An earlier slot (a reading from before the newest one) counts
    /// as the newest: the clock never goes back, but two callers may read it
    /// in one order and lock the ledger in the other.
    fn move_to(&mut self, slot: u128) {
        // Every slot after the newest up to `slot` is new: none if `slot` is
        // not later, and at most all of them, however long nothing happened.
        let fresh = slot.saturating_sub(self.newest).min(SLOTS as u128);
        for step in 0..fresh {
            let index = Self::index(slot - step);
            let gone = std::mem::take(&mut self.slots[index]);
            // Saturating, as the sums are: a sum stuck at u64::MAX is below
            // the sum of its slots.
            self.calls = self.calls.saturating_sub(gone.calls);
            self.retries = self.retries.saturating_sub(gone.retries);
        }
        self.newest = self.newest.max(slot);
    }

    fn newest_slot(&mut self) -> &mut Slot {
        &mut self.slots[Self::index(self.newest)]
    }

    fn index(slot: u128) -> usize {
        // The remainder is below SLOTS, so it fits.
        (slot % SLOTS as u128) as usize
    }
}

impl fmt::Debug for RetryBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ledger = self.ledger.lock().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("RetryBudget")
            .field("window", &self.window)
            .field("floor", &self.floor)
            .field("percent", &self.percent)
            .field("calls", &ledger.calls)
            .field("retries", &ledger.retries)
            .finish()
    }
}
