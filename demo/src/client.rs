//! The payment client: one HTTP charge request, bounded by a deadline, and
//! a verdict on what its failure means.
//!
//! The deadline lives here, inside the task that `execute` runs, and not
//! around `execute`: a request that runs out of time then ends as an
//! ordinary failure that the breaker counts, instead of being dropped
//! half-way, which would record nothing.

use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::StatusCode;
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use crate::gateway::IDEMPOTENCY_KEY;
use crate::kit::Verdict;
use crate::kit::timeout::{self, TimedOut};
use crate::orders::Order;

/// Proof that the gateway charged an order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    /// The gateway's id for the charge.
    pub charge_id: String,
}

/// Why a charge did not go through.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChargeError {
    /// No complete answer arrived within the deadline.
    #[error("no answer within the {}ms deadline", .0.as_millis())]
    Timeout(Duration),
    /// The gateway could not be reached at all.
    #[error("could not connect: {0}")]
    Connect(String),
    /// The connection broke while the request or its answer was in flight.
    #[error("the connection failed: {0}")]
    Transport(String),
    /// The gateway failed (5xx).
    #[error("HTTP {status}: {message}")]
    Unavailable {
        /// The status code.
        status: u16,
        /// What the gateway said.
        message: String,
    },
    /// The gateway asked us to slow down (429).
    #[error("HTTP 429: throttled")]
    Throttled,
    /// The gateway refused the request as invalid (a 4xx other than 429):
    /// the caller's fault, so sending it again cannot help.
    #[error("HTTP {status}: {message}")]
    Invalid {
        /// The status code.
        status: u16,
        /// What the gateway said.
        message: String,
    },
    /// An answer no charge request should get (1xx, 3xx).
    #[error("unexpected HTTP {0}")]
    Unexpected(u16),
}

/// An attempt that outlived its deadline is a timeout like any other.
impl From<TimedOut> for ChargeError {
    fn from(timed_out: TimedOut) -> Self {
        ChargeError::Timeout(timed_out.limit)
    }
}

impl ChargeError {
    /// Whether this failure is the dependency's and may pass if tried again:
    /// timeouts, connection errors, 5xx and 429.
    ///
    /// ```
    /// use std::time::Duration;
    /// use retry_breaker_demo::client::ChargeError;
    ///
    /// assert!(ChargeError::Timeout(Duration::from_millis(250)).is_retryable());
    /// assert!(ChargeError::Throttled.is_retryable());
    /// let invalid = ChargeError::Invalid { status: 422, message: "bad card".into() };
    /// assert!(!invalid.is_retryable());
    /// ```
    pub fn is_retryable(&self) -> bool {
        match self {
            ChargeError::Timeout(_)
            | ChargeError::Connect(_)
            | ChargeError::Transport(_)
            | ChargeError::Unavailable { .. }
            | ChargeError::Throttled => true,
            ChargeError::Invalid { .. } | ChargeError::Unexpected(_) => false,
        }
    }

    /// Whether the gateway answered, and the answer was that *this request*
    /// is wrong. Such an answer shows the gateway is working.
    pub fn is_callers_fault(&self) -> bool {
        matches!(self, ChargeError::Invalid { .. })
    }

    /// What an attempt's outcome means for the breaker (rules K1-K3): a
    /// charge or a decline shows the gateway working, anything else is a
    /// failure of the gateway. Handed to `execute_classified` as is.
    ///
    /// ```
    /// use retry_breaker_demo::client::{ChargeError, Receipt};
    /// use retry_breaker_demo::kit::Verdict;
    ///
    /// let declined: Result<Receipt, _> = Err(ChargeError::Invalid { status: 402, message: "declined".into() });
    /// assert_eq!(ChargeError::verdict(&declined), Verdict::Success);
    /// assert_eq!(ChargeError::verdict(&Err::<Receipt, _>(ChargeError::Throttled)), Verdict::Failure);
    /// ```
    pub fn verdict(outcome: &Result<Receipt, ChargeError>) -> Verdict {
        match outcome {
            Ok(_) => Verdict::Success,
            Err(error) if error.is_callers_fault() => Verdict::Success,
            Err(_) => Verdict::Failure,
        }
    }

    /// Whether the request ran out of time.
    pub fn is_timeout(&self) -> bool {
        matches!(self, ChargeError::Timeout(_))
    }
}

/// Turns an HTTP answer into a receipt or a classified failure.
///
/// ```
/// use hyper::StatusCode;
/// use retry_breaker_demo::client::{classify, ChargeError};
///
/// assert_eq!(classify(StatusCode::OK, "ch_1").unwrap().charge_id, "ch_1");
/// assert_eq!(classify(StatusCode::TOO_MANY_REQUESTS, ""), Err(ChargeError::Throttled));
/// assert!(classify(StatusCode::BAD_GATEWAY, "").unwrap_err().is_retryable());
/// assert!(!classify(StatusCode::NOT_FOUND, "").unwrap_err().is_retryable());
/// ```
///
/// # Errors
///
/// Every status that is not a success, classified as in [`ChargeError`].
pub fn classify(status: StatusCode, body: &str) -> Result<Receipt, ChargeError> {
    let message = body.trim().to_owned();
    if status.is_success() {
        Ok(Receipt { charge_id: message })
    } else if status == StatusCode::TOO_MANY_REQUESTS {
        Err(ChargeError::Throttled)
    } else if status.is_server_error() {
        Err(ChargeError::Unavailable {
            status: status.as_u16(),
            message,
        })
    } else if status.is_client_error() {
        Err(ChargeError::Invalid {
            status: status.as_u16(),
            message,
        })
    } else {
        Err(ChargeError::Unexpected(status.as_u16()))
    }
}

/// Charges orders at one gateway, each request bounded by a deadline.
///
/// Cheap to clone: clones share one connection pool.
#[derive(Debug, Clone)]
pub struct PaymentClient {
    http: Client<HttpConnector, Full<Bytes>>,
    charges_url: String,
    deadline: Duration,
}

impl PaymentClient {
    /// A client for the gateway at `gateway_url` (such as
    /// `http://127.0.0.1:40123`) that gives every request `deadline` to
    /// complete, from connecting to reading the whole answer.
    pub fn new(gateway_url: &str, deadline: Duration) -> Self {
        PaymentClient {
            http: Client::builder(TokioExecutor::new()).build_http(),
            charges_url: format!("{gateway_url}/charges"),
            deadline,
        }
    }

    /// The per-request deadline.
    pub fn deadline(&self) -> Duration {
        self.deadline
    }

    /// Sends one charge request for `order`: exactly one request, no retry.
    ///
    /// The order id travels as the idempotency key, so if this request is
    /// sent again after its answer was lost, the gateway will not charge the
    /// card twice.
    ///
    /// # Errors
    ///
    /// A [`ChargeError`] saying what went wrong and, through
    /// [`ChargeError::is_retryable`], whether trying again may help.
    pub async fn charge(&self, order: &Order) -> Result<Receipt, ChargeError> {
        // The deadline is per attempt, so a hang is this attempt's failure,
        // which the breaker counts.
        timeout::per_attempt(self.deadline, self.exchange(order)).await
    }

    async fn exchange(&self, order: &Order) -> Result<Receipt, ChargeError> {
        let request = hyper::Request::post(&self.charges_url)
            .header(IDEMPOTENCY_KEY, order.id.to_string())
            .body(Full::new(Bytes::from(order.amount_cents.to_string())))
            .map_err(|e| ChargeError::Transport(e.to_string()))?;
        let response = self.http.request(request).await.map_err(|e| {
            if e.is_connect() {
                ChargeError::Connect(e.to_string())
            } else {
                ChargeError::Transport(e.to_string())
            }
        })?;
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| ChargeError::Transport(e.to_string()))?
            .to_bytes();
        classify(status, &String::from_utf8_lossy(&body))
    }
}
