//! Stepping a future by hand, to stop it at an exact point (mid attempt,
//! mid sleep) without any real time or scheduler involved.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

/// Polls `future` once. Nothing here wakes it: the test decides when to poll
/// again.
pub fn poll_once<F: Future + ?Sized>(future: Pin<&mut F>) -> Poll<F::Output> {
    super::panics::install();
    future.poll(&mut Context::from_waker(Waker::noop()))
}
