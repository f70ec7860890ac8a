"""TensorRT-LLM (PyTorch backend): how each release range builds and loads a drafter, one file per drafter family.

Never run (no TensorRT-LLM wheel installs here): every row is read from source, and where the source was not read
the rows say "assumed".

    eagle3.py   EAGLE-3 (decoding_type Eagle3): ERAS, CAPTURE
    launch.py   the trtllm-serve line and its --config file (LAUNCH)
    dflash.py   DFlash (decoding_type DFlash); its class is what dspark.py builds on
    dspark.py   DSpark (decoding_type DSpark)
    medusa.py   Medusa: the TensorRT engine backend only, not the PyTorch backend modelled here
    peagle.py   P-EAGLE: TensorRT-LLM has none
    common.py   source files cited by more than one of them

Each family file holds its part of FAMILY_RANGES as `RANGES`. Importing this package imports none of them
(engines/lazy.py): `family_ranges("dflash")` imports dflash.py only, and engines/registry.py's tables (ERAS,
FAMILY_RANGES, …) import what they name.
"""

from __future__ import annotations

from ..lazy import LazyTable

TYPE_CHECKING = False  # typing's constant, without importing typing on a check's path (about 1 ms)
if TYPE_CHECKING:
    from ..spec import FamilyRange

# the files holding FAMILY_RANGES' rows, in its order
_RANGE_FILES = ("dflash", "dspark", "medusa", "peagle")

# drafter family (families/table.py) -> the files whose RANGES hold its rows (empty: TensorRT-LLM has no row for it)
FAMILY_MODULES: dict[str, tuple[str, ...]] = {
    "dflash": ("dflash",),
    "dflash2": (),
    "dspark": ("dspark",),
    "eagle": (),
    "peagle": ("peagle",),
    "medusa": ("medusa",),
    "mlp_speculator": (),
    "mtp": (),
}

# the package's names other than FAMILY_RANGES, by the file that defines them
_FILE_NAMES: dict[str, tuple[str, ...]] = {
    "eagle3": ("ERAS", "CAPTURE", "F", "F12", "U10", "EAGLE3_CLASS_12", "EAGLE3_CLASS"),
    "launch": ("LAUNCH", "TRT_SERVE_ARGV", "TRT_DOCS"),
    "common": ("TDF_WORKER", "TDF_DOCS", "TDS"),
    "dflash": ("TDF", "TDF_FIRST", "TRT_DFLASH_FIELDS", "TRT_DFLASH_DERIVE", "NO_MASK_ID_TRT", "TRT_DFLASH_LAUNCH"),
    "dspark": ("TDS_READ", "TDS_CITE", "TRT_DSPARK_FIELDS", "TRT_DSPARK_DERIVE", "TRT_DSPARK_RAISES", "TRT_DSPARK_LAUNCH"),
}
_TABLE = LazyTable(__name__, globals(), range_files=_RANGE_FILES, family_files=FAMILY_MODULES, file_names=_FILE_NAMES)
__getattr__ = _TABLE.getattr
__dir__ = _TABLE.dir
row_file = _TABLE.row_file


def family_ranges(family: str) -> tuple[FamilyRange, ...]:
    """TensorRT-LLM's rows for one drafter family, in FAMILY_RANGES' order; imports that family's files only."""
    return _TABLE.family_ranges(family)
