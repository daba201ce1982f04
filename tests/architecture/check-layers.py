#!/usr/bin/env python3
"""Checks every #include "..." of core/ and app/ against the layer graph that core/CMakeLists.txt declares.

Usage: check-layers.py GRAPH SOURCE_DIR

GRAPH has one line per layer, "folder:dep dep ...", folders from the top of the tree (core/net/fetch,
app/tray). A file in a layer may include its own layer's headers and those of the layers it declares (its
DEPENDS in core/CMakeLists.txt or the app's CMakeLists.txt); anything else is an error: an include that goes
up or sideways, or into app/, and also one of a layer that it reaches only through the layers it declares, so
that each layer's DEPENDS says what it uses. An app/ folder may be a library the front ends share (app/options):
app/ layers may declare it, but no core/ layer may declare anything in app/, so nothing in core/ includes it.
The graph itself must have no cycle. Exits 1 with one line per wrong include, else 0.
"""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
# Where quoted includes are looked up, as the targets' include directories say.
INCLUDE_ROOTS = ("core", "app")


def read_graph(path):
    graph = {}
    for line in pathlib.Path(path).read_text().splitlines():
        if not line.strip():
            continue
        layer, _, deps = line.partition(":")
        if layer in graph:
            sys.exit(f"check-layers: {path}: layer {layer} is declared twice")
        graph[layer] = deps.split()
    for layer, deps in graph.items():
        for dep in deps:
            if dep not in graph:
                sys.exit(f"check-layers: {path}: layer {layer} depends on {dep}, which is not declared")
            if layer.startswith("core/") and not dep.startswith("core/"):
                sys.exit(f"check-layers: {path}: layer {layer} depends on {dep}, but nothing in core/ may use "
                         "app/: the front ends' shared code sits on top of the core")
    return graph


def find_cycle(graph):
    state = {}

    def visit(layer, stack):
        state[layer] = "open"
        for dep in graph[layer]:
            if state.get(dep) == "open":
                return stack[stack.index(dep):] + [dep] if dep in stack else [layer, dep]
            if dep not in state:
                cycle = visit(dep, stack + [dep])
                if cycle:
                    return cycle
        state[layer] = "done"
        return None

    for layer in graph:
        if layer not in state:
            cycle = visit(layer, [layer])
            if cycle:
                return cycle
    return None


def closure(graph, layer):
    seen, todo = set(), list(graph[layer])
    while todo:
        dep = todo.pop()
        if dep not in seen:
            seen.add(dep)
            todo.extend(graph[dep])
    return seen


def layer_of(path, layers):
    """The deepest declared layer folder that holds path (a path from the top), or None."""
    best = None
    for layer in layers:
        if path == layer or path.startswith(layer + "/"):
            if best is None or len(layer) > len(best):
                best = layer
    return best


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    graph = read_graph(sys.argv[1])
    top = pathlib.Path(sys.argv[2])
    if cycle := find_cycle(graph):
        sys.exit("check-layers: the declared graph has a cycle: " + " -> ".join(cycle))

    errors, checked = [], 0
    for root in INCLUDE_ROOTS:
        for source in sorted((top / root).rglob("*")):
            if source.suffix not in (".h", ".cpp"):
                continue
            rel = source.relative_to(top).as_posix()
            own = layer_of(rel, graph)
            if own is None:
                errors.append(f"{rel}: in no declared layer; add its folder to core/CMakeLists.txt")
                continue
            allowed = set(graph[own]) | {own}
            for number, line in enumerate(source.read_text(errors="replace").splitlines(), 1):
                match = INCLUDE.match(line)
                if not match:
                    continue
                name = match.group(1)
                target = None
                if (source.parent / name).is_file():
                    target = (source.parent / name).resolve().relative_to(top.resolve()).as_posix()
                else:
                    for include_root in INCLUDE_ROOTS:
                        if (top / include_root / name).is_file():
                            target = f"{include_root}/{name}"
                            break
                if target is None:
                    continue  # not nicer's own header (a generated one, or a system header in quotes)
                checked += 1
                wanted = layer_of(target, graph)
                if wanted is None:
                    errors.append(f"{rel}:{number}: includes {name}, which is in no declared layer")
                elif wanted in closure(graph, own) and wanted not in allowed:
                    errors.append(f"{rel}:{number}: includes {name}, but {own} does not declare {wanted}, "
                                  "which it reaches only through the layers it declares: add it to its DEPENDS "
                                  "if it uses it directly")
                elif wanted not in allowed:
                    errors.append(f"{rel}:{number}: includes {name}, but {own} may not use {wanted} "
                                  f"(it declares: {' '.join(sorted(graph[own])) or 'nothing'})")
    if errors:
        print(f"check-layers: FAIL: {len(errors)} include(s) against the layer graph of core/CMakeLists.txt "
              "(docs/architecture.md):")
        for error in errors:
            print("  " + error)
        print("  fix: include only from the layers declared, or move the code to where it belongs; change the "
              "graph only when the design does")
        return 1
    print(f"check-layers: ok: {checked} includes in {len(graph)} layers follow the graph")
    return 0


if __name__ == "__main__":
    sys.exit(main())
