#!/usr/bin/env bash
# docs/PERFORMANCE.md: the memory 1,000,000 keys of 100-byte strings take, `edgebench serve`
# against `redis-server`, both spawned here and loaded with the same SETs by `redis-cli --pipe`.
# Prints each server's RSS after loading minus its RSS before (VmRSS from /proc, for both),
# redis-server's own used_memory_rss and used_memory, and the ratio.
#
#   scripts/keys-memory.sh [KEYS] [VALUE_BYTES]      (defaults 1000000 and 100)
set -euo pipefail
cd "$(dirname "$0")/.."
keys=${1:-1000000}
size=${2:-100}
[ -n "${NO_BUILD:-}" ] || cargo build --release --quiet --bin edgebench
dir=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$dir"' EXIT
python3 - "$keys" "$size" >"$dir/load.resp" <<'PY'
import sys
keys, size = int(sys.argv[1]), int(sys.argv[2])
out = sys.stdout.buffer
for i in range(keys):
    k = b"key:%012d" % i
    v = (b"%d:" % i).ljust(size, b"x")
    out.write(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, len(v), v))
PY
rss() { awk '/^VmRSS:/ {print $2 * 1024}' "/proc/$1/status"; }
redis-server --port 0 --unixsocket "$dir/redis.sock" --save "" --appendonly no --dir "$dir" \
  --logfile "$dir/redis.log" & pids+=($!); rpid=$!
./target/release/edgebench serve --port 0 --unixsocket "$dir/edgebench.sock" 2>"$dir/serve.log" & pids+=($!); epid=$!
for _ in $(seq 100); do
  redis-cli -s "$dir/redis.sock" ping >/dev/null 2>&1 && redis-cli -s "$dir/edgebench.sock" ping >/dev/null 2>&1 && break
  sleep 0.05
done
r0=$(rss "$rpid"); e0=$(rss "$epid")
redis-cli -s "$dir/redis.sock" --pipe <"$dir/load.resp" >/dev/null
redis-cli -s "$dir/edgebench.sock" --pipe <"$dir/load.resp" >/dev/null
sleep 1
r1=$(rss "$rpid"); e1=$(rss "$epid")
info() { redis-cli -s "$dir/redis.sock" info memory | tr -d '\r' | awk -F: -v k="$1" '$1==k {print $2}'; }
rdb=$(redis-cli -s "$dir/redis.sock" dbsize); edb=$(redis-cli -s "$dir/edgebench.sock" dbsize)
python3 - "$keys" "$size" "$r0" "$r1" "$e0" "$e1" "$(info used_memory_rss)" "$(info used_memory)" "$rdb" "$edb" <<'PY'
import sys
keys, size, r0, r1, e0, e1, rss, used, rdb, edb = map(int, sys.argv[1:])
mb = lambda b: f"{b / 2**20:,.1f} MiB"
print(f"{keys:,} keys of {size} bytes (DBSIZE: redis-server {rdb:,}, edgebench {edb:,})\n")
print("| server | RSS after | RSS growth | growth per key |\n|-|-|-|-|")
print(f"| redis-server | {mb(r1)} | {mb(r1 - r0)} | {(r1 - r0) / keys:.0f} B |")
print(f"| edgebench serve | {mb(e1)} | {mb(e1 - e0)} | {(e1 - e0) / keys:.0f} B |")
print(f"\nredis-server INFO: used_memory_rss {mb(rss)}, used_memory {mb(used)}")
print(f"edgebench RSS / redis-server used_memory_rss: {e1 / rss:.2f}x (target: at most 1.2x)")
PY
