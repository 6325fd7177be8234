//! One time source (E9): the retry loop sleeps through the sleeper, the
//! breaker reads its clock, and a pair that cannot agree would leave every
//! cooldown running forever. `execute` refuses such a pair before anything
//! happens: no task, no permit, no sleep, nothing recorded.

use std::future::{Future, ready};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use retry_breaker::{
    Clock, ManualClock, RetryBreaker, Sleeper, State, SystemClock, TimeSource, TokioClock,
    TokioSleeper,
};
use tokio_util::sync::CancellationToken;

use crate::support::{Ending, Fault, Script, run, run_paused};

const LOOPED: &str = "a call with a mismatched clock and sleeper did not end: TODO(6)";

/// A clock that says it reads `source` and stands still at zero.
struct Reads(TimeSource);

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
struct WaitsOn {
    source: TimeSource,
    asked: Arc<AtomicU32>,
}

impl WaitsOn {
    fn new(source: TimeSource) -> Self {
        WaitsOn {
            source,
            asked: Arc::default(),
        }
    }
}

impl Sleeper for WaitsOn {
    fn sleep(&self, _: Duration) -> impl Future<Output = ()> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        ready(())
    }

    fn time_source(&self) -> TimeSource {
        self.source
    }
}

/// Every source a clock or a sleeper can name, two manual clocks among them.
fn sources() -> [(&'static str, TimeSource); 5] {
    [
        ("unknown", TimeSource::UNKNOWN),
        ("the operating system's", TimeSource::OPERATING_SYSTEM),
        ("tokio's", TimeSource::TOKIO),
        ("manual clock A's", ManualClock::new().time_source()),
        ("manual clock B's", ManualClock::new().time_source()),
    ]
}

/// A named source.
type Named = (&'static str, TimeSource);

/// Every clock's source with every sleeper's, on running and on paused
/// tokio time.
fn pairs() -> Vec<(bool, Named, Named)> {
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
fn agree(clock: TimeSource, slept: TimeSource, paused: bool) -> bool {
    let pair = [clock, slept];
    let os_and_tokio =
        pair.contains(&TimeSource::OPERATING_SYSTEM) && pair.contains(&TimeSource::TOKIO);
    clock == slept
        || clock == TimeSource::UNKNOWN
        || slept == TimeSource::UNKNOWN
        || (os_and_tokio && !paused)
}

/// `test` on tokio's running time, or on its paused time.
fn on_time<F>(paused: bool, test: F)
where
    F: Future<Output = ()> + Send + 'static,
{
    if paused {
        run_paused(LOOPED, test);
    } else {
        run(LOOPED, test);
    }
}

fn time_name(paused: bool) -> &'static str {
    if paused {
        "while tokio's time is paused"
    } else {
        "while tokio's time runs"
    }
}

/// One attempt at `script`, through a breaker on `clock` whose circuit is
/// open with its cooldown over: a permit taken would be the probe.
async fn call_on<C: Clock>(
    clock: C,
    sleeper: &impl Sleeper,
    script: &Script,
) -> (Result<u32, retry_breaker::ExecuteError<Fault>>, State) {
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

/// A control: the time-source check is provided code that `execute` runs
/// before its first attempt (`time_source.rs`), so this passes before step 6;
/// it guards a loop that would take a permit or call the task first.
#[test]
fn e9_every_pair_of_sources_that_cannot_agree_is_refused_before_anything_happens() {
    for (paused, clock, slept) in pairs() {
        if !agree(clock.1, slept.1, paused) {
            refused_before_anything(paused, clock, slept);
        }
    }
}

fn refused_before_anything(paused: bool, (clock_name, clock): Named, (sleeper_name, slept): Named) {
    on_time(paused, async move {
        let pair = format!(
            "a clock on {clock_name} time and a sleeper on {sleeper_name}, {}",
            time_name(paused)
        );
        let script = Script::new([Ok(1)]);
        let sleeper = WaitsOn::new(slept);
        let (result, state) = call_on(Reads(clock), &sleeper, &script).await;
        assert_eq!(
            result.ending(),
            "TimeMismatch",
            "E9: {pair} cannot agree, so `execute` refuses them; got {result:?}"
        );
        assert_eq!(
            script.calls(),
            0,
            "E9: {pair} are refused before the task is called"
        );
        assert_eq!(
            state,
            State::Open {
                remaining: Duration::ZERO
            },
            "E9: {pair} are refused before the breaker is asked: no probe was taken"
        );
        assert_eq!(
            sleeper.asked.load(Ordering::SeqCst),
            0,
            "E9: {pair} are refused before any sleep"
        );
        let Err(retry_breaker::ExecuteError::TimeMismatch {
            clock: read,
            sleeper: waited,
            ..
        }) = result
        else {
            unreachable!("checked above")
        };
        assert_eq!(read, clock, "E9: the error names the clock's source");
        assert_eq!(waited, slept, "E9: the error names the sleeper's source");
    });
}

#[test]
fn e9_every_pair_that_can_agree_is_let_through() {
    for (paused, clock, slept) in pairs() {
        if agree(clock.1, slept.1, paused) {
            let_through(paused, clock, slept);
        }
    }
}

fn let_through(paused: bool, (clock_name, clock): Named, (sleeper_name, slept): Named) {
    on_time(paused, async move {
        let script = Script::new([Ok(1)]);
        let (result, state) = call_on(Reads(clock), &WaitsOn::new(slept), &script).await;
        assert_eq!(
            result.ending(),
            "Ok",
            "TODO(6): a clock on {clock_name} time and a sleeper on {sleeper_name} agree \
                     {} (the same source, one this crate does not know, or the operating \
                     system's and tokio's while tokio's time runs), so the call goes ahead (E9); \
                     got {result:?}",
            time_name(paused)
        );
        assert_eq!(
            state,
            State::Closed { failures: 0 },
            "TODO(6): the call's probe succeeded and closed the circuit (E9)"
        );
    });
}

/// A sleeper this crate knows nothing about, moving `clock`.
struct Custom(ManualClock);

impl Sleeper for Custom {
    fn sleep(&self, delay: Duration) -> impl Future<Output = ()> {
        self.0.advance(delay);
        ready(())
    }
}

/// One call of two attempts whose first fails, with an 11 s backoff, on a
/// breaker that opens at the first failure for 10 s: the second attempt is
/// the probe only if the sleep moved the breaker's clock.
async fn fail_sleep_retry<C: Clock>(
    breaker: &RetryBreaker<C>,
    sleeper: &impl Sleeper,
) -> Result<u32, retry_breaker::ExecuteError<Fault>> {
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

fn breaker<C: Clock>(clock: C) -> RetryBreaker<C> {
    RetryBreaker::new(1, Duration::from_secs(10), clock).expect("a valid configuration")
}

#[test]
fn e9_the_sleeper_of_the_breakers_own_manual_clock_moves_it() {
    run(LOOPED, async {
        let clock = ManualClock::new();
        let breaker = breaker(clock.clone());
        let sleeper = breaker.clock().sleeper();
        let result = fail_sleep_retry(&breaker, &sleeper).await;
        assert_eq!(
            result.ok(),
            Some(1),
            "TODO(6): the sleep moved the breaker's own clock past the cooldown, so attempt 2 \
             is the probe and succeeds (E9)"
        );
        assert_eq!(
            clock.now(),
            Duration::from_secs(11),
            "E9: the one sleep moved the clock"
        );
    });
}

/// A control: refusing a pair is the provided check's work, done before the
/// first attempt, so this passes before step 6.
#[test]
fn e9_a_manual_sleeper_on_another_manual_clock_is_refused_with_the_way_out() {
    run(LOOPED, async {
        let breaker = breaker(ManualClock::new());
        let elsewhere = ManualClock::new().sleeper();
        let result = fail_sleep_retry(&breaker, &elsewhere).await;
        let message = result.as_ref().map_err(ToString::to_string).unwrap_err();
        assert!(
            message.contains("do not move the breaker's clock"),
            "E9: the refusal says what is wrong: {message}"
        );
        assert!(
            message.contains("ManualClock::sleeper"),
            "E9: the refusal says what to do: {message}"
        );
        assert_eq!(
            breaker.state(),
            State::Closed { failures: 0 },
            "E9: refused before any attempt"
        );
    });
}

/// A control: refusing a pair is the provided check's work, done before the
/// first attempt, so this passes before step 6.
#[test]
fn e9_the_tokio_sleeper_with_the_system_clock_is_refused_while_tokio_time_is_paused() {
    run_paused(LOOPED, async {
        // Under paused time this pair would leave the circuit OPEN with
        // almost all of its cooldown left after an 11 s sleep.
        let breaker = breaker(SystemClock::new());
        let result = fail_sleep_retry(&breaker, &TokioSleeper).await;
        let message = result.as_ref().map_err(ToString::to_string).unwrap_err();
        assert!(
            message.contains("the operating system's clock"),
            "E9: the refusal names the clock's time: {message}"
        );
        assert!(
            message.contains("paused") && message.contains("TokioClock"),
            "E9: the refusal says why and what to do: {message}"
        );
    });
}

/// A control: refusing a pair is the provided check's work, done before the
/// first attempt, so this passes before step 6.
#[test]
fn e9_an_os_time_sleeper_with_the_tokio_clock_is_refused_while_tokio_time_is_paused() {
    run_paused(LOOPED, async {
        let breaker = breaker(TokioClock::new());
        let sleeper = WaitsOn::new(TimeSource::OPERATING_SYSTEM);
        let result = fail_sleep_retry(&breaker, &sleeper).await;
        let message = result.as_ref().map_err(ToString::to_string).unwrap_err();
        assert!(
            message.contains("paused") && message.contains("TokioSleeper"),
            "E9: the refusal says why and what to do: {message}"
        );
    });
}

/// A control: refusing a pair is the provided check's work, done before the
/// first attempt, so this passes before step 6.
#[test]
fn e9_the_tokio_sleeper_with_a_manual_clock_is_refused_with_the_way_out() {
    run(LOOPED, async {
        let breaker = breaker(ManualClock::new());
        let result = fail_sleep_retry(&breaker, &TokioSleeper).await;
        let message = result.as_ref().map_err(ToString::to_string).unwrap_err();
        assert!(
            message.contains("TokioClock") && !message.contains("paused"),
            "E9: the refusal says what to do, whatever tokio's time does: {message}"
        );
    });
}

#[test]
fn e9_the_tokio_sleeper_with_the_system_clock_works_while_tokio_time_runs() {
    run(LOOPED, async {
        // Running, tokio's time is the operating system's: two production
        // types of this crate that agree.
        let breaker = breaker(SystemClock::new());
        let script = Script::new([Ok(1)]);
        let result = breaker
            .execute(
                2,
                script.task(),
                |_: &Fault| true,
                |_| Duration::from_secs(1),
                &CancellationToken::new(),
                &TokioSleeper,
            )
            .await;
        assert_eq!(
            result.ok(),
            Some(1),
            "TODO(6): `SystemClock` and `TokioSleeper` agree while tokio's time runs, so the \
             call goes ahead (E9)"
        );
    });
}

/// A control: the clock and the sleeper are provided, so this passes before
/// step 6; it pins down the pair that the retry loop's tests rely on.
#[test]
fn e9_under_paused_tokio_time_the_tokio_sleeper_moves_the_tokio_clock() {
    run_paused(LOOPED, async {
        let breaker = breaker(TokioClock::new());
        breaker.try_acquire().expect("closed").failure();
        assert_eq!(
            breaker.state(),
            State::Open {
                remaining: Duration::from_secs(10)
            },
            "E9: one failure opens the circuit for its 10 s cooldown"
        );
        TokioSleeper.sleep(Duration::from_secs(11)).await;
        assert_eq!(
            breaker.state(),
            State::Open {
                remaining: Duration::ZERO
            },
            "E9: an 11 s sleep on paused tokio time ends a 10 s cooldown on the tokio clock"
        );
        let probe = breaker
            .try_acquire()
            .expect("E9: the cooldown is over on the tokio clock, so this is the probe");
        assert_eq!(
            breaker.state(),
            State::HalfOpen {
                probe_in_flight: true
            },
            "E9: the probe is out"
        );
        probe.success();
        assert_eq!(
            breaker.state(),
            State::Closed { failures: 0 },
            "E9: the good probe closes the circuit"
        );
    });
}

#[test]
fn e9_under_paused_tokio_time_a_retry_after_the_cooldown_is_the_probe() {
    run_paused(LOOPED, async {
        let breaker = breaker(TokioClock::new());
        let result = fail_sleep_retry(&breaker, &TokioSleeper).await;
        assert_eq!(
            result.ok(),
            Some(1),
            "TODO(6): the tokio sleeper moved the tokio clock, so attempt 2 is the probe (E9)"
        );
        assert_eq!(
            breaker.state(),
            State::Closed { failures: 0 },
            "TODO(6): the probe succeeded and closed the circuit (E9)"
        );
    });
}

#[test]
fn e9_a_sleeper_of_unknown_source_is_trusted() {
    run(LOOPED, async {
        let clock = ManualClock::new();
        let breaker = breaker(clock.clone());
        let result = fail_sleep_retry(&breaker, &Custom(clock)).await;
        assert_eq!(
            result.ok(),
            Some(1),
            "TODO(6): a sleeper this crate does not know is not checked, and this one moves the \
             breaker's clock (E9)"
        );
    });
}

#[test]
fn e9_shared_and_borrowed_clocks_read_and_pair_as_the_clock_itself() {
    run(LOOPED, async {
        let clock = ManualClock::new();
        let shared = Arc::new(clock.clone());
        let on_shared = breaker(Arc::clone(&shared));
        let result = fail_sleep_retry(&on_shared, &clock.sleeper()).await;
        assert_eq!(
            result.ok(),
            Some(1),
            "TODO(6): an `Arc` of the clock pairs with the clock's sleeper (E9)"
        );
        let on_borrowed = breaker(&clock);
        let result = fail_sleep_retry(&on_borrowed, &clock.sleeper()).await;
        assert_eq!(
            result.ok(),
            Some(1),
            "TODO(6): a borrowed clock pairs with the clock's sleeper (E9)"
        );
        assert_eq!(
            Clock::now(&&clock),
            Duration::from_secs(22),
            "E9: a borrowed clock reads the clock's time"
        );
        assert_eq!(
            shared.now(),
            Duration::from_secs(22),
            "E9: a shared clock reads the clock's time"
        );
        assert_eq!(
            Clock::time_source(&&clock),
            shared.time_source(),
            "E9: a borrowed and a shared clock name the same source"
        );
    });
}
