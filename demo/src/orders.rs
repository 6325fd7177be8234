//! Orders and the shop's book of them.
//!
//! The book is the shop's promise to its customers: once an order is in it,
//! it is not forgotten, whatever the payment gateway is doing. It lives in
//! memory here; a real shop would keep it in its database.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Identifies an order. Its text form, `order-7`, is also the idempotency
/// key of the order's charge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OrderId(pub u32);

impl fmt::Display for OrderId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "order-{}", self.0)
    }
}

/// Something a customer wants to pay for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Order {
    /// Which order.
    pub id: OrderId,
    /// How much to charge, in cents.
    pub amount_cents: u64,
}

impl Order {
    /// Order number `n`, with an amount that varies a little from order to
    /// order.
    pub fn numbered(n: u32) -> Self {
        Order {
            id: OrderId(n),
            amount_cents: 1_000 + u64::from(n % 7) * 250,
        }
    }
}

/// Where an order stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OrderStatus {
    /// Charged; the gateway's charge id.
    Paid(String),
    /// Accepted while payment was unavailable; the settlement worker will
    /// charge it later.
    Pending,
    /// The gateway refused the payment as invalid; the customer is told.
    Declined(String),
}

/// How many orders stand where.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BookCounts {
    /// Orders charged.
    pub paid: u32,
    /// Orders accepted and waiting to be charged.
    pub pending: u32,
    /// Orders whose payment was refused.
    pub declined: u32,
}

/// Every order the shop accepted, and where it stands.
#[derive(Debug, Default)]
pub struct OrderBook {
    orders: Mutex<BTreeMap<OrderId, (Order, OrderStatus)>>,
}

impl OrderBook {
    /// An empty book.
    pub fn new() -> Self {
        Self::default()
    }

    /// Writes down `order` with its `status`, replacing any earlier status.
    pub fn record(&self, order: Order, status: OrderStatus) {
        self.orders().insert(order.id, (order, status));
    }

    /// The status of order `id`, if the book has it.
    pub fn status(&self, id: OrderId) -> Option<OrderStatus> {
        self.orders().get(&id).map(|(_, status)| status.clone())
    }

    /// The orders still waiting to be charged, oldest first.
    pub fn pending(&self) -> Vec<Order> {
        self.orders()
            .values()
            .filter(|(_, status)| *status == OrderStatus::Pending)
            .map(|(order, _)| *order)
            .collect()
    }

    /// How many orders stand where.
    pub fn counts(&self) -> BookCounts {
        let mut counts = BookCounts::default();
        for (_, status) in self.orders().values() {
            match status {
                OrderStatus::Paid(_) => counts.paid += 1,
                OrderStatus::Pending => counts.pending += 1,
                OrderStatus::Declined(_) => counts.declined += 1,
            }
        }
        counts
    }

    fn orders(&self) -> MutexGuard<'_, BTreeMap<OrderId, (Order, OrderStatus)>> {
        // Every update is a single insert, so even after a panic elsewhere
        // the map is whole.
        self.orders.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
