#!/usr/bin/env bash
# User-space instructions per request under callgrind: each server, SET then GET, -P 1, UDS.
set -u
E=${EDGEBENCH:-target/release/edgebench}
D=$(mktemp -d)
N=${N:-40000}
for srv in redis serve; do
  for phase in base load; do
    if [ $srv = redis ]; then
      valgrind --tool=callgrind --callgrind-out-file=$D/$srv.$phase.out redis-server --port 0 --unixsocket $D/s.sock --save "" --appendonly no --dir $D --daemonize no >/dev/null 2>&1 & P=$!
    else
      valgrind --tool=callgrind --callgrind-out-file=$D/$srv.$phase.out $E serve --port 0 --unixsocket $D/s.sock >/dev/null 2>&1 & P=$!
    fi
    until redis-cli -s $D/s.sock ping >/dev/null 2>&1; do sleep 0.2; done
    if [ $phase = load ]; then
      redis-benchmark -s $D/s.sock -t set,get -n $N -c 50 -d 500 -P 1 -q >/dev/null 2>&1
    fi
    redis-cli -s $D/s.sock shutdown nosave >/dev/null 2>&1; kill -TERM $P 2>/dev/null; wait $P 2>/dev/null
    ir=$(grep -m1 "^summary:\|^totals:" $D/$srv.$phase.out | awk '{print $2}')
    echo "$srv $phase Ir=$ir"
    eval "${srv}_${phase}=$ir"
  done
done
python3 -c "
n=2*$N
r=($redis_load-$redis_base)/n; s=($serve_load-$serve_base)/n
print(f'instructions per request (SET+GET, -P 1, 50 clients): redis-server {r:.0f}, serve {s:.0f}, ratio {s/r:.2f}')"

rm -rf $D
