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
            let why = why.clone();
            std::thread::spawn(move || answer_down(client, &why));
        }
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
