"""SGLang: how each release range builds and loads a drafter, one file per drafter family.

    eagle3.py       EAGLE-3 (--speculative-algorithm EAGLE3): ERAS, CAPTURE
    launch.py       the launch line (LAUNCH) and the server's start-up log (SERVE)
    dflash.py       DFlash (DFLASH); its class factory is what dflash2.py and dspark.py build on
    dflash2.py      DFlash2 (DFLASH, DFlash2DraftModel)
    dspark.py       DSpark (DSPARK)
    eagle1.py       EAGLE-1/2 (EAGLE), the Mistral EAGLE drafters included
    mtp.py          MTP heads inside a target (NEXTN)
    draft_model.py  plain draft models (STANDALONE): DRAFT_MODEL
    medusa.py       Medusa: SGLang has none
    peagle.py       P-EAGLE: SGLang has none
    common.py       what more than one of them reads

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
_RANGE_FILES = ("dflash", "eagle1", "dflash2", "dspark", "mtp", "medusa", "peagle")

# drafter family (families/table.py) -> the files whose RANGES hold its rows (empty: SGLang has no row for it)
FAMILY_MODULES: dict[str, tuple[str, ...]] = {
    "dflash": ("dflash",),
    "dflash2": ("dflash2",),
    "dspark": ("dspark",),
    "eagle": ("eagle1",),
    "peagle": ("peagle",),
    "medusa": ("medusa",),
    "mlp_speculator": (),
    "mtp": ("mtp",),
}

# the package's names other than FAMILY_RANGES, by the file that defines them
_FILE_NAMES: dict[str, tuple[str, ...]] = {
    "eagle3": (
        "ERAS",
        "CAPTURE",
        "CAPTURE_SINCE",
        "CAPTURE_CITE",
        "DEEPSEEK_FAMILY",
        "F",
        "KIMI",
        "WORKER",
        "DRAFT_VOCAB_REQUIRED",
        "COMMON_FIELDS",
        "COMMON_DERIVE",
        "HT_NULL",
        "VD_NULL_046",
        "DROP_VOCAB",
        "SKIP_MSG",
        "LAYERS_CLASS",
        "LAYERS_CLASS_INPUT_NORM",
        "MLA",
        "KIMI_CLASS",
        "PLAIN_046",
        "PLAIN_MSG",
        "UNKNOWN_046",
        "DISPATCH_046",
        "MIDLAYER_DISPATCH",
        "LAYERS_DISPATCH",
        "CONF",
    ),
    "launch": ("LAUNCH", "SERVE", "DFLASH_ARGV", "DSPARK_ARGV", "TREE_ARGV", "TREE_TOKENS"),
    "common": ("STACKED_KEYERROR", "STACKED_BIAS_SKIP", "LINEAR", "O_BIAS", "PLAIN", "UNKNOWN_MSG"),
    "dflash": (
        "DFM",
        "DFU",
        "DFU_PARSE",
        "DFLASH_FIELDS",
        "DFLASH_DERIVE",
        "DFLASH_LAUNCH",
        "DF_ARGS",
        "DF_WORKER",
        "NO_MLP",
        "NO_IDS_FEW_LAYERS",
        "CONV_FIELDS",
        "CONV_DERIVE",
        "CONV_PARAMS",
        "CONV_RAISES",
        "ENCODER_RENAMES",
        "IDS_A",
        "IDS_B",
    ),
    "dflash2": ("DFLASH2_FIELDS", "DFLASH2_PARAMS", "DFLASH2_RAISES"),
    "dspark": (
        "DSM",
        "DSC",
        "DSW",
        "DS_ARGS",
        "DSPARK_SG_FIELDS",
        "DSPARK_SG_DERIVE",
        "DSPARK_SG_PARAMS",
        "DSPARK_SG_RAISES",
        "DSPARK_SG_LAUNCH",
        "DSPARK_SG_LAUNCH_RUNS",
        "DSPARK_CONF",
        "DSPARK_CASES",
    ),
    "eagle1": (
        "EAGLE1_RANGES",
        "EAGLE1_READ",
        "EAGLE1_FIELDS",
        "EAGLE1_PLAIN",
        "EAGLE1_AS_EAGLE3",
        "TIED_EAGLE1",
        "LEA",
        "QEA",
        "QWEN2",
        "QWEN2_EAGLE1_TEST",
        "MEA",
        "ML3EA",
        "ML3",
        "DSV2",
        "UNRECOGNIZED",
        "MISTRAL_EAGLE_REMAP",
        "MISTRAL_LARGE3_REMAP",
        "MLA_EAGLE1_FIELDS",
        "MISTRAL_EAGLE1_TEST",
        "MISTRAL_EAGLE1_RUNS",
    ),
    "mtp": (
        "NEXTN_CFG",
        "NEXTN_CONF",
        "DSN",
        "GLMN",
        "NEXTN_LOAD",
        "NEXTN_FIELDS",
        "NNPL_REQUIRED",
        "NNPL_DEFAULT",
        "NEXTN_DERIVE",
        "NEXTN_ONE",
        "NEXTN_QUANT_CITE",
        "NEXTN_GLM_RAISES",
        "NEXTN_LATER",
        "NEXTN_MAPPED",
        "NEXTN_NNPL_DEFAULT",
    ),
    "draft_model": ("DRAFT_MODEL", "SA_WORKER", "SA_TEST"),
    "medusa": ("SGL_MEDUSA_READ",),
    "peagle": ("SGL_PEAGLE_READ",),
}
_TABLE = LazyTable(__name__, globals(), range_files=_RANGE_FILES, family_files=FAMILY_MODULES, file_names=_FILE_NAMES)
__getattr__ = _TABLE.getattr
__dir__ = _TABLE.dir
row_file = _TABLE.row_file


def family_ranges(family: str) -> tuple[FamilyRange, ...]:
    """SGLang's rows for one drafter family, in FAMILY_RANGES' order; imports that family's files only."""
    return _TABLE.family_ranges(family)
