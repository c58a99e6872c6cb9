#!/usr/bin/env bash
# docs/PERFORMANCE.md: two edgebench builds, A and B, on a spawned Redis Cluster of three
# primaries, interleaved: each repetition runs A then B on the counts and the spanning reads,
# in both Redis layouts. Prints, per benchmark, each build's median and the median of the
# per-repetition ratios B / A. Used to time the cluster connection's scattered pipelines
# against a build that sends and reads one primary's part at a time.
#
#   scripts/cluster-ab.sh A_BINARY B_BINARY [REPEAT]     (REPEAT default 5)
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 A_BINARY B_BINARY [REPEAT]" >&2; exit 2; }
a=$(realpath "$1"); b=$(realpath "$2"); repeat=${3:-5}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for layout in 2018 edgex3; do
  for i in $(seq "$repeat"); do
    for v in A B; do
      bin=$a; [ "$v" = B ] && bin=$b
      echo "$layout repetition $i of $repeat: $v" >&2
      (cd "$dir" && "$bin" coredata --target Cluster=redis-cluster --cluster-shards 3 \
        --cluster-replicas 0 --layout "$layout" --bench 'EventCount|ReadingCount|Readings$|Events$' \
        --benchtime 1s --format csv --out "$dir/$layout-$v-$i" >/dev/null)
    done
  done
done
python3 - "$dir" "$repeat" <<'PY'
import csv, statistics, sys
from collections import defaultdict
root, repeat = sys.argv[1], int(sys.argv[2])
for layout in ("2018", "edgex3"):
    ratio = defaultdict(list)
    times = defaultdict(lambda: defaultdict(list))
    for i in range(1, repeat + 1):
        got = {}
        for v in ("A", "B"):
            with open(f"{root}/{layout}-{v}-{i}/results.csv") as f:
                for row in csv.DictReader(f):
                    got[(row["benchmark"], v)] = float(row["ns_per_op"])
                    times[row["benchmark"]][v].append(float(row["ns_per_op"]))
        for (bench, v), ns in got.items():
            if v == "B":
                ratio[bench].append(ns / got[(bench, "A")])
    print(f"layout {layout}")
    print("| Benchmark | A (µs/op, median) | B (µs/op, median) | B / A |")
    print("|-|-|-|-|")
    for bench in sorted(ratio):
        print(f"| {bench} | {statistics.median(times[bench]['A']) / 1000:,.1f} | "
              f"{statistics.median(times[bench]['B']) / 1000:,.1f} | {statistics.median(ratio[bench]):.2f} |")
PY
