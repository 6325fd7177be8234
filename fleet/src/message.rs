//! What the nodes tell each other: a trip (open for the rest of this
//! cooldown), a close (the fleet's probe succeeded), or, when the fleet
//! adds its failures up, a node's own run of failures.
//!
//! Messages travel as one line of text, so the same bytes go through the
//! in-memory store and through Redis, and a malformed one read back from a
//! store is a [`MessageError`], never a panic.

use std::fmt;
use std::time::Duration;

use retry_breaker_solution::fleet::{NodeId, Stamp};

/// The wire format's version, first on every line, so that a future format
/// is refused clearly rather than misread.
const VERSION: &str = "fleet1";

/// What a message says happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Event {
    /// The sender's breaker opened, or the fleet's probe failed: stay open
    /// for `cooldown_left`, counted from when the message is read.
    ///
    /// The rest of the cooldown travels rather than its end, because nodes
    /// share no clock; a message delayed on the way keeps the fleet open a
    /// little longer than the sender, never shorter.
    Trip {
        /// How much of the cooldown was left when the message was written.
        cooldown_left: Duration,
    },
    /// The fleet's probe succeeded: the dependency answers again.
    Close,
    /// The sender's own run of consecutive failures since the fleet's state
    /// in the stamp's epoch, for a fleet that adds its nodes' runs up
    /// ([`FleetSettings::with_shared_count`](crate::FleetSettings::with_shared_count), F5).
    ///
    /// It changes no state and is never stored: it is news about the
    /// current epoch only. `report` numbers the sender's reports, so the
    /// newest wins in whatever order they arrive.
    Failures {
        /// The sender's consecutive failures (0 after a success).
        run: u32,
        /// The sender's report number, growing with each report.
        report: u64,
        /// How much longer the run is news: one cooldown after its last
        /// failure, less the time that has passed since, counted from when
        /// the message is read (as a trip's `cooldown_left` is).
        fresh_for: Duration,
    },
}

/// One fleet message about the breaker for `key`.
///
/// ```
/// use std::time::Duration;
/// use retry_breaker_fleet::{Event, FleetMessage, NodeId, Stamp};
///
/// let trip = FleetMessage {
///     key: "payments".into(),
///     stamp: Stamp::new(3, NodeId(1)),
///     event: Event::Trip { cooldown_left: Duration::from_secs(10) },
/// };
/// let line = trip.encode();
/// assert_eq!(line, "fleet1 trip payments 3 1 10000");
/// assert_eq!(FleetMessage::decode(&line)?, trip);
/// assert!(FleetMessage::decode("fleet1 trip payments three 1 10000").is_err());
/// # Ok::<(), retry_breaker_fleet::MessageError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FleetMessage {
    /// The dependency the breaker guards (one fleet breaker per key).
    pub key: String,
    /// Where the message stands in the fleet's history; its `node` is the
    /// sender.
    pub stamp: Stamp,
    /// What happened.
    pub event: Event,
}

impl FleetMessage {
    /// The node that sent the message.
    #[must_use]
    pub fn sender(&self) -> NodeId {
        NodeId(self.stamp.node)
    }

    /// The message as one line: `fleet1 trip KEY EPOCH NODE MILLIS`,
    /// `fleet1 close KEY EPOCH NODE` or
    /// `fleet1 failures KEY EPOCH NODE REPORT RUN MILLIS`.
    #[must_use]
    pub fn encode(&self) -> String {
        let Stamp { epoch, node } = self.stamp;
        match self.event {
            Event::Trip { cooldown_left } => format!(
                "{VERSION} trip {} {epoch} {node} {}",
                self.key,
                cooldown_left.as_millis()
            ),
            Event::Close => format!("{VERSION} close {} {epoch} {node}", self.key),
            Event::Failures {
                run,
                report,
                fresh_for,
            } => format!(
                "{VERSION} failures {} {epoch} {node} {report} {run} {}",
                self.key,
                fresh_for.as_millis()
            ),
        }
    }

    /// Reads a line written by [`encode`](FleetMessage::encode).
    ///
    /// # Errors
    ///
    /// [`MessageError`] for anything else: another version, an unknown
    /// event, a missing or extra field, a number that does not parse.
    pub fn decode(line: &str) -> Result<Self, MessageError> {
        let malformed = |why: &'static str| MessageError {
            line: line.chars().take(120).collect(),
            why,
        };
        let fields: Vec<&str> = line.split(' ').collect();
        let (version, event, rest) = match fields.as_slice() {
            [version, event, rest @ ..] => (*version, *event, rest),
            _ => return Err(malformed("too few fields")),
        };
        if version != VERSION {
            return Err(malformed("not a fleet1 message"));
        }
        let number = |field: &str| field.parse::<u64>().map_err(|_| malformed("not a number"));
        let (key, epoch, node, event) = match (event, rest) {
            ("trip", [key, epoch, node, millis]) => (
                key,
                epoch,
                node,
                Event::Trip {
                    cooldown_left: Duration::from_millis(number(millis)?),
                },
            ),
            ("close", [key, epoch, node]) => (key, epoch, node, Event::Close),
            ("failures", [key, epoch, node, report, run, millis]) => (
                key,
                epoch,
                node,
                Event::Failures {
                    run: u32::try_from(number(run)?).map_err(|_| malformed("run out of range"))?,
                    report: number(report)?,
                    fresh_for: Duration::from_millis(number(millis)?),
                },
            ),
            ("trip" | "close" | "failures", _) => {
                return Err(malformed("wrong number of fields"));
            }
            _ => return Err(malformed("unknown event")),
        };
        if key.is_empty() {
            return Err(malformed("empty key"));
        }
        let node = u32::try_from(number(node)?).map_err(|_| malformed("node out of range"))?;
        Ok(FleetMessage {
            key: (*key).to_owned(),
            stamp: Stamp {
                epoch: number(epoch)?,
                node,
            },
            event,
        })
    }
}

impl fmt::Display for FleetMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.event {
            Event::Trip { cooldown_left } => write!(
                f,
                "{} tripped {} ({:?} of cooldown left, {})",
                self.sender(),
                self.key,
                cooldown_left,
                self.stamp
            ),
            Event::Close => write!(f, "{} closed {} ({})", self.sender(), self.key, self.stamp),
            Event::Failures {
                run,
                report,
                fresh_for,
            } => write!(
                f,
                "{} counts {run} failures in a row on {} (news for {fresh_for:?}, report {report}, {})",
                self.sender(),
                self.key,
                self.stamp
            ),
        }
    }
}

/// A line read from the store that is not a fleet message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed fleet message ({why}): {line:?}")]
pub struct MessageError {
    /// The line, cut to its first 120 characters.
    pub line: String,
    /// What is wrong with it.
    pub why: &'static str,
}
