// PROVIDED FILE: a grade always uses the kit's own copy of this file; your code goes in the TODOs.
//! Sleepers whose sleeps can cross threads, for code generic over them.
//!
//! [`Sleeper::sleep`] returns an `impl Future` that need not be `Send`, so
//! that a sleeper for a single-threaded executor fits. With a concrete
//! sleeper the compiler sees what its sleep really is, and `execute` with
//! one of this crate's sleepers can be spawned. Code generic over `S:
//! Sleeper` cannot see that: stable Rust has no way yet to write "and
//! `S::sleep`'s future is `Send`" as a bound. So such code bounds its
//! sleeper on [`SendSleeper`] instead and hands `execute` the
//! [`sending`](SendSleeper::sending) form of it, whose sleeps say `Send` in
//! their type.

use std::future::Future;
use std::time::Duration;

use crate::sleeper::{ManualSleeper, Sleeper};
use crate::time_source::TimeSource;

/// A [`Sleeper`] whose sleeps can cross threads, as the future of a spawned
/// task or of a `tower` service must be able to.
///
/// The crate's own sleepers are such sleepers. For one of your own,
/// implement this trait by returning the same wait as [`Sleeper::sleep`].
///
/// In code generic over the sleeper, pass `&sleeper.sending()` to
/// `execute`, and the call's future is `Send` whenever its task's is:
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use retry_breaker_starter::{backoff, ExecuteError, RetryBreaker, SendSleeper, TokioClock};
/// use tokio_util::sync::CancellationToken;
///
/// async fn charge() -> Result<u32, String> {
///     Ok(7)
/// }
///
/// fn spawn_charge<S: SendSleeper>(
///     breaker: Arc<RetryBreaker<TokioClock>>,
///     sleeper: S,
/// ) -> tokio::task::JoinHandle<Result<u32, ExecuteError<String>>> {
///     tokio::spawn(async move {
///         let sleeper = sleeper.sending();
///         let cancel = CancellationToken::new();
///         let backoff = backoff::constant(Duration::from_millis(100));
///         breaker.execute(3, charge, |_: &String| true, backoff, &cancel, &sleeper).await
///     })
/// }
/// ```
///
/// With `&sleeper` itself, the same function does not compile: the
/// compiler cannot prove that the generic sleeper's sleeps are `Send`.
///
/// ```compile_fail,E0277
/// # use std::sync::Arc;
/// # use std::time::Duration;
/// # use retry_breaker_starter::{backoff, ExecuteError, RetryBreaker, SendSleeper, TokioClock};
/// # use tokio_util::sync::CancellationToken;
/// # async fn charge() -> Result<u32, String> { Ok(7) }
/// fn spawn_charge<S: SendSleeper>(
///     breaker: Arc<RetryBreaker<TokioClock>>,
///     sleeper: S,
/// ) -> tokio::task::JoinHandle<Result<u32, ExecuteError<String>>> {
///     tokio::spawn(async move {
///         let cancel = CancellationToken::new();
///         let backoff = backoff::constant(Duration::from_millis(100));
///         breaker.execute(3, charge, |_: &String| true, backoff, &cancel, &sleeper).await
///     })
/// }
/// ```
pub trait SendSleeper: Sleeper + Clone + Send + Sync + 'static {
    /// The same wait as [`Sleeper::sleep`], promised `Send`.
    fn sleep_send(&self, delay: Duration) -> impl Future<Output = ()> + Send;

    /// This sleeper, as one whose sleeps are `Send` in their type: what
    /// code generic over the sleeper passes to `execute`.
    fn sending(&self) -> Sending<'_, Self> {
        Sending(self)
    }
}

/// A [`SendSleeper`] seen as a [`Sleeper`] whose sleeps say they are `Send`;
/// see [`SendSleeper::sending`].
#[derive(Debug, Clone, Copy)]
pub struct Sending<'a, S>(&'a S);

impl<S: SendSleeper> Sleeper for Sending<'_, S> {
    #[allow(
        refining_impl_trait,
        reason = "the promise of `Send` is the point of this sleeper"
    )]
    fn sleep(&self, delay: Duration) -> impl Future<Output = ()> + Send {
        self.0.sleep_send(delay)
    }

    fn time_source(&self) -> TimeSource {
        self.0.time_source()
    }
}

impl SendSleeper for ManualSleeper {
    fn sleep_send(&self, delay: Duration) -> impl Future<Output = ()> + Send {
        self.sleep(delay)
    }
}

#[cfg(feature = "tokio")]
impl SendSleeper for crate::sleeper::TokioSleeper {
    fn sleep_send(&self, delay: Duration) -> impl Future<Output = ()> + Send {
        self.sleep(delay)
    }
}
