"""vLLM: how each release range builds and loads each drafter family, one file per family.

Read from vLLM's PyPI wheels and checked against vLLM runs (the `runs` of each range). The files:

- eagle3_classes.py, eagle3.py: EAGLE-3 (the classes; the release ranges ERAS, target-layer capture CAPTURE)
- eagle1.py, eagle1_siblings.py: EAGLE-1/2 (EagleLlamaForCausalLM and the ranges; the other architectures' classes)
- peagle.py, dflash.py (with Laguna DFlash), dflash2.py, dspark.py, medusa.py, mlp_speculator.py, mtp.py: one family
  each, its release ranges in RANGES
- draft_model.py (DRAFT_MODEL), launch.py (LAUNCH, METHOD_INFERENCE, SERVE), common.py (what several files read)

Importing this package imports none of them: a name is taken from the file that holds it the first time it is asked
for, and `family_ranges(family)` imports only that family's files.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..spec import DraftClass, FamilyRange

# family (families/table.py) -> the files whose RANGES hold its rows, in FAMILY_RANGES order
FAMILY_MODULES: dict[str, tuple[str, ...]] = {
    "dflash": ("dflash",),
    "dflash2": ("dflash2",),
    "dspark": ("dspark",),
    "eagle": ("eagle1",),
    "peagle": ("peagle",),
    "medusa": ("medusa",),
    "mlp_speculator": ("mlp_speculator",),
    "mtp": ("mtp",),
}
# every file of the package, in the order a name is looked for
SUBMODULES = (
    "common",
    "eagle3_classes",
    "eagle3",
    "launch",
    "dflash",
    "dflash2",
    "dspark",
    "eagle1_siblings",
    "eagle1",
    "peagle",
    "medusa",
    "mlp_speculator",
    "mtp",
    "draft_model",
)
# the tables engines/registry.py reads, and their files
TABLES = {
    "ERAS": "eagle3",
    "CAPTURE": "eagle3",
    "SUPPORTS_EAGLE3_SINCE": "eagle3",
    "LAUNCH": "launch",
    "METHOD_INFERENCE": "launch",
    "SERVE": "launch",
    "DRAFT_MODEL": "draft_model",
}


def _module(name: str) -> ModuleType:
    return importlib.import_module(f"{__name__}.{name}")


def family_ranges(family: str) -> tuple[FamilyRange, ...]:
    """vLLM's release ranges of one drafter family (FAMILY_RANGES' rows of that family, in order): imports only the
    files FAMILY_MODULES names for it."""
    return tuple(r for m in FAMILY_MODULES.get(family, ()) for r in _module(m).RANGES if r.family == family)


def _family_ranges_all() -> tuple[FamilyRange, ...]:
    files = dict.fromkeys(m for mods in FAMILY_MODULES.values() for m in mods)
    return tuple(r for m in files for r in _module(m).RANGES)


def row_file(cls: DraftClass) -> str:
    """The file whose rows hold `cls` (a file's own name for it, else a range of its RANGES or ERAS), among the files
    imported so far: what a RowError names."""
    loaded = [(m, sys.modules[f"{__name__}.{m}"]) for m in SUBMODULES if f"{__name__}.{m}" in sys.modules]
    for m, mod in loaded:
        if any(v is cls for k, v in vars(mod).items() if not k.startswith("__")):
            return f"specbridge/engines/vllm/{m}.py"
    for m, mod in loaded:
        for r in (*vars(mod).get("RANGES", ()), *vars(mod).get("ERAS", ())):
            if any(c is cls for c in r.classes.values()):
                return f"specbridge/engines/vllm/{m}.py"
    return "specbridge/engines/vllm/"


def __getattr__(name: str):
    """FAMILY_RANGES (every family's RANGES, in FAMILY_MODULES order), a table of TABLES, or any other public name of
    the package's files (the first file of SUBMODULES that has it)."""
    if name == "FAMILY_RANGES":
        value = _family_ranges_all()
    elif name in TABLES:
        value = getattr(_module(TABLES[name]), name)
    elif not name.startswith("_"):
        for m in SUBMODULES:
            mod = _module(m)
            if name in vars(mod):
                value = vars(mod)[name]
                break
        else:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value
