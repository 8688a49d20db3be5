#!/usr/bin/env python3
"""The shared stores under load: the in-memory limiter against the Redis limiter, and how
fast a revocation reaches every instance through PostgreSQL.

    python3 bench/shared.py [--seconds 3] [--rounds 6] [--connections 32] [--trials 10]

1. The protected route of bench/project (Check Origin, Check API Key, Rate Limit by API
   key, two code nodes) on two servers of the same binary: one counting in memory, one in
   a real redis-server. wrk runs on CPU 1; the server *and Redis* share CPU 0, so the
   Redis route pays for Redis's own CPU in its throughput, and "CPU per request" adds the
   server's and Redis's. Rounds interleave memory and Redis. Prints the Redis route's
   throughput, p99 and CPU per request as ratios of the in-memory route's.
2. Three instances on one PostgreSQL (initdb + pg_ctl in a temporary directory): for each
   trial, a new key is created with `svc keys create`, used on all three, revoked with
   `svc keys revoke`, and the time until all three answer 401 is measured (each polled
   over a keep-alive connection). Prints the median and the maximum.

Machines are shared and noisy: compare the ratios of one run, not absolute numbers.
"""

import argparse
import http.client
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import load  # noqa: E402  (the build, start and wrk helpers)


free_port = load.free_port


def start_redis(work):
    port = free_port()
    proc = subprocess.Popen(["taskset", "-c", "0", "redis-server", "--port", str(port), "--bind", "127.0.0.1",
                             "--save", "", "--appendonly", "no", "--dir", work],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return proc, f"redis://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.02)
    sys.exit("redis-server did not start")


def pg_bin():
    initdb = shutil.which("initdb")
    if not initdb:
        found = sorted(d for d in os.listdir("/usr/lib/postgresql")) if os.path.isdir("/usr/lib/postgresql") else []
        if not found:
            sys.exit("PostgreSQL is needed (apt install postgresql)")
        initdb = f"/usr/lib/postgresql/{found[-1]}/bin/initdb"
    return os.path.dirname(os.path.realpath(initdb))


def start_postgres(work):
    bin_dir = pg_bin()
    pg = os.path.join(work, "pg")
    os.makedirs(pg)
    as_user = []
    if os.geteuid() == 0:
        os.chmod(work, 0o711)
        subprocess.run(["chown", "-R", "postgres", pg], check=True)
        as_user = ["runuser", "-u", "postgres", "--"]
    port = free_port()
    data = os.path.join(pg, "data")
    subprocess.run(as_user + [f"{bin_dir}/initdb", "-D", data, "-U", "svc", "--auth=trust", "--no-sync", "-E", "UTF8",
                              "--locale=C"], check=True, capture_output=True)
    subprocess.run(as_user + [f"{bin_dir}/pg_ctl", "-D", data, "-l", os.path.join(pg, "log"), "-w", "-o",
                              f"-p {port} -c listen_addresses=127.0.0.1 -k {pg} -c fsync=off", "start"],
                   check=True, capture_output=True)
    subprocess.run(as_user + [f"{bin_dir}/createdb", "-h", "127.0.0.1", "-p", str(port), "-U", "svc", "svc"],
                   check=True, capture_output=True)

    def stop():
        pidfile = os.path.join(data, "postmaster.pid")
        if os.path.exists(pidfile):
            with open(pidfile) as f:
                pid = int(f.readline())
            os.kill(pid, 2)
            for _ in range(300):
                if not os.path.exists(pidfile):
                    break
                time.sleep(0.05)

    return f"postgres://svc@127.0.0.1:{port}/svc", stop


def limiter_ab(svc, server, args, work, redis_url):
    store = os.path.join(work, "workspace.db")
    key = load.create_key(svc, store)
    quiet = dict(os.environ, SVC_LOG="warn")
    mem_proc, mem_url = load.start([server, "serve", "--port", "0", "--store", store], env=quiet)
    red_proc, red_url = load.start([server, "serve", "--port", "0", "--store", store,
                                    "--rate-limit-store", redis_url, "--rate-limit-failure", "closed"], env=quiet)
    return key, (mem_proc, mem_url), (red_proc, red_url)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--trials", type=int, default=10)
    args = ap.parse_args()
    for tool in ("wrk", "taskset", "redis-server"):
        if not shutil.which(tool):
            sys.exit(f"{tool} is needed (apt install wrk util-linux redis-server)")

    svc, server, _baseline, _independent = load.build()
    work = tempfile.mkdtemp(prefix="svc-bench-shared-")
    redis_proc, redis_url = start_redis(work)
    procs = [redis_proc]
    pg_stop = None
    try:
        key, (mem_proc, mem_url), (red_proc, red_url) = limiter_ab(svc, server, args, work, redis_url)
        procs += [mem_proc, red_proc]
        route = "/acme/shop/orders"
        load.wrk(mem_url + route, key, 201, 2, args.connections)
        load.wrk(red_url + route, key, 201, 2, args.connections)
        runs = {"memory": [], "redis": []}
        for _ in range(args.rounds):
            runs["memory"].append(load.measure(mem_proc, mem_url + route, key, 201, args.seconds, args.connections))
            redis_cpu0 = load.cpu_snapshot(redis_proc.pid)
            r = load.measure(red_proc, red_url + route, key, 201, args.seconds, args.connections)
            r["redis_cpu_us_per_request"] = load.cpu_seconds_since(redis_proc.pid, redis_cpu0) / r["requests"] * 1e6
            r["cpu_us_per_request"] += r["redis_cpu_us_per_request"]
            runs["redis"].append(r)

        def med(side, field):
            return statistics.median(x[field] for x in runs[side])

        print(f"\nRate Limit in memory vs in Redis ({args.rounds} interleaved rounds of {args.seconds} s, "
              f"{args.connections} connections; server and Redis on CPU 0, wrk on CPU 1)\n")
        print(f"{'':28} {'memory':>12} {'redis':>12} {'ratio':>8}")
        for label, field in (("throughput (req/s)", "rps"), ("p99 (ms)", "p99_ms"),
                             ("CPU per request (us)", "cpu_us_per_request")):
            m, r = med("memory", field), med("redis", field)
            print(f"{label:28} {m:12.2f} {r:12.2f} {r / m:8.3f}")
        print(f"{'  of which Redis (us)':28} {'':12} {med('redis', 'redis_cpu_us_per_request'):12.2f}")
        paired = [r["rps"] / m["rps"] for m, r in zip(runs["memory"], runs["redis"])]
        print(f"\nthroughput ratio per round: {', '.join(f'{p:.3f}' for p in paired)} "
              f"(median {statistics.median(paired):.3f}; target >= 0.5)")
        for p in (mem_proc, red_proc):
            p.kill()

        # Revocation propagation across three instances on one PostgreSQL.
        pg_url, pg_stop = start_postgres(work)
        env = dict(os.environ, SVC_LOG="warn", SVC_STORE=pg_url)
        env.pop("SVC_SECRETS_KEY", None)
        instances = []
        for _ in range(3):
            proc, url = load.start([server, "serve", "--port", "0"], env=env)
            procs.append(proc)
            instances.append(url)
        conns = [http.client.HTTPConnection(u.split("//")[1].split(":")[0], int(u.rsplit(":", 1)[1])) for u in instances]

        def status(conn, k):
            conn.request("POST", route, body=load.BODY, headers={
                "content-type": "application/json", "origin": "https://eu.shop.example.com", "x-api-key": k})
            r = conn.getresponse()
            r.read()
            return r.status

        times = []
        for trial in range(args.trials):
            k = subprocess.run([svc, "keys", "create", "--name", f"t{trial}", "--owner", "bench"], env=env,
                               check=True, capture_output=True, text=True).stdout.strip()
            deadline = time.monotonic() + 5
            for c in conns:
                while status(c, k) != 201:
                    if time.monotonic() > deadline:
                        sys.exit("a new key did not reach every instance within 5 s")
                    time.sleep(0.005)
            subprocess.run([svc, "keys", "revoke", f"t{trial}"], env=env, check=True, capture_output=True)
            start = time.monotonic()
            for c in conns:
                while status(c, k) != 401:
                    if time.monotonic() - start > 10:
                        sys.exit("a revocation did not reach every instance within 10 s")
                    time.sleep(0.002)
            times.append((time.monotonic() - start) * 1000)
        print(f"\nrevocation reaching 3 instances through PostgreSQL ({args.trials} trials, from `svc keys revoke` "
              f"exiting to the last 401): median {statistics.median(times):.1f} ms, max {max(times):.1f} ms "
              f"(target <= 2000 ms)")
    finally:
        for p in procs:
            p.kill()
        if pg_stop:
            pg_stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
