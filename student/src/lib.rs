//! The shared test suite's view of your crate: the tests in `tests/` use
//! `retry_breaker`, and this crate re-exports your starter under that name.
//!
//! `cargo test --test lab` (or `just test`) runs the suite against it.

pub use retry_breaker_starter::*;

/// Which crate this build tests.
pub const UNDER_TEST: &str = "starter";
