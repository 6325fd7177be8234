//! A breaker per route, over real HTTP: the payment client as a `tower`
//! service behind [`kit::BreakerLayer`] (step 15), with the breakers in a
//! [`kit::Registry`] keyed by route (step 14).
//!
//! One breaker around the whole client would let one sick endpoint refuse
//! calls to the healthy ones. Here `/charges` and `/refunds` each have their
//! own: with the gateway's charges DOWN, refunds go on untouched, and the
//! [`status_line`] shows every route's state, as a status page would.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use tokio_util::sync::CancellationToken;
use tower::{Layer, Service};

use crate::client::{ChargeError, Receipt, classify};
use crate::gateway::{Gateway, GatewayError, IDEMPOTENCY_KEY, Mode};
use crate::kit::timeout;
use crate::kit::{
    self, BreakerLayer, BreakerService, Event, ExecuteError, Registry, RetryBreaker, State,
    TokioClock, TokioSleeper, Verdict,
};
use crate::orders::Order;
use crate::scenarios::Settings;

/// A request as every `tower` caller sends one: once the service says it
/// is ready (the layer's service is ready when the HTTP client is).
async fn send<S: Service<Request>, Request>(
    client: &mut S,
    request: Request,
) -> Result<S::Response, S::Error> {
    std::future::poll_fn(|cx| client.poll_ready(cx)).await?;
    client.call(request).await
}

/// A route of the gateway: the key of its breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Route {
    /// `POST /charges`.
    Charges,
    /// `POST /refunds`.
    Refunds,
}

impl Route {
    /// The route's path.
    pub fn path(self) -> &'static str {
        match self {
            Route::Charges => "/charges",
            Route::Refunds => "/refunds",
        }
    }
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.path())
    }
}

/// One request: a route and the order it is about. Cheap to clone, so the
/// layer may retry it (M2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteCall {
    /// Where it goes.
    pub route: Route,
    /// The order; its id is the idempotency key.
    pub order: Order,
}

/// The bare HTTP client as a `tower` service: one request per call, bounded
/// by the deadline, no retry and no breaker (the layer adds those).
#[derive(Debug, Clone)]
pub struct HttpRoutes {
    http: Client<HttpConnector, Full<Bytes>>,
    base: String,
    deadline: Duration,
}

impl HttpRoutes {
    /// A client for the gateway at `gateway_url` that gives every request
    /// `deadline`.
    pub fn new(gateway_url: &str, deadline: Duration) -> Self {
        HttpRoutes {
            http: Client::builder(TokioExecutor::new()).build_http(),
            base: gateway_url.to_owned(),
            deadline,
        }
    }
}

impl Service<RouteCall> for HttpRoutes {
    type Response = Receipt;
    type Error = ChargeError;
    type Future = Pin<Box<dyn Future<Output = Result<Receipt, ChargeError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), ChargeError>> {
        // hyper's pooled client takes any number of requests.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: RouteCall) -> Self::Future {
        let http = self.http.clone();
        let url = format!("{}{}", self.base, call.route.path());
        let deadline = self.deadline;
        Box::pin(async move {
            // The deadline inside the attempt: a hang is a counted failure.
            timeout::per_attempt(deadline, async move {
                let request = hyper::Request::post(url)
                    .header(IDEMPOTENCY_KEY, call.order.id.to_string())
                    .body(Full::new(Bytes::from(call.order.amount_cents.to_string())))
                    .map_err(|e| ChargeError::Transport(e.to_string()))?;
                let response = http.request(request).await.map_err(|e| {
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
            })
            .await
        })
    }
}

/// The HTTP client behind the breaker layer, a breaker per route.
pub type RoutedClient =
    BreakerService<HttpRoutes, RouteCall, Route, TokioClock, TokioSleeper, ChargeError>;

/// Every event the routed client's breakers told, with its route, oldest
/// first (docs/LIBRARY.md, O1 and O6).
pub type EventLog = Arc<Mutex<Vec<(Route, Event)>>>;

/// The routed client, and what watches it.
pub struct Routing {
    /// The client: a breaker per route.
    pub client: RoutedClient,
    /// The registry holding its breakers: a status page.
    pub registry: Arc<Registry<Route, TokioClock>>,
    /// Every event its breakers told.
    pub events: EventLog,
}

/// The routed client for the gateway at `gateway_url`, with the demo's
/// breaker and retry settings, the registry holding its breakers, and the
/// log of every event they tell. With the `metrics-page` feature the
/// events are also counted for `/metrics` (the `metrics_page` module).
///
/// # Errors
///
/// A [`kit::ConfigError`] if the breaker settings cannot work.
pub fn routed_client(
    gateway_url: &str,
    settings: &Settings,
    cancel: CancellationToken,
) -> Result<Routing, kit::ConfigError> {
    let events = EventLog::default();
    let log = Arc::clone(&events);
    let registry = Arc::new(
        Registry::new(
            RetryBreaker::builder()
                .threshold(settings.breaker.threshold)
                .cooldown(settings.breaker.cooldown),
            TokioClock::new(),
        )?
        .with_event_sink(move |route: &Route, event| {
            log.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((*route, *event));
            #[cfg(all(feature = "metrics-page", not(feature = "starter")))]
            kit::telemetry::meter(route, event);
        }),
    );
    let policy =
        kit::RetryPolicy::exponential(settings.retry.backoff_base, settings.retry.backoff_cap)
            .attempts(settings.retry.attempts)
            .retry_if(ChargeError::is_retryable)
            // A decline is a sign of life, as in the checkout (K1).
            .classify_errors(|e: &ChargeError| {
                if e.is_callers_fault() {
                    Verdict::Success
                } else {
                    Verdict::Failure
                }
            })
            .cancel_on(cancel);
    let layer = BreakerLayer::new(
        Arc::clone(&registry),
        policy,
        TokioSleeper,
        |call: &RouteCall| call.route,
    );
    let client = layer.layer(HttpRoutes::new(gateway_url, settings.deadline));
    Ok(Routing {
        client,
        registry,
        events,
    })
}

/// Every route's breaker state on one line, for a status page:
/// `/charges OPEN (480ms left) | /refunds CLOSED (0 failures)`.
pub fn status_line(registry: &Registry<Route, TokioClock>) -> String {
    let states: Vec<String> = registry
        .states()
        .into_iter()
        .map(|(route, state)| format!("{route} {}", describe(state)))
        .collect();
    if states.is_empty() {
        "no route used yet".to_owned()
    } else {
        states.join(" | ")
    }
}

fn describe(state: State) -> String {
    match state {
        State::Closed { failures } => format!("CLOSED ({failures} failures)"),
        State::Open { remaining } => format!("OPEN ({}ms left)", remaining.as_millis()),
        State::HalfOpen { probe_in_flight } => {
            format!(
                "HALF-OPEN (probe {})",
                if probe_in_flight { "out" } else { "due" }
            )
        }
        _ => format!("{state:?}"),
    }
}

/// What the calls of one route came to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Calls made.
    pub calls: u64,
    /// Calls that succeeded.
    pub ok: u64,
    /// Calls that failed after their attempts.
    pub failed: u64,
    /// Calls refused by the route's open breaker.
    pub refused: u64,
}

impl Tally {
    fn add(&mut self, result: &Result<Receipt, ExecuteError<ChargeError>>) {
        self.calls += 1;
        match result {
            Ok(_) => self.ok += 1,
            Err(ExecuteError::Rejected { .. }) => self.refused += 1,
            Err(_) => self.failed += 1,
        }
    }
}

impl fmt::Display for Tally {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} calls: {} ok, {} failed, {} refused",
            self.calls, self.ok, self.failed, self.refused
        )
    }
}

/// The story of [`one_route_down`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IsolationReport {
    /// The calls to `/charges`, whose gateway route is DOWN.
    pub charges: Tally,
    /// The calls to `/refunds`, which stays healthy.
    pub refunds: Tally,
    /// Charge requests that reached the gateway.
    pub gateway_charge_requests: u64,
    /// Refund requests that reached the gateway.
    pub gateway_refund_requests: u64,
    /// The status line after the first round.
    pub status_after_first_round: String,
    /// The status line at the end.
    pub status_at_end: String,
    /// Each route's state at the end.
    pub states: Vec<(Route, State)>,
    /// Every event the routes' breakers told, oldest first.
    pub events: Vec<(Route, Event)>,
}

impl IsolationReport {
    /// How many events named `name` ([`Event::name`]) the route's breaker
    /// told.
    pub fn told(&self, route: Route, name: &str) -> u64 {
        let count = self
            .events
            .iter()
            .filter(|(told, event)| *told == route && event.name() == name)
            .count();
        u64::try_from(count).unwrap_or(u64::MAX)
    }
}

impl fmt::Display for IsolationReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "== One route down, one healthy: a breaker per route through the tower layer =="
        )?;
        writeln!(f, "gateway: /charges DOWN, /refunds healthy")?;
        writeln!(f, "after round 1: {}", self.status_after_first_round)?;
        writeln!(
            f,
            "/charges: {} ({} requests reached the gateway)",
            self.charges, self.gateway_charge_requests
        )?;
        writeln!(
            f,
            "/refunds: {} ({} requests reached the gateway)",
            self.refunds, self.gateway_refund_requests
        )?;
        writeln!(f, "status: {}", self.status_at_end)?;
        writeln!(
            f,
            "events told: /charges {} refused, {} opened; /refunds {} refused",
            self.told(Route::Charges, "rejected"),
            self.told(Route::Charges, "circuit_opened"),
            self.told(Route::Refunds, "rejected")
        )
    }
}

/// Rounds in [`one_route_down`].
pub const ROUNDS: u32 = 8;

/// A gateway whose `/charges` is DOWN while `/refunds` is healthy; each
/// round charges one order and refunds another through the routed client.
/// The charges' breaker opens after the first call, and the refunds are
/// never refused.
///
/// # Errors
///
/// A [`GatewayError`] if the gateway cannot be started or steered.
pub async fn one_route_down(
    settings: Settings,
    cancel: CancellationToken,
) -> Result<IsolationReport, GatewayError> {
    let gateway = Gateway::start().await?;
    gateway.set_mode(Mode::Down).await?;
    let Routing {
        mut client,
        registry,
        events,
    } = routed_client(&gateway.url(), &settings, cancel)
        .map_err(|e| GatewayError::Admin(e.to_string()))?;
    let mut charges = Tally::default();
    let mut refunds = Tally::default();
    let mut status_after_first_round = String::new();
    for round in 0..ROUNDS {
        let charge = RouteCall {
            route: Route::Charges,
            order: Order::numbered(2 * round + 1),
        };
        charges.add(&send(&mut client, charge).await);
        let refund = RouteCall {
            route: Route::Refunds,
            order: Order::numbered(2 * round + 2),
        };
        refunds.add(&send(&mut client, refund).await);
        if round == 0 {
            status_after_first_round = status_line(&registry);
        }
    }
    let stats = gateway.stats();
    let report = IsolationReport {
        charges,
        refunds,
        gateway_charge_requests: stats.requests,
        gateway_refund_requests: stats.refund_requests,
        status_after_first_round,
        status_at_end: status_line(&registry),
        states: registry.states(),
        events: events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone(),
    };
    gateway.stop().await;
    Ok(report)
}
