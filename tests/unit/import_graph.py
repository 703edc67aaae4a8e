"""The backend's import graph, function-local imports included, for the layering contract.

Modules are dotted names under `assay`; an edge is an import statement anywhere in the
file (top level, inside a function, under TYPE_CHECKING), resolved to the longest module
that exists, so `from assay.core.runs import service` is an edge to
`assay.core.runs.service` and `from assay.db import Base` one to `assay.db`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "backend" / "assay"

# Lowest first. A module may import its own layer and the layers below it.
LAYERS: tuple[tuple[str, ...], ...] = (
    # platform: shared plumbing every layer may use
    ("db", "settings", "instance", "redis_conn", "events", "runtime", "observability",
     "jsonio", "aio", "ratelimit", "admission", "collections_policy", "extensions", "ports"),
    ("providers", "scorers"),
    ("core",),
    # processes and entry points
    ("api", "cli", "jobs", "app", "serve", "supervise", "__main__", "balanced_worker",
     "server_errors", "demo_tour", "demo_experiment", "seeds"),
)


def layer_of(module: str) -> int:
    top = module.split(".")[1] if module.count(".") else ""
    for rank, names in enumerate(LAYERS):
        if top in names:
            return rank
    raise KeyError(f"{module}: its top-level package is in no layer of LAYERS")


def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def _targets(module: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("assay"):
                    yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                origin = ".".join(base + ([node.module] if node.module else []))
            elif node.module and node.module.startswith("assay"):
                origin = node.module
            else:
                continue
            for alias in node.names:
                yield f"{origin}.{alias.name}"


def graph() -> dict[str, set[str]]:
    known = modules()
    edges: dict[str, set[str]] = {m: set() for m in known}
    for module, path in known.items():
        for target in _targets(module, path, known):
            resolved = _resolve(target, known)
            if resolved and resolved != module and resolved != "assay":
                edges[module].add(resolved)
    return edges


def upward(edges: dict[str, set[str]]) -> set[tuple[str, str]]:
    """Imports from a module to one in a higher layer."""
    return {(a, b) for a, targets in edges.items() if a != "assay"
            for b in targets if layer_of(b) > layer_of(a)}


def cycles(edges: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[tuple[str, ...]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(tuple(sorted(component)))
    return sorted(found)
