#!/usr/bin/env python3
"""Generated server versus hand-written baselines, under the same load generator.

    python3 bench/load.py [--seconds 3] [--rounds 6] [--connections 64] [--threads 1,default] [--load 0.25,0.5]
    python3 bench/load.py --latency-only [--rounds N] [--load ...]
    python3 bench/load.py --chain-only [--pairs 20] [--pair-seconds 1] [--chain-control]
    python3 bench/load.py --compare NAME=BINARY NAME=BINARY ... [--rounds N]

Builds (release) the generated server of bench/project and two hand-written servers of
the same route: bench/independent (axum, governor, sha2 + subtle, serde: no svc code) and
bench/baseline (hand-written glue over svc's own building blocks). Creates an API key in
a fresh store, then, for each worker-thread setting (TOKIO_WORKER_THREADS=1, and the
default: one per core of the machine, set explicitly since tokio counts only the cores
taskset leaves it), starts the servers and runs wrk against:

  * the full route (Check Origin, Check API Key, Rate Limit by API key, two code nodes,
    Return JSON) on every server, interleaved round by round: the generated server as
    `serve` runs by default, the same with its access and node log lines on
    (SVC_LOG=info), the independent server and the svc-blocks baseline;
  * the cost ladder on the generated and the independent server: the same work as a bare
    route (body, both code nodes, the 201 answer), then Check Origin, Check API Key and
    Rate Limit added in turn;
  * the full chain's cost, by pairs of short runs: the bare route and the full chain
    back to back on each of the two servers, the order reversed every other pair, so
    that the machine's drift over seconds falls on both routes of a pair alike (the
    ladder's rounds put 9 s between a bare run and its chain run, and single rounds
    swing by 30 points; most pairs fall within 2 points of their median, a few far
    outside it, which the median ignores);
  * latency at fixed rates, open loop (bench/loadgen): the full route on the generated
    and the independent server at the same request rates, fractions (`--load`) of the
    throughput the independent server sustained under wrk in the same setting. wrk is
    closed-loop: at saturation its p99 is 64 requests queued behind each other plus the
    kernel's time slice, so it is reported but the open-loop percentiles are the latency
    a client sees.

Then cold start: the time from exec to the first answered request, with a store of
10,000 API keys, for the generated and the independent server (median of 10 starts).

The servers are pinned to CPU 0 and wrk to CPU 1 (taskset), so they do not compete for a
core. Prints ratios to the independent server: throughput, p99 latency, CPU time per
request (each thread's schedstat, in ns), binary size, cold start (memory: bench/memory.py); each
ladder step's cost relative to its bare route; and the chain's cost from the pairs.
Machines are shared and noisy: compare ratios from one run, not absolute numbers.
"""

import argparse
import contextlib
import http.client
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.path.join(REPO, "target", "bench")
LOADGEN = os.path.join(TARGET, "release", "loadgen")
PROJECT = os.path.join(REPO, "bench", "project")
GENERATED = os.path.join(PROJECT, ".svc", "server")
BODY = json.dumps({
    "customerEmail": "ada@example.com",
    "currency": "EUR",
    "couponCode": "WELCOME10",
    "lines": [
        {"sku": "A1", "quantity": 2, "unitPrice": 10.0, "tags": ["new"]},
        {"sku": "B2", "quantity": 1, "unitPrice": 5.5},
    ],
})


def sh(*args, **kw):
    return subprocess.run(args, check=True, **kw)


def build(generated=None):
    """svc, then the three servers: the generated one built from bench/project, or
    `generated` when given (another build of it: `svc build bench/project --pgo`, say)."""
    env = dict(os.environ, CARGO_TARGET_DIR=TARGET)
    sh("cargo", "build", "--release", "-q", "-p", "svc", cwd=REPO)
    svc = os.path.join(REPO, "target", "release", "svc")
    sh(svc, "emit", PROJECT, "--out", GENERATED, stderr=subprocess.DEVNULL)
    sh("cargo", "build", "--release", "-q", "--manifest-path", os.path.join(GENERATED, "Cargo.toml"), env=env)
    sh("cargo", "build", "--release", "-q", "--manifest-path", os.path.join(REPO, "bench", "baseline", "Cargo.toml"), env=env)
    sh("cargo", "build", "--release", "-q", "--manifest-path", os.path.join(REPO, "bench", "independent", "Cargo.toml"), env=env)
    build_loadgen()
    release = os.path.join(TARGET, "release")
    return svc, os.path.abspath(generated) if generated else os.path.join(release, "benchshop"), os.path.join(release, "baseline"), os.path.join(release, "independent")


def build_loadgen():
    sh("cargo", "build", "--release", "-q", "--manifest-path", os.path.join(REPO, "bench", "loadgen", "Cargo.toml"),
       env=dict(os.environ, CARGO_TARGET_DIR=TARGET))


# The cost ladder: the benchmarked route's own work, then the protections added in turn.
LADDER = [("bare", "ladder/bare"), ("+ Check Origin", "ladder/origin"), ("+ Check API Key", "ladder/origin-key"),
          ("+ Rate Limit (full chain)", "ladder/chain")]


def start(cmd, env=None):
    proc = subprocess.Popen(["taskset", "-c", "0"] + cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env=env, start_new_session=True)
    line = proc.stdout.readline()
    m = re.search(r"listening on (http://\S+)", line)
    if not m:
        proc.kill()
        sys.exit(f"{cmd[0]} did not start: {line!r}")
    time.sleep(0.3)
    return proc, m.group(1)


def cpu_snapshot(pid):
    """CPU time so far of each thread of `pid`, in ns ({tid: ns}). From each thread's
    schedstat (the scheduler's own nanosecond count, user and kernel time) rather than
    /proc/<pid>/stat, whose 10 ms unit is a 1 % step over a 1 s run; without schedstat
    (a kernel without CONFIG_SCHED_INFO), the process's total from /proc/<pid>/stat."""
    times = {}
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    times[tid] = int(f.read().split()[0])
            except FileNotFoundError:
                pass  # the thread exited meanwhile
    except FileNotFoundError:
        pass
    if times:
        return times
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return {"all": (int(fields[11]) + int(fields[12])) * 10**9 // os.sysconf("SC_CLK_TCK")}


def cpu_seconds_since(pid, before):
    """CPU seconds `pid` used since `cpu_snapshot` gave `before`: the threads alive at
    both readings (a blocking-pool thread that exits in between would otherwise take its
    whole lifetime's time out of the difference)."""
    after = cpu_snapshot(pid)
    return sum(after[t] - before[t] for t in after.keys() & before.keys()) / 1e9


# No `response` callback: wrk would call into Lua with a table of every header for each
# answer, about a third of its user time, on a core it already runs at ~95 % (most of it
# the kernel's loopback TCP), and the slowest answers would wait on it. Statuses are
# checked instead by one request before each run (`expect_status`) and by wrk's count of
# answers outside 2xx and 3xx.
ORIGIN = "https://eu.shop.example.com"
LUA = """
wrk.method = "POST"
wrk.body = [[%s]]
wrk.headers["content-type"] = "application/json"
wrk.headers["origin"] = "%s"
wrk.headers["x-api-key"] = "%s"
"""

_checked = set()


def expect_status(url, key, expected):
    """One request as wrk sends it, whose status must be `expected` (once per URL)."""
    if url in _checked:
        return
    m = re.match(r"http://([^/:]+):(\d+)(/.*)$", url)
    conn = http.client.HTTPConnection(m.group(1), int(m.group(2)), timeout=10)
    conn.request("POST", m.group(3), body=BODY, headers={
        "content-type": "application/json", "origin": ORIGIN, "x-api-key": key})
    status = conn.getresponse().status
    conn.close()
    if status != expected:
        sys.exit(f"{url} answered {status}, not {expected}")
    _checked.add(url)


def wrk(url, key, expected, seconds, connections):
    expect_status(url, key, expected)
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(LUA % (BODY, ORIGIN, key))
        script = f.name
    out = subprocess.run(
        ["taskset", "-c", "1", "wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", script, url],
        check=True, capture_output=True, text=True,
    )
    os.unlink(script)
    refused = re.search(r"Non-2xx or 3xx responses: (\d+)", out.stdout)
    if refused:
        sys.exit(f"{url} answered {refused.group(1)} requests outside 2xx and 3xx (expected {expected})")
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out.stdout).group(1))
    total = int(re.search(r"(\d+) requests in", out.stdout).group(1))
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", out.stdout)
    scale = {"us": 1e-3, "ms": 1.0, "s": 1e3}[p99.group(2)]
    return {"rps": rps, "requests": total, "p99_ms": float(p99.group(1)) * scale}


def open_loop(proc, url, key, expected, rate, seconds, connections):
    """bench/loadgen at a fixed `rate`: latency percentiles (us) from each request's due
    time, and the server's CPU per request at that rate."""
    expect_status(url, key, expected)
    cpu0 = cpu_snapshot(proc.pid)
    out = subprocess.run(
        ["taskset", "-c", "1", LOADGEN, "--url", url, "--rate", str(rate), "--seconds", str(seconds),
         "--connections", str(connections), "--method", "POST", "--header", "content-type: application/json",
         "--header", f"origin: {ORIGIN}", "--header", f"x-api-key: {key}", "--body", BODY, "--expect", str(expected),
         "--histogram"],
        capture_output=True, text=True,
    )
    if out.returncode:
        sys.exit(f"loadgen against {url} at {rate:.0f}/s: {out.stderr.strip()}")
    r = json.loads(out.stdout)
    r["cpu_us_per_request"] = cpu_seconds_since(proc.pid, cpu0) / r["completed"] * 1e6
    return r


def open_loop_rounds(procs, names, capacity, key, args):
    """The full route of each of `names` (keys of `procs`) at each `--load` fraction of
    `capacity`, interleaved round by round: {fraction: {name: [open_loop result, ...]}}."""
    latency = {f: {name: [] for name in names} for f in args.load}
    for _ in range(args.rounds):
        for f in args.load:
            for name in names:
                proc, url = procs[name]
                latency[f][name].append(open_loop(proc, url + "/acme/shop/orders", key, 201, round(f * capacity),
                                                  args.seconds, args.connections))
    return latency


def chain_pairs(procs, key, args):
    """The full chain's cost on the generated and the independent server, by pairs of
    short runs: the bare route and the full chain back to back (`--pair-seconds` each),
    the servers in turn, the order reversed every other pair (ABBA), so that whatever the
    machine does over seconds (another tenant, the clock frequency) weighs on both routes
    of a pair alike. {side: [(bare run, chain run), ...]}"""
    sides = ("generated", "independent")
    bare, chain = LADDER[0][1], LADDER[-1][1]
    if args.chain_control:
        # The same route under another name (the query is ignored): what the pairs measure
        # between two runs of identical work, the method's own resolution.
        chain = bare + "?control"
    order = [(side, path) for side in sides for path in (bare, chain)]
    pairs = {side: [] for side in sides}
    for i in range(args.pairs):
        got = {}
        for side, path in order if i % 2 == 0 else order[::-1]:
            p, url = procs[side]
            got[side, path] = measure(p, f"{url}/acme/shop/{path}", key, 201, args.pair_seconds, args.connections)
        for side in sides:
            pairs[side].append((got[side, bare], got[side, chain]))
    return pairs


def quartiles(xs):
    """The first and third quartiles of `xs`: where the middle half of the pairs lie. A
    description of the pairs, not a confidence interval: a bootstrap over them claims
    more than the machine allows: the intervals of two runs of the same code barely
    overlapped, since the pairs of one run share the machine's state of those minutes."""
    if len(xs) < 2:
        return xs[0], xs[0]
    q = statistics.quantiles(xs, n=4)
    return q[0], q[2]


def pooled_percentiles(runs, quantiles=(0.5, 0.99, 0.999)):
    """Percentiles (us) of every latency of `runs` together, from loadgen's histograms. A
    few stalls of the machine decide one short run's p99; pooled, each run's stalls weigh
    what their requests weigh."""
    counts = {}
    for r in runs:
        for us, n in r["histogram_us"]:
            counts[us] = counts.get(us, 0) + n
    total = sum(counts.values())
    out, seen, values = [], 0, sorted(counts.items())
    targets = iter(quantiles)
    q = next(targets)
    for us, n in values:
        seen += n
        while q is not None and seen >= q * total:
            out.append(us)
            q = next(targets, None)
    return out


def measure(proc, url, key, expected, seconds, connections):
    cpu0 = cpu_snapshot(proc.pid)
    r = wrk(url, key, expected, seconds, connections)
    r["cpu_us_per_request"] = cpu_seconds_since(proc.pid, cpu0) / r["requests"] * 1e6
    return r


SIDES = ("generated", "generated, access log on", "independent", "svc-blocks")


def commands(svc_bins, store):
    _svc, generated, baseline, independent = svc_bins
    serve = [generated, "serve", "--port", "0", "--store", store]
    plain = {k: v for k, v in os.environ.items() if k != "SVC_LOG"}
    return {
        "generated": (serve, plain),
        "generated, access log on": (serve, dict(plain, SVC_LOG="info")),
        "independent": ([independent, "--port", "0", "--store", store], plain),
        "svc-blocks": ([baseline, "--port", "0", "--store", store], plain),
    }


def run_setting(bins, store, key, threads, args):
    """Every side and both ladders under one worker-thread setting."""
    procs = {}
    try:
        for side, (cmd, env) in commands(bins, store).items():
            env = dict(env)
            # tokio's default is one worker per CPU the process may run on, and taskset
            # leaves it one: the default setting names what it would be on this machine
            # unpinned (two workers on two cores), which then share the pinned core.
            env["TOKIO_WORKER_THREADS"] = "1" if threads == "1" else str(os.cpu_count())
            procs[side] = start(cmd, env)
        for side, (p, url) in procs.items():
            wrk(url + "/acme/shop/orders", key, 201, 1, args.connections)
        full = not (args.latency_only or args.chain_only)
        runs = {side: [] for side in procs}
        if args.latency_only:
            p, url = procs["independent"]
            runs["independent"].append(measure(p, url + "/acme/shop/orders", key, 201, args.seconds, args.connections))
        for _ in range(args.rounds if full else 0):
            for side, (p, url) in procs.items():
                runs[side].append(measure(p, url + "/acme/shop/orders", key, 201, args.seconds, args.connections))
        # The ladders, interleaved too: each round runs every step of both servers once, so
        # that a burst of noise from another tenant hits all steps alike.
        ladders = {side: {name: [] for name, _ in LADDER} for side in ("generated", "independent")}
        for _ in range(args.rounds if full else 0):
            for side in ladders:
                p, url = procs[side]
                for name, path in LADDER:
                    ladders[side][name].append(measure(p, f"{url}/acme/shop/{path}", key, 201, args.seconds, args.connections))
        pairs = chain_pairs(procs, key, args) if args.pairs > 0 and not args.latency_only else None
        # Latency at fixed rates, open loop: fractions of what the independent server
        # sustained above, the same rates for both servers, interleaved round by round.
        latency = None
        if not args.chain_only:
            capacity = statistics.median(r["rps"] for r in runs["independent"])
            latency = open_loop_rounds(procs, ("generated", "independent"), capacity, key, args)
    finally:
        for p, _ in procs.values():
            p.kill()
            p.wait()
    return runs, ladders, pairs, latency


def report(threads, bins, runs, ladders, pairs, latency, args):
    if not (args.latency_only or args.chain_only):
        report_load(threads, bins, runs, ladders, args)
    if pairs:
        report_chain(threads, pairs, args)
    if latency:
        report_latency(latency, args)


def report_chain(threads, pairs, args):
    label = "TOKIO_WORKER_THREADS=1" if threads == "1" else f"{os.cpu_count()} worker threads"
    title, second = ("A/A control", "the bare route again") if args.chain_control else ("The full chain's cost", "the full chain")
    print(f"\n{title} ({label}): {args.pairs} pairs of {args.pair_seconds}s runs, the bare route and {second} back to"
          f" back, order reversed every other pair; median, the middle half of the pairs, every pair")
    for side, ps in pairs.items():
        loss = [100 * (1 - c["rps"] / b["rps"]) for b, c in ps]
        share = [100 * (1 - b["cpu_us_per_request"] / c["cpu_us_per_request"]) for b, c in ps]
        for what, xs in (("throughput lost", loss), ("share of CPU", share)):
            lo, hi = quartiles(xs)
            print(f"  {side:12} {what:16}{statistics.median(xs):6.1f} % ({lo:.1f} to {hi:.1f})"
                  f"  [{' '.join(f'{x:.1f}' for x in xs)}]")


def report_load(threads, bins, runs, ladders, args):
    med = lambda side, k: statistics.median(r[k] for r in runs[side])
    sizes = {"generated": os.path.getsize(bins[1]), "svc-blocks": os.path.getsize(bins[2]), "independent": os.path.getsize(bins[3])}
    sizes["generated, access log on"] = sizes["generated"]
    label = "TOKIO_WORKER_THREADS=1" if threads == "1" else f"default worker threads ({os.cpu_count()}, sharing CPU 0)"
    print(f"\n== {label}: full route, {args.rounds} interleaved rounds of {args.seconds}s, {args.connections} connections (medians)")
    print(f"{'':26}" + "".join(f"{side:>26}" for side in SIDES))
    rows = [
        ("throughput (req/s)", lambda s: med(s, "rps"), "{:.0f}"),
        ("p99 at saturation (ms, wrk)", lambda s: med(s, "p99_ms"), "{:.2f}"),
        ("CPU per request (us)", lambda s: med(s, "cpu_us_per_request"), "{:.2f}"),
        ("binary size (MB)", lambda s: sizes[s] / 1e6, "{:.1f}"),
    ]
    for name, value, fmt in rows:
        base = value("independent")
        cells = "".join(f"{fmt.format(value(s)) + f' ({value(s) / base:.3f})':>26}" for s in SIDES)
        print(f"{name:26}{cells}")
    print("(ratio to the independent server in parentheses)")
    # Each run paired with the independent run of the same round: the most noise-resistant figure.
    for k, what in (("rps", "throughput"), ("cpu_us_per_request", "CPU per request"), ("p99_ms", "p99")):
        for side in ("generated", "generated, access log on"):
            paired = [g[k] / b[k] for g, b in zip(runs[side], runs["independent"])]
            print(f"{what} of {side} / independent, paired by round: median {statistics.median(paired):.3f}"
                  f" ({' '.join(f'{r:.3f}' for r in paired)})")
    for side, ladder in ladders.items():
        print(f"\nCost ladder on the {side} server (medians; ratios to its bare route, paired by round)")
        print(f"{'':28}{'req/s':>10}{'ratio':>8}{'CPU us/req':>12}{'ratio':>8}")
        bare_runs = ladder[LADDER[0][0]]
        for name, _ in LADDER:
            rs = ladder[name]
            rps_ratio = statistics.median(r["rps"] / b["rps"] for r, b in zip(rs, bare_runs))
            cpu_ratio = statistics.median(r["cpu_us_per_request"] / b["cpu_us_per_request"] for r, b in zip(rs, bare_runs))
            print(f"{name:28}{statistics.median(r['rps'] for r in rs):>10.0f}{rps_ratio:>8.3f}"
                  f"{statistics.median(r['cpu_us_per_request'] for r in rs):>12.2f}{cpu_ratio:>8.3f}")
        chain = ladder[LADDER[-1][0]]
        loss = [1 - c["rps"] / b["rps"] for c, b in zip(chain, bare_runs)]
        # At saturation a one-core server's throughput is 1 / (CPU per request), so the
        # chain's share of the CPU is the throughput it costs, without wrk's noise.
        share = [1 - b["cpu_us_per_request"] / c["cpu_us_per_request"] for c, b in zip(chain, bare_runs)]
        print(f"full chain: throughput lost median {100 * statistics.median(loss):.1f}% ({' '.join(f'{100 * x:.1f}' for x in loss)});"
              f" share of CPU median {100 * statistics.median(share):.1f}% ({' '.join(f'{100 * x:.1f}' for x in share)})")


def report_latency(latency, args):
    print(f"\nLatency at fixed rates, open loop (bench/loadgen, {args.connections} connections, {args.rounds} rounds"
          f" of {args.seconds}s; percentiles of all rounds' requests pooled, us; CPU per request median)")
    print(f"{'':34}{'p50':>9}{'p99':>9}{'p99.9':>9}{'CPU us/req':>12}")
    for f, sides in latency.items():
        rate = sides["independent"][0]["rate"]
        pooled = {side: pooled_percentiles(rs) for side, rs in sides.items()}
        for side, rs in sides.items():
            cells = "".join(f"{v:>9}" for v in pooled[side])
            print(f"{f'{100 * f:.0f} % ({rate:.0f}/s) {side}':34}{cells}"
                  f"{statistics.median(r['cpu_us_per_request'] for r in rs):>12.2f}")
        g, i = sides["generated"], sides["independent"]
        ratios = " ".join(f"{what} {a / b:.3f}" for what, a, b in zip(("p50", "p99", "p99.9"), pooled["generated"], pooled["independent"]))
        print(f"  generated / independent, pooled: {ratios}")
        paired = [a["latency_us"]["p99"] / b["latency_us"]["p99"] for a, b in zip(g, i)]
        print(f"  p99 generated / independent, paired by round: median {statistics.median(paired):.3f} ({' '.join(f'{x:.2f}' for x in paired)})")
        paired = [a["cpu_us_per_request"] / b["cpu_us_per_request"] for a, b in zip(g, i)]
        print(f"  CPU per request generated / independent, paired by round: median {statistics.median(paired):.3f}")
        lag = max(r["dispatch_lag_us"]["p99"] for r in g + i)
        if lag > 50:
            print(f"  warning: loadgen dispatched up to {lag:.0f} us late at p99: it did not keep up, these latencies are its own too")


@contextlib.contextmanager
def keyed_store(svc, prefix):
    """A temporary directory holding a workspace store with one `bench` key: yields the
    directory, the store's path and the key; removes the directory afterwards."""
    work = tempfile.mkdtemp(prefix=prefix)
    try:
        store = os.path.join(work, "workspace.db")
        yield work, store, create_key(svc, store)
    finally:
        shutil.rmtree(work, ignore_errors=True)


@contextlib.contextmanager
def stopped_afterwards():
    """A dict for the servers started inside (`name: (process, url)`, as `start` returns
    them), each killed and reaped on the way out."""
    procs = {}
    try:
        yield procs
    finally:
        for proc, _ in procs.values():
            proc.kill()
            proc.wait()


def create_key(svc, store):
    """A new API key named `bench` in the workspace store `store` (created if missing): the
    key itself, as `svc keys create` prints it once."""
    return subprocess.run([svc, "keys", "create", "--name", "bench", "--owner", "bench", "--store", store],
                          check=True, capture_output=True, text=True).stdout.strip()


def store_with_keys(svc, path, n):
    """A workspace store holding one usable key and n - 1 others (random digests)."""
    import sqlite3
    key = create_key(svc, path)
    db = sqlite3.connect(path)
    now = int(time.time())
    db.executemany("INSERT INTO api_keys (id, name, owner, prefix, hash, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                   [(f"key_bulk{i:07d}", f"bulk {i}", "bulk", "svck_bulk", os.urandom(32), now) for i in range(n - 1)])
    db.commit()
    db.close()
    return key


def free_port():
    """A loopback port no one listens on now."""
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def cold_start(cmd, env, key, starts=10):
    """Milliseconds from exec to the first answered request (median, and all of them)."""
    times = []
    for _ in range(starts):
        port = free_port()
        argv = [a if a != "0" else str(port) for a in cmd]
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        try:
            while True:
                try:
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                    conn.request("POST", "/acme/shop/orders", body=BODY, headers={
                        "content-type": "application/json", "origin": ORIGIN, "x-api-key": key})
                    status = conn.getresponse().status
                    break
                except (ConnectionRefusedError, ConnectionResetError, http.client.RemoteDisconnected):
                    time.sleep(0.0005)
                    if time.perf_counter() - t0 > 10:
                        sys.exit(f"{argv[0]} did not answer within 10 s")
            times.append((time.perf_counter() - t0) * 1000)
            if status != 201:
                sys.exit(f"{argv[0]} answered {status} on its first request")
        finally:
            proc.kill()
            proc.wait()
    return statistics.median(times), times


def compare(specs, args):
    """`--compare NAME=BINARY ...`: CPU per request, throughput and p99 of several builds of the benchmarked
    route, interleaved round by round, one worker thread each (for two builds of one
    server: a profile, a compiler flag); then their open-loop latency at the `--load`
    fractions of the first build's throughput. A binary whose name ends in `benchshop`
    runs as `BINARY serve`, any other as a hand-written baseline (`BINARY --port 0
    --store S`)."""
    sh("cargo", "build", "--release", "-q", "-p", "svc", cwd=REPO)
    build_loadgen()
    svc = os.path.join(REPO, "target", "release", "svc")
    with keyed_store(svc, "svc-bench-compare-") as (work, store, key), stopped_afterwards() as procs:
        env = {k: v for k, v in os.environ.items() if k != "SVC_LOG"}
        env["TOKIO_WORKER_THREADS"] = "1"
        for spec in specs:
            name, binary = spec.split("=", 1)
            serve = ["serve"] if os.path.basename(binary) == "benchshop" else []
            procs[name] = start([binary] + serve + ["--port", "0", "--store", store], env)
        runs = {name: [] for name in procs}
        for round_ in range(1, args.rounds + 1):
            for name, (proc, url) in procs.items():
                r = measure(proc, url + "/acme/shop/orders", key, 201, args.seconds, args.connections)
                runs[name].append(r)
                print(f"round {round_}  {name}: {r['requests']} requests, {r['cpu_us_per_request']:.2f} us CPU per request")
        capacity = statistics.median(r["rps"] for r in next(iter(runs.values())))
        latency = open_loop_rounds(procs, list(procs), capacity, key, args)
    first = next(iter(runs))
    for key, label, unit, fmt in (("cpu_us_per_request", "CPU per request", "us", "{:>8.2f}"),
                                  ("rps", "throughput", "req/s", "{:>8.0f}"),
                                  ("p99_ms", "p99 at saturation (wrk)", "ms", "{:>8.2f}")):
        print(f"\n{label}, median of {args.rounds} rounds (ratio to {first}, paired by round)")
        for name, rs in runs.items():
            paired = statistics.median(r[key] / f[key] for r, f in zip(rs, runs[first]))
            print(f"{name:28}{fmt.format(statistics.median(r[key] for r in rs))} {unit:6}{paired:>8.3f}")
    for f, builds in latency.items():
        pooled = {name: pooled_percentiles(rs) for name, rs in builds.items()}
        print(f"\nOpen-loop latency at {100 * f:.0f} % of {first}'s throughput ({round(f * capacity)}/s), us, all rounds"
              f" pooled (ratio to {first})")
        print(f"{'':28}{'p50':>14}{'p99':>14}{'p99.9':>14}")
        for name, values in pooled.items():
            print(f"{name:28}" + "".join(f"{v:>7} {v / b:>6.3f}" for v, b in zip(values, pooled[first])))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--connections", type=int, default=64)
    ap.add_argument("--threads", default="1,default", help="worker-thread settings to run: 1, default, or both")
    ap.add_argument("--load", default="0.25,0.5", type=lambda s: [float(x) for x in s.split(",")],
                    help="open-loop latency rates, as fractions of the independent server's throughput (default 0.25,0.5)")
    ap.add_argument("--latency-only", action="store_true",
                    help="only the open-loop latencies (after one wrk run of the independent server for its throughput)")
    ap.add_argument("--pairs", type=int, default=20,
                    help="pairs of short runs (bare route, full chain) that measure the chain's cost on both servers")
    ap.add_argument("--pair-seconds", type=int, default=1, help="the length of each run of a pair (default 1)")
    ap.add_argument("--chain-only", action="store_true", help="only the chain's cost, by pairs of short runs")
    ap.add_argument("--chain-control", action="store_true",
                    help="pair the bare route with itself instead of the full chain (an A/A control: the pairs' resolution)")
    ap.add_argument("--generated", metavar="BINARY",
                    help="measure this build of the benchmark server instead of the one built from bench/project"
                         " (for example `svc build bench/project --pgo -o BINARY`)")
    ap.add_argument("--compare", nargs="+", metavar="NAME=BINARY",
                    help="only compare these builds: CPU per request, throughput, p99 under wrk, open-loop latency (see compare())")
    args = ap.parse_args()
    for tool in ("wrk", "taskset"):
        if not shutil.which(tool):
            sys.exit(f"{tool} is needed (apt install wrk util-linux)")
    if args.compare:
        return compare(args.compare, args)

    bins = build(args.generated)
    svc = bins[0]
    with keyed_store(svc, "svc-bench-") as (work, store, key):
        for threads in args.threads.split(","):
            report(threads, bins, *run_setting(bins, store, key, threads, args), args)
        if args.latency_only or args.chain_only:
            return

        big = os.path.join(work, "keys10k.db")
        big_key = store_with_keys(svc, big, 10_000)
        print("\n== Cold start: exec to the first answered request, store of 10,000 keys (median of 10 starts)")
        starts = {side: cold_start(cmd, env, big_key) for side, (cmd, env) in commands(bins, big).items()
                  if side in ("generated", "independent")}
        for side, (median, all_times) in starts.items():
            print(f"{side:26}{median:8.1f} ms  ({' '.join(f'{t:.1f}' for t in all_times)})")
        print(f"ratio generated / independent: {starts['generated'][0] / starts['independent'][0]:.3f}")


if __name__ == "__main__":
    main()
