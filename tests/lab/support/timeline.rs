//! A readable record of a scenario, for `insta` snapshots: every line is
//! stamped with the manual clock's time, so a wrong implementation shows up
//! as a diff of two timelines.

use std::fmt::Display;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use retry_breaker::{Clock, ManualClock, Sleeper, Transition};

/// Lines of a timeline a failing test shows at most: the end of the story
/// is where it went wrong, and `just test N` shows each failure in a few
/// lines.
pub const SHOWN: usize = 8;

#[derive(Clone)]
pub struct Timeline {
    clock: ManualClock,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Timeline {
    pub fn new(clock: ManualClock) -> Timeline {
        Timeline {
            clock,
            lines: Arc::default(),
        }
    }

    /// Writes `what` happened to `who`, now.
    pub fn log(&self, who: &str, what: impl Display) {
        self.push(self.clock.now(), who, what);
    }

    /// Writes a transition at the time it happened.
    pub fn transition(&self, t: &Transition) {
        self.push(
            t.at,
            "breaker",
            format!("{} -> {} ({})", t.from, t.to, t.generation),
        );
    }

    /// A sleeper that sleeps on `inner` and writes each sleep down as `who`.
    pub fn sleeper<S: Sleeper + Sync>(&self, inner: S, who: &'static str) -> TracedSleeper<S> {
        TracedSleeper {
            inner,
            who,
            timeline: self.clone(),
        }
    }

    pub fn render(&self) -> String {
        self.lines.lock().unwrap().join("\n")
    }

    /// What a failing test shows under its message: a blank line, then the
    /// timeline's last [`SHOWN`] lines; `None` for an empty timeline, or one
    /// locked by the write that panicked.
    pub fn failure_note(&self) -> Option<String> {
        let lines = self.lines.try_lock().ok()?;
        let shown = &lines[lines.len().saturating_sub(SHOWN)..];
        if shown.is_empty() {
            return None;
        }
        let which = if lines.len() > shown.len() {
            format!("the last {} of {} lines", shown.len(), lines.len())
        } else {
            "every line".to_owned()
        };
        let mut note = format!("\n  the breaker's timeline in this test ({which}, manual clock):");
        for line in shown {
            note.push_str("\n    ");
            note.push_str(line);
        }
        Some(note)
    }

    fn push(&self, at: Duration, who: &str, what: impl Display) {
        let stamp = format!("t={}ms", at.as_millis());
        self.lines
            .lock()
            .unwrap()
            .push(format!("{stamp:<8} {who:<8} {what}"));
    }
}

pub struct TracedSleeper<S> {
    inner: S,
    who: &'static str,
    timeline: Timeline,
}

impl<S: Sleeper + Sync> Sleeper for TracedSleeper<S> {
    type Sleep = S::Sleep;

    fn sleep(&self, delay: Duration) -> Self::Sleep {
        // Written down when asked for, as every test sleeper does (E7).
        self.timeline
            .log(self.who, format!("sleeps {}ms", delay.as_millis()));
        self.inner.sleep(delay)
    }
}
