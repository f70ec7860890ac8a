"""vLLM's DFlash2 rows (DFlash plus grouped convolutions and a candidate selector):
vllm/model_executor/models/qwen3_dflash2.py, 0.28.0+; RANGES, DFlash2's release ranges.
"""

from __future__ import annotations

from ..spec import Derive, Dispatch, DraftClass, FamilyRange, Field, Param, Raise, all_agreed, in_release_range
from . import dflash as _dflash
from .common import REG
from .dflash import _DF_REG, _MUSE, DFLASH_CONF, MUSE_RENAMES, _dflash_class, _dflash_dispatch

# --- DFlash2: vllm/model_executor/models/qwen3_dflash2.py (DFlash plus grouped convolutions and a candidate selector) --
DF2 = "vllm/model_executor/models/qwen3_dflash2.py"
_DF2_KEY = "KeyError: '{}' (DFlash2 reads dflash_config['{}'] while building the {})"
DFLASH2_FIELDS = (
    # DFlash2Qwen3DecoderLayer: int(draft_config["conv_kernel_size"]) / ["conv_group_size"] (a KeyError when absent)
    Field("taps", ("dflash_config.conv_kernel_size",), None, required=_DF2_KEY.format(*2 * ("conv_kernel_size",), "decoder layers")),
    Field("grp", ("dflash_config.conv_group_size",), None, required=_DF2_KEY.format(*2 * ("conv_group_size",), "decoder layers")),
    # DFlash2Qwen3Model: int(draft_config["selector_rank"]) / ["selector_top_k"]
    Field("rank", ("dflash_config.selector_rank",), None, required=_DF2_KEY.format(*2 * ("selector_rank",), "candidate selector")),
    Field("top_k", ("dflash_config.selector_top_k",), None, required=_DF2_KEY.format(*2 * ("selector_top_k",), "candidate selector")),
)
DFLASH2_DERIVE = (Derive("ngrp", "H // grp if grp else 0"),)
_CONVS = tuple(
    p
    for conv in ("attention_conv", "mlp_conv")
    for p in (
        # DFlashGroupedConv: base_kernel nn.Parameter [2, taps, H]; kernel_projection ReplicatedLinear(H, 2*taps*H/group)
        Param(f"model.layers.{{i}}.{conv}.base_kernel", ("2", "taps", "H"), per_layer=True, role="decoder"),
        Param(f"model.layers.{{i}}.{conv}.kernel_projection.weight", ("2*taps*ngrp", "H"), per_layer=True, role="decoder"),
    )
)
DFLASH2_PARAMS = _CONVS + (
    # CandidateSelector: codebooks [config.vocab_size, rank] (the draft config's vocab), hidden_projection [rank, H]
    Param("model.candidate_selector.predecessor_codebook", ("V", "rank"), role="selector"),
    Param("model.candidate_selector.successor_codebook", ("V", "rank"), role="selector"),
    Param("model.candidate_selector.hidden_projection.weight", ("rank", "H"), role="selector"),
)
DFLASH2_RAISES = (
    Raise(
        "grp and H % grp",
        "ValueError: conv_group_size must divide hidden_size (DFlashGroupedConv)",
        f"{DF2} DFlashGroupedConv.__init__ @ 0.28.0 … 0.32.0",
    ),
)
V2_SPEC = "vllm/v1/worker/gpu/spec_decode/__init__.py init_speculator (DFlash2Speculator for DFlash2DraftModel)"


def _dflash2_class(*, versions: str, other_runner: str, raises_on_v1: bool, default: str, cite: str) -> DraftClass:
    """DFlash2Qwen3ForCausalLM: DFlashQwen3ForCausalLM (same loader, renames, sharing, mask embedding) whose decoder
    layers wrap attention and MLP in grouped dynamic convolutions and whose model adds a candidate selector; only
    Model Runner V2's DFlash2Speculator calls the selector (compute_candidates / candidate_selector)."""
    return _dflash_class(
        versions,
        MUSE_RENAMES,
        name="DFlash2Qwen3ForCausalLM",
        file=DF2,
        fields=DFLASH2_FIELDS,
        derive=DFLASH2_DERIVE,
        params=DFLASH2_PARAMS,
        raises=DFLASH2_RAISES,
        runner="V2",
        other_runner=other_runner,
        other_runner_raises=raises_on_v1,
        runner_default=default,
        runner_cite=f"{V2_SPEC}; {cite}",
    )


def _dflash2_dispatch(cite: str) -> Dispatch:
    # a DFlash2 checkpoint whose architectures say DFlashDraftModel (or a Muse name) is built as base DFlash: its
    # convolution and selector tensors have no parameter there and the loader raises
    return _dflash_dispatch({"DFlash2DraftModel": "DFlash2Qwen3ForCausalLM", **_DF_REG, **_MUSE}, cite)


_V1_28 = (
    "vLLM 0.28.0 forces Model Runner V2 for a DFlash2DraftModel draft, but VLLM_USE_V2_MODEL_RUNNER=0 keeps V1: its "
    "DFlashProposer loads DFlash2Qwen3ForCausalLM and never calls the candidate selector, so the draft runs as base "
    "DFlash (per-slot argmax) without a word"
)
_V1_29 = (
    "ValueError: Model Runner V1 does not support: {what} (VllmConfig, when V1 is chosen: VLLM_USE_V2_MODEL_RUNNER=0, "
    "no Triton backend, or a feature V2 lacks)"
)


def _dflash_of(release: str) -> DraftClass:
    """DFlash's own class in that release (dflash.py's range): the architecture DFlashQwen3ForCausalLM is the same
    class under DFlash2's ranges, defined once."""
    return next(r.classes["DFlashQwen3ForCausalLM"] for r in _dflash.RANGES if in_release_range(release, r.first, r.last))


RANGES: tuple[FamilyRange, ...] = (
    FamilyRange(
        engine="vllm",
        family="dflash2",
        first="0.28.0",
        last="0.28",
        dispatch=_dflash2_dispatch(f"{REG} @ 0.28.0"),
        classes={
            "DFlash2Qwen3ForCausalLM": _dflash2_class(
                versions="0.28.0",
                other_runner=_V1_28,
                raises_on_v1=False,
                default="V2 (use_v2_model_runner returns True for a DFlash2 draft unless VLLM_USE_V2_MODEL_RUNNER is set)",
                cite="vllm/config/vllm.py @ 0.28.0 use_v2_model_runner (_is_dflash2_draft: 'the draft degrades to DFlash1 "
                "silently. Force V2'); no V1 validation",
            ),
            "DFlashQwen3ForCausalLM": _dflash_of("0.28.0"),
        },
        begins=f"{DF2} and the DFlash2DraftModel registry entry first ship in the 0.28.0 wheel (absent from 0.27.0); "
        "vllm-project/vllm #52816",
        versions_read=("0.28.0",),
        # the DFlash2 matrix on the DFlash-only 0.27.0: every case refused, as L005 (or the relabelled drafter's load) says
        runs=all_agreed(DFLASH_CONF, "2026-12-01", 7, "0.27.0"),
    ),
    *(
        FamilyRange(
            engine="vllm",
            family="dflash2",
            first=first,
            last=last,
            dispatch=_dflash2_dispatch(f"{REG} @ {read}"),
            classes={
                "DFlash2Qwen3ForCausalLM": _dflash2_class(
                    versions=read,
                    other_runner=_V1_29.format(what=what),
                    raises_on_v1=True,
                    default="V2 where Triton has a backend for the device and no V2-unsupported feature is on; otherwise V1, which refuses",
                    cite=f"vllm/config/vllm.py @ {read} _get_v1_model_runner_unsupported_features ({check}) and _validate_v1_model_runner",
                ),
                "DFlashQwen3ForCausalLM": _dflash_of(first),
            },
            begins=begins,
            versions_read=versions,
            runs=runs,
        )
        for first, last, read, versions, what, check, begins, runs in (
            (
                "0.29.0",
                "0.30",
                "0.29.0, 0.30.0",
                ("0.29.0", "0.30.0"),
                "dflash2 drafts",
                "_is_dflash2_draft",
                "vllm/config/vllm.py: from the 0.29.0 wheel a DFlash2 draft is a V1-unsupported feature (VllmConfig "
                "raises instead of degrading) and V2 is no longer forced for it; 0.28.0 forces V2 and lets V1 degrade",
                all_agreed(DFLASH_CONF, "2026-12-01", 7, "0.29.0"),
            ),
            (
                "0.31.0",
                None,
                "0.31.0 … 0.32.0",
                ("0.31.0", "0.32.0"),
                "DFlash candidate-head drafts",
                "_is_dflash_candidate_draft: DFlash2DraftModel or LiLiCorrDraftModel",
                "vllm/config/vllm.py: the 0.31.0 wheel renames the V1 refusal to 'DFlash candidate-head drafts' "
                "(_is_dflash_candidate_draft, LiLiCorr included); qwen3_dflash2.py gains the Triton conv kernel and "
                "quant_config (same parameters)",
                all_agreed(DFLASH_CONF, "2026-12-01", 7, "0.32.0"),
            ),
        )
    ),
)
