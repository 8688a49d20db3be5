//! The socket `svc dev`'s servers listen on: bound once by `svc dev`, and handed to each
//! server it starts (systemd's protocol, `svc_runtime::listen`). A request sent while a
//! rebuilt server replaces the last one waits in the kernel's queue for it instead of
//! being refused, and the port stays the same across restarts (`--port 0`'s too).
//!
//! While no server runs (the first build, a build that failed with no server before it,
//! a server that exited), nothing would accept: svc dev answers each request itself,
//! 503 in the runtime's JSON error shape, saying why, rather than leave clients waiting.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often the socket is looked at while no server runs.
const POLL: Duration = Duration::from_millis(20);
/// How long a client has to send its request head before svc dev answers anyway.
const HEAD_TIMEOUT: Duration = Duration::from_secs(2);
/// Connections answered at once while no server runs, each by a thread of its own; past
/// this, a connection is closed at once (a burst of connects cannot make a thread each,
/// and those answered are done within [`HEAD_TIMEOUT`]).
const ANSWERING: usize = 32;

/// Why no server answers, or `None` while one runs or is being started.
type Down = Arc<Mutex<Option<String>>>;

pub struct DevSocket {
    listener: Arc<TcpListener>,
    down: Down,
}

impl DevSocket {
    /// Binds `addr:port`: a port another program holds is reported here, before anything
    /// is built. No server runs yet: requests are answered "building".
    pub fn bind(addr: &str, port: u16) -> Result<DevSocket, String> {
        let listener = TcpListener::bind((addr, port)).map_err(|e| match e.kind() {
            std::io::ErrorKind::AddrInUse => format!(
                "{addr}:{port} is in use by another program (another `svc dev`?); stop it, or choose another port with `--port`"
            ),
            _ => format!("cannot listen on {addr}:{port}: {e}"),
        })?;
        // Shared with the servers, which make it non-blocking too (the flag belongs to
        // the socket, not to one process's descriptor of it).
        listener
            .set_nonblocking(true)
            .map_err(|e| format!("cannot listen on {addr}:{port}: {e}"))?;
        let socket = DevSocket {
            listener: Arc::new(listener),
            down: Arc::new(Mutex::new(Some("svc dev is building the server".into()))),
        };
        let (listener, down) = (socket.listener.clone(), socket.down.clone());
        std::thread::Builder::new()
            .name("svc-dev-socket".into())
            .spawn(move || answer_while_down(&listener, &down))
            .map_err(|e| format!("cannot start svc dev: {e}"))?;
        Ok(socket)
    }

    /// Requests wait for the server about to start (or running).
    pub fn up(&self) {
        *lock(&self.down) = None;
    }

    /// No server runs: requests are answered 503 with `why`.
    pub fn down(&self, why: impl Into<String>) {
        *lock(&self.down) = Some(why.into());
    }

    /// Hands the socket to the server `command` starts, as file descriptor 3.
    pub fn hand_to(&self, command: &mut Command) {
        use std::os::fd::AsRawFd;
        use std::os::unix::process::CommandExt;
        let fd = self.listener.as_raw_fd();
        command
            .env(svc_runtime::listen::FDS_ENV, "1")
            // Set by the kernel's fork, not known before it: the server takes the socket
            // without it.
            .env_remove(svc_runtime::listen::PID_ENV);
        let first = svc_runtime::listen::FIRST_FD;
        // SAFETY: between fork and exec only async-signal-safe calls (dup2, fcntl) run,
        // on descriptors this process owns; no allocation, no lock.
        unsafe {
            command.pre_exec(move || {
                if fd == first {
                    // Already in place: only let it survive the exec.
                    if libc::fcntl(fd, libc::F_SETFD, 0) == -1 {
                        return Err(std::io::Error::last_os_error());
                    }
                } else if libc::dup2(fd, first) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
}

/// Why no server answers; a panic under the lock leaves the value whole.
fn lock(down: &Down) -> std::sync::MutexGuard<'_, Option<String>> {
    down.lock().unwrap_or_else(|e| e.into_inner())
}

/// Answers every request that arrives while no server runs, until svc dev exits.
fn answer_while_down(listener: &TcpListener, down: &Down) {
    let answering = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    loop {
        std::thread::sleep(POLL);
        // Accepted under the lock: once `up` returns, a connection is the server's.
        let (why, clients) = {
            let down = lock(down);
            let Some(why) = down.clone() else { continue };
            let mut clients = Vec::new();
            while let Ok((client, _)) = listener.accept() {
                clients.push(client);
            }
            (why, clients)
        };
        for client in clients {
            answer_or_close(client, &why, &answering);
        }
    }
}

/// Answers `client` on a thread of its own if fewer than [`ANSWERING`] are; otherwise,
/// or when no thread can be made, closes it at once.
fn answer_or_close(client: TcpStream, why: &str, answering: &Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::Ordering;
    if answering.fetch_add(1, Ordering::AcqRel) >= ANSWERING {
        answering.fetch_sub(1, Ordering::AcqRel);
        return;
    }
    let (why, count) = (why.to_string(), answering.clone());
    let spawned = std::thread::Builder::new()
        .name("svc-dev-503".into())
        .stack_size(64 * 1024)
        .spawn(move || {
            answer_down(client, &why);
            count.fetch_sub(1, Ordering::AcqRel);
        });
    if spawned.is_err() {
        // The process's thread limit: the client (moved into the failed closure) is
        // closed, and this connection is not answered.
        answering.fetch_sub(1, Ordering::AcqRel);
    }
}

/// 503 with `why`, once the request head is read (answering before it would reset the
/// connection under the client's unsent bytes).
fn answer_down(mut client: TcpStream, why: &str) {
    let _ = client.set_nonblocking(false);
    let _ = client.set_read_timeout(Some(HEAD_TIMEOUT));
    let deadline = Instant::now() + HEAD_TIMEOUT;
    let mut head = Vec::new();
    let mut buffer = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 64 * 1024 && Instant::now() < deadline {
        match client.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => head.extend_from_slice(&buffer[..n]),
        }
    }
    // The servers' one error shape, with the retry a client is told of.
    let body = svc_runtime::ApiError::new(
        axum::http::StatusCode::SERVICE_UNAVAILABLE,
        "dev_server_not_running",
        format!("no server is running: {why}"),
    )
    .retry_after(1)
    .to_json();
    let _ = write!(
        client,
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nretry-after: 1\r\ncache-control: no-store\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let _ = client.write_all(&body);
    let _ = client.shutdown(std::net::Shutdown::Write);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A burst of connections that send nothing: at most [`ANSWERING`] wait for a head,
    /// the rest are closed at once, and a request after the burst is answered 503.
    #[test]
    fn a_burst_of_idle_connections_is_answered_by_a_bounded_number_of_threads() {
        let socket = DevSocket::bind("127.0.0.1", 0).unwrap();
        let addr = socket.listener.local_addr().unwrap();
        let burst: Vec<TcpStream> = (0..400).map(|_| TcpStream::connect(addr).unwrap()).collect();
        let threads = || {
            std::fs::read_dir("/proc/self/task")
                .unwrap()
                .flatten()
                .filter(|t| {
                    std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == "svc-dev-503")
                })
                .count()
        };
        let (mut closed, mut answered, mut most) = (0, 0, threads());
        for mut c in burst.iter() {
            c.set_read_timeout(Some(HEAD_TIMEOUT * 3)).unwrap();
            most = most.max(threads());
            let mut answer = String::new();
            match c.read_to_string(&mut answer) {
                Ok(_) if answer.starts_with("HTTP/1.1 503") => answered += 1,
                Ok(_) if answer.is_empty() => closed += 1,
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => closed += 1,
                other => panic!("neither answered nor closed: {other:?} {answer:?}"),
            }
        }
        assert!(most <= ANSWERING, "{most} threads answered at once");
        assert!(closed > 0 && answered > 0, "{closed} closed, {answered} answered");
        drop(burst);
        // The stand-in still answers, once the burst's threads are done.
        let deadline = Instant::now() + HEAD_TIMEOUT * 3;
        loop {
            let mut c = TcpStream::connect(addr).unwrap();
            c.set_read_timeout(Some(HEAD_TIMEOUT * 2)).unwrap();
            write!(c, "GET / HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
            let mut answer = String::new();
            let _ = c.read_to_string(&mut answer);
            if answer.starts_with("HTTP/1.1 503") {
                assert!(answer.contains("dev_server_not_running"), "{answer}");
                break;
            }
            assert!(Instant::now() < deadline, "no 503 after the burst: {answer:?}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}
