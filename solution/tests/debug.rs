//! `Debug for RetryBreaker` reads the user's clock outside the lock.

use std::sync::mpsc;
use std::sync::{Arc, OnceLock, Weak};
use std::thread;
use std::time::Duration;

use retry_breaker_solution::{Clock, RetryBreaker};

/// A clock that, when read, checks from another thread that the breaker's
/// lock is free (a read of the generation takes it).
#[derive(Clone, Default)]
struct Inquisitive {
    breaker: Arc<OnceLock<Weak<RetryBreaker<Inquisitive>>>>,
}

impl Clock for Inquisitive {
    fn now(&self) -> Duration {
        if let Some(breaker) = self.breaker.get().and_then(Weak::upgrade) {
            let (done, finished) = mpsc::channel();
            thread::spawn(move || {
                let _ = breaker.generation();
                let _ = done.send(());
            });
            // Immediate when the lock is free; the wait runs out only when
            // the clock was read under the lock.
            finished
                .recv_timeout(Duration::from_secs(5))
                .expect("the clock was read while the breaker's lock was held");
        }
        Duration::ZERO
    }
}

#[test]
fn debug_reads_the_clock_outside_the_lock_and_says_it_is_not_exhaustive() {
    let clock = Inquisitive::default();
    let breaker = Arc::new(RetryBreaker::new(1, Duration::from_secs(1), clock.clone()).unwrap());
    // Recording reads the clock under the lock, as it must; only then does
    // the clock start checking.
    breaker.try_acquire().unwrap().failure();
    clock.breaker.set(Arc::downgrade(&breaker)).ok();

    let shown = format!("{breaker:?}");
    assert!(
        shown.starts_with("RetryBreaker { state: Open { remaining: 1s }"),
        "{shown}"
    );
    assert!(shown.ends_with(", .. }"), "{shown}");
}

#[test]
fn debug_shows_the_cooldown_left_at_the_clock_reading() {
    use retry_breaker_solution::ManualClock;
    let clock = ManualClock::new();
    let breaker = RetryBreaker::new(1, Duration::from_secs(10), clock.clone()).expect("valid");
    breaker.try_acquire().expect("closed").failure();
    clock.advance(Duration::from_secs(4));
    let shown = format!("{breaker:?}");
    assert!(
        shown.contains("Open { remaining: 6s }"),
        "4 s into a 10 s cooldown: {shown}"
    );
}

#[test]
fn a_breaker_reports_the_window_it_was_built_with() {
    use retry_breaker_solution::{ManualClock, WindowConfig};
    let window = WindowConfig::new(8, 4, 0.5);
    let breaker = RetryBreaker::builder()
        .window(window)
        .build(ManualClock::new())
        .expect("valid settings");
    assert_eq!(breaker.window(), Some(window));
    let plain = RetryBreaker::new(1, Duration::from_secs(1), ManualClock::new()).expect("valid");
    assert_eq!(plain.window(), None);
}
