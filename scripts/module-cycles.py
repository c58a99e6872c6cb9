#!/usr/bin/env python3
"""Import cycles between a crate's modules, from `cargo modules dependencies` (cargo-modules
0.27) DOT output on stdin: the strongly connected components of its "uses" edges.

    cargo modules dependencies --lib -p edgebench --no-externs --no-fns --no-sysroot \
        --no-traits --no-types | scripts/module-cycles.py edgebench

Exits 1 when there is a cycle, listing each with its edges."""
import re
import sys

sys.setrecursionlimit(100000)
crate = sys.argv[1] if len(sys.argv) > 1 else "edgebench"
adj = {}
edge = re.compile(r'\s*"([^"]+)"\s*->\s*"([^"]+)"\s*\[label="uses"')
for line in sys.stdin:
    m = edge.match(line)
    if not m:
        continue
    a, b = m.groups()
    if a.split("::")[0] != crate or b.split("::")[0] != crate or a == b:
        continue
    adj.setdefault(a, set()).add(b)
    adj.setdefault(b, set())

# Tarjan's strongly connected components.
index, low, stack, on_stack, comps, counter = {}, {}, [], set(), [], [0]


def visit(v):
    index[v] = low[v] = counter[0]
    counter[0] += 1
    stack.append(v)
    on_stack.add(v)
    for w in sorted(adj[v]):
        if w not in index:
            visit(w)
            low[v] = min(low[v], low[w])
        elif w in on_stack:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop()
            on_stack.discard(w)
            comp.append(w)
            if w == v:
                break
        comps.append(comp)


for v in sorted(adj):
    if v not in index:
        visit(v)
edges = sum(len(s) for s in adj.values())
cycles = [sorted(c) for c in comps if len(c) > 1]
print(f"{crate}: {len(adj)} modules, {edges} uses edges, {len(cycles)} cycles")
for comp in cycles:
    print("cycle:", ", ".join(comp))
    for a in comp:
        for b in sorted(adj[a] & set(comp)):
            print(f"    {a} -> {b}")
sys.exit(1 if cycles else 0)
