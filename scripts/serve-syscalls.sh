#!/usr/bin/env bash
# perf stat of each server under redis-benchmark -P 1 SET/GET over UDS, servers on CPU 1, client on CPU 0.
set -u
E=${EDGEBENCH:-target/release/edgebench}
D=$(mktemp -d)
taskset -c 1 redis-server --port 0 --unixsocket $D/r.sock --save "" --appendonly no --dir $D --daemonize no >/dev/null 2>&1 & R=$!
taskset -c 1 $E serve --port 0 --unixsocket $D/e.sock >/dev/null 2>&1 & S=$!
sleep 1
N=${N:-200000}
for rep in 1 2; do
for srv in redis serve; do
  if [ $srv = redis ]; then P=$R; SOCK=$D/r.sock; else P=$S; SOCK=$D/e.sock; fi
  for t in set get; do
    perf stat -x, -e instructions:u,instructions:k,cycles,context-switches,raw_syscalls:sys_enter -p $P -o $D/stat.txt -- sleep 60 &
    PS=$!
    sleep 0.2
    out=$(taskset -c 0 redis-benchmark -s $SOCK -t $t -n $N -c 50 -d 500 -P 1 --csv | tail -1)
    kill -INT $PS; wait $PS 2>/dev/null
    rps=$(echo "$out" | awk -F'"' '{print $4}')
    awk -F, -v n=$N -v s=$srv -v t=$t -v r="$rps" -v rep=$rep 'NF>3 && $1 ~ /^[0-9]/ {v[$3]=$1} END {printf "%s rep%s %-6s %s rps=%s  user-instr/req=%.0f kern-instr/req=%.0f cycles/req=%.0f syscalls/req=%.2f cs/req=%.3f\n", s, rep, t, "", r, v["instructions:u"]/n, v["instructions:k"]/n, v["cycles"]/n, v["raw_syscalls:sys_enter"]/n, v["context-switches"]/n}' $D/stat.txt
  done
done
done
kill $R $S; wait; rm -rf $D
