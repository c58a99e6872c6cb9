#!/usr/bin/env bash
# docs/PERFORMANCE.md: PadoGrid's IMDG benchmark bundle workflow (g01–g12 of
# etc/group-template.properties) against several targets, in one run:
#   create_group_config; clean_results -all; RUNS x test_group -run per target; create_csv -all
# The work happens in a copy of etc/ inside $OUT (create_group_config overwrites
# etc/group.properties there, not yours); the results stay in $OUT/results/perf
# (default OUT: results/perf-bundle-<stamp>/).
#
#   scripts/perf-bundle.sh [RUNS] [TARGET...]     (default: 3 embedded-tcp redis-tcp)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(embedded-tcp redis-tcp)
cargo build --release --quiet
bin=$PWD/target/release/edgebench
out=${OUT:-$PWD/results/perf-bundle-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
cp -r etc "$out/etc"
cd "$out"
"$bin" perf create_group_config
"$bin" perf clean_results -all
for t in "${targets[@]}"; do
  for i in $(seq "$runs"); do
    echo "== $t, run $i of $runs" >&2
    "$bin" perf test_group -run --target "$t" > "test_group-$t-$i.log"
  done
done
"$bin" perf create_csv -all
echo "results in $out/results/perf" >&2
