//! The node's exchange with the store, run beside the calls on a thread the
//! node's application owns through a [`SyncLoop`], so that no call ever
//! waits on the store (F1) and an async application never blocks one of
//! its tasks on it.

use std::panic::resume_unwind;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use retry_breaker_solution::Clock;

use crate::node::FleetNode;
use crate::store::FleetStore;

/// A thread that syncs one node with its store every period, until the loop
/// is stopped or dropped. Made by [`FleetNode::keep_in_sync`].
///
/// Stopping wakes the thread at once and waits for the exchange it may be
/// in, which ends within the store's bound. A panic on the thread (in the
/// store, say) is not swallowed: it reaches whoever stops the loop.
#[derive(Debug)]
pub struct SyncLoop<S> {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<S>>,
}

impl<S: FleetStore + Send + 'static> SyncLoop<S> {
    pub(crate) fn start<C>(
        node: Arc<FleetNode<C>>,
        store: S,
        period: Duration,
    ) -> std::io::Result<SyncLoop<S>>
    where
        C: Clock + Send + Sync + 'static,
    {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name(format!("fleet-sync-{}", node.id()))
            .spawn(move || {
                while !stopped.load(Ordering::SeqCst) {
                    node.sync_blocking(&store);
                    // Woken early by `stop`; a spurious wake only syncs sooner.
                    std::thread::park_timeout(period);
                }
                store
            })?;
        Ok(SyncLoop {
            stop,
            thread: Some(thread),
        })
    }

    /// Stops the loop and hands the store back, once the exchange under way,
    /// if any, is over.
    ///
    /// # Panics
    ///
    /// With the thread's own panic, if it panicked.
    pub fn stop(mut self) -> S {
        self.stop.store(true, Ordering::SeqCst);
        let Some(thread) = self.thread.take() else {
            unreachable!("only drop takes the thread, and stop takes self")
        };
        thread.thread().unpark();
        thread
            .join()
            .unwrap_or_else(|payload| resume_unwind(payload))
    }
}

impl<S> Drop for SyncLoop<S> {
    fn drop(&mut self) {
        let Some(thread) = self.thread.take() else {
            return;
        };
        self.stop.store(true, Ordering::SeqCst);
        thread.thread().unpark();
        if let Err(payload) = thread.join() {
            // Never a second panic while one unwinds: that would abort.
            if !std::thread::panicking() {
                resume_unwind(payload);
            }
        }
    }
}
