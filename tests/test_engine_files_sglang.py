"""SGLang's and TensorRT-LLM's tables are packages of one file per drafter family (src/specbridge/engines/sglang/,
trtllm/): importing a package reads none of its files, `family_ranges(family)` reads that family's files only and
answers what FAMILY_RANGES holds for it, and no file grows past what a newcomer can read for one family."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from specbridge.families.table import FAMILIES

ENGINES_DIR = Path(__file__).resolve().parents[1] / "src" / "specbridge" / "engines"
PACKAGES = ("sglang", "trtllm")
MAX_LINES = 1000


def _run(code: str) -> str:
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return run.stdout.strip()


def test_importing_the_package_and_one_family_reads_only_that_familys_file():
    loaded = _run(
        "import sys\n"
        "import specbridge.engines.sglang as sg\n"
        "before = sorted(m for m in sys.modules if m.startswith('specbridge.engines.sglang.'))\n"
        "rows = sg.family_ranges('dflash')\n"
        "after = sorted(m for m in sys.modules if m.startswith('specbridge.engines.sglang.'))\n"
        "print(len(rows), before, after)"
    )
    count, rest = loaded.split(" ", 1)
    assert int(count) > 0
    assert rest == "[] ['specbridge.engines.sglang.dflash']"


def test_the_family_map_names_every_family_of_the_family_table():
    """FAMILY_MODULES holds each drafter family other than EAGLE-3 (ERAS) and plain draft models (DRAFT_MODEL)."""
    families = {f.name for f in FAMILIES} - {"eagle3", "causal_lm"}
    for name in PACKAGES:
        pkg = importlib.import_module(f"specbridge.engines.{name}")
        assert set(pkg.FAMILY_MODULES) == families, name


@pytest.mark.parametrize("name", PACKAGES)
def test_family_ranges_is_family_ranges_filtered(name):
    pkg = importlib.import_module(f"specbridge.engines.{name}")
    everything = pkg.FAMILY_RANGES
    assert everything, name
    assert {r.family for r in everything} <= set(pkg.FAMILY_MODULES)
    for family, files in pkg.FAMILY_MODULES.items():
        assert list(pkg.family_ranges(family)) == [r for r in everything if r.family == family], (name, family)
        # each file named for a family holds some of its rows, and no other file does
        for file in files:
            assert any(r.family == family for r in importlib.import_module(f"{pkg.__name__}.{file}").RANGES), (name, family, file)
    for file in {f for files in pkg.FAMILY_MODULES.values() for f in files}:
        held = {r.family for r in importlib.import_module(f"{pkg.__name__}.{file}").RANGES}
        assert all(file in pkg.FAMILY_MODULES[f] for f in held), (name, file, held)


@pytest.mark.parametrize("name", PACKAGES)
def test_the_names_the_package_gives_resolve(name):
    """Every name the package lists (the tables registry.py reads, and the constants tests read) is found in its file."""
    pkg = importlib.import_module(f"specbridge.engines.{name}")
    for attr in pkg.__dir__():
        if not attr.startswith("_"):
            assert getattr(pkg, attr) is not None, (name, attr)
    with pytest.raises(AttributeError):
        pkg.NO_SUCH_NAME  # noqa: B018


@pytest.mark.parametrize("name", PACKAGES)
def test_no_file_of_the_package_is_over_a_thousand_lines(name):
    files = sorted((ENGINES_DIR / name).glob("*.py"))
    assert len(files) > 3 and not (ENGINES_DIR / f"{name}.py").exists()
    long = {p.name: n for p in files if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}, f"split these files further (at most {MAX_LINES} lines each)"
