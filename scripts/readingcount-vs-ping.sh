#!/usr/bin/env bash
# The client-overhead check of docs/PERFORMANCE.md: ReadingCount (one ZCARD round trip through
# edgebench's Redis store) against redis-benchmark's PING round trip, on the same private
# redis-server, over TCP and over its Unix socket, in one run.
#
#   scripts/readingcount-vs-ping.sh [BENCHTIME]      (default 3s)
#
# Prints redis-benchmark's figures, edgebench's percentile table, and the ratios
# ReadingCount ns/op ÷ PING round trip (1e9 / PING_MBULK requests per second).
set -euo pipefail
cd "$(dirname "$0")/.."
benchtime=${1:-3s}
bin=target/release/edgebench
cargo build --release --quiet

dir=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$dir"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
sock=$dir/redis.sock
redis-server --port "$port" --bind 127.0.0.1 --unixsocket "$sock" --unixsocketperm 700 \
  --save "" --appendonly no --dir "$dir" --logfile "$dir/redis.log" &
pid=$!
for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done

rps() { # $1: redis-benchmark connection flags
  redis-benchmark $1 -c 1 -P 1 -n 100000 -t ping --csv | awk -F'"' '/PING_MBULK/ {print $4}'
}
tcp_rps=$(rps "-h 127.0.0.1 -p $port")
uds_rps=$(rps "-s $sock")
echo "redis-benchmark -c 1 -P 1 -n 100000 -t ping (PING_MBULK): TCP $tcp_rps req/s, UDS $uds_rps req/s"

$bin coredata --target "RedisDB_TCP=redis://127.0.0.1:$port,RedisDB_UDS=redis+unix://$sock" \
  --bench '^ReadingCount$' --benchtime "$benchtime" --format pct --out "$dir/out" 2>/dev/null
python3 - "$dir/out/results.json" "$tcp_rps" "$uds_rps" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))
ping = {"RedisDB_TCP": 1e9 / float(sys.argv[2]), "RedisDB_UDS": 1e9 / float(sys.argv[3])}
for t in res["targets"]:
    m = t["benchmarks"][0]["runs"][0]
    print(f"{t['name']}: ReadingCount {m['ns_per_op']:.0f} ns/op, PING round trip {ping[t['name']]:.0f} ns"
          f" -> ratio {m['ns_per_op'] / ping[t['name']]:.3f}")
PY
