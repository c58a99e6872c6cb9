#!/usr/bin/env bash
# docs/PERFORMANCE.md: `edgebench serve` against `redis-server` on this machine, in one run:
#   redis-benchmark -t set,get -n N -c 50 -d 500 at -P 1 and -P 16, over TCP and a Unix socket.
# Also prints how many cores each server used: (user + system CPU time) / wall time.
#
#   scripts/serve-vs-redis.sh [N]        (default 1000000, as the issue asks)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
cargo build --release --quiet
dir=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$dir"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

rport=$(free_port)
redis-server --port "$rport" --bind 127.0.0.1 --unixsocket "$dir/redis.sock" --unixsocketperm 700 \
  --save "" --appendonly no --dir "$dir" --logfile "$dir/redis.log" &
pids+=($!); rpid=$!
eport=$(free_port)
./target/release/edgebench serve --port "$eport" --unixsocket "$dir/edgebench.sock" 2>"$dir/serve.log" &
pids+=($!); epid=$!
for _ in $(seq 100); do
  redis-cli -p "$rport" ping >/dev/null 2>&1 && redis-cli -p "$eport" ping >/dev/null 2>&1 && break
  sleep 0.05
done

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
printf '| server | transport | pipeline | SET ops/s | GET ops/s | cores used |\n|-|-|-|-|-|-|\n'
for p in 1 16; do
  for transport in tcp uds; do
    for server in redis-server edgebench; do
      if [ "$server" = redis-server ]; then pid=$rpid; port=$rport; sock=$dir/redis.sock
      else pid=$epid; port=$eport; sock=$dir/edgebench.sock; fi
      if [ "$transport" = tcp ]; then conn="-h 127.0.0.1 -p $port"; else conn="-s $sock"; fi
      t0=$(cpu_ticks "$pid"); w0=$(date +%s.%N)
      out=$(redis-benchmark $conn -t set,get -n "$n" -c 50 -d 500 -P "$p" --csv)
      t1=$(cpu_ticks "$pid"); w1=$(date +%s.%N)
      set_rps=$(echo "$out" | awk -F'"' '$2=="SET" {print $4}')
      get_rps=$(echo "$out" | awk -F'"' '$2=="GET" {print $4}')
      cores=$(python3 -c "print(f'{($t1-$t0)/$hz/($w1-$w0):.2f}')")
      echo "| $server | $transport | $p | $set_rps | $get_rps | $cores |"
    done
  done
done
