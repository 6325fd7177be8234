//! Step 10, exploration: property tests that search for the scenarios nobody
//! wrote down, and a stress test on real threads. No new TODO: this step
//! passes when steps 1-8 hold up under any interleaving. A failure prints
//! the shrunk scenario as numbered steps, with the rule and TODO it breaks.
//!
//! Every run explores the same cases from a fixed seed, after replaying the
//! committed counterexamples, so the verdict is a function of the code alone
//! (E9). `just explore` runs many fresh cases instead.

pub(crate) mod calls;
mod laws;
pub(crate) mod permits;
pub(crate) mod rules;
mod stress;

use std::any::Any;
use std::fmt::Debug;
use std::time::Duration;

use proptest::strategy::Strategy;
use proptest::test_runner::{
    Config, FailurePersistence, FileFailurePersistence, PersistedSeed, RngAlgorithm, TestError,
    TestRng, TestRunner,
};

use crate::support::{guard, panics, sequence_svg};

/// Cases per property in every student run, on every route.
const CASES: u32 = 256;
/// The seed of every student run. Any fixed value does.
const SEED: u64 = 20_261_129;

/// How this run explores: the student's fixed, replayable exploration, or an
/// instructor's deep one (`just explore`), which sets `LAB_EXPLORE_CASES`.
struct Exploration {
    cases: u32,
    rng: TestRng,
    /// Whether a new counterexample is written to
    /// `tests/proptest-regressions/`. Only the instructor's recipe does.
    record: bool,
}

impl Exploration {
    fn from_env() -> Exploration {
        let deep = std::env::var("LAB_EXPLORE_CASES")
            .ok()
            .and_then(|cases| cases.parse().ok());
        match deep {
            // A deep run draws fresh cases each time: that is its point.
            Some(cases) => Exploration {
                cases,
                rng: TestRng::from_seed(RngAlgorithm::ChaCha, &fresh_seed()),
                record: true,
            },
            // Grading may explore other fixed cases (`LAB_SEED`, `LAB_CASES`),
            // still the same on every run.
            None => Exploration {
                cases: number("LAB_CASES").map_or(CASES, |cases| cases as u32),
                rng: TestRng::from_seed(
                    RngAlgorithm::ChaCha,
                    &seed_bytes(number("LAB_SEED").unwrap_or(SEED)),
                ),
                record: false,
            },
        }
    }

    /// A proptest configuration that owes nothing to `PROPTEST_*` variables,
    /// so that `just test` and a plain `cargo test` explore the same cases
    /// and reach the same verdict.
    fn config(&self) -> Config {
        Config {
            cases: self.cases,
            source_file: Some(file!()),
            failure_persistence: Some(Box::new(Seeds {
                file: FileFailurePersistence::SourceParallel("proptest-regressions"),
                record: self.record,
            })),
            rng_algorithm: RngAlgorithm::ChaCha,
            max_local_rejects: 65_536,
            max_global_rejects: 1024,
            max_flat_map_regens: 1_000_000,
            max_shrink_iters: 16_384,
            // Shrinking is bounded by iterations, never by the wall clock,
            // so a slow machine shrinks to the same counterexample.
            max_shrink_time: 0,
            verbose: 0,
            ..Config::default()
        }
    }
}

fn number(variable: &str) -> Option<u64> {
    std::env::var(variable).ok()?.parse().ok()
}

fn seed_bytes(seed: u64) -> [u8; 32] {
    let mut bytes = [0; 32];
    for chunk in bytes.chunks_mut(8) {
        chunk.copy_from_slice(&seed.to_le_bytes());
    }
    bytes
}

fn fresh_seed() -> [u8; 32] {
    use std::hash::{BuildHasher, RandomState};
    let mut bytes = [0; 32];
    for chunk in bytes.chunks_mut(8) {
        chunk.copy_from_slice(&RandomState::new().hash_one(0u8).to_le_bytes());
    }
    bytes
}

/// The committed counterexamples in `tests/proptest-regressions/`, replayed
/// before any new case. Student runs only read them: no test run may change
/// a tracked file.
#[derive(Debug, Clone, PartialEq)]
struct Seeds {
    file: FileFailurePersistence,
    record: bool,
}

impl FailurePersistence for Seeds {
    fn load_persisted_failures2(&self, source_file: Option<&'static str>) -> Vec<PersistedSeed> {
        self.file.load_persisted_failures2(source_file)
    }

    fn save_persisted_failure2(
        &mut self,
        source_file: Option<&'static str>,
        seed: PersistedSeed,
        shrunken_value: &dyn Debug,
    ) {
        if self.record {
            self.file
                .save_persisted_failure2(source_file, seed, shrunken_value);
        }
    }

    fn box_clone(&self) -> Box<dyn FailurePersistence> {
        Box::new(self.clone())
    }

    fn eq(&self, other: &dyn FailurePersistence) -> bool {
        other
            .as_any()
            .downcast_ref::<Seeds>()
            .is_some_and(|other| self == other)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Runs a property under the watchdog and turns a counterexample into a
/// readable failure.
pub(crate) fn explore<S>(
    hint: &'static str,
    strategy: S,
    check: fn(&S::Value) -> Result<(), String>,
) where
    S: Strategy + Send + 'static,
    S::Value: Debug,
{
    // A wrong answer can abort the process here (a panic in a permit's
    // destructor while a task's panic unwinds, with a cooldown or a clock
    // that no scenario test uses): in a process of its own, that fails
    // this test alone, and every other test still gets its verdict.
    if !crate::support::isolate(
        "the process aborted while exploring: a panic while another panic was unwinding, \
         probably in a destructor (a permit dropped by a panic reports a failure to the \
         breaker, and that report must never panic: B7, B11). The failing tests of the \
         earlier steps usually show the first panic itself.",
    ) {
        return;
    }
    guard(hint, Duration::from_secs(60), move || {
        let exploration = Exploration::from_env();
        let mut runner = TestRunner::new_with_rng(exploration.config(), exploration.rng);
        // Every case that fails while shrinking panics; only the shrunk
        // counterexample below is worth reading.
        let result = panics::quietly(|| {
            runner.run(&strategy, |case| {
                check(&case).map_err(proptest::test_runner::TestCaseError::fail)
            })
        });
        let test = std::thread::current().name().unwrap_or("step10").to_owned();
        match result {
            // A diagram of a counterexample that no longer fails would only
            // mislead: it goes once the property holds.
            Ok(()) => sequence_svg::forget(&test),
            Err(TestError::Fail(why, case)) => {
                let story = format!("{why}\n\nshrunk counterexample:\n{case:?}");
                panic!("{story}{}", sequence_svg::save(&test, &story))
            }
            Err(TestError::Abort(why)) => panic!("the exploration gave up: {why}"),
        }
    });
}

#[test]
fn b1_to_b10_permits_from_many_callers_obey_the_laws_at_every_step() {
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
