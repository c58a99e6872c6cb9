#!/usr/bin/env python3
"""Generates the engine's command metadata table from a running redis-server 7.0.15.

Usage: gen_command_table.py /path/to/redis.sock OUTPUT_DIR

Writes two RESP3 files the engine embeds (src/engine/cmd/server/meta/):
- `command_info.resp`: one COMMAND INFO record per command, sorted by name: the interface
  facts (arity, flags, key positions, ACL categories, tips, key specs, subcommands).
- `command_docs.resp`: a map name -> COMMAND DOCS record, with Redis's structural fields
  (since, group, arguments, doc flags, deprecation, history versions) and the engine's own
  texts in place of Redis's prose: the summary comes from `summaries.txt` beside this script
  (or a generic sentence), the complexity keeps only the leading big-O expression, and each
  history entry's description is a sentence of ours.
"""
import os
import re
import socket
import sys


class Conn:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.connect(path)
        self.buf = b""

    def call(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a.encode() if isinstance(a, str) else a
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.s.sendall(out)
        return self.read()

    def line(self):
        while b"\r\n" not in self.buf:
            self.buf += self.s.recv(1 << 20)
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def exact(self, n):
        while len(self.buf) < n + 2:
            self.buf += self.s.recv(1 << 20)
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def read(self):
        line = self.line()
        t, rest = line[:1], line[1:]
        if t in b"+-":
            return (t, rest)
        if t == b":":
            return (t, int(rest))
        if t in b"$=":
            n = int(rest)
            return (t, None if n < 0 else self.exact(n))
        if t == b"_":
            return (t, None)
        if t in b"*~>":
            return (t, [self.read() for _ in range(int(rest))])
        if t == b"%":
            return (t, [(self.read(), self.read()) for _ in range(int(rest))])
        raise ValueError(line)


def encode(v):
    t, x = v
    if t in b"+-":
        return t + x + b"\r\n"
    if t == b":":
        return b":%d\r\n" % x
    if t in b"$=":
        return b"$-1\r\n" if x is None else t + b"%d\r\n%s\r\n" % (len(x), x)
    if t == b"_":
        return b"_\r\n"
    if t in b"*~>":
        return t + b"%d\r\n" % len(x) + b"".join(encode(e) for e in x)
    if t == b"%":
        return b"%%%d\r\n" % len(x) + b"".join(encode(k) + encode(e) for k, e in x)
    raise ValueError(t)


def bulk(s):
    return (b"$", s.encode() if isinstance(s, str) else s)


def load_summaries(path):
    out = {}
    if os.path.exists(path):
        for line in open(path, encoding="utf-8"):
            line = line.rstrip("\n")
            if line and not line.startswith("#"):
                name, text = line.split("\t", 1)
                out[name] = text
    return out


def own_docs(name, doc, summaries):
    """Replaces Redis's prose in one DOCS record (and its subcommands') by ours."""
    t, fields = doc
    out = []
    group = next((v[1].decode() for k, v in fields if k[1] == b"group"), "generic")
    for k, v in fields:
        key = k[1]
        if key == b"summary":
            text = summaries.get(name)
            if text is None:
                words = name.replace("|", " ").upper()
                text = "The %s command (%s group)." % (words, group)
            v = bulk(text)
        elif key == b"complexity":
            m = re.match(rb"O\([^ ]*?\)(?=$|[ ,.])", v[1])
            v = bulk(m.group(0) if m else b"Depends on the arguments")
        elif key == b"history":
            v = (v[0], [(e[0], [e[1][0], bulk(b"Changed in %s." % e[1][0][1])]) for e in v[1]])
        elif key == b"subcommands":
            subs = sorted(v[1], key=lambda kv: kv[0][1])
            v = (v[0], [(sk, own_docs(sk[1].decode(), sv, summaries)) for sk, sv in subs])
        out.append((k, v))
    return (t, out)


def main():
    sock, outdir = sys.argv[1], sys.argv[2]
    here = os.path.dirname(os.path.abspath(__file__))
    summaries = load_summaries(os.path.join(here, "summaries.txt"))
    c = Conn(sock)
    c.call("HELLO", "3")
    version = c.call("INFO", "server")[1]
    assert b"redis_version:7.0.15" in version, "needs redis-server 7.0.15"
    infos = sorted(c.call("COMMAND", "INFO")[1], key=lambda r: r[1][0][1])
    # Redis lists subcommands in its hash table's order; sorted, the files are reproducible.
    for record in infos:
        t, subs = record[1][9]
        record[1][9] = (t, sorted(subs, key=lambda r: r[1][0][1]))
    docs = sorted(c.call("COMMAND", "DOCS")[1], key=lambda kv: kv[0][1])
    docs = [(k, own_docs(k[1].decode(), v, summaries)) for k, v in docs]
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "command_info.resp"), "wb") as f:
        f.write(encode((b"*", infos)))
    with open(os.path.join(outdir, "command_docs.resp"), "wb") as f:
        f.write(encode((b"%", docs)))
    print("%d commands" % len(infos))


if __name__ == "__main__":
    main()
