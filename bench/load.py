#!/usr/bin/env python3
"""Generated server versus hand-written baseline, under the same load generator.

    python3 bench/load.py [--seconds 3] [--rounds 8] [--connections 32]

Builds (release) the generated server of bench/project and bench/baseline, creates an
API key in a fresh store, then runs wrk against:

  * A/B, interleaved A/B/A/B: the full route (Check Origin, Check API Key, Rate Limit by
    API key, two code nodes, Return JSON) on the generated server and on the baseline;
  * the cost ladder on the generated server: the same work as a bare route (body, both
    code nodes, the 201 answer), then Check Origin, Check API Key and Rate Limit added
    in turn.

The server is pinned to CPU 0 and wrk to CPU 1 (taskset), so they do not compete for a
core. Prints ratios (generated / baseline): throughput, p99 latency, CPU time per request,
idle and peak RSS, binary size; and the ladder's throughput relative to the bare route.
Machines are shared and noisy: compare ratios from one run, not absolute numbers.
"""

import argparse
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


def build():
    env = dict(os.environ, CARGO_TARGET_DIR=TARGET)
    sh("cargo", "build", "--release", "-q", "-p", "svc", cwd=REPO)
    svc = os.path.join(REPO, "target", "release", "svc")
    sh(svc, "emit", PROJECT, "--out", GENERATED, stderr=subprocess.DEVNULL)
    sh("cargo", "build", "--release", "-q", "--manifest-path", os.path.join(GENERATED, "Cargo.toml"), env=env)
    sh("cargo", "build", "--release", "-q", "--manifest-path", os.path.join(REPO, "bench", "baseline", "Cargo.toml"), env=env)
    return svc, os.path.join(TARGET, "release", "benchshop"), os.path.join(TARGET, "release", "baseline")


def start(cmd, env=None):
    proc = subprocess.Popen(["taskset", "-c", "0"] + cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    line = proc.stdout.readline()
    m = re.search(r"listening on (http://\S+)", line)
    if not m:
        proc.kill()
        sys.exit(f"{cmd[0]} did not start: {line!r}")
    time.sleep(0.3)
    return proc, m.group(1)


def rss_kb(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


LUA = """
wrk.method = "POST"
wrk.body = [[%s]]
wrk.headers["content-type"] = "application/json"
wrk.headers["origin"] = "https://eu.shop.example.com"
wrk.headers["x-api-key"] = "%s"
local expected = %d
done = function(summary, latency, requests) end
response = function(status, headers, body)
  if status ~= expected then
    io.stderr:write("unexpected status " .. status .. "\\n")
  end
end
"""


def wrk(url, key, expected, seconds, connections):
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(LUA % (BODY, key, expected))
        script = f.name
    out = subprocess.run(
        ["taskset", "-c", "1", "wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", script, url],
        check=True, capture_output=True, text=True,
    )
    os.unlink(script)
    if "unexpected status" in out.stderr:
        sys.exit(f"{url} answered an unexpected status:\n{out.stderr[:500]}")
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out.stdout).group(1))
    total = int(re.search(r"(\d+) requests in", out.stdout).group(1))
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", out.stdout)
    scale = {"us": 1e-3, "ms": 1.0, "s": 1e3}[p99.group(2)]
    return {"rps": rps, "requests": total, "p99_ms": float(p99.group(1)) * scale}


def measure(proc, url, key, expected, seconds, connections):
    cpu0 = cpu_seconds(proc.pid)
    r = wrk(url, key, expected, seconds, connections)
    r["cpu_us_per_request"] = (cpu_seconds(proc.pid) - cpu0) / r["requests"] * 1e6
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--connections", type=int, default=32)
    args = ap.parse_args()
    for tool in ("wrk", "taskset"):
        if not shutil.which(tool):
            sys.exit(f"{tool} is needed (apt install wrk util-linux)")

    svc, generated, baseline = build()
    work = tempfile.mkdtemp(prefix="svc-bench-")
    store = os.path.join(work, "workspace.db")
    key = subprocess.run([svc, "keys", "create", "--name", "bench", "--owner", "bench", "--store", store],
                         check=True, capture_output=True, text=True).stdout.strip()
    quiet = dict(os.environ, SVC_LOG="warn")

    gen_proc, gen_url = start([generated, "serve", "--port", "0", "--store", store], env=quiet)
    base_proc, base_url = start([baseline, "--port", "0", "--store", store])
    idle = {"generated": rss_kb(gen_proc.pid, "VmRSS"), "baseline": rss_kb(base_proc.pid, "VmRSS")}
    runs = {"generated": [], "baseline": []}
    try:
        # Warm up both, then interleave.
        wrk(gen_url + "/acme/shop/orders", key, 201, 2, args.connections)
        wrk(base_url + "/acme/shop/orders", key, 201, 2, args.connections)
        for _ in range(args.rounds):
            runs["generated"].append(measure(gen_proc, gen_url + "/acme/shop/orders", key, 201, args.seconds, args.connections))
            runs["baseline"].append(measure(base_proc, base_url + "/acme/shop/orders", key, 201, args.seconds, args.connections))
        # The ladder, interleaved too: each round runs every step once, so that a burst of
        # noise from another tenant hits all steps alike.
        steps = [("bare", "ladder/bare"), ("+ Check Origin", "ladder/origin"), ("+ Check API Key", "ladder/origin-key"), ("+ Rate Limit (full chain)", "ladder/chain")]
        ladder_runs = {name: [] for name, _ in steps}
        for _ in range(args.rounds):
            for name, path in steps:
                ladder_runs[name].append(measure(gen_proc, f"{gen_url}/acme/shop/{path}", key, 201, args.seconds, args.connections))
        peak = {"generated": rss_kb(gen_proc.pid, "VmHWM"), "baseline": rss_kb(base_proc.pid, "VmHWM")}
    finally:
        gen_proc.kill()
        base_proc.kill()
        shutil.rmtree(work, ignore_errors=True)

    med = lambda side, k: statistics.median(r[k] for r in runs[side])
    sizes = {"generated": os.path.getsize(generated), "baseline": os.path.getsize(baseline)}
    print(f"\nFull route, {args.rounds} interleaved rounds of {args.seconds}s, {args.connections} connections (medians)")
    print(f"{'':28}{'generated':>14}{'baseline':>14}{'ratio':>9}")
    rows = [
        ("throughput (req/s)", med("generated", "rps"), med("baseline", "rps"), "{:.0f}"),
        ("p99 latency (ms)", med("generated", "p99_ms"), med("baseline", "p99_ms"), "{:.2f}"),
        ("CPU per request (us)", med("generated", "cpu_us_per_request"), med("baseline", "cpu_us_per_request"), "{:.1f}"),
        ("idle RSS (MB)", idle["generated"] / 1024, idle["baseline"] / 1024, "{:.1f}"),
        ("peak RSS (MB)", peak["generated"] / 1024, peak["baseline"] / 1024, "{:.1f}"),
        ("binary size (MB)", sizes["generated"] / 1e6, sizes["baseline"] / 1e6, "{:.1f}"),
    ]
    for name, g, b, fmt in rows:
        print(f"{name:28}{fmt.format(g):>14}{fmt.format(b):>14}{g / b:>9.3f}")
    # Each generated run is paired with the baseline run right after it, under the same
    # conditions; the median of the paired ratios is the most noise-resistant figure.
    for k, label in (("rps", "throughput"), ("cpu_us_per_request", "CPU per request")):
        paired = [g[k] / b[k] for g, b in zip(runs["generated"], runs["baseline"])]
        print(f"{label} ratio, paired by round: median {statistics.median(paired):.3f} ({' '.join(f'{r:.3f}' for r in paired)})")
    print(f"\nCost ladder on the generated server (medians; ratio to the bare route, paired by round)")
    print(f"{'':28}{'req/s':>10}{'ratio':>8}{'CPU us/req':>12}{'ratio':>8}")
    bare_runs = ladder_runs[steps[0][0]]
    for name, _ in steps:
        rs = ladder_runs[name]
        rps_ratio = statistics.median(r["rps"] / b["rps"] for r, b in zip(rs, bare_runs))
        cpu_ratio = statistics.median(r["cpu_us_per_request"] / b["cpu_us_per_request"] for r, b in zip(rs, bare_runs))
        print(f"{name:28}{statistics.median(r['rps'] for r in rs):>10.0f}{rps_ratio:>8.3f}"
              f"{statistics.median(r['cpu_us_per_request'] for r in rs):>12.2f}{cpu_ratio:>8.3f}")
    chain = ladder_runs[steps[-1][0]]
    loss = [1 - c["rps"] / b["rps"] for c, b in zip(chain, bare_runs)]
    # The server has one core: at saturation its throughput is 1 / (CPU per request), so
    # the chain's share of the CPU is the throughput it costs, measured without wrk's noise.
    share = [1 - b["cpu_us_per_request"] / c["cpu_us_per_request"] for c, b in zip(chain, bare_runs)]
    print(f"\nOverhead of the full protection chain (target < 5%):")
    print(f"  throughput lost:          median {100 * statistics.median(loss):.1f}% ({' '.join(f'{100 * x:.1f}' for x in loss)})")
    print(f"  share of CPU per request: median {100 * statistics.median(share):.1f}% ({' '.join(f'{100 * x:.1f}' for x in share)})")


if __name__ == "__main__":
    main()
