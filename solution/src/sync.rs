//! The synchronisation primitives behind the breaker's lock-free paths, in
//! one place so that the loom model checker can swap them.
//!
//! A normal build uses the standard library's. Built with `--cfg loom` (see
//! `just loom` and `tests/loom.rs`), the mutex and atomics are loom's, which
//! let its model checker run every interleaving of the threads that use
//! them. Nothing else in the crate names a primitive of its own.

// SOLUTION ONLY FILE: the starter's breaker uses std's mutex directly and has no lock-free path.

#[cfg(loom)]
pub(crate) use loom::sync::{
    Mutex, MutexGuard,
    atomic::{AtomicU64, Ordering},
};
#[cfg(not(loom))]
pub(crate) use std::sync::{
    Mutex, MutexGuard,
    atomic::{AtomicU64, Ordering},
};
