#!/usr/bin/env bash
# CPU per request of several builds of the benchmarked route, interleaved round by round:
# for comparing two builds of one server (a profile, a compiler flag) in one run.
#
#   bash bench/ab.sh STORE KEY ROUNDS NAME=BINARY [NAME=BINARY ...]
#
# A BINARY whose name ends in `benchshop` runs as `BINARY serve`, any other as the
# independent baseline (`BINARY --port P --store S`). Every server gets one worker thread
# and CPU 0; wrk runs on CPU 1 (64 connections, 3 s, POST /acme/shop/orders). Make a store
# and key with `svc keys create --store STORE`.
set -euo pipefail
store=$1 key=$2 rounds=$3
shift 3
script=$(mktemp --suffix=.lua)
trap 'rm -f "$script"; kill ${pids[*]:-} 2>/dev/null || true' EXIT
cat > "$script" <<LUA
wrk.method = "POST"
wrk.body = [[{"customerEmail":"ada@example.com","currency":"EUR","couponCode":"WELCOME10","lines":[{"sku":"A1","quantity":2,"unitPrice":10.0,"tags":["new"]},{"sku":"B2","quantity":1,"unitPrice":5.5}]}]]
wrk.headers["content-type"] = "application/json"
wrk.headers["origin"] = "https://eu.shop.example.com"
wrk.headers["x-api-key"] = "$key"
LUA
names=() pids=() ports=()
port=18400
for spec in "$@"; do
  name=${spec%%=*} bin=${spec#*=}
  port=$((port + 1))
  if [[ $bin == *benchshop ]]; then args=(serve --port "$port" --store "$store"); else args=(--port "$port" --store "$store"); fi
  env -u SVC_LOG TOKIO_WORKER_THREADS=1 taskset -c 0 "$bin" "${args[@]}" > /dev/null 2>&1 &
  names+=("$name") pids+=($!) ports+=("$port")
done
sleep 0.5
for round in $(seq "$rounds"); do
  for i in "${!names[@]}"; do
    before=$(awk '{print $14 + $15}' "/proc/${pids[$i]}/stat")
    n=$(taskset -c 1 wrk -t1 -c64 -d3s -s "$script" "http://127.0.0.1:${ports[$i]}/acme/shop/orders" | awk '/requests in/ {print $1}')
    after=$(awk '{print $14 + $15}' "/proc/${pids[$i]}/stat")
    ticks=$(getconf CLK_TCK)
    echo "round $round  ${names[$i]}: $n requests, $(python3 -c "print(f'{($after - $before) / $ticks / $n * 1e6:.2f}')") us CPU per request"
  done
done
