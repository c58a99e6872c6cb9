#!/usr/bin/env bash
# docs/PERFORMANCE.md, "What an ACL check costs": `edgebench serve` with `--requirepass` alone
# against the same server whose client is an ACL user with restrictions (so every command is
# checked: command, key patterns), redis-benchmark -t set,get -n N -c 50 -d 500 -P 16 over
# TCP, REPEAT interleaved runs alternating which goes first, the median of the ratios.
#
#   EDGEBENCH=target/release/edgebench REPEAT=5 scripts/acl-cost.sh [N]   (default 1000000)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
edgebench=${EDGEBENCH:-target/release/edgebench}
dir=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$dir"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
last=$(( $(nproc) - 1 ))
pin_server="taskset -c $last"; pin_client="taskset -c 0-$(( last > 0 ? last - 1 : 0 ))"
pport=$(free_port)
$pin_server "$edgebench" serve --port "$pport" --requirepass pw 2>/dev/null &
pids+=($!)
aport=$(free_port)
$pin_server "$edgebench" serve --port "$aport" \
  --user "default off" --user "bench on >pw ~key:* ~__rand* +@all -@dangerous" 2>/dev/null &
pids+=($!)
for _ in $(seq 100); do
  redis-cli -p "$pport" -a pw --no-auth-warning ping >/dev/null 2>&1 &&
    redis-cli -p "$aport" --user bench --pass pw --no-auth-warning ping >/dev/null 2>&1 && break
  sleep 0.05
done
rows=$dir/rows
: >"$rows"
bench() { # which repetition
  local which=$1 r=$2 out
  if [ "$which" = requirepass ]; then
    out=$($pin_client redis-benchmark -p "$pport" -a pw -t set,get -n "$n" -c 50 -d 500 -P 16 --csv 2>/dev/null)
  else
    out=$($pin_client redis-benchmark -p "$aport" --user bench -a pw -t set,get -n "$n" -c 50 -d 500 -P 16 --csv 2>/dev/null)
  fi
  echo "$which $r $(echo "$out" | awk -F'"' '$2=="SET" {print $4}') $(echo "$out" | awk -F'"' '$2=="GET" {print $4}')" >>"$rows"
}
for r in $(seq "${REPEAT:-5}"); do
  if [ $((r % 2)) -eq 1 ]; then order="requirepass acl"; else order="acl requirepass"; fi
  for which in $order; do bench "$which" "$r"; done
done
python3 - "$rows" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
print("| client | run | SET ops/s | GET ops/s |\n|-|-|-|-|")
for w, r, s, g in rows:
    print(f"| {w} | {r} | {s} | {g} |")
by = {(w, r): (float(s), float(g)) for w, r, s, g in rows}
reps = sorted({r for _, r, _, _ in rows}, key=int)
for i, name in ((0, "SET"), (1, "GET")):
    ratios = [by[("acl", r)][i] / by[("requirepass", r)][i] for r in reps]
    print(f"{name}: ACL user / requirepass, median of {len(ratios)}: {statistics.median(ratios):.3f} "
          f"(min {min(ratios):.3f}, max {max(ratios):.3f})")
PY
