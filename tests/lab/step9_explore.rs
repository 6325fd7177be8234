//! Step 9, exploration: property tests that search for the scenarios nobody
//! wrote down, and a stress test on real threads. No new TODO: this step
//! passes when steps 1-7 hold up under any interleaving. A failure prints
//! the shrunk scenario as numbered steps, with the rule and TODO it breaks.
//!
//! `PROPTEST_CASES` sets the number of cases (`just explore` runs many).

mod calls;
mod model;
mod permits;
mod stress;

use std::fmt::Debug;
use std::time::Duration;

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, TestError, TestRunner};

use crate::support::guard;

/// Runs a property under the watchdog and turns a counterexample into a
/// readable failure.
fn explore<S>(hint: &'static str, strategy: S, check: fn(&S::Value) -> Result<(), String>)
where
    S: Strategy + Send + 'static,
    S::Value: Debug,
{
    guard(hint, Duration::from_secs(60), move || {
        let config = Config {
            source_file: Some(file!()),
            ..Config::default()
        };
        let mut runner = TestRunner::new(config);
        let result = runner.run(&strategy, |case| {
            check(&case).map_err(proptest::test_runner::TestCaseError::fail)
        });
        match result {
            Ok(()) => {}
            Err(TestError::Fail(why, case)) => {
                panic!("{why}\n\nshrunk counterexample:\n{case:?}")
            }
            Err(TestError::Abort(why)) => panic!("the exploration gave up: {why}"),
        }
    });
}

#[test]
fn b1_to_b10_permits_from_many_callers_agree_with_the_model() {
    explore(
        "a permit operation did not return (a deadlock?)",
        permits::scenario(),
        permits::check,
    );
}

#[test]
fn e1_to_e7_interleaved_calls_keep_the_contract() {
    explore(
        "an interleaved call never returned from a poll (a busy loop?)",
        calls::interleaving(),
        calls::check,
    );
}
