#!/usr/bin/env python3
"""`svc check` on single flows large in one direction, at three sizes each.

    cargo build --release -p svc -p svc-bench && python3 bench/check_large.py

For each shape (a Return JSON body with N literal keys, an array of N items, N wires
into one Return JSON, a chain of N nodes) and N in 10k, 40k, 160k (5k, 20k, 80k nodes): the file size and the
median wall time of 5 runs of `svc check` (process start included). Linear growth shows
as a constant time per element across sizes.
"""
import statistics, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SVC = ROOT / "target/release/svc"
SYNTH = ROOT / "target/release/synth-project"

def main():
    print(f"| Shape | N | File | Median of 5 | Per 1,000 elements |")
    print(f"|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for shape in ["keys", "array", "wires", "nodes"]:
            # A chain node is about 11 YAML nodes: 80,000 stays under the loader's limit of
            # 1,000,000 YAML nodes per file.
            for n in ([5_000, 20_000, 80_000] if shape == "nodes" else [10_000, 40_000, 160_000]):
                d = Path(tmp) / f"{shape}{n}"
                size = int(subprocess.run([SYNTH, d, "--large", shape, str(n)], check=True,
                                          capture_output=True, text=True).stdout)
                runs = []
                for _ in range(5):
                    start = time.perf_counter()
                    subprocess.run([SVC, "check", d], check=True, capture_output=True)
                    runs.append(time.perf_counter() - start)
                med = statistics.median(runs)
                print(f"| {shape} | {n:,} | {size / 1e6:.1f} MB | {med * 1000:.0f} ms | {med * 1e6 / n:.2f} ms |")
                sys.stdout.flush()

if __name__ == "__main__":
    main()
