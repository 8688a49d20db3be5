#!/usr/bin/env python3
"""TypeScript nodes: the benchmarked route with its nodes in Rust, in TypeScript, and the
same TypeScript node code served by Express 5 on Node.js, in one run.

    python3 bench/typescript.py [--seconds 3] [--rounds 5] [--connections 64]

Builds (release) the generated servers of bench/project (Rust nodes: examples/shop's) and
bench/project-ts (the same flows; examples/shop-ts's TypeScript nodes, compiled into the
binary as QuickJS bytecode), and installs bench/express (Express 5, calling the same
TypeScript nodes as tsc compiles them). Each server gets one core (taskset CPU 0, one
tokio worker: Node.js is single-threaded) and wrk the other; the rounds are interleaved.

Prints, as ratios from this one run (machines are shared and noisy):
  * throughput, p99 and server CPU per request of each server;
  * the CPU overhead of a TypeScript node call over the same node in Rust: of the small
    decide-status node (three fields in, one out) from the status route, which calls only
    it, and of price-order (an order with its lines in, a quote out) from the orders route
    less decide-status;
  * anonymous (private) memory at rest and after the rounds, and the binaries' sizes.
Targets (issue 12): overhead <= 10 us per call, TS route >= 0.6x the Rust route's
throughput, and >= 5x Express's.

With --instructions, also counts the instructions per request of both svc servers under
callgrind (bench/instructions.py's method: noise-free, unlike the timings).
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from load import REPO, TARGET, keyed_store, measure, start, stopped_afterwards, wrk  # noqa: E402
from memory import private_kb  # noqa: E402

SHOP_TS = os.path.join(REPO, "examples", "shop-ts")
EXPRESS = os.path.join(REPO, "bench", "express")
ORDERS = "/acme/shop/orders"
# The TypeScript server with SVC_TYPESCRIPT=engine.
ENGINE = "ts in the engine"
# The same chain with only the small node (decide-status: three fields in, one out).
STATUS = "/acme/shop/status"


def sh(*args, **kw):
    return subprocess.run(args, check=True, **kw)


def build_servers():
    """svc, and the release binaries of both benchmark projects: {side: path}."""
    env = dict(os.environ, CARGO_TARGET_DIR=TARGET)
    sh("cargo", "build", "--release", "-q", "-p", "svc", cwd=REPO)
    svc = os.path.join(REPO, "target", "release", "svc")
    bins = {}
    for side, project, binary in (("rust nodes", "project", "benchshop"), ("typescript nodes", "project-ts", "shop")):
        project = os.path.join(REPO, "bench", project)
        generated = os.path.join(project, ".svc", "server")
        sh(svc, "emit", project, "--out", generated, stderr=subprocess.DEVNULL)
        sh("cargo", "build", "--release", "-q", "--manifest-path", os.path.join(generated, "Cargo.toml"), env=env)
        bins[side] = os.path.join(TARGET, "release", binary)
    return svc, bins


def build():
    svc, bins = build_servers()
    # Express runs the shop-ts nodes as tsc compiles them (.svc/tsc), with @svc/sdk
    # from the project's node_modules.
    sh(svc, "check", SHOP_TS, stderr=subprocess.DEVNULL)
    quiet = ["--no-audit", "--no-fund", "--loglevel=error"]
    sh("npm", "ci", *quiet, cwd=SHOP_TS)
    sh("npx", "tsc", "-p", SHOP_TS, cwd=SHOP_TS)
    sh("npm", "ci", *quiet, cwd=EXPRESS)
    return svc, bins


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--instructions", action="store_true", help="also count instructions per request (callgrind)")
    args = parser.parse_args()
    for tool in ("wrk", "taskset", "node", "npm"):
        if not shutil.which(tool):
            sys.exit(f"{tool} is needed")

    svc, bins = build()
    with keyed_store(svc, "svc-bench-ts-") as (work, store, key), stopped_afterwards() as procs:
        plain = {k: v for k, v in os.environ.items() if k != "SVC_LOG"}
        one_worker = dict(plain, TOKIO_WORKER_THREADS="1")
        commands = {
            "rust nodes": ([bins["rust nodes"], "serve", "--port", "0", "--store", store], one_worker),
            "typescript nodes": ([bins["typescript nodes"], "serve", "--port", "0", "--store", store], one_worker),
            # The same binary, its nodes run in QuickJS rather than as the Rust svc compiled
            # them to (SVC_TYPESCRIPT=engine): what every node outside the subset costs.
            ENGINE: ([bins["typescript nodes"], "serve", "--port", "0", "--store", store],
                     dict(one_worker, SVC_TYPESCRIPT="engine")),
            "express 5": (["node", os.path.join(EXPRESS, "server.mjs"), "--port", "0"], dict(plain, BENCH_API_KEY=key)),
        }
        for side, (cmd, env) in commands.items():
            procs[side] = start(cmd, env)
        idle = {side: private_kb(p.pid)[0] for side, (p, _) in procs.items()}
        for side, (p, url) in procs.items():
            wrk(url + ORDERS, key, 201, 1, args.connections)  # warm-up (and a check of the answer's status)
        runs = {side: [] for side in procs}
        status_runs = {side: [] for side in ("rust nodes", "typescript nodes", ENGINE)}
        for _ in range(args.rounds):
            for side, (p, url) in procs.items():
                runs[side].append(measure(p, url + ORDERS, key, 201, args.seconds, args.connections))
            for side in status_runs:
                p, url = procs[side]
                status_runs[side].append(measure(p, url + STATUS, key, 200, args.seconds, args.connections))
        after = {side: private_kb(p.pid)[0] for side, (p, _) in procs.items()}

    med = lambda side, k: statistics.median(r[k] for r in runs[side])  # noqa: E731
    print(f"\n== The orders route (2 code nodes), one core each, wrk -c{args.connections}, "
          f"median of {args.rounds} interleaved rounds of {args.seconds}s")
    print(f"{'':18}{'req/s':>10}{'p99 ms':>9}{'CPU us/req':>12}{'anon, rest':>12}{'after':>10}")
    for side in runs:
        print(f"{side:18}{med(side, 'rps'):10.0f}{med(side, 'p99_ms'):9.2f}{med(side, 'cpu_us_per_request'):12.1f}"
              f"{idle[side] / 1024:10.1f}Mi{after[side] / 1024:8.1f}Mi")
    rust, ts, node = "rust nodes", "typescript nodes", "express 5"
    status = lambda side, k: statistics.median(r[k] for r in status_runs[side])  # noqa: E731
    print("\n== The status route (the same chain, decide-status only), same rounds")
    for side in status_runs:
        print(f"{side:18}{status(side, 'rps'):10.0f}{status(side, 'p99_ms'):9.2f}"
              f"{status(side, 'cpu_us_per_request'):12.1f}")
    for label, side in (("compiled to Rust", ts), ("in the engine", ENGINE)):
        small = status(side, "cpu_us_per_request") - status(rust, "cpu_us_per_request")
        both = med(side, "cpu_us_per_request") - med(rust, "cpu_us_per_request")
        print(f"\nCPU per TypeScript node call {label}, over the same node in Rust (target <= 10 us for a few fields):")
        print(f"  decide-status (3 fields in, 1 out):      {small:5.1f} us")
        print(f"  price-order (an order in, a quote out):  {both - small:5.1f} us")
        print(f"  mean of the orders route's two calls:    {both / 2:5.1f} us")
    print(f"throughput in the engine / rust nodes:  {med(ENGINE, 'rps') / med(rust, 'rps'):.2f}")
    print(f"throughput typescript / rust nodes:   {med(ts, 'rps') / med(rust, 'rps'):.2f}   (target >= 0.6)")
    print(f"throughput typescript / express 5:    {med(ts, 'rps') / med(node, 'rps'):.2f}   (target >= 5)")
    print(f"anonymous memory at rest, typescript / rust nodes: {idle[ts] / idle[rust]:.2f}")
    print(f"binary size: rust nodes {os.path.getsize(bins[rust]) / 2**20:.1f} MiB, "
          f"typescript nodes {os.path.getsize(bins[ts]) / 2**20:.1f} MiB")
    if args.instructions:
        count_instructions(svc, bins)


def count_instructions(svc, bins, requests=2000):
    """Instructions per request of both svc servers, one tokio worker, under callgrind."""
    import instructions  # bench/instructions.py

    with keyed_store(svc, "svc-bench-ts-") as (work, store, key):
        os.environ["TOKIO_WORKER_THREADS"] = "1"
        sides = dict(bins, **{ENGINE: bins["typescript nodes"]})
        counts = {}
        for side, binary in sides.items():
            if side == ENGINE:
                os.environ["SVC_TYPESCRIPT"] = "engine"
            for path, expected in ((ORDERS, 201), (STATUS, 200)):
                counts[side, path] = instructions.instructions_per_request(
                    [binary, "serve", "--port", "0", "--store", store], path, key, expected, requests, work)
            os.environ.pop("SVC_TYPESCRIPT", None)
    print(f"\n== Instructions per request (callgrind, {requests} keep-alive requests)")
    print(f"{'':18}{'orders':>10}{'status':>10}")
    for side in sides:
        print(f"{side:18}{counts[side, ORDERS]:10.0f}{counts[side, STATUS]:10.0f}")
    for side in ("typescript nodes", ENGINE):
        extra = lambda path: counts[side, path] - counts["rust nodes", path]  # noqa: E731
        print(f"per TypeScript node call ({side}), over the same node in Rust:")
        print(f"  decide-status  {extra(STATUS):8.0f} instructions")
        print(f"  price-order    {extra(ORDERS) - extra(STATUS):8.0f} instructions")


if __name__ == "__main__":
    main()
