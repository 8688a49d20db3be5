//! The socket the server listens on: one it is handed, or one it binds.
//!
//! A socket handed over outlives the server: systemd keeps it while the service restarts
//! (socket activation), `svc dev` keeps it while it swaps a rebuilt server in. Clients
//! that connect meanwhile wait in the kernel's queue for the next server, instead of
//! being refused. The protocol is systemd's (`sd_listen_fds`): `LISTEN_FDS=1`, the
//! socket at file descriptor 3, and `LISTEN_PID`, when set, naming this process.

use std::net::TcpListener;

/// The environment variable that counts the sockets handed over.
pub const FDS_ENV: &str = "LISTEN_FDS";
/// The environment variable naming the process they are for.
pub const PID_ENV: &str = "LISTEN_PID";
/// The first (here, the one) socket handed over.
pub const FIRST_FD: i32 = 3;

/// The listening socket handed to this process, if one was; an error when what was
/// handed over is not one listening TCP socket.
///
/// As `sd_listen_fds` does, a socket is taken only when `LISTEN_PID` names this process,
/// and once taken the hand-over variables are unset (a process this one starts is not
/// told of a socket it does not have) and the descriptor is closed on `exec`. One
/// exception: `svc dev` cannot know its server's process id before it starts it, so a
/// `--dev` server (`dev_without_pid`) takes a socket that comes without `LISTEN_PID`.
/// Any other server ignores it, and says so.
pub fn inherited(dev_without_pid: bool) -> Result<Option<TcpListener>, String> {
    let Ok(count) = std::env::var(FDS_ENV) else {
        return Ok(None);
    };
    match std::env::var(PID_ENV) {
        // Set for another process (a parent that was itself socket-activated): not ours.
        Ok(pid) if pid.trim() != std::process::id().to_string() => return Ok(None),
        Ok(_) => {}
        Err(_) if dev_without_pid => {}
        Err(_) => {
            tracing::warn!(
                "{FDS_ENV} is set without {PID_ENV}: no socket taken (systemd sets both; only `svc dev` hands a socket over without {PID_ENV})"
            );
            return Ok(None);
        }
    }
    match count.trim() {
        "0" => return Ok(None),
        "1" => {}
        other => {
            return Err(format!(
                "{FDS_ENV}={other}: svc serves one socket; hand it one (one `ListenStream=` in the systemd socket unit)"
            ));
        }
    }
    let listener = take_first_fd()?;
    forget_hand_over();
    Ok(Some(listener))
}

/// Unsets the hand-over variables and marks the descriptor close-on-exec.
fn forget_hand_over() {
    // SAFETY: called from `serve` before its async runtime, its signal handlers or any
    // thread of its own that reads the environment starts; nothing else in this process
    // reads or writes the environment concurrently.
    unsafe {
        std::env::remove_var(FDS_ENV);
        std::env::remove_var(PID_ENV);
        std::env::remove_var("LISTEN_FDNAMES");
    }
    #[cfg(unix)]
    // SAFETY: fcntl on descriptor 3, which this process now owns (taken above).
    unsafe {
        libc::fcntl(FIRST_FD, libc::F_SETFD, libc::FD_CLOEXEC);
    }
}

#[cfg(unix)]
fn take_first_fd() -> Result<TcpListener, String> {
    use std::os::fd::FromRawFd;
    // SAFETY: under the protocol above, descriptor 3 was opened for this process by the
    // one that started it, and nothing else in this process owns it: it is taken once,
    // before `serve` opens any file (which could otherwise be given number 3), and given
    // back unclosed if it is not the listening socket the protocol promised.
    let listener = unsafe { TcpListener::from_raw_fd(FIRST_FD) };
    let problem = match listener.local_addr() {
        Ok(_) if is_listening(FIRST_FD) => None,
        Ok(_) => Some("a TCP socket that does not listen".to_string()),
        Err(e) => Some(format!("not a TCP socket: {e}")),
    };
    match problem {
        None => Ok(listener),
        Some(problem) => {
            // Not ours to close if it is not the socket the protocol promised.
            std::mem::forget(listener);
            Err(format!(
                "{FDS_ENV}=1, but file descriptor {FIRST_FD} is {problem}; hand over a `ListenStream=` socket"
            ))
        }
    }
}

/// Whether `fd` is a socket in the listening state (`SO_ACCEPTCONN`).
#[cfg(unix)]
fn is_listening(fd: i32) -> bool {
    let mut on: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `on`, an int of that size.
    let read = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_ACCEPTCONN,
            (&mut on as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    read == 0 && on != 0
}

#[cfg(not(unix))]
fn take_first_fd() -> Result<TcpListener, String> {
    Err(format!("{FDS_ENV} is set, but sockets can be handed over on Unix only"))
}
