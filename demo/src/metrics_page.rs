//! `/metrics`: the routed client's breakers, counted by the solution's
//! metrics adapter (`telemetry::meter`, docs/LIBRARY.md, O8) and served over HTTP on
//! loopback in Prometheus's text format, for a scraper or a curious `curl`.
//!
//! The `metrics` facade has one recorder per process, so the page installs
//! Prometheus's recorder once and every page of the process renders it.

use std::io;
use std::net::SocketAddr;
use std::sync::OnceLock;

use axum::Router;
use axum::routing::get;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// The process's Prometheus recorder, installed on first use.
fn recorder() -> Result<&'static PrometheusHandle, String> {
    static HANDLE: OnceLock<Result<PrometheusHandle, String>> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let recorder = PrometheusBuilder::new().build_recorder();
            let handle = recorder.handle();
            metrics::set_global_recorder(recorder)
                .map(|()| handle)
                .map_err(|e| format!("another metrics recorder is installed: {e}"))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The `/metrics` page, served until dropped.
#[derive(Debug)]
pub struct MetricsPage {
    address: SocketAddr,
    stop: CancellationToken,
}

impl MetricsPage {
    /// Installs the recorder if it is not yet, and serves the page on a free
    /// loopback port.
    ///
    /// # Errors
    ///
    /// The reason, if the recorder cannot be installed or no port bound.
    pub async fn start() -> Result<MetricsPage, String> {
        let handle = recorder()?;
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| format!("cannot bind the /metrics page: {e}"))?;
        let address = listener
            .local_addr()
            .map_err(|e| format!("the /metrics page has no address: {e}"))?;
        let router = Router::new().route("/metrics", get(move || async move { handle.render() }));
        let stop = CancellationToken::new();
        let stopped = stop.clone();
        tokio::spawn(async move {
            // The page stops with the demo; an error serving it only ends it.
            let _ = axum::serve(listener, router)
                .with_graceful_shutdown(stopped.cancelled_owned())
                .await;
        });
        Ok(MetricsPage { address, stop })
    }

    /// The page's address, `http://127.0.0.1:PORT/metrics`.
    pub fn url(&self) -> String {
        format!("http://{}/metrics", self.address)
    }

    /// The page as a scraper reads it: one `GET /metrics` over HTTP/1.1.
    ///
    /// # Errors
    ///
    /// The I/O error, or a response that is not `200 OK`.
    pub async fn scrape(&self) -> io::Result<String> {
        let mut stream = TcpStream::connect(self.address).await?;
        stream
            .write_all(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            .await?;
        let mut response = String::new();
        stream.read_to_string(&mut response).await?;
        let (head, body) = response
            .split_once("\r\n\r\n")
            .ok_or_else(|| io::Error::other("a response without a body"))?;
        if !head.starts_with("HTTP/1.1 200") {
            return Err(io::Error::other(format!("the page answered {head:?}")));
        }
        Ok(body.to_owned())
    }
}

impl Drop for MetricsPage {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// The sum of every sample of `name` in a page of Prometheus's text format
/// whose labels include `labels` (in any order); 0 if there is none.
pub fn total(page: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    page.lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(parse)
        .filter(|sample| {
            sample.name == name
                && labels.iter().all(|(k, v)| {
                    sample
                        .labels
                        .iter()
                        .any(|(found, value)| found == k && value == v)
                })
        })
        .map(|sample| sample.value)
        .sum()
}

/// One sample of a page: its metric's name, its labels and its value.
struct Sample {
    name: String,
    labels: Vec<(String, String)>,
    value: f64,
}

/// One sample line: `name{k="v",...} value`.
fn parse(line: &str) -> Option<Sample> {
    let (series, value) = line.rsplit_once(' ')?;
    let value: f64 = value.parse().ok()?;
    let (name, labels) = match series.split_once('{') {
        Some((name, rest)) => (name, rest.strip_suffix('}')?),
        None => (series, ""),
    };
    let labels = labels
        .split(',')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=')?;
            Some((k.to_owned(), v.trim_matches('"').to_owned()))
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Sample {
        name: name.to_owned(),
        labels,
        value,
    })
}

#[cfg(test)]
mod tests {
    use super::total;

    #[test]
    fn a_total_sums_every_sample_with_the_labels_asked_for() {
        let page = "# TYPE resilience_breaker_events counter\n\
            resilience_breaker_events{breaker=\"/charges\",event_name=\"rejected\",reason=\"open\"} 7\n\
            resilience_breaker_events{breaker=\"/charges\",event_name=\"rejected\",reason=\"full\"} 1\n\
            resilience_breaker_events{breaker=\"/charges\",event_name=\"admitted\"} 2\n\
            resilience_breaker_events{breaker=\"/refunds\",event_name=\"admitted\"} 5\n\
            resilience_breaker_state{breaker=\"/charges\"} 2\n";
        let events = "resilience_breaker_events";
        let charges = ("breaker", "/charges");
        assert_eq!(
            total(page, events, &[("event_name", "rejected"), charges]),
            8.0
        );
        assert_eq!(
            total(
                page,
                events,
                &[("reason", "open"), ("event_name", "rejected"), charges]
            ),
            7.0
        );
        assert_eq!(total(page, events, &[charges]), 10.0);
        assert_eq!(total(page, events, &[]), 15.0);
        assert_eq!(total(page, events, &[("breaker", "/nowhere")]), 0.0);
        assert_eq!(total(page, "resilience_breaker_state", &[charges]), 2.0);
    }
}
