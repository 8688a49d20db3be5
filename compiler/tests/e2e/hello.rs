//! `examples/hello`: a public GET route, rate limited by IP, with an enum query parameter.

use crate::harness::{answer_of, binary, client, error, error_of, json_of, run_to_exit_with, start, start_binary};
use crate::support::assert_contains;
use std::time::Duration;

#[tokio::test]
async fn greets_with_typed_query_parameters_and_enum_round_trips() {
    let (server, _) = start("hello", &[], |_| ());
    let c = client();
    let r = c.get(server.url("/demo/hello/greeting")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["ratelimit-policy"], "\"limit\";q=60;w=60");
    assert!(
        r.headers()["ratelimit"]
            .to_str()
            .unwrap()
            .starts_with("\"limit\";r=59;")
    );
    assert_eq!(
        r.json::<serde_json::Value>().await.unwrap(),
        serde_json::json!({"message": "Hello, world!", "tone": "friendly"})
    );
    // The enum's wire value `arr` (key `pirate`) goes in and comes back out.
    let body: serde_json::Value = json_of(c.get(server.url("/demo/hello/greeting?name=Ada&tone=arr"))).await;
    assert_eq!(body, serde_json::json!({"message": "Ahoy, Ada!", "tone": "arr"}));
    let body: serde_json::Value = json_of(c.get(server.url("/demo/hello/greeting?tone=formal&name=Grace"))).await;
    assert_eq!(body["message"], "Good day, Grace.");
    // HEAD is answered for GET routes.
    assert_eq!(
        c.head(server.url("/demo/hello/greeting"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
}

/// A server whose stderr nobody reads (a stalled log shipper, a parent that never reads
/// the pipe) keeps answering: log lines it cannot write are dropped and counted.
#[tokio::test]
async fn a_stderr_nobody_reads_does_not_stop_the_server() {
    let (server, _) = start_binary("hello", &binary("hello"), &[], &[("SVC_LOG", "info")], |_| ());
    server.stop_reading_stderr();
    let c = client();
    // Each request writes an access line of more than 100 bytes: 3,000 of them are more
    // than the pipe's 64 KiB and the 1,024 lines the server holds for it.
    for i in 0..3000 {
        let request = c.get(server.url(&format!("/demo/hello/greeting?name=n{i}"))).send();
        let answer = tokio::time::timeout(Duration::from_secs(10), request)
            .await
            .unwrap_or_else(|_| panic!("request {i} not answered in 10 s: the server waits for its stderr"));
        // 200, then 429 once the route's limit (60 a minute per IP) is spent.
        assert!([200, 429].contains(&answer.unwrap().status().as_u16()));
    }
    let answer = c.get(server.url("/metrics")).send().await.unwrap();
    let metrics = answer.text().await.unwrap();
    let dropped: u64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("svc_log_lines_dropped_total "))
        .unwrap_or_else(|| panic!("no svc_log_lines_dropped_total in {metrics}"))
        .parse()
        .unwrap();
    assert!(dropped > 0, "no log line dropped, yet nothing read them");
}

#[tokio::test]
async fn bad_requests_get_json_4xx() {
    let (server, _) = start("hello", &[], |_| ());
    let c = client();
    let (s, body) = error_of(c.get(server.url("/demo/hello/greeting?tone=loud"))).await;
    assert_eq!(s, 400);
    assert_eq!(body["error"]["field"], "query.tone");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("expected one of `friendly`, `formal`, `arr`"),
        "{body}"
    );
    let (s, _) = error_of(c.get(server.url("/demo/hello/greeting?name=a&name=b"))).await;
    assert_eq!(s, 400);
    let r = c.post(server.url("/demo/hello/greeting")).send().await.unwrap();
    assert_eq!(r.headers()["allow"], "GET, HEAD");
    let (s, _) = error(r).await;
    assert_eq!(s, 405);
    let (s, _) = error_of(c.get(server.url("/demo/hello/nope"))).await;
    assert_eq!(s, 404);
    let (s, _) = error_of(c.get(server.url("/other/hello/greeting"))).await;
    assert_eq!(s, 404);
}

#[tokio::test]
async fn ctx_fail_takes_the_flows_on_fail_to_a_422() {
    let (server, _) = start("hello", &[], |_| ());
    let long = "x".repeat(101);
    let (status, body) = answer_of(client().get(server.url(&format!("/demo/hello/greeting?name={long}")))).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        body,
        serde_json::json!({"error": {"code": "NAME_TOO_LONG", "message": "the name is longer than 100 characters"}})
    );
}

#[tokio::test]
async fn rate_limit_both_outputs() {
    let (server, _) = start("hello", &[], |_| ());
    let c = client();
    for i in 0..60 {
        assert_eq!(
            c.get(server.url("/demo/hello/greeting")).send().await.unwrap().status(),
            200,
            "request {i}"
        );
    }
    let r = c.get(server.url("/demo/hello/greeting")).send().await.unwrap();
    assert_eq!(r.headers()["retry-after"], "1");
    assert!(r.headers()["ratelimit"].to_str().unwrap().starts_with("\"limit\";r=0;"));
    let (s, body) = error(r).await;
    assert_eq!(s, 429);
    assert_eq!(body["error"]["code"], "rate_limited");
}

#[test]
fn version_and_routes() {
    let bin = binary("hello");
    let out = std::process::Command::new(&bin).arg("--version").output().unwrap();
    // `svc build` embeds the commit of the project (the repository's, here).
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(
        version.starts_with("hello 0.1.0 (git ") && version.ends_with(')'),
        "{version}"
    );
    let out = std::process::Command::new(&bin).arg("routes").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("GET") && text.contains("/demo/hello/greeting"), "{text}");
    assert_contains(
        &text,
        &[
            "rate-limit limit (60/60s by ip) → code greet (hello.greet) → return-json ok (200)",
            "flows/greeting.yaml",
        ],
    );
}

#[test]
fn a_worker_thread_count_that_is_not_a_number_is_refused_with_a_message() {
    // tokio itself panics on these; the server names the setting and exits 1.
    for bad in ["two", "0"] {
        let (code, stderr) = run_to_exit_with("hello", &[("TOKIO_WORKER_THREADS", bad)], |_| ());
        assert_eq!(code, 1, "{stderr}");
        assert!(
            stderr.contains(&format!("TOKIO_WORKER_THREADS is `{bad}`: it must be a whole number")),
            "{stderr}"
        );
        assert!(!stderr.contains("panic"), "{stderr}");
    }
}

/// systemd's socket activation (`svc dev` hands its servers their socket this way, and
/// `cli_dev` tests the restarts): what is not one listening socket is refused by name;
/// a socket is taken only with `LISTEN_PID` naming the server (or under `--dev`); once
/// taken, descriptor 3 is closed on exec, and an explicit `--port` it overrides is
/// named at start-up.
#[tokio::test]
async fn a_socket_handed_over_must_be_one_listening_socket_for_this_process() {
    // `LISTEN_PID=$$` then `exec`: the server's own process id, as systemd sets it.
    let with_own_pid = |env: &str, handed: Option<&std::net::TcpListener>| {
        use std::os::fd::AsRawFd;
        use std::os::unix::process::CommandExt;
        let mut command = std::process::Command::new("sh");
        command
            .args([
                "-c",
                &format!("LISTEN_PID=$$ {env} exec \"$0\" serve --port 0 --store \"$1\""),
            ])
            .arg(binary("hello"))
            .arg(std::env::temp_dir().join(format!("svc-e2e-handed-{}.db", std::process::id())))
            .env("SVC_LOG", "info")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        if let Some(socket) = handed {
            let fd = socket.as_raw_fd();
            // SAFETY: dup2 only, between fork and exec.
            unsafe {
                command.pre_exec(move || {
                    if libc::dup2(fd, 3) == -1 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        command.spawn().unwrap()
    };
    let exit = |child: std::process::Child| {
        let out = child.wait_with_output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, stderr) = exit(with_own_pid("LISTEN_FDS=2", None));
    assert_eq!(code, 1, "{stderr}");
    assert_contains(&stderr, &["error: LISTEN_FDS=2: svc serves one socket"]);
    // Descriptor 3 is closed, or whatever the test runner left there: not a socket.
    let (code, stderr) = exit(with_own_pid("LISTEN_FDS=1", None));
    assert_eq!(code, 1, "{stderr}");
    assert_contains(&stderr, &["error: LISTEN_FDS=1, but file descriptor 3 is "]);
    // Handed to another process (`LISTEN_PID`): not ours, and the server binds its port.
    let (server, _) = start_binary(
        "hello",
        &binary("hello"),
        &[],
        &[("LISTEN_FDS", "1"), ("LISTEN_PID", "1")],
        |_| (),
    );
    let r = client().get(server.url("/demo/hello/greeting")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    drop(server);
    // No `LISTEN_PID` at all, and not `--dev`: ignored, and said, as `sd_listen_fds`
    // ignores it (only `svc dev` hands a socket over without it).
    let (server, _) = start_binary("hello", &binary("hello"), &[], &[("LISTEN_FDS", "2")], |_| ());
    let r = client().get(server.url("/demo/hello/greeting")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    drop(server);

    // A real socket, for this process: taken, closed on exec, and the `--port 0` it
    // overrides is named.
    let socket = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = socket.local_addr().unwrap();
    let mut child = with_own_pid("LISTEN_FDS=1", Some(&socket));
    drop(socket);
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
    assert_eq!(line.trim(), format!("listening on http://{addr}"));
    let fdinfo = std::fs::read_to_string(format!("/proc/{}/fdinfo/3", child.id())).unwrap();
    let flags = fdinfo
        .lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .map(|f| u32::from_str_radix(f.trim(), 8).unwrap())
        .unwrap();
    assert_ne!(
        flags & libc::O_CLOEXEC as u32,
        0,
        "descriptor 3 is closed on exec: {fdinfo}"
    );
    let r = client()
        .get(format!("http://{addr}/demo/hello/greeting"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // Stopped as an operator stops it (SIGTERM), so that the lines it queued are written:
    // a SIGKILL could land before its log writer wrote the warning (seen under load).
    // SAFETY: a signal to our own child, which has not been waited for.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let (_, stderr) = exit(child);
    assert_contains(
        &stderr,
        &["--addr/--port (or SVC_ADDR/SVC_PORT) ignored: listening on the socket handed over (LISTEN_FDS)"],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_with_a_thousand_slowloris_clients_exits_within_the_shutdown_deadline() {
    use tokio::io::AsyncWriteExt;
    // Heads are given a minute: only the shutdown deadline can end these connections.
    let (mut server, _) = start(
        "hello",
        &["--header-read-timeout-ms", "60000", "--shutdown-timeout-ms", "1500"],
        |_| (),
    );
    let addr = server.base.trim_start_matches("http://").to_string();
    let mut slow = Vec::new();
    for _ in 0..1000 {
        let mut s = tokio::net::TcpStream::connect(&addr).await.unwrap();
        s.write_all(b"GET /demo/hello/greeting HTTP/1.1\r\nHost: x\r\n")
            .await
            .unwrap();
        slow.push(s);
    }
    let c = client();
    for _ in 0..20 {
        assert_eq!(
            c.get(server.url("/demo/hello/greeting")).send().await.unwrap().status(),
            200
        );
    }
    let asked = std::time::Instant::now();
    server.terminate();
    let status = tokio::task::block_in_place(|| server.wait_for_exit(Duration::from_secs(6)))
        .expect("the server exits despite 1,000 clients holding half-sent requests");
    assert!(status.success(), "{status:?}");
    let took = asked.elapsed();
    assert!(
        took < Duration::from_millis(1500 + 2000),
        "exited {took:?} after SIGTERM"
    );
    drop(slow);
}
