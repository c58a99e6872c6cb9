#!/usr/bin/env bash
# docs/PERFORMANCE.md: edgebench kv against redis-benchmark, side by side in one run, against
# the same private redis-server: 1:1 SET/GET, 500-byte values, 50 connections, one client
# thread, at -P 1 and -P 16. Prints ops/s and the client's CPU time (user + system) per op.
#
#   scripts/kv-vs-redis-benchmark.sh [REQUESTS]     (default 1000000: SETs + GETs in all)
#   REPEAT=7 PIPELINES=16 scripts/kv-vs-redis-benchmark.sh   (repetitions, alternating which
#   client runs first, with medians and the median of the per-repetition ratios)
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
repeat=${REPEAT:-1}               # repetitions, alternating which client goes first
pipelines=${PIPELINES:-"1 16"}
rows=$dir/rows
: >"$rows"
run_rb() {
  redis-cli -p "$port" flushall >/dev/null
  res=$(cpu redis-benchmark -h 127.0.0.1 -p "$port" -t set,get -c 50 -P "$1" -d 500 -n "$per_test" --csv)
  read -r c w <<<"$(echo "$res" | head -1)"
  set_rps=$(echo "$res" | awk -F'"' '$2=="SET" {print $4}')
  get_rps=$(echo "$res" | awk -F'"' '$2=="GET" {print $4}')
  # Both tests together: 2n requests over the time the two took (n/SET rps + n/GET rps).
  ops=$(python3 -c "print(f'{2/(1/$set_rps+1/$get_rps):.2f}')")
  echo "redis-benchmark $1 $2 $ops $c $(python3 -c "print(f'{$c/(2*$per_test)*1e6:.2f}')")" >>"$rows"
}
run_kv() {
  redis-cli -p "$port" flushall >/dev/null
  res=$(cpu ./target/release/edgebench kv -s 127.0.0.1 -p "$port" -c 50 -t 1 --pipeline "$1" -d 500 --ratio 1:1 -n "$per_client" --hide-histogram)
  read -r c w <<<"$(echo "$res" | head -1)"
  ops=$(echo "$res" | awk '$1=="Totals" {print $2}')
  echo "edgebench_kv $1 $2 $ops $c $(python3 -c "print(f'{$c/(50*$per_client)*1e6:.2f}')")" >>"$rows"
}
for r in $(seq "$repeat"); do
  for p in $pipelines; do
    if [ $((r % 2)) -eq 1 ]; then run_rb "$p" "$r"; run_kv "$p" "$r"; else run_kv "$p" "$r"; run_rb "$p" "$r"; fi
  done
done
# Every run, then (with REPEAT > 1) the medians and the median of the per-repetition ratios.
python3 - "$rows" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
print("| client | pipeline | run | ops/s (SET+GET) | client CPU s | CPU µs/op |\n|-|-|-|-|-|-|")
for c, p, r, ops, cpu, per in rows:
    print(f"| {c.replace('_', ' ')} | {p} | {r} | {ops} | {cpu} | {per} |")
runs = {(c, p, r): (float(ops), float(per)) for c, p, r, ops, _, per in rows}
reps = sorted({r for _, _, r, *_ in rows}, key=int)
if len(reps) > 1:
    print("\n| pipeline | runs | kv ops/s, median | redis-benchmark ops/s, median | kv/rb ops/s: median (min–max) | kv/rb CPU per op: median (min–max) |\n|-|-|-|-|-|-|")
    for p in sorted({p for _, p, *_ in rows}, key=int):
        kv = [runs[("edgebench_kv", p, r)] for r in reps]
        rb = [runs[("redis-benchmark", p, r)] for r in reps]
        ops = [a[0] / b[0] for a, b in zip(kv, rb)]
        cpu = [a[1] / b[1] for a, b in zip(kv, rb)]
        print(f"| {p} | {len(reps)} | {statistics.median(a[0] for a in kv):,.0f} | "
              f"{statistics.median(b[0] for b in rb):,.0f} | {statistics.median(ops):.2f}x "
              f"({min(ops):.2f}–{max(ops):.2f}) | {statistics.median(cpu):.2f}x ({min(cpu):.2f}–{max(cpu):.2f}) |")
PY
