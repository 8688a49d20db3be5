//! The request-head deadline, kept by one watchdog rather than a timer per request.
//!
//! A connection with no request in flight (just accepted, or between two requests of a
//! keep-alive connection) must send a complete request head within
//! `header_read_timeout`, or it is closed: a slowloris client cannot hold it, and an
//! idle keep-alive connection does not stay open for ever.
//!
//! hyper can keep that deadline itself, but it does so with a new timer for every request
//! head: an allocation, a clock read and a registration in tokio's timer wheel (and its
//! removal), about 1,400 instructions a request, 3 % of the benchmarked route. Here a
//! request costs two atomic counts and a store: the connection counts the requests it
//! has in flight and notes when the last one ended, on a clock the watchdog advances; the
//! watchdog looks at every connection a few times per deadline and closes those idle for
//! longer. A connection is closed between the deadline and the deadline plus two ticks
//! (an eighth of the deadline each).
//!
//! HTTP/2 connections are watched the same way: the client preface and first headers are
//! due in time, and a connection with no stream in flight for as long is closed (with a
//! GOAWAY, by the caller: see [`Connection::is_multiplexed`]). An idle HTTP/2 connection
//! was once left to hyper, whose keep-alive only pings: a client could hold thousands of
//! them, and their file descriptors, for ever.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// The watchdog of one server's connections.
pub struct Watchdog {
    /// Milliseconds since `start`, advanced by the watchdog at each tick.
    now_ms: AtomicU64,
    start: Instant,
    deadline_ms: u64,
    tick: Duration,
    connections: Mutex<Vec<Weak<Connection>>>,
}

/// What the watchdog knows of one connection.
pub struct Connection {
    watchdog: Arc<Watchdog>,
    in_flight: AtomicU32,
    /// When its last request ended (or when it was accepted), on the watchdog's clock.
    idle_since_ms: AtomicU64,
    /// An HTTP/2 connection that has made a request: closed with a GOAWAY when idle.
    multiplexed: AtomicBool,
    /// Told when the connection is to be closed.
    close: tokio::sync::Notify,
}

impl Watchdog {
    /// A watchdog for the deadline `header_read_timeout`; [`Watchdog::run`] keeps it.
    pub fn new(header_read_timeout: Duration) -> Arc<Watchdog> {
        let deadline = header_read_timeout.max(Duration::from_millis(1));
        Arc::new(Watchdog {
            now_ms: AtomicU64::new(0),
            start: Instant::now(),
            deadline_ms: deadline.as_millis() as u64,
            tick: (deadline / 8).clamp(Duration::from_millis(5), Duration::from_secs(1)),
            connections: Mutex::new(Vec::new()),
        })
    }

    fn now_ms(&self) -> u64 {
        self.now_ms.load(Ordering::Relaxed)
    }

    /// Watches a connection just accepted.
    pub fn watch(self: &Arc<Self>) -> Arc<Connection> {
        let connection = Arc::new(Connection {
            watchdog: self.clone(),
            in_flight: AtomicU32::new(0),
            idle_since_ms: AtomicU64::new(self.now_ms()),
            multiplexed: AtomicBool::new(false),
            close: tokio::sync::Notify::new(),
        });
        self.lock().push(Arc::downgrade(&connection));
        connection
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Weak<Connection>>> {
        self.connections.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Advances the clock and closes the connections idle past the deadline, every tick,
    /// for as long as the server runs (the caller aborts it).
    pub async fn run(self: Arc<Self>) {
        let mut ticks = tokio::time::interval(self.tick);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            self.sweep();
        }
    }

    /// One tick: the clock, then every connection.
    fn sweep(&self) {
        self.sweep_at(self.start.elapsed().as_millis() as u64);
    }

    fn sweep_at(&self, now: u64) {
        self.now_ms.store(now, Ordering::Relaxed);
        // The clock a connection read may be a tick behind: allow for it.
        let limit = self.deadline_ms + self.tick.as_millis() as u64;
        self.lock().retain(|weak| {
            let Some(c) = weak.upgrade() else {
                return false;
            };
            let idle = c.in_flight.load(Ordering::Acquire) == 0;
            if idle && now.saturating_sub(c.idle_since_ms.load(Ordering::Relaxed)) >= limit {
                c.close.notify_one();
            }
            true
        });
    }
}

impl Connection {
    /// A request of this connection begins; it ends when the returned guard is dropped.
    pub fn request(self: &Arc<Self>, version: http::Version) -> InFlight {
        if version == http::Version::HTTP_2 {
            self.multiplexed.store(true, Ordering::Relaxed);
        }
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        InFlight(self.clone())
    }

    /// Resolves when the watchdog closes the connection.
    pub async fn closed(&self) {
        self.close.notified().await
    }

    /// Whether a request of this connection is in flight (its head has arrived).
    pub fn is_busy(&self) -> bool {
        self.in_flight.load(Ordering::Acquire) > 0
    }

    /// Whether this is an HTTP/2 connection that has made a request: it is to be closed
    /// with a GOAWAY (which a client racing a new stream understands), not dropped.
    pub fn is_multiplexed(&self) -> bool {
        self.multiplexed.load(Ordering::Relaxed)
    }
}

/// A request in flight on a [`Connection`].
pub struct InFlight(Arc<Connection>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let c = &self.0;
        c.idle_since_ms.store(c.watchdog.now_ms(), Ordering::Relaxed);
        c.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::FutureExt;

    fn closing(c: &Connection) -> bool {
        c.closed().now_or_never().is_some()
    }

    #[test]
    fn idle_connections_are_closed_after_the_deadline_and_busy_ones_are_not() {
        // Deadline 800 ms, ticks of 100 ms: closed from 900 ms idle on the clock.
        let watchdog = Watchdog::new(Duration::from_millis(800));
        let idle = watchdog.watch();
        let busy = watchdog.watch();
        let request = busy.request(http::Version::HTTP_11);
        let h2 = watchdog.watch();
        drop(h2.request(http::Version::HTTP_2));

        watchdog.sweep_at(850);
        assert!(!closing(&idle), "closed before its deadline (and the tick's allowance)");
        watchdog.sweep_at(900);
        assert!(closing(&idle), "closed at its deadline");
        // An idle HTTP/2 connection is closed as an idle HTTP/1 one is.
        assert!(closing(&h2) && h2.is_multiplexed());
        // A connection with a request in flight stays.
        watchdog.sweep_at(5_000);
        assert!(!closing(&busy));
        // Once its request ends, its deadline runs from then.
        drop(request);
        watchdog.sweep_at(5_850);
        assert!(!closing(&busy));
        watchdog.sweep_at(5_900);
        assert!(closing(&busy));
        // Connections that are gone are forgotten.
        drop((idle, busy, h2));
        watchdog.sweep_at(6_000);
        assert!(watchdog.lock().is_empty());
    }
}
