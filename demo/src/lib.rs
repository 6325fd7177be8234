//! A live demo of the retry breaker: a checkout pays through it, over real
//! HTTP on loopback, against a fake payment gateway that can be healthy,
//! down, slow, flaky or rejecting.
//!
//! The pieces, one concept each:
//!
//! - [`gateway`]: the fake payment gateway, with a run-time switchable
//!   [`Mode`](gateway::Mode), a request count and a ledger of charges.
//! - [`client`]: one charge request with a deadline, and what its failure
//!   means (retryable or the caller's fault).
//! - [`orders`]: orders and the book that never forgets one.
//! - [`checkout`]: pays through [`RetryBreaker::execute_classified`](kit::RetryBreaker::execute_classified)
//!   and accepts orders as pending when payment is unavailable.
//! - [`settlement`]: charges the pending orders later, through the same breaker.
//! - [`timeline`] and [`report`]: what happened, and how it is printed.
//! - [`chart`] and [`html`]: the same as pictures, in one HTML report.
//! - the `pictures` binary: LAB.md's pictures, drawn from the reference
//!   solution on a manual clock (`just pictures`); its modules are its own,
//!   since it always needs the solution.
//! - [`scenarios`]: the scripted stories that `just demo` runs.
//! - [`routes`]: the HTTP client behind the tower layer, a breaker per
//!   route, and the story of one route down while another stays healthy.
//! - `metrics_page`: the routes' breakers counted by the solution's metrics
//!   adapter and served as `/metrics` over HTTP (the `metrics-page`
//!   feature, on by default in the kit).
//! - [`unfinished`]: one friendly line for the starter's `todo!()`s.
//! - [`tune`]: the demo's fixed tuning scenarios, over real HTTP (`just tune --http`).
//!
//! With the `starter` feature (always on in the student edition) the demo
//! runs on the student's crate; without it, in the course kit, on the
//! reference solution. The very same code runs on either, through the
//! [`kit`] alias.

/// The retry-breaker crate under demonstration: the reference solution, or
/// with the `starter` feature, the student's crate (same API).
#[cfg(not(feature = "starter"))]
pub use retry_breaker_solution as kit;
/// The retry-breaker crate under demonstration: the reference solution, or
/// with the `starter` feature, the student's crate (same API).
#[cfg(feature = "starter")]
pub use retry_breaker_starter as kit;

pub mod chart;
pub mod checkout;
pub mod client;
#[cfg(not(feature = "starter"))]
pub mod fleet;
pub mod gateway;
pub mod html;
#[cfg(all(feature = "metrics-page", not(feature = "starter")))]
pub mod metrics_page;
pub mod orders;
pub mod report;
pub mod routes;
pub mod scenarios;
pub mod settlement;
pub mod timeline;
pub mod tune;
pub mod unfinished;
