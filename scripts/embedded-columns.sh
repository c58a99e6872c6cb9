#!/usr/bin/env bash
# docs/PERFORMANCE.md: issue 15's targets for the engine's in-process columns, as medians of
# interleaved repetitions. Each repetition is one `edgebench coredata` run of the ten
# benchmarks on the engine directly (Embedded_Direct), through its redis-rs connection
# (RedisDB_Embedded) and on a private redis-server over a Unix socket (RedisDB_UDS), so the
# three columns of one repetition share the machine's state; ratios are taken within a
# repetition, then their median over the repetitions.
#
#   scripts/embedded-columns.sh [REPEAT] [extra coredata flags...]     (REPEAT default 5)
#
# NO_BUILD=1 skips the release build.
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=${1:-5}
[ $# -gt 0 ] && shift
[ -n "${NO_BUILD:-}" ] || cargo build --release --quiet --bin edgebench
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for i in $(seq "$repeat"); do
  echo "repetition $i of $repeat" >&2
  ./target/release/edgebench coredata --target embedded-direct,embedded,redis-uds \
    --format csv --out "$dir/$i" "$@" >/dev/null
done
python3 - "$dir" "$repeat" <<'PY'
import csv, statistics, sys
from collections import defaultdict
root, repeat = sys.argv[1], int(sys.argv[2])
ns = defaultdict(lambda: defaultdict(list))   # benchmark -> target -> [ns/op per repetition]
for i in range(1, repeat + 1):
    with open(f"{root}/{i}/results.csv") as f:
        for row in csv.DictReader(f):
            ns[row["benchmark"]][row["target"]].append(float(row["ns_per_op"]))
def med(xs):
    return statistics.median(xs)
def ratios(b, num, den):
    return [n / d for n, d in zip(ns[b][num], ns[b][den])]
print("| benchmark | Embedded_Direct µs/op | RedisDB_Embedded µs/op | RedisDB_UDS µs/op "
      "| RedisDB_Embedded / Embedded_Direct (≤ 2) | RedisDB_UDS / RedisDB_Embedded |")
print("|-|-|-|-|-|-|")
for b in sorted(ns):
    d, e, u = (ns[b][t] for t in ("Embedded_Direct", "RedisDB_Embedded", "RedisDB_UDS"))
    r = ratios(b, "RedisDB_Embedded", "Embedded_Direct")
    s = ratios(b, "RedisDB_UDS", "RedisDB_Embedded")
    print(f"| {b} | {med(d)/1000:.3g} | {med(e)/1000:.3g} | {med(u)/1000:.3g} "
          f"| {med(r):.2f} ({min(r):.2f}–{max(r):.2f}) | {med(s):.1f} ({min(s):.1f}–{max(s):.1f}) |")
PY
