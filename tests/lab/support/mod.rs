//! Fixtures shared by every step: a breaker on a manual clock, scripted
//! tasks, a timeline for snapshot traces, a watchdog, and manual polling.

pub mod fault;
pub mod lab;
pub mod panics;
pub mod poll;
pub mod script;
pub mod timeline;
pub mod watchdog;

pub use fault::{Fault, retryable};
pub use lab::{Lab, ms};
pub use poll::poll_once;
pub use script::Script;
pub use watchdog::{guard, run};
