#!/usr/bin/env bash
# Runs Redis's own TCL test units in external mode, each against a fresh server, and prints
# a markdown table of what passed: `edgebench serve` by default, redis-server with --redis
# (the same harness, for the comparison column).
#
#   scripts/redis-tests.sh [--redis] [--tls] REDIS_SRC [UNIT...]
#
# --tls: both servers serve only a TLS port (certificates from Redis's own
# utils/gen-test-certs.sh, made in REDIS_SRC/tests/tls when missing; its server.crt, since
# rustls takes only X.509 v3 certificates) and the harness runs with its --tls (needs tcl-tls).
#
# REDIS_SRC is a checkout of redis/redis at 7.0.15 (its `tests/` and `runtest` are what run;
# nothing is built there). UNIT defaults to the units docs/redis-tests.md lists. Tests tagged
# needs:debug, needs:repl, needs:config-maxmemory and needs:save are skipped (external mode
# cannot run them against either server). Needs tclsh (Debian: tcl) and a release build
# (cargo build --release; EDGEBENCH_BIN=PATH runs another binary). Each unit's log is kept in $TMPDIR/redis-tests/UNIT.log.
set -euo pipefail
cd "$(dirname "$0")/.."
server=serve
tls=
while [ "${1:-}" = --redis ] || [ "${1:-}" = --tls ]; do
  if [ "$1" = --redis ]; then server=redis; else tls=1; fi
  shift
done
src=${1:?usage: scripts/redis-tests.sh [--redis] REDIS_SRC [UNIT...]}
shift
[ -f "$src/tests/test_helper.tcl" ] || { echo "redis-tests: $src has no tests/test_helper.tcl: give a checkout of redis/redis" >&2; exit 2; }
command -v tclsh >/dev/null || { echo "redis-tests: tclsh not found: apt-get install tcl" >&2; exit 2; }
units=("$@")
[ ${#units[@]} -gt 0 ] || units=(
  type/string type/incr type/hash type/list type/list-2 type/list-3 type/set type/zset
  type/stream type/stream-cgroups keyspace expire info-command geo sort scan protocol slowlog
  bitfield bitops hyperloglog dump multi pubsub scripting functions latency-monitor
  introspection-2 other tracking querybuf lazyfree
)
listen=(--port "PORT")
cli_tls=()
harness_tls=()
if [ -n "$tls" ]; then
  echo 'package require tls' | tclsh >/dev/null 2>&1 || { echo "redis-tests: --tls needs Tcl's tls package: apt-get install tcl-tls" >&2; exit 2; }
  [ -f "$src/tests/tls/server.crt" ] || (cd "$src" && ./utils/gen-test-certs.sh >/dev/null 2>&1)
  tlsdir=$(cd "$src/tests/tls" && pwd)
  listen=(--port 0 --tls-port PORT --tls-cert-file "$tlsdir/server.crt" --tls-key-file "$tlsdir/server.key" --tls-ca-cert-file "$tlsdir/ca.crt")
  cli_tls=(--tls --cacert "$tlsdir/ca.crt" --cert "$tlsdir/client.crt" --key "$tlsdir/client.key")
  harness_tls=(--tls)
fi
bin=${EDGEBENCH_BIN:-$PWD/target/release/edgebench}
[ "$server" = redis ] || [ -x "$bin" ] || { echo "redis-tests: $bin missing: cargo build --release" >&2; exit 2; }
logs=${TMPDIR:-/tmp}/redis-tests
mkdir -p "$logs"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
pid=
# SIGTERM, then SIGKILL after 10 s: a server that does not end must not stop the run.
stop() {
  [ -n "$pid" ] || return 0
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "redis-tests: the server ignored SIGTERM for 10 s; killed" >&2
    kill -9 "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
  pid=
}
trap stop EXIT
echo "| unit | ok | err | exception |"
echo "|-|-|-|-|"
total_ok=0 total_err=0
on=("${listen[@]/PORT/$port}")
for unit in "${units[@]}"; do
  if [ "$server" = redis ]; then
    redis-server "${on[@]}" --dir "$logs" --save '' --appendonly no >/dev/null 2>&1 &
  else
    # Its files (SAVE, SHUTDOWN, DEBUG RELOAD) go with the logs, not into this checkout.
    "$bin" serve "${on[@]}" --dir "$logs" >/dev/null 2>&1 &
  fi
  pid=$!
  for _ in $(seq 50); do redis-cli -p "$port" "${cli_tls[@]}" ping >/dev/null 2>&1 && break; sleep 0.1; done
  log="$logs/${unit//\//_}.$server${tls:+.tls}.log"
  (cd "$src" && timeout 300 tclsh tests/test_helper.tcl --host 127.0.0.1 --port "$port" "${harness_tls[@]}" \
    --single "unit/$unit" --tags -needs:debug --tags -needs:repl \
    --tags -needs:config-maxmemory --tags -needs:save --timeout 60 >"$log" 2>&1) || true
  stop
  ok=$(grep -ac '^\[[^]]*ok[^]]*\]: ' "$log" || true)
  err=$(grep -ac '^\[[^]]*err[^]]*\]: ' "$log" || true)
  # An exception, or a test that timed out (--timeout 60): either ends the unit.
  exc=$(grep -acE '^\[[^]]*(exception|TIMEOUT)[^]]*\]: ' "$log" || true)
  echo "| $unit | $ok | $err | $exc |"
  total_ok=$((total_ok + ok)) total_err=$((total_err + err + exc))
done
echo "| **total** | **$total_ok** | **$total_err** | |"
