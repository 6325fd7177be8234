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

// Folders by role, each lower one knowing nothing of those above it:
// time, then the breaker, the extras around it, the retry loop, the layer.
mod breaker;
mod error;
mod extras;
#[cfg(feature = "tower")]
mod layer;
mod retry;
mod time;

pub use extras::fleet;
// BEGIN SOLUTION ONLY: production adapters for the event stream, off by default
#[cfg(any(feature = "tracing", feature = "metrics"))]
pub use extras::telemetry;
// END SOLUTION ONLY
pub use time::backoff;
#[cfg(feature = "tokio")]
pub use time::timeout;

pub use breaker::RetryBreaker;
pub use breaker::builder::Builder;
pub use breaker::circuit::Recorded;
pub use retry::budget::RetryBudget;
#[cfg(feature = "tokio")]
pub use time::clock::TokioClock;
pub use time::clock::{Clock, ManualClock, SystemClock};
// BEGIN SOLUTION ONLY: the fast OPEN refusal's cheaper clock
pub use time::coarse::Coarse;
// END SOLUTION ONLY
// BEGIN SOLUTION ONLY: a growing cooldown needs the solution's circuit
pub use breaker::cooldown::CooldownGrowth;
// END SOLUTION ONLY
pub use breaker::event::Event;
pub use breaker::permit::{OwnedPermit, Permit};
pub use breaker::state::{Phase, State};
pub use breaker::transition::{Generation, Transition};
pub use breaker::verdict::Verdict;
pub use breaker::window::WindowConfig;
pub use error::{ConfigError, ErasedError, ExecuteError, GaveUp, Rejected};
pub use extras::registry::Registry;
#[cfg(feature = "tower")]
pub use layer::{BreakerFuture, BreakerLayer, BreakerService};
pub use retry::policy::RetryPolicy;
#[cfg(feature = "tokio")]
pub use time::sleeper::TokioSleeper;
pub use time::sleeper::{ManualSleeper, Sleeper};
pub use time::time_source::TimeSource;
