"""SGLang's DFlash rows (--speculative-algorithm DFLASH, DFlashDraftModel), and the DFlash class factory that
DFlash2's and DSpark's rows build on (dflash2.py, dspark.py)."""

from __future__ import annotations

from ...checkpoint.sidefiles import MASK_FILE
from ..common import STACK_LLAMA, llama_decoder
from ..spec import (
    Derive,
    Dispatch,
    DraftClass,
    Drop,
    FamilyRange,
    Field,
    LaunchCheck,
    Param,
    Raise,
    Rename,
    RenameRegex,
    all_agreed,
)

# --- DFlash: sglang/srt/models/dflash.py (DFlashDraftModel), read in the 0.5.11 … 0.5.23 wheels ---------------------
DFM = "sglang/srt/models/dflash.py"
DFU = "sglang/srt/speculative/dflash_utils.py"
DFLASH_FIELDS = (
    Field("H", ("hidden_size",), 4096),
    Field("L", ("num_hidden_layers",), 1),
    Field("nh", ("num_attention_heads",), 32),
    Field("nkv_raw", ("num_key_value_heads",), None),
    Field("hd_raw", ("head_dim",), None),
    Field("I", ("intermediate_size",), 0),
    Field("attention_bias", ("attention_bias",), False, kind="bool"),
    Field("n_ids", ("len:dflash_config.target_layer_ids", "len:target_layer_ids"), None),
    Field("max_id", ("max:dflash_config.target_layer_ids", "max:target_layer_ids"), None),
    Field("ntl", ("dflash_config.num_target_layers", "num_target_layers"), None),
    Field("sink", ("dflash_config.attention_sink_bias",), False, kind="bool"),
)
DFLASH_DERIVE = (
    Derive("nkv", "nkv_raw if nkv_raw is not None else nh"),
    Derive("hd", "hd_raw if hd_raw is not None else H // nh"),
    # fc reads one target state per id; without ids SGLang spreads one per draft layer over the target
    Derive("K", "n_ids if n_ids is not None else L"),
)
NO_MLP = Raise("I == 0", "ValueError: Invalid intermediate_size=0 for DFlash MLP.", f"{DFM} (DFlashMLP; every release read)")
# without target_layer_ids the drafter spreads one id per draft layer over num_target_layers (else its own layer
# count), which needs at least 4 layers when it has more than one (build_target_layer_ids)
NO_IDS_FEW_LAYERS = Raise(
    "n_ids is None and L > 1 and (ntl if ntl is not None else L) < 4",
    "ValueError: DFlash layer selection requires num_target_layers >= 4 (no target_layer_ids: one id per draft layer is "
    "spread over num_target_layers, else the draft's own layer count; give target_layer_ids or num_target_layers)",
    f"{DFU} build_target_layer_ids (0.5.11 :162-199; every release read)",
)


def _ids_out_of_range(*, when: str, bound: str, cite: str) -> Raise:
    return Raise(
        when,
        f"ValueError: DFLASH target_layer_ids contains an out-of-range layer id (checked against {bound} while the drafter is "
        "built; give num_target_layers, the target's layer count, in dflash_config)",
        cite,
    )


# What SGLang does with a DFLASH launch line, the same in every release read (0.5.11 server_args.py
# ServerArgs._handle_speculative_decoding; 0.5.19, 0.5.20, 0.5.23 arg_groups/speculative_hook.py _handle_dflash; the
# worker: speculative/dflash_worker.py @ 0.5.11, dflash_worker_v2.py @ 0.5.19+): --speculative-num-draft-tokens is the
# verify window, the drafter's block (anchor + block_size - 1 mask slots); without it SGLang reads block_size from the
# draft config (dflash_config.block_size, else the top-level block_size), else 16; one that differs from the config's
# block_size is only logged ("DFLASH block size mismatch") and the window the flag names is run.
DF_ARGS = "sglang/srt/server_args.py @ 0.5.11, arg_groups/speculative_hook.py _handle_dflash @ 0.5.19 … 0.5.23"
DF_WORKER = "sglang/srt/speculative/dflash_worker.py @ 0.5.11, dflash_worker_v2.py @ 0.5.19 … 0.5.23 (block size mismatch)"
DFLASH_LAUNCH = (
    LaunchCheck(
        "block_flag is not None and block_flag <= 0",
        "error",
        "ValueError: DFLASH requires --speculative-dflash-block-size to be positive, got {block_flag}.",
        DF_ARGS,
        code="D006",
    ),
    LaunchCheck(
        "block_flag is not None and draft_tokens is not None and block_flag != draft_tokens",
        "error",
        "ValueError: Both --speculative-num-draft-tokens and --speculative-dflash-block-size are set but they differ. "
        "For DFLASH they must match. (speculative_num_draft_tokens={draft_tokens}, speculative_dflash_block_size={block_flag})",
        DF_ARGS,
        code="D006",
    ),
    LaunchCheck(
        "steps is not None and steps != 1",
        "warning",
        "DFLASH only supports speculative_num_steps == 1; overriding speculative_num_steps={steps} to 1 (SGLang's own "
        "warning: the flag is an EAGLE setting, the DFlash block is --speculative-num-draft-tokens)",
        DF_ARGS,
        code="D006",
    ),
    LaunchCheck(
        "topk is not None and topk != 1",
        "warning",
        "DFLASH only supports speculative_eagle_topk == 1; overriding speculative_eagle_topk={topk} to 1 (SGLang's own "
        "warning: a DFlash drafter proposes one chain)",
        DF_ARGS,
        code="D006",
    ),
    LaunchCheck(
        "window is not None and block is not None and 0 < window < block",
        "warning",
        "--speculative-num-draft-tokens {window} is below the drafter's block_size {block}: SGLang logs 'DFLASH block size "
        "mismatch' and runs a block of {window}, so each step accepts at most {window} tokens; accept lengths published "
        "for the drafter were measured with the whole block",
        f"{DF_ARGS}; {DF_WORKER}",
        code="D005",
    ),
    LaunchCheck(
        "window is not None and block is not None and window > block",
        "warning",
        "--speculative-num-draft-tokens {window} is above the drafter's block_size {block}: SGLang logs 'DFLASH block size "
        "mismatch' and runs a block of {window}, mask slots the drafter was never trained on; nothing fails, the slots "
        "past the block are rarely accepted and cost a wider verify",
        f"{DF_ARGS}; {DF_WORKER}",
        code="D005",
    ),
    LaunchCheck(
        "window is None and block is None",
        "warning",
        "no --speculative-num-draft-tokens and no block_size in the drafter's config: SGLang defaults the DFlash block to 16 "
        "('speculative_num_draft_tokens is not set; defaulting to 16 for DFLASH')",
        DF_ARGS,
        code="D005",
    ),
)


# DFlashDraftModel's grouped dynamic convolutions (sglang/srt/models/dflash.py DFlashGroupedConv, built around each
# layer's attention and MLP when dflash_config.conv_kernel_size is set; parsed by dflash_utils.py
# parse_dflash_draft_config): first in the 0.5.19 wheel, absent from 0.5.18; the same in 0.5.19, 0.5.20, 0.5.23.
# DFlash2DraftModel (0.5.19+) is DFlashDraftModel plus a CandidateSelector.
DFU_PARSE = f"{DFU} parse_dflash_draft_config @ 0.5.19, 0.5.20, 0.5.23"
CONV_FIELDS = (
    # dflash_cfg.get(..., 0) through _parse_optional_int: absent is 0 (no convolution)
    Field("taps", ("dflash_config.conv_kernel_size",), 0),
    Field("grp", ("dflash_config.conv_group_size",), 0),
)
CONV_DERIVE = (Derive("ngrp", "H // grp if grp else 0"),)
CONV_PARAMS = tuple(
    Param(name.format(conv=c), shape, when="taps", per_layer=True, role="decoder")
    for c in ("attention_conv", "mlp_conv")
    for name, shape in (
        # DFlashGroupedConv: base_kernel nn.Parameter [2, taps, H]; kernel_projection nn.Linear(H, 2*taps*H/group)
        ("layers.{{i}}.{conv}.base_kernel", ("2", "taps", "H")),
        ("layers.{{i}}.{conv}.kernel_projection.weight", ("2*taps*ngrp", "H")),
    )
)
CONV_RAISES = (
    Raise(
        "bool(taps) != bool(grp)",
        "ValueError: DFLASH grouped convolution needs conv_kernel_size and conv_group_size together.",
        DFU_PARSE,
    ),
    Raise(
        "taps and grp and H % grp",
        "ValueError: DFLASH conv_group_size must divide hidden_size (DFlashGroupedConv).",
        f"{DFM} DFlashGroupedConv.__init__ @ 0.5.19, 0.5.20, 0.5.23",
    ),
)


def _sglang_dflash_class(
    *,
    versions: str,
    ids_check: Raise,
    renames: tuple = (),
    side_files: tuple[str, ...] = (),
    sink: bool = False,
    conv: bool = False,
    **extra,
) -> DraftClass:
    """SGLang's DFlashDraftModel: no embedding, head or vocab map of its own (the worker uses the target's), Qwen3
    layers reading the hidden size, fc [H, K·H] over the target states; unknown names are skipped silently.
    `conv`: the grouped dynamic convolutions built when dflash_config.conv_kernel_size is set (0.5.19+).
    `extra`: a subclass built on it (DFlash2DraftModel): its name, fields, derives, parameters and raises are added."""
    by_design = "SGLang's DFlash drafter has no {0}: the worker uses the target's (dflash.py module docstring)"
    return DraftClass(
        name=extra.pop("name", "DFlashDraftModel"),
        file=f"{DFM} @ {versions}",
        fields=DFLASH_FIELDS + (CONV_FIELDS if conv else ()) + extra.pop("fields", ()),
        derive=DFLASH_DERIVE + (CONV_DERIVE if conv else ()) + extra.pop("derive", ()),
        params=(CONV_PARAMS if conv else ())
        + extra.pop("params", ())
        + llama_decoder(
            "layers.{i}.",
            per_layer=True,
            hidden_norm_when="False",
            o_bias_when="attention_bias",
            qkv_bias_when="attention_bias",
            qkv_in="H",
        )
        + (
            Param("layers.{i}.self_attn.q_norm.weight", ("hd",), per_layer=True, role="decoder"),
            Param("layers.{i}.self_attn.k_norm.weight", ("hd",), per_layer=True, role="decoder"),
            Param("norm.weight", ("H",), role="norm"),
            Param("fc.weight", ("H", "K*H"), role="fc"),
            Param("hidden_norm.weight", ("H",), role="fc"),
            # MiMo's per-head sink bias (dflash_config.attention_sink_bias), built from 0.5.20; before, its tensors are
            # unknown names, skipped silently
            Param("layers.{i}.self_attn.attention_sink_bias", ("nh",), when="sink" if sink else "False", per_layer=True, role="decoder"),
        ),
        loader=(
            Drop("embed_tokens", why=by_design.format("embedding"), cite=f"{DFM} load_weights (unresolved names skipped)"),
            Drop("lm_head", why=by_design.format("head"), cite=f"{DFM} load_weights (unresolved names skipped)"),
            Drop("d2t", why="no vocab map: the target's head scores the full vocabulary", cite=f"{DFM} load_weights"),
            Drop("t2d", why="no vocab map: the target's head scores the full vocabulary", cite=f"{DFM} load_weights"),
            RenameRegex(pattern=r"^model\.", new="", cite=f"{DFM} load_weights (resolve_param_name strips a leading model.)"),
            *renames,
            *STACK_LLAMA,
        ),
        unknown="skip",
        unknown_message="{name}: no DFlashDraftModel parameter; skipped silently (sglang/srt/models/dflash.py load_weights: "
        "'Ignore unexpected weights')",
        missing="silent",
        raises=(NO_MLP, NO_IDS_FEW_LAYERS, ids_check) + (CONV_RAISES if conv else ()) + extra.pop("raises", ()),
        side_files=side_files,
        # sglang/srt/speculative/dflash_worker_v2.py _maybe_merge_trained_mask_embedding @ 0.5.20, 0.5.23
        mask_file_dict_only=bool(side_files),
        methods=("DFLASH",),  # --speculative-algorithm DFLASH (server_args / arg_groups/speculative_hook.py _handle_dflash)
        launch_checks=DFLASH_LAUNCH,
        **extra,
    )


ENCODER_RENAMES = (
    Rename(old="encoder.fc.", new="fc.", cite=f"{DFM} @ 0.5.19 load_weights (vendor aliases)"),
    Rename(old="encoder.output_norm_enc.", new="hidden_norm.", cite=f"{DFM} @ 0.5.19 load_weights (vendor aliases)"),
)
# group A builds fc from num_target_layers, else the DRAFT layer count, and validates the ids against it
IDS_A = _ids_out_of_range(
    when="max_id is not None and max_id >= (ntl if ntl is not None else L)",
    bound="num_target_layers, else the draft's layer count",
    cite=f"{DFM} @ 0.5.11 :277-285, {DFU} :306",
)
# group B: against num_target_layers, else max(ids) + 1 (never out of range)
IDS_B = _ids_out_of_range(
    when="max_id is not None and ntl is not None and max_id >= ntl", bound="num_target_layers", cite=f"{DFM} @ 0.5.19 :612-620"
)
_SG_DF = {"DFlashDraftModel": "DFlashDraftModel"}
_SG_MUSE = {"MuseGlimmerAssistantModel": "DFlashDraftModel"}  # an empty subclass (alias) from 0.5.18
_SG_LAGUNA = {"DFlashLagunaForCausalLM": "dflash.py DFlashLagunaForCausalLM (g_proj gating, aux_hidden_norms)"}


def _sglang_dflash_dispatch(registry: dict[str, str]) -> Dispatch:
    return Dispatch(
        "sglang",
        registry,
        "DFlashDraftModel",
        cite=f"{DFM} EntryClass (SGLang dispatches on architectures[0]; nothing rewrites it for DFLASH)",
        unknown_message="ValueError: {arch!r} is no DFlash class of this SGLang (sglang/srt/models/dflash.py EntryClass)",
    )


# the 0.5.19 class (grouped convolutions): named by this file's 0.5.19 range and by DFlash2's (dflash2.py)
DFLASH_519 = _sglang_dflash_class(versions="0.5.19", ids_check=IDS_B, renames=ENCODER_RENAMES, conv=True)

RANGES = (
    FamilyRange(
        engine="sglang",
        family="dflash",
        first="0.5.11",
        last="0.5.17",
        dispatch=_sglang_dflash_dispatch(_SG_DF),
        classes={"DFlashDraftModel": _sglang_dflash_class(versions="0.5.11 … 0.5.17", ids_check=IDS_A)},
        begins=f"{DFM} (DFlashDraftModel) and the DFLASH algorithm first ship in the 0.5.11 wheel, absent from 0.5.10",
        versions_read=("0.5.11", "0.5.12", "0.5.16", "0.5.17"),
        unmodelled_archs=_SG_LAGUNA,
        runs=all_agreed("tests/test_conformance_sglang_dflash.py", "2026-12-01", 20, "0.5.11", "0.5.12", "0.5.16"),
    ),
    FamilyRange(
        engine="sglang",
        family="dflash",
        first="0.5.18",
        last="0.5.18",
        dispatch=_sglang_dflash_dispatch({**_SG_DF, **_SG_MUSE}),
        classes={"DFlashDraftModel": _sglang_dflash_class(versions="0.5.18 … 0.5.19", ids_check=IDS_B, renames=ENCODER_RENAMES)},
        begins="fc is sized from num_target_layers else max(target_layer_ids) + 1, not the draft's layer count; the "
        "encoder.fc / encoder.output_norm_enc aliases and MuseGlimmerAssistantModel arrive: first in the 0.5.18 wheel, "
        "absent from 0.5.17's dflash.py (whose EntryClass, id check and load_weights are 0.5.16's)",
        versions_read=("0.5.18",),
        unmodelled_archs=_SG_LAGUNA,
    ),
    FamilyRange(
        engine="sglang",
        family="dflash",
        first="0.5.19",
        last="0.5.19",
        dispatch=_sglang_dflash_dispatch({**_SG_DF, **_SG_MUSE}),
        classes={"DFlashDraftModel": DFLASH_519},
        begins=f"{DFM} DFlashGroupedConv (per-layer attention_conv / mlp_conv when dflash_config.conv_kernel_size is set) and "
        "dflash_utils.py's conv_kernel_size / conv_group_size first ship in the 0.5.19 wheel, absent from 0.5.18",
        versions_read=("0.5.19",),
        unmodelled_archs=_SG_LAGUNA,
        runs=all_agreed("tests/test_conformance_sglang_dflash.py", "2026-12-01", 20, "0.5.19"),
    ),
    FamilyRange(
        engine="sglang",
        family="dflash",
        first="0.5.20",
        last=None,
        dispatch=_sglang_dflash_dispatch({**_SG_DF, **_SG_MUSE}),
        classes={
            "DFlashDraftModel": _sglang_dflash_class(
                versions="0.5.20 … 0.5.23",
                ids_check=IDS_B,
                renames=ENCODER_RENAMES,
                side_files=(MASK_FILE,),
                sink=True,
                conv=True,
            )
        },
        begins="sglang/srt/speculative/dflash_worker_v2.py _maybe_merge_trained_mask_embedding reads mask_embedding.pt from the "
        "draft's local directory (a Hub id is never resolved) into the target's mask row, and dflash.py builds a per-head "
        "attention_sink_bias when dflash_config.attention_sink_bias (MiMo): both first in the 0.5.20 wheel, absent from 0.5.19 "
        "(sgl-project/sglang #27924)",
        versions_read=("0.5.20", "0.5.21", "0.5.22", "0.5.23"),
        unmodelled_archs=_SG_LAGUNA,
        runs=all_agreed("tests/test_conformance_sglang_dflash.py", "2026-12-01", 20, "0.5.20", "0.5.21", "0.5.22", "0.5.23"),
    ),
)
