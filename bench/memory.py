#!/usr/bin/env python3
"""Private memory of the generated server beside the independent one, in one run.

    python3 bench/memory.py [--idle 1000] [--active 64] [--seconds 3] [--starts 5]

What limits how many servers fit on a machine is the memory each holds for itself, not
its resident code (file-backed pages, shared by every process of one binary and dropped
by the kernel under pressure). So this measures, from /proc/<pid>/smaps_rollup:

  * anonymous memory (heap, stacks, written data): the memory no other process shares
    and the kernel cannot drop without swap; and USS (every private page, code included);
  * at rest: after start and one answered request;
  * per idle connection: `--idle` keep-alive connections, each having had one request
    answered, held open; the growth divided by their number;
  * per active connection: the peak during `--seconds` of wrk with `--active`
    connections on the full route, less the rest figure, divided by their number;
  * after the load: at rest again, wrk's connections closed, one second later.

Idle and active connections are measured on separate starts, so that neither finds
memory the other left in the allocator.

Both servers run the benchmarked route of bench/load.py (same builds, same store, same
request), with one worker thread and with two; each figure is the median of `--starts`
fresh starts. The binaries come from load.py's build (release, target/bench).
"""

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import load  # noqa: E402  (the builds, the store, the request and wrk of the load benchmark)


def private_kb(pid):
    """(anonymous, USS) of `pid` in kB, from smaps_rollup."""
    fields = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[2] == "kB":
                fields[parts[0].rstrip(":")] = int(parts[1])
    return fields["Anonymous"], fields["Private_Clean"] + fields["Private_Dirty"]


def request_bytes(path, key):
    body = load.BODY.encode()
    head = (f"POST {path} HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n"
            f"Origin: {load.ORIGIN}\r\nX-API-Key: {key}\r\nContent-Length: {len(body)}\r\n\r\n")
    return head.encode() + body


def read_answer(sock):
    """Reads one HTTP/1.1 answer whose body has a Content-Length."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed before an answer")
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed mid-answer")
        rest += chunk
    return head.split(b" ", 2)[1]


def idle_connections(url, key, n):
    """n keep-alive connections, each with one request answered; the caller closes them."""
    host, port = url.removeprefix("http://").split(":")
    raw = request_bytes("/acme/shop/orders", key)
    socks = []
    for _ in range(n):
        s = socket.create_connection((host, int(port)), timeout=10)
        s.sendall(raw)
        status = read_answer(s)
        if status not in (b"201", b"429"):
            sys.exit(f"an idle connection's request answered {status.decode()}")
        socks.append(s)
    return socks


def peak_during(pid, work):
    """Runs `work()` while sampling private memory every 20 ms; the peak anonymous kB."""
    peak = [0]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], private_kb(pid)[0])
            time.sleep(0.02)

    t = threading.Thread(target=sample)
    t.start()
    try:
        work()
    finally:
        done.set()
        t.join()
    return peak[0]


def measure_one(cmd, env, key, args):
    """One server started twice, so that neither phase finds the other's memory in the
    allocator's free lists: idle connections on the first start, active ones (and the
    rest after them) on the second."""
    proc, url = load.start(cmd, env)
    try:
        load.expect_status(url + "/acme/shop/orders", key, 201)
        time.sleep(0.5)
        rest, rest_uss = private_kb(proc.pid)
        socks = idle_connections(url, key, args.idle)
        time.sleep(0.5)
        with_idle = private_kb(proc.pid)[0]
        for s in socks:
            s.close()
    finally:
        proc.kill()
        proc.wait()

    proc, url = load.start(cmd, env)
    try:
        load.expect_status(url + "/acme/shop/orders", key, 201)
        time.sleep(0.5)
        before = private_kb(proc.pid)[0]
        peak = peak_during(proc.pid, lambda: load.wrk(url + "/acme/shop/orders", key, 201, args.seconds, args.active))
        time.sleep(1.0)
        after = private_kb(proc.pid)[0]
    finally:
        proc.kill()
        proc.wait()
    return {
        "rest": rest,
        "rest_uss": rest_uss,
        "per_idle": (with_idle - rest) * 1024 / args.idle,
        "per_active": (peak - before) * 1024 / args.active,
        "after": after,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--idle", type=int, default=1000, help="idle keep-alive connections (default 1000)")
    ap.add_argument("--active", type=int, default=64, help="wrk's connections (default 64)")
    ap.add_argument("--seconds", type=int, default=3, help="length of the wrk run (default 3)")
    ap.add_argument("--starts", type=int, default=5, help="fresh starts per figure (default 5)")
    args = ap.parse_args()
    for tool in ("wrk", "taskset"):
        if not shutil.which(tool):
            sys.exit(f"{tool} is needed (apt install wrk util-linux)")

    bins = load.build()
    with load.keyed_store(bins[0], "svc-memory-") as (_work, store, key):
        sides = {k: v for k, v in load.commands(bins, store).items() if k in ("generated", "independent")}
        for threads in ("1", "2"):
            runs = {side: [] for side in sides}
            for _ in range(args.starts):
                # Interleaved start by start, so that the machine's drift falls on both.
                for side, (cmd, env) in sides.items():
                    runs[side].append(measure_one(cmd, dict(env, TOKIO_WORKER_THREADS=threads), key, args))
            print(f"\n== {threads} worker thread{'s' if threads != '1' else ''}: private memory, "
                  f"median of {args.starts} starts")
            rows = [
                ("at rest, anonymous (KiB)", "rest", "{:.0f}"),
                ("at rest, USS (KiB)", "rest_uss", "{:.0f}"),
                (f"per idle connection ({args.idle} open, bytes)", "per_idle", "{:.0f}"),
                (f"per active connection ({args.active} under wrk, bytes)", "per_active", "{:.0f}"),
                ("at rest after the load, anonymous (KiB)", "after", "{:.0f}"),
            ]
            print(f"{'':52}{'generated':>12}{'independent':>13}{'ratio':>8}")
            for label, field, fmt in rows:
                g = statistics.median(r[field] for r in runs["generated"])
                i = statistics.median(r[field] for r in runs["independent"])
                ratio = f"{g / i:.2f}" if i else "-"
                print(f"{label:52}{fmt.format(g):>12}{fmt.format(i):>13}{ratio:>8}")


if __name__ == "__main__":
    main()
