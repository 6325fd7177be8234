//! The settlement worker: charges the orders that were accepted as pending,
//! through the same breaker as the checkout.
//!
//! Going through the same breaker matters: while the gateway is down, the
//! worker is refused along with everyone else instead of adding its own
//! load, and it waits out the cooldown the breaker reports rather than
//! polling. Each order is charged with its own idempotency key, so even a
//! retry whose first answer was lost cannot charge a customer twice; and an
//! order leaves the pending list only once the gateway confirmed the charge,
//! so none is dropped.

use std::time::{Duration, Instant};

use crate::checkout::{Caller, Checkout, Payment, Unavailable};
use crate::orders::OrderStatus;

/// How a settlement run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SettlementRun {
    /// Orders charged during the run.
    pub settled: u32,
    /// Orders still pending at the end (0 unless the budget ran out or the
    /// run was cancelled).
    pub still_pending: u32,
    /// Passes over the pending orders.
    pub rounds: u32,
}

/// Charges pending orders until there are none left.
#[derive(Debug, Clone, Copy)]
pub struct SettlementWorker<'a> {
    checkout: &'a Checkout,
    retry_pause: Duration,
}

/// However long the budget, a run never makes more passes than this.
const MAX_ROUNDS: u32 = 100;

impl<'a> SettlementWorker<'a> {
    /// A worker for the pending orders of `checkout`. After a call that
    /// failed with the circuit still closed it pauses `retry_pause` before
    /// the next pass; after a refusal it waits out the cooldown instead.
    pub fn new(checkout: &'a Checkout, retry_pause: Duration) -> Self {
        SettlementWorker {
            checkout,
            retry_pause,
        }
    }

    /// Charges pending orders, oldest first, until none are left, `budget`
    /// has run out, or the checkout's token is cancelled.
    ///
    /// A real shop would run this on a timer for ever; the demo runs it
    /// once the gateway is back and stops when the book is clean.
    pub async fn settle(&self, budget: Duration) -> SettlementRun {
        let started = Instant::now();
        let book = self.checkout.book();
        let timeline = self.checkout.timeline();
        let cancel = self.checkout.cancel_token();
        let mut run = SettlementRun {
            settled: 0,
            still_pending: 0,
            rounds: 0,
        };

        while run.rounds < MAX_ROUNDS && started.elapsed() < budget && !cancel.is_cancelled() {
            let pending = book.pending();
            if pending.is_empty() {
                break;
            }
            run.rounds += 1;
            let mut pause = None;
            for order in pending {
                match self.checkout.pay(&order, Caller::Settlement).await {
                    Payment::Paid(receipt) => {
                        book.record(order, OrderStatus::Paid(receipt.charge_id));
                        run.settled += 1;
                    }
                    Payment::Declined(error) => {
                        book.record(order, OrderStatus::Declined(error.to_string()));
                    }
                    Payment::Unavailable(Unavailable::Refused(rejection)) => {
                        // Zero while a probe is out: then a short pause will do.
                        pause = Some(rejection.remaining().max(Duration::from_millis(5)));
                        break;
                    }
                    Payment::Unavailable(Unavailable::Failed(_)) => {
                        pause = Some(self.retry_pause);
                        break;
                    }
                    Payment::Unavailable(Unavailable::Cancelled) => break,
                }
            }
            if let Some(pause) = pause {
                // Never sleep past the budget, nor through a cancellation.
                let pause = pause.min(budget.saturating_sub(started.elapsed()));
                timeline.note(
                    "worker",
                    format!("waits {}ms before the next pass", pause.as_millis()),
                );
                let _ = cancel.run_until_cancelled(tokio::time::sleep(pause)).await;
            }
        }

        run.still_pending = u32::try_from(book.pending().len()).unwrap_or(u32::MAX);
        run
    }
}
