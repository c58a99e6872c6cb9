#!/usr/bin/env bash
# docs/PERFORMANCE.md: edgebench kv against redis-benchmark, side by side in one run, against
# the same private redis-server: 1:1 SET/GET, 500-byte values, 50 connections, one client
# thread, at -P 1 and -P 16. Prints ops/s and the client's CPU time (user + system) per op.
#
#   scripts/kv-vs-redis-benchmark.sh [REQUESTS]     (default 1000000: SETs + GETs in all)
set -euo pipefail
cd "$(dirname "$0")/.."
total=${1:-1000000}
cargo build --release --quiet
dir=$(mktemp -d)
trap 'redis-cli -s "$dir/r.sock" shutdown nosave >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
redis-server --port 0 --unixsocket "$dir/r.sock" --save "" --appendonly no --dir "$dir" \
  --daemonize yes --logfile "$dir/log" --pidfile "$dir/pid"
for _ in $(seq 50); do redis-cli -s "$dir/r.sock" ping >/dev/null 2>&1 && break; sleep 0.1; done
# TCP on a free port, set after start so the socket can be used to configure it.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-cli -s "$dir/r.sock" config set port "$port" >/dev/null
per_test=$((total / 2))          # redis-benchmark -n counts each test (SET, then GET)
per_client=$((total / 50))       # edgebench kv -n counts per connection
cpu() { python3 - "$@" <<'PY'
import resource, subprocess, sys, time
t = time.time()
out = subprocess.run(sys.argv[1:], capture_output=True, text=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{r.ru_utime + r.ru_stime:.3f} {time.time() - t:.3f}")
sys.stdout.write(out.stdout)
PY
}
printf '| client | pipeline | ops/s (SET+GET) | client CPU s | CPU µs/op |\n|-|-|-|-|-|\n'
for p in 1 16; do
  redis-cli -p "$port" flushall >/dev/null
  res=$(cpu redis-benchmark -h 127.0.0.1 -p "$port" -t set,get -c 50 -P "$p" -d 500 -n "$per_test" --csv)
  read -r c w <<<"$(echo "$res" | head -1)"
  set_rps=$(echo "$res" | awk -F'"' '$2=="SET" {print $4}')
  get_rps=$(echo "$res" | awk -F'"' '$2=="GET" {print $4}')
  # Both tests together: 2n requests over the time the two took (n/SET rps + n/GET rps).
  ops=$(python3 -c "print(f'{2/(1/$set_rps+1/$get_rps):.2f}')")
  echo "| redis-benchmark | $p | $ops | $c | $(python3 -c "print(f'{$c/(2*$per_test)*1e6:.2f}')") |"
  redis-cli -p "$port" flushall >/dev/null
  res=$(cpu ./target/release/edgebench kv -s 127.0.0.1 -p "$port" -c 50 -t 1 --pipeline "$p" -d 500 --ratio 1:1 -n "$per_client" --hide-histogram)
  read -r c w <<<"$(echo "$res" | head -1)"
  ops=$(echo "$res" | awk '$1=="Totals" {print $2}')
  echo "| edgebench kv | $p | $ops | $c | $(python3 -c "print(f'{$c/(50*$per_client)*1e6:.2f}')") |"
done
