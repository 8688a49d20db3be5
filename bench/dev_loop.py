#!/usr/bin/env python3
"""Edit to served: how long `svc dev` takes to serve a change after the file is saved.

    python3 bench/dev_loop.py [--svc target/debug/svc] [--rounds 6]

On `svc init`'s projects, as a new user tries it: the Rust project and the TypeScript
one (`--lang ts`), each under `svc dev` with nothing else running. For each kind of edit,
`--rounds` saves alternating between two values; each is timed from the write of the file
to the new server's first answer on /healthz (the dev server prints `listening on` when it
starts). The first build and one warm-up edit of each kind are not counted.

Edits: a rate limit's number in the flow (flow-only), the greeting's first word in the
Rust node (`src/nodes/greet.rs`) and in the TypeScript node (`src/nodes/greet.ts`).
Targets (issue 41): flow-only and TypeScript-only ≤ 1 s, a Rust node ≤ 2 s.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from load import free_port  # noqa: E402


class Dev:
    """`svc dev` on a project, its output collected in a file."""

    def __init__(self, svc, project):
        self.port = free_port()
        self.log_path = os.path.join(project, "..", os.path.basename(project) + ".dev.log")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [svc, "dev", "--port", str(self.port), "--no-builder"],
            cwd=project, stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.PIPE)
        self.wait_for_starts(1, timeout=900)

    def starts(self):
        with open(self.log_path) as f:
            return f.read().count("listening on http")

    def wait_for_starts(self, n, timeout=60):
        deadline = time.time() + timeout
        while self.starts() < n:
            if time.time() > deadline or self.proc.poll() is not None:
                sys.exit(f"svc dev did not serve (see {self.log_path})")
            time.sleep(0.005)
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=1).read()
                return
            except OSError:
                if time.time() > deadline:
                    sys.exit(f"the dev server did not answer (see {self.log_path})")
                time.sleep(0.005)

    def timed_edit(self, path, values, round_):
        """Writes `path` with the value of this round in place of the other; seconds to
        the new server's first answer."""
        old, new = (values if round_ % 2 == 0 else values[::-1])
        with open(path) as f:
            text = f.read()
        assert old in text, f"{old!r} is not in {path}"
        before = self.starts()
        started = time.time()
        with open(path, "w") as f:
            f.write(text.replace(old, new, 1))
        self.wait_for_starts(before + 1)
        return time.time() - started

    def stop(self):
        self.proc.stdin.close()
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.close()


def measure(dev, name, path, values, rounds):
    dev.timed_edit(path, values, 0)  # warm-up: the first of a kind may run cargo
    times = [dev.timed_edit(path, values, i) for i in range(1, rounds + 1)]
    print(f"{name:<28} median {statistics.median(times):.2f} s   max {max(times):.2f} s   "
          f"({' '.join(f'{t:.2f}' for t in times)})", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--svc", default=os.path.join(REPO, "target", "debug", "svc"))
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    svc = os.path.abspath(args.svc)
    with tempfile.TemporaryDirectory(prefix="svc-dev-loop-") as work:
        for lang, node, first_word in [("rust", "src/nodes/greet.rs", 'format!("Hello'),
                                       ("ts", "src/nodes/greet.ts", "`Hello")]:
            project = os.path.join(work, f"app{lang}")
            subprocess.run([svc, "init", project, "--lang", lang], check=True, capture_output=True)
            flow = os.path.join(project, "flows", "greeting.yaml")
            with open(flow) as f:
                limit = re.search(r"\n    limit: (\d+)\n", f.read()).group(1)
            dev = Dev(svc, project)
            try:
                print(f"svc init --lang {lang}:")
                measure(dev, "  a rate limit (flow only)", flow,
                        (f"limit: {limit}\n", f"limit: {int(limit) - 1}\n"), args.rounds)
                kind = "a Rust node" if lang == "rust" else "a TypeScript node"
                measure(dev, f"  {kind}", os.path.join(project, node),
                        (first_word, first_word.replace("Hello", "Howdy")), args.rounds)
            finally:
                dev.stop()


if __name__ == "__main__":
    main()
