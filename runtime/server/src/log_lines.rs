//! The server's log lines, written to stderr by a thread of their own.
//!
//! A write to stderr blocks when its reader stops reading: a pipe to a log shipper that
//! stalled, a parent process that never reads, a terminal paused with Ctrl+S. Written
//! from the workers that answer requests, one such reader would stop the server at its
//! next log line. Here a worker hands the line over without waiting; when
//! [`LINES_HELD`] lines are already waiting, the new one is dropped and counted
//! (`svc_log_lines_dropped_total`), as journald does for a client that floods it. Lines
//! keep their order; none is dropped while the reader keeps up.

use std::io::Write;
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{LazyLock, OnceLock};
use std::time::{Duration, Instant};

/// Lines waiting for stderr before new ones are dropped: a burst of warnings fits (with
/// the pipe's own 64 KiB behind it), and the queue's slots, allocated at start-up, cost
/// about 40 KiB.
pub const LINES_HELD: usize = 1024;

enum Message {
    Line(Vec<u8>),
    /// Answered once every line sent before it is written.
    Flush(SyncSender<()>),
}

static WRITER: OnceLock<SyncSender<Message>> = OnceLock::new();

/// Lines dropped because [`LINES_HELD`] lines were waiting for stderr.
pub static DROPPED: LazyLock<prometheus_client::metrics::counter::Counter> = LazyLock::new(Default::default);

fn writer() -> &'static SyncSender<Message> {
    WRITER.get_or_init(|| {
        let (sender, receiver) = sync_channel(LINES_HELD);
        let spawned = std::thread::Builder::new()
            .name("svc-log".into())
            .stack_size(64 * 1024)
            .spawn(move || write_out(receiver));
        if let Err(e) = spawned {
            // Nothing will read the queue: lines are counted as dropped once it is full.
            let _ = writeln!(std::io::stderr(), "warning: cannot start the log writer ({e})");
        }
        sender
    })
}

fn write_out(lines: Receiver<Message>) {
    let mut stderr = std::io::stderr();
    for message in lines {
        match message {
            // A reader gone (EPIPE) loses the line, as it would lose it anyway.
            Message::Line(line) => drop(stderr.write_all(&line)),
            Message::Flush(done) => drop(done.send(())),
        }
    }
}

/// Queues `line` (its newline included) for stderr, or drops and counts it.
pub fn write(line: Vec<u8>) {
    if line.is_empty() {
        return;
    }
    if let Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) = writer().try_send(Message::Line(line)) {
        DROPPED.inc();
    }
}

/// Waits, at most `limit`, until every line queued so far is written: before the process
/// exits, or before something is written to stderr directly. A reader that stopped
/// reading costs `limit`, no more.
pub fn flush(limit: Duration) {
    let Some(queue) = WRITER.get() else { return };
    let deadline = Instant::now() + limit;
    let (done, written) = sync_channel(1);
    let mut message = Message::Flush(done);
    loop {
        match queue.try_send(message) {
            Ok(()) => break,
            Err(TrySendError::Full(again)) if Instant::now() < deadline => {
                message = again;
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(_) => return,
        }
    }
    let _ = written.recv_timeout(deadline.saturating_duration_since(Instant::now()));
}

/// A [`tracing_subscriber`] writer: each event's line, formatted into a buffer, is queued
/// as one when the formatter is done with it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stderr;

/// One event's line being formatted.
pub struct Line(Vec<u8>);

impl Write for Line {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        write(std::mem::take(&mut self.0));
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Stderr {
    type Writer = Line;

    fn make_writer(&'a self) -> Line {
        Line(Vec::with_capacity(256))
    }
}
