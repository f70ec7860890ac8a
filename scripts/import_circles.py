"""Print the import circles (strongly connected components) of src/specbridge.

Why: a circle makes a module's meaning depend on import order and hides which
piece owns a shared name. The project allows exactly one: the rules registry's
self-registration (rules/registry.py imports the rule modules at its end so that
their ``@rule`` decorators run, and they import the registry). This script
measures the graph without importing the package, from ``ast`` alone, so it is
safe and fast; tests/test_import_circles.py runs the same measure.

Two graphs are printed: module-level imports only (what runs at import time;
``if TYPE_CHECKING:`` blocks left out), and every import written: the same plus
the imports inside functions (lazy imports) and under TYPE_CHECKING (types only):
not a load-order circle, but still a tangle.

    python scripts/import_circles.py [--lazy] [--src src]
"""

from __future__ import annotations

import argparse
import ast
import functools
import sys
from collections.abc import Iterator
from pathlib import Path

PACKAGE = "specbridge"

# The one circle the project accepts: the rule modules register themselves in
# the registry, which imports them all at its end.
ALLOWED_CIRCLE_ANCHOR = f"{PACKAGE}.rules.registry"


def module_names(src: Path) -> dict[str, Path]:
    """Every module of the package by dotted name (a package is its __init__)."""
    names: dict[str, Path] = {}
    for path in sorted((src / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, lazy: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements that run at import time; with `lazy`, every one written (function bodies and
    TYPE_CHECKING blocks too)."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield child
            elif isinstance(child, ast.If) and _is_type_checking(child) and not lazy:
                continue
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                if lazy:
                    stack.append(child)
            else:
                stack.append(child)


def _base(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute dotted name an ImportFrom reads from (relative levels resolved)."""
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    anchor = parts if is_package else parts[:-1]
    anchor = anchor[: len(anchor) - (node.level - 1)]
    return ".".join([*anchor, node.module] if node.module else anchor)


def _nearest(name: str, modules: dict[str, Path]) -> str | None:
    """The deepest module of the package that `name` lies in (None: outside it)."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


@functools.cache
def _parsed(src: Path) -> dict[str, tuple[Path, ast.Module]]:
    """Every module's syntax tree, parsed once for both graphs."""
    return {name: (path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))) for name, path in module_names(src).items()}


def import_graph(src: Path, lazy: bool = False) -> dict[str, set[str]]:
    """Module -> the package modules it imports (an `import a.b.c` names a.b.c); `lazy`: every import written."""
    modules = module_names(src)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for module, (path, tree) in _parsed(src).items():
        is_package = path.name == "__init__.py"
        for node in _imports(tree, lazy):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = _base(module, is_package, node)
                # `from pkg import sub` imports the submodule pkg.sub when there is one.
                targets = [f"{base}.{alias.name}" for alias in node.names] or [base]
                targets = [t if t in modules else base for t in targets]
            for target in targets:
                resolved = _nearest(target, modules)
                if resolved and resolved != module:
                    graph[module].add(resolved)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module, each sorted (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(root: str) -> None:
        # Iterative Tarjan: the graph is small, but recursion depth is not ours to spend.
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return sorted(found)


def unexpected_circles(found: list[list[str]]) -> list[list[str]]:
    """The circles beyond the allowed one (the registry's self-registration)."""
    return [c for c in found if ALLOWED_CIRCLE_ANCHOR not in c]


def _report(title: str, found: list[list[str]], graph: dict[str, set[str]]) -> None:
    print(f"{title}: {len(found)} circle(s)")
    for number, members in enumerate(found, 1):
        print(f"  circle {number}: {len(members)} modules")
        inside = set(members)
        for member in members:
            ties = sorted(graph[member] & inside)
            print(f"    {member} -> {', '.join(ties)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=Path(__file__).resolve().parents[1] / "src")
    args = parser.parse_args(argv)
    eager = import_graph(args.src, lazy=False)
    with_lazy = import_graph(args.src, lazy=True)
    eager_circles = circles(eager)
    _report("module-level imports", eager_circles, eager)
    _report("every import written (function-level and TYPE_CHECKING too)", circles(with_lazy), with_lazy)
    return 1 if unexpected_circles(eager_circles) or unexpected_circles(circles(with_lazy)) else 0


if __name__ == "__main__":
    sys.exit(main())
