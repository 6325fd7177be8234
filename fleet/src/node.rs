//! A fleet node: the local breaker, authoritative and never waiting on the
//! network, plus what the node knows of the fleet.
//!
//! The node is written without input or output of its own: admission
//! ([`FleetNode::try_acquire`]) reads only memory, and everything that
//! needs the store (publishing, reading the news, the probe lease) happens
//! in [`FleetNode::sync_blocking`], which the application runs beside its
//! calls ([`FleetNode::keep_in_sync`] starts a thread for it). A store that is down, slow or partitioned therefore delays the
//! fleet's news and nothing else.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use retry_breaker_solution::fleet::{Admission, FleetView, Heard, News, NodeId, Stamp};
use retry_breaker_solution::{Clock, Generation, Permit, Recorded, Rejected, RetryBreaker, State};

use crate::lease::Lease;
use crate::message::{Event, FleetMessage};
use crate::settings::FleetSettings;
use crate::store::{FleetStore, StoreError};
use crate::sync_loop::SyncLoop;

/// Whether the node is linked to the fleet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkStatus {
    /// Not yet linked: the node has not read the fleet's state since it
    /// started or since the store came back. It serves with its local
    /// breaker meanwhile.
    Joining,
    /// Linked: the node hears the fleet's trips and closes.
    Up,
    /// The store failed its last call: the node serves with its local
    /// breaker alone, and reads the state first when the store is back.
    Degraded,
}

/// Why a fleet node refused an attempt. Nothing is counted for a refusal,
/// and the dependency was not called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// Another node's breaker (or the fleet's last probe) opened the fleet,
    /// and its cooldown has `remaining` left.
    #[error(
        "the fleet's breaker is open ({tripped_by} tripped it), {remaining:?} of its cooldown left"
    )]
    FleetOpen {
        /// What is left of the fleet's cooldown.
        remaining: Duration,
        /// The node whose message opened the fleet.
        tripped_by: NodeId,
    },
    /// The fleet's cooldown is over and one node, the holder of the probe
    /// lease, is probing; the others wait for its outcome.
    #[error("the fleet's cooldown is over and another node is probing; try again shortly")]
    AwaitingFleetProbe,
    /// The node's own breaker refused.
    #[error(transparent)]
    Local(#[from] Rejected),
}

/// What applying a fleet message did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Applied {
    /// A newer trip: the node counts the sender as open.
    Opened,
    /// A newer close: the fleet's probe succeeded.
    Closed,
    /// Another node's newer run of failures in the current epoch: counted
    /// towards the fleet's total (F5).
    Counted,
    /// Not newer than what the node knows (a duplicate, a replay, a message
    /// overtaken on the way), or about another key: nothing changed.
    Fenced,
}

/// Counts of what the node did, for tests and reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct FleetStats {
    /// Messages this node made for the fleet (trips, closes and runs of
    /// failures), whether or not they reached the store: see `dropped`.
    pub published: u64,
    /// Of those, the ones never sent because they grew old in the outbox
    /// while the store was away: a trip whose cooldown was over, or a run of
    /// failures no longer news (F4, F5).
    pub dropped: u64,
    /// Messages applied.
    pub applied: u64,
    /// Messages fenced as stale, duplicated or for another key.
    pub fenced: u64,
    /// Lines from the store that were not fleet messages.
    pub malformed: u64,
    /// Fleet probes admitted under the lease.
    pub probes: u64,
    /// Outcomes that came too late to speak for the fleet: a probe whose
    /// lease had expired, or an attempt admitted before newer fleet news.
    pub fenced_outcomes: u64,
    /// Store calls that failed or timed out.
    pub store_errors: u64,
    /// Times the node read the fleet's state to (re)join.
    pub joins: u64,
    /// Lease requests the store withheld because it had lost its keys
    /// ([`StoreError::Forgot`]).
    pub forgotten: u64,
}

/// Another node's run of failures, as last heard (F5).
#[derive(Debug, Clone, Copy)]
struct Run {
    report: u64,
    failures: u32,
    /// When the run stops being news, on this node's clock.
    until: Duration,
}

#[derive(Debug, Clone)]
enum Outgoing {
    /// A message, and for a trip (or a run of failures) when its cooldown
    /// (or its time as news) ends on this node's clock, so that the rest
    /// of it is counted when it is actually sent.
    Publish(FleetMessage, Option<Duration>),
    Release(Lease),
}

#[derive(Debug)]
struct Fleet {
    /// This node, so that it does not count its own runs twice.
    id: NodeId,
    /// The fleet's trips and closes as this node knows them (F2): the
    /// newest stamp applied or sent, and who reported open since the last
    /// close.
    view: FleetView,
    /// The other nodes' newest runs of failures in the current epoch (F5).
    runs: BTreeMap<NodeId, Run>,
    /// This node's failures in a row since the fleet's last trip or close,
    /// counted from attempts admitted in the current epoch (F5).
    own_run: u32,
    /// When this node's run stops being news: one cooldown after its last
    /// failure.
    own_run_until: Duration,
    /// When the node last read the news: anything read now may have waited
    /// in the store since then.
    news_since: Duration,
    /// The run this node last sent, so that only a change is sent.
    own_run_sent: u32,
    /// This node's reports of its run so far, numbering each.
    own_reports: u64,
    lease: Option<Lease>,
    /// The stamp a fleet probe was admitted for, until it reports.
    probe_out: Option<Stamp>,
    /// The local generation whose trip was last published, so that two
    /// threads that see the same trip publish it once.
    published_generation: Generation,
    /// Probe leases asked for so far, numbering each request's owner token.
    lease_requests: u64,
    /// When the store began answering that it had lost its keys, and when
    /// it last did: one episode while those answers come less than two
    /// probe deadlines apart.
    forgotten_since: Option<Duration>,
    forgotten_last: Duration,
    outbox: VecDeque<Outgoing>,
    link: LinkStatus,
    stats: FleetStats,
}

impl Fleet {
    /// The newest stamp applied or sent.
    fn latest(&self) -> Stamp {
        self.view.latest()
    }

    /// This node's run while it is news (F5).
    fn own_fresh_run(&self, now: Duration) -> u32 {
        if now < self.own_run_until {
            self.own_run
        } else {
            0
        }
    }

    /// What the fleet's nodes have counted in a row, this node included. A
    /// run is news for one cooldown after its last failure and counts
    /// nothing after that, so a node that died or went quiet mid-run cannot
    /// hold the fleet near its count for good.
    fn shared_run(&self, now: Duration) -> u32 {
        self.runs
            .values()
            .filter(|run| now < run.until)
            .map(|run| run.failures)
            .fold(self.own_fresh_run(now), u32::saturating_add)
    }

    fn apply(&mut self, message: &FleetMessage, now: Duration) -> Applied {
        let applied = match message.event {
            Event::Trip { cooldown_left } => {
                self.hear(message.stamp, News::Trip { cooldown_left }, now)
            }
            Event::Close => self.hear(message.stamp, News::Close, now),
            Event::Failures {
                run,
                report,
                fresh_for,
            } => self.count(message.sender(), message.stamp, run, report, fresh_for),
        };
        match applied {
            Applied::Fenced => self.stats.fenced += 1,
            Applied::Opened | Applied::Closed | Applied::Counted => self.stats.applied += 1,
        }
        applied
    }

    /// A trip or a close: the view decides whether it is news (F2).
    fn hear(&mut self, stamp: Stamp, news: News, now: Duration) -> Applied {
        let newest_before = self.latest();
        let applied = match self.view.hear(stamp, news, now) {
            Heard::Opened => Applied::Opened,
            Heard::Closed => Applied::Closed,
            Heard::Fenced => return Applied::Fenced,
        };
        // A trip or a close that counts though newer news came first (a
        // quorum's older trip, a close overtaken by a new incident) moves
        // no epoch: the count and the lease stand.
        if self.latest() == newest_before {
            return applied;
        }
        // A trip or a close starts the count afresh, everywhere (F5).
        self.runs.clear();
        self.own_run = 0;
        self.own_run_sent = 0;
        // A lease answers for one fleet state: newer news makes it moot. A
        // probe already sent under it keeps it, though, until it reports or
        // its deadline passes: it is still calling the dependency, and
        // handing the lease on now would put two probes in flight (F3).
        if self.probe_out.is_none() {
            let latest = self.latest();
            if let Some(lease) = self.lease.take_if(|lease| lease.stamp() != latest) {
                self.outbox.push_back(Outgoing::Release(lease));
            }
        }
        applied
    }

    /// Another node's run of failures (F5): it counts only in the epoch it
    /// was counted in, only once per report, and never this node's own,
    /// echoed back. It moves no stamp, so no lease or admitted attempt is
    /// made moot by it.
    fn count(
        &mut self,
        sender: NodeId,
        stamp: Stamp,
        failures: u32,
        report: u64,
        fresh_for: Duration,
    ) -> Applied {
        let newer = self.runs.get(&sender).is_none_or(|run| report > run.report);
        if stamp.epoch != self.latest().epoch || sender == self.id || !newer {
            return Applied::Fenced;
        }
        self.runs.insert(
            sender,
            Run {
                report,
                failures,
                // Counted from the last read, not from now: a message that
                // waited in the store is older than it looks, and old
                // failures must not count as new (a trip's cooldown may err
                // long; a run must not).
                until: self.news_since.saturating_add(fresh_for),
            },
        );
        Applied::Counted
    }

    fn send(&mut self, message: FleetMessage, now: Duration) {
        self.apply(&message, now);
        self.stats.published += 1;
        let until = match message.event {
            Event::Trip { cooldown_left } => Some(now.saturating_add(cooldown_left)),
            Event::Close | Event::Failures { .. } => None,
        };
        self.outbox.push_back(Outgoing::Publish(message, until));
    }
}

/// One node's breaker for one dependency, linked to the rest of the fleet.
///
/// Admission is local-first: the node refuses while the fleet is open,
/// admits one fleet probe only under the probe lease, and otherwise lets its
/// own [`RetryBreaker`] decide, exactly as without a fleet. News goes
/// through the store at each [`sync_blocking`](FleetNode::sync_blocking),
/// which the application runs beside its calls, on a timer
/// ([`keep_in_sync`](FleetNode::keep_in_sync) does it on a thread of its
/// own); the example below calls it by hand, on the manual clock.
///
/// ```
/// use std::time::Duration;
/// use retry_breaker_fleet::{FleetNode, FleetSettings, MemoryStore, NodeId, Refused};
/// use retry_breaker_solution::{ManualClock, RetryBreaker};
///
/// let clock = ManualClock::new();
/// let store = MemoryStore::new(clock.clone());
/// let settings = FleetSettings::new(Duration::from_secs(1))?;
/// let node = |id| -> Result<_, Box<dyn std::error::Error>> {
///     let breaker = RetryBreaker::new(2, Duration::from_secs(10), clock.clone())?;
///     Ok(FleetNode::new(NodeId(id), "payments", breaker, settings)?)
/// };
/// let (a, b) = (node(1)?, node(2)?);
/// store.subscribe(a.id());
/// store.subscribe(b.id());
/// a.sync_blocking(&store);
/// b.sync_blocking(&store);
///
/// // Node a sees two failures and trips; after one exchange, b refuses too.
/// a.try_acquire()?.failure();
/// a.try_acquire()?.failure();
/// a.sync_blocking(&store);
/// b.sync_blocking(&store);
/// assert!(matches!(b.try_acquire(), Err(Refused::FleetOpen { .. })));
///
/// // At the end of the cooldown, one node takes the lease and probes.
/// clock.advance(Duration::from_secs(10));
/// b.sync_blocking(&store);
/// a.sync_blocking(&store);
/// let probe = b.try_acquire()?;
/// assert_eq!(a.try_acquire().unwrap_err(), Refused::AwaitingFleetProbe);
/// probe.success();
/// b.sync_blocking(&store);
/// a.sync_blocking(&store);
/// assert!(a.try_acquire().is_ok());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct FleetNode<C> {
    id: NodeId,
    key: String,
    breaker: RetryBreaker<C>,
    settings: FleetSettings,
    fleet: Mutex<Fleet>,
}

impl<C: Clock> FleetNode<C> {
    /// Node `id`'s breaker for the dependency named `key`, around its local
    /// `breaker`. The node starts [`LinkStatus::Joining`]: it serves with
    /// its local breaker until its first [`sync_blocking`](FleetNode::sync_blocking) has read
    /// the fleet's state.
    ///
    /// # Errors
    ///
    /// [`KeyError`] for an empty key or one with whitespace, which the
    /// one-line messages could not carry.
    pub fn new(
        id: NodeId,
        key: &str,
        breaker: RetryBreaker<C>,
        settings: FleetSettings,
    ) -> Result<Self, KeyError> {
        if key.is_empty() || key.chars().any(char::is_whitespace) {
            return Err(KeyError(key.to_owned()));
        }
        Ok(FleetNode {
            id,
            key: key.to_owned(),
            settings,
            fleet: Mutex::new(Fleet {
                id,
                view: FleetView::new(settings.quorum()),
                runs: BTreeMap::new(),
                own_run: 0,
                own_run_until: Duration::ZERO,
                news_since: Duration::ZERO,
                own_run_sent: 0,
                own_reports: 0,
                lease: None,
                probe_out: None,
                published_generation: breaker.generation(),
                lease_requests: 0,
                forgotten_since: None,
                forgotten_last: Duration::ZERO,
                outbox: VecDeque::new(),
                link: LinkStatus::Joining,
                stats: FleetStats::default(),
            }),
            breaker,
        })
    }

    /// This node's id.
    pub fn id(&self) -> NodeId {
        self.id
    }

    /// The dependency's name, the fleet breaker's key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The local breaker.
    pub fn breaker(&self) -> &RetryBreaker<C> {
        &self.breaker
    }

    /// Whether the node is linked to the fleet.
    pub fn link_status(&self) -> LinkStatus {
        self.fleet().link
    }

    /// Whether the node serves with its local breaker alone, because it has
    /// not (re)read the fleet's state since the store last failed (F4).
    pub fn is_degraded(&self) -> bool {
        self.link_status() != LinkStatus::Up
    }

    /// What the node has done so far.
    pub fn stats(&self) -> FleetStats {
        self.fleet().stats
    }

    /// Whether the node holds the fleet's probe lease, valid now.
    pub fn holds_lease(&self) -> bool {
        let now = self.breaker.clock().now();
        self.fleet()
            .lease
            .as_ref()
            .is_some_and(|lease| lease.is_valid(now))
    }

    /// Whether the node, as far as it knows, has the fleet open: refusing
    /// until the cooldown ends, or waiting for the fleet's probe after it.
    pub fn fleet_is_open(&self) -> bool {
        self.fleet().view.open_until().is_some()
    }

    /// Asks to admit one attempt, reading memory only (F1).
    ///
    /// # Errors
    ///
    /// [`Refused`]: the fleet is open, its probe is another node's, or the
    /// local breaker refused.
    pub fn try_acquire(&self) -> Result<FleetPermit<'_, C>, Refused> {
        let now = self.breaker.clock().now();
        let mut fleet = self.fleet();
        let stamp = fleet.latest();
        let linked = fleet.link == LinkStatus::Up;
        let lease = fleet.lease.as_ref().map(Lease::terms);
        let admission = fleet
            .view
            .admission(now, linked, lease, fleet.probe_out.is_some());
        match (admission, fleet.lease.clone()) {
            (
                Admission::Refuse {
                    remaining,
                    tripped_by,
                },
                _,
            ) => Err(Refused::FleetOpen {
                remaining,
                tripped_by,
            }),
            (Admission::Local, _) => self.local(stamp),
            (Admission::Probe, Some(lease)) => match self.breaker.try_acquire() {
                Ok(permit) => {
                    fleet.probe_out = Some(stamp);
                    fleet.stats.probes += 1;
                    Ok(FleetPermit {
                        node: self,
                        permit,
                        kind: Kind::Probe(lease),
                    })
                }
                Err(rejected) => {
                    // The local breaker is still open: let another node
                    // probe rather than hold the fleet up.
                    if let Some(lease) = fleet.lease.take() {
                        fleet.outbox.push_back(Outgoing::Release(lease));
                    }
                    Err(Refused::Local(rejected))
                }
            },
            (Admission::AwaitProbe | Admission::Probe, _) => Err(Refused::AwaitingFleetProbe),
        }
    }

    fn local(&self, stamp: Stamp) -> Result<FleetPermit<'_, C>, Refused> {
        let permit = self.breaker.try_acquire()?;
        Ok(FleetPermit {
            node: self,
            permit,
            kind: Kind::Local(stamp),
        })
    }

    /// Applies one fleet message (from [`sync_blocking`](FleetNode::sync_blocking), or by
    /// hand in a test). Only a message newer than the node's view changes
    /// anything (F2).
    pub fn apply(&self, message: &FleetMessage) -> Applied {
        if message.key != self.key {
            self.fleet().stats.fenced += 1;
            return Applied::Fenced;
        }
        let now = self.breaker.clock().now();
        self.fleet().apply(message, now)
    }

    /// Keeps `node` in sync with `store` on a thread of its own, one
    /// exchange every `period`, until the returned [`SyncLoop`] is stopped or
    /// dropped: the way to run [`sync_blocking`](FleetNode::sync_blocking)
    /// beside the calls, so that none of them waits on the store (F1). It
    /// may be started from anywhere, a tokio task included, and blocks no
    /// task of the caller's.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use retry_breaker_fleet::{FleetNode, FleetSettings, LinkStatus, MemoryStore, NodeId};
    /// use retry_breaker_solution::{RetryBreaker, SystemClock};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let clock = SystemClock::new();
    /// let store = Arc::new(MemoryStore::new(clock.clone()));
    /// store.subscribe(NodeId(1));
    /// let breaker = RetryBreaker::new(5, Duration::from_secs(10), clock)?;
    /// let settings = FleetSettings::new(Duration::from_secs(1))?;
    /// let node = Arc::new(FleetNode::new(NodeId(1), "payments", breaker, settings)?);
    ///
    /// let syncing = tokio::spawn({
    ///     let (node, store) = (Arc::clone(&node), Arc::clone(&store));
    ///     async move { FleetNode::keep_in_sync(node, store, Duration::from_millis(5)) }
    /// })
    /// .await??;
    /// while node.link_status() != LinkStatus::Up {
    ///     tokio::time::sleep(Duration::from_millis(1)).await;
    /// }
    /// node.try_acquire()?.success();
    /// syncing.stop();
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// The operating system's, if it cannot start a thread.
    pub fn keep_in_sync<S>(
        node: Arc<Self>,
        store: S,
        period: Duration,
    ) -> std::io::Result<SyncLoop<S>>
    where
        C: Send + Sync + 'static,
        S: FleetStore + Send + 'static,
    {
        SyncLoop::start(node, store, period)
    }

    /// Exchanges news with the store: reads the fleet's state first if the
    /// node is (re)joining, sends what the node has to say, applies what
    /// the other nodes said, and asks for the probe lease when the fleet's
    /// cooldown is over. Any store error leaves the node
    /// [`LinkStatus::Degraded`] until a later call reads the state again.
    ///
    /// Never call it while admitting an attempt: it waits on the store
    /// (within the store's bound).
    pub fn sync_blocking(&self, store: &impl FleetStore) -> LinkStatus {
        match self.exchange(store) {
            Ok(()) => LinkStatus::Up,
            Err(()) => {
                let mut fleet = self.fleet();
                fleet.stats.store_errors += 1;
                if fleet.link == LinkStatus::Up {
                    fleet.link = LinkStatus::Degraded;
                }
                fleet.link
            }
        }
    }

    fn exchange(&self, store: &impl FleetStore) -> Result<(), ()> {
        let rejoining = self.link_status() != LinkStatus::Up;
        if rejoining {
            // Pub/sub delivers at most once: what was said while the node
            // was away is only in the stored state (F4).
            let state = store.read_state(self.id, &self.key).map_err(drop)?;
            if let Some(state) = state {
                self.apply(&state);
            }
        }
        self.report_run(&mut self.fleet(), self.breaker.clock().now());
        loop {
            let Some(outgoing) = self.fleet().outbox.pop_front() else {
                break;
            };
            let now = self.breaker.clock().now();
            let sent = match &outgoing {
                // A trip kept while the store was away whose cooldown is
                // over by now opens nothing: sent, it would only outrank
                // news decided since. A run of failures that old is old
                // news too (F5).
                Outgoing::Publish(_, Some(until)) if *until <= now => {
                    self.fleet().stats.dropped += 1;
                    Ok(())
                }
                Outgoing::Publish(message, until) => {
                    let mut message = message.clone();
                    if let Some(until) = until {
                        // What is left is counted when the message leaves.
                        let left = until.saturating_sub(now);
                        match &mut message.event {
                            Event::Trip { cooldown_left } => *cooldown_left = left,
                            Event::Failures { fresh_for, .. } => *fresh_for = left,
                            Event::Close => {}
                        }
                    }
                    store.publish(self.id, &message)
                }
                Outgoing::Release(lease) => store.release_lease(self.id, lease).map(drop),
            };
            if sent.is_err() {
                // Kept to be sent on rejoining; if the fleet moved on
                // meanwhile, the others fence it.
                self.fleet().outbox.push_front(outgoing);
                return Err(());
            }
        }
        for received in store.receive(self.id).map_err(drop)? {
            match received {
                Ok(message) => {
                    self.apply(&message);
                }
                Err(_) => self.fleet().stats.malformed += 1,
            }
        }
        let now = self.breaker.clock().now();
        let mut fleet = self.fleet();
        fleet.news_since = now;
        self.trip_on_shared_count(&mut fleet, now);
        drop(fleet);
        if rejoining {
            // Linked only once the news flows too (a store may answer
            // before its subscription is back).
            let mut fleet = self.fleet();
            fleet.link = LinkStatus::Up;
            fleet.stats.joins += 1;
        }
        self.ask_for_lease(store)
    }

    /// At the end of the fleet's cooldown, asks for the probe lease; a node
    /// that does not get it reads the state, so a lost close cannot leave
    /// it waiting for good.
    fn ask_for_lease(&self, store: &impl FleetStore) -> Result<(), ()> {
        let now = self.breaker.clock().now();
        let request = {
            let mut fleet = self.fleet();
            let due = matches!(fleet.view.open_until(), Some((until, _)) if now >= until);
            if let Some(lease) = fleet.lease.take_if(|lease| !lease.is_valid(now)) {
                // The probe's deadline has passed: whatever it reports now
                // is fenced, and the fleet may probe again.
                fleet.probe_out = None;
                fleet.outbox.push_back(Outgoing::Release(lease));
            }
            if !due || fleet.lease.is_some() {
                return Ok(());
            }
            fleet.lease_requests += 1;
            Lease::new(
                &self.key,
                self.id,
                fleet.latest(),
                fleet.lease_requests,
                self.settings.probe_deadline(),
                now,
            )
            .map_err(drop)?
        };
        let granted = match store.acquire_lease(self.id, &request) {
            Ok(granted) => granted,
            Err(StoreError::Forgot(_)) => return self.wait_out_a_forgetful_store(now),
            Err(_) => return Err(()),
        };
        if granted {
            let mut fleet = self.fleet();
            if fleet.latest() == request.stamp() {
                fleet.lease = Some(request);
            } else {
                fleet.outbox.push_back(Outgoing::Release(request));
            }
        } else if let Some(state) = store.read_state(self.id, &self.key).map_err(drop)? {
            self.apply(&state);
        }
        Ok(())
    }

    /// The store has lost its keys and withholds the lease (F3). Within one
    /// probe deadline of its first saying so, a probe granted before may
    /// still be out, and the node waits for it as for any other probe. A
    /// store that says so again after that keeps forgetting, and a node
    /// that went on waiting would fail its calls because of the store: it
    /// is degraded, and serves with its local breaker (F4), until the store
    /// has said nothing of the kind for two probe deadlines.
    fn wait_out_a_forgetful_store(&self, now: Duration) -> Result<(), ()> {
        let deadline = self.settings.probe_deadline();
        let mut fleet = self.fleet();
        fleet.stats.forgotten += 1;
        if now.saturating_sub(fleet.forgotten_last) >= deadline.saturating_mul(2) {
            fleet.forgotten_since = None;
        }
        fleet.forgotten_last = now;
        let since = *fleet.forgotten_since.get_or_insert(now);
        if now.saturating_sub(since) < deadline {
            Ok(())
        } else {
            Err(())
        }
    }

    /// Records the outcome of an attempt the node admitted.
    fn finish(&self, permit: Permit<'_, C>, kind: Kind, failed: bool) -> Recorded {
        let admitted_in = permit.generation();
        let recorded = if failed {
            permit.failure()
        } else {
            permit.success()
        };
        let now = self.breaker.clock().now();
        let tripped = self.tripped_since(admitted_in);
        let mut fleet = self.fleet();
        match kind {
            Kind::Probe(lease) => {
                if fleet.probe_out == Some(lease.stamp()) {
                    fleet.probe_out = None;
                }
                let current = fleet.lease.as_ref() == Some(&lease)
                    && fleet.view.speaks_for_fleet(lease.terms(), now);
                if !current {
                    // F3: the lease expired, or the fleet moved on: this
                    // outcome no longer speaks for the fleet. The lease, if
                    // still this node's, goes back for the next probe.
                    fleet.stats.fenced_outcomes += 1;
                    if let Some(lease) = fleet.lease.take_if(|held| *held == lease) {
                        fleet.outbox.push_back(Outgoing::Release(lease));
                    }
                    return recorded;
                }
                fleet.lease = None;
                let event = if failed {
                    Event::Trip {
                        cooldown_left: self.breaker.cooldown(),
                    }
                } else {
                    Event::Close
                };
                let message = FleetMessage {
                    key: self.key.clone(),
                    stamp: fleet.latest().after(self.id),
                    event,
                };
                fleet.send(message, now);
                // After a failed probe the lease stays in the store until it
                // expires: a node that has not heard of the new trip yet is
                // refused the lease and reads the state instead, so the
                // dead dependency gets no second probe this cooldown. After
                // a good one it goes back at once, so that a trip that
                // outranks this close is probed again without waiting.
                if !failed {
                    fleet.outbox.push_back(Outgoing::Release(lease));
                }
                if let Some(generation) = tripped {
                    fleet.published_generation = generation;
                }
            }
            Kind::Local(stamp) => {
                // F5: only an outcome of the current epoch, and counted by
                // the local breaker, is part of this node's run.
                if stamp == fleet.latest() && matches!(recorded, Recorded::Counted) {
                    if failed {
                        fleet.own_run = fleet.own_fresh_run(now).saturating_add(1);
                        fleet.own_run_until = now.saturating_add(self.breaker.cooldown());
                    } else {
                        fleet.own_run = 0;
                    }
                }
                let Some(generation) = tripped else {
                    self.trip_on_shared_count(&mut fleet, now);
                    return recorded;
                };
                if generation <= fleet.published_generation {
                    return recorded;
                }
                fleet.published_generation = generation;
                if stamp != fleet.latest() {
                    // Admitted before newer fleet news: the fleet already
                    // knows better than this outcome (F2).
                    fleet.stats.fenced_outcomes += 1;
                    return recorded;
                }
                let State::Open { remaining } = self.breaker.state() else {
                    return recorded;
                };
                let message = FleetMessage {
                    key: self.key.clone(),
                    stamp: fleet.latest().after(self.id),
                    event: Event::Trip {
                        cooldown_left: remaining,
                    },
                };
                fleet.send(message, now);
            }
        }
        recorded
    }

    /// F5: once the nodes' runs add up to the shared count while the fleet
    /// is closed, this node sends the fleet's trip, for a whole cooldown, as
    /// its own breaker's trip would be sent.
    fn trip_on_shared_count(&self, fleet: &mut Fleet, now: Duration) {
        let Some(threshold) = self.settings.shared_count() else {
            return;
        };
        let cooldown = self.breaker.cooldown();
        if fleet.view.open_until().is_some() || fleet.shared_run(now) < threshold {
            return;
        }
        let message = FleetMessage {
            key: self.key.clone(),
            stamp: fleet.latest().after(self.id),
            event: Event::Trip {
                cooldown_left: cooldown,
            },
        };
        fleet.send(message, now);
    }

    /// F5: queues this node's run for the others when it changed since it
    /// was last sent, while the fleet is closed (an open fleet counts
    /// nothing).
    fn report_run(&self, fleet: &mut Fleet, now: Duration) {
        let counting = self.settings.shared_count().is_some();
        let run = fleet.own_fresh_run(now);
        if !counting || run == fleet.own_run_sent || fleet.view.open_until().is_some() {
            return;
        }
        fleet.own_reports += 1;
        fleet.own_run_sent = run;
        fleet.stats.published += 1;
        // What is left of the run's time as news travels, as what is left
        // of a cooldown does: nodes share no clock. A run of 0 (a success)
        // is always worth sending: it ends the run the others heard.
        let until = (run > 0).then_some(fleet.own_run_until);
        let message = FleetMessage {
            key: self.key.clone(),
            stamp: Stamp::new(fleet.latest().epoch, self.id),
            event: Event::Failures {
                run,
                report: fleet.own_reports,
                fresh_for: Duration::ZERO,
            },
        };
        fleet.outbox.push_back(Outgoing::Publish(message, until));
    }

    /// The local breaker's generation, if it opened after `admitted_in`.
    fn tripped_since(&self, admitted_in: Generation) -> Option<Generation> {
        let generation = self.breaker.generation();
        let open = matches!(self.breaker.state(), State::Open { .. });
        (open && generation > admitted_in).then_some(generation)
    }

    fn fleet(&self) -> MutexGuard<'_, Fleet> {
        // Every critical section checks before it changes, and runs no user
        // code: the data stays sound after a panic elsewhere.
        self.fleet.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<C: Clock> fmt::Debug for FleetNode<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fleet = self.fleet();
        f.debug_struct("FleetNode")
            .field("id", &self.id)
            .field("key", &self.key)
            .field("latest", &fleet.latest())
            .field("open", &fleet.view.open_until())
            .field("link", &fleet.link)
            .finish_non_exhaustive()
    }
}

#[derive(Debug)]
enum Kind {
    /// Admitted by the local breaker while the fleet's view had `Stamp`.
    Local(Stamp),
    /// The fleet's probe, under this lease.
    Probe(Lease),
}

/// Leave to call the dependency once, from a [`FleetNode`]. Report the
/// outcome with [`success`](FleetPermit::success) or
/// [`failure`](FleetPermit::failure); a permit dropped unreported counts
/// nothing, as a local [`Permit`] does. A fleet probe dropped unreported
/// still holds the fleet's probe until its lease expires: the node cannot
/// tell a dropped probe from one still calling the dependency.
#[must_use = "call the dependency, then report on the permit"]
pub struct FleetPermit<'a, C: Clock> {
    node: &'a FleetNode<C>,
    permit: Permit<'a, C>,
    kind: Kind,
}

impl<C: Clock> FleetPermit<'_, C> {
    /// Whether this attempt is the fleet's probe.
    pub fn is_fleet_probe(&self) -> bool {
        matches!(self.kind, Kind::Probe(_))
    }

    /// For the fleet's probe, the time on the node's clock by which it must
    /// report: its lease's end, which the store counted from when it
    /// granted the lease, not from when the probe was admitted. An outcome
    /// reported later is fenced, and another node may be probing by then,
    /// so bound the call to the dependency by it (F3). `None` for an
    /// attempt the local breaker admitted, which has no fleet deadline.
    ///
    /// ```
    /// use std::time::Duration;
    /// use retry_breaker_fleet::{FleetNode, FleetSettings, MemoryStore, NodeId};
    /// use retry_breaker_solution::{Clock, ManualClock, RetryBreaker};
    ///
    /// let clock = ManualClock::new();
    /// let store = MemoryStore::new(clock.clone());
    /// let settings = FleetSettings::new(Duration::from_secs(1))?;
    /// let breaker = RetryBreaker::new(1, Duration::from_secs(10), clock.clone())?;
    /// let node = FleetNode::new(NodeId(1), "payments", breaker, settings)?;
    /// store.subscribe(node.id());
    /// node.sync_blocking(&store);
    /// let attempt = node.try_acquire()?;
    /// assert_eq!(attempt.probe_deadline(), None);
    /// attempt.failure();
    ///
    /// // The lease is granted at 10 s; the probe comes 400 ms later and has
    /// // what is left of the lease's second.
    /// clock.advance(Duration::from_secs(10));
    /// node.sync_blocking(&store);
    /// clock.advance(Duration::from_millis(400));
    /// let probe = node.try_acquire()?;
    /// assert_eq!(probe.probe_deadline(), Some(Duration::from_secs(11)));
    /// # probe.success();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn probe_deadline(&self) -> Option<Duration> {
        match &self.kind {
            Kind::Probe(lease) => Some(lease.expires()),
            Kind::Local(_) => None,
        }
    }

    /// The dependency answered: records it locally, and, for the fleet's
    /// probe, closes the fleet.
    pub fn success(self) -> Recorded {
        self.node.finish(self.permit, self.kind, false)
    }

    /// The dependency failed: records it locally, publishes the trip if the
    /// local breaker opened, and, for the fleet's probe, reopens the fleet.
    pub fn failure(self) -> Recorded {
        self.node.finish(self.permit, self.kind, true)
    }
}

impl<C: Clock> fmt::Debug for FleetPermit<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FleetPermit")
            .field("node", &self.node.id)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

/// A key the fleet's messages cannot carry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a fleet key must be non-empty and without whitespace, not {0:?}")]
pub struct KeyError(pub String);
