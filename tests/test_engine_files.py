"""The engine tables stay in files a person can read whole, and vLLM's package loads a family's file only when asked.

vLLM's rows are one file per drafter family (src/specbridge/engines/vllm/); importing the package imports none of
them, and `family_ranges(family)` imports only the files FAMILY_MODULES names for that family."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ENGINES = Path(__file__).resolve().parents[1] / "src" / "specbridge" / "engines"
MAX_LINES = 1000


def test_every_engine_file_is_at_most_a_thousand_lines():
    files = sorted(ENGINES.rglob("*.py"))
    assert {p.parent.name for p in files} >= {"vllm", "sglang", "trtllm"}
    long = {p.relative_to(ENGINES).as_posix(): n for p in files if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}, f"over {MAX_LINES} lines (split by family): {long}"


def _loaded_after(code: str) -> list[str]:
    """The specbridge.engines.vllm.* modules a fresh interpreter has loaded after running `code`."""
    probe = code + "\nimport json, sys\nprint(json.dumps(sorted(m for m in sys.modules if m.startswith('specbridge.engines.vllm.'))))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return json.loads(out.splitlines()[-1])


def test_importing_the_package_imports_no_family_file():
    assert _loaded_after("import specbridge.engines.vllm") == []


def test_one_family_imports_its_own_files_only():
    from specbridge.engines import vllm

    loaded = _loaded_after("from specbridge.engines import vllm\nassert vllm.family_ranges('dflash')")
    assert "specbridge.engines.vllm.dflash" in loaded
    assert "specbridge.engines.vllm.mtp" not in loaded and "specbridge.engines.vllm.eagle3" not in loaded
    # the files of the family, and what they import (common.py): nothing of the other families
    others = {m for f, mods in vllm.FAMILY_MODULES.items() if f != "dflash" for m in mods} - set(vllm.FAMILY_MODULES["dflash"])
    assert not {f"specbridge.engines.vllm.{m}" for m in others} & set(loaded)


def test_family_ranges_are_family_ranges_rows_of_that_family_in_order():
    from specbridge.engines import vllm
    from specbridge.families.table import FAMILIES

    assert {r.family for r in vllm.FAMILY_RANGES} == set(vllm.FAMILY_MODULES)
    assert set(vllm.FAMILY_MODULES) <= {f.name for f in FAMILIES}
    for family in vllm.FAMILY_MODULES:
        assert vllm.family_ranges(family) == tuple(r for r in vllm.FAMILY_RANGES if r.family == family), family
        assert vllm.family_ranges(family)
    with pytest.raises(KeyError):  # a typo is caught, not answered "no rows"
        vllm.family_ranges("no-such-family")


def test_family_ranges_is_the_family_files_ranges_in_family_modules_order():
    """FAMILY_RANGES keeps the order of the single file it came from: dflash, dflash2, dspark, eagle, peagle, medusa,
    mlp_speculator, mtp, each family's rows as its file lists them."""
    import importlib

    from specbridge.engines import vllm

    files = dict.fromkeys(m for mods in vllm.FAMILY_MODULES.values() for m in mods)
    joined = tuple(r for m in files for r in importlib.import_module(f"specbridge.engines.vllm.{m}").RANGES)
    assert vllm.FAMILY_RANGES == joined
    order = list(dict.fromkeys(r.family for r in vllm.FAMILY_RANGES))
    assert order == ["dflash", "dflash2", "dspark", "eagle", "peagle", "medusa", "mlp_speculator", "mtp"]


def test_the_tables_the_registry_reads_resolve_and_unknown_names_do_not():
    import pytest

    from specbridge.engines import vllm

    for name in ("ERAS", "CAPTURE", "LAUNCH", "FAMILY_RANGES", "DRAFT_MODEL", "METHOD_INFERENCE", "SERVE"):
        assert getattr(vllm, name)
    with pytest.raises(AttributeError):
        vllm.NO_SUCH_TABLE  # noqa: B018
