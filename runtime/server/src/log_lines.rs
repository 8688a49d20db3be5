//! The server's log lines, written to stderr by a thread of their own.
//!
//! A write to stderr blocks when its reader stops reading: a pipe to a log shipper that
//! stalled, a parent process that never reads, a terminal paused with Ctrl+S. Written
//! from the workers that answer requests, one such reader would stop the server at its
//! next log line. Here a worker appends its line to a buffer and goes on; when
//! [`HELD_BYTES`] are already waiting, the line is dropped and counted
//! (`svc_log_lines_dropped_total`), as journald does for a client that floods it. Lines
//! keep their order; none is dropped while the reader keeps up.
//!
//! Handing lines over must cost less than writing them did. A wake-up of the writer per
//! line (a channel) cost a system call and a context switch each, and on one core more
//! than doubled the CPU of a request with the access log on; instead the writer is woken
//! only for the first line after it went idle, writes what it finds, then gathers the
//! lines of the next [`LINGER`] and writes them with one call, as Envoy flushes its
//! access logs on an interval.

use std::io::Write;
use std::sync::{Condvar, LazyLock, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// Bytes of lines waiting for stderr beyond which new lines are dropped: about two
/// thousand access lines, with the pipe's own 64 KiB behind them.
pub const HELD_BYTES: usize = 256 * 1024;
/// How long the writer gathers lines after a write before the next one. A line after a
/// quiet spell is written at once.
pub const LINGER: Duration = Duration::from_millis(20);
/// Waiting lines that make the writer write before its [`LINGER`] is over.
const EAGER_BYTES: usize = 32 * 1024;

/// Lines dropped because [`HELD_BYTES`] were waiting for stderr.
pub static DROPPED: LazyLock<prometheus_client::metrics::counter::Counter> = LazyLock::new(Default::default);

#[derive(Clone, Copy, PartialEq, Eq)]
enum Writer {
    /// Waiting for a line, with none waiting: the next one wakes it.
    Idle,
    /// Gathering lines until [`LINGER`] is over, or [`EAGER_BYTES`] wait.
    Lingering,
    /// Writing, or about to: it looks for more lines when done.
    Busy,
}

struct State {
    waiting: Vec<u8>,
    /// Lines appended since start, and lines written out: what a flush waits for.
    appended: u64,
    written: u64,
    writer: Writer,
    /// A flush waits: write without lingering.
    hurry: bool,
}

struct Queue {
    state: Mutex<State>,
    /// What the writer waits on.
    wake: Condvar,
    /// What a flush waits on: a batch written.
    done: Condvar,
}

static QUEUE: OnceLock<Queue> = OnceLock::new();

impl Queue {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic under this lock leaves the buffer whole: go on with it.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The queue, its writer started with the first line.
fn queue() -> &'static Queue {
    QUEUE.get_or_init(|| {
        let spawned = std::thread::Builder::new()
            .name("svc-log".into())
            .stack_size(64 * 1024)
            .spawn(|| write_out(queue()));
        if let Err(e) = spawned {
            // Nothing will write the queue: lines are counted as dropped once it is full.
            let _ = writeln!(std::io::stderr(), "warning: cannot start the log writer ({e})");
        }
        Queue {
            state: Mutex::new(State {
                waiting: Vec::new(),
                appended: 0,
                written: 0,
                writer: Writer::Busy,
                hurry: false,
            }),
            wake: Condvar::new(),
            done: Condvar::new(),
        }
    })
}

fn write_out(queue: &Queue) {
    let mut stderr = std::io::stderr();
    let mut batch = Vec::new();
    let mut state = queue.lock();
    loop {
        while state.waiting.is_empty() && !state.hurry {
            state.writer = Writer::Idle;
            state = queue.wake.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        state.writer = Writer::Busy;
        state.hurry = false;
        std::mem::swap(&mut batch, &mut state.waiting);
        let upto = state.appended;
        drop(state);
        // A reader gone (EPIPE) loses the lines, as it would lose them anyway.
        let _ = stderr.write_all(&batch);
        batch.clear();
        // A burst's buffer is not kept at rest.
        if batch.capacity() > 2 * EAGER_BYTES {
            batch = Vec::new();
        }
        state = queue.lock();
        state.written = upto;
        queue.done.notify_all();
        if state.waiting.len() < EAGER_BYTES && !state.hurry {
            state.writer = Writer::Lingering;
            state = queue
                .wake
                .wait_timeout(state, LINGER)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

/// Queues `line` (its newline included) for stderr, or drops and counts it.
pub fn write(line: &[u8]) {
    if line.is_empty() {
        return;
    }
    let queue = queue();
    let mut state = queue.lock();
    if state.waiting.len() + line.len() > HELD_BYTES {
        drop(state);
        DROPPED.inc();
        return;
    }
    let before = state.waiting.len();
    state.waiting.extend_from_slice(line);
    state.appended += 1;
    let wake = match state.writer {
        Writer::Idle => true,
        Writer::Lingering => before < EAGER_BYTES && state.waiting.len() >= EAGER_BYTES,
        Writer::Busy => false,
    };
    drop(state);
    if wake {
        queue.wake.notify_one();
    }
}

/// Waits, at most `limit`, until every line queued so far is written: before the process
/// exits, or before something is written to stderr directly. A reader that stopped
/// reading costs `limit`, no more.
pub fn flush(limit: Duration) {
    let Some(queue) = QUEUE.get() else { return };
    let deadline = Instant::now() + limit;
    let mut state = queue.lock();
    let target = state.appended;
    state.hurry = true;
    queue.wake.notify_one();
    while state.written < target {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        state = queue
            .done
            .wait_timeout(state, left)
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
}

/// A [`tracing_subscriber`] writer: each event's line, formatted into a buffer, is queued
/// as one when the formatter is done with it.
///
/// A line is one line: whatever a value put in it (a request's query in a node's log
/// line, a panic's message), its control characters are escaped (`\n`, `\r`, `\x1b`),
/// so that no client can write a line of its own into the log, nor move a terminal's
/// cursor. Only the formatter's own colours are kept, when `ansi` is on.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stderr {
    pub ansi: bool,
}

/// One event's line being formatted.
pub struct Line {
    bytes: Vec<u8>,
    ansi: bool,
}

impl Write for Line {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.bytes.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        match one_line(&self.bytes, self.ansi) {
            Some(escaped) => write(&escaped),
            None => write(&self.bytes),
        }
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Stderr {
    type Writer = Line;

    fn make_writer(&'a self) -> Line {
        Line {
            bytes: Vec::with_capacity(256),
            ansi: self.ansi,
        }
    }
}

/// `line` with its control characters escaped, all but the final newline (and `ESC`
/// when the formatter colours lines): `None` when there are none, the common case, found
/// in one pass.
fn one_line(line: &[u8], ansi: bool) -> Option<Vec<u8>> {
    let body = line.strip_suffix(b"\n").unwrap_or(line);
    let escaped = |b: u8| (b < 0x20 && b != b'\t' && !(ansi && b == 0x1b)) || b == 0x7f;
    let first = body.iter().position(|&b| escaped(b))?;
    let mut out = Vec::with_capacity(line.len() + 16);
    out.extend_from_slice(&body[..first]);
    for &b in &body[first..] {
        match b {
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b if escaped(b) => {
                let _ = write!(out, "\\x{b:02x}");
            }
            b => out.push(b),
        }
    }
    out.extend_from_slice(&line[body.len()..]);
    Some(out)
}

#[cfg(test)]
mod one_line_tests {
    use super::one_line;

    #[test]
    fn control_characters_cannot_start_a_line_of_their_own() {
        assert_eq!(one_line(b"INFO greeted Ada\n", false), None);
        let forged = b"INFO greeted x\nINFO svc_runtime::app: FORGED admin login ok\n";
        assert_eq!(
            one_line(forged, false).unwrap(),
            b"INFO greeted x\\nINFO svc_runtime::app: FORGED admin login ok\n"
        );
        assert_eq!(
            one_line(b"a\rb\x1b[2Jc\x7f\td\n", false).unwrap(),
            b"a\\rb\\x1b[2Jc\\x7f\td\n"
        );
        // The formatter's colours stay when it colours; the final newline always.
        assert_eq!(one_line(b"\x1b[32mINFO\x1b[0m x\n", true), None);
        assert_eq!(one_line(b"x\ny", true).unwrap(), b"x\\ny");
    }
}
