#!/usr/bin/env bash
# docs/PERFORMANCE.md: the CPU a server spends per request, as instructions counted by
# valgrind's callgrind, which stay the same from run to run whatever else the machine is
# doing (wall-clock ratios on this two-core machine swing by ±30% beside a build).
#
# Each case starts its server under callgrind, waits for it, zeroes the counters
# (callgrind_control --zero), runs one redis-benchmark load, dumps, and divides the
# instructions the server ran by the requests it answered.
#
#   scripts/serve-instructions.sh CASE...
#   CASE: acl-requirepass | acl-user | tls-serve | tls-redis | plain-serve | plain-redis
#   N=100000 P=16 scripts/serve-instructions.sh acl-requirepass acl-user   (requests per
#   test, set and get each; pipeline)
#   EDGEBENCH=path/to/edgebench (default target/release/edgebench)
#   SOCKET=uds: the plain-* cases over a Unix socket instead of TCP
#   (N=40000 P=1 SOCKET=uds scripts/serve-instructions.sh plain-redis plain-serve: the
#   per-request table of docs/PERFORMANCE.md)
#
# The load is redis-benchmark -t set,get -n N -c 50 -d 500 -P P (with --tls for tls-*).
# acl-user is a user with two key patterns and -@dangerous, so every command is checked;
# acl-requirepass is the default user with a password, checked by nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
edgebench=${EDGEBENCH:-target/release/edgebench}
n=${N:-100000}
p=${P:-16}
dir=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$dir"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

certs() {
  [ -f "$dir/server.crt" ] && return
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -keyout "$dir/ca.key" -out "$dir/ca.crt" -subj /CN=instructions-ca 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=localhost \
    -keyout "$dir/server.key" -out "$dir/server.csr" 2>/dev/null
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$dir/ext"
  openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
    -CAcreateserial -days 2 -extfile "$dir/ext" -out "$dir/server.crt" 2>/dev/null
}

echo "| case | requests | server instructions | instructions per request |"
echo "|-|-|-|-|"
for case in "$@"; do
  port=$(free_port)
  auth=() tls=() server=()
  # Where redis-cli and redis-benchmark connect (-p PORT, or -s SOCKET).
  at=(-p "$port")
  tls_flags=(--tls-cert-file "$dir/server.crt" --tls-key-file "$dir/server.key" --tls-auth-clients no)
  case $case in
    acl-requirepass) server=("$edgebench" serve --port "$port" --requirepass pw); auth=(-a pw) ;;
    acl-user) server=("$edgebench" serve --port "$port" --user "default off"
                      --user "bench on >pw ~key:* ~__rand* +@all -@dangerous")
              auth=(--user bench -a pw) ;;
    plain-serve) server=("$edgebench" serve --port "$port") ;;
    plain-redis) server=(redis-server --port "$port" --save "" --appendonly no --dir "$dir") ;;
    tls-serve) certs; server=("$edgebench" serve --port 0 --tls-port "$port" "${tls_flags[@]}")
               tls=(--tls --cacert "$dir/ca.crt") ;;
    tls-redis) certs; server=(redis-server --port 0 --tls-port "$port" "${tls_flags[@]}"
                              --save "" --appendonly no --dir "$dir")
               tls=(--tls --cacert "$dir/ca.crt") ;;
    *) echo "serve-instructions: unknown case $case" >&2; exit 2 ;;
  esac
  if [ "${SOCKET:-tcp}" = uds ] && [[ $case == plain-* ]]; then
    server+=(--port 0 --unixsocket "$dir/s.sock"); at=(-s "$dir/s.sock")
  fi
  valgrind --tool=callgrind --callgrind-out-file="$dir/cg.%p" "${server[@]}" >"$dir/server.log" 2>&1 &
  pid=$!
  for _ in $(seq 300); do
    redis-cli "${at[@]}" "${tls[@]}" "${auth[@]}" --no-auth-warning ping >/dev/null 2>&1 && break
    sleep 0.1
  done
  callgrind_control --zero "$pid" >/dev/null 2>&1
  redis-benchmark "${at[@]}" "${tls[@]}" "${auth[@]}" -t set,get -n "$n" -c 50 -d 500 -P "$p" -q >/dev/null 2>&1
  callgrind_control --dump "$pid" >/dev/null 2>&1
  # The first dump (cg.PID.1) holds what ran between --zero and --dump: the load alone.
  file=$dir/cg.$pid.1
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
  total=$(grep -m1 '^summary:' "$file" | awk '{print $2}')
  rm -f "$dir"/cg.*
  requests=$((2 * n))
  echo "| $case | $requests | $total | $(python3 -c "print(f'{$total/$requests:,.0f}')") |"
done
