"""The import graph of src/specbridge has one circle only: the rules registry's self-registration.

Read from the source with `ast` (scripts/import_circles.py), nothing of the package imported: a new circle, at
module level or through an import inside a function, fails here with the modules that form it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_SPEC = importlib.util.spec_from_file_location("import_circles", ROOT / "scripts" / "import_circles.py")
circles_tool = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(circles_tool)

SRC = ROOT / "src"


def _shown(found: list[list[str]]) -> str:
    return "; ".join(" <-> ".join(c) for c in found)


def test_no_circle_at_module_level_beyond_the_registry():
    found = circles_tool.circles(circles_tool.import_graph(SRC, lazy=False))
    assert circles_tool.unexpected_circles(found) == [], _shown(circles_tool.unexpected_circles(found))
    assert len(found) == 1 and circles_tool.ALLOWED_CIRCLE_ANCHOR in found[0]


def test_no_circle_through_function_level_or_type_checking_imports_either():
    """An import moved inside a function or under TYPE_CHECKING hides a circle from import order, not from the
    design."""
    found = circles_tool.circles(circles_tool.import_graph(SRC, lazy=True))
    assert circles_tool.unexpected_circles(found) == [], _shown(circles_tool.unexpected_circles(found))


def _write(root: Path, name: str, text: str) -> None:
    path = root / "specbridge" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_measure_sees_relative_lazy_and_submodule_imports(tmp_path):
    """The measure itself: `from . import b` (a submodule), `from ..x import y` and a function's import each count;
    a TYPE_CHECKING import counts among every import written, not among those that run at import time."""
    _write(tmp_path, "__init__.py", "")
    _write(tmp_path, "a.py", "from . import b\n")
    _write(tmp_path, "b.py", "def f():\n    from .pkg.c import g\n")
    _write(tmp_path, "pkg/__init__.py", "")
    _write(tmp_path, "pkg/c.py", "from ..a import x\ndef g(): pass\n")
    _write(tmp_path, "d.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .e import z\n")
    _write(tmp_path, "e.py", "from .d import w\n")
    eager = circles_tool.import_graph(tmp_path, lazy=False)
    assert eager["specbridge.a"] == {"specbridge.b"}
    assert eager["specbridge.b"] == set()
    assert circles_tool.circles(eager) == []
    lazy = circles_tool.import_graph(tmp_path, lazy=True)
    assert ["specbridge.a", "specbridge.b", "specbridge.pkg.c"] in circles_tool.circles(lazy)
    assert "specbridge.e" not in eager["specbridge.d"] and "specbridge.e" in lazy["specbridge.d"]
    assert ["specbridge.d", "specbridge.e"] in circles_tool.circles(lazy)
    assert circles_tool.unexpected_circles(circles_tool.circles(lazy)) == circles_tool.circles(lazy)
