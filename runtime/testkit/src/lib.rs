//! Real servers for tests: [`Redis`] (`redis-server`) and [`Postgres`] (`initdb` and
//! `pg_ctl` from Debian's packages), each on a free loopback port in a temporary
//! directory of its own, stopped by PID when dropped.
//!
//! A missing server program is a test failure with the package to install, never a
//! silent skip: `.ci/run` installs them.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A free TCP port on 127.0.0.1 (free when asked; tests start their server on it at once).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// Runs `command` to its end and fails the test, showing the command and everything it
/// printed, unless it succeeds. Returns its standard output.
pub fn run_ok(command: &mut Command) -> String {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        out.status.success(),
        "{command:?} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A fresh temporary directory, removed by [`TempDir`]'s drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(label: &str) -> TempDir {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "svc-{label}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create a temporary directory");
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Finds a server program on PATH or in `extra` directories, or fails the test saying
/// what to install.
fn program(name: &str, extra: &[PathBuf], package: &str) -> PathBuf {
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    on_path
        .iter()
        .chain(extra)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!("`{name}` is not installed: these tests need a real server (apt-get install {package}); they are never skipped")
        })
}

fn wait_until(what: &str, timeout: Duration, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(
            start.elapsed() < timeout,
            "{what} did not become ready within {timeout:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A certificate authority of our own, made with `openssl`, and a server certificate it
/// signed for `127.0.0.1` and `localhost`: what a managed Redis or PostgreSQL with a
/// private CA presents.
pub struct TestCa {
    dir: TempDir,
}

impl TestCa {
    /// Creates the CA and the server's certificate and key (EC P-256, valid two days).
    pub fn new() -> TestCa {
        let dir = TempDir::new("ca");
        let openssl = program("openssl", &[], "openssl");
        let run = |args: &[&str]| run_ok(Command::new(&openssl).args(args).current_dir(dir.path()));
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
        run(&[
            &["req", "-x509", "-new"][..],
            &ec[..],
            &["-keyout", "ca.key", "-out", "ca.pem", "-days", "2"][..],
            &[
                "-subj",
                "/CN=svc test CA",
                "-addext",
                "basicConstraints=critical,CA:TRUE",
                "-addext",
                "keyUsage=critical,keyCertSign,cRLSign",
            ][..],
        ]
        .concat());
        run(&[
            &["req", "-new"][..],
            &ec[..],
            &["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"][..],
        ]
        .concat());
        std::fs::write(
            dir.path().join("server.ext"),
            "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:db.svc.test\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n",
        )
        .expect("write server.ext");
        run(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "2",
            "-extfile",
            "server.ext",
        ]);
        TestCa { dir }
    }

    /// The CA's certificate (PEM): what a client trusts with `sslrootcert=`.
    pub fn ca_pem(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// The server's certificate (PEM), signed by the CA.
    pub fn server_cert(&self) -> PathBuf {
        self.dir.path().join("server.pem")
    }

    /// The server's private key (PEM).
    pub fn server_key(&self) -> PathBuf {
        self.dir.path().join("server.key")
    }
}

impl Default for TestCa {
    fn default() -> TestCa {
        TestCa::new()
    }
}

/// A `redis-server` of our own.
pub struct Redis {
    port: u16,
    dir: TempDir,
    child: Option<Child>,
    cluster: bool,
    /// A TLS port beside the plain one, with the CA's server certificate.
    tls: Option<(u16, PathBuf, PathBuf)>,
}

impl Redis {
    /// Starts a Redis server on a free port, with persistence off.
    pub fn start() -> Redis {
        let mut redis = Redis {
            port: free_port(),
            dir: TempDir::new("redis"),
            child: None,
            cluster: false,
            tls: None,
        };
        redis.restart();
        redis
    }

    /// Starts a Redis server that also accepts TLS, on a second port, with the server
    /// certificate of `ca` (clients need not present one). The plain port stays for
    /// [`Redis::command`].
    pub fn start_tls(ca: &TestCa) -> Redis {
        let mut redis = Redis {
            port: free_port(),
            dir: TempDir::new("redis-tls"),
            child: None,
            cluster: false,
            tls: Some((free_port(), ca.server_cert(), ca.server_key())),
        };
        redis.restart();
        redis
    }

    /// `rediss://127.0.0.1:<tls port>`.
    pub fn tls_url(&self) -> String {
        let (port, _, _) = self.tls.as_ref().expect("started with Redis::start_tls");
        format!("rediss://127.0.0.1:{port}")
    }

    /// Starts a one-node Redis Cluster: cluster mode on, every hash slot assigned to this
    /// node. Clients speak the cluster protocol to it (CLUSTER SLOTS, MOVED) exactly as to
    /// a cluster of many.
    pub fn start_cluster() -> Redis {
        let mut redis = Redis {
            port: free_port(),
            dir: TempDir::new("redis-cluster"),
            child: None,
            cluster: true,
            tls: None,
        };
        redis.restart();
        redis
    }

    /// `redis+cluster://127.0.0.1:<port>`, svc's URL of a Redis Cluster.
    pub fn cluster_url(&self) -> String {
        assert!(self.cluster, "started with Redis::start_cluster");
        format!("redis+cluster://127.0.0.1:{}", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// The server's PID, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Stops the server (SIGKILL by PID: as abrupt as a crash) and waits for it to exit.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Freezes the server (SIGSTOP): connections stay open and nothing answers, the way
    /// a Redis stuck in a long command or behind a dead network path looks to a client.
    pub fn pause(&self) {
        self.signal("STOP");
    }

    /// Lets a paused server run again (SIGCONT).
    pub fn resume(&self) {
        self.signal("CONT");
    }

    fn signal(&self, signal: &str) {
        let pid = self.pid().expect("redis-server is running");
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &pid.to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -{signal} {pid}");
    }

    /// Starts the server again on the same port (empty: it keeps nothing on disk).
    pub fn restart(&mut self) {
        self.stop();
        let exe = program("redis-server", &[], "redis-server");
        let child = Command::new(exe)
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--protected-mode", "no"])
            .arg("--dir")
            .arg(self.dir.path())
            .args(if self.cluster {
                // A fresh node each time: the slots are assigned again below.
                let _ = std::fs::remove_file(self.dir.path().join("nodes.conf"));
                &["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"][..]
            } else {
                &[][..]
            })
            .args(match &self.tls {
                Some((port, cert, key)) => vec![
                    "--tls-port".to_string(),
                    port.to_string(),
                    "--tls-cert-file".to_string(),
                    cert.display().to_string(),
                    "--tls-key-file".to_string(),
                    key.display().to_string(),
                    "--tls-auth-clients".to_string(),
                    "no".to_string(),
                ],
                None => Vec::new(),
            })
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server");
        self.child = Some(child);
        let port = self.port;
        wait_until("redis-server", Duration::from_secs(10), || {
            command(port, &["PING"]).is_ok_and(|r| r.starts_with("+PONG"))
        });
        if self.cluster {
            let added = command(port, &["CLUSTER", "ADDSLOTSRANGE", "0", "16383"]).expect("CLUSTER ADDSLOTSRANGE");
            assert!(added.starts_with("+OK"), "CLUSTER ADDSLOTSRANGE: {added}");
            wait_until("the cluster's slots", Duration::from_secs(10), || {
                command(port, &["CLUSTER", "INFO"]).is_ok_and(|r| r.contains("cluster_state:ok"))
            });
        }
    }

    /// Sends one command and returns the raw reply (RESP), for tests that look inside.
    pub fn command(&self, args: &[&str]) -> std::io::Result<String> {
        command(self.port, args)
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
    }
}

/// One command over a new connection: the reply as text (enough for PING, KEYS, GET, TTL).
fn command(port: u16, args: &[&str]) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    let mut request = format!("*{}\r\n", args.len());
    for a in args {
        request.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    stream.write_all(request.as_bytes())?;
    let mut reply = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf)?;
        reply.extend_from_slice(&buf[..n]);
        if n == 0 || complete(&reply) {
            break;
        }
    }
    Ok(String::from_utf8_lossy(&reply).into_owned())
}

/// Whether `reply` holds one whole RESP value.
fn complete(reply: &[u8]) -> bool {
    fn value(b: &[u8]) -> Option<usize> {
        let end = b.windows(2).position(|w| w == b"\r\n")?;
        let line = std::str::from_utf8(&b[1..end]).ok()?;
        let rest = end + 2;
        match b.first()? {
            b'+' | b'-' | b':' => Some(rest),
            b'$' => {
                let n: i64 = line.parse().ok()?;
                if n < 0 {
                    Some(rest)
                } else {
                    let total = rest + n as usize + 2;
                    (b.len() >= total).then_some(total)
                }
            }
            b'*' => {
                let n: i64 = line.parse().ok()?;
                let mut at = rest;
                for _ in 0..n.max(0) {
                    at += value(&b[at..])?;
                }
                Some(at)
            }
            _ => None,
        }
    }
    value(reply).is_some()
}

/// A PostgreSQL cluster of our own: `initdb` in a temporary directory, `pg_ctl start`
/// on a free port, trust authentication on loopback, `fsync=off`.
pub struct Postgres {
    port: u16,
    dir: TempDir,
    data: PathBuf,
    bin: PathBuf,
    /// Run the server programs as this user (PostgreSQL refuses to run as root).
    run_as: Option<String>,
    /// TLS on (`ssl=on`, with the certificate of a [`TestCa`] copied into the directory).
    tls: bool,
}

impl Postgres {
    /// Creates and starts a cluster with a database `svc` owned by the user `svc`.
    pub fn start() -> Postgres {
        Postgres::start_with(None)
    }

    /// [`Postgres::start`], with TLS on: the server presents `ca`'s server certificate,
    /// and clients may connect with `sslmode=require`.
    pub fn start_tls(ca: &TestCa) -> Postgres {
        Postgres::start_with(Some(ca))
    }

    fn start_with(ca: Option<&TestCa>) -> Postgres {
        let extra: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .map(|entries| {
                let mut dirs: Vec<PathBuf> = entries.flatten().map(|e| e.path().join("bin")).collect();
                dirs.sort();
                dirs.reverse();
                dirs
            })
            .unwrap_or_default();
        // The directory of the real program (Debian links some of them elsewhere).
        let initdb = program("initdb", &extra, "postgresql");
        let initdb = std::fs::canonicalize(&initdb).unwrap_or(initdb);
        let bin = initdb.parent().expect("initdb is in a directory").to_path_buf();
        let dir = TempDir::new("postgres");
        let data = dir.path().join("data");
        let run_as = is_root().then(|| "postgres".to_string());
        if let Some(ca) = ca {
            // PostgreSQL refuses a key that others can read.
            std::fs::copy(ca.server_cert(), dir.path().join("server.pem")).expect("copy the server certificate");
            std::fs::copy(ca.server_key(), dir.path().join("server.key")).expect("copy the server key");
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir.path().join("server.key"), std::fs::Permissions::from_mode(0o600))
                .expect("chmod the server key");
        }
        if let Some(user) = &run_as {
            // The server's user must own its directory.
            let status = Command::new("chown")
                .args(["-R", user])
                .arg(dir.path())
                .status()
                .expect("run chown");
            assert!(status.success(), "chown the PostgreSQL directory to `{user}`");
        }
        let pg = Postgres {
            port: free_port(),
            dir,
            data,
            bin,
            run_as,
            tls: ca.is_some(),
        };
        run_ok(pg.pg_command("initdb").arg("-D").arg(&pg.data).args([
            "-U",
            "svc",
            "--auth=trust",
            "--no-sync",
            "-E",
            "UTF8",
            "--locale=C",
        ]));
        pg.start_server();
        run_ok(
            pg.pg_command("createdb")
                .args(["-h", "127.0.0.1", "-p", &pg.port.to_string(), "-U", "svc", "svc"]),
        );
        pg
    }

    fn pg_command(&self, program: &str) -> Command {
        let exe = self.bin.join(program);
        match &self.run_as {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(exe);
                c
            }
            None => Command::new(exe),
        }
    }

    fn start_server(&self) {
        let mut options = format!(
            "-p {} -c listen_addresses=127.0.0.1 -k {} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200",
            self.port,
            self.dir.path().display()
        );
        if self.tls {
            let dir = self.dir.path().display();
            options.push_str(&format!(
                " -c ssl=on -c ssl_cert_file={dir}/server.pem -c ssl_key_file={dir}/server.key"
            ));
        }
        let out = self
            .pg_command("pg_ctl")
            .arg("-D")
            .arg(&self.data)
            .args(["-o", &options, "-l"])
            .arg(self.dir.path().join("server.log"))
            .args(["-w", "-t", "30", "start"])
            .output()
            .expect("run pg_ctl start");
        assert!(
            out.status.success(),
            "pg_ctl start failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
        );
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `postgres://svc@127.0.0.1:<port>/svc`.
    pub fn url(&self) -> String {
        format!("postgres://svc@127.0.0.1:{}/svc", self.port)
    }

    /// The postmaster's PID, while it runs.
    pub fn pid(&self) -> Option<u32> {
        let text = std::fs::read_to_string(self.data.join("postmaster.pid")).ok()?;
        text.lines().next()?.trim().parse().ok()
    }

    /// Stops the server by PID (SIGINT: the fast shutdown, which drops every connection)
    /// and waits until it has exited.
    pub fn stop(&self) {
        let Some(pid) = self.pid() else { return };
        let _ = Command::new("kill").args(["-INT", &pid.to_string()]).status();
        wait_until("PostgreSQL to stop", Duration::from_secs(30), || {
            !Path::new(&format!("/proc/{pid}")).exists() || !self.data.join("postmaster.pid").exists()
        });
    }

    /// Starts the stopped server again, on the same port with the same data.
    pub fn restart(&self) {
        self.stop();
        self.start_server();
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.stop();
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resp_replies_are_read_whole() {
        assert!(complete(b"+PONG\r\n"));
        assert!(complete(b"$3\r\nabc\r\n"));
        assert!(!complete(b"$3\r\nab"));
        assert!(complete(b"*2\r\n$1\r\na\r\n:5\r\n"));
        assert!(!complete(b"*2\r\n$1\r\na\r\n"));
        assert!(complete(b"*0\r\n"));
    }

    #[test]
    fn servers_start_answer_and_stop() {
        let mut redis = Redis::start();
        assert!(redis.command(&["PING"]).unwrap().starts_with("+PONG"));
        redis.stop();
        assert!(redis.command(&["PING"]).is_err());
        redis.restart();
        assert!(redis.command(&["PING"]).unwrap().starts_with("+PONG"));

        let pg = Postgres::start();
        assert!(pg.pid().is_some());
        assert!(TcpStream::connect(("127.0.0.1", pg.port())).is_ok());
        pg.stop();
        assert!(TcpStream::connect(("127.0.0.1", pg.port())).is_err());
        pg.restart();
        assert!(TcpStream::connect(("127.0.0.1", pg.port())).is_ok());
    }
}
