//! Counts over the last stretch of time, kept in ten slots: what a retry
//! budget (its calls and retries, Q1-Q3) and a time-based window (its
//! verdicts and failures) both need.
//!
//! Each slot counts what happened during a tenth of the period; a count
//! leaves with its slot, so it ages out at most one slot's length early.
//! That bounds the work of each operation (at most ten slots emptied) and
//! the memory (ten slots, allocated with the owner), whatever the traffic.

use std::time::Duration;

/// How many slots a period is kept in.
pub(crate) const SLOTS: usize = 10;

/// Two counts: events, and those of them that were marked (a budget's
/// calls and retries; a window's verdicts and failures).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tally {
    pub(crate) events: u64,
    pub(crate) marked: u64,
}

/// The tallies of the slots in the period, newest last in turn, and their
/// sums.
#[derive(Debug, Clone)]
pub(crate) struct Slots {
    /// One slot's length in nanoseconds: a tenth of the period, rounded
    /// down, never 0.
    length: u128,
    /// The number of the newest slot seen: the latest reading divided by
    /// the slot's length.
    newest: u128,
    slots: [Tally; SLOTS],
    /// The sums over `slots`, kept so that no operation adds them up.
    sum: Tally,
}

impl Slots {
    /// Empty slots over `period`, or `None` if a tenth of it is shorter
    /// than a nanosecond.
    pub(crate) fn over(period: Duration) -> Option<Self> {
        let length = period.as_nanos() / SLOTS as u128;
        (length > 0).then(|| Slots {
            length,
            newest: 0,
            slots: [Tally::default(); SLOTS],
            sum: Tally::default(),
        })
    }

    /// The sums over the period ending at the latest reading.
    pub(crate) fn sum(&self) -> Tally {
        self.sum
    }

    // BEGIN SOLUTION ONLY: a time-based window is read without moving (T1)
    /// The sums over the period ending at `now`, as [`advance_to`] would
    /// leave them, without moving: a read that changes nothing.
    ///
    /// [`advance_to`]: Slots::advance_to
    pub(crate) fn sum_at(&self, now: Duration) -> Tally {
        let mut ahead = self.clone();
        ahead.advance_to(now);
        ahead.sum
    }
    // END SOLUTION ONLY

    /// Moves to the slot of `now`, emptying the slots it pushes out of the
    /// period. An earlier reading than the newest counts as the newest: the
    /// clock never goes back, but two callers may read it in one order and
    /// take the owner's lock in the other.
    pub(crate) fn advance_to(&mut self, now: Duration) {
        let slot = now.as_nanos() / self.length;
        // Every slot after the newest up to `slot` is new: none if `slot` is
        // not later, and at most all of them, however long nothing happened.
        let fresh = slot.saturating_sub(self.newest).min(SLOTS as u128);
        for step in 0..fresh {
            let gone = std::mem::take(&mut self.slots[index(slot - step)]);
            // Saturating, as the sums are: a sum stuck at u64::MAX is below
            // the sum of its slots.
            self.sum.events = self.sum.events.saturating_sub(gone.events);
            self.sum.marked = self.sum.marked.saturating_sub(gone.marked);
        }
        self.newest = self.newest.max(slot);
    }

    /// Counts an event in the newest slot, marked or not.
    pub(crate) fn count(&mut self, marked: bool) {
        let newest = &mut self.slots[index(self.newest)];
        newest.events = newest.events.saturating_add(1);
        self.sum.events = self.sum.events.saturating_add(1);
        if marked {
            newest.marked = newest.marked.saturating_add(1);
            self.sum.marked = self.sum.marked.saturating_add(1);
        }
    }

    /// Marks one more event of the newest slot, without counting an event
    /// (a budget's retry belongs to a call counted before).
    pub(crate) fn mark(&mut self) {
        let newest = &mut self.slots[index(self.newest)];
        newest.marked = newest.marked.saturating_add(1);
        self.sum.marked = self.sum.marked.saturating_add(1);
    }

    // BEGIN SOLUTION ONLY: a time-based window forgets its verdicts when the circuit closes
    /// Forgets everything counted.
    pub(crate) fn clear(&mut self) {
        self.slots = [Tally::default(); SLOTS];
        self.sum = Tally::default();
    }
    // END SOLUTION ONLY
}

fn index(slot: u128) -> usize {
    // The remainder is below SLOTS, so it fits.
    (slot % SLOTS as u128) as usize
}
