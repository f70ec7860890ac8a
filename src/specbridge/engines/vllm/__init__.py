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

from ..lazy import LazyTable

TYPE_CHECKING = False  # typing's constant, without importing typing on a check's path (about 1 ms)
if TYPE_CHECKING:
    from ..spec import FamilyRange

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


_TABLE = LazyTable(
    __name__,
    globals(),
    range_files=tuple(dict.fromkeys(m for mods in FAMILY_MODULES.values() for m in mods)),
    family_files=FAMILY_MODULES,
    file_names={
        "eagle3": ("ERAS", "CAPTURE", "SUPPORTS_EAGLE3_SINCE"),
        "launch": ("LAUNCH", "METHOD_INFERENCE", "SERVE"),
        "draft_model": ("DRAFT_MODEL",),
    },
    search=SUBMODULES,
)
__getattr__ = _TABLE.getattr
__dir__ = _TABLE.dir
row_file = _TABLE.row_file


def family_ranges(family: str) -> tuple[FamilyRange, ...]:
    """vLLM's release ranges of one drafter family (FAMILY_RANGES' rows of that family, in order): imports only the
    files FAMILY_MODULES names for it."""
    return _TABLE.family_ranges(family)
