"""vLLM's DFlash rows (method dflash): DFlashQwen3ForCausalLM (vllm/model_executor/models/qwen3_dflash.py) and
DFlashLagunaForCausalLM (vllm/model_executor/models/laguna_dflash.py, 0.25.0+), and RANGES, DFlash's release
ranges.
"""

from __future__ import annotations

from ...checkpoint.sidefiles import MASK_FILE
from ..common import LLAMA_DERIVE, LLAMA_FIELDS, STACK_LLAMA, llama_decoder
from ..spec import (
    Derive,
    Dispatch,
    DraftClass,
    Drop,
    FamilyRange,
    Field,
    IgnoreSuffix,
    LaunchCheck,
    Param,
    Prefix,
    Raise,
    Rename,
    RenameTo,
    all_agreed,
)
from .common import PROP, REG, VALUEERROR

# --- DFlash (block-parallel drafters): vllm/model_executor/models/qwen3_dflash.py --------------------------------
DF = "vllm/model_executor/models/qwen3_dflash.py"
DFLASH_FIELDS = LLAMA_FIELDS + (
    Field("Vd_raw", ("draft_vocab_size",), None),
    # fc reads one target state per configured layer: the top-level eagle_aux_hidden_state_layer_ids, else
    # dflash_config.target_layer_ids, else dspark_target_layer_ids, else a top-level target_layer_ids (Muse Glimmer's)
    # (vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py get_eagle3_aux_layers_from_config @ 0.27.0, 0.29.0, 0.32.0,
    # in that order); none: one per draft layer
    Field(
        "n_ids",
        (
            "len:eagle_aux_hidden_state_layer_ids",
            "len:dflash_config.target_layer_ids",
            "len:dspark_target_layer_ids",
            "len:target_layer_ids",
        ),
        None,
    ),
    Field(
        "use_aux_df", ("dflash_config.use_aux_hidden_state", "eagle_config.use_aux_hidden_state", "use_aux_hidden_state"), True, kind="bool"
    ),
    Field("mask_id", ("dflash_config.mask_token_id", "mask_token_id"), None),
    # per-head attention sink bias (MiMo's DFlash): dflash_config.attention_sink_bias, else add_swa_attention_sink_bias
    Field("sink", ("dflash_config.attention_sink_bias", "add_swa_attention_sink_bias"), False, kind="bool"),
)
DFLASH_DERIVE = LLAMA_DERIVE + (
    Derive("Vd", "Vd_raw if Vd_raw is not None else V"),
    Derive("n_fc", "n_ids if n_ids is not None else L"),
)
MASK_HIDDEN = Raise(
    "has_mask_hidden",
    "AssertionError: DFlash embeds masked slots via mask_token_id (optionally overridden by a mask_embedding.pt file); "
    "it should not ship a mask_hidden weight.",
    f"{DF} DFlashQwen3ForCausalLM.load_weights (assert, every release read)",
)
NO_MASK_ID = Raise(
    "mask_id is None",
    "ValueError: Model config must specify `dflash_config.mask_token_id`, `mask_token_id`, … (the token the parallel draft slots are fed)",
    "vllm/v1/worker/gpu/spec_decode/utils.py @ 0.27.0, 0.32.0 (the proposer's parallel-drafting token)",
)
# What vLLM does with a DFlash launch line (vllm/config/speculative.py SpeculativeConfig.__post_init__, read at 0.27.0,
# 0.29.0, 0.32.0; vllm/v1/spec_decode/dflash.py): it never reads the drafter's block_size (DSpark's branch alone
# defaults num_speculative_tokens from it), so num_speculative_tokens is required and is the block it drafts: one bonus
# query and K mask queries (max_num_new_slots_for_drafting, "DFlash uses one bonus query followed by K mask queries").
# The `block_size` the proposer holds is the KV cache's (llm_base_proposer.py: kv_cache_spec.block_size).
DF_SPEC = "vllm/config/speculative.py SpeculativeConfig.__post_init__ @ 0.27.0, 0.29.0, 0.32.0"
DFLASH_LAUNCH = (
    LaunchCheck(
        "steps is None",
        "error",
        "ValueError: A speculative model was provided, but `num_speculative_tokens` was not provided (vLLM gives DFlash no "
        "default from block_size; only DSpark's branch reads it)",
        DF_SPEC,
        code="D006",
    ),
    LaunchCheck(
        "steps is not None and full is not None and steps < full",
        "warning",
        "num_speculative_tokens {steps} fills {steps} of the {full} mask slots the drafter was trained on (block_size {block}): "
        "vLLM never reads block_size, so each step drafts {steps} and accepts at most {steps} + 1 tokens; accept lengths "
        "published for the drafter were measured with the whole block",
        f"{DF_SPEC}; vllm/v1/spec_decode/dflash.py (1 + num_speculative_tokens queries per request)",
        code="D005",
    ),
    LaunchCheck(
        "steps is not None and full is not None and steps > full",
        "warning",
        "num_speculative_tokens {steps} is above the {full} mask slots of the drafter's trained block (block_size {block}): "
        "vLLM never reads block_size and drafts {steps} slots in one block, positions the drafter was never trained on; "
        "nothing fails, the slots past the block are rarely accepted and cost a wider verify",
        f"{DF_SPEC}; vllm/v1/spec_decode/dflash.py (1 + num_speculative_tokens queries per request)",
        code="D005",
    ),
)


def _qwen3_draft_layers(sink: bool) -> tuple[Param, ...]:
    """The block drafters' decoder layers (qwen3_dflash.py, qwen3_dspark.py): Qwen3 layers over the hidden size, not
    EAGLE-3's 2H, with q/k norms; DFlash also builds MiMo's per-head attention sink bias when dflash_config asks."""
    norms = (
        Param("model.layers.{i}.self_attn.q_norm.weight", ("hd",), per_layer=True, role="decoder"),
        Param("model.layers.{i}.self_attn.k_norm.weight", ("hd",), per_layer=True, role="decoder"),
    )
    sinks = (Param("model.layers.{i}.self_attn.attention_sink_bias", ("nh",), when="sink", per_layer=True, role="decoder"),)
    return (
        llama_decoder("model.layers.{i}.", per_layer=True, hidden_norm_when="False", qkv_bias_when="attention_bias", qkv_in="H")
        + norms
        + (sinks if sink else ())
    )


def _dflash_class(versions: str, renames: tuple = (), **extra) -> DraftClass:
    """DFlashQwen3ForCausalLM: Qwen3 decoder layers (q/k norms) reading the hidden size, not EAGLE-3's 2H; a model-level
    hidden_norm and fc over the target states; the mask token embedded through embed_tokens (or mask_embedding.pt).
    `extra`: a subclass built on it (DFlash2): its name, file, fields, derives, parameters and raises are added."""
    return DraftClass(
        name=extra.pop("name", "DFlashQwen3ForCausalLM"),
        file=f"{extra.pop('file', DF)} @ {versions}",
        # a subclass's field of the same name replaces DFlash's (DSpark reads its target layers elsewhere)
        fields=tuple({f.name: f for f in DFLASH_FIELDS + extra.pop("fields", ())}.values()),
        derive=DFLASH_DERIVE + extra.pop("derive", ()),
        params=extra.pop("params", ())
        + (
            Param("model.embed_tokens.weight", ("V", "H"), share="embed", role="embed"),
            # always built (zeros); only a mask_embedding.pt beside the weights fills it, and only then is it used
            Param(
                "model.mask_embedding",
                ("H",),
                when="not (has_mask_file and mask_id is not None)",
                role="mask embedding",
                missing_ok="True",
                missing_note="zeros and unused: without mask_embedding.pt the mask token is embedded by embed_tokens[mask_token_id]",
            ),
            Param(
                "model.mask_embedding",
                ("H",),
                when="has_mask_file and mask_id is not None",
                role="mask embedding",
                side_file=MASK_FILE,
            ),
            Param("model.fc.weight", ("H", "Ht*n_fc"), when="use_aux_df", role="fc"),
            Param("model.hidden_norm.weight", ("H",), role="fc"),
            Param("model.norm.weight", ("H",), role="norm"),
            Param("lm_head.weight", ("Vd", "H"), share="head", role="head"),
            # built when the draft vocab differs from the target's (get_vocab_size(); without --target, the draft's
            # vocab_size stands in for it): a padded target builds it too, zeros = identity (vllm #46435)
            Param(
                "draft_id_to_target_id",
                ("Vd",),
                when="Vd != (V if Vt is None else Vt)",
                role="vocab map",
                missing_ok="Vd == V",
                missing_note="zeros: the identity map, right for a drafter over the target's first rows (a padded target)",
            ),
        )
        + _qwen3_draft_layers(sink=True),
        loader=(
            Drop("t2d", why="vLLM never uses t2d", cite=f"{DF} load_weights"),
            RenameTo("d2t", to="draft_id_to_target_id", cite=f"{DF} load_weights"),
            Drop(
                "mask_embedding",
                why="only a mask_embedding.pt side file fills the mask embedding; a tensor of that name is skipped",
                when="not has_mask_file",
                cite=f"{DF} load_weights (orig_to_new_substr['mask_embedding'] = None without the side file)",
            ),
            Drop("fc.", why="use_aux_hidden_state is false: the loader skips fc", when="not use_aux_df", cite=f"{DF} load_weights"),
            Drop("rotary_emb.inv_freq", why="rotary caches are recomputed", cite="vllm/model_executor/models/utils.py (AutoWeightsLoader)"),
            Prefix("model.", unless="lm_head", cite=f"{DF} load_weights: every non-lm_head name gets 'model.'"),
            Rename(old="midlayer.", new="layers.0.", cite=f"{DF} DFlashQwen3Model.hf_to_vllm_mapper"),
            *renames,
            *STACK_LLAMA,
            IgnoreSuffix(".bias", why="unexpected .bias names are ignored", cite="vllm/model_executor/models/utils.py AutoWeightsLoader"),
        ),
        unknown="raise",
        unknown_message=VALUEERROR,
        missing="silent",
        raises=(MASK_HIDDEN, NO_MASK_ID) + extra.pop("raises", ()),  # a null target_hidden_size falls back to hidden_size (`or`)
        share_embed="'target' if not has_embed else 'own-unless-equal'",
        share_head="'target' if not has_head else 'own-unless-equal'",
        share_cite=f"{PROP}; {DF} load_weights (process_eagle_weight)",
        side_files=(MASK_FILE,),  # _read_mask_embedding (get_hf_file_bytes: a local dir or the Hub)
        methods=("DFLASH",),  # vllm/config/speculative.py SpeculativeConfig.method
        launch_checks=DFLASH_LAUNCH,
        wider_tp="truncate",
        **extra,
    )


MUSE_RENAMES = (
    Rename(old="encoder.output_norm_enc.", new="hidden_norm.", cite=f"{DF} @ 0.28.0 hf_to_vllm_mapper (Muse Glimmer names)"),
    Rename(old="encoder.fc.", new="fc.", cite=f"{DF} @ 0.28.0 hf_to_vllm_mapper (Muse Glimmer names)"),
)
# --- DFlash for Laguna targets: vllm/model_executor/models/laguna_dflash.py DFlashLagunaForCausalLM (0.25.0+) -------
# Laguna's own decoder layers (laguna.py LagunaDecoderLayer: a fused qkv_proj, an optional g_proj output gate, q/k
# norms, gate_proj/up_proj kept separate, or a sparse MoE block) behind DFlash's fc/hidden_norm, plus one RMSNorm per
# target state (aux_hidden_norms) before fc. A Laguna DFlash config names LagunaForCausalLM; EAGLEConfig renames it
# DFlashLagunaForCausalLM for method dflash (registry.py comment @ 0.29.0 … 0.32.0). Its loader is a plain
# params_dict loop under "model." (no renames, no q/k/v or gate/up stacking, no t2d/d2t handling); embed_tokens and
# lm_head are the target's through the proposer. The file is the same in the 0.25.0–0.29.0 wheels; 0.30.0 reads the
# target's layer count with get_total_num_hidden_layers (the attention prefix only) and remaps kv-cache scales
# through the quant config (not modelled: quantized drafters). The decoder layer's MoE choice changes in 0.31.0.
LAG = "vllm/model_executor/models/laguna_dflash.py"
LAG_DEC = "vllm/model_executor/models/laguna.py"
# the draft config is a LagunaConfig (model_type laguna): vLLM's own (transformers_utils/configs/laguna.py) in the
# 0.25.0–0.30.0 wheels, Transformers' (v5.17+, __post_init__ fills layer_types / mlp_layer_types) from 0.31.0
LAGUNA_FIELDS = (
    Field("mt", ("model_type",), None, kind="any"),
    Field(
        "n_tl",
        ("len:dflash_config.target_layer_ids",),
        None,
        required="KeyError: 'target_layer_ids' (DFlashLagunaModel reads dflash_config[\"target_layer_ids\"])",
    ),
    Field("ltypes", ("layer_types",), None, kind="any"),
    Field("gating", ("gating",), True, kind="any"),
    Field("act", ("hidden_act",), "silu", kind="any"),
    Field("nh_per", ("num_attention_heads_per_layer",), None, kind="any"),
    Field("swa_sink", ("swa_attention_sink_enabled",), False, kind="bool"),
    Field("nexp", ("num_experts",), 256),
    Field("mI", ("moe_intermediate_size",), 512),
    Field("sI", ("shared_expert_intermediate_size",), 512),
)
# the layer's heads (Laguna-XS overrides them per layer) and the gate's width (True / "per-head": one per head)
_NHL = "(nh_per[i] if nh_per is not None else nh)"
_GATE = f"{_NHL} if gating is True or gating == 'per-head' else {_NHL}*hd"
_LAG_NOT_LAGUNA = Raise(
    "mt != 'laguna'",
    "AttributeError: the draft config is not a LagunaConfig (its model_type is not 'laguna'): LagunaAttention reads config.gating",
    f"{LAG_DEC} LagunaAttention.__init__ (self.gating = config.gating)",
)


def _laguna_class(*, versions: str, moe: str, raises: tuple[Raise, ...], fields: tuple[Field, ...] = ()) -> DraftClass:
    """DFlashLagunaForCausalLM. `moe`: when layer {i} is a sparse MoE block (laguna.py LagunaDecoderLayer.is_moe_layer
    as the release reads it); `raises`/`fields`: the release's own config checks and the fields they read."""
    cite = f"{LAG} @ {versions}"
    dec = f"{LAG_DEC} @ {versions} LagunaDecoderLayer"
    dense = f"not ({moe})"

    def layer(name, shape, when="True"):
        return Param(f"model.layers.{{i}}.{name}", shape, when=when, per_layer=True, role="decoder")

    return DraftClass(
        name="DFlashLagunaForCausalLM",
        file=cite,
        fields=tuple({f.name: f for f in DFLASH_FIELDS + LAGUNA_FIELDS + fields}.values()),
        derive=DFLASH_DERIVE + (Derive("n_aux", "n_tl"),),
        params=(
            Param("model.embed_tokens.weight", ("V", "H"), share="embed", role="embed"),
            # fc and one norm per target state, sized from the target's hidden size (get_hidden_size())
            Param("model.aux_hidden_norms.{j}.weight", ("Ht",), role="fc"),
            Param("model.fc.weight", ("H", "Ht*n_tl"), role="fc"),
            Param("model.hidden_norm.weight", ("H",), role="fc"),
            Param("model.norm.weight", ("H",), role="norm"),
            Param("lm_head.weight", ("Vd", "H"), share="head", role="head"),
            # the loader takes the checkpoint's fused qkv_proj as it is (no q/k/v stacking)
            layer("self_attn.qkv_proj.weight", (f"({_NHL} + 2*nkv)*hd", "H")),
            layer("self_attn.qkv_proj.bias", (f"({_NHL} + 2*nkv)*hd",), when="attention_bias"),
            layer("self_attn.o_proj.weight", ("H", f"{_NHL}*hd")),
            layer("self_attn.o_proj.bias", ("H",), when="attention_bias"),
            layer("self_attn.g_proj.weight", (_GATE, "H"), when="gating"),
            layer("self_attn.q_norm.weight", ("hd",)),
            layer("self_attn.k_norm.weight", ("hd",)),
            # attention sinks on sliding layers when swa_attention_sink_enabled
            layer("self_attn.sink", (_NHL,), when="swa_sink and ltypes is not None and ltypes[i] == 'sliding_attention'"),
            layer("mlp.gate_proj.weight", ("I", "H"), when=dense),
            layer("mlp.up_proj.weight", ("I", "H"), when=dense),
            layer("mlp.down_proj.weight", ("H", "I"), when=dense),
            # a sparse layer: router, score bias, FusedMoE experts (the plain loop passes no expert id: only a
            # checkpoint without expert tensors gets past it, and then they stay unfilled), optional shared expert
            layer("mlp.gate.weight", ("nexp", "H"), when=moe),
            layer("mlp.experts.e_score_correction_bias", ("nexp",), when=moe),
            layer("mlp.experts.w13_weight", ("nexp", "2*mI", "H"), when=moe),
            layer("mlp.experts.w2_weight", ("nexp", "H", "mI"), when=moe),
            layer("mlp.shared_expert.gate_proj.weight", ("sI", "H"), when=f"({moe}) and sI > 0"),
            layer("mlp.shared_expert.up_proj.weight", ("sI", "H"), when=f"({moe}) and sI > 0"),
            layer("mlp.shared_expert.down_proj.weight", ("H", "sI"), when=f"({moe}) and sI > 0"),
            layer("input_layernorm.weight", ("H",)),
            layer("post_attention_layernorm.weight", ("H",)),
        ),
        loader=(
            Drop("rotary_emb.inv_freq", why="rotary caches are recomputed", cite="vllm/model_executor/models/utils.py (AutoWeightsLoader)"),
            Prefix("model.", unless="lm_head", cite=f"{cite} DFlashLagunaForCausalLM.load_weights: every non-lm_head name gets 'model.'"),
        ),
        unknown="raise",
        unknown_message="KeyError: '{name}' (DFlashLagunaModel.load_weights indexes params_dict: no renames, no q/k/v or "
        "gate/up stacking, no t2d/d2t, no mask_embedding parameter)",
        missing="silent",
        raises=(
            _LAG_NOT_LAGUNA,
            Raise(
                "Vd_raw is None",
                "ValueError: Laguna DFlash config requires `draft_vocab_size`.",
                f"{cite} DFlashLagunaForCausalLM.__init__",
            ),
            Raise(
                "Vd_raw is not None and Vd_raw != (V if Vt is None else Vt)",
                "ValueError: Laguna DFlash shares the target lm_head and requires `draft_vocab_size` to match the target vocabulary size.",
                f"{cite} DFlashLagunaForCausalLM.__init__ (get_vocab_size())",
            ),
            Raise(
                "n_tl == 0",
                "ValueError: Laguna DFlash config requires non-empty `dflash_config.target_layer_ids`.",
                f"{cite} DFlashLagunaModel.__init__",
            ),
            Raise(
                "ltypes is not None and len(ltypes) != L",
                "ValueError: DFlash layer_types length does not match num_hidden_layers",
                f"{cite} _get_dflash_layer_types",
            ),
            Raise(
                "ltypes is not None and len(ltypes) == L and L > 0 and min(ltypes) != max(ltypes)",
                "NotImplementedError: Laguna DFlash drafter requires a uniform `layer_types`",
                f"{cite} _get_dflash_layer_types",
            ),
            Raise("act != 'silu'", "ValueError: Unsupported activation: only silu is supported.", f"{dec} (LagunaMLP)"),
            NO_MASK_ID,
        )
        + raises,
        share_embed="'target' if not has_embed else 'own-unless-equal'",
        share_head="'target' if not has_head else 'own-unless-equal'",
        share_cite=f"{PROP}; {cite} load_weights (process_eagle_weight)",
        side_files=(),  # the Laguna model never reads mask_embedding.pt: its mask embedding is a zero buffer, unused
        methods=("DFLASH",),
        launch_checks=DFLASH_LAUNCH,
        wider_tp="truncate",
    )


# 0.25.0–0.30.0: vLLM's LagunaConfig (mlp_only_layers default [0], decoder_sparse_step 1, layer_types default None)
_LAG_MOE_OLD = "i not in mlp_only and nexp > 0 and (i + 1) % step == 0"
_LAG_OLD = dict(
    moe=_LAG_MOE_OLD,
    fields=(
        Field("mlp_only", ("mlp_only_layers",), (0,), kind="any"),
        Field("step", ("decoder_sparse_step",), 1),
    ),
    raises=(
        Raise(
            "ltypes is None",
            "ValueError: Laguna DFlash config requires `layer_types`.",
            f"{LAG} _get_dflash_layer_types (vLLM's LagunaConfig leaves it None)",
        ),
    ),
)
# 0.31.0+: get_mlp_layer_types (Transformers' LagunaConfig: layer 0 dense, the rest sparse unless mlp_layer_types says)
_LAG_NEW = dict(
    moe="(mtypes[i] == 'sparse' if mtypes is not None else i > 0) and nexp > 0",
    fields=(Field("mtypes", ("mlp_layer_types",), None, kind="any"),),
    raises=(
        Raise(
            "mtypes is not None and len(mtypes) != L",
            "ValueError: mlp_layer_types length does not match num_hidden_layers (Transformers' LagunaConfig)",
            "transformers/models/laguna/configuration_laguna.py @ 5.19.0 (__post_init__ validation)",
        ),
    ),
)


def _dflash_dispatch(registry: dict[str, str], cite: str, fallback: str = "DFlashQwen3ForCausalLM") -> Dispatch:
    return Dispatch(
        "vllm",
        registry,
        fallback,
        cite=cite,
        rewrite_prefix="DFlash",
        rewrite_note="vLLM rewrites architectures {arch!r} → {rewritten!r} for method dflash",
        unknown_message="ValueError: Model architectures {archs} are not supported for method dflash (vllm registry: {arch!r} unknown)",
    )


DFLASH_CONF = "tests/test_conformance_vllm_dflash.py"
_DF_REG = {"DFlashDraftModel": "DFlashQwen3ForCausalLM"}
_MUSE = {"MuseGlimmerAssistantModel": "DFlashQwen3ForCausalLM", "DFlashMuseGlimmerAssistantModel": "DFlashQwen3ForCausalLM"}
_LAG_REG = {"DFlashLagunaForCausalLM": "DFlashLagunaForCausalLM"}
# the DFlash runs build Qwen3 drafters on a Qwen3 target; DFlashLagunaForCausalLM needs a Laguna target (its fc, aux
# norms and vocabulary check read the target's config): read in the 0.25.0–0.32.0 wheels, not run
_LAG_NOT_RUN = ("DFlashLagunaForCausalLM",)
_DF_PARAMS_LOOP = (
    "vLLM 0.20–0.25 load DFlash through DFlashQwen3Model's own params_dict loop (KeyError on an unknown name); "
    "specbridge models the DFlash loader from 0.26.0"
)
RANGES: tuple[FamilyRange, ...] = (
    FamilyRange(
        engine="vllm",
        family="dflash",
        first="0.20.0",
        last="0.24",
        dispatch=_dflash_dispatch(_DF_REG, f"{REG} @ 0.20.0"),
        classes={},
        begins="qwen3_dflash.py and the DFlashDraftModel registry entry first ship in the 0.20.0 wheel (absent from 0.19.1)",
        versions_read=("0.20.0", "0.22.0", "0.24.0"),
        unmodelled=_DF_PARAMS_LOOP,
    ),
    FamilyRange(
        engine="vllm",
        family="dflash",
        first="0.25.0",
        last="0.25",
        dispatch=_dflash_dispatch({**_DF_REG, **_LAG_REG}, f"{REG} @ 0.25.0", fallback="DFlashLagunaForCausalLM"),
        classes={"DFlashLagunaForCausalLM": _laguna_class(versions="0.25.0", **_LAG_OLD)},
        begins=f"{LAG} and the DFlashLagunaForCausalLM registry entry first ship in the 0.25.0 wheel (absent from 0.24.0); "
        "its loader is its own, while qwen3_dflash.py keeps the params_dict loop",
        versions_read=("0.25.0",),
        unmodelled_archs={"DFlashDraftModel": "qwen3_dflash.py DFlashQwen3ForCausalLM (" + _DF_PARAMS_LOOP + ")"},
        not_run=_LAG_NOT_RUN,
    ),
    FamilyRange(
        engine="vllm",
        family="dflash",
        first="0.26.0",
        last="0.27",
        dispatch=_dflash_dispatch({**_DF_REG, **_LAG_REG}, f"{REG} @ 0.26.0, 0.27.0"),
        classes={
            "DFlashQwen3ForCausalLM": _dflash_class("0.26.0, 0.27.0"),
            "DFlashLagunaForCausalLM": _laguna_class(versions="0.26.0, 0.27.0", **_LAG_OLD),
        },
        begins=f"{DF} DFlashQwen3Model.load_weights = AutoWeightsLoader with hf_to_vllm_mapper (midlayer. → layers.0., stacked "
        "q/k/v and gate/up; unknown names raise ValueError): first in the 0.26.0 wheel, 0.25.0 has the params_dict loop",
        versions_read=("0.26.0", "0.27.0"),
        runs=all_agreed(DFLASH_CONF, "2026-12-01", 19, "0.27.0"),
        not_run=_LAG_NOT_RUN,
    ),
    FamilyRange(
        engine="vllm",
        family="dflash",
        first="0.28.0",
        last="0.30",
        dispatch=_dflash_dispatch({**_DF_REG, **_MUSE, **_LAG_REG}, f"{REG} @ 0.28.0 … 0.30.0"),
        classes={
            "DFlashQwen3ForCausalLM": _dflash_class("0.28.0 … 0.30.0", MUSE_RENAMES),
            "DFlashLagunaForCausalLM": _laguna_class(versions="0.28.0 … 0.30.0", **_LAG_OLD),
        },
        begins=f"{DF} adds the Muse Glimmer renames (encoder.fc. → fc., encoder.output_norm_enc. → hidden_norm.) and the "
        "registry the MuseGlimmerAssistantModel names: first in the 0.28.0 wheel (its loader drops names by "
        "skip_substrs, 0.29.0 by a WeightsMapper: the same names), absent from 0.27.0",
        versions_read=("0.28.0", "0.29.0", "0.30.0"),
        # a DFlash2DraftModel checkpoint is read as DFlash2 (its own rows below)
        runs=all_agreed(DFLASH_CONF, "2026-12-01", 19, "0.29.0"),
        not_run=_LAG_NOT_RUN,
    ),
    FamilyRange(
        engine="vllm",
        family="dflash",
        first="0.31.0",
        last=None,
        dispatch=_dflash_dispatch({**_DF_REG, **_MUSE, **_LAG_REG}, f"{REG} @ 0.31.0 … 0.32.0"),
        classes={
            "DFlashQwen3ForCausalLM": _dflash_class("0.31.0 … 0.32.0", MUSE_RENAMES),
            "DFlashLagunaForCausalLM": _laguna_class(versions="0.31.0 … 0.32.0", **_LAG_NEW),
        },
        begins=f"{LAG_DEC} LagunaDecoderLayer picks its MoE layers from mlp_layer_types (get_mlp_layer_types; Transformers' "
        "LagunaConfig, v5.17+) instead of mlp_only_layers / decoder_sparse_step, and vLLM stops shipping its own "
        "LagunaConfig: first in the 0.31.0 wheel, absent from 0.30.0 (qwen3_dflash.py unchanged for DFlash)",
        versions_read=("0.31.0", "0.32.0"),
        runs=all_agreed(DFLASH_CONF, "2026-12-01", 19, "0.32.0"),
        not_run=_LAG_NOT_RUN,
    ),
)
