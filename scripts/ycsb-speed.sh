#!/usr/bin/env bash
# The speed targets of `edgebench ycsb` (docs/PERFORMANCE.md, "YCSB"), measured in one sitting
# with the repetitions of each case interleaved, medians printed:
#
#   direct   workload C, -threads 1, on embedded-direct and embedded (ops/s each repetition)
#   cpu      workload C, -threads 1, against a private redis-server's Unix socket: the CPU
#            (user + sys) edgebench's process spends per operation, beside redis-benchmark
#            -c 1 -P 1 doing HGETALL of one loaded record (the same request and reply)
#   schedule workload C at -target 100000 on embedded-direct: the share of operations that
#            started within 1 ms of their intended start
#   instructions  the same comparison as cpu in user-space instructions per operation under
#            callgrind (stable on a noisy machine; the kernel's socket path is left out): each
#            client run at 10,000 and 30,000 operations, the difference over 20,000
#
# Usage: EDGEBENCH=target/release/edgebench REPEAT=5 scripts/ycsb-speed.sh [direct] [cpu] [schedule] [instructions]
set -euo pipefail

EDGEBENCH=${EDGEBENCH:-target/release/edgebench}
REPEAT=${REPEAT:-5}
RECORDS=${RECORDS:-100000}
OPS=${OPS:-5000000}
CPU_OPS=${CPU_OPS:-300000}
cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=(direct cpu schedule instructions)
work=$(mktemp -d)
trap 'kill $(cat "$work/redis.pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT

# A private redis-server on a Unix socket in $work (the previous one stopped), loaded with
# RECORDS records; sets sock and key (a loaded record's key).
loaded_redis() {
  sock="$work/redis.sock"
  kill "$(cat "$work/redis.pid" 2>/dev/null)" 2>/dev/null || true
  rm -f "$sock"; sleep 0.2
  # setpriv: the server dies with this script, however the script ends.
  setpriv --pdeathsig KILL redis-server --port 0 --unixsocket "$sock" --save '' --appendonly no --daemonize no \
    >/dev/null 2>&1 & echo $! > "$work/redis.pid"
  for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
  "$EDGEBENCH" ycsb load -P etc/ycsb/workloadc -p recordcount="$RECORDS" \
    --target "redis+unix://$sock" --out "$work/load" >/dev/null 2>&1
  key=$(redis-cli -s "$sock" zrange _indices 0 0)
}

median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# ops/s of the run step of one column from a results directory.
throughput() {
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1]+"/results.json")); print(d["targets"][0]["steps"][-1]["throughput"])' "$1"
}

for case in "${cases[@]}"; do
  case $case in
  direct)
    for t in embedded-direct embedded; do : > "$work/$t"; done
    for i in $(seq "$REPEAT"); do
      for t in embedded-direct embedded; do
        "$EDGEBENCH" ycsb load run -P etc/ycsb/workloadc -p recordcount="$RECORDS" \
          -p operationcount="$OPS" -threads 1 --target "$t" --out "$work/r-$t-$i" >/dev/null 2>&1
        throughput "$work/r-$t-$i" | tee -a "$work/$t" | sed "s/^/$t run $i: /"
      done
    done
    for t in embedded-direct embedded; do
      echo "$t: median $(median < "$work/$t") ops/s over $REPEAT runs (workload C, -threads 1, $OPS operations)"
    done
    ;;
  cpu)
    loaded_redis
    : > "$work/eb"; : > "$work/rb"
    for i in $(seq "$REPEAT"); do
      /usr/bin/time -f "%U %S" -o "$work/t" "$EDGEBENCH" ycsb run -P etc/ycsb/workloadc \
        -p recordcount="$RECORDS" -p operationcount="$CPU_OPS" -threads 1 \
        --target "redis+unix://$sock" --out "$work/run-$i" >/dev/null 2>&1
      eb=$(awk -v n="$CPU_OPS" '{printf "%.3f", ($1+$2)*1e6/n}' "$work/t")
      /usr/bin/time -f "%U %S" -o "$work/t" redis-benchmark -s "$sock" -c 1 -P 1 -n "$CPU_OPS" \
        -q HGETALL "$key" >/dev/null 2>&1
      rb=$(awk -v n="$CPU_OPS" '{printf "%.3f", ($1+$2)*1e6/n}' "$work/t")
      echo "$eb" >> "$work/eb"; echo "$rb" >> "$work/rb"
      echo "run $i: edgebench $eb us CPU/op, redis-benchmark $rb us CPU/op"
    done
    e=$(median < "$work/eb"); r=$(median < "$work/rb")
    echo "cpu: edgebench median $e us/op, redis-benchmark median $r us/op, ratio $(awk -v e="$e" -v r="$r" 'BEGIN {printf "%.2f", e/r}')x"
    ;;
  schedule)
    : > "$work/share"
    for i in $(seq "$REPEAT"); do
      "$EDGEBENCH" ycsb load run -P etc/ycsb/workloadc -p recordcount="$RECORDS" \
        -p operationcount=1000000 -target 100000 -threads 1 --target embedded-direct \
        --out "$work/s-$i" >/dev/null 2>&1
      python3 -c 'import json,sys; s=json.load(open(sys.argv[1]+"/results.json"))["targets"][0]["steps"][-1]; print(s["schedule_within_1ms"], s["schedule_lag"]["p99_ns"], s["throughput"])' "$work/s-$i" \
        | tee -a "$work/share" | awk -v i="$i" '{printf "run %d: %.4f within 1 ms, p99 lag %d ns, %.0f ops/s\n", i, $1, $2, $3}'
    done
    echo "schedule: median share within 1 ms $(cut -d' ' -f1 < "$work/share" | median)"
    ;;
  instructions)
    loaded_redis
    ir() { callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'; }
    for n in 10000 30000; do
      valgrind --tool=callgrind --callgrind-out-file="$work/eb-$n.cg" "$EDGEBENCH" ycsb run \
        -P etc/ycsb/workloadc -p recordcount="$RECORDS" -p operationcount=$n -threads 1 \
        --target "redis+unix://$sock" --out "$work/cg-$n" >/dev/null 2>&1
      valgrind --tool=callgrind --callgrind-out-file="$work/rb-$n.cg" redis-benchmark -s "$sock" \
        -c 1 -P 1 -n $n -q HGETALL "$key" >/dev/null 2>&1
    done
    e=$(( ($(ir "$work/eb-30000.cg") - $(ir "$work/eb-10000.cg")) / 20000 ))
    r=$(( ($(ir "$work/rb-30000.cg") - $(ir "$work/rb-10000.cg")) / 20000 ))
    echo "instructions: edgebench $e per op, redis-benchmark $r per op, ratio $(awk -v e="$e" -v r="$r" 'BEGIN {printf "%.2f", e/r}')x"
    ;;
  *) echo "unknown case $case: use direct, cpu, schedule, instructions" >&2; exit 2 ;;
  esac
done
