#!/usr/bin/env python3
"""TypeScript nodes waiting on a slow service must not starve the server (issue 37.7).

    python3 bench/starvation.py [--slow 600] [--upstream-seconds 30] [--rate 200] [--seconds 5]

Builds (release) a project of two public routes: `slow`, whose TypeScript node fetches
an upstream that answers after --upstream-seconds (the node's deadline raised to 60 s so
that each call really waits), and `fast`, which answers at once without a node. With the
server up, it opens --slow concurrent requests to `slow`, and while they wait, measures
`fast` open loop (bench/loadgen, --rate requests a second) and samples the server's RSS.

Twice, in one run: with the engine's bound (SVC_TS_CONCURRENCY=32, the default: calls
past it answer 503 node_busy after 100 ms) and without it (SVC_TS_CONCURRENCY=100000:
every slow call holds a thread, as before the bound). Prints, per setting: the fast
route's p50/p99/p99.9 and its errors, the slow requests' answers by status, and idle and
peak RSS. Target: fast p99 under 50 ms and RSS bounded, with the bound.
"""

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from load import LOADGEN, REPO, TARGET, build_loadgen, rss_kb, sh, start  # noqa: E402

CONFIG = """import { collectAssets } from "@svc/sdk";

export default { projectName: "starve", workspaceId: "bench", apiId: "slow", ...collectAssets([]) };
"""

NODE = """import { defineCodeFunctionNode, t } from "@svc/sdk";

export default defineCodeFunctionNode({
  nodeKey: "bench.slow-fetch",
  name: "Slow fetch",
  inputs: { upstream: t.string() },
  outputs: { status: t.number() },
  async run(ctx) {
    const response = await fetch(ctx.inputs.upstream);
    return { status: response.status };
  },
});
"""

SLOW = """route: slow
methods: [GET]
request:
  query:
    upstream: { type: string }
start: call
nodes:
  call: { type: code, node: bench.slow-fetch, inputs: { upstream: { from: request.query.upstream } }, next: ok }
  ok: { type: return-json, status: 200, body: { status: { from: call.status } } }
"""

FAST = """route: fast
methods: [GET]
start: ok
nodes:
  ok: { type: return-json, status: 200, body: { fast: true } }
"""


def project(dir):
    for path, text in [("svc.config.ts", CONFIG), ("src/nodes/slow.ts", NODE), ("flows/slow.yaml", SLOW),
                       ("flows/fast.yaml", FAST)]:
        os.makedirs(os.path.dirname(os.path.join(dir, path)) or dir, exist_ok=True)
        with open(os.path.join(dir, path), "w") as f:
            f.write(text)


def upstream(seconds):
    """An HTTP server on loopback that answers each request after `seconds`: (port, stop)."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    state = {}
    loop.set_debug(False)

    async def handle(reader, writer):
        try:
            await reader.readuntil(b"\r\n\r\n")
            await asyncio.sleep(seconds)
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok")
            await writer.drain()
        except Exception:
            pass
        finally:
            writer.close()

    async def main():
        server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=4096)
        state["port"] = server.sockets[0].getsockname()[1]
        state["server"] = server
        ready.set()
        async with server:
            await server.serve_forever()

    thread = threading.Thread(target=lambda: loop.run_until_complete(main()), daemon=True)
    thread.start()
    ready.wait()
    return state["port"]


async def slow_requests(host, port, path, n, timeout):
    """`n` concurrent GETs of `path`: their statuses (0: no answer within `timeout`)."""
    async def one():
        try:
            reader, writer = await asyncio.open_connection(host, port)
            writer.write(f"GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n".encode())
            await writer.drain()
            head = await asyncio.wait_for(reader.readline(), timeout)
            writer.close()
            return int(head.split()[1]) if head else 0
        except Exception:
            return 0
    return await asyncio.gather(*(one() for _ in range(n)))


def run(binary, concurrency, args, upstream_port):
    env = dict(os.environ, SVC_TS_CONCURRENCY=str(concurrency), SVC_TS_DEADLINE_MS="60000",
               SVC_LOG="error", SVC_STORE=os.path.join(tempfile.mkdtemp(), "workspace.db"))
    proc, base = start([binary, "serve", "--port", "0"], env=env)
    idle = rss_kb(proc.pid, "VmRSS")
    host, port = base.removeprefix("http://").split(":")
    path = f"/bench/slow/slow?upstream=http://127.0.0.1:{upstream_port}/"
    statuses = {}
    peak = [idle]

    def fire():
        result = asyncio.run(slow_requests(host, int(port), path, args.slow, args.upstream_seconds + 30))
        for s in result:
            statuses[s] = statuses.get(s, 0) + 1

    slow = threading.Thread(target=fire)
    slow.start()
    time.sleep(2)  # every slow request sent, and the calls that got room waiting
    sampling = True

    def sample():
        while sampling:
            peak[0] = max(peak[0], rss_kb(proc.pid, "VmRSS"))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        out = subprocess.run(["taskset", "-c", "1", LOADGEN, "--url", f"{base}/bench/slow/fast", "--rate",
                              str(args.rate), "--seconds", str(args.seconds), "--connections", "16", "--expect", "200"],
                             capture_output=True, text=True, timeout=args.seconds + 60)
        fast = json.loads(out.stdout) if out.returncode == 0 else {"error": out.stderr.strip()}
    except subprocess.TimeoutExpired:
        # Starved: the route got no answers for a minute past the run.
        fast = {"error": f"no answers within {args.seconds + 60:.0f} s"}
    sampling = False
    sampler.join()
    threads = len(os.listdir(f"/proc/{proc.pid}/task"))
    # A starved server may never answer the slow requests either: they end with it.
    proc.kill()
    proc.wait()
    slow.join()
    return {"concurrency": concurrency, "fast": fast, "slow_statuses": statuses, "idle_rss_kib": idle,
            "peak_rss_kib": peak[0], "threads_under_load": threads}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--slow", type=int, default=600)
    p.add_argument("--upstream-seconds", type=float, default=30)
    p.add_argument("--rate", type=float, default=200)
    p.add_argument("--seconds", type=float, default=5)
    args = p.parse_args()
    sh("cargo", "build", "--release", "-q", "-p", "svc", cwd=REPO)
    build_loadgen()
    svc = os.path.join(REPO, "target", "release", "svc")
    dir = tempfile.mkdtemp(prefix="svc-starvation-")
    project(dir)
    binary = os.path.join(dir, "starve")
    sh(svc, "build", dir, "--release", "-o", binary, env=dict(os.environ, CARGO_TARGET_DIR=TARGET),
       stderr=subprocess.DEVNULL)
    port = upstream(args.upstream_seconds)
    for concurrency in (32, 100000):
        r = run(binary, concurrency, args, port)
        fast = r["fast"]
        if "error" in fast:
            line = f"fast route: loadgen failed: {fast['error']}"
        else:
            lat = fast["latency_us"]
            line = (f"fast route at {args.rate:.0f}/s: p50 {lat['p50'] / 1000:.1f} ms, p99 {lat['p99'] / 1000:.1f} ms, "
                    f"p99.9 {lat['p999'] / 1000:.1f} ms, {fast['completed']} answered")
        print(f"SVC_TS_CONCURRENCY={concurrency}: {line}; {args.slow} slow requests answered {r['slow_statuses']} "
              f"(0: none); RSS idle {r['idle_rss_kib'] / 1024:.1f} MiB, peak {r['peak_rss_kib'] / 1024:.1f} MiB; "
              f"{r['threads_under_load']} threads under load")


if __name__ == "__main__":
    main()
