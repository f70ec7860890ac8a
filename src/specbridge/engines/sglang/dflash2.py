"""SGLang's DFlash2 rows: DFlash2DraftModel, DFlashDraftModel plus a CandidateSelector, served by the DFLASH worker."""

from __future__ import annotations

from ...checkpoint.sidefiles import MASK_FILE
from ..spec import (
    DraftClass,
    FamilyRange,
    Field,
    Param,
    Raise,
    all_agreed,
)
from .dflash import _SG_DF, _SG_MUSE, DFLASH_519, DFM, DFU_PARSE, ENCODER_RENAMES, IDS_B, _sglang_dflash_class, _sglang_dflash_dispatch

# --- DFlash2: sglang/srt/models/dflash.py DFlash2DraftModel(DFlashDraftModel), "Reuses the DFLASH speculative worker"
# (--speculative-algorithm DFLASH; dflash_worker_v2.py takes draft_model.candidate_selector; the only worker, so no
# runner choice). Its loader is DFlashDraftModel.load_weights unchanged (selector names land, unknown names are skipped
# silently); lm_head is None (the worker points it at the target's head). Read in the 0.5.19, 0.5.20 and 0.5.23 wheels:
# the class and CandidateSelector's parameters are the same in all three; only compute_candidates' top-k code moves.
_SG_DF2 = {"DFlash2DraftModel": "DFlash2DraftModel"}
# empty subclasses (aliases) of DFlash2DraftModel in the 0.5.23 EntryClass, absent from 0.5.20's
_SG_DF2_ALIASES = {"MiniMaxDFlash2DraftModel": "DFlash2DraftModel", "DFlash2BeamDraftModel": "DFlash2DraftModel"}
DFLASH2_FIELDS = (
    # dflash_cfg.get(..., 0) through _parse_optional_int: absent is 0 (no selector, which DFlash2DraftModel refuses)
    Field("rank", ("dflash_config.selector_rank",), 0),
    Field("top_k", ("dflash_config.selector_top_k",), 0),
    # CandidateSelector's codebooks are [config.vocab_size, rank]; transformers' Qwen3Config default when absent
    Field("V", ("vocab_size",), 151936),
)
DFLASH2_PARAMS = (
    # CandidateSelector: predecessor/successor codebooks [vocab_size, rank] (zeros until loaded), hidden_projection
    Param("candidate_selector.predecessor_codebook", ("V", "rank"), role="selector"),
    Param("candidate_selector.successor_codebook", ("V", "rank"), role="selector"),
    Param("candidate_selector.hidden_projection.weight", ("rank", "H"), role="selector"),
)
DFLASH2_RAISES = (
    Raise("bool(rank) != bool(top_k)", "ValueError: DFLASH selector needs rank and top_k together.", DFU_PARSE),
    Raise(
        "not rank",
        "ValueError: DFlash selector draft requires dflash_config.selector_rank.",
        f"{DFM} DFlash2DraftModel.__init__ @ 0.5.19, 0.5.20, 0.5.23",
    ),
)


def _sglang_dflash2_class(
    *, versions: str, ids_check: Raise, renames: tuple = (), side_files: tuple[str, ...] = (), sink: bool = False
) -> DraftClass:
    return _sglang_dflash_class(
        versions=versions,
        ids_check=ids_check,
        renames=renames,
        side_files=side_files,
        sink=sink,
        conv=True,
        name="DFlash2DraftModel",
        fields=DFLASH2_FIELDS,
        params=DFLASH2_PARAMS,
        raises=DFLASH2_RAISES,
    )


_DF2_BEGINS = (
    f"{DFM} DFlash2DraftModel (DFlashDraftModel + CandidateSelector, 'Reuses the DFLASH speculative worker': served with "
    "--speculative-algorithm DFLASH) and its EntryClass entry first ship in the 0.5.19 wheel, absent from 0.5.18"
)
RANGES = (
    FamilyRange(
        engine="sglang",
        family="dflash2",
        first="0.5.19",
        last="0.5.19",
        dispatch=_sglang_dflash_dispatch({**_SG_DF, **_SG_MUSE, **_SG_DF2}),
        classes={
            "DFlash2DraftModel": _sglang_dflash2_class(versions="0.5.19", ids_check=IDS_B, renames=ENCODER_RENAMES),
            "DFlashDraftModel": DFLASH_519,
        },
        begins=_DF2_BEGINS,
        versions_read=("0.5.18", "0.5.19"),
        runs=all_agreed("tests/test_conformance_sglang_dflash.py", "2026-12-01", 7, "0.5.19"),
    ),
    FamilyRange(
        engine="sglang",
        family="dflash2",
        first="0.5.20",
        last="0.5.22",
        dispatch=_sglang_dflash_dispatch({**_SG_DF, **_SG_MUSE, **_SG_DF2}),
        classes={
            "DFlash2DraftModel": _sglang_dflash2_class(
                versions="0.5.20", ids_check=IDS_B, renames=ENCODER_RENAMES, side_files=(MASK_FILE,), sink=True
            ),
            "DFlashDraftModel": _sglang_dflash_class(
                versions="0.5.20", ids_check=IDS_B, renames=ENCODER_RENAMES, side_files=(MASK_FILE,), sink=True, conv=True
            ),
        },
        begins="DFlashDraftModel's 0.5.20 changes (mask_embedding.pt merged by the worker, MiMo's attention_sink_bias), "
        "which DFlash2DraftModel inherits; approximate at the end (0.5.21 and 0.5.22 not read for DFlash2's aliases)",
        versions_read=("0.5.20",),
        runs=all_agreed("tests/test_conformance_sglang_dflash.py", "2026-12-01", 7, "0.5.20"),
    ),
    FamilyRange(
        engine="sglang",
        family="dflash2",
        first="0.5.23",
        last=None,
        dispatch=_sglang_dflash_dispatch({**_SG_DF, **_SG_MUSE, **_SG_DF2, **_SG_DF2_ALIASES}),
        classes={
            "DFlash2DraftModel": _sglang_dflash2_class(
                versions="0.5.23", ids_check=IDS_B, renames=ENCODER_RENAMES, side_files=(MASK_FILE,), sink=True
            ),
            "DFlashDraftModel": _sglang_dflash_class(
                versions="0.5.23", ids_check=IDS_B, renames=ENCODER_RENAMES, side_files=(MASK_FILE,), sink=True, conv=True
            ),
        },
        begins=f"{DFM} EntryClass @ 0.5.23 adds MiniMaxDFlash2DraftModel and DFlash2BeamDraftModel (empty subclasses of "
        "DFlash2DraftModel); approximate at the start (0.5.21 and 0.5.22 not read)",
        versions_read=("0.5.23",),
        runs=all_agreed("tests/test_conformance_sglang_dflash.py", "2026-12-01", 7, "0.5.23"),
    ),
)
