#!/usr/bin/env bash
# Persistence speed: BGSAVE's effect on p99 under load, and restart (load) time, for
# `edgebench serve` and redis-server, 1,000,000 keys of 100 bytes, interleaved rounds.
set -euo pipefail
EB=${EB:-target/release/edgebench}
ROUNDS=${ROUNDS:-3}
W=$(mktemp -d /tmp/pbXXXX)
trap 'pkill -P $$ 2>/dev/null || true; rm -rf "$W"' EXIT
start() { # server dir extra...
  local s=$1 d=$2; shift 2
  if [ "$s" = serve ]; then
    "$EB" serve --port 0 --unixsocket "$d/s.sock" --dir "$d" --save "" "$@" >"$d/log" 2>&1 &
  else
    redis-server --port 0 --unixsocket "$d/s.sock" --dir "$d" --save "" --appendonly no "$@" --daemonize no >"$d/log" 2>&1 &
  fi
  echo $! >"$d/pid"
  local t0=$(date +%s.%N)
  until [ "$(redis-cli -s "$d/s.sock" ping 2>/dev/null)" = PONG ]; do sleep 0.005; done
  local t1=$(date +%s.%N)
  echo "$t0 $t1" | awk '{printf "%.3f", $2-$1}'
}
stop() { redis-cli -s "$1/s.sock" shutdown nosave >/dev/null 2>&1 || true; wait "$(cat "$1/pid")" 2>/dev/null || true; rm -f "$1/s.sock"; }
fill() { redis-cli -s "$1/s.sock" eval "for i=1,1000000 do redis.call('set','key:'..i,string.rep('x',100)) end return redis.call('dbsize')" 0 >/dev/null; }
p99_during_bgsave() { # dir
  local d=$1
  ( while [ ! -e "$d/done" ]; do redis-cli -s "$d/s.sock" bgsave >/dev/null 2>&1 || true; sleep 0.05; done ) &
  local saver=$!
  local out
  out=$(redis-benchmark -s "$d/s.sock" -t set -n 600000 -c 20 -r 1000000 -d 100 --precision 3 2>/dev/null | tr '\r' '\n' | grep -A2 "latency summary" | tail -1)
  touch "$d/done"; wait $saver; rm -f "$d/done"
  local saves=$(redis-cli -s "$d/s.sock" info persistence | tr -d "\r" | awk -F: '/^rdb_saves|^total_forks|^latest_fork_usec/{printf "%s=%s ", $1, $2}')
  echo "$out | $saves"
}
for r in $(seq 1 "$ROUNDS"); do
  for s in serve redis; do
    d="$W/$s-$r"; mkdir -p "$d"
    start $s "$d" >/dev/null
    fill "$d"
    echo "round $r $s p99-during-bgsave (avg min p50 p95 p99 max ms): $(p99_during_bgsave "$d")"
    redis-cli -s "$d/s.sock" save >/dev/null
    stop "$d"
    echo "round $r $s restart-from-rdb seconds: $(start $s "$d") keys=$(redis-cli -s "$d/s.sock" dbsize)"
    stop "$d"; rm -f "$d/dump.rdb"
    # The append-only file: 1,000,000 SETs (no rewrite), replayed on restart.
    start $s "$d" --appendonly yes --appendfsync everysec >/dev/null
    redis-cli -s "$d/s.sock" config set auto-aof-rewrite-percentage 0 >/dev/null
    redis-benchmark -s "$d/s.sock" -t set -n 1000000 -r 1000000 -d 100 -P 64 -q >/dev/null 2>&1
    keys=$(redis-cli -s "$d/s.sock" dbsize)
    stop "$d"
    echo "round $r $s restart-from-aof seconds: $(start $s "$d" --appendonly yes) keys=$keys/$(redis-cli -s "$d/s.sock" dbsize) aof=$(du -sm "$d/appendonlydir" | cut -f1)MB"
    stop "$d"; rm -rf "$d"
  done
done
