#!/usr/bin/env bash
# docs/PERFORMANCE.md: `edgebench serve` against `redis-server` on this machine, in one run:
#   redis-benchmark -t set,get -n N -c 50 -d 500 at -P 1 and -P 16, over TCP and a Unix socket.
# Also prints how many cores each server used: (user + system CPU time) / wall time.
#
#   scripts/serve-vs-redis.sh [N]        (default 1000000, as the issue asks)
#   SERVE_FLAGS="--threads 1" scripts/serve-vs-redis.sh   (flags for edgebench serve)
#   REPEAT=5 scripts/serve-vs-redis.sh 200000   (repetitions, alternating which server goes
#   first, with the median of the per-repetition ratios per cell)
#   PIPELINES="1" scripts/serve-vs-redis.sh   (only these -P values; default "1 16")
#   EDGEBENCH=path/to/edgebench scripts/serve-vs-redis.sh   (that binary; no build)
#   TRANSPORTS="tls" scripts/serve-vs-redis.sh   (only these: tcp, uds, tls; default "tcp uds";
#   tls: both servers on a TLS port with an ECDSA P-256 certificate from a CA this script
#   makes with openssl, no client certificates (--tls-auth-clients no), redis-benchmark --tls)
#   PIN=1 scripts/serve-vs-redis.sh   (both servers, every thread, on the last core; redis-benchmark
#   on the others: the scheduler no longer moves them onto one core with the client)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
edgebench=${EDGEBENCH:-}
if [ -z "$edgebench" ]; then
  cargo build --release --quiet
  edgebench=${CARGO_TARGET_DIR:-target}/release/edgebench
fi
dir=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$dir"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# PIN=1: servers on the last core, the client on the rest.
server_cpu=""; client_cpu=""
if [ "${PIN:-0}" = 1 ]; then
  last=$(( $(nproc) - 1 ))
  server_cpu="taskset -c $last"
  client_cpu="taskset -c 0-$(( last > 0 ? last - 1 : 0 ))"
fi
transports=${TRANSPORTS:-tcp uds}
rtls=(); etls=()
if [[ " $transports " == *" tls "* ]]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -keyout "$dir/ca.key" -out "$dir/ca.crt" -subj /CN=serve-vs-redis-ca 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=localhost \
    -keyout "$dir/server.key" -out "$dir/server.csr" 2>/dev/null
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$dir/ext"
  openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
    -days 2 -extfile "$dir/ext" -out "$dir/server.crt" 2>/dev/null
  rtlsport=$(free_port); etlsport=$(free_port)
  tls_files=(--tls-cert-file "$dir/server.crt" --tls-key-file "$dir/server.key" --tls-auth-clients no)
  rtls=(--tls-port "$rtlsport" "${tls_files[@]}"); etls=(--tls-port "$etlsport" "${tls_files[@]}")
fi
rport=$(free_port)
$server_cpu redis-server --port "$rport" --bind 127.0.0.1 --unixsocket "$dir/redis.sock" --unixsocketperm 700 \
  --save "" --appendonly no --dir "$dir" --logfile "$dir/redis.log" "${rtls[@]}" &
pids+=($!); rpid=$!
eport=$(free_port)
$server_cpu "$edgebench" serve --port "$eport" --unixsocket "$dir/edgebench.sock" "${etls[@]}" ${SERVE_FLAGS:-} 2>"$dir/serve.log" &
pids+=($!); epid=$!
for _ in $(seq 100); do
  redis-cli -p "$rport" ping >/dev/null 2>&1 && redis-cli -p "$eport" ping >/dev/null 2>&1 && break
  sleep 0.05
done

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
repeat=${REPEAT:-1}               # repetitions, alternating which server goes first
rows=$dir/rows
: >"$rows"
bench() { # server transport pipeline repetition
  local server=$1 transport=$2 p=$3 r=$4 pid port sock conn
  if [ "$server" = redis-server ]; then pid=$rpid; port=$rport; sock=$dir/redis.sock; tport=${rtlsport:-}
  else pid=$epid; port=$eport; sock=$dir/edgebench.sock; tport=${etlsport:-}; fi
  case $transport in
    tcp) conn="-h 127.0.0.1 -p $port" ;;
    uds) conn="-s $sock" ;;
    tls) conn="-h 127.0.0.1 -p $tport --tls --cacert $dir/ca.crt" ;;
  esac
  t0=$(cpu_ticks "$pid"); w0=$(date +%s.%N)
  out=$($client_cpu redis-benchmark $conn -t set,get -n "$n" -c 50 -d 500 -P "$p" --csv)
  t1=$(cpu_ticks "$pid"); w1=$(date +%s.%N)
  set_rps=$(echo "$out" | awk -F'"' '$2=="SET" {print $4}')
  get_rps=$(echo "$out" | awk -F'"' '$2=="GET" {print $4}')
  cores=$(python3 -c "print(f'{($t1-$t0)/$hz/($w1-$w0):.2f}')")
  echo "$server $transport $p $r $set_rps $get_rps $cores" >>"$rows"
}
for r in $(seq "$repeat"); do
  for p in ${PIPELINES:-1 16}; do
    for transport in $transports; do
      if [ $((r % 2)) -eq 1 ]; then order="redis-server edgebench"; else order="edgebench redis-server"; fi
      for server in $order; do bench "$server" "$transport" "$p" "$r"; done
    done
  done
done
# Every run, then (with REPEAT > 1) the median of the per-repetition ratios per cell.
python3 - "$rows" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
reps = sorted({r[3] for r in rows}, key=int)
print("| server | transport | pipeline | run | SET ops/s | GET ops/s | cores used |\n|-|-|-|-|-|-|-|")
for s, t, p, r, set_, get, cores in rows:
    print(f"| {s} | {t} | {p} | {r} | {set_} | {get} | {cores} |")
if len(reps) > 1:
    by = {(s, t, p, r): (float(a), float(b), float(c)) for s, t, p, r, a, b, c in rows}
    print("\n| transport | pipeline | test | runs | edgebench / redis-server ops/s: median (min–max) | cores used, median (edgebench / redis-server) |\n|-|-|-|-|-|-|")
    for p in sorted({r[2] for r in rows}, key=int):
        for t in [t for t in ("tcp", "uds", "tls") if any(r[1] == t for r in rows)]:
            for i, test in ((0, "SET"), (1, "GET")):
                ratios = [by[("edgebench", t, p, r)][i] / by[("redis-server", t, p, r)][i] for r in reps]
                ce = statistics.median(by[("edgebench", t, p, r)][2] for r in reps)
                cr = statistics.median(by[("redis-server", t, p, r)][2] for r in reps)
                print(f"| {t} | {p} | {test} | {len(reps)} | {statistics.median(ratios):.2f}x "
                      f"({min(ratios):.2f}–{max(ratios):.2f}) | {ce:.2f} / {cr:.2f} |")
PY
