#!/usr/bin/env bash
# The slower fuzz mode (docs/fuzzing.md): fuzz the `emit` target, keeping every project
# the checker accepts, then build a sample of them with `svc build`. A project svc check
# accepts must build; any that does not is printed with its build log, and the script
# exits 1. CI does not run this (it takes minutes per sampled project batch).
#
#   scripts/fuzz-build.sh [FUZZ_SECONDS=300] [SAMPLE=20]
set -euo pipefail
cd "$(dirname "$0")/.."
fuzz_seconds="${1:-300}"
sample="${2:-20}"
accepted="$PWD/target/fuzz-accepted"
rm -rf "$accepted"
mkdir -p "$accepted" compiler/fuzz/corpus/emit
cp compiler/fuzz/seeds/* compiler/fuzz/corpus/emit/

if rustup run nightly rustc --version >/dev/null 2>&1; then toolchain=(+nightly); else toolchain=(); export RUSTC_BOOTSTRAP=1; fi
(cd compiler/fuzz && SVC_FUZZ_ACCEPTED="$accepted" cargo "${toolchain[@]}" fuzz run emit corpus/emit -- \
    -max_total_time="$fuzz_seconds" -max_len=8192)

cargo build --quiet -p svc
mapfile -t projects < <(find "$accepted" -mindepth 1 -maxdepth 1 -type d | shuf -n "$sample")
echo "${#projects[@]} of $(find "$accepted" -mindepth 1 -maxdepth 1 -type d | wc -l) accepted projects sampled"
# The fuzz input has no dependency section: the node crate gets its SDK, and the crates the
# examples' nodes use (the seeds are the examples).
example_deps=$(awk '/^\[dependencies\]/{d=1;next} /^\[/{d=0} d && /=/ && !/svc-sdk/' examples/*/Cargo.toml | sort -u)
failed=0
for dir in "${projects[@]}"; do
    printf '\n[dependencies]\nsvc-sdk = { path = ".svc/source/runtime/sdk" }\n%s\n\n[workspace]\n' "$example_deps" >> "$dir/Cargo.toml"
    if target/debug/svc build "$dir" > "$dir/build.log" 2>&1; then
        echo "ok      $dir"
    else
        echo "FAILED  $dir (log: $dir/build.log)"
        tail -30 "$dir/build.log"
        failed=$((failed + 1))
    fi
done
if [ "$failed" -gt 0 ]; then
    echo "$failed accepted project(s) did not build"
    exit 1
fi
echo "every sampled accepted project built"
