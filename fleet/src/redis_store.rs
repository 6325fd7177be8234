//! The fleet store over Redis: pub/sub carries the trips and closes, a key
//! holds the current state (pub/sub delivers at most once, so a node that
//! (re)subscribes reads it first), and the probe lease is `SET key owner NX
//! PX ttl`, released by a compare-and-delete script.
//!
//! The client is redis-rs, async on a small tokio runtime of the store's
//! own; [`FleetStore`]'s calls wait on it, each within the store's bound,
//! from the thread that runs [`FleetNode::sync`](crate::FleetNode::sync),
//! never from an admission.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
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
    runtime: tokio::runtime::Runtime,
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
    publish: Script,
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
            runtime,
            client,
            connection: Mutex::new(None),
            bound,
            channel: format!("{key}:news"),
            inbox: Arc::default(),
            subscribed: Arc::default(),
            dropped: Arc::default(),
            publish: Script::new(PUBLISH),
            release: Script::new(RELEASE),
        };
        store.runtime.spawn(subscribe(
            store.client.clone(),
            store.channel.clone(),
            bound,
            Arc::clone(&store.inbox),
            Arc::clone(&store.subscribed),
            Arc::clone(&store.dropped),
        ));
        Ok(store)
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
        F: FnOnce(MultiplexedConnection) -> Fut,
        Fut: Future<Output = redis::RedisResult<T>>,
    {
        let cached = self.connection().clone();
        let bound = self.bound;
        let client = self.client.clone();
        let result = self.runtime.block_on(async move {
            tokio::time::timeout(bound, async move {
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
            .await
        });
        match result {
            Ok(Ok((answer, connection))) => {
                *self.connection() = Some(connection);
                Ok(answer)
            }
            Ok(Err(error)) => {
                *self.connection() = None;
                Err(StoreError::Unavailable(error.to_string()))
            }
            Err(_) => {
                *self.connection() = None;
                Err(StoreError::TimedOut(bound))
            }
        }
    }

    fn connection(&self) -> MutexGuard<'_, Option<MultiplexedConnection>> {
        self.connection
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
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
        let script = &self.publish;
        self.call(|mut connection| async move {
            script
                .key(state)
                .key(marker)
                .arg(&line)
                .arg(message.stamp.epoch)
                .arg(message.stamp.node)
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
        let owner = lease.owner().to_owned();
        let granted: Option<String> = self.call(|mut connection| async move {
            redis::cmd("SET")
                .arg(key)
                .arg(owner)
                .arg("NX")
                .arg("PX")
                .arg(ttl)
                .query_async(&mut connection)
                .await
        })?;
        Ok(granted.is_some())
    }

    fn release_lease(&self, _node: NodeId, lease: &Lease) -> Result<bool, StoreError> {
        let key = lease.store_key();
        let owner = lease.owner().to_owned();
        let script = &self.release;
        let deleted: i64 = self.call(|mut connection| async move {
            script
                .key(key)
                .arg(owner)
                .invoke_async(&mut connection)
                .await
        })?;
        Ok(deleted == 1)
    }
}

/// The state key and its cooldown marker.
fn keys(key: &str) -> (String, String) {
    (format!("{key}:state"), format!("{key}:open"))
}

/// A Redis store that could not be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the Redis fleet store could not start: {0}")]
pub struct RedisStoreError(pub String);
