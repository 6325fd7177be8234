//! The scripted scenarios of the demo. Each one starts a fresh gateway and a
//! fresh checkout, so it tells its story from a closed circuit and a zero
//! request count, and the tests can check each one on its own.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::checkout::{BreakerSettings, Checkout, RetryPolicy};
use crate::client::PaymentClient;
use crate::gateway::{Gateway, Mode};
use crate::kit::{self, RetryBreaker, State};
use crate::orders::{Order, OrderStatus};
use crate::report::{ScenarioReport, Summary, duration};
use crate::settlement::SettlementWorker;
use crate::timeline::Timeline;

/// How the timeline's note of a gateway mode switch starts; the mode
/// follows.
pub const SWITCH_NOTE: &str = "is now ";

/// Anything that can stop a scenario from running at all (a port that
/// cannot be bound, an admin request that fails).
pub type DemoError = Box<dyn std::error::Error + Send + Sync>;

/// The knobs of every scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// How long the client waits for one request.
    pub deadline: Duration,
    /// How long SLOW holds a request: longer than the deadline.
    pub slow_delay: Duration,
    /// The breaker's threshold and cooldown.
    pub breaker: BreakerSettings,
    /// Attempts per call and their backoff.
    pub retry: RetryPolicy,
    /// The share of requests FLAKY fails, in percent.
    pub flaky_percent: u8,
    /// Which requests FLAKY fails.
    pub flaky_seed: u64,
}

impl Settings {
    /// The settings `just demo` runs with: real durations, short enough that
    /// every scenario takes a second or two.
    pub fn demo() -> Self {
        Settings {
            deadline: Duration::from_millis(250),
            slow_delay: Duration::from_millis(600),
            breaker: BreakerSettings {
                threshold: 3,
                cooldown: Duration::from_millis(500),
            },
            retry: RetryPolicy {
                attempts: 3,
                backoff_base: Duration::from_millis(25),
                backoff_cap: Duration::from_millis(200),
            },
            flaky_percent: 30,
            flaky_seed: 7,
        }
    }
}

impl fmt::Display for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "deadline {} (SLOW holds {}), threshold {}, cooldown {}, {} attempts per call, \
             backoff {}..{} exponential with jitter",
            duration(self.deadline),
            duration(self.slow_delay),
            self.breaker.threshold,
            duration(self.breaker.cooldown),
            self.retry.attempts,
            duration(self.retry.backoff_base),
            duration(self.retry.backoff_cap),
        )
    }
}

/// A gateway and a checkout wired to it: the stage of one scenario.
pub struct Rig {
    /// The fake gateway.
    pub gateway: Gateway,
    /// The checkout, with its breaker, book and timeline.
    pub checkout: Checkout,
    settings: Settings,
}

impl Rig {
    /// Starts a HEALTHY gateway on a fresh loopback port and a checkout with
    /// a closed breaker in front of it.
    ///
    /// # Errors
    ///
    /// If the gateway cannot listen, or the settings are impossible.
    pub async fn start(settings: Settings, cancel: CancellationToken) -> Result<Self, DemoError> {
        let gateway = Gateway::start().await?;
        let client = PaymentClient::new(&gateway.url(), settings.deadline);
        let checkout = Checkout::new(
            client,
            settings.breaker,
            settings.retry,
            Timeline::start(),
            cancel,
        )?;
        Ok(Rig {
            gateway,
            checkout,
            settings,
        })
    }

    /// As [`Rig::start`], with the breaker `breaker` builds (the advanced
    /// track's settings: window mode, a bulkhead).
    ///
    /// # Errors
    ///
    /// As [`Rig::start`].
    pub async fn start_built(
        settings: Settings,
        breaker: kit::Builder,
        cancel: CancellationToken,
    ) -> Result<Self, DemoError> {
        let gateway = Gateway::start().await?;
        let client = PaymentClient::new(&gateway.url(), settings.deadline);
        let checkout = Checkout::built(client, breaker, settings.retry, Timeline::start(), cancel)?;
        Ok(Rig {
            gateway,
            checkout,
            settings,
        })
    }

    /// Switches the gateway's mode over its admin endpoint, and says so in
    /// the timeline.
    ///
    /// # Errors
    ///
    /// If the admin request fails.
    pub async fn switch(&self, mode: Mode) -> Result<(), DemoError> {
        self.gateway.set_mode(mode).await?;
        self.checkout
            .timeline()
            .note("gateway", format!("{SWITCH_NOTE}{mode}"));
        Ok(())
    }

    /// Places orders `numbers`, one after the other, through the breaker;
    /// stops early on Ctrl-C.
    pub async fn place_orders(&self, numbers: impl IntoIterator<Item = u32>) {
        for n in numbers {
            if self.cancelled() {
                return;
            }
            self.checkout.place_order(Order::numbered(n)).await;
        }
    }

    /// Places orders `numbers` all at once, each through the breaker as a
    /// customer of its own would, and waits for every one.
    pub async fn place_orders_at_once(&self, numbers: impl IntoIterator<Item = u32>) {
        let mut orders: Vec<Pin<Box<dyn Future<Output = OrderStatus> + Send + '_>>> = numbers
            .into_iter()
            .map(
                |n| -> Pin<Box<dyn Future<Output = OrderStatus> + Send + '_>> {
                    Box::pin(self.checkout.place_order(Order::numbered(n)))
                },
            )
            .collect();
        std::future::poll_fn(|cx| {
            orders.retain_mut(|order| order.as_mut().poll(cx).is_pending());
            if orders.is_empty() {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await;
    }

    /// Sleeps until the open circuit's cooldown is over (at once if the
    /// circuit is not open), or until Ctrl-C.
    pub async fn wait_out_cooldown(&self) {
        if let State::Open { remaining } = self.checkout.breaker().state() {
            self.checkout.timeline().note(
                "",
                format!("(the demo waits {} for the cooldown)", duration(remaining)),
            );
            // tokio never wakes a sleep early, so the circuit's deadline has
            // passed when this returns.
            let _ = self
                .checkout
                .cancel_token()
                .run_until_cancelled(tokio::time::sleep(remaining))
                .await;
        }
    }

    /// Sums the scenario up.
    pub fn report(&self, heading: String, story: &'static str) -> ScenarioReport {
        let rows = self.checkout.timeline().rows();
        let gateway = self.gateway.stats();
        let book = self.checkout.book().counts();
        let summary = Summary::new(
            &rows,
            self.checkout.calls(),
            self.checkout.orders_placed(),
            &gateway,
            book,
        );
        ScenarioReport {
            heading,
            story,
            rows,
            transitions: self.checkout.timeline().transitions(),
            gateway,
            book,
            summary,
            interrupted: self.cancelled(),
        }
    }

    /// Writes the gateway's ledger into the timeline: how many orders it
    /// charged, and whether any order was asked for twice.
    fn note_ledger(&self) {
        let stats = self.gateway.stats();
        let paid = self.checkout.book().counts().paid;
        self.checkout.timeline().note(
            "gateway",
            format!(
                "ledger: {} charges for {paid} paid orders, {} repeated charge requests",
                stats.charges.len(),
                stats.replays
            ),
        );
    }

    fn cancelled(&self) -> bool {
        self.checkout.cancel_token().is_cancelled()
    }
}

/// The scenarios, in the order the demo runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    /// Every naive call waits out the full deadline on a SLOW gateway.
    SlowWithoutBreaker,
    /// After the threshold, a DOWN gateway gets no more requests.
    DownWithBreaker,
    /// HEALTHY again: one probe closes the circuit.
    Recovery,
    /// Still DOWN: the probe fails and the circuit reopens.
    FailedProbe,
    /// Retries with jittered backoff ride out a FLAKY gateway.
    FlakyWithRetries,
    /// A 4xx is not retried and does not count against the gateway.
    RejectNotRetried,
    /// Orders taken during an outage are all paid once it is over.
    OutageThenSettlement,
    /// A trickle of errors in short bursts opens a consecutive breaker
    /// again and again.
    TrickleConsecutive,
    /// The same trickle leaves a window breaker closed.
    TrickleWindow,
    /// A burst of orders at once against a gateway that never answers in
    /// time: every one of them reaches it before the first failure is in.
    BurstWithoutBulkhead,
    /// The same burst through a breaker with a bulkhead: only as many
    /// reach the gateway as it has room for.
    BurstWithBulkhead,
}

/// Orders placed at once in the burst scenarios.
pub const BURST: u32 = 20;

/// Attempts in flight the bulkhead of [`Scenario::BurstWithBulkhead`] lets
/// out at once: as many as the threshold, the evidence the breaker needs.
pub const BULKHEAD: u32 = 3;

/// The window of [`Scenario::TrickleWindow`]: open when half of the last 20
/// attempts failed, once at least 10 were seen.
pub const TRICKLE_WINDOW: kit::WindowConfig = kit::WindowConfig::new(20, 10, 0.5);

/// Requests per cycle of the trickle: a burst as long as the threshold,
/// then healthy requests, a quarter of them failures.
pub const TRICKLE_EVERY: u32 = 12;

impl Scenario {
    /// Every scenario, in the order the demo runs them.
    pub const ALL: [Scenario; 11] = [
        Scenario::SlowWithoutBreaker,
        Scenario::DownWithBreaker,
        Scenario::Recovery,
        Scenario::FailedProbe,
        Scenario::FlakyWithRetries,
        Scenario::RejectNotRetried,
        Scenario::OutageThenSettlement,
        Scenario::TrickleConsecutive,
        Scenario::TrickleWindow,
        Scenario::BurstWithoutBulkhead,
        Scenario::BurstWithBulkhead,
    ];

    /// A short title.
    pub fn title(self) -> &'static str {
        match self {
            Scenario::SlowWithoutBreaker => "SLOW, without a breaker",
            Scenario::DownWithBreaker => "DOWN, with the breaker",
            Scenario::Recovery => "Recovery: one probe closes the circuit",
            Scenario::FailedProbe => "A failed probe: the circuit reopens",
            Scenario::FlakyWithRetries => "FLAKY, with retries",
            Scenario::RejectNotRetried => "REJECT: the caller's fault is not retried",
            Scenario::OutageThenSettlement => "An outage, then settlement",
            Scenario::TrickleConsecutive => "A trickle of errors: a consecutive breaker flaps",
            Scenario::TrickleWindow => "The same trickle: a window breaker holds",
            Scenario::BurstWithoutBulkhead => "A burst at a dead gateway: a breaker is no bulkhead",
            Scenario::BurstWithBulkhead => "The same burst: a bulkhead lets 3 through",
        }
    }

    /// What the scenario shows.
    pub fn story(self) -> &'static str {
        match self {
            Scenario::SlowWithoutBreaker => {
                "The gateway holds every request longer than the client's deadline. A naive \
                 checkout calls it once per order,\nwith no breaker, no retry and no fallback: \
                 every customer waits out the full deadline, then the order is lost."
            }
            Scenario::DownWithBreaker => {
                "The gateway answers 500 to everything. The first order's attempts reach the \
                 threshold and open the circuit;\nthe orders after it are refused in \
                 microseconds, without a request, and accepted as pending."
            }
            Scenario::Recovery => {
                "The gateway goes DOWN long enough to open the circuit, then is HEALTHY \
                 again. The breaker cannot know that,\nso it refuses until the cooldown is \
                 over; then one probe goes through, succeeds, and closes the circuit."
            }
            Scenario::FailedProbe => {
                "The gateway stays DOWN. After the cooldown one probe goes through; it \
                 fails, the circuit opens again\nfor a whole new cooldown, and the next \
                 order is refused at once."
            }
            Scenario::FlakyWithRetries => {
                "The gateway fails a share of requests, the same ones every run (the seed \
                 fixes them). Retries with jittered\nexponential backoff get every order \
                 paid, and each success resets the failure count."
            }
            Scenario::RejectNotRetried => {
                "The gateway refuses every charge as invalid (422): the caller's fault. Each \
                 order makes exactly one request,\nand the breaker counts the answer as a \
                 sign of life, not a failure, so the circuit stays closed."
            }
            Scenario::OutageThenSettlement => {
                "Orders keep coming while the gateway is DOWN, and all are accepted as \
                 pending. Once it is HEALTHY, the\nsettlement worker charges them through \
                 the same breaker: it waits out the cooldown, one probe closes\nthe \
                 circuit, and every order ends paid exactly once."
            }
            Scenario::TrickleConsecutive => {
                "The gateway fails a quarter of its requests, in short bursts as long as the \
                 threshold. Each burst opens the\nconsecutive breaker, and good orders are \
                 refused for a whole cooldown although the gateway is mostly fine."
            }
            Scenario::TrickleWindow => {
                "The same trickle, through a breaker that opens when half of the last 20 \
                 attempts failed (at least 10 seen).\nA quarter is below half: the circuit \
                 stays closed, and only the orders caught in a burst wait for settlement."
            }
            Scenario::BurstWithoutBulkhead => {
                "Twenty orders arrive at once, one attempt each, while the gateway holds every \
                 request past the deadline.\nA CLOSED circuit admits everything until failures \
                 come back, so all twenty requests reach the dead\ngateway before the breaker \
                 has any evidence; the circuit opens only once they have timed out."
            }
            Scenario::BurstWithBulkhead => {
                "The same burst, through a breaker with room for 3 attempts in flight (as many \
                 as the threshold). The other\norders are refused at once for want of room and \
                 accepted as pending; the 3 that went out time out and open\nthe circuit, so \
                 3 requests reached the dead gateway instead of 20."
            }
        }
    }

    /// `3/7 Recovery: ...`, numbered by the scenario's place in [`Scenario::ALL`].
    pub fn heading(self) -> String {
        let number = Scenario::ALL
            .iter()
            .position(|s| *s == self)
            .map_or(0, |i| i + 1);
        format!("{number}/{} {}", Scenario::ALL.len(), self.title())
    }

    /// Runs the scenario on a fresh gateway and checkout and reports what
    /// happened. Ctrl-C (`cancel`) cuts it short; the report says so.
    ///
    /// # Errors
    ///
    /// If the gateway cannot be started or steered.
    pub async fn run(
        self,
        settings: Settings,
        cancel: CancellationToken,
    ) -> Result<ScenarioReport, DemoError> {
        // A burst is about what the first attempts do, so each order makes
        // one: a retry could otherwise slip in between the first failure and
        // the one that opens the circuit, and how many did would depend on
        // how quickly this machine hands twenty timeouts over.
        let settings = match self {
            Scenario::BurstWithoutBulkhead | Scenario::BurstWithBulkhead => Settings {
                retry: RetryPolicy {
                    attempts: 1,
                    ..settings.retry
                },
                ..settings
            },
            _ => settings,
        };
        let breaker = RetryBreaker::builder()
            .threshold(settings.breaker.threshold)
            .cooldown(settings.breaker.cooldown);
        let rig = match self {
            Scenario::TrickleWindow => {
                Rig::start_built(settings, breaker.window(TRICKLE_WINDOW), cancel).await?
            }
            Scenario::BurstWithBulkhead => {
                Rig::start_built(settings, breaker.max_in_flight(BULKHEAD), cancel).await?
            }
            _ => Rig::start(settings, cancel).await?,
        };
        self.play(&rig).await?;
        Ok(rig.report(self.heading(), self.story()))
    }

    /// The script of the scenario.
    async fn play(self, rig: &Rig) -> Result<(), DemoError> {
        let settings = rig.settings;
        match self {
            Scenario::SlowWithoutBreaker => {
                rig.switch(Mode::Slow {
                    delay: settings.slow_delay,
                })
                .await?;
                for n in 1..=4 {
                    if rig.cancelled() {
                        break;
                    }
                    rig.checkout
                        .place_order_without_breaker(Order::numbered(n))
                        .await;
                }
            }
            Scenario::DownWithBreaker => {
                rig.switch(Mode::Down).await?;
                rig.place_orders(1..=6).await;
            }
            Scenario::Recovery => {
                rig.switch(Mode::Down).await?;
                rig.place_orders([1]).await;
                rig.switch(Mode::Healthy).await?;
                rig.place_orders([2]).await;
                rig.wait_out_cooldown().await;
                rig.place_orders(3..=5).await;
            }
            Scenario::FailedProbe => {
                rig.switch(Mode::Down).await?;
                rig.place_orders([1]).await;
                rig.wait_out_cooldown().await;
                rig.place_orders([2, 3]).await;
            }
            Scenario::FlakyWithRetries => {
                rig.switch(Mode::Flaky {
                    fail_percent: settings.flaky_percent,
                    seed: settings.flaky_seed,
                })
                .await?;
                rig.place_orders(1..=8).await;
            }
            Scenario::RejectNotRetried => {
                rig.switch(Mode::Reject).await?;
                rig.place_orders(1..=4).await;
            }
            Scenario::OutageThenSettlement => {
                rig.switch(Mode::Down).await?;
                rig.place_orders(1..=6).await;
                rig.switch(Mode::Healthy).await?;
                // Generous, and still bounded: a few cooldowns cover the wait
                // and the probe many times over.
                let budget = settings.breaker.cooldown * 10 + Duration::from_secs(2);
                SettlementWorker::new(&rig.checkout, settings.retry.backoff_cap)
                    .settle(budget)
                    .await;
                rig.note_ledger();
            }
            Scenario::TrickleConsecutive | Scenario::TrickleWindow => {
                rig.switch(Mode::Bursts {
                    burst: settings.breaker.threshold,
                    every: TRICKLE_EVERY,
                })
                .await?;
                // The same script for both breakers: waiting out a cooldown
                // costs the window breaker nothing, since it never opens.
                rig.place_orders(1..=4).await;
                rig.wait_out_cooldown().await;
                rig.place_orders(5..=14).await;
            }
            Scenario::BurstWithoutBulkhead | Scenario::BurstWithBulkhead => {
                rig.switch(Mode::Slow {
                    delay: settings.slow_delay,
                })
                .await?;
                rig.place_orders_at_once(1..=BURST).await;
            }
        }
        Ok(())
    }
}
