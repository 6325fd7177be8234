//! The one test suite's view of the lab: this crate re-exports either the
//! student's `starter` (the default) or the reference `solution`, so the
//! suite in `tests/` runs unchanged against both.
//!
//! - `cargo test` / `just test`: the suite against the starter.
//! - `cargo test --no-default-features --features solution` /
//!   `just test-solution`: the suite against the solution.

#[cfg(all(feature = "starter", feature = "solution"))]
compile_error!(
    "the features `starter` and `solution` are mutually exclusive: the suite tests one crate at a time. \
     To test the solution, turn the default off: `cargo test --no-default-features --features solution` \
     (or `just test-solution`)."
);

#[cfg(not(any(feature = "starter", feature = "solution")))]
compile_error!(
    "choose the crate to test: the `starter` feature (the default) or the `solution` feature, \
     e.g. `cargo test --no-default-features --features solution`."
);

#[cfg(all(feature = "solution", not(feature = "starter")))]
pub use retry_breaker_solution::*;

#[cfg(all(feature = "starter", not(feature = "solution")))]
pub use retry_breaker_starter::*;

/// Which crate this build tests: `"starter"` or `"solution"`.
#[cfg(all(feature = "solution", not(feature = "starter")))]
pub const UNDER_TEST: &str = "solution";

/// Which crate this build tests: `"starter"` or `"solution"`.
#[cfg(all(feature = "starter", not(feature = "solution")))]
pub const UNDER_TEST: &str = "starter";
