#!/usr/bin/env python3
"""docs/PERFORMANCE.md: 10,000 idle connections, `edgebench serve` against `redis-server`.

For each server (both spawned privately, TCP on 127.0.0.1, interleaved REPEAT times with the
order alternating): the time to open N connections (connect, then one PING on each so the
server has really accepted and served it, pipelined: all sent, then all read), the server's
RSS growth per connection (VmRSS from /proc after the connections are open, minus before),
and PING round trips on one more connection while the N stay open (median and max of 200).

    scripts/idle-conns.py [N] [REPEAT]      (defaults 10000 and 5; needs ulimit -n > N + 100)
"""
import os, socket, statistics, subprocess, sys, tempfile, time

N = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
REPEAT = int(sys.argv[2]) if len(sys.argv) > 2 else 5
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EDGEBENCH = os.path.join(ROOT, "target", "release", "edgebench")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def wait_ready(port):
    for _ in range(200):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16) == b"+PONG\r\n":
                    return
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"server on {port} did not answer")


def start(server, dir):
    port = free_port()
    if server == "redis-server":
        cmd = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
               "--appendonly", "no", "--dir", dir, "--logfile", os.path.join(dir, "r.log"),
               "--maxclients", str(N + 100)]
    else:
        cmd = [EDGEBENCH, "serve", "--port", str(port), "--maxclients", str(N + 100)]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_ready(port)
    return p, port


def read_exact(s, n):
    got = b""
    while len(got) < n:
        chunk = s.recv(n - len(got))
        if not chunk:
            raise RuntimeError("connection closed")
        got += chunk
    return got


def measure(server, dir):
    p, port = start(server, dir)
    try:
        time.sleep(0.2)
        before = rss_kb(p.pid)
        t0 = time.perf_counter()
        conns = []
        for _ in range(N):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"PING\r\n")
            conns.append(s)
        for s in conns:
            if read_exact(s, 7) != b"+PONG\r\n":
                raise RuntimeError("bad PING reply")
        open_s = time.perf_counter() - t0
        time.sleep(0.5)
        after = rss_kb(p.pid)
        probe = socket.create_connection(("127.0.0.1", port))
        probe.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        rtts = []
        for _ in range(200):
            t = time.perf_counter()
            probe.sendall(b"PING\r\n")
            read_exact(probe, 7)
            rtts.append((time.perf_counter() - t) * 1e3)
        probe.close()
        for s in conns:
            s.close()
        return open_s, (after - before) * 1024 / N, statistics.median(rtts), max(rtts)
    finally:
        p.terminate()
        p.wait()


def main():
    rows = {"redis-server": [], "edgebench": []}
    with tempfile.TemporaryDirectory() as dir:
        for r in range(REPEAT):
            order = ["redis-server", "edgebench"] if r % 2 == 0 else ["edgebench", "redis-server"]
            for server in order:
                rows[server].append(measure(server, dir))
                o, b, m, x = rows[server][-1]
                print(f"run {r + 1} {server}: open {o:.2f} s, {b:.0f} B/conn, PING median {m:.3f} ms max {x:.3f} ms",
                      flush=True)
    print(f"\n{N} idle connections, {REPEAT} interleaved runs, medians:\n")
    print("| server | open (s) | RSS per connection (bytes) | PING median (ms) | PING max (ms) |\n|-|-|-|-|-|")
    for server, runs in rows.items():
        cols = [statistics.median(c) for c in zip(*runs)]
        print(f"| {server} | {cols[0]:.2f} | {cols[1]:,.0f} | {cols[2]:.3f} | {cols[3]:.3f} |")
    ratio = statistics.median(e[0] / r[0] for e, r in zip(rows["edgebench"], rows["redis-server"]))
    print(f"\nopen time, edgebench / redis-server: median of per-run ratios {ratio:.2f}x")


main()
