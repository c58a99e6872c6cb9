#!/usr/bin/env bash
# docs/PERFORMANCE.md: the ten core-data benchmarks on every kind of target in one run: the
# engine four ways, private redis-servers over TCP and a Unix socket, SQLite in-process,
# PostgreSQL over TCP and its Unix socket (the machine's server, PG* variables), and MongoDB.
#
#   scripts/coredata-all-targets.sh [MONGO_URL] [extra coredata flags...]
#
# Without MONGO_URL a SecantusDB server (pip install --pre SecantusDB) is started on a free
# port for the run and stopped afterwards: a MongoDB wire-protocol stand-in whose timings say
# nothing about mongod's (docs/stores/mongo.md). Give a real mongod's URL for real figures.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
mongo=${1:-}
[ $# -gt 0 ] && shift
dir=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then
    kill -TERM -- "-$pid" 2>/dev/null || true
    sleep 1
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
if [ -z "$mongo" ]; then
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  setsid secantusd-py --port "$port" --storage-path "$dir/mongo" >"$dir/mongo.log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.2)" 2>/dev/null && break
    sleep 0.1
  done
  mongo="SecantusDB=mongodb://127.0.0.1:$port"
fi
./target/release/edgebench coredata \
  --target embedded-direct,embedded,embedded-tcp,embedded-uds,redis-tcp,redis-uds \
  --target sqlite,pg-tcp,pg-uds,"$mongo" "$@"
