//! The fleet store over Redis: pub/sub carries the trips and closes, a key
//! holds the current state (pub/sub delivers at most once, so a node that
//! (re)subscribes reads it first), and the probe lease is `SET key owner NX
//! PX ttl`, released by a compare-and-delete script.
//!
//! The client is redis-rs, async on a small tokio runtime of the store's
//! own; [`FleetStore`]'s calls hand each exchange to that runtime and wait
//! for its answer on a channel, within the store's bound, from the thread
//! that syncs the node (see [`FleetNode::keep_in_sync`](crate::FleetNode::keep_in_sync)),
//! never from an admission. They never call `block_on`, so a tokio task
//! may call them too.
//!
//! # What the lease needs from Redis
//!
//! The lease is safe while Redis keeps what it acknowledged. It also stays
//! safe when Redis loses everything at once (`FLUSHALL`, a restart without
//! persistence, a failover to a replica that never had the fleet's keys):
//! the fleet's witness, a key with no expiry, goes with the rest, and a store
//! without it grants no lease for one probe deadline, by which time any
//! probe granted before has ended. What it cannot see is a store that lost
//! the lease alone: eviction (run Redis with `maxmemory-policy noeviction`,
//! or with memory to spare) or a failover to a replica that had the witness
//! but missed the grant (asynchronous replication; `WAIT` after each grant
//! would close it, at a round trip's cost, and is not done here).

use std::collections::VecDeque;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures_util::StreamExt;
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Client, Script};

use crate::lease::{Lease, ttl_millis};
use crate::message::{Event, FleetMessage, MessageError};
use crate::store::{FleetStore, StoreError};
use retry_breaker_solution::fleet::NodeId;

/// Stores `ARGV[1]` as the state only if its stamp is newer than the stored
/// one's, so a late publish never rolls the state back; a trip also sets
/// the cooldown marker, which expires with the cooldown. Publishes in any
/// case: the nodes fence what is stale.
const PUBLISH: &str = r"
local newer = true
local stored = redis.call('GET', KEYS[1])
if stored then
  local epoch, node = string.match(stored, '^fleet1 %a+ %S+ (%d+) (%d+)')
  if epoch then
    local e, n = tonumber(epoch), tonumber(node)
    local ne, nn = tonumber(ARGV[2]), tonumber(ARGV[3])
    newer = ne > e or (ne == e and nn > n)
  end
end
if newer then
  redis.call('SET', KEYS[1], ARGV[1])
  if tonumber(ARGV[4]) > 0 then
    redis.call('SET', KEYS[2], '1', 'PX', ARGV[4])
  else
    redis.call('DEL', KEYS[2])
  end
end
redis.call('PUBLISH', ARGV[5], ARGV[1])
return newer and 1 or 0
";

/// Grants the lease (`KEYS[1]`, owner `ARGV[1]`, time to live `ARGV[2]`
/// ms) if no one holds it. If the fleet's witness (`KEYS[2]`) is gone, the
/// store has forgotten its keys and a lease granted before may still be
/// held: the witness goes back, with an ownerless lease for one time to live,
/// nobody gets the lease until it expires, and the answer is -1.
const ACQUIRE: &str = r"
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('SET', KEYS[2], '1')
  redis.call('SET', KEYS[1], '', 'PX', ARGV[2])
  return -1
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
return 0
";

/// Deletes the lease only if its owner still holds it.
const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
";

/// The fleet store over one Redis server, for one node.
///
/// ```no_run
/// use std::time::Duration;
/// use retry_breaker_fleet::{NodeId, RedisStore};
///
/// let store = RedisStore::connect("redis://127.0.0.1:6379", "payments", Duration::from_millis(100))?;
/// # Ok::<(), retry_breaker_fleet::RedisStoreError>(())
/// ```
pub struct RedisStore {
    /// The store's own runtime, taken only when the store is dropped.
    runtime: Option<tokio::runtime::Runtime>,
    handle: tokio::runtime::Handle,
    client: Client,
    connection: Mutex<Option<MultiplexedConnection>>,
    bound: Duration,
    channel: String,
    inbox: Arc<Mutex<VecDeque<String>>>,
    /// Whether the subscription is live now.
    subscribed: Arc<AtomicBool>,
    /// Whether it dropped since the node last received: what was published
    /// meanwhile is lost, so the node must read the state again.
    dropped: Arc<AtomicBool>,
    /// The fleet's witness, present while the store remembers the fleet.
    witness: String,
    publish: Script,
    acquire: Script,
    release: Script,
}

impl RedisStore {
    /// A store for the fleet breaker `key` on the server at `url`, every
    /// call bounded by `bound`. It subscribes at once, in the background,
    /// and resubscribes with backoff whenever the subscription drops; until
    /// it is subscribed, [`receive`](FleetStore::receive) fails, so the node
    /// stays degraded rather than miss news.
    ///
    /// # Errors
    ///
    /// [`RedisStoreError`] for a URL redis-rs cannot read or a runtime that
    /// cannot start. An unreachable server is not an error here: the node
    /// serves locally until it answers.
    pub fn connect(url: &str, key: &str, bound: Duration) -> Result<Self, RedisStoreError> {
        let client = Client::open(url).map_err(|e| RedisStoreError(e.to_string()))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| RedisStoreError(e.to_string()))?;
        let store = RedisStore {
            handle: runtime.handle().clone(),
            runtime: Some(runtime),
            client,
            connection: Mutex::new(None),
            bound,
            channel: format!("{key}:news"),
            inbox: Arc::default(),
            subscribed: Arc::default(),
            dropped: Arc::default(),
            witness: witness_key(key),
            publish: Script::new(PUBLISH),
            acquire: Script::new(ACQUIRE),
            release: Script::new(RELEASE),
        };
        store.handle.spawn(subscribe(
            store.client.clone(),
            store.channel.clone(),
            bound,
            Arc::clone(&store.inbox),
            Arc::clone(&store.subscribed),
            Arc::clone(&store.dropped),
        ));
        Ok(store)
    }

    /// Writes the fleet's witness if it is not there: once, when the fleet is
    /// first set up, before any node asks for the probe lease. Whether it
    /// wrote it. Without it, the store takes itself for one that forgot
    /// its keys, and the first lease comes one probe deadline late, which
    /// is safe but slow. Never call it on a store that may have forgotten
    /// (after a flush or a restart): that is the case the witness detects.
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the store cannot be reached within its bound.
    pub fn prepare(&self) -> Result<bool, StoreError> {
        let witness = self.witness.clone();
        let written: Option<String> = self.call(|mut connection| async move {
            redis::cmd("SET")
                .arg(witness)
                .arg("1")
                .arg("NX")
                .query_async(&mut connection)
                .await
        })?;
        Ok(written.is_some())
    }

    /// Whether the subscription is live.
    pub fn is_subscribed(&self) -> bool {
        self.subscribed.load(Ordering::SeqCst)
    }

    /// Runs one bounded Redis exchange on the store's runtime, with a
    /// connection made (within the same bound) if there is none; a failed
    /// exchange drops the connection so the next call makes a fresh one.
    fn call<T, F, Fut>(&self, exchange: F) -> Result<T, StoreError>
    where
        F: FnOnce(MultiplexedConnection) -> Fut + Send + 'static,
        Fut: Future<Output = redis::RedisResult<T>> + Send + 'static,
        T: Send + 'static,
    {
        let cached = self.connection().clone();
        let bound = self.bound;
        let client = self.client.clone();
        // Not `block_on`: the caller may be a task of another runtime, where
        // it panics. The exchange runs on the store's runtime, and the
        // caller waits for its answer on a channel.
        let (answer, waiting) = std::sync::mpsc::sync_channel(1);
        self.handle.spawn(async move {
            let result = tokio::time::timeout(bound, async move {
                let connection = match cached {
                    Some(connection) => connection,
                    None => {
                        let config = AsyncConnectionConfig::new()
                            .set_connection_timeout(Some(bound))
                            .set_response_timeout(Some(bound));
                        client
                            .get_multiplexed_async_connection_with_config(&config)
                            .await?
                    }
                };
                let answer = exchange(connection.clone()).await?;
                Ok::<_, redis::RedisError>((answer, connection))
            })
            .await;
            // The caller may have given up waiting: nobody to tell.
            let _ = answer.send(result);
        });
        // The exchange ends within the bound; the grace covers a runtime
        // slow to schedule it, so the caller never waits for good.
        match waiting.recv_timeout(bound.saturating_add(Duration::from_secs(1))) {
            Ok(Ok(Ok((answer, connection)))) => {
                *self.connection() = Some(connection);
                Ok(answer)
            }
            Ok(Ok(Err(error))) => {
                *self.connection() = None;
                Err(StoreError::Unavailable(error.to_string()))
            }
            Ok(Err(_)) | Err(RecvTimeoutError::Timeout) => {
                *self.connection() = None;
                Err(StoreError::TimedOut(bound))
            }
            Err(RecvTimeoutError::Disconnected) => {
                *self.connection() = None;
                Err(StoreError::Unavailable(
                    "the store's exchange ended without an answer".into(),
                ))
            }
        }
    }

    fn connection(&self) -> MutexGuard<'_, Option<MultiplexedConnection>> {
        self.connection
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for RedisStore {
    /// Stops the store's runtime without waiting for it, which a runtime
    /// dropped inside another's task (a store owned by a tokio task) must.
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// Keeps the subscription up: subscribes, forwards every message to the
/// inbox, and when the connection drops, says so and tries again with a
/// growing pause (50 ms to 1 s), so a restarted server is found quickly
/// without hammering one that is down.
async fn subscribe(
    client: Client,
    channel: String,
    bound: Duration,
    inbox: Arc<Mutex<VecDeque<String>>>,
    subscribed: Arc<AtomicBool>,
    dropped: Arc<AtomicBool>,
) {
    let mut pause = Duration::from_millis(50);
    loop {
        let connected = tokio::time::timeout(bound, async {
            let mut pubsub = client.get_async_pubsub().await?;
            pubsub.subscribe(&channel).await?;
            Ok::<_, redis::RedisError>(pubsub)
        })
        .await;
        if let Ok(Ok(pubsub)) = connected {
            pause = Duration::from_millis(50);
            subscribed.store(true, Ordering::SeqCst);
            let mut messages = pubsub.into_on_message();
            while let Some(message) = messages.next().await {
                let line = message
                    .get_payload::<String>()
                    .unwrap_or_else(|_| String::from("\u{fffd}not text"));
                inbox
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push_back(line);
            }
            subscribed.store(false, Ordering::SeqCst);
            dropped.store(true, Ordering::SeqCst);
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_secs(1));
    }
}

impl FleetStore for RedisStore {
    fn publish(&self, _from: NodeId, message: &FleetMessage) -> Result<(), StoreError> {
        let line = message.encode();
        let cooldown_ms = match message.event {
            Event::Trip { cooldown_left } => {
                u64::try_from(cooldown_left.as_millis()).unwrap_or(u64::MAX)
            }
            Event::Close => 0,
            Event::Failures { .. } => {
                // News about the current epoch, never the stored state: a
                // plain PUBLISH.
                let channel = self.channel.clone();
                return self.call(|mut connection| async move {
                    redis::cmd("PUBLISH")
                        .arg(channel)
                        .arg(line)
                        .query_async::<i64>(&mut connection)
                        .await
                        .map(drop)
                });
            }
        };
        let (state, marker) = keys(&message.key);
        let channel = self.channel.clone();
        let script = self.publish.clone();
        let (epoch, node) = (message.stamp.epoch, message.stamp.node);
        self.call(move |mut connection| async move {
            script
                .key(state)
                .key(marker)
                .arg(&line)
                .arg(epoch)
                .arg(node)
                .arg(cooldown_ms)
                .arg(channel)
                .invoke_async::<i64>(&mut connection)
                .await
                .map(drop)
        })
    }

    fn receive(
        &self,
        _node: NodeId,
    ) -> Result<Vec<Result<FleetMessage, MessageError>>, StoreError> {
        if self.dropped.swap(false, Ordering::SeqCst) {
            return Err(StoreError::Unavailable(
                "the subscription dropped: news may have been lost".into(),
            ));
        }
        if !self.is_subscribed() {
            return Err(StoreError::Unavailable("not subscribed yet".into()));
        }
        let lines: Vec<String> = self
            .inbox
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain(..)
            .collect();
        Ok(lines
            .iter()
            .map(|line| FleetMessage::decode(line))
            .collect())
    }

    fn read_state(&self, _node: NodeId, key: &str) -> Result<Option<FleetMessage>, StoreError> {
        let (state, marker) = keys(key);
        let (line, left): (Option<String>, i64) = self.call(|mut connection| async move {
            redis::pipe()
                .get(state)
                .pttl(marker)
                .query_async(&mut connection)
                .await
        })?;
        let Some(line) = line else { return Ok(None) };
        let mut message = FleetMessage::decode(&line)?;
        if let Event::Trip { .. } = message.event {
            // PTTL is negative once the marker has expired: no cooldown left.
            let left = u64::try_from(left).unwrap_or(0);
            message.event = Event::Trip {
                cooldown_left: Duration::from_millis(left),
            };
        }
        Ok(Some(message))
    }

    fn acquire_lease(&self, _node: NodeId, lease: &Lease) -> Result<bool, StoreError> {
        let ttl = ttl_millis(lease.ttl()).map_err(|e| StoreError::Unavailable(e.to_string()))?;
        let key = lease.store_key();
        let witness = witness_key(lease.key());
        let owner = lease.owner().to_owned();
        let script = self.acquire.clone();
        let answer: i64 = self.call(move |mut connection| async move {
            script
                .key(key)
                .key(witness)
                .arg(owner)
                .arg(ttl)
                .invoke_async(&mut connection)
                .await
        })?;
        match answer {
            -1 => Err(StoreError::Forgot(lease.ttl())),
            granted => Ok(granted == 1),
        }
    }

    fn release_lease(&self, _node: NodeId, lease: &Lease) -> Result<bool, StoreError> {
        let key = lease.store_key();
        let owner = lease.owner().to_owned();
        let script = self.release.clone();
        let deleted: i64 = self.call(move |mut connection| async move {
            script
                .key(key)
                .arg(owner)
                .invoke_async(&mut connection)
                .await
        })?;
        Ok(deleted == 1)
    }
}

/// The fleet's witness: a key with no expiry, there while the store remembers
/// the fleet.
fn witness_key(key: &str) -> String {
    format!("{key}:witness")
}

/// The state key and its cooldown marker.
fn keys(key: &str) -> (String, String) {
    (format!("{key}:state"), format!("{key}:open"))
}

/// A Redis store that could not be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the Redis fleet store could not start: {0}")]
pub struct RedisStoreError(pub String);
