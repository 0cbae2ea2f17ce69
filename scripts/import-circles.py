#!/usr/bin/env python3
"""Import circles between the files of a Rust crate: which files import each other, directly
or through others (strongly connected components of the graph "file A names an item of file
B"). Issue 23 asks that the server crate have none larger than 4 files; scripts/test.sh runs
this with --max 4 on crates/server, so that a change that closes a larger circle fails.

Usage: scripts/import-circles.py [--max N] CRATE_DIR [CRATE_DIR ...]
  Prints every circle of more than one file, largest first, with the names that tie it;
  exits 1 when one is larger than N files (no limit without --max).

How a file's imports are read (standard library only, no compiler): every path in the code
that starts with `crate::`, `super::` or `self::` (in `use` lines, braces expanded, and
inline, as `crate::aof::writer::spawn(..)`) is resolved to the file of the longest module
prefix it names (`crate::command::table::CommandTable` -> command/table.rs; `super::{spec,
Ctx}` from command/dispatch.rs -> command/mod.rs). Comments, string literals and
`#[cfg(test)]` modules are left out: tests may reach anywhere. `mod x;` declarations are not
imports. A name re-exported with `pub use` counts as the file it is imported from, as the
reader of the code sees it.
"""

import argparse
import os
import re
import sys

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def module_files(src):
    """Module path (tuple) -> file path, for every .rs file under src."""
    mods = {}
    for root, _dirs, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, src)[:-3].split(os.sep)
            if rel[-1] in ("mod", "lib", "main"):
                rel = rel[:-1]
            mods[tuple(rel)] = path
    return mods


def strip_code(text):
    """The text without comments, string and char literals, and #[cfg(test)] modules."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""')
            i = j + 1
        elif c == "r" and re.match(r'r#*"', text[i:i + 4]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r"r(#*)\"", text[i:]).group(1)
            end = '"' + hashes
            j = text.find(end, i + 2 + len(hashes))
            out.append('""')
            i = n if j < 0 else j + len(end)
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]):
            m = re.match(r"'(\\.|[^\\'])'", text[i:])
            out.append("' '")
            i += len(m.group(0))
        else:
            out.append(c)
            i += 1
    code = "".join(out)
    # Drop #[cfg(test)] items (modules and functions): up to their matching brace.
    result = []
    pos = 0
    for m in re.finditer(r"#\[cfg\(test\)\]", code):
        if m.start() < pos:
            continue
        brace = code.find("{", m.end())
        semi = code.find(";", m.end())
        if brace < 0 or (0 <= semi < brace):
            continue
        depth, j = 0, brace
        while j < len(code):
            if code[j] == "{":
                depth += 1
            elif code[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        result.append(code[pos:m.start()])
        pos = j + 1
    result.append(code[pos:])
    return "".join(result)


def expand_use(tree):
    """`a::{b, c::{d, e}}` -> ['a::b', 'a::c::d', 'a::c::e']."""
    tree = tree.strip()
    brace = tree.find("{")
    if brace < 0:
        return [tree]
    prefix = tree[:brace]
    inner = tree[brace + 1:tree.rfind("}")]
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    parts.append(cur)
    paths = []
    for p in parts:
        p = p.strip()
        if not p:
            continue
        if p == "self":
            paths.append(prefix.rstrip(":"))
        else:
            paths.extend(prefix + q for q in expand_use(p))
    return paths


def paths_in(code):
    """Every crate-relative path the code names."""
    found = []
    for m in re.finditer(r"\buse\s+([^;]+);", code):
        found.extend(expand_use(re.sub(r"\s+as\s+" + IDENT, "", m.group(1))))
    body = re.sub(r"\buse\s+[^;]+;", "", code)
    found.extend(m.group(0) for m in re.finditer(r"\b(?:crate|super|self)(?:::(?:super|" + IDENT + "))+", body))
    return [p.replace(" ", "") for p in found if re.match(r"(crate|super|self)::", p.replace(" ", ""))]


def resolve(path, here, mods):
    """The module path (tuple) of the file a path names, from module `here`."""
    segs = path.split("::")
    if segs[0] == "crate":
        base, segs = (), segs[1:]
    else:
        base = here
        while segs and segs[0] in ("super", "self"):
            if segs[0] == "super":
                base = base[:-1]
            segs = segs[1:]
    best = base if base in mods else None
    for k in range(1, len(segs) + 1):
        cand = base + tuple(segs[:k])
        if cand in mods:
            best = cand
        else:
            break
    return best


def circles(src):
    mods = module_files(src)
    # A file's own module: for mod.rs and plain files alike, its module path; `super`
    # from a file is its parent module, except that from a mod.rs `super` is the
    # folder's parent (Rust's rule: mod.rs is the folder's module itself).
    edges = {m: {} for m in mods}
    for m, path in mods.items():
        with open(path, encoding="utf-8") as f:
            code = strip_code(f.read())
        for p in paths_in(code):
            target = resolve(p, m, mods)
            if target is None or target == m:
                continue
            name = p.split("::")[-1]
            edges[m].setdefault(target, set()).add(name)
    # Tarjan's strongly connected components.
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    named = []
    for comp in out:
        members = set(comp)
        ties = [
            (os.path.relpath(mods[a], src), os.path.relpath(mods[b], src), sorted(names))
            for a in sorted(comp)
            for b, names in sorted(edges[a].items())
            if b in members
        ]
        named.append((sorted(os.path.relpath(mods[c], src) for c in comp), ties))
    return sorted(named, key=lambda c: -len(c[0]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max", type=int, default=None, help="fail when a circle has more files")
    ap.add_argument("crates", nargs="+")
    a = ap.parse_args()
    worst = 0
    for crate in a.crates:
        src = os.path.join(crate, "src")
        found = circles(src)
        print(f"{crate}: {len(found)} import circle(s)" + (f", the largest {len(found[0][0])} files" if found else ""))
        for files, ties in found:
            print(f"  circle of {len(files)}: {', '.join(files)}")
            for a_file, b_file, names in ties:
                print(f"    {a_file} -> {b_file}: {', '.join(names[:6])}{' ...' if len(names) > 6 else ''}")
            worst = max(worst, len(files))
    if a.max is not None and worst > a.max:
        print(f"FAIL: a circle of {worst} files (at most {a.max} allowed)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
