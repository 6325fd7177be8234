//! Bounded retries with backoff behind a consecutive-failure circuit breaker.
//!
//! A [`RetryBreaker`] sits in front of one flaky dependency. Its circuit is
//! **CLOSED** while things work, counting consecutive failures; at the
//! threshold it **OPENS** and refuses attempts, without calling the
//! dependency, for a cooldown; after that a single **HALF-OPEN** probe
//! decides whether to close again or reopen. [`RetryBreaker::execute`] wraps
//! a task in a retry loop whose every attempt goes through the breaker.
//!
//! Time, sleeping and cancellation are all injected ([`Clock`], [`Sleeper`],
//! a [`CancellationToken`]), so with a [`ManualClock`] and its
//! [`ManualSleeper`] every behaviour is a deterministic function of its
//! inputs. On tokio, a [`TokioClock`] and the [`TokioSleeper`] share tokio's
//! time, so tests with paused time work as well; `execute` refuses a sleeper
//! whose sleeps would not move the breaker's clock.
//!
//! [`RetryPolicy`] holds the retry settings as one value for production
//! code, a [`RetryBudget`] caps the retries of many calls as a share of
//! those calls, and [`timeout::per_attempt`] gives each attempt a deadline,
//! so that a hang is a failure the breaker counts.
//!
//! [`Builder::max_in_flight`] adds a bulkhead, a limit on the attempts in
//! flight, which a circuit breaker alone is not.
//!
//! [`fleet`] holds what one node of a fleet knows of the others' trips and
//! closes, and what it decides from that: the part of a breaker shared
//! across a fleet that needs no network (the `retry-breaker-fleet` crate
//! adds the store).
//!
//! # Features
//!
//! - `tokio` (default): [`TokioClock`], [`TokioSleeper`] and [`timeout`], on
//!   tokio's timer. Without it the crate needs no timer at all.
//! - `tower` (off by default): [`BreakerLayer`], the breaker and the retry
//!   loop as `tower` middleware, with a breaker per request key from a
//!   [`Registry`].
//!
//! ```
//! use std::time::Duration;
//! use retry_breaker_solution::{backoff, ExecuteError, ManualClock, RetryBreaker, State};
//! use tokio_util::sync::CancellationToken;
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let clock = ManualClock::new();
//! let sleeper = clock.sleeper();
//! let breaker = RetryBreaker::new(3, Duration::from_secs(10), clock.clone())?;
//! let cancel = CancellationToken::new();
//!
//! // A dependency that is down: three retried attempts open the circuit...
//! let down = || async { Err::<(), _>("connection refused") };
//! let result = breaker
//!     .execute(3, down, |_| true, backoff::constant(Duration::from_secs(1)), &cancel, &sleeper)
//!     .await;
//! assert!(matches!(result, Err(ExecuteError::Task { attempt: 3, .. })));
//! assert_eq!(breaker.state(), State::Open { remaining: Duration::from_secs(10) });
//!
//! // ...and the next call fails fast, without reaching the dependency.
//! let result = breaker
//!     .execute(3, down, |_| true, backoff::constant(Duration::from_secs(1)), &cancel, &sleeper)
//!     .await;
//! assert!(matches!(result, Err(ExecuteError::Rejected { attempt: 1, .. })));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! [`CancellationToken`]: tokio_util::sync::CancellationToken

#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod attempt;
pub mod backoff;
mod breaker;
mod budget;
mod builder;
mod bulkhead;
mod circuit;
mod clock;
// BEGIN SOLUTION ONLY: the fast OPEN refusal's cheaper clock
mod coarse;
// END SOLUTION ONLY
// BEGIN SOLUTION ONLY: a growing cooldown needs the solution's circuit
mod cooldown;
// END SOLUTION ONLY
mod deadline;
mod describe;
mod error;
mod event;
mod execute;
pub mod fleet;
#[cfg(feature = "tower")]
mod layer;
mod permit;
mod policy;
#[cfg(feature = "tower")]
mod readiness;
mod registry;
// BEGIN SOLUTION ONLY: the lock-free fast path answers without the student's Circuit
mod shortcut;
// END SOLUTION ONLY
mod sleeper;
mod slots;
mod state;
mod sync;
// BEGIN SOLUTION ONLY: production adapters for the event stream, off by default
#[cfg(any(feature = "tracing", feature = "metrics"))]
pub mod telemetry;
// END SOLUTION ONLY
mod time_source;
#[cfg(feature = "tokio")]
pub mod timeout;
// BEGIN SOLUTION ONLY: the durations of attempts and calls (O9)
mod timing;
// END SOLUTION ONLY
mod transition;
mod verdict;
mod window;

pub use breaker::RetryBreaker;
pub use budget::RetryBudget;
pub use builder::Builder;
pub use circuit::Recorded;
#[cfg(feature = "tokio")]
pub use clock::TokioClock;
pub use clock::{Clock, ManualClock, SystemClock};
// BEGIN SOLUTION ONLY: the fast OPEN refusal's cheaper clock
pub use coarse::Coarse;
// END SOLUTION ONLY
// BEGIN SOLUTION ONLY: a growing cooldown needs the solution's circuit
pub use cooldown::CooldownGrowth;
// END SOLUTION ONLY
pub use error::{ConfigError, ErasedError, ExecuteError, GaveUp, Rejected};
pub use event::Event;
#[cfg(feature = "tower")]
pub use layer::{BreakerFuture, BreakerLayer, BreakerService};
pub use permit::{OwnedPermit, Permit};
pub use policy::RetryPolicy;
pub use registry::Registry;
#[cfg(feature = "tokio")]
pub use sleeper::TokioSleeper;
pub use sleeper::{ManualSleeper, Sleeper};
pub use state::{Phase, State};
pub use time_source::TimeSource;
pub use transition::{Generation, Transition};
pub use verdict::Verdict;
pub use window::WindowConfig;
