//! A task whose attempts stay in flight until the test lets them finish, so
//! a test can act while an attempt is still running.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use super::fault::Fault;

#[derive(Clone, Default)]
pub struct Gate {
    outcome: Arc<Mutex<Option<Result<u32, Fault>>>>,
    started: Arc<Mutex<u32>>,
}

impl Gate {
    pub fn new() -> Gate {
        super::panics::install();
        Gate::default()
    }

    /// Lets the attempt in flight finish with `outcome`.
    pub fn open(&self, outcome: Result<u32, Fault>) {
        *self.outcome.lock().unwrap() = Some(outcome);
    }

    /// How many attempts have started.
    pub fn started(&self) -> u32 {
        *self.started.lock().unwrap()
    }

    /// The task for `execute`: each attempt waits until the gate is opened,
    /// then takes the outcome, so the next attempt waits again.
    pub fn task(&self) -> impl FnMut() -> Attempt + Send + 'static {
        let gate = self.clone();
        move || {
            *gate.started.lock().unwrap() += 1;
            Attempt {
                outcome: Arc::clone(&gate.outcome),
            }
        }
    }
}

/// One attempt waiting at the gate.
pub struct Attempt {
    outcome: Arc<Mutex<Option<Result<u32, Fault>>>>,
}

impl Future for Attempt {
    type Output = Result<u32, Fault>;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        match self.outcome.lock().unwrap().take() {
            Some(outcome) => Poll::Ready(outcome),
            None => Poll::Pending,
        }
    }
}
