//! `/metrics` over real HTTP on loopback: the one-route-down scenario's
//! breakers, counted by the solution's metrics adapter and scraped as
//! Prometheus would, against the events the breakers told (docs/LIBRARY.md, O8, O9).
#![cfg(all(feature = "metrics-page", not(feature = "starter")))]

use std::time::Duration;

use retry_breaker_demo::metrics_page::{MetricsPage, total};
use retry_breaker_demo::routes::{self, Route};
use retry_breaker_demo::scenarios::Settings;
use tokio_util::sync::CancellationToken;

const EVENTS: &str = "resilience_breaker_events";
const STATE: &str = "resilience_breaker_state";

#[tokio::test]
async fn the_scraped_counters_are_the_events_the_breakers_told() {
    let page = MetricsPage::start().await.expect("the page starts");
    let settings = Settings {
        deadline: Duration::from_millis(500),
        ..Settings::demo()
    };
    let report = tokio::time::timeout(
        Duration::from_secs(30),
        routes::one_route_down(settings, CancellationToken::new()),
    )
    .await
    .expect("the scenario finishes within 30 s")
    .expect("the gateway starts");
    let scraped = page.scrape().await.expect("GET /metrics answers 200");

    for route in [Route::Charges, Route::Refunds] {
        for name in [
            "admitted",
            "rejected",
            "recorded",
            "released",
            "circuit_opened",
            "attempt_started",
            "backoff",
            "gave_up",
            "attempt_ended",
            "call_ended",
        ] {
            let labels = [("breaker", route.path()), ("event_name", name)];
            assert_eq!(
                total(&scraped, EVENTS, &labels) as u64,
                report.told(route, name),
                "{route} {name}: the page counts every event told, no more\n{scraped}"
            );
        }
    }
    // Each timed attempt and call is one observation of its histogram (O9).
    for route in [Route::Charges, Route::Refunds] {
        let breaker = [("breaker", route.path())];
        assert_eq!(
            total(
                &scraped,
                "resilience_breaker_attempt_duration_count",
                &breaker
            ) as u64,
            report.told(route, "attempt_ended"),
            "{route}: one attempt duration per attempt that ended\n{scraped}"
        );
        assert_eq!(
            total(&scraped, "resilience_breaker_call_duration_count", &breaker) as u64,
            report.told(route, "call_ended"),
            "{route}: one call duration per call\n{scraped}"
        );
        assert!(
            report.told(route, "call_ended") > 0,
            "{route}: calls were made"
        );
    }
    assert!(
        report.told(Route::Charges, "rejected") > 0,
        "the sick route's breaker refused calls: {report}"
    );
    assert_eq!(
        total(
            &scraped,
            EVENTS,
            &[
                ("breaker", "/charges"),
                ("event_name", "rejected"),
                ("reason", "open")
            ]
        ) as u64,
        report.charges.refused,
        "every refused call is counted as refused by an open circuit\n{scraped}"
    );
    assert_eq!(
        total(&scraped, STATE, &[("breaker", "/charges")]),
        2.0,
        "the sick route's state gauge says OPEN\n{scraped}"
    );
    assert_eq!(
        total(
            &scraped,
            EVENTS,
            &[("breaker", "/refunds"), ("event_name", "rejected")]
        ),
        0.0,
        "the healthy route is never refused\n{scraped}"
    );
}
