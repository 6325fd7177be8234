//! The checkout: takes orders and pays for them through the breaker, and
//! accepts an order as pending when payment is unavailable instead of
//! turning the customer away.

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::client::{ChargeError, PaymentClient, Receipt};
use crate::kit::{self, Event, ExecuteError, Rejected, RetryBreaker, TokioClock, TokioSleeper};
use crate::orders::{Order, OrderBook, OrderId, OrderStatus};
use crate::timeline::{InCall, Outcome, StateAfter, Timeline};

/// The timeline's note when an order is accepted without payment.
pub const PENDING_NOTE: &str = "accepted as PENDING, to be charged later";
/// The timeline's note when an order is lost.
pub const LOST_NOTE: &str = "LOST: the customer saw an error page";

tokio::task_local! {
    /// The call whose future is being polled: the breaker tells its events
    /// from inside that poll, so the sink learns which call an event is
    /// about without the event carrying it.
    static CALL: CallInScope;
}

/// What the event sink knows of the call being polled.
struct CallInScope {
    /// The call, as the timeline names it.
    label: String,
    started: Instant,
    /// Attempts the breaker has answered, admitted or refused: each attempt
    /// asks once.
    answered: Cell<u32>,
}

impl CallInScope {
    fn hears(&self, event: &Event) -> InCall<'_> {
        if matches!(event, Event::Admitted { .. } | Event::Rejected(_)) {
            self.answered.set(self.answered.get() + 1);
        }
        InCall {
            call: &self.label,
            attempt: self.answered.get(),
            started: self.started,
        }
    }
}

/// How hard one call tries before it gives up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts per call, the first one included.
    pub attempts: u32,
    /// The backoff after the first failure, doubled after each further one...
    pub backoff_base: Duration,
    /// ...up to this cap. Each delay is then jittered down to as little as
    /// half, so that callers who failed together do not retry together.
    pub backoff_cap: Duration,
}

/// The breaker's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BreakerSettings {
    /// Consecutive failed attempts that open the circuit.
    pub threshold: u32,
    /// How long the circuit stays open before one probe may try.
    pub cooldown: Duration,
}

/// Who is asking for a payment, as the timeline names the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// A customer placing an order.
    Checkout,
    /// The settlement worker, charging an order that was left pending.
    Settlement,
}

impl Caller {
    fn label(self, id: OrderId) -> String {
        match self {
            Caller::Checkout => id.to_string(),
            Caller::Settlement => format!("settle {id}"),
        }
    }
}

/// The result of one payment call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Payment {
    /// The order was charged.
    Paid(Receipt),
    /// The gateway refused the payment as invalid.
    Declined(ChargeError),
    /// Payment could not be made right now.
    Unavailable(Unavailable),
}

/// Why payment was unavailable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unavailable {
    /// The breaker refused the call: the gateway was not asked.
    Refused(Rejected),
    /// The gateway failed, and the call gave up.
    Failed(ChargeError),
    /// The demo is shutting down.
    Cancelled,
}

/// A checkout that pays through one shared breaker and keeps every order it
/// accepts in its book.
#[derive(Debug)]
pub struct Checkout {
    breaker: RetryBreaker<TokioClock>,
    client: PaymentClient,
    book: OrderBook,
    timeline: Timeline,
    retry: RetryPolicy,
    cancel: CancellationToken,
    /// Payment calls made, by customers and by the settlement worker.
    calls: AtomicU32,
    /// Orders customers placed, whether or not the shop kept them.
    orders_placed: AtomicU32,
}

impl Checkout {
    /// A checkout paying through `client`, behind a breaker with `breaker`
    /// settings on the real clock, writing what happens to `timeline`.
    /// `cancel` stops payment calls between attempts.
    ///
    /// # Errors
    ///
    /// The breaker's [`ConfigError`](kit::ConfigError) if its settings are
    /// impossible.
    pub fn new(
        client: PaymentClient,
        breaker: BreakerSettings,
        retry: RetryPolicy,
        timeline: Timeline,
        cancel: CancellationToken,
    ) -> Result<Self, kit::ConfigError> {
        let breaker = RetryBreaker::new(breaker.threshold, breaker.cooldown, TokioClock::new())?;
        Ok(Checkout::around(breaker, client, retry, timeline, cancel))
    }

    /// A checkout whose breaker `breaker` builds: the advanced track's
    /// settings, such as window mode (W1-W3) or a bulkhead (H1-H5).
    ///
    /// # Errors
    ///
    /// If the settings cannot work (a zero threshold, a window that could
    /// never open, a bulkhead with room for nothing).
    pub fn built(
        client: PaymentClient,
        breaker: kit::Builder,
        retry: RetryPolicy,
        timeline: Timeline,
        cancel: CancellationToken,
    ) -> Result<Self, kit::ConfigError> {
        let breaker = breaker.build(TokioClock::new())?;
        Ok(Checkout::around(breaker, client, retry, timeline, cancel))
    }

    fn around(
        breaker: RetryBreaker<TokioClock>,
        client: PaymentClient,
        retry: RetryPolicy,
        timeline: Timeline,
        cancel: CancellationToken,
    ) -> Self {
        let record = timeline.clone();
        let breaker = breaker.with_event_sink(move |event| {
            CALL.try_with(|call| record.told(Some(call.hears(event)), event))
                .unwrap_or_else(|_| record.told(None, event));
        });
        Checkout {
            breaker,
            client,
            book: OrderBook::new(),
            timeline,
            retry,
            cancel,
            calls: AtomicU32::new(0),
            orders_placed: AtomicU32::new(0),
        }
    }

    /// Takes an order and pays for it through the breaker.
    ///
    /// Whatever the gateway does, the order is kept: paid, declined, or,
    /// when payment is unavailable, pending for the settlement worker. A
    /// shop that turns customers away whenever its payment provider hiccups
    /// loses the sale; one that takes the order and charges it later only
    /// delays the money.
    pub async fn place_order(&self, order: Order) -> OrderStatus {
        self.orders_placed.fetch_add(1, Ordering::Relaxed);
        let status = match self.pay(&order, Caller::Checkout).await {
            Payment::Paid(receipt) => OrderStatus::Paid(receipt.charge_id),
            Payment::Declined(error) => OrderStatus::Declined(error.to_string()),
            Payment::Unavailable(_) => {
                self.timeline
                    .note(&Caller::Checkout.label(order.id), PENDING_NOTE);
                OrderStatus::Pending
            }
        };
        self.book.record(order, status.clone());
        status
    }

    /// Takes an order the naive way, for comparison: one request straight
    /// to the gateway, no breaker, no retry, no fallback. If payment fails,
    /// the customer sees an error and the shop keeps no record of the order,
    /// so `None` is returned and the order is lost.
    pub async fn place_order_without_breaker(&self, order: Order) -> Option<OrderStatus> {
        self.orders_placed.fetch_add(1, Ordering::Relaxed);
        self.calls.fetch_add(1, Ordering::Relaxed);
        let label = Caller::Checkout.label(order.id);
        let sent = Instant::now();
        let result = self.client.charge(&order).await;
        let took = sent.elapsed();
        let (outcome, status) = match result {
            Ok(receipt) => (
                Outcome::Charged(receipt.charge_id.clone()),
                Some(OrderStatus::Paid(receipt.charge_id)),
            ),
            Err(error) if error.is_callers_fault() => (
                Outcome::Declined(error.clone()),
                Some(OrderStatus::Declined(error.to_string())),
            ),
            Err(error) => (
                Outcome::Failed {
                    error,
                    retry_in: None,
                },
                None,
            ),
        };
        self.timeline
            .attempt(&label, 1, false, outcome, Some(took), StateAfter::NoBreaker);
        match &status {
            Some(status) => self.book.record(order, status.clone()),
            None => self.timeline.note(&label, LOST_NOTE),
        }
        status
    }

    /// Pays for `order` through the breaker, with bounded, jittered retries.
    ///
    /// Every attempt, and every refusal, goes to the timeline, from the
    /// breaker's event stream. The book is left alone: the caller decides
    /// what the result means for the order.
    pub async fn pay(&self, order: &Order, caller: Caller) -> Payment {
        self.calls.fetch_add(1, Ordering::Relaxed);
        let label = caller.label(order.id);
        let label = label.as_str();

        // The breaker's events open each attempt's row (see `Timeline::told`);
        // the task adds what only it knows, the gateway's answer.
        let mut attempts_started = 0;
        let task = || {
            attempts_started += 1;
            let attempt = attempts_started;
            async move {
                let sent = Instant::now();
                let result = self.client.charge(order).await;
                self.timeline
                    .answered(label, attempt, row(&result), sent.elapsed());
                result
            }
        };
        // Each call draws its own jitter seed, so calls that fail at the same
        // moment spread their retries instead of hitting the gateway in step.
        let jittered = kit::backoff::jittered(kit::backoff::exponential(
            self.retry.backoff_base,
            self.retry.backoff_cap,
        ));
        let backoff = |failed_attempt| {
            // The loop asks for the backoff right after reporting the failed
            // attempt, so the state now is the state that attempt left.
            self.timeline.fill_states(self.breaker.state());
            jittered(failed_attempt)
        };

        let call = self.breaker.execute_classified(
            self.retry.attempts,
            task,
            ChargeError::verdict,
            ChargeError::is_retryable,
            backoff,
            &self.cancel,
            &TokioSleeper,
        );
        let scope = CallInScope {
            label: label.to_owned(),
            started: Instant::now(),
            answered: Cell::new(0),
        };
        let result = CALL.scope(scope, call).await;
        self.timeline.fill_states(self.breaker.state());

        match result {
            Ok(receipt) => Payment::Paid(receipt),
            // A decline was a sign of life for the breaker and was not
            // retried; the customer still learns of it.
            Err(ExecuteError::Task { source, .. }) if source.is_callers_fault() => {
                Payment::Declined(source)
            }
            Err(ExecuteError::Rejected { rejection, .. }) => {
                Payment::Unavailable(Unavailable::Refused(rejection))
            }
            Err(ExecuteError::Task { source, .. }) => {
                Payment::Unavailable(Unavailable::Failed(source))
            }
            // A cancellation, or (`ExecuteError` may grow) any other end
            // without an answer from the gateway.
            Err(_) => Payment::Unavailable(Unavailable::Cancelled),
        }
    }

    /// The breaker the checkout (and the settlement worker) pays through.
    pub fn breaker(&self) -> &RetryBreaker<TokioClock> {
        &self.breaker
    }

    /// The orders the shop kept.
    pub fn book(&self) -> &OrderBook {
        &self.book
    }

    /// The timeline the checkout writes to.
    pub fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    /// The token that stops payment calls.
    pub fn cancel_token(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Payment calls made so far, by customers and by the settlement worker.
    pub fn calls(&self) -> u32 {
        self.calls.load(Ordering::Relaxed)
    }

    /// Orders customers placed, kept or not.
    pub fn orders_placed(&self) -> u32 {
        self.orders_placed.load(Ordering::Relaxed)
    }
}

/// The timeline's row for one attempt.
///
/// What the breaker makes of the attempt is not decided here but by
/// [`ChargeError::verdict`], the classifier `pay` hands to the breaker: a
/// request the gateway refused as invalid is a *success* for the breaker,
/// since the gateway is up and answering. Counted as a failure, one
/// customer's bad card number could open the circuit on everyone else. It
/// is not retried either ([`ChargeError::is_retryable`]): classifying and
/// retrying are two questions.
fn row(result: &Result<Receipt, ChargeError>) -> Outcome {
    match result {
        Ok(receipt) => Outcome::Charged(receipt.charge_id.clone()),
        Err(error) if error.is_callers_fault() => Outcome::Declined(error.clone()),
        Err(error) => Outcome::Failed {
            error: error.clone(),
            retry_in: None,
        },
    }
}
