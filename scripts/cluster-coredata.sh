#!/usr/bin/env bash
# docs/PERFORMANCE.md: what the core-data layout (2018's, or EdgeX 3.1's) costs on Redis Cluster against one
# redis-server, for the ten benchmarks, as medians of interleaved repetitions. Each
# repetition runs `edgebench coredata` twice, each time with a spawned single server
# (Single) and a spawned cluster without replicas in the same run: first of 1 primary (the
# partitioned layout and the cluster client, all on one node), then of 3 primaries (reads
# that span devices fan out to three nodes). Ratios are taken within a run, then their
# median over the repetitions.
#
#   scripts/cluster-coredata.sh [REPEAT] [extra coredata flags...]     (REPEAT default 3)
#
# `--layout edgex3` as an extra flag compares EdgeX 3.1's layout on one server with its
# cluster form instead (its columns are named Single_EdgeX3 and Cluster_EdgeX3).
#
# NO_BUILD=1 skips the release build.
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=${1:-3}
[ $# -gt 0 ] && shift
[ -n "${NO_BUILD:-}" ] || cargo build --release --quiet --bin edgebench
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for i in $(seq "$repeat"); do
  for shards in 1 3; do
    echo "repetition $i of $repeat: $shards primaries" >&2
    ./target/release/edgebench coredata --target Single=redis-tcp,Cluster=redis-cluster \
      --cluster-shards "$shards" --cluster-replicas 0 --format csv \
      --out "$dir/$shards-$i" "$@" >/dev/null
  done
done
python3 - "$dir" "$repeat" <<'PY'
import csv, statistics, sys
from collections import defaultdict
root, repeat = sys.argv[1], int(sys.argv[2])
def load(path):
    ns = defaultdict(dict)
    with open(path) as f:
        for row in csv.DictReader(f):
            ns[row["benchmark"]][row["target"].split("_")[0]] = float(row["ns_per_op"])
    return ns
single = defaultdict(list); ratio = {1: defaultdict(list), 3: defaultdict(list)}
for i in range(1, repeat + 1):
    for shards in (1, 3):
        ns = load(f"{root}/{shards}-{i}/results.csv")
        for bench, t in ns.items():
            if shards == 1:
                single[bench].append(t["Single"])
            ratio[shards][bench].append(t["Cluster"] / t["Single"])
print("| Benchmark | Single (µs/op, median) | Cluster of 1 / Single | Cluster of 3 / Single |")
print("|-|-|-|-|")
for bench in sorted(single):
    print(f"| {bench} | {statistics.median(single[bench]) / 1000:,.1f} | "
          f"{statistics.median(ratio[1][bench]):.2f} | {statistics.median(ratio[3][bench]):.2f} |")
PY
