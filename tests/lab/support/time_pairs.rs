//! Clocks and sleepers that name a time source, and the pairs of them that
//! can or cannot agree (E9): shared by step 6, which lets the agreeing pairs
//! through, and step 7, which refuses the others.

use std::future::{Future, ready};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use retry_breaker::{Clock, ExecuteError, ManualClock, RetryBreaker, Sleeper, State, TimeSource};
use tokio_util::sync::CancellationToken;

use super::{Fault, Script, run, run_paused};

/// A clock that says it reads `source` and stands still at zero.
pub(crate) struct Reads(pub(crate) TimeSource);

impl Clock for Reads {
    fn now(&self) -> Duration {
        Duration::ZERO
    }

    fn time_source(&self) -> TimeSource {
        self.0
    }
}

/// A sleeper that says it waits on `source`, counts the sleeps asked of it,
/// and moves nothing.
#[derive(Clone)]
pub(crate) struct WaitsOn {
    source: TimeSource,
    pub(crate) asked: Arc<AtomicU32>,
}

impl WaitsOn {
    pub(crate) fn new(source: TimeSource) -> Self {
        WaitsOn {
            source,
            asked: Arc::default(),
        }
    }
}

impl Sleeper for WaitsOn {
    type Sleep = std::future::Ready<()>;

    fn sleep(&self, _: Duration) -> Self::Sleep {
        self.asked.fetch_add(1, Ordering::SeqCst);
        ready(())
    }

    fn time_source(&self) -> TimeSource {
        self.source
    }
}

/// Every source a clock or a sleeper can name, two manual clocks among them.
pub(crate) fn sources() -> [(&'static str, TimeSource); 5] {
    [
        ("unknown", TimeSource::UNKNOWN),
        ("the operating system's", TimeSource::OPERATING_SYSTEM),
        ("tokio's", TimeSource::TOKIO),
        ("manual clock A's", ManualClock::new().time_source()),
        ("manual clock B's", ManualClock::new().time_source()),
    ]
}

/// A named source.
pub(crate) type Named = (&'static str, TimeSource);

/// Every clock's source with every sleeper's, on running and on paused
/// tokio time.
pub(crate) fn pairs() -> Vec<(bool, Named, Named)> {
    let mut pairs = Vec::new();
    for paused in [false, true] {
        for clock in sources() {
            for slept in sources() {
                pairs.push((paused, clock, slept));
            }
        }
    }
    pairs
}

/// Whether a clock on `clock` and a sleeper on `slept` can agree: the same
/// source, one that this crate does not know, or the operating system's and
/// tokio's while tokio's time runs (it is then the operating system's).
pub(crate) fn agree(clock: TimeSource, slept: TimeSource, paused: bool) -> bool {
    let pair = [clock, slept];
    let os_and_tokio =
        pair.contains(&TimeSource::OPERATING_SYSTEM) && pair.contains(&TimeSource::TOKIO);
    clock == slept
        || clock == TimeSource::UNKNOWN
        || slept == TimeSource::UNKNOWN
        || (os_and_tokio && !paused)
}

/// `test` on tokio's running time, or on its paused time; `looped` is what
/// the watchdog says if it never ends.
pub(crate) fn on_time<F>(looped: &'static str, paused: bool, test: F)
where
    F: Future<Output = ()> + Send + 'static,
{
    if paused {
        run_paused(looped, test);
    } else {
        run(looped, test);
    }
}

/// How `paused` reads in a failure message.
pub(crate) fn time_name(paused: bool) -> &'static str {
    if paused {
        "while tokio's time is paused"
    } else {
        "while tokio's time runs"
    }
}

/// One attempt at `script`, through a breaker on `clock` whose circuit is
/// open with its cooldown over: a permit taken would be the probe.
pub(crate) async fn call_on<C: Clock>(
    clock: C,
    sleeper: &impl Sleeper,
    script: &Script,
) -> (Result<u32, ExecuteError<Fault>>, State) {
    let breaker = RetryBreaker::new(1, Duration::ZERO, clock).expect("a valid configuration");
    breaker.try_acquire().expect("closed").failure();
    let result = breaker
        .execute(
            2,
            script.task(),
            |_: &Fault| true,
            |_| Duration::from_secs(1),
            &CancellationToken::new(),
            sleeper,
        )
        .await;
    (result, breaker.state())
}

/// A sleeper this crate knows nothing about, moving `clock`.
pub(crate) struct Custom(pub(crate) ManualClock);

impl Sleeper for Custom {
    type Sleep = std::future::Ready<()>;

    fn sleep(&self, delay: Duration) -> Self::Sleep {
        self.0.advance(delay);
        ready(())
    }
}

/// One call of two attempts whose first fails, with an 11 s backoff, on a
/// breaker that opens at the first failure for 10 s: the second attempt is
/// the probe only if the sleep moved the breaker's clock.
pub(crate) async fn fail_sleep_retry<C: Clock>(
    breaker: &RetryBreaker<C>,
    sleeper: &impl Sleeper,
) -> Result<u32, ExecuteError<Fault>> {
    let script = Script::new([Err(Fault::Timeout), Ok(1)]);
    breaker
        .execute(
            2,
            script.task(),
            |_: &Fault| true,
            |_| Duration::from_secs(11),
            &CancellationToken::new(),
            sleeper,
        )
        .await
}

/// What the call of [`fail_sleep_retry`] on `breaker` and `sleeper` says
/// when it is refused, as the caller reads it.
pub(crate) async fn refusal<C: Clock>(breaker: &RetryBreaker<C>, sleeper: &impl Sleeper) -> String {
    match fail_sleep_retry(breaker, sleeper).await {
        Ok(value) => panic!(
            "TODO(7): E9: a clock and a sleeper that cannot agree must be refused, but the call \
             returned Ok({value})"
        ),
        Err(error) => error.to_string(),
    }
}

pub(crate) fn breaker<C: Clock>(clock: C) -> RetryBreaker<C> {
    RetryBreaker::new(1, Duration::from_secs(10), clock).expect("a valid configuration")
}
