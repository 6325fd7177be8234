//! The synchronisation primitives threads share, in one place so that a
//! checker can swap them.
//!
//! The bulkhead's counter is the standard `AtomicU32`, or, when the lab's
//! suite builds the crate (the `schedule` feature), lab-schedule's: the same
//! operations, at each of which the suite's scheduler may switch threads,
//! so step 17's tests try every order of two callers and judge a race the
//! same on every run.
// BEGIN SOLUTION ONLY: the fast path is the solution's
//!
//! The breaker's lock-free fast path takes its mutex and atomics from here
//! too: built with `--cfg loom` (see `just loom` and `tests/loom.rs`), they
//! are loom's, which let its model checker run every interleaving of the
//! threads that use them. Nothing else in the crate names a primitive of
//! its own.
// END SOLUTION ONLY

pub(crate) use std::sync::atomic::Ordering;

#[cfg(feature = "schedule")]
pub(crate) use lab_schedule::AtomicU32;
#[cfg(not(feature = "schedule"))]
pub(crate) use std::sync::atomic::AtomicU32;

// BEGIN SOLUTION ONLY: the fast path's primitives, swapped for loom's under `--cfg loom`
#[cfg(loom)]
pub(crate) use loom::sync::{Mutex, MutexGuard, atomic::AtomicU64};
#[cfg(not(loom))]
pub(crate) use std::sync::{Mutex, MutexGuard, atomic::AtomicU64};
// END SOLUTION ONLY
