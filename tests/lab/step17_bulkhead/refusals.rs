//! A full bulkhead is a refusal like an open circuit's (H5): the call ends
//! at once, with no retry and no spin, carrying the failure before it
//! (E3, E10). So these pass once the bulkhead counts its slots (TODO(17))
//! and refusals end the call (TODO(7)).

use std::future::{Future, pending, ready};
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use retry_breaker::{
    ExecuteError, ManualClock, OwnedPermit, Rejected, RetryBreaker, Sleeper, State,
};
use tokio_util::sync::CancellationToken;

use crate::support::{Ending, Fault, Script, linear, ms, poll_once, retryable, run};

const LOOPED: &str = "a call refused by a full bulkhead did not end: TODO(7)";

/// Fifty callers at once against a dependency that never answers, on a
/// breaker at threshold 3: how many reach the dependency, and how the others
/// end.
fn burst(limit: Option<u32>) -> (u32, Vec<String>, RetryBreaker<ManualClock>) {
    let clock = ManualClock::new();
    let mut settings = RetryBreaker::builder().threshold(3).cooldown(ms(100));
    if let Some(limit) = limit {
        settings = settings.max_in_flight(limit);
    }
    let breaker = settings
        .build(clock.clone())
        .expect("a valid configuration");
    let sleeper = clock.sleeper();
    let cancel = CancellationToken::new();
    let reached = AtomicU32::new(0);
    let hang = || {
        reached.fetch_add(1, Ordering::SeqCst);
        pending::<Result<u32, Fault>>()
    };
    let mut waiting: Vec<Pin<Box<dyn Future<Output = _>>>> = Vec::new();
    let mut ended = Vec::new();
    for _ in 0..50 {
        let mut call = Box::pin(breaker.execute(3, hang, retryable, linear, &cancel, &sleeper));
        match poll_once(call.as_mut()) {
            Poll::Pending => waiting.push(call),
            Poll::Ready(result) => ended.push(format!("{:?}", result.map_err(|e| e.to_string()))),
        }
    }
    let in_flight = breaker.in_flight();
    // The callers give up: their attempts are dropped, unreported.
    drop(waiting);
    let reached = reached.load(Ordering::SeqCst);
    assert_eq!(
        in_flight,
        limit.map_or(0, |_| reached),
        "TODO(17): H1: one slot per hanging attempt"
    );
    (reached, ended, breaker)
}

#[test]
fn h1_h5_fifty_callers_and_a_dead_dependency_with_and_without_a_bulkhead() {
    run(LOOPED, async {
        let (reached, ended, breaker) = burst(None);
        assert_eq!(
            (reached, ended.len()),
            (50, 0),
            "without a bulkhead all 50 attempts reach the dependency before any failure comes \
             back: a breaker at threshold 3 has no evidence yet"
        );
        assert_eq!(breaker.state(), State::Closed { failures: 0 });

        let (reached, ended, breaker) = burst(Some(5));
        assert_eq!(
            reached, 5,
            "TODO(17): H1: with room for 5, only 5 attempts reach the dead dependency"
        );
        let full = format!(
            "{:?}",
            Err::<u32, _>(
                ExecuteError::<Fault>::Rejected {
                    attempt: 1,
                    rejection: Rejected::Full { limit: 5 },
                    source: None,
                }
                .to_string()
            )
        );
        assert_eq!(
            ended,
            vec![full; 45],
            "TODO(7): the 45 others end at once, refused on attempt 1 by the full bulkhead, with \
             no retry (H5, E3)"
        );
        assert_eq!(
            (breaker.state(), breaker.in_flight()),
            (State::Closed { failures: 0 }, 0),
            "TODO(17): H2: the 45 refusals counted nothing, and the 5 dropped attempts freed their slots \
             (H3)"
        );
    });
}

/// A sleeper that, asked to wait, fills the breaker's only slot instead: a
/// burst arriving while a call backs off.
struct Crowd {
    breaker: Arc<RetryBreaker<ManualClock>>,
    arrived: Mutex<Vec<OwnedPermit<ManualClock>>>,
}

impl Sleeper for Crowd {
    type Sleep = std::future::Ready<()>;

    fn sleep(&self, _: Duration) -> Self::Sleep {
        let permit = self
            .breaker
            .try_acquire_owned()
            .expect("room while the call backs off");
        self.arrived.lock().unwrap().push(permit);
        ready(())
    }
}

#[test]
fn h5_e10_a_retry_the_bulkhead_refuses_ends_the_call_with_the_failure_before_it() {
    run(LOOPED, async {
        let breaker = Arc::new(
            RetryBreaker::builder()
                .threshold(3)
                .max_in_flight(1)
                .build(ManualClock::new())
                .expect("a valid configuration"),
        );
        let crowd = Crowd {
            breaker: Arc::clone(&breaker),
            arrived: Mutex::default(),
        };
        let script = Script::new([Err(Fault::Timeout), Ok(1)]);
        let result = breaker
            .execute(
                3,
                script.task(),
                retryable,
                linear,
                &CancellationToken::new(),
                &crowd,
            )
            .await;
        assert_eq!(
            (result.ending(), result.attempt(), result.rejection()),
            ("Rejected", Some(2), Some(Rejected::Full { limit: 1 })),
            "TODO(7): attempt 2 found the only slot taken, and the call ended there (H5, E3); got \
             {result:?}"
        );
        assert_eq!(
            result.cause(),
            Some(&Fault::Timeout),
            "TODO(7): the refusal carries attempt 1's timeout (E10)"
        );
        script.assert_calls(1, "TODO(7)");
        assert_eq!(
            breaker.state(),
            State::Closed { failures: 1 },
            "TODO(17): H2: attempt 1's failure counts, the refusal does not"
        );
    });
}
