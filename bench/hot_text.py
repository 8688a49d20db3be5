#!/usr/bin/env python3
"""Writes runtime/server/link/hot-text.ld: the functions a generated server runs, as the
linker script lines that lay them side by side at the front of its binary.

    python3 bench/hot_text.py [--reuse] [--check]

Why: a server's binary is ~8 MB of machine code, of which a request and the start-up
run ~1.5 MB, scattered across all of it. The kernel maps code in 64 KiB windows around
each page a process touches, so scattered code keeps most of the binary resident (idle
RSS) and spreads the request path over more cache lines and TLB entries. Gathered, the
same code takes a fraction of the pages. See docs/performance.md ("Hot text").

How: both benchmark servers (bench/project, Rust nodes; bench/project-ts, TypeScript
nodes, compiled to Rust and then again with SVC_TYPESCRIPT=engine, which runs them in
QuickJS), and a profile-guided build of bench/project (`svc build --pgo`, which inlines
differently), run under callgrind. The first dump holds the start-up and what the server
does at rest in its first two seconds (the key reloader's first poll, the watchdog's
first tick); then every kind of request a server answers is sent (the full route, each
step of the cost ladder, a preflight, refusals by origin, key and body, an unknown
route, /healthz, /metrics), and the second dump holds those. The functions come in three runs, each by cost: those
only the start-up runs, those both run, those only requests run. A server at rest has
touched the first two; under load the last two, which lie side by side.

The script names sections by glob (`*(.text.*_ZN5tokio7runtime4task3raw4poll17h*)`):
the hash legacy mangling appends, and the crate disambiguators of v0 mangling, change
with every build, the path before them does not. A glob therefore also takes the other
monomorphisations of a generic function, which is what a server built from other flows
needs. Functions of the benchmark projects' own crates are left out: each generated
server adds its own crate (its build.rs). A name the linker does not find costs nothing.

`--check` rewrites nothing: it reports the share of the functions the servers run that
the committed script places, and exits 1 below 95 % (after a dependency update, say).
"""

import argparse
import collections
import fnmatch
import glob
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import instructions  # noqa: E402  (bench/instructions.py: start a server under callgrind)
import load as loadbench  # noqa: E402  (bench/load.py: the request body)
import typescript  # noqa: E402  (bench/typescript.py: build both benchmark servers)

REPO = loadbench.REPO
TARGET = loadbench.TARGET
SCRIPT = os.path.join(REPO, "runtime", "server", "link", "hot-text.ld")
# The last profiles taken, for --reuse.
PROFILES = os.path.join(TARGET, "hot-text-profiles.json")
# The benchmark projects' own crates: each generated server adds its own (build.rs).
OWN_CRATES = ("benchshop", "shop", "bench_nodes")
ORIGIN = loadbench.ORIGIN
# Seconds after "listening" by which a server has done what it does at rest (profile()).
AT_REST_AFTER = 2.0


def exchange(conn, method, path, expected, body=None, headers=None):
    conn.request(method, path, body=body, headers=headers or {})
    response = conn.getresponse()
    response.read()
    if response.status != expected:
        sys.exit(f"{method} {path} answered {response.status}, expected {expected}")


def requests(host, port, key):
    """Every kind of request the benchmark servers answer."""
    conn = http.client.HTTPConnection(host, port, timeout=60)
    good = {"content-type": "application/json", "origin": ORIGIN, "x-api-key": key}
    for _ in range(200):
        exchange(conn, "POST", "/acme/shop/orders", 201, loadbench.BODY, good)
    for _ in range(50):
        exchange(conn, "POST", "/acme/shop/status", 200, loadbench.BODY, good)
    for _, path in loadbench.LADDER:
        for _ in range(20):
            exchange(conn, "POST", f"/acme/shop/{path}", 201, loadbench.BODY, good)
    for _ in range(10):
        exchange(conn, "OPTIONS", "/acme/shop/orders", 204, headers={
            "origin": ORIGIN, "access-control-request-method": "POST",
            "access-control-request-headers": "content-type, x-api-key"})
        exchange(conn, "POST", "/acme/shop/orders", 403, loadbench.BODY, dict(good, origin="https://evil.example"))
        exchange(conn, "POST", "/acme/shop/orders", 401, loadbench.BODY, dict(good, **{"x-api-key": "svck_wrong"}))
        exchange(conn, "POST", "/acme/shop/orders", 400, "{not json", good)
        exchange(conn, "POST", "/acme/shop/orders", 400, '{"currency": 1}', good)
        exchange(conn, "GET", "/acme/shop/nowhere", 404)
        exchange(conn, "GET", "/healthz", 200)
        exchange(conn, "GET", "/metrics", 200)
    conn.close()


def self_costs(dump, binary):
    """{mangled function name: instructions spent in it} for the functions of `binary`."""
    names, objects, costs = {}, {}, collections.Counter()
    ob = fn = None
    after_call = False

    def name_of(table, text):
        m = re.match(r"\((\d+)\)(?: (.*))?$", text)
        if not m:
            return text
        if m.group(2) is not None:
            table[m.group(1)] = m.group(2)
        return table.get(m.group(1))

    with open(dump) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("ob="):
                ob = name_of(objects, line[3:])
            elif line.startswith("cob="):
                name_of(objects, line[4:])
            elif line.startswith("fn="):
                fn = name_of(names, line[3:])
            elif line.startswith("cfn="):
                name_of(names, line[4:])
            elif line.startswith("calls="):
                after_call = True
            elif line[:1].isdigit() or line[:1] in "+-*":
                if after_call:  # the inclusive cost of a call: not this function's own
                    after_call = False
                    continue
                parts = line.split()
                if fn and ob == binary and len(parts) >= 2:
                    costs[re.sub(r"'\d+$", "", fn)] += int(parts[1])
    return costs


def profile(binary, store, key, work, extra_env=None):
    out_dir = tempfile.mkdtemp(dir=work)
    # As `serve` runs by default: worker threads per core (their start-up is profiled too).
    env = {k: v for k, v in os.environ.items() if k not in ("TOKIO_WORKER_THREADS", "SVC_LOG", "SVC_TYPESCRIPT")}
    env.update(extra_env or {})
    proc, host, port = instructions.start([binary, "serve", "--port", "0", "--store", store], out_dir,
                                          valgrind_args=["--demangle=no"], env=env)
    try:
        # A server at rest has done more than start: the key reloader's first poll (after
        # 500 ms, on a thread of the blocking pool) and the watchdog's first tick (after a
        # second at most) run before any request, and their code would otherwise sit
        # among the request-only functions, four more 64 KiB windows resident at rest.
        time.sleep(AT_REST_AFTER)
        subprocess.run(["callgrind_control", "-d", str(proc.pid)], check=True, capture_output=True)
        requests(host, port, key)
        subprocess.run(["callgrind_control", "-d", str(proc.pid)], check=True, capture_output=True)
    finally:
        proc.kill()
        proc.wait()
    dumps = sorted(glob.glob(os.path.join(out_dir, "callgrind.out.*.*")), key=lambda p: int(p.rsplit(".", 1)[1]))
    if len(dumps) != 2:
        sys.exit(f"expected two callgrind dumps of {binary}, found {dumps}")
    return self_costs(dumps[0], binary), self_costs(dumps[1], binary)


def pattern(name):
    """The section glob of a function, whatever build it comes from; None to leave it out."""
    if name.startswith("("):  # callgrind's "(below main)"
        return None
    # LTO's suffixes for a promoted or renamed local: `.llvm.N`, `.N`.
    name = re.sub(r"(\.llvm)?\.\d+$", "", name) if name.startswith(("_ZN", "_R")) else name
    if name.startswith("_ZN"):
        m = re.match(r"_ZN(\d+)", name)
        crate = name[3 + len(m.group(1)):3 + len(m.group(1)) + int(m.group(1))]
        if crate in OWN_CRATES:
            return None
        name = re.sub(r"17h[0-9a-f]{16}E$", "17h*", name)
    elif name.startswith("_R"):
        if any(f"_{len(c)}{c}" in name for c in OWN_CRATES):
            return None
        name = re.sub(r"Cs[0-9A-Za-z]+_", "Cs*_", name)  # crate disambiguators
        name = re.sub(r"B[0-9A-Za-z]*_", "B*_", name)  # back-references: offsets into the name
        name += "*"  # and whatever suffix LTO gave it
    # `.text.*` also takes LLVM's `.text.unlikely.`, `.text.startup.` and `.text.hot.`.
    return f"*(.text.*{name})" if name.startswith(("_ZN", "_R")) else f"*(.text.{name} .text.*.{name})"


def script(startups, runs):
    """The section patterns in three runs: what only the start-up runs, what both the
    start-up and requests run, what only requests run. At rest a server has touched the
    first two; under load the last two, which are side by side."""
    request_share, startup_cost = collections.Counter(), collections.Counter()
    for costs in runs:
        total = sum(costs.values())
        for name, cost in costs.items():
            request_share[name] += cost / total  # each server's share, so both weigh the same
    for costs in startups:
        for name, cost in costs.items():
            startup_cost[name] += cost
    started = set(startup_cost)
    startup_only = sorted(started - set(request_share), key=lambda n: (-startup_cost[n], n))
    by_request = sorted(request_share, key=lambda n: (-request_share[n], n))
    both = [n for n in by_request if n in started]
    request_only = [n for n in by_request if n not in started]
    lines, seen = [], set()
    for names in (startup_only, both, request_only):
        for name in names:
            p = pattern(name)
            if p and p not in seen:
                seen.add(p)
                lines.append(p)
    header = (
        "/* @generated by bench/hot_text.py from callgrind profiles of the benchmark servers:\n"
        "   run it again after a dependency update (`--check` says whether it is due).\n"
        "\n"
        "   The functions a generated server runs: those only its start-up runs, then those\n"
        "   both start-up and requests run, then those only requests run (each by cost). A\n"
        "   generated server's build.rs INCLUDEs them at the head of its `.text` (release\n"
        "   builds linked by rust-lld on x86_64 Linux). Why, and what it measures: svc's\n"
        "   docs/performance.md, \"Hot text\"; when it applies: docs/codegen.md. */\n"
    )
    return header + "\n".join(lines) + "\n"


def take_profiles():
    """[(start-up costs, request costs)] of each benchmark server, kept for --reuse."""
    svc, bins = typescript.build_servers()
    bins["rust nodes, profile-guided"] = profile_guided_build(svc)
    work = tempfile.mkdtemp(prefix="svc-hot-text-")
    try:
        store = os.path.join(work, "workspace.db")
        key = loadbench.create_key(svc, store)
        profiles = [profile(binary, store, key, work) for binary in bins.values()]
        # The TypeScript nodes compile to Rust; the engine runs the nodes that do not (and
        # the calls the compiled code leaves to it): its code is profiled too.
        profiles.append(profile(bins["typescript nodes"], store, key, work, {"SVC_TYPESCRIPT": "engine"}))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    with open(PROFILES, "w") as f:
        json.dump(profiles, f)
    return profiles


def profile_guided_build(svc):
    """`svc build bench/project --pgo`: LLVM inlines by the profile there, so a
    profile-guided server calls functions a release build inlines (hyper's request parser,
    the error answers, the store's start-up), which would otherwise each keep a 64 KiB
    window of the binary resident."""
    binary = os.path.join(TARGET, "hot-text", "benchshop-pgo")
    typescript.sh(svc, "build", loadbench.PROJECT, "--pgo", "-o", binary,
                  env=dict(os.environ, CARGO_TARGET_DIR=TARGET))
    return binary


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reuse", action="store_true", help=f"use the profiles the last run kept ({PROFILES})")
    ap.add_argument("--check", action="store_true", help="exit 1 if the committed script places under 95 %% of the functions run")
    args = ap.parse_args()
    for tool in () if args.reuse else ("valgrind", "callgrind_control"):
        if not shutil.which(tool):
            sys.exit(f"{tool} is needed (apt install valgrind)")
    if args.reuse:
        with open(PROFILES) as f:
            profiles = json.load(f)
    else:
        profiles = take_profiles()
    if args.check:
        check([name for s, r in profiles for name in list(s) + list(r)])
        return
    text = script([s for s, _ in profiles], [r for _, r in profiles])
    with open(SCRIPT, "w") as f:
        f.write(text)
    print(f"wrote {SCRIPT}: {text.count('*(')} section patterns")


def check(names):
    """Exits 1 unless the committed script places 95 % of the functions named."""
    with open(SCRIPT) as f:
        globs = re.findall(r"(\.text\.[^\s)]+)", f.read())
    # fnmatch's `[` is a class, the linker's too; neither occurs in mangled names.
    plain = {g for g in globs if "*" not in g}
    wild = [g for g in globs if "*" in g]
    wanted = sorted({n for n in names if pattern(n)})
    placed = [n for n in wanted
              if f".text.{n}" in plain or any(fnmatch.fnmatchcase(f".text.{n}", g) for g in wild)]
    share = len(placed) / len(wanted)
    print(f"{SCRIPT} places {len(placed)} of the {len(wanted)} functions the servers ran ({share:.1%})")
    if share < 0.95:
        sys.exit("out of date: run python3 bench/hot_text.py")


if __name__ == "__main__":
    main()
