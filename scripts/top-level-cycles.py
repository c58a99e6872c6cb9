#!/usr/bin/env python3
"""Import cycles between the top-level modules of the edgebench library (`src/<module>`), read
from the source itself, so it needs no tool beyond python3 and runs in `scripts/test`.

Every `crate::NAME` path outside comments, in a file under `src/NAME2/` (or `src/NAME2.rs`),
is an edge NAME2 -> NAME. Tests count too (`#[cfg(test)]` modules and `tests.rs` files):
a test that reaches up is an upward import all the same. `lib.rs` and `main.rs` sit above
everything and are left out. Exits 1 listing each cycle (a strongly connected component of
two or more modules) with the files behind each of its edges.

    scripts/top-level-cycles.py            # check
    scripts/top-level-cycles.py --graph    # print every edge, then check
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
PATH = re.compile(r"\bcrate::([a-z_][a-z0-9_]*)")
# `use crate::{a, b::c}`: each name in the braces is a top-level module too.
BRACED = re.compile(r"\bcrate::\{([^}]*)\}", re.S)


def strip_comments(text):
    """The source without // and /* */ comments (doc comments included) or string contents."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif text[i] == '"' and not re.match(r"[A-Za-z0-9_']", text[i - 1] if i else " "):
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""')
            i = j + 1
        elif text.startswith('r#"', i) or text.startswith('r"', i):
            hashes = 1 if text[i + 1] == "#" else 0
            close = '"' + "#" * hashes
            j = text.find(close, i + 2 + hashes)
            out.append('""')
            i = n if j < 0 else j + len(close)
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def top_level(rel):
    first = rel.split(os.sep)[0]
    return first[:-3] if first.endswith(".rs") else first


def main():
    modules = {top_level(e) for e in os.listdir(ROOT)} - {"lib", "main"}
    edges = {}
    for dirpath, _, files in os.walk(ROOT):
        for f in files:
            if not f.endswith(".rs"):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, ROOT)
            src = top_level(rel)
            if src in ("lib", "main"):
                continue
            code = strip_comments(open(path, encoding="utf-8").read())
            names = set(PATH.findall(code))
            for group in BRACED.findall(code):
                names.update(re.findall(r"(?:^|,)\s*([a-z_][a-z0-9_]*)", group))
            for dst in names:
                if dst in modules and dst != src:
                    edges.setdefault((src, dst), set()).add(rel)
    adj = {m: set() for m in modules}
    for a, b in edges:
        adj[a].add(b)
    if "--graph" in sys.argv:
        for (a, b), files in sorted(edges.items()):
            print(f"{a} -> {b}  ({len(files)} file{'s' if len(files) > 1 else ''})")
    comps = sccs(adj)
    cycles = [c for c in comps if len(c) > 1]
    if not cycles:
        print(f"top-level modules: {len(modules)}, imports between them: {len(edges)}, no cycle")
        return 0
    for comp in cycles:
        print("cycle between top-level modules: " + ", ".join(sorted(comp)))
        for (a, b), files in sorted(edges.items()):
            if a in comp and b in comp:
                print(f"  {a} -> {b}: " + ", ".join(sorted(files)))
    print("fix: move the shared piece down (below both), or invert the call with a trait "
          "the lower module defines")
    return 1


def sccs(adj):
    """Tarjan's strongly connected components, iteratively."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], 0
    for root in sorted(adj):
        if root in index:
            continue
        work = [(root, iter(sorted(adj[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            pushed = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(adj[w]))))
                    pushed = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if pushed:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                out.append(comp)
    return out


if __name__ == "__main__":
    sys.exit(main())
