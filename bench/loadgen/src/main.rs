//! An open-loop HTTP/1.1 load generator: requests at a fixed rate, each one's latency
//! measured from the moment it was *scheduled*, not the moment it could be sent.
//!
//!     loadgen --url http://127.0.0.1:8080/path --rate 40000 [--seconds 3] [--warmup 0.5]
//!             [--connections 64] [--method POST] [--header 'name: value']... [--body TEXT]
//!             [--expect 201]
//!
//! Why not wrk: wrk is closed-loop. Each of its connections sends the next request when
//! the last answer arrives, so at saturation every request waits for the 63 others and
//! p99 measures the kernel's time slice and the two processes' scheduling more than the
//! server; and below saturation a slow answer delays the requests that would have been
//! sent meanwhile, which are then never measured ("coordinated omission"). Here request
//! `i` is due at `start + i / rate` whatever happens to the others, goes out on connection
//! `i mod connections` (keep-alive, one request in flight per connection, as wrk2 does),
//! and its latency runs from its due time to the last byte of its answer: a request that
//! waits for its connection is late, and the wait counts.
//!
//! One thread: the dispatcher spins (yielding to the connections' tasks between due
//! times) instead of sleeping on tokio's millisecond timer, which would send the requests
//! of each millisecond in one burst. The generator is meant to have a core of its own
//! (`taskset`); it reports how late it dispatched, so that a run it could not keep up
//! with is seen as such.
//!
//! Prints one JSON object on stdout (with `--histogram`, every latency to the microsecond,
//! so that runs can be pooled). Exits 1, with the reason on stderr, if the server
//! closes a connection, answers something that is not HTTP/1.1 with a Content-Length,
//! sends more bytes than an answer's Content-Length, or answers a status other than
//! `--expect`.

use std::io;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::rc::Rc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

#[derive(Debug)]
struct Options {
    addr: SocketAddr,
    host: String,
    path: String,
    rate: f64,
    seconds: f64,
    warmup: f64,
    connections: usize,
    method: String,
    headers: Vec<String>,
    body: String,
    expect: u16,
    histogram: bool,
}

const USAGE: &str = "usage: loadgen --url http://HOST:PORT/PATH --rate REQUESTS_PER_SECOND [--seconds 3] [--warmup 0.5] \
[--connections 64] [--method GET|POST|...] [--header 'name: value']... [--body TEXT] [--expect STATUS] [--histogram]";

fn parse_options(args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut url = None;
    let mut rate = None;
    let mut options = Options {
        addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        host: String::new(),
        path: String::new(),
        rate: 0.0,
        seconds: 3.0,
        warmup: 0.5,
        connections: 64,
        method: "GET".into(),
        headers: Vec::new(),
        body: String::new(),
        expect: 200,
        histogram: false,
    };
    let mut args = args;
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        let number = |text: String, what: &str| -> Result<f64, String> {
            text.parse::<f64>()
                .ok()
                .filter(|n| n.is_finite() && *n >= 0.0)
                .ok_or_else(|| format!("{what} must be a number ≥ 0, not `{text}`"))
        };
        match flag.as_str() {
            "--url" => url = Some(value()?),
            "--rate" => rate = Some(number(value()?, "--rate")?),
            "--seconds" => options.seconds = number(value()?, "--seconds")?,
            "--warmup" => options.warmup = number(value()?, "--warmup")?,
            "--connections" => {
                options.connections = value()?
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or("--connections must be a whole number ≥ 1")?
            }
            "--method" => options.method = value()?,
            "--header" => {
                let header = value()?;
                if !header.contains(':') || header.contains(['\r', '\n']) {
                    return Err(format!("--header must be `name: value` on one line, not `{header}`"));
                }
                options.headers.push(header)
            }
            "--body" => options.body = value()?,
            "--expect" => options.expect = value()?.parse().map_err(|_| "--expect must be an HTTP status")?,
            "--histogram" => options.histogram = true,
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    let url = url.ok_or(USAGE)?;
    options.rate = rate.filter(|r| *r > 0.0).ok_or("--rate must be given, and above 0")?;
    if options.seconds == 0.0 {
        return Err("--seconds must be above 0".into());
    }
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("only http:// URLs are supported, not `{url}`"))?;
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    options.addr = std::net::ToSocketAddrs::to_socket_addrs(authority)
        .map_err(|e| format!("cannot resolve `{authority}`: {e}"))?
        .next()
        .ok_or_else(|| format!("`{authority}` resolves to no address"))?;
    options.host = authority.to_string();
    options.path = if path.is_empty() { "/".into() } else { path.into() };
    Ok(options)
}

/// The one request every connection sends, serialised once.
fn request_bytes(o: &Options) -> Rc<[u8]> {
    let mut head = format!("{} {} HTTP/1.1\r\nhost: {}\r\n", o.method, o.path, o.host);
    for header in &o.headers {
        head.push_str(header);
        head.push_str("\r\n");
    }
    if !o.body.is_empty() || o.method != "GET" {
        head.push_str(&format!("content-length: {}\r\n", o.body.len()));
    }
    head.push_str("\r\n");
    head.push_str(&o.body);
    head.into_bytes().into()
}

/// One scheduled request: when it was due, and whether it falls in the measured window.
struct Job {
    due: Instant,
    measured: bool,
}

#[derive(Default)]
struct ConnectionResult {
    latencies_ns: Vec<u64>,
    completed: u64,
}

/// Reads one answer into `buf` and returns its status. No pipelining: the answer must end
/// exactly where the bytes read end, and bytes after it are an error (a server that sends
/// more than it declared would otherwise have its next answer misread, or its extra bytes
/// dropped unmeasured). Bytes that arrive later are read as the start of the next answer,
/// and refused there.
async fn read_answer(stream: &mut TcpStream, buf: &mut Vec<u8>) -> io::Result<u16> {
    let bad = |what: String| io::Error::new(io::ErrorKind::InvalidData, what);
    let mut filled = 0;
    let mut scanned: usize = 0;
    let head_end = loop {
        if filled == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        let n = stream.read(&mut buf[filled..]).await?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            ));
        }
        filled += n;
        if let Some(at) = buf[scanned.saturating_sub(3)..filled]
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
        {
            break scanned.saturating_sub(3) + at + 4;
        }
        scanned = filled;
    };
    let head = std::str::from_utf8(&buf[..head_end]).map_err(|_| bad("the answer's head is not UTF-8".into()))?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .strip_prefix("HTTP/1.1 ")
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse::<u16>().ok())
        .ok_or_else(|| bad(format!("not an HTTP/1.1 status line: `{status_line}`")))?;
    let mut length = None;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        if name.eq_ignore_ascii_case("content-length") {
            length = value.trim().parse::<usize>().ok();
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(bad(
                "chunked answers are not supported: the benchmark's answers carry a Content-Length".into(),
            ));
        } else if name.eq_ignore_ascii_case("connection") && value.trim().eq_ignore_ascii_case("close") {
            return Err(bad(format!("the server answered {status} and closes the connection")));
        }
    }
    // 204 and 304 have no body by definition (RFC 9110), with or without the header.
    let length = if matches!(status, 204 | 304) { Some(0) } else { length };
    let total = head_end + length.ok_or_else(|| bad(format!("an answer ({status}) without Content-Length")))?;
    if filled > total {
        return Err(bad(format!(
            "the server sent {} bytes after its answer ({status}, content-length {})",
            filled - total,
            total - head_end
        )));
    }
    if buf.len() < total {
        buf.resize(total, 0);
    }
    while filled < total {
        let n = stream.read(&mut buf[filled..total]).await?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection mid-answer",
            ));
        }
        filled += n;
    }
    Ok(status)
}

async fn connection(
    mut stream: TcpStream,
    request: Rc<[u8]>,
    mut jobs: mpsc::UnboundedReceiver<Job>,
    expect: u16,
) -> io::Result<ConnectionResult> {
    let mut result = ConnectionResult::default();
    let mut buf = vec![0; 16 * 1024];
    while let Some(job) = jobs.recv().await {
        stream.write_all(&request).await?;
        let status = read_answer(&mut stream, &mut buf).await?;
        let done = Instant::now();
        if status != expect {
            return Err(io::Error::other(format!("the server answered {status}, not {expect}")));
        }
        result.completed += 1;
        if job.measured {
            result.latencies_ns.push((done - job.due).as_nanos() as u64);
        }
    }
    Ok(result)
}

/// Sends job `i` to connection `i mod n` at `start + i / rate`, until `start + warmup +
/// seconds`; returns how late each measured job was dispatched.
async fn dispatch(o: &Options, start: Instant, senders: Vec<mpsc::UnboundedSender<Job>>) -> Vec<u64> {
    let measure_from = start + Duration::from_secs_f64(o.warmup);
    let end = measure_from + Duration::from_secs_f64(o.seconds);
    let period_ns = 1e9 / o.rate;
    let mut lag_ns = Vec::with_capacity((o.rate * o.seconds) as usize + 1);
    let mut i: u64 = 0;
    loop {
        let due = start + Duration::from_nanos((i as f64 * period_ns) as u64);
        if due >= end {
            return lag_ns;
        }
        let now = Instant::now();
        if due > now {
            let ahead = due - now;
            if ahead > Duration::from_millis(2) {
                tokio::time::sleep(ahead - Duration::from_millis(1)).await;
            } else {
                tokio::task::yield_now().await;
            }
            continue;
        }
        let measured = due >= measure_from;
        if measured {
            lag_ns.push((now - due).as_nanos() as u64);
        }
        // A connection whose task has failed has dropped its receiver; its error is
        // reported when the tasks are joined.
        let _ = senders[(i % senders.len() as u64) as usize].send(Job { due, measured });
        i += 1;
    }
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1] as f64 / 1e3
}

/// Every latency, to the microsecond, as `[[microseconds, count], ...]` in ascending order
/// (only the values that occur): runs can then be pooled before taking percentiles, which a
/// percentile of each run cannot be.
fn histogram(sorted_ns: &[u64]) -> String {
    let mut out = String::from("[");
    let mut i = 0;
    while i < sorted_ns.len() {
        let us = sorted_ns[i] / 1000;
        let run = sorted_ns[i..].partition_point(|&ns| ns / 1000 == us);
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!("[{us},{run}]"));
        i += run;
    }
    out.push(']');
    out
}

/// Percentiles and mean, in microseconds, of latencies sorted ascending.
fn summary(ns: &[u64]) -> String {
    let mean = if ns.is_empty() {
        0.0
    } else {
        ns.iter().sum::<u64>() as f64 / ns.len() as f64 / 1e3
    };
    format!(
        "{{\"p50\":{:.1},\"p90\":{:.1},\"p99\":{:.1},\"p999\":{:.1},\"max\":{:.1},\"mean\":{:.1}}}",
        percentile(ns, 0.50),
        percentile(ns, 0.90),
        percentile(ns, 0.99),
        percentile(ns, 0.999),
        percentile(ns, 1.0),
        mean
    )
}

async fn run(o: Options) -> Result<String, String> {
    let request = request_bytes(&o);
    let mut streams = Vec::with_capacity(o.connections);
    for _ in 0..o.connections {
        let stream = TcpStream::connect(o.addr)
            .await
            .map_err(|e| format!("cannot connect to {}: {e}", o.addr))?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        streams.push(stream);
    }
    let mut senders = Vec::with_capacity(o.connections);
    let mut tasks = Vec::with_capacity(o.connections);
    for stream in streams {
        let (tx, rx) = mpsc::unbounded_channel();
        senders.push(tx);
        tasks.push(tokio::task::spawn_local(connection(
            stream,
            request.clone(),
            rx,
            o.expect,
        )));
    }
    let start = Instant::now() + Duration::from_millis(1);
    let mut lag = dispatch(&o, start, senders).await;
    let dispatched_until = Instant::now();
    let mut latencies = Vec::with_capacity(lag.len());
    let mut completed = 0;
    for task in tasks {
        let result = task.await.map_err(|e| e.to_string())?.map_err(|e| e.to_string())?;
        completed += result.completed;
        latencies.extend(result.latencies_ns);
    }
    let drained_after_ms = (Instant::now() - dispatched_until).as_secs_f64() * 1e3;
    latencies.sort_unstable();
    lag.sort_unstable();
    let histogram = if o.histogram {
        format!(",\"histogram_us\":{}", histogram(&latencies))
    } else {
        String::new()
    };
    Ok(format!(
        "{{\"rate\":{},\"seconds\":{},\"connections\":{},\"measured\":{},\"completed\":{},\"drained_after_ms\":{:.1},\
\"latency_us\":{},\"dispatch_lag_us\":{}{}}}",
        o.rate,
        o.seconds,
        o.connections,
        latencies.len(),
        completed,
        drained_after_ms,
        summary(&latencies),
        summary(&lag),
        histogram
    ))
}

fn main() -> ExitCode {
    if std::env::args().skip(1).any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let options = match parse_options(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("loadgen: {message}");
            return ExitCode::from(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    match tokio::task::LocalSet::new().block_on(&runtime, run(options)) {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("loadgen: {message}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    fn options(args: &[&str]) -> Result<Options, String> {
        parse_options(args.iter().map(|s| s.to_string()))
    }

    /// Serves `chunks` (written one by one, with a pause between) to the first request on
    /// a real loopback socket and returns what `read_answer` made of them.
    fn answer(chunks: &'static [&'static [u8]]) -> io::Result<u16> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let server = tokio::spawn(async move {
                let (mut socket, _) = listener.accept().await.unwrap();
                let mut request = [0; 1024];
                let _ = socket.read(&mut request).await.unwrap();
                for chunk in chunks {
                    socket.write_all(chunk).await.unwrap();
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            });
            let mut stream = TcpStream::connect(addr).await.unwrap();
            stream.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n").await.unwrap();
            let mut buf = vec![0; 8];
            let status = read_answer(&mut stream, &mut buf).await;
            server.await.unwrap();
            status
        })
    }

    #[test]
    fn an_answer_split_anywhere_is_read_whole() {
        let status = answer(&[
            b"HTTP/1.1 201 Created\r\ncontent-le",
            b"ngth: 11\r\n\r",
            b"\nhello",
            b" world",
        ]);
        assert_eq!(status.unwrap(), 201);
    }

    #[test]
    fn answers_without_a_body_need_no_length() {
        assert_eq!(
            answer(&[b"HTTP/1.1 204 No Content\r\nvary: Origin\r\n\r\n"]).unwrap(),
            204
        );
        let no_length = answer(&[b"HTTP/1.1 200 OK\r\n\r\n"]);
        assert!(no_length.unwrap_err().to_string().contains("without Content-Length"));
    }

    #[test]
    fn answers_it_cannot_measure_are_errors_not_numbers() {
        let chunked = answer(&[b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n"]);
        assert!(chunked.unwrap_err().to_string().contains("chunked"));
        let closing = answer(&[b"HTTP/1.1 429 Too Many Requests\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"]);
        assert!(closing.unwrap_err().to_string().contains("429"));
        let short = answer(&[b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc"]);
        assert_eq!(short.unwrap_err().kind(), io::ErrorKind::UnexpectedEof);
        let too_long = answer(&[b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}extra"]);
        assert!(too_long.unwrap_err().to_string().contains("5 bytes after its answer"));
        let not_http = answer(&[b"SSH-2.0-OpenSSH\r\n\r\n"]);
        assert!(not_http.unwrap_err().to_string().contains("status line"));
    }

    #[test]
    fn the_request_is_serialised_once_with_its_length() {
        let o = options(&[
            "--url",
            "http://127.0.0.1:9/a/b",
            "--rate",
            "10",
            "--method",
            "POST",
            "--header",
            "x-api-key: k",
            "--body",
            "{}",
        ])
        .unwrap();
        assert_eq!(
            &*request_bytes(&o),
            b"POST /a/b HTTP/1.1\r\nhost: 127.0.0.1:9\r\nx-api-key: k\r\ncontent-length: 2\r\n\r\n{}"
        );
    }

    #[test]
    fn bad_options_are_refused_with_the_reason() {
        assert!(options(&["--rate", "10"]).unwrap_err().contains("usage"));
        assert!(
            options(&["--url", "http://127.0.0.1:9/", "--rate", "0"])
                .unwrap_err()
                .contains("--rate")
        );
        assert!(
            options(&["--url", "https://127.0.0.1:9/", "--rate", "1"])
                .unwrap_err()
                .contains("http://")
        );
        assert!(
            options(&["--url", "http://127.0.0.1:9/", "--rate", "1", "--header", "no colon"])
                .unwrap_err()
                .contains("name: value")
        );
        assert!(
            options(&["--url", "http://127.0.0.1:9/", "--rate", "1", "--connections", "0"])
                .unwrap_err()
                .contains("--connections")
        );
    }

    #[test]
    fn the_histogram_counts_each_microsecond_once() {
        assert_eq!(
            histogram(&[10, 999, 1000, 1500, 1999, 7000, 7001]),
            "[[0,2],[1,3],[7,2]]"
        );
        assert_eq!(histogram(&[]), "[]");
    }

    #[test]
    fn percentiles_are_ranks_of_the_sorted_latencies() {
        let ns: Vec<u64> = (1..=1000).map(|i| i * 1000).collect();
        assert_eq!(percentile(&ns, 0.5), 500.0);
        assert_eq!(percentile(&ns, 0.99), 990.0);
        assert_eq!(percentile(&ns, 0.999), 999.0);
        assert_eq!(percentile(&ns, 1.0), 1000.0);
        assert_eq!(percentile(&[], 0.99), 0.0);
    }

    /// Runs loadgen with `args` (and `--url`) against a server on a real socket that
    /// answers every request of every connection with `answer`, `delay` after reading it;
    /// returns loadgen's JSON.
    fn run_against(answer: &'static [u8], delay: Duration, args: &[&str]) -> String {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let local = tokio::task::LocalSet::new();
        local.block_on(&runtime, async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let url = format!("http://{}/", listener.local_addr().unwrap());
            tokio::task::spawn_local(async move {
                loop {
                    let (mut socket, _) = listener.accept().await.unwrap();
                    tokio::task::spawn_local(async move {
                        let mut buf = [0; 4096];
                        while let Ok(n) = socket.read(&mut buf).await {
                            tokio::time::sleep(delay).await;
                            if n == 0 || socket.write_all(answer).await.is_err() {
                                return;
                            }
                        }
                    });
                }
            });
            let mut all = vec!["--url", url.as_str()];
            all.extend_from_slice(args);
            run(options(&all).unwrap()).await.unwrap()
        })
    }

    /// The number after `"name":` in `json` (the first one after `within`, when given).
    fn number(json: &str, within: Option<&str>, name: &str) -> f64 {
        let section = within.map_or(json, |w| json.split(&format!("\"{w}\":{{")).nth(1).unwrap());
        let after = section.split(&format!("\"{name}\":")).nth(1).unwrap();
        after.split([',', '}']).next().unwrap().parse().unwrap()
    }

    /// A server that takes 20 ms per answer on one connection, asked for one every 10 ms:
    /// the requests queue behind each other and their latency grows with the queue, as a
    /// real client's would. A closed-loop tool would report 20 ms for every one of them.
    #[test]
    fn waiting_for_a_busy_connection_counts_as_latency() {
        let json = run_against(
            b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n",
            Duration::from_millis(20),
            &[
                "--rate",
                "100",
                "--seconds",
                "0.3",
                "--warmup",
                "0",
                "--connections",
                "1",
            ],
        );
        // 30 requests due over 290 ms, the last answered after 30 × 20 ms: about 310 ms late.
        assert!(number(&json, Some("latency_us"), "max") > 250_000.0, "{json}");
        assert!(number(&json, Some("latency_us"), "p50") > 100_000.0, "{json}");
    }

    /// The schedule is kept: at 2,000 requests a second for a quarter second against a
    /// server that answers at once, about 500 are measured and none is lost.
    #[test]
    fn a_run_sends_the_scheduled_requests_and_measures_each() {
        let json = run_against(
            b"HTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\n{}",
            Duration::ZERO,
            &[
                "--rate",
                "2000",
                "--seconds",
                "0.25",
                "--warmup",
                "0.05",
                "--connections",
                "4",
                "--expect",
                "201",
            ],
        );
        assert!((495.0..=505.0).contains(&number(&json, None, "measured")), "{json}");
        assert!((595.0..=605.0).contains(&number(&json, None, "completed")), "{json}");
    }
}
