//! Fixtures shared by every step: a breaker on a manual clock, scripted
//! tasks, one call of `execute` in a line, a timeline for snapshot traces,
//! a watchdog, and manual polling.

pub mod advanced;
pub mod breaker_core;
pub mod call;
pub mod child;
pub mod fault;
pub mod gate;
pub mod hooked;
pub mod lab;
pub mod panics;
pub mod poll;
pub mod script;
pub mod sequence_svg;
pub mod time_pairs;
pub mod timeline;
pub mod watchdog;

pub use call::{Ending, linear, no_backoff};
pub use child::{is_child, isolate, run_child};
pub use fault::{Fault, retryable};
pub use gate::Gate;
pub use hooked::{Hooked, panic_message};
pub use lab::{Lab, ms, with_room_for};
pub use poll::poll_once;
pub use script::Script;
pub use watchdog::{guard, run, run_paused};
