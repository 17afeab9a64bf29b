"""Dependencies point one way: ``arena`` and ``sandbox`` never use the service stack."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PURE_PACKAGES = ("arena", "sandbox")
FORBIDDEN = frozenset({"flask", "sqlalchemy", "celery", "web"})


def imported_roots(source: str) -> set[str]:
    """The top-level names of every module a piece of source imports (absolute imports)."""
    roots = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def pure_modules() -> list[Path]:
    return sorted(p for pkg in PURE_PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def test_the_ast_check_sees_imports() -> None:
    source = "import flask.json\nfrom sqlalchemy.orm import Session\nfrom . import web\n"
    assert imported_roots(source) == {"flask", "sqlalchemy"}


@pytest.mark.parametrize("path", pure_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_pure_module_imports_no_service_code(path: Path) -> None:
    bad = imported_roots(path.read_text()) & FORBIDDEN
    assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


IMPORT_ALL = """
import importlib, pkgutil, sys
for name in {packages!r}:
    package = importlib.import_module(name)
    for info in pkgutil.walk_packages(package.__path__, name + "."):
        importlib.import_module(info.name)
loaded = sorted({{m.split(".")[0] for m in sys.modules}} & {forbidden!r})
print(",".join(loaded))
"""


def test_importing_every_pure_module_loads_no_service_code() -> None:
    code = IMPORT_ALL.format(packages=PURE_PACKAGES, forbidden=set(FORBIDDEN))
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", f"service modules loaded: {done.stdout.strip()}"


# --- no import circles, lazy imports included ------------------------------------------------

CHECKED_PACKAGES = ("arena", "web", "sandbox")


def module_files(root: Path, packages: tuple[str, ...]) -> dict[str, Path]:
    """Every module of ``packages`` under ``root``, by dotted name (a package by its own name);
    Alembic's migrations are scripts, not modules, and are left out."""
    found = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if "migrations" in parts:
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _known(name: str, modules: dict[str, Path]) -> str | None:
    """The module ``name`` names, or the nearest package above it that is one of ours."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imported(node: ast.Import | ast.ImportFrom, here: str, is_package: bool) -> list[str]:
    """The dotted names of what an import statement loads: for ``from m import a, b``, m and
    each of m.a and m.b (kept by the caller only where it is a module: a submodule)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = here if is_package else here.rpartition(".")[0]
        parts = package.split(".")
        parts = parts[: len(parts) - node.level + 1]
        base = ".".join([*parts, base] if base else parts)
    return [base] + [f"{base}.{alias.name}" for alias in node.names]


def import_graph(root: Path, packages: tuple[str, ...]) -> dict[str, set[str]]:
    """Who imports whom among the modules of ``packages``: every import statement counts, at
    the top of a module or inside a function (a lazy import is still a dependency)."""
    modules = module_files(root, packages)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            base, *names = _imported(node, name, is_package)
            if isinstance(node, ast.ImportFrom):
                wanted = [_known(base, modules), *(n for n in names if n in modules)]
            else:
                wanted = [_known(n, modules) for n in (base, *names)]
            for found in wanted:
                # A module's own packages are imported before it, by Python itself.
                if found and found != name and not name.startswith(found + "."):
                    graph[name].add(found)
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The circles of ``graph``: its strongly connected components of more than one module
    (Tarjan's algorithm, without recursion), each sorted, in sorted order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
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
                        circles.append(sorted(component))
    return sorted(circles)


def _write(root: Path, files: dict[str, str]) -> None:
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)


def test_the_circle_finder_sees_a_lazy_circle_through_a_submodule(tmp_path: Path) -> None:
    """``low`` imports ``high`` only inside a function, by ``from pkg import high``; ``high``
    imports ``low`` relatively at its top: a circle all the same. ``other`` is no part of it."""
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/low.py": "def later():\n    from pkg import high\n    return high\n",
            "pkg/high.py": "from . import low\nfrom .other import VALUE\n",
            "pkg/other.py": "import pkg.sub.leaf\nVALUE = 1\n",
            "pkg/sub/__init__.py": "",
            "pkg/sub/leaf.py": "from ..other import VALUE\n",
        },
    )
    graph = import_graph(tmp_path, ("pkg",))
    assert graph["pkg.low"] == {"pkg.high"}
    assert graph["pkg.high"] == {"pkg.low", "pkg.other"}
    assert import_circles(graph) == [
        ["pkg.high", "pkg.low"],
        ["pkg.other", "pkg.sub.leaf"],
    ]


def test_the_circle_finder_finds_none_where_there_is_none(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "from pkg.top import run\n",
            "pkg/top.py": "from pkg import base\n\ndef run():\n    import pkg.base\n",
            "pkg/base.py": "import json\nfrom pkg import __name__ as name\n",
        },
    )
    graph = import_graph(tmp_path, ("pkg",))
    assert graph["pkg.top"] == {"pkg.base"}
    assert import_circles(graph) == []


def test_no_module_imports_itself_back() -> None:
    """No import circle in arena/, web/ or sandbox/, lazy imports included: each layer and
    each module within one depends only on what sits below it."""
    circles = import_circles(import_graph(ROOT, CHECKED_PACKAGES))
    assert circles == [], "import circles: " + "; ".join(" <-> ".join(c) for c in circles)
