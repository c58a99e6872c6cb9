#!/usr/bin/env bash
# docs/PERFORMANCE.md: `edgebench kv` against a single spawned redis-server and spawned Redis
# Clusters of 1, 3 and 6 primaries (no replicas), as medians of interleaved repetitions: each
# repetition runs every shape once, in turn, so they share the machine's state.
#
#   scripts/cluster-kv-scaling.sh [REPEAT] [extra kv flags...]      (REPEAT default 3)
#
# Default load: 2 threads x 4 connections, 5 s, memtier's 1:10 SET:GET. NO_BUILD=1 skips the
# release build.
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=${1:-3}
[ $# -gt 0 ] && shift
[ -n "${NO_BUILD:-}" ] || cargo build --release --quiet --bin edgebench
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
shapes=("single:--target redis-tcp" "1:--target redis-cluster --cluster-shards 1 --cluster-replicas 0"
        "3:--target redis-cluster --cluster-shards 3 --cluster-replicas 0"
        "6:--target redis-cluster --cluster-shards 6 --cluster-replicas 0")
for i in $(seq "$repeat"); do
  for shape in "${shapes[@]}"; do
    name=${shape%%:*}; flags=${shape#*:}
    echo "repetition $i of $repeat: $name" >&2
    # shellcheck disable=SC2086
    (cd "$dir" && "$OLDPWD/target/release/edgebench" kv $flags -t 2 -c 4 --test-time 5 \
      --hide-histogram --json-out-file "$dir/$name-$i.json" "$@" >/dev/null 2>&1)
  done
done
python3 - "$dir" "$repeat" <<'PY'
import json, statistics, sys
root, repeat = sys.argv[1], int(sys.argv[2])
rows = []
for name in ["single", "1", "3", "6"]:
    ops = [json.load(open(f"{root}/{name}-{i}.json"))["ALL STATS"]["Totals"]["Ops/sec"]
           for i in range(1, repeat + 1)]
    rows.append((name, statistics.median(ops), ops))
base = rows[0][1]
print("| Target | Ops/sec (median) | vs single server | Repetitions |")
print("|-|-|-|-|")
for name, med, ops in rows:
    label = "redis-tcp (one server, no cluster)" if name == "single" else f"redis-cluster, {name} primar{'y' if name == '1' else 'ies'}"
    print(f"| {label} | {med:,.0f} | {med / base:.2f} | {', '.join(f'{o:,.0f}' for o in ops)} |")
PY
