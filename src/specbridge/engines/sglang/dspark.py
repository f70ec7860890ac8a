"""SGLang's DSpark rows (--speculative-algorithm DSPARK): DSparkDraftMixin over each release's DFlashDraftModel."""

from __future__ import annotations

from ...record import replace
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
    all_agreed,
)
from .dflash import DFM, ENCODER_RENAMES, IDS_A, IDS_B, _sglang_dflash_class

# --- DSpark: sglang/srt/models/dspark.py, --speculative-algorithm DSPARK (its own worker, speculative/dspark_components/
# dspark_worker_v2.py DSparkWorkerV2). Qwen3DSparkModel (0.5.16+), DSparkDraftModel (0.5.17+) and LingDSparkModel (0.5.19+)
# are one class (DSparkDraftMixin over that release's DFlashDraftModel; the named subclasses are empty): DFlash's
# backbone and loader plus a Markov head (markov_head_type vanilla: markov_w1 Embedding [V, rank], markov_w2 Linear
# [V, rank]; gated adds gate_proj [rank, H + rank]; rnn adds joint_proj [3·rank, 2·rank + H]) and a confidence head
# built only when SGLANG_RAGGED_VERIFY_MODE is not "static" (its default, environ.py @ 0.5.16, 0.5.20: not built;
# modelled here as the default). load_weights skips lm_head. / rotary_emb. / embed_tokens. (0.5.16-0.5.18: as written;
# 0.5.19+: after stripping model., unless a Nemotron-3.5 draft: the same names reach no parameter either way, DFlash's
# loader skips them), skips confidence_head.* when the head is not built, raises on a markov_head.* name (as written,
# unprefixed) the head lacks, and hands everything else to DFlashDraftModel.load_weights. parse_dspark_draft_config
# (speculative/dspark_components/dspark_config.py, the same checks 0.5.16-0.5.23) runs in the constructor. What
# differs between releases is the DFlash backbone each one inherits (dflash.py's ranges: ids checked against the
# draft's layer count through 0.5.17, encoder.* aliases from 0.5.18, grouped convolutions from 0.5.19, MiMo's sink
# bias from 0.5.20) and the EntryClass names. The worker shares the target's embedding and head (attach_shared_modules)
# and embeds the mask token with the target's embedding: no release reads mask_embedding.pt for DSpark (the side file
# is merged by dflash_worker_v2.py only, the DFLASH worker; no file of speculative/dspark_components names it, 0.5.16-0.5.23).
DSM = "sglang/srt/models/dspark.py"
DSC = "sglang/srt/speculative/dspark_components/dspark_config.py"
DSW = "sglang/srt/speculative/dspark_components/dspark_worker_v2.py"
# Two readers of the head settings, both lower-casing markov_head_type before comparing it (str(value).lower()):
# parse_dspark_draft_config (the constructor's first call) takes dspark_markov_head_type, else dspark_config's /
# dflash_config's markov_head_type, else the top level's, and refuses a positive rank without one unless a dspark_*
# prefixed key is set; build_markov_head builds the head from the top-level markov_head_type (getattr, default 'vanilla')
# and markov_rank (default 0). 'Vanilla' or 'GATED' pass both (dspark_config.py and dspark.py @ 0.5.16, 0.5.19, 0.5.20,
# 0.5.23, read).
DSPARK_SG_FIELDS = (
    Field("rank", ("markov_rank",), 0),  # build_markov_head's
    Field(
        "rank_cfg", ("dspark_markov_rank", "dspark_config.markov_rank", "dflash_config.markov_rank", "markov_rank"), 0
    ),  # parse_dspark_draft_config's
    Field(
        "mht",
        ("dspark_markov_head_type", "dspark_config.markov_head_type", "dflash_config.markov_head_type", "markov_head_type"),
        None,
        kind="any",
    ),  # parse_dspark_draft_config's
    Field("mht_built", ("markov_head_type",), "vanilla", kind="any"),  # build_markov_head's
    # uses_prefixed: any of these set lets parse_dspark_draft_config accept a positive rank without a head type
    Field("prefixed", ("dspark_block_size", "dspark_markov_rank", "dspark_noise_token_id", "dspark_target_layer_ids"), None, kind="any"),
)
DSPARK_SG_DERIVE = (
    Derive("mht_l", "None if mht is None else lower(mht)"),
    Derive("head", "lower(mht_built)"),
)
_NO_RANK = "markov_rank <= 0: the class is never built (ValueError), nothing is loaded"
_SG_HEADS = "('vanilla', 'gated', 'rnn')"
DSPARK_SG_PARAMS = (
    Param("markov_head.markov_w1.weight", ("V", "rank"), role="markov head", missing_ok="rank <= 0", missing_note=_NO_RANK),
    Param("markov_head.markov_w2.weight", ("V", "rank"), role="markov head", missing_ok="rank <= 0", missing_note=_NO_RANK),
    Param("markov_head.gate_proj.weight", ("rank", "H + rank"), when="head == 'gated'", role="markov head"),
    Param("markov_head.gate_proj.bias", ("rank",), when="head == 'gated'", role="markov head"),
    Param("markov_head.joint_proj.weight", ("3*rank", "2*rank + H"), when="head == 'rnn'", role="markov head"),
    Param("markov_head.joint_proj.bias", ("3*rank",), when="head == 'rnn'", role="markov head"),
)
DSPARK_SG_RAISES = (
    Raise(
        "rank_cfg > 0 and mht is None and prefixed is None",
        "ValueError: DSpark requires markov_head_type when markov_rank > 0, got None.",
        f"{DSC} parse_dspark_draft_config @ 0.5.16, 0.5.19, 0.5.23 (called by DSparkDraftMixin.__init__)",
    ),
    Raise(
        "rank_cfg <= 0 or rank <= 0",
        "ValueError: DSpark draft requires markov_rank > 0 (the Markov head is the core of the semi-AR draft)",
        f"{DSM} DSparkDraftMixin.__init__ / build_markov_head @ 0.5.16 … 0.5.23",
    ),
    Raise(
        f"(mht_l is not None and mht_l not in {_SG_HEADS}) or (rank > 0 and head not in {_SG_HEADS})",
        "ValueError: Unsupported DSpark markov_head_type (SGLang lower-cases the value first: vanilla, gated and rnn are "
        "accepted in any case)",
        f"{DSC} parse_dspark_draft_config, {DSM} build_markov_head @ 0.5.16 … 0.5.23 (str(markov_head_type).lower())",
    ),
)

# What SGLang does with a DSPARK launch line (sglang/srt/arg_groups/speculative_hook.py _handle_dspark; the gamma and
# window logic is the same in every release read, 0.5.16 … 0.5.23, only its device/dp/pp checks move): gamma, the
# positions one step drafts, is --speculative-dspark-block-size, else the draft config's block (dspark_block_size, else
# dflash_config.block_size, else block_size: dspark_config.py parse_dspark_draft_config), else 7 when
# --speculative-num-draft-tokens is not given either; the verify window --speculative-num-draft-tokens must be
# gamma + 1 and is set to it when absent. The worker then takes gamma = window - 1 and only logs a config block that
# differs ("DSpark gamma mismatch", dspark_config.py resolve_runtime_config).
DS_ARGS = "sglang/srt/arg_groups/speculative_hook.py _handle_dspark @ 0.5.16 … 0.5.23"
DSPARK_SG_LAUNCH = (
    LaunchCheck(
        "gamma_flag is not None and gamma_flag <= 0",
        "error",
        "ValueError: DSpark requires --speculative-dspark-block-size to be positive, got {gamma_flag}.",
        DS_ARGS,
        code="D006",
    ),
    LaunchCheck(
        "gamma_flag is not None and gamma_flag > 0 and draft_tokens is not None and draft_tokens != gamma_flag + 1",
        "error",
        "ValueError: DSpark speculative_num_draft_tokens must equal gamma + 1 (gamma={gamma_flag}, from "
        "--speculative-dspark-block-size), but got speculative_num_draft_tokens={draft_tokens}.",
        DS_ARGS,
        code="D006",
    ),
    LaunchCheck(
        "gamma_flag is None and block is not None and draft_tokens is not None and draft_tokens != block + 1",
        "error",
        "ValueError: DSpark speculative_num_draft_tokens must equal gamma + 1 (gamma={block}, the drafter's block_size), "
        "but got speculative_num_draft_tokens={draft_tokens}.",
        DS_ARGS,
        code="D006",
    ),
    LaunchCheck(
        "gamma_flag is None and block is None and draft_tokens is not None and draft_tokens < 2",
        "error",
        "ValueError: DSpark speculative_num_draft_tokens must be >= 2 (= gamma + 1), got {draft_tokens}.",
        DS_ARGS,
        code="D006",
    ),
    LaunchCheck(
        "steps is not None and steps != 1",
        "warning",
        "DSpark only supports speculative_num_steps == 1; overriding speculative_num_steps={steps} to 1 (SGLang's own "
        "warning: an EAGLE setting; a DSpark step drafts gamma positions in one block)",
        DS_ARGS,
        code="D006",
    ),
    LaunchCheck(
        "topk is not None and topk != 1",
        "warning",
        "DSpark only supports speculative_eagle_topk == 1; overriding speculative_eagle_topk={topk} to 1 (SGLang's own "
        "warning: a DSpark drafter proposes one chain)",
        DS_ARGS,
        code="D006",
    ),
    LaunchCheck(
        "block_flag is not None",
        "warning",
        "--speculative-dflash-block-size is DFLASH's flag: _handle_dspark never reads it (DSpark's block is "
        "--speculative-dspark-block-size, gamma, with --speculative-num-draft-tokens = gamma + 1)",
        DS_ARGS,
        code="D006",
    ),
    LaunchCheck(
        "gamma_flag is not None and gamma_flag > 0 and block is not None and gamma_flag != block",
        "warning",
        "--speculative-dspark-block-size {gamma_flag} is not the drafter's block_size {block}: SGLang drafts {gamma_flag} "
        "positions per step and only logs 'DSpark gamma mismatch'; accept lengths published for the drafter were "
        "measured with its trained block",
        f"{DS_ARGS}; {DSC} resolve_runtime_config @ 0.5.16 … 0.5.23",
        code="D005",
    ),
    LaunchCheck(
        "gamma_flag is None and block is None and draft_tokens is None",
        "warning",
        "no --speculative-dspark-block-size, no --speculative-num-draft-tokens and no block_size in the drafter's config: "
        "SGLang defaults DSpark's gamma to 7 ('DSpark gamma is not set; defaulting to 7'), whatever block the drafter "
        "was trained on",
        f"{DS_ARGS}; {DSC} DEFAULT_DSPARK_GAMMA",
        code="D005",
    ),
)
# tests/test_conformance_sglang_dspark_launch.py: _handle_dspark and resolve_runtime_config of each release, run on the
# launch settings of its matrix, against check --launch
DSPARK_SG_LAUNCH_RUNS = all_agreed(
    "tests/test_conformance_sglang_dspark_launch.py", "2026-12-02", 12, "0.5.16", "0.5.19", "0.5.20", "0.5.23"
)


def _sglang_dspark_class(*, name: str, versions: str, dflash_versions: str, ids_check: Raise, renames: tuple = (), **dflash) -> DraftClass:
    """`name` as SGLang `versions` builds it: DSparkDraftMixin over the DFlashDraftModel of `dflash_versions` (its ids
    check, renames, `sink`/`conv`), with no side file (the DSpark worker reads none)."""
    cite = f"{DSM} @ {versions} DSparkDraftMixin.load_weights"
    base = _sglang_dflash_class(
        versions=dflash_versions,
        ids_check=ids_check,
        renames=renames,
        side_files=(),
        name=name,
        fields=DSPARK_SG_FIELDS,
        derive=DSPARK_SG_DERIVE,
        params=DSPARK_SG_PARAMS,
        raises=DSPARK_SG_RAISES,
        **dflash,
    )
    return replace(
        base,
        file=f"{DSM} @ {versions} (DSparkDraftMixin over {DFM} @ {dflash_versions} DFlashDraftModel)",
        fields=tuple(f for f in base.fields if f.name not in ("V",)) + (Field("V", ("vocab_size",), 0),),
        loader=(
            Drop("rotary_emb.", why="DSpark's load_weights skips rotary_emb.* (_DSPARK_SKIPPED_WEIGHT_PREFIXES)", cite=cite),
            Drop(
                "confidence_head.",
                why="the confidence head is not built under SGLANG_RAGGED_VERIFY_MODE=static (the default): its names are skipped",
                cite=f"{DSM} @ {versions} build_confidence_head",
            ),
        )
        + base.loader,
        unknown_under="markov_head.",
        unknown_under_message="ValueError: DSpark unexpected markov weight {name!r} not found in model parameters (known "
        "markov params require the config's markov_head_type head)",
        methods=("DSPARK",),
        launch_checks=DSPARK_SG_LAUNCH,
        share_cite=f"{DSW} attach_shared_modules (the target's embed_tokens and lm_head) @ 0.5.16, 0.5.20, 0.5.23",
        notes=(
            "modelled with SGLANG_RAGGED_VERIFY_MODE unset (static): confidence_head.* skipped; in another mode the head is "
            "built and a checkpoint without it raises",
            "the mask token is embedded by the target's embedding (mask_token_id must be set and inside the target's "
            f"vocabulary: {DSC} resolve_runtime_config raises at worker start otherwise); mask_embedding.pt is never read",
        ),
    )


_SG_DSPARK_Q = {"Qwen3DSparkModel": "Qwen3DSparkModel"}
_SG_DSPARK_D = {**_SG_DSPARK_Q, "DSparkDraftModel": "DSparkDraftModel"}  # 0.5.17+
_SG_DSPARK = {**_SG_DSPARK_D, "LingDSparkModel": "LingDSparkModel"}  # 0.5.19+
# other DSpark drafters SGLang builds from their own files, not modelled: name -> file (first release read with it)
_SG_DSPARK_OTHER = {"DeepseekV4ForCausalLMDSpark": "sglang/srt/models/deepseek_v4_dspark.py, from 0.5.16"}
_SG_DSPARK_LFM2 = {"Lfm2DSparkDraftModel": "sglang/srt/models/lfm2_dspark.py, from 0.5.19"}
_SG_DSPARK_MINIMAX = {"DSparkMiniMaxDraftModel": "sglang/srt/models/dspark_minimax.py, from 0.5.23"}
DSPARK_CONF = "tests/test_conformance_sglang_dflash.py"
DSPARK_CASES = 14  # CASES3 of DSPARK_CONF


def _sglang_dspark_dispatch(registry: dict[str, str], versions: str) -> Dispatch:
    return Dispatch(
        "sglang",
        registry,
        "Qwen3DSparkModel",
        cite=f"{DSM} EntryClass @ {versions} (SGLang dispatches on architectures[0])",
        unknown_message="ValueError: {arch!r} is no DSpark class of this SGLang (sglang/srt/models/dspark.py EntryClass)",
    )


def _sglang_dspark_range(*, first, last, registry, versions, read, runs, begins, other, dflash_versions, ids_check, renames=(), **dflash):
    return FamilyRange(
        engine="sglang",
        family="dspark",
        first=first,
        last=last,
        dispatch=_sglang_dspark_dispatch(registry, versions),
        classes={
            n: _sglang_dspark_class(
                name=n, versions=versions, dflash_versions=dflash_versions, ids_check=ids_check, renames=renames, **dflash
            )
            for n in registry
        },
        begins=begins,
        versions_read=read,
        unmodelled_archs=other,
        runs=all_agreed(DSPARK_CONF, "2026-12-02", DSPARK_CASES, *runs),
    )


RANGES = (
    _sglang_dspark_range(
        first="0.5.16",
        last="0.5.16",
        registry=_SG_DSPARK_Q,
        versions="0.5.16",
        read=("0.5.15", "0.5.16"),
        runs=("0.5.16",),
        begins=f"{DSM} (Qwen3DSparkModel = DSparkDraftMixin over DFlashDraftModel) and SpeculativeAlgorithm.DSPARK "
        "(sglang/srt/speculative/spec_info.py) first ship in the 0.5.16 wheel, absent from 0.5.15",
        other=_SG_DSPARK_OTHER,
        dflash_versions="0.5.16, 0.5.17",
        ids_check=IDS_A,
    ),
    _sglang_dspark_range(
        first="0.5.17",
        last="0.5.17",
        registry=_SG_DSPARK_D,
        versions="0.5.17",
        read=("0.5.17",),
        runs=(),
        begins=f"{DSM} EntryClass @ 0.5.17 adds DSparkDraftModel (absent from 0.5.16's); its dflash.py still checks the ids "
        "against num_target_layers else the draft's layer count, with no encoder.* aliases (as 0.5.16's)",
        other=_SG_DSPARK_OTHER,
        dflash_versions="0.5.16, 0.5.17",
        ids_check=IDS_A,
    ),
    _sglang_dspark_range(
        first="0.5.18",
        last="0.5.18",
        registry=_SG_DSPARK_D,
        versions="0.5.18",
        read=("0.5.18",),
        runs=(),
        begins=f"{DFM} @ 0.5.18, which the DSpark classes inherit: ids checked against num_target_layers else max(ids) + 1, the "
        "encoder.fc / encoder.output_norm_enc aliases (absent from 0.5.17's)",
        other=_SG_DSPARK_OTHER,
        dflash_versions="0.5.18",
        ids_check=IDS_B,
        renames=ENCODER_RENAMES,
    ),
    _sglang_dspark_range(
        first="0.5.19",
        last="0.5.19",
        registry=_SG_DSPARK,
        versions="0.5.19",
        read=("0.5.19",),
        runs=("0.5.19",),
        begins=f"{DSM} EntryClass @ 0.5.19 adds LingDSparkModel (absent from 0.5.18's) and load_weights strips model. before "
        "its skips (the Nemotron-3.5 branch); the inherited DFlashDraftModel builds grouped convolutions from 0.5.19",
        other={**_SG_DSPARK_OTHER, **_SG_DSPARK_LFM2},
        dflash_versions="0.5.19",
        ids_check=IDS_B,
        renames=ENCODER_RENAMES,
        conv=True,
    ),
    _sglang_dspark_range(
        first="0.5.20",
        last="0.5.22",
        registry=_SG_DSPARK,
        versions="0.5.20 … 0.5.22",
        read=("0.5.20", "0.5.21", "0.5.22"),
        runs=("0.5.20",),
        begins="the inherited DFlashDraftModel builds MiMo's per-head attention_sink_bias from 0.5.20 (absent from 0.5.19); "
        f"{DSM}'s load_weights and constructor checks are the same in 0.5.20, 0.5.21 and 0.5.22",
        other={**_SG_DSPARK_OTHER, **_SG_DSPARK_LFM2},
        dflash_versions="0.5.20 … 0.5.22",
        ids_check=IDS_B,
        renames=ENCODER_RENAMES,
        sink=True,
        conv=True,
    ),
    _sglang_dspark_range(
        first="0.5.23",
        last=None,
        registry=_SG_DSPARK,
        versions="0.5.23",
        read=("0.5.23",),
        runs=("0.5.23",),
        begins="sglang/srt/models/dspark_minimax.py (DSparkMiniMaxDraftModel) first ships in the 0.5.23 wheel, absent from 0.5.22; "
        f"{DSM}'s Qwen3/Ling/DSparkDraftModel loader is 0.5.22's (its 0.5.23 changes are tensor-parallel head sharding only)",
        other={**_SG_DSPARK_OTHER, **_SG_DSPARK_LFM2, **_SG_DSPARK_MINIMAX},
        dflash_versions="0.5.23",
        ids_check=IDS_B,
        renames=ENCODER_RENAMES,
        sink=True,
        conv=True,
    ),
)
