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
