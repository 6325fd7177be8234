//! A dependency whose outcomes are written in advance.

use std::collections::VecDeque;
use std::future::{Ready, ready};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use super::fault::Fault;
use super::timeline::Timeline;

/// Outcomes for successive attempts, shared by every clone; counts the
/// attempts that actually reached the dependency.
#[derive(Clone)]
pub struct Script {
    outcomes: Arc<Mutex<VecDeque<Result<u32, Fault>>>>,
    calls: Arc<AtomicU32>,
}

impl Script {
    pub fn new(outcomes: impl IntoIterator<Item = Result<u32, Fault>>) -> Script {
        super::panics::install();
        Script {
            outcomes: Arc::new(Mutex::new(outcomes.into_iter().collect())),
            calls: Arc::default(),
        }
    }

    /// How many attempts reached the dependency.
    pub fn calls(&self) -> u32 {
        self.calls.load(Ordering::SeqCst)
    }

    /// Exactly `n` attempts reached the dependency; `todo` says what makes
    /// it so, as the message's first words ("TODO(6)", "steps 1-8").
    #[track_caller]
    pub fn assert_calls(&self, n: u32, todo: &str) {
        assert_eq!(
            self.calls(),
            n,
            "{todo}: the dependency must have been called exactly {n} time(s)"
        );
    }

    /// The task for `execute`. Running past the script is a test failure
    /// that says so.
    pub fn task(&self) -> impl FnMut() -> Ready<Result<u32, Fault>> + Send + 'static {
        let script = self.clone();
        move || ready(script.next())
    }

    /// Like [`task`](Script::task), writing each attempt to `timeline` as `who`.
    pub fn traced(
        &self,
        timeline: &Timeline,
        who: &'static str,
    ) -> impl FnMut() -> Ready<Result<u32, Fault>> + Send + 'static {
        let script = self.clone();
        let timeline = timeline.clone();
        move || {
            let outcome = script.next();
            let shown = match &outcome {
                Ok(value) => format!("Ok({value})"),
                Err(fault) => format!("Err({fault})"),
            };
            timeline.log(who, format!("attempt {} -> {shown}", script.calls()));
            ready(outcome)
        }
    }

    fn next(&self) -> Result<u32, Fault> {
        let call = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        self.outcomes
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_else(|| {
                panic!(
                    "the task was called {call} times, more often than the test scripted: \
                 execute made an attempt it should not have (retrying after the last attempt, \
                 after a non-retryable error, or after a rejection?)"
                )
            })
    }
}
