#!/usr/bin/env bash
# Three instances of the shop example behind nginx, sharing one Redis (rate limits) and
# one PostgreSQL (keys, sealed secrets), all on loopback, in a temporary directory.
# It checks, through the balancer, that a limit is shared (20 exports an hour per
# customer: exactly 20 of 25 pass) and that a revoked key is refused by every instance
# within 2 seconds; then it stops everything it started, by PID. docs/deploy.md walks
# through it; compiler/tests/cli_deploy.rs runs it.
#
#   scripts/cluster-demo.sh                  # builds svc and the shop server first
#   SVC=path/to/svc SHOP=path/to/shop scripts/cluster-demo.sh
#   KEEP=1 scripts/cluster-demo.sh           # leave it running; Ctrl-C stops it
#
# Needs redis-server, nginx and PostgreSQL's initdb/pg_ctl (Debian: redis-server,
# nginx-light, postgresql).
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '==> %s\n' "$*"; }
fail() { printf 'FAILED: %s\n' "$*" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

for program in redis-server nginx python3 curl; do
    command -v "$program" >/dev/null || fail "$program is not installed"
done
pg_bin=$(dirname "$(readlink -f "$(command -v initdb || ls /usr/lib/postgresql/*/bin/initdb | tail -1)")")
[ -x "$pg_bin/pg_ctl" ] || fail "PostgreSQL's initdb and pg_ctl are not installed (apt-get install postgresql)"

if [ -z "${SVC:-}" ] || [ -z "${SHOP:-}" ]; then
    say "building svc and the shop server"
    cargo build -q -p svc
    SVC=${SVC:-$PWD/target/debug/svc}
    "$SVC" build examples/shop >/dev/null
    SHOP=${SHOP:-$PWD/examples/shop/dist/shop}
fi

work=$(mktemp -d /tmp/svc-cluster.XXXXXX)
chmod 711 "$work"   # PostgreSQL, run as its own user, must reach its directory
pids=()
pg_as=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    if [ -f "$work/pg/data/postmaster.pid" ]; then
        kill -INT "$(head -1 "$work/pg/data/postmaster.pid")" 2>/dev/null || true
        for _ in $(seq 100); do [ -f "$work/pg/data/postmaster.pid" ] || break; sleep 0.1; done
    fi
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say "Redis"
redis_port=$(free_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" >"$work/redis.log" 2>&1 &
pids+=($!)

say "PostgreSQL"
mkdir -p "$work/pg"
if [ "$(id -u)" = 0 ]; then
    chown -R postgres "$work/pg"   # PostgreSQL refuses to run as root
    pg_as=(runuser -u postgres --)
fi
pg_port=$(free_port)
"${pg_as[@]}" "$pg_bin/initdb" -D "$work/pg/data" -U svc --auth=trust --no-sync -E UTF8 --locale=C >"$work/initdb.log"
"${pg_as[@]}" "$pg_bin/pg_ctl" -D "$work/pg/data" -l "$work/pg/server.log" -w \
    -o "-p $pg_port -c listen_addresses=127.0.0.1 -k $work/pg -c fsync=off" start >/dev/null
"${pg_as[@]}" "$pg_bin/createdb" -h 127.0.0.1 -p "$pg_port" -U svc svc
export SVC_STORE="postgres://svc@127.0.0.1:$pg_port/svc"

say "one secrets key for every instance and for svc"
"$SVC" secrets keygen >"$work/secrets.key"
chmod 600 "$work/secrets.key"
export SVC_SECRETS_KEY_FILE="$work/secrets.key"
export SVC_RATE_LIMIT_STORE="redis://127.0.0.1:$redis_port"
export SVC_TRUSTED_PROXIES=127.0.0.1
export SVC_LOG=warn

say "three instances"
ports=()
for i in 1 2 3; do
    port=$(free_port)
    ports+=("$port")
    "$SHOP" serve --port "$port" >"$work/shop-$i.out" 2>"$work/shop-$i.log" &
    pids+=($!)
done
for port in "${ports[@]}"; do
    for _ in $(seq 200); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.05; done
    curl -sf "http://127.0.0.1:$port/healthz" >/dev/null || fail "an instance did not start: $(cat "$work"/shop-*.log)"
done

say "nginx in front of them"
lb_port=$(free_port)
mkdir -p "$work/nginx"
cat >"$work/nginx/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path $work/nginx/body;
    proxy_temp_path $work/nginx/proxy;
    fastcgi_temp_path $work/nginx/fastcgi;
    uwsgi_temp_path $work/nginx/uwsgi;
    scgi_temp_path $work/nginx/scgi;
    upstream svc {
        server 127.0.0.1:${ports[0]};
        server 127.0.0.1:${ports[1]};
        server 127.0.0.1:${ports[2]};
        keepalive 16;
    }
    server {
        listen 127.0.0.1:$lb_port;
        location / {
            proxy_pass http://svc;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
            proxy_next_upstream error timeout;
        }
    }
}
EOF
nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" &
pids+=($!)
lb="http://127.0.0.1:$lb_port"
for _ in $(seq 100); do curl -sf "$lb/healthz" >/dev/null && break; sleep 0.05; done

say "a key, created in the shared store"
key=$("$SVC" keys create --name demo --owner ada)

say "the limit is shared: 25 exports through the balancer, 20 an hour allowed"
passed=0
limited=0
for _ in $(seq 25); do
    status=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$lb/acme/shop/exports" -H "x-api-key: $key")
    case "$status" in
        202) passed=$((passed + 1)) ;;
        429) limited=$((limited + 1)) ;;
        *) fail "unexpected status $status" ;;
    esac
done
echo "    $passed passed, $limited limited (three instances, one limit)"
[ "$passed" = 20 ] && [ "$limited" = 5 ] || fail "expected 20 passed and 5 limited"

say "a revocation reaches every instance"
"$SVC" keys revoke demo >/dev/null
start=$(date +%s%N)
refused=0
while [ "$refused" -lt 6 ]; do   # six 401s in a row: every instance, twice round
    status=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$lb/acme/shop/exports" -H "x-api-key: $key")
    if [ "$status" = 401 ]; then refused=$((refused + 1)); else refused=0; fi
    elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
    [ "$elapsed_ms" -lt 2000 ] || fail "the revoked key still worked after 2 s"
done
echo "    refused by all three within ${elapsed_ms} ms"

if grep -h "$key" "$work"/shop-*.log >/dev/null 2>&1; then fail "a key reached a log"; fi
say "cluster demo passed"
if [ -n "${KEEP:-}" ]; then
    echo "balancer: $lb   store: $SVC_STORE   redis: $SVC_RATE_LIMIT_STORE   (Ctrl-C stops everything)"
    wait
fi
