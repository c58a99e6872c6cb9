#!/usr/bin/env bash
# The service-path figures of docs/PERFORMANCE.md (issue 12).
#
#   scripts/service-path.sh ratio [REPS] [BENCHTIME]   (default 5, 1s)
#       ReadingCount through edgebench's core-data service over a Unix socket, on the
#       in-process engine (RedisDB_Embedded+HTTP_UDS), against RedisDB_UDS's ReadingCount
#       (one ZCARD round trip to a private redis-server), both columns in each of REPS runs;
#       prints each run's ratio and the median.
#   scripts/service-path.sh table [BENCHTIME] [COUNT]   (default 200ms, 3)
#       One run of every store directly, in its 2018 and EdgeX layouts, and behind the
#       service over TCP and over a Unix socket (PostgreSQL when it answers on its socket).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=target/release/edgebench
cargo build --release --quiet
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

case "${1:-ratio}" in
ratio)
  reps=${2:-5}
  benchtime=${3:-1s}
  for i in $(seq "$reps"); do
    $bin coredata --target redis-uds,embedded --via direct,http-uds --bench '^ReadingCount$' \
      --benchtime "$benchtime" --format json --out "$dir/$i" >/dev/null 2>&1
  done
  python3 - "$dir" "$reps" <<'PY'
import json, statistics, sys
d, reps = sys.argv[1], int(sys.argv[2])
ratios = []
for i in range(1, reps + 1):
    res = json.load(open(f"{d}/{i}/results.json"))
    ns = {t["name"]: t["benchmarks"][0]["runs"][0]["ns_per_op"] for t in res["targets"]}
    r = ns["RedisDB_Embedded+HTTP_UDS"] / ns["RedisDB_UDS"]
    ratios.append(r)
    print(f"run {i}: RedisDB_UDS {ns['RedisDB_UDS']:.0f} ns/op, "
          f"RedisDB_Embedded+HTTP_UDS {ns['RedisDB_Embedded+HTTP_UDS']:.0f} ns/op, ratio {r:.2f}")
print(f"median ratio {statistics.median(ratios):.2f} (target: at most 2.00)")
PY
  ;;
table)
  benchtime=${2:-200ms}
  count=${3:-3}
  targets=redis-uds,redis-tcp,embedded,sqlite
  pg_isready -q -h /var/run/postgresql && targets=$targets,pg-uds
  $bin coredata --target "$targets" --layout 2018,edgex --via direct,http \
    --benchtime "$benchtime" --count "$count" --out "$dir/table"
  ;;
*)
  echo "usage: $0 ratio [REPS] [BENCHTIME] | table [BENCHTIME] [COUNT]" >&2
  exit 2
  ;;
esac
