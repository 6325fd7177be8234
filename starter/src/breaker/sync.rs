// PROVIDED FILE: a grade always uses the kit's own copy of this file; your code goes in the TODOs.
//! The synchronisation primitives threads share, in one place so that a
//! checker can swap them.
//!
//! The bulkhead's counter is the standard `AtomicU32`, or, when the lab's
//! suite builds the crate (the `schedule` feature), lab-schedule's: the same
//! operations, at each of which the suite's scheduler may switch threads,
//! so step 17's tests try every order of two callers and judge a race the
//! same on every run.

pub(crate) use std::sync::atomic::Ordering;

#[cfg(feature = "schedule")]
pub(crate) use lab_schedule::AtomicU32;
#[cfg(not(feature = "schedule"))]
pub(crate) use std::sync::atomic::AtomicU32;
