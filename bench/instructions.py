#!/usr/bin/env python3
"""Instructions per request, generated server versus the hand-written baselines, counted
by callgrind: the noise-free companion of bench/load.py.

The baselines: bench/independent (axum, governor, sha2 + subtle, serde; no svc code) and
bench/baseline (hand-written glue over svc's own building blocks). The cost ladder (bare
route, then Check Origin, Check API Key and Rate Limit added in turn) runs on the
generated server and on the independent baseline, with one worker thread each, where its
steps repeat from run to run; the full route runs as `serve` does by default.

    python3 bench/instructions.py [--requests 3000]

Wall-clock figures on a shared two-core machine swing by ±20 % from one second to the
next; instruction counts do not (the same binary, inputs and environment give the same
count whatever else the machine does). Each server runs under `valgrind --tool=callgrind`;
after a warm-up the counters are zeroed, exactly N requests are sent over one keep-alive
connection, and the counters are dumped: the user-space instructions the server spent per
request (kernel time, the same for both, is not counted).

Caveat: valgrind hides the CPU's SHA extensions, so SHA-256 (API key verification) runs in
software here and costs ~3,400 instructions per request, about 10x what it costs natively.

`--cache-sim` also simulates the caches and branch predictor (callgrind's --cache-sim and
--branch-sim: a 32 KiB L1 for instructions and one for data, mispredicted branches) and
prints, for the full route and for what the full chain adds to the bare route, the misses
per request and an estimate of cycles (Ir + 10 x (L1 misses + mispredicted branches) +
100 x last-level misses, KCachegrind's formula).
That is what instruction counts do not show (a larger future copied on every request, a
larger program), repeatable where hardware counters are not available.
"""

import argparse
import glob
import http.client
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import load as loadbench  # noqa: E402  (bench/load.py: the build and the request body)


# The generated server as `serve` runs by default (its default log level included).
SERVE_ENV = {k: v for k, v in os.environ.items() if k != "SVC_LOG"}


def start(cmd, out_dir, valgrind_args=(), env=None):
    out = os.path.join(out_dir, "callgrind.out.%p")
    proc = subprocess.Popen(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *valgrind_args] + cmd,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env=env if env is not None else SERVE_ENV,
    )
    line = proc.stdout.readline()
    m = re.search(r"listening on http://([\d.]+):(\d+)", line)
    if not m:
        proc.kill()
        sys.exit(f"{cmd[0]} did not start under valgrind: {line!r}")
    return proc, m.group(1), int(m.group(2))


def send(host, port, path, key, n, expected, body=None):
    """`key`: an API key (sent as `X-API-Key`), `Bearer <token>` (as `Authorization`), a
    dict of headers (a webhook's signature), or an iterator of them, one taken per request.
    `body`: the request body (default bench/load.py's order)."""
    conn = http.client.HTTPConnection(host, port, timeout=60)
    headers = {
        "content-type": "application/json",
        "origin": "https://eu.shop.example.com",
    }
    for _ in range(n):
        credential = key if isinstance(key, (str, dict)) else next(key)
        headers.pop("authorization", None)
        headers.pop("x-api-key", None)
        if isinstance(credential, dict):
            headers.update(credential)
        elif credential.startswith("Bearer "):
            headers["authorization"] = credential
        else:
            headers["x-api-key"] = credential
        conn.request("POST", path, body=body or loadbench.BODY, headers=headers)
        r = conn.getresponse()
        r.read()
        if r.status != expected:
            sys.exit(f"{path} answered {r.status}, expected {expected}")
    conn.close()


# Where a request's instructions go: (step, functions whose inclusive cost is the step's),
# for `--breakdown`. A function name matches by substring of callgrind_annotate's name.
# A step's names are summed; a tuple in them is alternatives (the first found counts), for
# functions that fat LTO inlines into their caller in one build and not in another.
HTTP_READ = ("HTTP/1 read and parse (hyper)", [("hyper::proto::h1::conn::Conn<I,B,T>::poll_read_head",
                                                "hyper::proto::h1::dispatch::Dispatcher<D,Bs,I,T>::poll_read")])
HTTP_WRITE = ("HTTP/1 write (hyper)", ["hyper::proto::h1::conn::Conn<I,B,T>::write_head", "Buffered<T,B>::poll_flush"])
SCHEDULING = ("task scheduling and parking (tokio)", ["tokio::runtime::scheduler::multi_thread::worker::Context::park_internal"])
BREAKDOWN = {
    "generated": [
        HTTP_READ,
        HTTP_WRITE,
        ("request guard: id, timeout, panic guard, routing", [("svc_runtime::server::Guard<S> as tower_service::Service",
                                                                 "svc_runtime::server::serve::{{closure}}::{{closure}}::{{closure}}")]),
        ("  of which routing (axum)", [("axum::routing::Router<S>::call_with_state",
                                        "axum::routing::method_routing::MethodRouter<S,E>::call_with_state")]),
        ("  of which the request id", [("svc_runtime::request_id::RequestId::assign",
                                        "svc_runtime::request_id::RequestId::generate")]),
        ("extractor (peer, params, state)", ["svc_runtime::call::Call as axum_core::extract::FromRequest"]),
        ("exchange set-up (client IP, clock)", ["svc_runtime::exchange::Exchange::new"]),
        ("Check Origin", ["svc_runtime::exchange::Exchange::check_origin"]),
        ("Check API Key", ["svc_runtime::exchange::Exchange::check_api_key"]),
        ("Rate Limit", ["svc_runtime::exchange::Exchange::rate_limit"]),
        ("body: read", ["svc_runtime::body::read_bytes"]),
        ("body: parse (serde_json)", ["svc_runtime::body::parse_json"]),
        ("node calls (both nodes)", ["svc_runtime::exchange::Exchange::run_node"]),
        ("response body (JSON writer)", ["svc_runtime::json::JsonWriter::value"]),
        ("response: headers, metrics, log (finish)", ["svc_runtime::exchange::Exchange::finish"]),
        SCHEDULING,
    ],
    "independent": [
        HTTP_READ,
        HTTP_WRITE,
        ("routing (axum)", ["axum::routing::Router<S>::call_with_state"]),
        ("route handler, all of it", ["independent::handle"]),
        ("  body: parse (serde_json)", ["serde_json::de::from_slice"]),
        ("  API key: SHA-256", ["sha2::"]),
        ("  limiter (governor)", ["governor::"]),
        SCHEDULING,
    ],
}


def breakdown(dump, side, n):
    """The inclusive instructions per request of each step of BREAKDOWN[side]."""
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", dump],
                         check=True, capture_output=True, text=True).stdout
    costs = []
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+) \([ \d.]+%\)\s+\S*?:(.*)$", line)
        if m:
            costs.append((int(m.group(1).replace(",", "")), m.group(2)))
    print(f"\nWhere the instructions of one request go, {side} server (inclusive, per request)")
    for step, names in BREAKDOWN[side]:
        # The outermost (largest) entry of each function: recursion and inlined copies
        # appear again below it.
        total = 0
        for name in names:
            for alternative in (name if isinstance(name, tuple) else (name,)):
                found = max((c for c, fn in costs if alternative in fn), default=0)
                if found:
                    total += found
                    break
        print(f"  {step:48}{total / n:>9.0f}" + ("  (inlined into its caller in this build)" if not total else ""))


CACHE_SIM = ["--cache-sim=yes", "--branch-sim=yes"]


def cycle_estimate(events):
    """KCachegrind's estimate of cycles from callgrind's simulated events."""
    l1 = events["I1mr"] + events["D1mr"] + events["D1mw"]
    ll = events["ILmr"] + events["DLmr"] + events["DLmw"]
    return events["Ir"] + 10 * (l1 + events["Bcm"] + events["Bim"]) + 100 * ll


# The ladder runs on one worker thread. With two, which worker takes a request, and
# whether the other is woken, changes from run to run: the ladder's steps swung by 1,000
# instructions between two runs (+1,926, +276 and +1,982 against +732, +1,676 and +1,462),
# where one worker repeats them to within 50.
ONE_WORKER = dict(SERVE_ENV, TOKIO_WORKER_THREADS="1")


def instructions_per_request(cmd, path, key, expected, n, work, breakdown_of=None, cache_sim=False, env=None,
                             body=None):
    """Instructions per request; with `breakdown_of` (a key of BREAKDOWN), also prints
    where they go; with `cache_sim`, every simulated event per request (a dict) instead.
    `env`: the server's environment (by default SERVE_ENV); `body`: the request body."""
    out_dir = tempfile.mkdtemp(dir=work)
    proc, host, port = start(cmd, out_dir, CACHE_SIM if cache_sim else (), env=env)
    try:
        send(host, port, path, key, 200, expected, body)
        subprocess.run(["callgrind_control", "-z", str(proc.pid)], check=True, capture_output=True)
        send(host, port, path, key, n, expected, body)
        subprocess.run(["callgrind_control", "-d", str(proc.pid)], check=True, capture_output=True)
        dumps = [p for p in glob.glob(os.path.join(out_dir, "callgrind.out.*")) if re.search(r"\.\d+\.\d+$", p)]
        if not dumps:
            sys.exit("callgrind wrote no dump")
        if breakdown_of:
            breakdown(sorted(dumps)[-1], breakdown_of, n)
        with open(sorted(dumps)[-1]) as f:
            text = f.read()
        names = re.search(r"^events: (.*)$", text, re.M).group(1).split()
        totals = [int(t) for t in re.search(r"^(?:summary|totals): (.*)$", text, re.M).group(1).split()]
        events = {name: total / n for name, total in zip(names, totals)}
        return events if cache_sim else events["Ir"]
    finally:
        proc.kill()
        proc.wait()


def bench_token(kid, subject="bench-user"):
    """`Bearer <token>` for the benchmark's Check JWT routes, signed by PyJWT with the key
    of bench/jwt/ named `kid`, valid for an hour."""
    import time

    import jwt

    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "jwt", f"{kid}.pem"), "rb") as f:
        private = f.read()
    claims = {"iss": "https://id.bench.example/", "aud": "bench-api", "sub": subject,
              "exp": int(time.time()) + 3600, "iat": int(time.time()), "scope": "orders"}
    return "Bearer " + jwt.encode(claims, private, algorithm=kid.upper(), headers={"kid": kid})


def compare_jwt(svc, generated, n):
    """Check JWT against Check API Key: the same route (Check Origin, the check, the
    two code nodes), one worker thread, instructions per request."""
    with loadbench.keyed_store(svc, "svc-instr-") as (work, store, key):
        cmd = [generated, "serve", "--port", "0", "--store", store]
        # A token sent again is remembered as verified (runtime/server/src/jwt/verified.rs);
        # a new token each request is verified each time.
        fresh = lambda kid: iter([bench_token(kid, f"user-{i}") for i in range(n + 200)])
        rows = [("Check API Key", "ladder/origin-key", key),
                ("Check JWT, RS256, same token", "ladder/origin-jwt-rs256", bench_token("rs256")),
                ("Check JWT, ES256, same token", "ladder/origin-jwt-es256", bench_token("es256")),
                ("Check JWT, RS256, new tokens", "ladder/origin-jwt-rs256", fresh("rs256")),
                ("Check JWT, ES256, new tokens", "ladder/origin-jwt-es256", fresh("es256"))]
        counts = [(name, instructions_per_request(cmd, f"/acme/shop/{path}", credential, 201, n, work, env=ONE_WORKER))
                  for name, path, credential in rows]
    print(f"\nCheck JWT against Check API Key (instructions per request, callgrind, {n} requests, one worker thread)")
    print(f"{'':36}{'instructions':>14}{'ratio':>9}")
    base = counts[0][1]
    for name, count in counts:
        print(f"{name:36}{count:>14.0f}{count / base:>9.3f}   ({count - base:+.0f})")


WEBHOOK_SECRET = "whsec_bench_0123456789abcdef"


def webhook_body(size=2048):
    """An order of about `size` bytes (as many lines as it takes): a webhook's payload."""
    import json

    lines, body = [], ""
    while len(body) < size:
        lines.append({"sku": f"SKU-{len(lines):04d}", "quantity": 1 + len(lines) % 5, "unitPrice": 9.5, "tags": ["bench"]})
        body = json.dumps({"customerEmail": "ada@example.com", "currency": "EUR", "lines": lines})
    return body


def stripe_signature(body):
    """`Stripe-Signature` for `body`, as Stripe signs (HMAC-SHA256 of `<t>.<body>`), now."""
    import hashlib
    import hmac
    import time

    t = int(time.time())
    v1 = hmac.new(WEBHOOK_SECRET.encode(), f"{t}.{body}".encode(), hashlib.sha256).hexdigest()
    return {"stripe-signature": f"t={t},v1={v1}"}


def compare_signature(svc, generated, n):
    """Check Signature against Check API Key: the same route (Check Origin, the check, the
    two code nodes), a 2 kB body, one worker thread, instructions per request."""
    body = webhook_body()
    with loadbench.keyed_store(svc, "svc-instr-") as (work, store, key):
        subprocess.run([svc, "secrets", "set", "BENCH_WEBHOOK_SECRET", "--store", store],
                       input=WEBHOOK_SECRET, check=True, capture_output=True, text=True)
        cmd = [generated, "serve", "--port", "0", "--store", store]
        rows = [("Check API Key", "ladder/origin-key", key),
                ("Check Signature (Stripe)", "ladder/origin-signature", stripe_signature(body))]
        counts = [(name, instructions_per_request(cmd, f"/acme/shop/{path}", credential, 201, n, work, env=ONE_WORKER,
                                                  body=body))
                  for name, path, credential in rows]
    print(f"\nCheck Signature against Check API Key (instructions per request, callgrind, {n} requests of"
          f" {len(body)} bytes, one worker thread)")
    print(f"{'':36}{'instructions':>14}{'ratio':>9}")
    base = counts[0][1]
    for name, count in counts:
        print(f"{name:36}{count:>14.0f}{count / base:>9.3f}   ({count - base:+.0f})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=3000)
    ap.add_argument("--breakdown", action="store_true",
                    help="also print where the instructions of the full route go, step by step, on both servers")
    ap.add_argument("--cache-sim", action="store_true",
                    help="also simulate caches and branches for the full route and for the chain (bare route and full chain):"
                         " misses per request and estimated cycles")
    ap.add_argument("--generated", metavar="BINARY",
                    help="count this build of the benchmark server instead of the one built from bench/project"
                         " (for example `svc build bench/project --pgo -o BINARY`)")
    ap.add_argument("--jwt", action="store_true",
                    help="only compare Check JWT (an RS256 and an ES256 token, inline keys) with Check API Key"
                         " on the same route (needs PyJWT: pip install 'PyJWT[crypto]')")
    ap.add_argument("--signature", action="store_true",
                    help="only compare Check Signature (Stripe's, a 2 kB body) with Check API Key on the same route")
    args = ap.parse_args()
    for tool in ("valgrind", "callgrind_control"):
        if not shutil.which(tool):
            sys.exit(f"{tool} is needed (apt install valgrind)")

    svc, generated, baseline, independent = loadbench.build(args.generated)
    n = args.requests
    if args.jwt:
        return compare_jwt(svc, generated, n)
    if args.signature:
        return compare_signature(svc, generated, n)
    with loadbench.keyed_store(svc, "svc-instr-") as (work, store, key):
        servers = {
            "generated": [generated, "serve", "--port", "0", "--store", store],
            "independent": [independent, "--port", "0", "--store", store],
        }
        full = {side: instructions_per_request(cmd, "/acme/shop/orders", key, 201, n, work,
                                               breakdown_of=side if args.breakdown else None)
                for side, cmd in servers.items()}
        full["svc-blocks"] = instructions_per_request([baseline, "--port", "0", "--store", store], "/acme/shop/orders", key, 201, n, work)
        ladder = {side: [(name, instructions_per_request(cmd, f"/acme/shop/{path}", key, 201, n, work, env=ONE_WORKER))
                         for name, path in loadbench.LADDER]
                  for side, cmd in servers.items()}
        simulated = {side: instructions_per_request(cmd, "/acme/shop/orders", key, 201, n, work, cache_sim=True)
                     for side, cmd in servers.items()} if args.cache_sim else {}
        # The bare route and the full chain, simulated: the chain's cost with what
        # instruction counts leave out (its code's share of instruction-cache misses).
        simulated_chain = {side: [instructions_per_request(cmd, f"/acme/shop/{path}", key, 201, n, work, cache_sim=True,
                                                           env=ONE_WORKER)
                                  for path in (loadbench.LADDER[0][1], loadbench.LADDER[-1][1])]
                           for side, cmd in servers.items()} if args.cache_sim else {}

    print(f"\nInstructions per request (callgrind, {n} requests on one keep-alive connection)")
    g = full["generated"]
    print(f"{'':28}{'instructions':>14}{'generated / this':>18}")
    for side, count in full.items():
        print(f"{side:28}{count:>14.0f}{g / count:>18.3f}")
    for side, steps in ladder.items():
        print(f"\nCost ladder on the {side} server (instructions per request, one worker thread)")
        bare = previous = steps[0][1]
        for name, count in steps:
            print(f"{name:28}{count:>14.0f}{count / bare:>9.3f}   (+{count - previous:.0f})")
            previous = count
    if simulated:
        print("\nFull route with simulated caches and branch predictor (per request)")
        print(f"{'':16}{'Ir':>9}{'I1 misses':>11}{'D1 misses':>11}{'LL misses':>11}{'mispredicted':>14}{'est. cycles':>13}")
        for side, e in simulated.items():
            print(f"{side:16}{e['Ir']:>9.0f}{e['I1mr']:>11.0f}{e['D1mr'] + e['D1mw']:>11.0f}"
                  f"{e['ILmr'] + e['DLmr'] + e['DLmw']:>11.0f}{e['Bcm'] + e['Bim']:>14.0f}{cycle_estimate(e):>13.0f}")
        g, i = (cycle_estimate(simulated[side]) for side in ("generated", "independent"))
        print(f"estimated cycles, generated / independent: {g / i:.3f}")
        print("\nThe full chain with simulated caches and branch predictor (per request, added to the bare route,"
              " one worker thread)")
        print(f"{'':16}{'Ir':>9}{'I1 misses':>11}{'D1 misses':>11}{'mispredicted':>14}{'est. cycles':>13}{'of bare':>9}")
        for side, (bare, chain) in simulated_chain.items():
            added = {k: chain[k] - bare[k] for k in chain}
            print(f"{side:16}{added['Ir']:>+9.0f}{added['I1mr']:>+11.0f}{added['D1mr'] + added['D1mw']:>+11.0f}"
                  f"{added['Bcm'] + added['Bim']:>+14.0f}{cycle_estimate(added):>+13.0f}"
                  f"{100 * cycle_estimate(added) / cycle_estimate(bare):>8.1f}%")
        print("(the independent server's SHA-256 runs in software under valgrind: about 3,400 of its instructions)")


if __name__ == "__main__":
    main()
