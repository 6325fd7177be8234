//! The shared test suite. It runs against the student's starter (`just
//! test`) or the reference solution (`just test-solution`); the root crate
//! re-exports whichever one is being tested.
//!
//! One module per lab step, in the order the lab teaches them, so that
//! `just test 3` (or `just test half_open`) runs one step. Each test names the
//! rules it checks (B1-B11 for the breaker, E1-E10 for the retry loop, as
//! LAB.md states them).

mod support;

mod step01_closed;
mod step02_open_and_half_open;
mod step03_generations;
mod step04_panics_and_drops;
mod step05_backoff;
mod step06_retry;
mod step07_refusals;
mod step08_cancellation;
mod step09_worked_example;
mod step10_explore;
mod step11_classify;
mod step12_probes;
mod step13_window;
mod step14_registry;
mod step15_layer;
mod step16_fleet;
mod step17_bulkhead;
mod toolkit;
