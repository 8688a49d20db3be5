#!/usr/bin/env bash
# Time to a first answer for a newcomer (issue 14, point 6), as docs/performance.md
# reports it: a fresh clone of this repository, the README's main command, and the time
# until the shop answers; then a second project (`svc init` + `svc build`) with the same
# svc, reusing what the first build compiled.
#
#   bench/newcomer.sh [REPO=the repository this script is in]
#
# The cargo registry (~/.cargo/registry) is whatever the machine has: a machine that has
# never downloaded the crates adds that download once. svc's source cache is fresh.
set -euo pipefail
repo="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
work=$(mktemp -d)
shop_pid=""
trap '[ -n "$shop_pid" ] && kill "$shop_pid" 2>/dev/null; rm -rf "$work"' EXIT
export SVC_CACHE_DIR="$work/cache"
unset CARGO_TARGET_DIR

start=$(date +%s.%N)
git clone -q "$repo" "$work/main"
cd "$work/main"
cargo run -q -p svc -- build examples/shop > "$work/build.log" 2>&1
built=$(date +%s.%N)
examples/shop/dist/shop serve --port 0 > "$work/serve.log" 2>&1 &
shop_pid=$!
until grep -q "listening on" "$work/serve.log"; do sleep 0.01; done
url=$(sed -n 's/^listening on //p' "$work/serve.log")
until curl -sf "$url/healthz" > /dev/null; do sleep 0.01; done
answered=$(date +%s.%N)

second=$(date +%s.%N)
./target/debug/svc init "$work/second" > /dev/null 2>&1
./target/debug/svc build "$work/second" > "$work/second.log" 2>&1
done_second=$(date +%s.%N)

echo "clone to built shop:        $(echo "$built - $start" | bc) s"
echo "clone to first answer:      $(echo "$answered - $start" | bc) s"
echo "   $(grep Finished "$work/build.log")"
echo "second project init+build:  $(echo "$done_second - $second" | bc) s"
echo "   $(grep Finished "$work/second.log")"
