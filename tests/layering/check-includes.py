#!/usr/bin/env python3
"""Check the direction of #include "..." between the directories of the tree.

Reads every #include "..." in src/, include/, tools/, bench/ and tests/,
resolves it to a file of the repository (first relative to the including
file, then against src/ and include/, the project's include directories), and
maps both files to a node:

    src/<module>/...  -> <module>  (base: atomics, wait, log, median3, config,
                                    datatype, redop, stats, names; core: the
                                    dispatcher; shm, hier, rma, barrier, model,
                                    locks; pmpi: the PMPI shim, a separate library)
    include/...       -> include   (the public header)
    tools/, bench/    -> tools, bench
    tests/...         -> tests

The allowed direction (issue 15):

    base  <-  {shm, hier, rma, barrier, model, locks}  <-  core  <-  pmpi/tools/bench

    - base includes nothing of ours (not even the public header);
    - the modules include base, the public header and each other, except:
      shm does not include hier, rma or core; model and locks include only base;
    - core includes anything below it;
    - pmpi uses only the public header (it is a separate library);
    - tools and bench include anything below them;
    - tests may include anything;
    - no cycle between directories;
    - the tools and the benchmark take from core only its query interface
      (core/query.h: functions and plain result structs), and do not include
      the headers of the internal state it reads for them (shm/segment.h,
      hier/hier.h, hier/hier_build.h): no tool reads tc_ctx_t, tc_shm_comm_t
      or tc_hier_t;
    - an include is spelled one way: a sibling by its name ("log.h"), anything
      else from src/ ("base/log.h"), never "../base/log.h".

Usage:
    check-includes.py [--root DIR]            check the rules; exit 1 on a violation
    check-includes.py [--root DIR] --graph    print the directory graph and its cycles
                                              (and still check; --graph --no-check
                                              only prints)

Exit status: 0 when every rule holds, 1 otherwise, 2 on a usage error.
No baseline: every violation counts, old or new. The test command runs it
(ctest test layering_includes, labels unit and layering, tests/layering/
CMakeLists.txt), so an include against the direction fails the suite.
"""

import argparse
import os
import re
import sys

SCANNED = ("src", "include", "tools", "bench", "tests")
SOURCE_EXT = (".c", ".h", ".cc", ".cpp", ".inc")
INCLUDE_DIRS = ("src", "include")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')

MODULES = {"shm", "hier", "rma", "barrier", "model", "locks"}

# node -> set of nodes it may include (itself is always allowed).
ALLOWED = {
    "base": set(),
    "shm": {"base", "include", "barrier", "model", "locks"},
    "hier": {"base", "include"} | MODULES,
    "rma": {"base", "include"} | MODULES,
    "barrier": {"base", "include"} | MODULES,
    "model": {"base"},
    "locks": {"base"},
    "core": {"base", "include"} | MODULES,
    "pmpi": {"include"},
    "tools": {"base", "include", "core"} | MODULES,
    "bench": {"base", "include", "core"} | MODULES,
    "include": set(),
}
# tests: anything.

# node -> files of ours it may not include even though their node is allowed.
INTERNAL_STATE = {"src/core/ctx.h", "src/shm/segment.h", "src/hier/hier.h", "src/hier/hier_build.h"}
FORBIDDEN_FILES = {
    "tools": INTERNAL_STATE,
    "bench": INTERNAL_STATE,
}
# node -> {node it includes: the only files of that node it may include}.
ONLY_FILES = {
    "tools": {"core": {"src/core/query.h"}},
    "bench": {"core": {"src/core/query.h"}},
}


def node_of(rel):
    """Directory node of a repository-relative path (or None if not ours)."""
    parts = rel.split("/")
    top = parts[0]
    if top == "src":
        return parts[1] if len(parts) > 2 else "src"
    if top in ("include", "tools", "bench", "tests"):
        return top
    return None


def scan(root):
    files = []
    for top in SCANNED:
        base = os.path.join(root, top)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("build"))
            for name in sorted(filenames):
                if name.endswith(SOURCE_EXT):
                    files.append(os.path.relpath(os.path.join(dirpath, name), root))
    return files


def resolve(root, including, target):
    """Repository-relative path of the included file, or None (system/generated)."""
    candidates = [os.path.join(os.path.dirname(including), target)]
    candidates += [os.path.join(d, target) for d in INCLUDE_DIRS]
    for c in candidates:
        path = os.path.normpath(c)
        if path.startswith(".."):
            continue
        if os.path.isfile(os.path.join(root, path)):
            return path
    return None


def find_cycles(edges):
    """Strongly connected components with more than one node (Tarjan)."""
    graph = {}
    for (a, b) in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index, low, stack, on_stack, comps = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
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
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return sorted(comps)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    ap.add_argument("--graph", action="store_true", help="print the directory graph and cycles")
    ap.add_argument("--no-check", action="store_true", help="with --graph: do not check rules")
    args = ap.parse_args()
    root = os.path.abspath(args.root)

    edges = {}  # (from node, to node) -> [file:line -> target]
    violations = []
    for rel in scan(root):
        src_node = node_of(rel)
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
            for lineno, line in enumerate(fh, 1):
                m = INCLUDE_RE.match(line)
                if not m:
                    continue
                target = m.group(1)
                dst = resolve(root, rel, target)
                if dst is None:
                    continue
                dst_node = node_of(dst)
                where = "%s:%d" % (rel, lineno)
                if target.startswith("../") or "/../" in target:
                    violations.append(("spelling", where, '"%s" (write it from src/ or as a '
                                       'sibling)' % target))
                if src_node == dst_node or dst_node is None or src_node is None:
                    continue
                edges.setdefault((src_node, dst_node), []).append("%s -> %s" % (where, dst))
                if src_node == "tests":
                    continue
                allowed = ALLOWED.get(src_node)
                if allowed is None:
                    violations.append(("unknown-dir", where, "%s is in no layer" % src_node))
                elif dst_node not in allowed:
                    violations.append(("direction", where, "%s includes %s (%s)" %
                                       (src_node, dst_node, dst)))
                elif dst in FORBIDDEN_FILES.get(src_node, ()):
                    violations.append(("internal", where, "%s includes %s" % (src_node, dst)))
                elif dst not in ONLY_FILES.get(src_node, {}).get(dst_node, (dst,)):
                    violations.append(("internal", where, "%s includes %s (only %s of %s)" %
                                       (src_node, dst, ", ".join(sorted(
                                           ONLY_FILES[src_node][dst_node])), dst_node)))
    cycles = find_cycles(edges.keys())
    for comp in cycles:
        violations.append(("cycle", "-", " <-> ".join(comp)))

    if args.graph:
        print("directory dependency graph (from -> to: includes):")
        for (a, b) in sorted(edges):
            print("  %-8s -> %-8s %3d" % (a, b, len(edges[(a, b)])))
        print("cycles (strongly connected directories):")
        if not cycles:
            print("  none")
        for comp in cycles:
            print("  " + " <-> ".join(comp))
        if args.no_check:
            return 0

    if violations:
        kinds = {}
        for kind, where, what in violations:
            kinds[kind] = kinds.get(kind, 0) + 1
            print("LAYERING %s: %s: %s" % (kind, where, what))
        print("check-includes: %d violation(s): %s" %
              (len(violations), ", ".join("%s %d" % kv for kv in sorted(kinds.items()))))
        return 1
    print("check-includes: every include follows the layering")
    return 0


if __name__ == "__main__":
    sys.exit(main())
