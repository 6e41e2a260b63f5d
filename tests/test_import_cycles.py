"""No two modules of ``app`` and ``codec`` import each other, directly or through others.

Every import counts: at module level, under ``if TYPE_CHECKING:``, and inside
functions (a lazy import still says "this module needs that one"), so a design
loop cannot hide behind any of them. The graph is built from the source with
``ast`` (nothing is imported), over every ``.py`` file found under app/ and
codec/, so it follows modules as they move.

How an import becomes an edge:

- ``import a.b.c`` is an edge to ``a.b.c``; ``from a.b import n`` is an edge to
  ``a.b.n`` when that is a module, else to ``a.b``. Relative imports are
  resolved against the importing module's package first.
- A package's ``__init__`` is a module of its own, reached only when the
  package itself is named: ``import codec``, ``from codec import TFRecordFile``,
  ``from . import name`` for a name that is not a submodule. ``from codec.x
  import y`` is an edge to ``codec.x`` alone, not to the ``codec`` facade that
  Python runs first: the facade loads its names lazily (module
  ``__getattr__``), so running it imports nothing of the package.
- The facade's own edges are the imports written in it (its ``TYPE_CHECKING``
  block names every module it serves), so a codec module that imports
  ``codec`` itself closes a real loop and is reported. Imports by string
  (``importlib.import_module``) are not seen.
- Imports of anything outside app/ and codec/ (the standard library, Qt,
  numpy) are not edges; neither is a module importing itself.
"""
from __future__ import annotations

import ast
from collections import deque
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("app", "codec")

Edge = tuple[str, int, str]  # (file, line, where: "module", "TYPE_CHECKING" or "function")


def find_modules(root: Path, packages: tuple[str, ...]) -> dict[str, Path]:
    """Dotted module name -> source file, for every ``.py`` under the packages' folders."""
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if any(part == "__pycache__" or part.startswith(".") for part in parts):
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def _where(parents: list[ast.AST]) -> str:
    """Whether an import sits in a function, under ``if TYPE_CHECKING:``, or at module level."""
    if any(isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) for p in parents):
        return "function"
    for p in parents:
        if isinstance(p, ast.If) and any(isinstance(n, (ast.Name, ast.Attribute)) and
                                         (getattr(n, "id", None) or getattr(n, "attr", None)) == "TYPE_CHECKING"
                                         for n in ast.walk(p.test)):
            return "TYPE_CHECKING"
    return "module"


def _imports(tree: ast.AST):
    """Every Import / ImportFrom node with the nodes enclosing it, outermost first."""
    stack: list[tuple[ast.AST, list[ast.AST]]] = [(tree, [])]
    while stack:
        node, parents = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, parents
        for child in ast.iter_child_nodes(node):
            stack.append((child, parents + [node]))


def _known(name: str, modules: dict[str, Path]) -> str | None:
    """``name`` if it is a project module, else its longest prefix that is one (None if no prefix is)."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def _targets(node: ast.Import | ast.ImportFrom, module: str, modules: dict[str, Path]) -> list[str]:
    """The project modules one import statement in ``module`` depends on."""
    if isinstance(node, ast.Import):
        return [t for alias in node.names if (t := _known(alias.name, modules))]
    if node.level:
        is_package = modules[module].name == "__init__.py"
        base = module.split(".")
        base = base if is_package else base[:-1]
        base = base[: len(base) - (node.level - 1)]
        origin = ".".join(base + ([node.module] if node.module else []))
    else:
        origin = node.module or ""
    targets = []
    for alias in node.names:
        submodule = f"{origin}.{alias.name}"
        if alias.name != "*" and submodule in modules:
            targets.append(submodule)
        elif (t := _known(origin, modules)) is not None:
            targets.append(t)
    return targets


def import_graph(root: Path, packages: tuple[str, ...]) -> dict[str, dict[str, Edge]]:
    """module -> {imported module -> where the first such import is}, over the packages' modules."""
    modules = find_modules(root, packages)
    graph: dict[str, dict[str, Edge]] = {m: {} for m in modules}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node, parents in _imports(tree):
            for target in _targets(node, module, modules):
                if target != module:
                    where = (path.relative_to(root).as_posix(), node.lineno, _where(parents))
                    graph[module].setdefault(target, where)
    return graph


def strongly_connected(graph: dict[str, dict[str, Edge]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
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
                components.append(sorted(component))
    return components


def _shortest_path(graph: dict[str, dict[str, Edge]], start: str, goal: str, within: set[str]) -> list[str]:
    previous = {start: start}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node == goal:
            path = [goal]
            while path[-1] != start:
                path.append(previous[path[-1]])
            return path[::-1]
        for child in sorted(graph[node]):
            if child in within and child not in previous:
                previous[child] = node
                queue.append(child)
    raise AssertionError(f"{goal} is not reachable from {start} inside its component")


def cycles(graph: dict[str, dict[str, Edge]]) -> list[list[str]]:
    """For each edge inside a component of two or more modules, the shortest loop through it.

    Each loop is a chain ``[a, b, ..., a]``; rotations of one loop are reported once.
    """
    found: dict[tuple[str, ...], list[str]] = {}
    for component in strongly_connected(graph):
        if len(component) < 2:
            continue
        members = set(component)
        for a in component:
            for b in sorted(graph[a]):
                if b in members:
                    loop = [a] + _shortest_path(graph, b, a, members)
                    ring = loop[:-1]
                    turn = ring.index(min(ring))
                    found.setdefault(tuple(ring[turn:] + ring[:turn]), loop)
    return [found[key] for key in sorted(found)]


def describe(loop: list[str], graph: dict[str, dict[str, Edge]]) -> str:
    """``a -> b (a.py:12, TYPE_CHECKING) -> a (b.py:3, function)``: each hop with the import that makes it."""
    hops = [loop[0]]
    for a, b in zip(loop, loop[1:]):
        file, line, where = graph[a][b]
        hops.append(f"{b} ({file}:{line}, {where})")
    return " -> ".join(hops)


# -- the checker itself, on small packages whose loops are known ---------------------------
def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_loops_through_type_checking_and_function_imports_are_found(tmp_path):
    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import B\n",
        "pkg/b.py": "def f():\n    from .c import C\n",
        "pkg/c.py": "from . import a\nimport os\n",
        "pkg/d.py": "import pkg.a\n",  # into the loop, not part of it
    })
    graph = import_graph(tmp_path, ("pkg",))
    assert graph["pkg.a"]["pkg.b"] == ("pkg/a.py", 3, "TYPE_CHECKING")
    assert graph["pkg.b"]["pkg.c"] == ("pkg/b.py", 2, "function")
    assert graph["pkg.c"] == {"pkg.a": ("pkg/c.py", 1, "module")}
    assert [c for c in strongly_connected(graph) if len(c) > 1] == [["pkg.a", "pkg.b", "pkg.c"]]
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.c", "pkg.a"]]
    assert describe(cycles(graph)[0], graph) == (
        "pkg.a -> pkg.b (pkg/a.py:3, TYPE_CHECKING) -> pkg.c (pkg/b.py:2, function) -> pkg.a (pkg/c.py:1, module)")


def test_a_submodule_import_is_no_edge_to_the_facade_but_importing_the_package_is(tmp_path):
    _write(tmp_path, {
        "lib/__init__.py": "TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from .x import X\n    from .y import Y\n",
        "lib/x.py": "from lib.y import Y\nfrom .sub.deep import f\n",
        "lib/y.py": "import lib.sub\n",
        "lib/sub/__init__.py": "from ..y import Y\n",  # a loop with lib.y through the subpackage's __init__
        "lib/sub/deep.py": "from .. import x\n",  # relative from a subpackage: lib.x, a second loop
        "lib/z.py": "from lib import X\n",  # the facade itself: lib -> lib.x ... and lib.z -> lib
    })
    graph = import_graph(tmp_path, ("lib",))
    assert set(graph["lib.x"]) == {"lib.y", "lib.sub.deep"}
    assert set(graph["lib.y"]) == {"lib.sub"}
    assert set(graph["lib.sub.deep"]) == {"lib.x"}
    assert set(graph["lib.z"]) == {"lib"}
    assert cycles(graph) == [["lib.sub", "lib.y", "lib.sub"], ["lib.sub.deep", "lib.x", "lib.sub.deep"]]

    (tmp_path / "lib" / "x.py").write_text("import lib\n")  # now the facade is part of a loop
    assert ["lib", "lib.x", "lib"] in cycles(import_graph(tmp_path, ("lib",)))


@pytest.mark.slow
def test_the_project_graph_is_read_from_the_source():
    graph = import_graph(ROOT, PACKAGES)
    assert "codec" in graph and "app" in graph and len(graph) > 40
    assert graph["codec.decode.images"]["codec.decode.decoder"][2] == "module"
    assert "codec.sources.tfrecord_file" in graph["codec"]  # the facade's TYPE_CHECKING block
    assert "codec" not in graph["codec.decode.images"]


# -- the project ------------------------------------------------------------------------------
@pytest.mark.slow
def test_no_import_cycles_between_app_and_codec_modules():
    graph = import_graph(ROOT, PACKAGES)
    loops = cycles(graph)
    components = [c for c in strongly_connected(graph) if len(c) > 1]
    assert not components, (
        f"{len(components)} group(s) of modules import each other: "
        + "; ".join("{" + ", ".join(c) + "}" for c in components)
        + "\nloops (shortest through each import):\n" + "\n".join(describe(loop, graph) for loop in loops))
