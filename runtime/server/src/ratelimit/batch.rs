//! Coalescing the checks of one scheduler tick into one Redis pipeline.
//!
//! Left to itself, every check is its own `EVALSHA` on the multiplexed connection, and
//! its own `writev`: tokio runs the woken connection driver right after each request task
//! that woke it (the LIFO slot), so the driver never sees two commands queued. On
//! loopback each write also pays for the receiving side's TCP processing, which made the
//! socket writes the larger part of what a shared limit cost the server.
//!
//! Here a check is queued, and one flusher task, woken by the first check of a batch,
//! first yields (tokio runs it again after the tasks already ready in this tick, which
//! queue their checks meanwhile), then takes the whole queue and sends it as one pipeline
//! on its own task, so that the next batch does not wait for this one's answer. Each
//! check keeps its own deadline: it waits for its answer with [`tokio::time::timeout`],
//! and a late answer is dropped.
//!
//! Only a single Redis is batched: a cluster pipeline would be split by slot anyway, and
//! the cluster connection sends each check to its node (see [`super::redis`]).

use parking_lot::Mutex;
use redis::aio::ConnectionManager;
use redis::{ErrorKind, RedisResult, ServerErrorKind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::{Notify, oneshot};

/// One GCRA check waiting to be sent.
struct Queued {
    key: String,
    interval_us: u64,
    tolerance_us: u64,
    reply: oneshot::Sender<RedisResult<Vec<i64>>>,
}

/// The queue of one limiter; a flusher task empties it until the batcher is dropped.
pub(super) struct Batcher {
    shared: Arc<Shared>,
}

/// What the checks and the flusher share.
struct Shared {
    queue: Mutex<Vec<Queued>>,
    wake: Notify,
    closed: AtomicBool,
}

impl Batcher {
    /// Starts the flusher (inside a tokio runtime).
    pub(super) fn start(conn: ConnectionManager, script: redis::Script) -> Batcher {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Vec::new()),
            wake: Notify::new(),
            closed: AtomicBool::new(false),
        });
        tokio::spawn(flush_forever(shared.clone(), conn, Arc::new(script)));
        Batcher { shared }
    }

    /// Queues one check; the receiver yields its reply (`{allowed, remaining, reset,
    /// retry_after}`) or the error of its batch.
    pub(super) fn submit(
        &self,
        key: String,
        interval_us: u64,
        tolerance_us: u64,
    ) -> oneshot::Receiver<RedisResult<Vec<i64>>> {
        let (reply, answer) = oneshot::channel();
        let was_empty = {
            let mut queue = self.shared.queue.lock();
            queue.push(Queued {
                key,
                interval_us,
                tolerance_us,
                reply,
            });
            queue.len() == 1
        };
        // The flusher takes the whole queue at once: only the first check of a batch has
        // to wake it (Notify keeps the permit if the flusher is not waiting yet).
        if was_empty {
            self.shared.wake.notify_one();
        }
        answer
    }
}

impl Drop for Batcher {
    fn drop(&mut self) {
        self.shared.closed.store(true, Ordering::Release);
        self.shared.wake.notify_one();
    }
}

async fn flush_forever(shared: Arc<Shared>, conn: ConnectionManager, script: Arc<redis::Script>) {
    loop {
        shared.wake.notified().await;
        if shared.closed.load(Ordering::Acquire) {
            return;
        }
        // Let the request tasks that are ready in this tick queue their checks first.
        tokio::task::yield_now().await;
        let batch = std::mem::take(&mut *shared.queue.lock());
        if !batch.is_empty() {
            tokio::spawn(send(conn.clone(), script.clone(), batch));
        }
    }
}

/// Sends `batch` as one pipeline; checks that found the script missing (`NOSCRIPT`,
/// after a restart or `SCRIPT FLUSH`) are sent again once it is loaded.
async fn send(mut conn: ConnectionManager, script: Arc<redis::Script>, batch: Vec<Queued>) {
    let replies = match pipeline(&mut conn, &script, &batch).await {
        Ok(replies) => replies,
        Err(e) => return fail_all(batch, e),
    };
    let mut retry = Vec::new();
    for (queued, reply) in batch.into_iter().zip(replies) {
        match reply {
            Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => retry.push(queued),
            reply => {
                let _ = queued.reply.send(reply);
            }
        }
    }
    if retry.is_empty() {
        return;
    }
    let replies = match script.load_async(&mut conn).await {
        Ok(_) => pipeline(&mut conn, &script, &retry).await,
        Err(e) => Err(e),
    };
    match replies {
        Ok(replies) => {
            for (queued, reply) in retry.into_iter().zip(replies) {
                let _ = queued.reply.send(reply);
            }
        }
        Err(e) => fail_all(retry, e),
    }
}

/// One `EVALSHA` per check, in one pipeline, each with its own result.
async fn pipeline(
    conn: &mut ConnectionManager,
    script: &redis::Script,
    batch: &[Queued],
) -> RedisResult<Vec<RedisResult<Vec<i64>>>> {
    let mut pipe = redis::pipe();
    for q in batch {
        pipe.cmd("EVALSHA")
            .arg(script.get_hash())
            .arg(1)
            .arg(&q.key)
            .arg(q.interval_us)
            .arg(q.tolerance_us);
    }
    pipe.ignore_errors();
    let replies: Vec<RedisResult<Vec<i64>>> = pipe.query_async(conn).await?;
    if replies.len() != batch.len() {
        return Err(redis::RedisError::from((
            ErrorKind::Client,
            "pipeline answered a different number of replies",
        )));
    }
    Ok(replies)
}

fn fail_all(batch: Vec<Queued>, error: redis::RedisError) {
    for queued in batch {
        let _ = queued.reply.send(Err(error.clone()));
    }
}
