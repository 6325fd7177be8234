//! What the demo claims, checked over real HTTP on loopback.
//!
//! The checks are counts (requests the gateway received, orders in each
//! state, breaker transitions), never wall-clock durations, so a slow or
//! busy machine cannot turn them red. The timings are the demo's, with more
//! slack: a deadline that a healthy loopback request meets hundreds of times
//! over, and a cooldown far longer than the microseconds a refusal takes.
//! Every test runs under a time limit that fails with a clear message rather
//! than hanging.

use std::collections::BTreeSet;
use std::future::Future;
use std::time::{Duration, Instant};

use retry_breaker_demo::client::{ChargeError, PaymentClient};
use retry_breaker_demo::gateway::{Gateway, Mode};
use retry_breaker_demo::html::{self, Section};
use retry_breaker_demo::kit::{Phase, Rejected, State};
use retry_breaker_demo::orders::Order;
use retry_breaker_demo::report::ScenarioReport;
use retry_breaker_demo::scenarios::{Rig, Scenario, Settings};
use retry_breaker_demo::timeline::{Outcome, Row, StateAfter};
use tokio_util::sync::CancellationToken;

/// The demo's settings, with room to spare for a loaded machine.
fn settings() -> Settings {
    Settings {
        deadline: Duration::from_millis(500),
        slow_delay: Duration::from_millis(1_500),
        breaker: retry_breaker_demo::checkout::BreakerSettings {
            threshold: 3,
            cooldown: Duration::from_millis(800),
        },
        ..Settings::demo()
    }
}

/// Runs `test`, failing with a clear message if it takes longer than `limit`.
async fn within<T>(limit: Duration, what: &str, test: impl Future<Output = T>) -> T {
    match tokio::time::timeout(limit, test).await {
        Ok(value) => value,
        Err(_) => panic!("{what} did not finish within {limit:?}"),
    }
}

async fn run(scenario: Scenario) -> ScenarioReport {
    let report = within(
        Duration::from_secs(30),
        scenario.title(),
        scenario.run(settings(), CancellationToken::new()),
    )
    .await
    .expect("the scenario could start its gateway");
    // Every scenario run here also checks its picture in the HTML report.
    check_picture(&report);
    report
}

/// Parses the scenario's timeline out of the HTML report, as a browser
/// would get it, and checks that it draws every event of the run that made
/// it: one mark per attempt of each kind, one tick per request the gateway
/// counted, one pill per change of an order, one band per state.
fn check_picture(report: &ScenarioReport) {
    let page = html::page("a test", "test settings", &[Section::Ran(report)]);
    let start = page.find("<svg").expect("the page has a picture");
    let end = page.rfind("</svg>").expect("the picture ends") + "</svg>".len();
    let document = roxmltree::Document::parse(&page[start..end])
        .unwrap_or_else(|e| panic!("{}: the SVG is not well-formed XML: {e}", report.heading));
    let count = |element: &str, classes: &[&str]| {
        document
            .descendants()
            .filter(|node| node.has_tag_name(element))
            .filter(|node| {
                let class: Vec<&str> = node.attribute("class").unwrap_or("").split(' ').collect();
                classes.iter().all(|wanted| class.contains(wanted))
            })
            .count()
    };
    let rows = &report.rows;
    let attempts = |wanted: fn(&Outcome) -> bool| {
        rows.iter()
            .filter(|row| row.attempt.is_some() && wanted(&row.outcome))
            .count()
    };
    let notes = |text: &str| {
        rows.iter()
            .filter(|row| matches!(&row.outcome, Outcome::Note(note) if note == text))
            .count()
    };
    let heading = &report.heading;
    let charged = attempts(|o| matches!(o, Outcome::Charged(_)));
    let declined = attempts(|o| matches!(o, Outcome::Declined(_)));
    assert_eq!(
        count("g", &["mark", "success"]),
        charged + declined,
        "{heading}: successes"
    );
    assert_eq!(
        count("g", &["mark", "failure"]),
        attempts(|o| matches!(o, Outcome::Failed { .. })),
        "{heading}: failures"
    );
    assert_eq!(
        count("g", &["mark", "refused"]),
        report.summary.avoided as usize,
        "{heading}: refusals"
    );
    assert_eq!(
        count("g", &["mark", "stale"]),
        0,
        "{heading}: nothing is stale"
    );
    assert_eq!(
        count("g", &["mark", "probe"]),
        probes(rows),
        "{heading}: probes"
    );
    assert_eq!(
        count("line", &["request"]) as u64,
        report.gateway.requests,
        "{heading}: one tick per request the gateway counted"
    );
    // Here every order is paid at most once, so the pills match the book.
    assert_eq!(
        count("g", &["order", "paid"]),
        report.book.paid as usize,
        "{heading}: paid"
    );
    assert_eq!(
        count("g", &["order", "declined"]),
        report.book.declined as usize
    );
    assert_eq!(count("g", &["order", "lost"]), report.summary.lost as usize);
    assert_eq!(
        count("g", &["order", "pending"]),
        notes(retry_breaker_demo::checkout::PENDING_NOTE),
        "{heading}: one pill per order accepted as pending"
    );
    let bands: Vec<&str> = document
        .descendants()
        .filter_map(|node| node.attribute("class"))
        .filter_map(|class| class.strip_prefix("band "))
        .collect();
    if report
        .rows
        .iter()
        .all(|row| row.state_after == StateAfter::NoBreaker)
    {
        assert_eq!(bands, ["no breaker"], "{heading}");
    } else {
        let mut expected = vec!["closed".to_owned()];
        expected.extend(
            report
                .transitions
                .iter()
                .map(|t| t.to.to_string().to_lowercase()),
        );
        assert_eq!(bands, expected, "{heading}: one band per state, in order");
    }
}

fn phases(report: &ScenarioReport) -> Vec<(Phase, Phase)> {
    report.transitions.iter().map(|t| (t.from, t.to)).collect()
}

fn requests(rows: &[Row]) -> u64 {
    rows.iter().filter(|row| row.is_request()).count() as u64
}

/// The attempt rows of `call`, each as a few words: its number, whether it
/// was the probe, how it ended, whether a backoff was told after it, and
/// whether it has a duration.
fn attempts_of(rows: &[Row], call: &str) -> Vec<String> {
    rows.iter()
        .filter(|row| row.call == call)
        .filter_map(|row| {
            let attempt = row.attempt?;
            let probe = if row.probe { " probe" } else { "" };
            let (ended, retry) = match &row.outcome {
                Outcome::Charged(_) => ("paid", false),
                Outcome::Declined(_) => ("declined", false),
                Outcome::Failed { retry_in, .. } => ("failed", retry_in.is_some()),
                Outcome::Refused(_) => ("refused", false),
                Outcome::Unanswered => ("unanswered", false),
                Outcome::Note(_) => return None,
            };
            let retry = if retry { "retry told" } else { "no retry" };
            let timed = if row.took.is_some() {
                "timed"
            } else {
                "not timed"
            };
            Some(format!("{attempt}{probe} {ended}, {retry}, {timed}"))
        })
        .collect()
}

fn probes(rows: &[Row]) -> usize {
    rows.iter().filter(|row| row.probe).count()
}

#[tokio::test]
async fn without_a_breaker_every_call_against_slow_waits_out_the_deadline() {
    let report = run(Scenario::SlowWithoutBreaker).await;

    assert_eq!(report.gateway.requests, 4, "one request per order");
    let attempts: Vec<&Row> = report.rows.iter().filter(|row| row.is_request()).collect();
    assert_eq!(attempts.len(), 4);
    for row in attempts {
        assert!(
            row.is_timeout(),
            "expected a timeout, got {:?}",
            row.outcome
        );
        // A timeout never fires early, so this lower bound is safe to check.
        assert!(row.took.expect("attempts are timed") >= settings().deadline);
    }
    assert_eq!(report.summary.lost, 4, "no fallback: every order is lost");
    assert_eq!(report.summary.avoided, 0);
}

#[tokio::test]
async fn an_open_circuit_sends_the_down_gateway_no_requests() {
    let report = run(Scenario::DownWithBreaker).await;

    // The first order's three attempts reach the threshold; nothing after.
    assert_eq!(report.gateway.requests, 3);
    assert_eq!(requests(&report.rows), 3);
    assert_eq!(
        attempts_of(&report.rows, "order-1"),
        [
            "1 failed, retry told, timed",
            "2 failed, retry told, timed",
            "3 failed, no retry, timed",
        ]
    );
    assert_eq!(phases(&report), [(Phase::Closed, Phase::Open)]);
    assert_eq!(report.summary.calls, 6);
    assert_eq!(report.summary.avoided, 5, "orders 2 to 6 were refused");
    assert_eq!(report.summary.pending, 6, "every order was kept as pending");
    assert_eq!(report.summary.lost, 0);
    for row in report.rows.iter().filter(|row| row.is_refusal()) {
        assert!(matches!(
            row.outcome,
            Outcome::Refused(Rejected::Open { .. })
        ));
    }
}

#[tokio::test]
async fn a_burst_at_a_dead_gateway_reaches_it_whole_without_a_bulkhead() {
    use retry_breaker_demo::scenarios::BURST;

    let report = run(Scenario::BurstWithoutBulkhead).await;

    assert_eq!(
        report.gateway.requests,
        u64::from(BURST),
        "a CLOSED circuit admits the whole burst before any failure is in"
    );
    assert_eq!(phases(&report), [(Phase::Closed, Phase::Open)]);
    assert_eq!(report.summary.calls, BURST);
    assert_eq!(
        report.summary.pending, BURST,
        "every order is kept as pending"
    );
    assert_eq!(report.summary.lost, 0);
    let first_attempts = report
        .rows
        .iter()
        .filter(|row| row.is_request() && row.attempt == Some(1))
        .count();
    assert_eq!(first_attempts, usize::try_from(BURST).unwrap());
    assert_eq!(
        report.rows.iter().filter(|row| row.is_refusal()).count(),
        0,
        "one attempt each, all admitted before the circuit opened: nothing was refused"
    );
}

#[tokio::test]
async fn the_same_burst_through_a_bulkhead_reaches_the_gateway_only_as_far_as_its_room() {
    use retry_breaker_demo::scenarios::{BULKHEAD, BURST};

    let report = run(Scenario::BurstWithBulkhead).await;

    assert_eq!(
        report.gateway.requests,
        u64::from(BULKHEAD),
        "the bulkhead lets {BULKHEAD} attempts out; their failures open the circuit"
    );
    assert_eq!(phases(&report), [(Phase::Closed, Phase::Open)]);
    let full = report
        .rows
        .iter()
        .filter(|row| matches!(row.outcome, Outcome::Refused(Rejected::Full { limit }) if limit == BULKHEAD))
        .count();
    assert_eq!(
        full,
        usize::try_from(BURST - BULKHEAD).unwrap(),
        "every order beyond the room is refused at once, for want of room (H1)"
    );
    assert_eq!(
        report.summary.pending, BURST,
        "every order is kept as pending"
    );
    assert_eq!(report.summary.lost, 0);
}

#[tokio::test]
async fn after_recovery_one_probe_closes_the_circuit() {
    let report = run(Scenario::Recovery).await;

    assert_eq!(
        phases(&report),
        [
            (Phase::Closed, Phase::Open),
            (Phase::Open, Phase::HalfOpen),
            (Phase::HalfOpen, Phase::Closed),
        ]
    );
    assert_eq!(probes(&report.rows), 1);
    // Three failures open it; order 2 is refused although the gateway is
    // healthy again; then the probe and two more orders go through.
    assert_eq!(report.gateway.requests, 3 + 3);
    assert_eq!(report.summary.avoided, 1);
    assert_eq!(report.summary.paid, 3);
    assert_eq!(report.summary.pending, 2);
    assert_eq!(report.summary.lost, 0);
}

#[tokio::test]
async fn a_failed_probe_reopens_the_circuit_and_sends_nothing_more() {
    let report = run(Scenario::FailedProbe).await;

    assert_eq!(
        phases(&report),
        [
            (Phase::Closed, Phase::Open),
            (Phase::Open, Phase::HalfOpen),
            (Phase::HalfOpen, Phase::Open),
        ]
    );
    assert_eq!(probes(&report.rows), 1);
    // The rows come from the breaker's events: the probe is the attempt it
    // admitted as one, its backoff the one the retry loop told, and the
    // refusal of its retry is attempt 2 of the same call, with no time of
    // its own (only a call refused at once is timed as a whole).
    assert_eq!(
        attempts_of(&report.rows, "order-2"),
        [
            "1 probe failed, retry told, timed",
            "2 refused, no retry, not timed",
        ]
    );
    assert_eq!(
        attempts_of(&report.rows, "order-3"),
        ["1 refused, no retry, timed"]
    );
    // The probe is a single request: its own retry, and order 3, are refused.
    assert_eq!(report.gateway.requests, 3 + 1);
    assert_eq!(report.summary.avoided, 2);
    assert_eq!(report.summary.pending, 3);
    assert_eq!(report.summary.lost, 0);
}

#[tokio::test]
async fn an_open_circuit_lets_one_probe_through_per_cooldown() {
    within(
        Duration::from_secs(30),
        "the probe-per-cooldown test",
        async {
            let settings = settings();
            let cooldown = settings.breaker.cooldown;
            let rig = Rig::start(settings, CancellationToken::new())
                .await
                .unwrap();
            rig.switch(Mode::Down).await.unwrap();

            // Orders every 10 ms for two and a half cooldowns, so that callers
            // keep knocking while the circuit is open. Bounded in count as well
            // as in time.
            let started = Instant::now();
            let mut placed = 0;
            while started.elapsed() < cooldown * 5 / 2 && placed < 1_000 {
                placed += 1;
                rig.checkout.place_order(Order::numbered(placed)).await;
                tokio::time::sleep(Duration::from_millis(10)).await;
            }

            let rows = rig.checkout.timeline().rows();
            let transitions = rig.checkout.timeline().transitions();
            let probes = probes(&rows);
            let reopenings: Vec<_> = transitions
                .iter()
                .filter(|t| (t.from, t.to) == (Phase::Open, Phase::HalfOpen))
                .collect();
            assert!(
                probes >= 1,
                "at least one cooldown ran out, so at least one probe"
            );
            assert_eq!(
                probes,
                reopenings.len(),
                "every half-open spell admits one probe"
            );
            // The threshold's worth of failures, then one request per probe, and
            // not one more, however many orders arrived.
            assert_eq!(rig.gateway.stats().requests, 3 + probes as u64);
            // Each probe comes a full cooldown after the circuit (re)opened, on
            // the breaker's own clock.
            for pair in transitions.windows(2) {
                if (pair[1].from, pair[1].to) == (Phase::Open, Phase::HalfOpen) {
                    assert!(
                        pair[1].at - pair[0].at >= cooldown,
                        "{} then {}",
                        pair[0],
                        pair[1]
                    );
                }
            }
        },
    )
    .await;
}

#[tokio::test]
async fn timeouts_count_as_failures_and_open_the_circuit() {
    within(Duration::from_secs(30), "the timeout test", async {
        let settings = settings();
        let rig = Rig::start(settings, CancellationToken::new())
            .await
            .unwrap();
        rig.switch(Mode::Slow {
            delay: settings.slow_delay,
        })
        .await
        .unwrap();

        rig.place_orders(1..=2).await;

        let rows = rig.checkout.timeline().rows();
        let timeouts = rows.iter().filter(|row| row.is_timeout()).count();
        assert_eq!(timeouts, 3, "order 1 timed out on each of its attempts");
        assert!(matches!(rig.checkout.breaker().state(), State::Open { .. }));
        assert_eq!(rig.gateway.stats().requests, 3, "order 2 was refused");
        assert_eq!(rig.checkout.book().counts().pending, 2);
    })
    .await;
}

#[tokio::test]
async fn flaky_failures_are_retried_until_every_order_is_paid() {
    let report = run(Scenario::FlakyWithRetries).await;
    let settings = settings();

    // The seed fixes which requests fail, so the exact count is known: the
    // requests up to the eighth success. Check first that the seed still
    // tells the intended story (no order runs out of attempts).
    let fails = |n| Mode::flaky_fails(settings.flaky_percent, settings.flaky_seed, n);
    let mut expected = 0;
    let mut successes = 0;
    let mut failures_in_a_row = 0;
    while successes < 8 {
        if fails(expected) {
            failures_in_a_row += 1;
            assert!(
                failures_in_a_row < settings.retry.attempts,
                "the seed exhausts an order's attempts"
            );
        } else {
            successes += 1;
            failures_in_a_row = 0;
        }
        expected += 1;
    }
    assert!(expected > 8, "the seed makes at least one request fail");

    assert_eq!(report.gateway.requests, expected);
    assert_eq!(requests(&report.rows), expected);
    assert_eq!(report.summary.paid, 8);
    assert_eq!(report.summary.pending + report.summary.lost, 0);
    assert!(report.transitions.is_empty(), "the circuit never opened");
}

#[tokio::test]
async fn a_callers_fault_is_not_retried_and_does_not_open_the_circuit() {
    let report = run(Scenario::RejectNotRetried).await;

    // Four orders, more than the threshold: one request each, no retry.
    assert_eq!(report.gateway.requests, 4);
    assert_eq!(report.summary.calls, 4);
    assert_eq!(report.summary.declined, 4);
    assert!(report.transitions.is_empty(), "the circuit never opened");
    for row in report.rows.iter().filter(|row| row.is_request()) {
        assert_eq!(row.attempt, Some(1));
        assert!(matches!(
            row.outcome,
            Outcome::Declined(ChargeError::Invalid { status: 422, .. })
        ));
    }
}

#[tokio::test]
async fn after_an_outage_every_order_is_paid_exactly_once() {
    let report = run(Scenario::OutageThenSettlement).await;

    assert_eq!(report.summary.paid, 6);
    assert_eq!(report.summary.pending, 0);
    assert_eq!(report.summary.lost, 0);
    // One charge per order, each asked for once: the worker never re-sent a
    // paid order, and the gateway never charged a key twice.
    let charged: BTreeSet<&str> = report.gateway.charges.keys().map(String::as_str).collect();
    let orders: BTreeSet<String> = (1..=6).map(|n| format!("order-{n}")).collect();
    assert_eq!(charged, orders.iter().map(String::as_str).collect());
    let ids: BTreeSet<&String> = report.gateway.charges.values().collect();
    assert_eq!(ids.len(), 6, "six distinct charges");
    assert_eq!(report.gateway.replays, 0);
    // During the outage, three failures and no more; after it, exactly one
    // request per order, the first of them the probe.
    assert_eq!(report.gateway.requests, 3 + 6);
    assert_eq!(probes(&report.rows), 1);
    assert_eq!(
        phases(&report),
        [
            (Phase::Closed, Phase::Open),
            (Phase::Open, Phase::HalfOpen),
            (Phase::HalfOpen, Phase::Closed),
        ]
    );
}

#[tokio::test]
async fn the_idempotency_key_makes_a_repeated_charge_harmless() {
    within(Duration::from_secs(10), "the idempotency test", async {
        let gateway = Gateway::start().await.unwrap();
        let client = PaymentClient::new(&gateway.url(), settings().deadline);
        let order = Order::numbered(1);

        let first = client.charge(&order).await.unwrap();
        let again = client.charge(&order).await.unwrap();

        assert_eq!(first, again, "the same charge comes back");
        let stats = gateway.stats();
        assert_eq!(stats.charges.len(), 1, "the card was charged once");
        assert_eq!(stats.replays, 1);
        assert_eq!(stats.requests, 2);
    })
    .await;
}

#[tokio::test]
async fn a_gateway_that_is_gone_is_a_retryable_connection_failure() {
    within(Duration::from_secs(10), "the connection test", async {
        let gateway = Gateway::start().await.unwrap();
        let url = gateway.url();
        gateway.stop().await;

        let client = PaymentClient::new(&url, settings().deadline);
        let error = client.charge(&Order::numbered(1)).await.unwrap_err();

        assert!(matches!(error, ChargeError::Connect(_)), "{error:?}");
        assert!(error.is_retryable());
    })
    .await;
}

#[tokio::test]
async fn the_admin_endpoint_switches_modes_while_the_gateway_runs() {
    within(Duration::from_secs(10), "the admin test", async {
        let gateway = Gateway::start().await.unwrap();
        let client = PaymentClient::new(&gateway.url(), settings().deadline);

        gateway.set_mode(Mode::Down).await.unwrap();
        assert_eq!(gateway.mode(), Mode::Down);
        let down = client.charge(&Order::numbered(1)).await.unwrap_err();
        assert!(matches!(down, ChargeError::Unavailable { status: 500, .. }));

        gateway.set_mode(Mode::Healthy).await.unwrap();
        client.charge(&Order::numbered(1)).await.unwrap();
        assert_eq!(
            gateway.stats().requests,
            2,
            "admin requests are not counted"
        );
    })
    .await;
}

#[tokio::test]
async fn a_trickle_of_errors_opens_a_consecutive_breaker_again_and_again() {
    let report = run(Scenario::TrickleConsecutive).await;

    let opened = report
        .transitions
        .iter()
        .filter(|t| t.to == retry_breaker_demo::kit::Phase::Open)
        .count();
    assert_eq!(opened, 2, "each burst opened the circuit");
    assert!(
        report.summary.pending >= 4,
        "orders were refused although the gateway was mostly fine"
    );
    assert_eq!(report.summary.lost, 0);
}

#[tokio::test]
async fn the_same_trickle_leaves_a_window_breaker_closed() {
    let report = run(Scenario::TrickleWindow).await;

    assert!(report.transitions.is_empty(), "the circuit never opened");
    // Only the two orders whose three attempts all fell in a burst wait for
    // settlement; the twelve others are paid.
    assert_eq!(report.summary.pending, 2);
    assert_eq!(report.summary.paid, 12);
    assert_eq!(report.gateway.requests, 18);
}

/// Steps 14-15 over HTTP: `/charges` DOWN and `/refunds` healthy behind one
/// routed client, a breaker per route through the tower layer.
#[tokio::test]
async fn a_sick_route_opens_its_own_breaker_and_the_healthy_route_is_never_refused() {
    use retry_breaker_demo::routes::{self, ROUNDS, Route};

    let report = within(
        Duration::from_secs(10),
        "the one-route-down scenario",
        routes::one_route_down(settings(), CancellationToken::new()),
    )
    .await
    .expect("the gateway starts");

    let rounds = u64::from(ROUNDS);
    assert_eq!(report.refunds.calls, rounds);
    assert_eq!(
        report.refunds.ok, rounds,
        "the healthy route is never refused: {report}"
    );
    assert_eq!(
        report.gateway_refund_requests, report.refunds.calls,
        "each refund call reaches the gateway exactly once: {report}"
    );
    assert_eq!(
        report.gateway_charge_requests,
        u64::from(settings().breaker.threshold),
        "the sick route's breaker opens at its threshold, then nothing reaches /charges: {report}"
    );
    assert_eq!(report.charges.refused, rounds - 1, "{report}");
    let phases: Vec<(Route, Phase)> = report
        .states
        .iter()
        .map(|(route, state)| (*route, state.phase()))
        .collect();
    assert_eq!(
        phases,
        [
            (Route::Charges, Phase::Open),
            (Route::Refunds, Phase::Closed)
        ],
        "only the sick route's breaker is open: {report}"
    );
    assert!(
        report.status_at_end.contains("/charges OPEN")
            && report.status_at_end.contains("/refunds CLOSED"),
        "the status line lists every route: {}",
        report.status_at_end
    );
}

/// The fleet is reference code built on the solution: not on a starter.
#[cfg(not(feature = "starter"))]
#[tokio::test]
async fn three_nodes_linked_as_a_fleet_send_the_down_gateway_fewer_requests_than_alone() {
    use retry_breaker_demo::fleet::{Mark, NODES, three_nodes};
    let report = within(
        Duration::from_secs(60),
        "one gateway, three checkout nodes",
        three_nodes(settings(), CancellationToken::new()),
    )
    .await
    .expect("the gateway could start");
    let threshold = u64::from(settings().breaker.threshold);
    let nodes = NODES as u64;
    assert_eq!(
        report.local.first_incident,
        threshold * nodes,
        "on its own, each node fails `threshold` times before it opens:\n{}",
        report.local
    );
    assert!(
        report.linked.first_incident < report.local.first_incident
            && report.linked.first_incident <= threshold + 2 * (nodes - 1),
        "F5: linked, the nodes' failures add up to the threshold, plus the calls each other \
         node makes before it hears (its run, then the trip):\n{}",
        report.linked
    );
    for run in [&report.local, &report.linked] {
        assert!(
            run.recovered(),
            "every node serves again after the outage:\n{run}"
        );
        let orders: usize = run.timelines.iter().map(Vec::len).sum();
        assert_eq!(orders, 72, "every order came back with an answer:\n{run}");
    }
    let probes = |marks: &[Mark]| {
        marks
            .iter()
            .filter(|mark| matches!(mark, Mark::ProbeFailed | Mark::ProbeServed))
            .count()
    };
    assert!(
        report
            .linked
            .timelines
            .iter()
            .map(|marks| probes(marks))
            .sum::<usize>()
            >= 1,
        "F3: the fleet probed under its lease:\n{}",
        report.linked
    );
}
