#!/usr/bin/env bash
# Issue 15: the memory a stored reading costs, the engine against redis-server, for the
# commands RedisStore sends for `coredata --bench AddReading` (src/store/redis.rs
# `push_add_reading`): SET <id> <msgpack record>, then ZADD into `reading` (score 0),
# `reading:created`, `reading:device:device<i/100>` and `reading:name:test<i>` (score: created).
# Ids are ObjectId hex as the store makes them (one second, one process: a shared 18-digit
# head, then a counter); created advances 1 ms every 300 readings (AddReading's ~3 µs/op).
#
# Also one sorted set of N such members alone (ZADD zs <created> <id>), for the bytes per
# member of a large (skiplist-encoded) set.
#
# Each file is loaded into a spawned redis-server (used_memory after minus before, FLUSHALL
# between files), into an in-process engine under a counting allocator
# (crates/edgebench-engine/benches/load_heap.rs: bytes asked for, as edgebench's counting
# allocator counts, and glibc's usable bytes), and into a spawned `edgebench serve` (VmRSS
# growth, mimalloc: what the process really holds).
#
#   scripts/reading-memory.sh [READINGS] [MEMBERS...]     (defaults 100000, and 100000 1000000)
set -euo pipefail
cd "$(dirname "$0")/.."
readings=${1:-100000}
shift || true
members=("${@:-100000 1000000}")
# shellcheck disable=SC2206
members=(${members[*]})
if [ -z "${NO_BUILD:-}" ]; then
  cargo build --release --quiet --bin edgebench
  cargo bench -p edgebench-engine --bench load_heap --no-run --quiet 2>/dev/null
fi
heap_bin=${HEAP_BIN:-}
[ -n "$heap_bin" ] || heap_bin=$(cargo bench -p edgebench-engine --bench load_heap --no-run --message-format=json 2>/dev/null |
  python3 -c 'import sys, json
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "load_heap" and m.get("executable"):
        print(m["executable"])')
bin=${EDGEBENCH:-${CARGO_TARGET_DIR:-target}/release/edgebench}
dir=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$dir"' EXIT

python3 - "$dir" "$readings" "${members[@]}" <<'PY'
import sys
out_dir, readings, members = sys.argv[1], int(sys.argv[2]), [int(m) for m in sys.argv[3:]]
HEAD = "6750a1b2" + "3f9c1e04d2"  # seconds + machine/pid: shared by one second's ids
BASE_MS = 1733140000000

def resp(args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out

def mp_str(s):
    b = s.encode()
    assert len(b) < 32 or len(b) < 256
    return (bytes([0xA0 | len(b)]) if len(b) < 32 else bytes([0xD9, len(b)])) + b

def mp_int(n):
    if 0 <= n < 128:
        return bytes([n])
    return b"\xcf" + n.to_bytes(8, "big")

def record(rid, created, device, name):
    # rmp_serde::encode::write_named of layout::RedisReading, field order as declared.
    fields = [("id", mp_str(rid)), ("pushed", mp_int(0)), ("created", mp_int(created)),
              ("origin", mp_int(0)), ("modified", mp_int(0)), ("device", mp_str(device)),
              ("name", mp_str(name)), ("value", mp_str(""))]
    return bytes([0x80 | len(fields)]) + b"".join(mp_str(k) + v for k, v in fields)

def oid(i):
    return "%s%06x" % (HEAD, i)

with open(f"{out_dir}/readings.resp", "wb") as f:
    for i in range(readings):
        rid, created = oid(i), BASE_MS + i // 300
        device, name = "device%d" % (i // 100), "test%d" % i
        f.write(resp([b"SET", rid, record(rid, created, device, name)]))
        f.write(resp([b"ZADD", b"reading", 0, rid]))
        f.write(resp([b"ZADD", b"reading:created", created, rid]))
        f.write(resp([b"ZADD", b"reading:device:" + device.encode(), created, rid]))
        f.write(resp([b"ZADD", b"reading:name:" + name.encode(), created, rid]))
for n in members:
    with open(f"{out_dir}/zset{n}.resp", "wb") as f:
        for i in range(n):
            f.write(resp([b"ZADD", b"zs", BASE_MS + i // 300, oid(i)]))
PY

rss() { awk '/^VmRSS:/ {print $2 * 1024}' "/proc/$1/status"; }
redis-server --port 0 --unixsocket "$dir/redis.sock" --save "" --appendonly no --dir "$dir" \
  --logfile "$dir/redis.log" & pids+=($!)
for _ in $(seq 100); do redis-cli -s "$dir/redis.sock" ping >/dev/null 2>&1 && break; sleep 0.05; done
used() { redis-cli -s "$dir/redis.sock" info memory | tr -d '\r' | awk -F: '$1=="used_memory" {print $2}'; }

echo "| data | units | redis used_memory /unit | engine asked /unit | engine usable /unit | serve RSS /unit |"
echo "|-|-|-|-|-|-|"
row() { # name file units
  local name=$1 file=$2 units=$3
  redis-cli -s "$dir/redis.sock" flushall >/dev/null
  local u0 u1; u0=$(used)
  redis-cli -s "$dir/redis.sock" --pipe <"$file" >/dev/null
  u1=$(used)
  local heap; heap=$("$heap_bin" "$file" "$units")
  "$bin" serve --port 0 --unixsocket "$dir/edgebench.sock" 2>"$dir/serve.log" & local epid=$!
  for _ in $(seq 100); do redis-cli -s "$dir/edgebench.sock" ping >/dev/null 2>&1 && break; sleep 0.05; done
  local e0 e1; e0=$(rss "$epid")
  redis-cli -s "$dir/edgebench.sock" --pipe <"$file" >/dev/null
  sleep 0.5
  e1=$(rss "$epid")
  kill "$epid"; wait "$epid" 2>/dev/null || true
  python3 - "$name" "$units" "$u0" "$u1" "$e0" "$e1" "$heap" <<'PY'
import sys
name, units, u0, u1, e0, e1, heap = sys.argv[1], *map(int, sys.argv[2:7]), sys.argv[7]
h = dict(kv.split("=") for kv in heap.split())
print(f"| {name} | {units:,} | {(u1 - u0) / units:.1f} B | {float(h['asked_per_unit']):.1f} B "
      f"| {float(h['usable_per_unit']):.1f} B | {(e1 - e0) / units:.1f} B |")
PY
}
row "readings (SET + 4 ZADD)" "$dir/readings.resp" "$readings"
for n in "${members[@]}"; do row "one zset, ObjectId members" "$dir/zset$n.resp" "$n"; done
