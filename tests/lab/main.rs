//! The shared test suite. It runs against the student's starter (`just
//! test`) or the reference solution (`just test-solution`); the root crate
//! re-exports whichever one is being tested.
//!
//! One module per lab step, in the order LAB.md and ADVANCED.md teach them, so that
//! `just test 3` (or `just test half_open`) runs one step. Each test names the
//! rules it checks (B1-B11 for the breaker, E1-E10 for the retry loop, as
//! LAB.md states them).

mod support;

mod step10_explore;
mod step11_classify;
mod step12_probes;
mod step13_window;
mod step14_registry;
mod step15_layer;
mod step16_fleet;
mod step17_bulkhead;
mod step1_closed;
mod step2_open_and_half_open;
mod step3_generations;
mod step4_panics_and_drops;
mod step5_backoff;
mod step6_retry;
mod step7_refusals;
mod step8_cancellation;
mod step9_worked_example;
mod toolkit;
