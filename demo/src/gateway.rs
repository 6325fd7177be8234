//! A fake payment gateway, served over real HTTP on loopback.
//!
//! It listens on `127.0.0.1` with a port the operating system picks, so
//! several gateways (one per scenario, one per test) never collide. Its
//! [`Mode`] can be switched while it runs, through an admin endpoint, to
//! make it misbehave in the ways a real dependency does. It counts every
//! charge request that reaches it and keeps a ledger of what it charged, so a
//! scenario can prove how many requests the breaker let through and that no
//! order was charged twice.
//!
//! The HTTP surface:
//!
//! - `POST /charges`, with an `Idempotency-Key` header naming the order and
//!   the amount in cents as the body. Answers the charge id, or an error
//!   status chosen by the mode.
//! - `POST /refunds`, with an `Idempotency-Key` header: always answers 200
//!   with a refund id. The mode governs `/charges` only, so a gateway in
//!   DOWN mode has one sick route and one healthy one (the per-route
//!   breakers of [`routes`](crate::routes) keep them apart).
//! - `PUT /admin/mode`, with a mode in its text form (see [`Mode`]) as the
//!   body. Admin requests are not payment traffic and are not counted.

use std::collections::BTreeMap;
use std::fmt;
use std::net::{Ipv4Addr, SocketAddr};
use std::str::FromStr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{post, put};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// The header that names the order a charge is for.
///
/// A gateway that honours it charges each key at most once: a retry of a
/// charge whose answer was lost on the way back (the client timed out, the
/// connection dropped) gets the original charge id instead of charging the
/// card a second time. That is what makes it safe for the checkout and the
/// settlement worker to retry a charge at all.
pub const IDEMPOTENCY_KEY: &str = "idempotency-key";

/// How the gateway answers charge requests.
///
/// The text form, used by the admin endpoint, is what `Display` prints:
/// `HEALTHY`, `DOWN`, `SLOW 600ms`, `FLAKY 30% seed 7` and `REJECT`.
///
/// ```
/// use std::time::Duration;
/// use retry_breaker_demo::gateway::Mode;
///
/// let mode: Mode = "FLAKY 30% seed 7".parse()?;
/// assert_eq!(mode, Mode::Flaky { fail_percent: 30, seed: 7 });
/// assert_eq!("SLOW 600ms".parse::<Mode>()?, Mode::Slow { delay: Duration::from_millis(600) });
/// assert_eq!(Mode::Reject.to_string(), "REJECT");
/// # Ok::<(), retry_breaker_demo::gateway::ParseModeError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Charges the card and answers 200 with the charge id.
    Healthy,
    /// Answers 500 to everything: the gateway is broken.
    Down,
    /// Holds every request for `delay` and then answers 503 without
    /// charging: an overloaded gateway that gives up on its own, long after
    /// the client stopped waiting.
    Slow {
        /// How long each request is held; longer than the client's deadline.
        delay: Duration,
    },
    /// Fails `fail_percent` of requests with 503 and serves the rest like
    /// [`Mode::Healthy`]. Which requests fail is a pure function of the seed
    /// and the request's number since the mode was set, so a run can be
    /// replayed exactly.
    Flaky {
        /// The share of requests that fail, from 0 to 100.
        fail_percent: u8,
        /// Picks which requests fail.
        seed: u64,
    },
    /// Fails the first `burst` of every `every` requests with 503 and serves
    /// the rest like [`Mode::Healthy`]: a steady trickle of errors that
    /// come in short runs, the same ones every run.
    Bursts {
        /// Failed requests in a row at the start of every cycle.
        burst: u32,
        /// Requests per cycle.
        every: u32,
    },
    /// Answers 422: the request itself is invalid (say, a malformed card
    /// number). That is the caller's fault, so retrying cannot help.
    Reject,
}

impl Mode {
    /// Whether the `n`th request (from 0) since FLAKY was set fails.
    ///
    /// ```
    /// use retry_breaker_demo::gateway::Mode;
    ///
    /// let fails = (0..1000).filter(|&n| Mode::flaky_fails(30, 7, n)).count();
    /// assert!((250..350).contains(&fails), "about 30%, and always the same: {fails}");
    /// ```
    pub fn flaky_fails(fail_percent: u8, seed: u64, n: u64) -> bool {
        mix(seed, n) % 100 < u64::from(fail_percent)
    }
}

/// SplitMix64 of the seed and the request number: cheap, well mixed and
/// dependency-free, which is all a fault injector needs.
fn mix(seed: u64, n: u64) -> u64 {
    let mut z = seed.wrapping_add(n.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mode::Healthy => f.write_str("HEALTHY"),
            Mode::Down => f.write_str("DOWN"),
            Mode::Slow { delay } => write!(f, "SLOW {}ms", delay.as_millis()),
            Mode::Flaky { fail_percent, seed } => write!(f, "FLAKY {fail_percent}% seed {seed}"),
            Mode::Bursts { burst, every } => write!(f, "BURSTS {burst} of {every}"),
            Mode::Reject => f.write_str("REJECT"),
        }
    }
}

/// The admin endpoint was sent a mode it does not understand.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a gateway mode; expected HEALTHY, DOWN, SLOW <n>ms, FLAKY <n>% seed <n>, BURSTS <n> of <n> or REJECT"
)]
pub struct ParseModeError(String);

impl FromStr for Mode {
    type Err = ParseModeError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = || ParseModeError(text.to_owned());
        let words: Vec<&str> = text.split_whitespace().collect();
        match words.as_slice() {
            ["HEALTHY"] => Ok(Mode::Healthy),
            ["DOWN"] => Ok(Mode::Down),
            ["REJECT"] => Ok(Mode::Reject),
            ["SLOW", delay] => {
                let millis = delay.strip_suffix("ms").ok_or_else(invalid)?;
                let millis = millis.parse().map_err(|_| invalid())?;
                Ok(Mode::Slow {
                    delay: Duration::from_millis(millis),
                })
            }
            ["FLAKY", percent, "seed", seed] => {
                let percent = percent.strip_suffix('%').ok_or_else(invalid)?;
                let fail_percent = percent
                    .parse()
                    .ok()
                    .filter(|p| *p <= 100)
                    .ok_or_else(invalid)?;
                let seed = seed.parse().map_err(|_| invalid())?;
                Ok(Mode::Flaky { fail_percent, seed })
            }
            ["BURSTS", burst, "of", every] => {
                let burst = burst.parse().map_err(|_| invalid())?;
                let every = every
                    .parse()
                    .ok()
                    .filter(|every| *every > 0)
                    .ok_or_else(invalid)?;
                Ok(Mode::Bursts { burst, every })
            }
            _ => Err(invalid()),
        }
    }
}

/// What the gateway has seen and done so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GatewayStats {
    /// Charge requests received, whatever the answer (admin requests are
    /// not counted).
    pub requests: u64,
    /// The charges made, by idempotency key: the charge id of each.
    pub charges: BTreeMap<String, String>,
    /// Successful requests for a key that had already been charged,
    /// answered with the original charge id and not charged again.
    pub replays: u64,
    /// Refund requests received, whatever the mode (`/refunds` is always
    /// healthy).
    pub refund_requests: u64,
}

/// The gateway's state, shared by the request handlers.
#[derive(Debug)]
struct Books {
    mode: Mode,
    /// Requests received since the current mode was set; FLAKY uses it to
    /// decide which requests fail.
    requests_in_mode: u64,
    stats: GatewayStats,
}

type Shared = Arc<Mutex<Books>>;

fn books(shared: &Shared) -> MutexGuard<'_, Books> {
    // A handler never panics while holding the lock, but if one did, the
    // counters would still be whole numbers worth reporting.
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Something went wrong starting or steering the gateway.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// Binding the loopback listener failed.
    #[error("could not listen on 127.0.0.1: {0}")]
    Bind(#[from] std::io::Error),
    /// The admin request did not get through.
    #[error("the admin request failed: {0}")]
    Admin(String),
}

/// A running fake gateway. Dropping it stops the server.
#[derive(Debug)]
pub struct Gateway {
    address: SocketAddr,
    shared: Shared,
    admin: Client<HttpConnector, Full<Bytes>>,
    server: JoinHandle<()>,
}

impl Gateway {
    /// Starts a HEALTHY gateway on `127.0.0.1` with an OS-assigned port.
    ///
    /// # Errors
    ///
    /// [`GatewayError::Bind`] if no loopback port could be had.
    pub async fn start() -> Result<Self, GatewayError> {
        let shared: Shared = Arc::new(Mutex::new(Books {
            mode: Mode::Healthy,
            requests_in_mode: 0,
            stats: GatewayStats::default(),
        }));
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let address = listener.local_addr()?;
        let router = Router::new()
            .route("/charges", post(charge))
            .route("/refunds", post(refund))
            .route("/admin/mode", put(set_mode))
            .with_state(Arc::clone(&shared));
        let server = tokio::spawn(async move {
            // The accept loop only ends when the task is aborted on drop.
            let _ = axum::serve(listener, router).await;
        });
        Ok(Gateway {
            address,
            shared,
            admin: Client::builder(TokioExecutor::new()).build_http(),
            server,
        })
    }

    /// The base URL of the gateway, such as `http://127.0.0.1:40123`.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Switches the gateway to `mode` through its admin endpoint, over HTTP
    /// like any operator would.
    ///
    /// # Errors
    ///
    /// [`GatewayError::Admin`] if the request fails or is refused.
    pub async fn set_mode(&self, mode: Mode) -> Result<(), GatewayError> {
        let admin_error = |e: &dyn fmt::Display| GatewayError::Admin(e.to_string());
        let request = hyper::Request::put(format!("{}/admin/mode", self.url()))
            .body(Full::new(Bytes::from(mode.to_string())))
            .map_err(|e| admin_error(&e))?;
        let response = self
            .admin
            .request(request)
            .await
            .map_err(|e| admin_error(&e))?;
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| admin_error(&e))?
            .to_bytes();
        if status.is_success() {
            Ok(())
        } else {
            Err(GatewayError::Admin(format!(
                "{status}: {}",
                String::from_utf8_lossy(&body)
            )))
        }
    }

    /// The mode the gateway is in now.
    pub fn mode(&self) -> Mode {
        books(&self.shared).mode
    }

    /// Stops the server and waits until its listener is closed, so that a
    /// new connection to its address is refused from then on.
    pub async fn stop(mut self) {
        self.server.abort();
        // The only possible error is the cancellation just asked for.
        let _ = (&mut self.server).await;
    }

    /// A snapshot of the request count and the ledger.
    pub fn stats(&self) -> GatewayStats {
        books(&self.shared).stats.clone()
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        // Stops accepting connections. Requests still held by SLOW end on
        // their own once their delay is over.
        self.server.abort();
    }
}

/// What the charge handler decided while holding the lock; any waiting
/// happens after the lock is released.
enum Answer {
    Now(StatusCode, String),
    After(Duration, StatusCode, String),
}

async fn charge(
    State(shared): State<Shared>,
    headers: HeaderMap,
    _amount_cents: String,
) -> (StatusCode, String) {
    let key = headers
        .get(IDEMPOTENCY_KEY)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let answer = {
        let mut books = books(&shared);
        // Counted on arrival, before any delay, so a request the client gave
        // up on still shows up in the count.
        books.stats.requests += 1;
        let n = books.requests_in_mode;
        books.requests_in_mode += 1;
        match books.mode {
            Mode::Healthy => charge_once(&mut books.stats, key),
            Mode::Down => Answer::Now(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the gateway is down".into(),
            ),
            Mode::Slow { delay } => Answer::After(
                delay,
                StatusCode::SERVICE_UNAVAILABLE,
                "gave up: overloaded".into(),
            ),
            Mode::Flaky { fail_percent, seed } if Mode::flaky_fails(fail_percent, seed, n) => {
                Answer::Now(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "temporarily unavailable".into(),
                )
            }
            Mode::Flaky { .. } => charge_once(&mut books.stats, key),
            Mode::Bursts { burst, every } if n % u64::from(every) < u64::from(burst) => {
                Answer::Now(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "temporarily unavailable".into(),
                )
            }
            Mode::Bursts { .. } => charge_once(&mut books.stats, key),
            Mode::Reject => Answer::Now(
                StatusCode::UNPROCESSABLE_ENTITY,
                "the card number is invalid".into(),
            ),
        }
    };
    match answer {
        Answer::Now(status, body) => (status, body),
        Answer::After(delay, status, body) => {
            tokio::time::sleep(delay).await;
            (status, body)
        }
    }
}

/// A refund: the route that stays healthy whatever the mode.
async fn refund(State(shared): State<Shared>) -> (StatusCode, String) {
    let mut books = books(&shared);
    books.stats.refund_requests += 1;
    (
        StatusCode::OK,
        format!("rf_{}", books.stats.refund_requests),
    )
}

/// Charges the order named by `key`, unless it was charged before, in which
/// case the original charge id is answered again.
fn charge_once(stats: &mut GatewayStats, key: Option<String>) -> Answer {
    let Some(key) = key else {
        return Answer::Now(
            StatusCode::BAD_REQUEST,
            format!("missing {IDEMPOTENCY_KEY} header"),
        );
    };
    if let Some(id) = stats.charges.get(&key) {
        let id = id.clone();
        stats.replays += 1;
        return Answer::Now(StatusCode::OK, id);
    }
    let id = format!("ch_{}", stats.charges.len() + 1);
    stats.charges.insert(key, id.clone());
    Answer::Now(StatusCode::OK, id)
}

async fn set_mode(State(shared): State<Shared>, body: String) -> (StatusCode, String) {
    match body.parse::<Mode>() {
        Ok(mode) => {
            let mut books = books(&shared);
            books.mode = mode;
            books.requests_in_mode = 0;
            (StatusCode::OK, mode.to_string())
        }
        Err(e) => (StatusCode::BAD_REQUEST, e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mode_reads_back_its_own_text() {
        let modes = [
            Mode::Healthy,
            Mode::Down,
            Mode::Slow {
                delay: Duration::from_millis(600),
            },
            Mode::Flaky {
                fail_percent: 30,
                seed: 7,
            },
            Mode::Bursts { burst: 2, every: 6 },
            Mode::Reject,
        ];
        for mode in modes {
            assert_eq!(mode.to_string().parse::<Mode>(), Ok(mode));
        }
    }

    #[test]
    fn nonsense_modes_are_refused() {
        for text in ["", "healthy", "SLOW 600", "FLAKY 101% seed 1", "DOWN now"] {
            assert!(text.parse::<Mode>().is_err(), "{text:?} was accepted");
        }
    }

    #[test]
    fn flaky_failures_depend_only_on_the_seed_and_the_request_number() {
        let pattern =
            |seed| -> Vec<bool> { (0..64).map(|n| Mode::flaky_fails(30, seed, n)).collect() };
        assert_eq!(pattern(7), pattern(7));
        assert_ne!(pattern(7), pattern(8));
        assert!((0..100).all(|n| !Mode::flaky_fails(0, 7, n)));
        assert!((0..100).all(|n| Mode::flaky_fails(100, 7, n)));
    }
}
