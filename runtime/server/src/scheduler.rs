//! The tokio runtime a server runs on.
//!
//! tokio's multi-threaded scheduler, with tokio's number of workers: `TOKIO_WORKER_THREADS`
//! if set, else one per CPU the process may use (`available_parallelism`, which counts a
//! container's CPU quota). The setting is read here first, so that a value tokio would
//! panic on (`two`, `0`) stops the server with a message instead.
//!
//! With one worker, tokio's current-thread scheduler was measured as well: about 3 %
//! fewer simulated cycles per request, but CPU per request within the noise under load,
//! and p99 latency under 64 connections 7 and 15 % worse than the multi-threaded
//! scheduler's in two paired runs. Not kept (docs/performance.md, "Tried and not
//! kept").

use tokio::runtime::{Builder, Runtime};

/// The server's runtime, with timers and I/O enabled.
pub fn build() -> std::io::Result<Runtime> {
    Builder::new_multi_thread()
        .worker_threads(workers()?)
        .enable_all()
        .build()
}

/// The number of worker threads: `TOKIO_WORKER_THREADS`, else the CPUs this process may
/// use. A value that is not a positive whole number is an error that names it (tokio
/// itself would panic on it).
fn workers() -> std::io::Result<usize> {
    workers_from(std::env::var_os("TOKIO_WORKER_THREADS").as_deref())
}

fn workers_from(setting: Option<&std::ffi::OsStr>) -> std::io::Result<usize> {
    match setting {
        None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
        Some(value) => match value.to_str().and_then(|v| v.trim().parse::<usize>().ok()) {
            Some(n) if n > 0 => Ok(n),
            _ => Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "TOKIO_WORKER_THREADS is `{}`: it must be a whole number of worker threads, 1 or more",
                    value.to_string_lossy()
                ),
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn the_setting_names_the_workers() {
        assert_eq!(workers_from(Some(OsStr::new("1"))).unwrap(), 1);
        assert_eq!(workers_from(Some(OsStr::new(" 4 "))).unwrap(), 4);
    }

    #[test]
    fn without_a_setting_every_usable_cpu_gets_a_worker() {
        let cpus = std::thread::available_parallelism().unwrap().get();
        assert_eq!(workers_from(None).unwrap(), cpus);
    }

    #[test]
    fn a_setting_that_is_not_a_positive_number_is_refused_by_name() {
        for bad in ["0", "-1", "two", ""] {
            let e = workers_from(Some(OsStr::new(bad))).unwrap_err();
            assert!(
                e.to_string().contains(&format!("TOKIO_WORKER_THREADS is `{bad}`")),
                "{e}"
            );
        }
    }
}
