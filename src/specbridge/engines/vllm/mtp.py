"""vLLM's MTP rows (method mtp): MTP heads inside a target (deepseek_mtp.py, glm4_moe_mtp.py, qwen3_next_mtp.py,
qwen3_5_mtp.py), and RANGES, MTP's release ranges.
"""

from __future__ import annotations

from ...record import replace
from ..common import DECODER_PARTS
from ..spec import (
    Derive,
    Dispatch,
    DraftClass,
    Drop,
    ExpertShard,
    FamilyRange,
    Field,
    IgnoreSuffix,
    KeepLayers,
    LaunchCheck,
    Param,
    QuantSkip,
    Raise,
    RenameRegex,
    SkipUnless,
    all_agreed,
)
from .common import KEYERROR, NOT_INITIALISED, VALUEERROR

# --- MTP heads inside a target (method mtp): deepseek_mtp.py, glm4_moe_mtp.py ----------------------------------------
# The "checkpoint" is the target's own MTP tensors (families/mtp.py finds them from the index), plus the target's
# top-level embedding and head, which some MTP loaders read. `L` is the number of MTP layers the config announces
# (vLLM's n_predict); their names follow the target's decoder layers (`mtp_base` = num_hidden_layers).
SPEC_CFG = "vllm/config/speculative.py (SpeculativeConfig.hf_config_override: the target's model_type → MTP class)"
DSM = "vllm/model_executor/models/deepseek_mtp.py"
GLM_MTP = "vllm/model_executor/models/glm4_moe_mtp.py"
MTP_LOADER = "vllm/model_executor/model_loader/default_loader.py (DefaultModelLoader.load_weights)"
MTP_CONF = "tests/test_conformance_vllm_mtp.py"
MTP_FIELDS = (
    Field("H", ("hidden_size", "text_config.hidden_size")),
    Field("V", ("vocab_size", "text_config.vocab_size")),
    Field("N", ("num_hidden_layers", "text_config.num_hidden_layers")),
    Field("L", ("num_nextn_predict_layers", "text_config.num_nextn_predict_layers"), 0),
    Field("quant", ("quantization_config", "text_config.quantization_config"), None, kind="any"),
    Field("E", ("n_routed_experts",), None),
    Field("mI", ("moe_intermediate_size",), None),
    Field("hd", ("head_dim",), None),
    Field("qk_norm", ("use_qk_norm",), False, kind="bool"),
    Field("q_rank", ("q_lora_rank",), None),
    Field("kv_rank", ("kv_lora_rank",), None),
    Field("topk_method", ("topk_method",), None, kind="any"),
)
MTP_DERIVE = (Derive("mtp_base", "N"),)
MTP_EMPTY = (
    "ValueError: MTP speculative decoding layer {layer} weights missing from checkpoint. The checkpoint may have been "
    "quantized without including the MTP layers. Use a checkpoint that includes MTP layer weights, or disable "
    "speculative decoding."
)
# _rewrite_spec_layer_name: the head's own modules stay under model.layers.{m}; the embedding becomes the top-level one;
# everything else is the decoder block (`mtp_block`), built from the target's own decoder-layer class
# method mtp, and the per-model names vLLM still accepts and rewrites to it (MTPModelTypes, 0.11.0–0.32.0)
MTP_METHODS = ("MTP", "DEEPSEEK_MTP", "GLM4_MOE_MTP", "MIMO_MTP", "ERNIE_MTP", "QWEN3_NEXT_MTP", "LONGCAT_FLASH_MTP")
MTP_HEAD_PARTS = "embed_tokens|enorm|hnorm|eh_proj|shared_head"


def _block_plain(glm: bool, gate_plain: bool) -> tuple[Param, ...]:
    """The decoder block's plain torch parameters (norms; GLM's router gate until 0.30, a GateLinear with a quantization
    method from 0.31.0): DefaultModelLoader names these when nothing filled them, even though the block's linears and
    experts are exempt (conformance 'mtp-linears-absent': raises on 0.27.0 and 0.29.0, loads on 0.32.0)."""
    b = "model.layers.{m}.mtp_block."
    out = [
        Param(b + "input_layernorm.weight", ("H",), per_layer=True, role="decoder", plain=True),
        Param(b + "post_attention_layernorm.weight", ("H",), per_layer=True, role="decoder", plain=True),
        Param(b + "mlp.gate.weight", ("E", "H"), when="E", per_layer=True, role="decoder", plain=gate_plain),
    ]
    if glm:  # glm4_moe.py Glm4MoE: the correction bias always; q/k norms with use_qk_norm
        out += [
            Param(b + "mlp.gate.e_score_correction_bias", ("E",), when="E", per_layer=True, role="decoder", plain=gate_plain),
            Param(b + "self_attn.q_norm.weight", ("hd",), when="qk_norm", per_layer=True, role="decoder", plain=True),
            Param(b + "self_attn.k_norm.weight", ("hd",), when="qk_norm", per_layer=True, role="decoder", plain=True),
        ]
    else:  # deepseek_v2.py: the bias only for topk_method noaux_tc; MLA's low-rank norms
        out += [
            Param(
                b + "mlp.gate.e_score_correction_bias",
                ("E",),
                when="E and topk_method == 'noaux_tc'",
                per_layer=True,
                role="decoder",
                plain=gate_plain,
            ),
            Param(b + "self_attn.q_a_layernorm.weight", ("q_rank",), when="q_rank", per_layer=True, role="decoder", plain=True),
            Param(b + "self_attn.kv_a_layernorm.weight", ("kv_rank",), when="kv_rank", per_layer=True, role="decoder", plain=True),
        ]
    return tuple(out)


# one routed expert's rows of FusedMoE's w13_weight / w2_weight (moe_intermediate_size × hidden); a quantized target
# stores them in its own packing (FP4 halves the last dimension, FP8 blocks have scales beside): not shape-checked there
EXPERT_I = "mI if quant is None else None"


def _routed_experts(strict_all: bool) -> tuple[Param, ...]:
    """The MoE block's routed experts as FusedMoE builds them: w13_weight (gate and up of every expert) and w2_weight
    (down), each expert's slice filled by that expert's own tensors (ExpertShard). An expert the checkpoint lacks keeps
    its slice as FusedMoE allocated it (torch.empty: unquantized_fused_moe_method.py create_weights @ 0.29.0). FusedMoE has a
    quantization method, so DefaultModelLoader's check skips it from 0.21 as it skips the block's linears (conformance
    'mtp-linears-absent' loads on 0.32.0); until 0.20 the check names a parameter no expert reached at all (`strict_all`).
    A slice some experts fill and others do not is reported by no release (the check compares parameter names)."""
    b = "model.layers.{m}.mtp_block.mlp.experts.routed_experts."
    return (
        Param(
            b + "w13_weight",
            shards=(("0", (EXPERT_I, "H")), ("1", (EXPERT_I, "H"))),
            experts="E",
            when="E",
            per_layer=True,
            role="routed experts",
            plain=strict_all,
        ),
        Param(
            b + "w2_weight", shards=(("", ("H", EXPERT_I)),), experts="E", when="E", per_layer=True, role="routed experts", plain=strict_all
        ),
    )


def _mtp_params(strict_all: bool, glm: bool, gate_plain: bool) -> tuple[Param, ...]:
    """One MTP layer as DeepSeekMultiTokenPredictorLayer / Glm4MoeMultiTokenPredictorLayer build it: two norms, eh_proj
    over cat(embedding, previous hidden state), a shared head (norm + lm head), and the target's decoder layer (its
    plain parameters one by one, the rest as one group)."""
    return (
        Param("model.embed_tokens.weight", ("V", "H"), share="embed", role="embed", plain=strict_all),
        Param("model.layers.{m}.enorm.weight", ("H",), per_layer=True, role="mtp norm", plain=True),
        Param("model.layers.{m}.hnorm.weight", ("H",), per_layer=True, role="mtp norm", plain=True),
        Param("model.layers.{m}.eh_proj.weight", ("H", "2*H"), per_layer=True, role="mtp projection", plain=True),
        Param("model.layers.{m}.shared_head.norm.weight", ("H",), per_layer=True, role="norm", plain=True),
        Param("model.layers.{m}.shared_head.head.weight", ("V", "H"), per_layer=True, share="head", role="head", plain=strict_all),
        *_block_plain(glm, gate_plain),
        *_routed_experts(strict_all),
        Param("model.layers.{m}.mtp_block.*", per_layer=True, role="decoder", group=True, group_parts=DECODER_PARTS, plain=strict_all),
    )


def _mtp_loader(file: str, glm: bool) -> tuple:
    keep = KeepLayers(
        r"^(?:model\.(?:language_model\.)?)?layers\.(\d+)\.",
        first="mtp_base",
        why="not one of the MTP layers the config announces (model.layers.{num_hidden_layers + i}.): the MTP loader skips it",
        cite=f"vllm/model_executor/models/utils.py get_spec_layer_idx_from_weight_name; {file} load_weights (spec_layer None → continue)",
    )
    to_top = RenameRegex(r"^model\.layers\.\d+\.embed_tokens\.", "model.embed_tokens.", cite=f"{file} _rewrite_spec_layer_name")
    block = RenameRegex(
        rf"^(model\.layers\.\d+\.)(?!(?:{MTP_HEAD_PARTS})\.)", r"\1mtp_block.", cite=f"{file} _rewrite_spec_layer_name (.mtp_block)"
    )
    head = (
        (RenameRegex(r"^lm_head\.weight$", "model.layers.{mtp_base}.shared_head.head.weight", cite=f"{file} load_weights"),)
        if glm
        else (Drop("lm_head.weight", why="the target's own head: the MTP loader skips it", cite=f"{file} load_weights"),)
    )
    scale = (IgnoreSuffix(".weight_scale", why="LM-head scales are skipped when no quantized head is built", cite=f"{file} load_weights"),)
    mapping = (
        f"{file} load_weights (expert_params_mapping: fused_moe_make_expert_params_mapping over n_routed_experts, "
        "routed_experts_prefix 'routed_experts'; read in the 0.27.1 and 0.29.0 wheels)"
    )
    experts = (
        ExpertShard(r"\.mlp\.experts\.(\d+)\.gate_proj\.weight$", fused=".mlp.experts.routed_experts.w13_weight", shard="0", cite=mapping),
        ExpertShard(r"\.mlp\.experts\.(\d+)\.up_proj\.weight$", fused=".mlp.experts.routed_experts.w13_weight", shard="1", cite=mapping),
        ExpertShard(r"\.mlp\.experts\.(\d+)\.down_proj\.weight$", fused=".mlp.experts.routed_experts.w2_weight", shard="", cite=mapping),
    )
    return (
        Drop("rotary_emb.inv_freq", why="rotary caches are recomputed", cite=f"{file} load_weights"),
        *head,
        keep,
        to_top,
        block,
        *experts,
        IgnoreSuffix(".bias", why="an extra .bias (GPTQ) no module has is skipped", cite=f"{file} load_weights"),
        *(scale if glm else ()),
    )


QU = "vllm/model_executor/layers/quantization"
MTP_QUANT = (
    QuantSkip("fp8", ("ignored_layers", "modules_to_not_convert"), "exact", f"{QU}/fp8.py Fp8Config.get_quant_method (is_layer_skipped)"),
    QuantSkip("compressed-tensors", ("ignore",), "regex", f"{QU}/compressed_tensors/utils.py should_ignore_layer"),
    QuantSkip("modelopt", ("exclude_modules", "ignore"), "wildcard", f"{QU}/modelopt.py is_layer_excluded"),
    QuantSkip("modelopt_fp4", ("exclude_modules", "ignore"), "wildcard", f"{QU}/modelopt.py is_layer_excluded"),
)
# DeepSeekMTP and Glm4MoeMTP declare no packed_modules_mapping: an ignore list is matched against the fused modules'
# own names (qkv_proj, gate_up_proj), so entries naming their shards do not reach them (conformance
# 'fp8-mtp-unquantized-ignored-modules': qkv_proj and gate_up_proj stay FP8, their scales never written)
UNMAPPED = (
    ("qkv_proj", ("q_proj", "k_proj", "v_proj")),
    ("gate_up_proj", ("gate_proj", "up_proj")),
    ("fused_qkv_a_proj", ("q_a_proj", "kv_a_proj_with_mqa")),
)
MTP_QUANT_UNMAPPED = tuple(replace(q, fused_by_name=UNMAPPED) for q in MTP_QUANT)
MTP_STEPS = (
    LaunchCheck(
        "steps is not None and L and steps > L and steps % L != 0",
        "error",
        "ValueError: num_speculative_tokens:{steps} must be divisible by n_predict={L}",
        f"{SPEC_CFG.split(' (')[0]} SpeculativeConfig.__post_init__ (every release read, 0.9.2–0.32.0)",
    ),
    LaunchCheck(
        "steps is not None and L and steps > L",
        "warning",
        "num_speculative_tokens {steps} > the {L} MTP layer(s): vLLM runs the same layers again (spec_step_idx % {L}), "
        "which it warns 'may result in lower acceptance rate'",
        f"{SPEC_CFG.split(' (')[0]} SpeculativeConfig.__post_init__; {DSM} DeepSeekMultiTokenPredictor.forward",
    ),
)


def _mtp_class(
    name: str, file: str, glm: bool, *, completeness: bool, strict_all: bool, top_embed: bool, gate_plain: bool = True
) -> DraftClass:
    """An MTP class at one release range: `completeness` (deepseek_mtp.py from 0.17.0 raises for an MTP layer no
    tensor reached), `strict_all` (DefaultModelLoader's check of an unquantized model named every parameter nothing
    filled until 0.20; later only plain torch parameters), `top_embed` (the target's top-level embedding is read),
    `gate_plain` (the router gate is a plain nn.Linear the loader's check names: glm4_moe.py until 0.30)."""
    loader = _mtp_loader(file, glm)
    if not top_embed:
        loader = (
            Drop("model.embed_tokens.weight", why="the target's own embedding: the MTP loader skips it", cite=f"{file} load_weights"),
        ) + loader
    return DraftClass(
        name=name,
        file=file,
        fields=MTP_FIELDS,
        derive=MTP_DERIVE,
        params=_mtp_params(strict_all, glm, gate_plain),
        loader=loader,
        unknown="raise",
        unknown_message=KEYERROR,
        missing="silent",
        raises=(Raise("not L", "num_nextn_predict_layers is 0 or absent: vLLM builds no MTP layer (n_predict None)", SPEC_CFG),),
        # the proposer replaces the MTP model's embedding and every shared_head.head with the target's (PP = 1)
        share_embed="'target'",
        share_head="'target'",
        share_cite="vllm/v1/spec_decode (_maybe_share_embeddings / _maybe_share_lm_head: MTP always shares, from 0.16.0)",
        methods=MTP_METHODS,
        empty_layer_message=MTP_EMPTY if completeness else "",
        unfilled_when="quant is None",
        unfilled_all=strict_all,
        unfilled_message=NOT_INITIALISED,
        quant_skips=MTP_QUANT_UNMAPPED,
        launch_checks=MTP_STEPS,
        notes=(
            "the decoder block (mtp_block) is the target's own decoder-layer class: its attention and shared-expert tensors "
            "are counted, not simulated one by one; its router and routed experts (FusedMoE w13_weight / w2_weight, one "
            "slice per expert) are accounted parameter by parameter",
        ),
    )


QN_MTP = "vllm/model_executor/models/qwen3_next_mtp.py"
Q35_MTP = "vllm/model_executor/models/qwen3_5_mtp.py"
MTP_MODULE_FIELDS = (
    Field("H", ("hidden_size", "text_config.hidden_size")),
    Field("V", ("vocab_size", "text_config.vocab_size")),
    Field("quant", ("quantization_config", "text_config.quantization_config"), None, kind="any"),
    Field("hd", ("head_dim", "text_config.head_dim"), None),
)


def _mtp_module_class(name: str, file: str, layers_key: str, *, unknown_raises: bool) -> DraftClass:
    """Qwen3-Next / Qwen3.5 MTP: the head is its own module `mtp.*` (fc over cat(embedding, hidden), two pre-fc norms,
    full-attention decoder layers numbered from 0, a final norm); the target's embedding and head are read, then shared."""
    b = "model.layers.{m}."
    return DraftClass(
        name=name,
        file=file,
        fields=MTP_MODULE_FIELDS + (Field("L", (layers_key, f"text_config.{layers_key}"), 1),),
        derive=(Derive("mtp_base", "0"),),
        params=(
            Param("model.embed_tokens.weight", ("V", "H"), share="embed", role="embed"),
            Param("model.fc.weight", ("H", "2*H"), role="mtp projection"),
            Param("model.pre_fc_norm_embedding.weight", ("H",), role="mtp norm", plain=True),
            Param("model.pre_fc_norm_hidden.weight", ("H",), role="mtp norm", plain=True),
            Param("model.norm.weight", ("H",), role="norm", plain=True),
            Param(b + "input_layernorm.weight", ("H",), per_layer=True, role="decoder", plain=True),
            Param(b + "post_attention_layernorm.weight", ("H",), per_layer=True, role="decoder", plain=True),
            Param(b + "self_attn.q_norm.weight", ("hd",), when="hd", per_layer=True, role="decoder", plain=True),
            Param(b + "self_attn.k_norm.weight", ("hd",), when="hd", per_layer=True, role="decoder", plain=True),
            Param(b + "*", per_layer=True, role="decoder", group=True, group_parts=DECODER_PARTS),
            Param("lm_head.weight", ("V", "H"), share="head", role="head"),
        ),
        loader=(
            SkipUnless(
                r"^mtp\.|embed_tokens|lm_head",
                why="not an MTP tensor (is_unused_checkpoint_weight): the MTP loader skips it",
                cite=f"{file} load_weights",
            ),
            RenameRegex(r"^mtp\.", "model.", cite=f"{file} load_weights (mtp. → model.)"),
            RenameRegex(r"^model\.language_model\.embed_tokens\.", "model.embed_tokens.", cite=f"{file} load_weights"),
        ),
        unknown="raise" if unknown_raises else "skip",
        unknown_message=VALUEERROR if unknown_raises else "{name}: not a parameter; skipped (if name not in params_dict: continue)",
        missing="silent",
        share_embed="'target'",
        share_head="'target'",
        share_cite="vllm/v1/spec_decode (_maybe_share_embeddings / _maybe_share_lm_head: MTP always shares)",
        methods=MTP_METHODS,
        unfilled_when="quant is None",
        unfilled_message=NOT_INITIALISED,
        quant_skips=MTP_QUANT,
        launch_checks=MTP_STEPS,
        notes=("the decoder layers are Qwen3-Next's full-attention layers: their tensors are counted, not simulated one by one",),
    )


QWEN_MTP_ARCHS = ("Qwen3NextForCausalLM", "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration")


def _mtp_range(*, first: str, last: str | None, read: tuple[str, ...], begins: str, **kw) -> FamilyRange:
    registry = {"DeepseekV3ForCausalLM": "DeepSeekMTPModel", "Glm4MoeForCausalLM": "Glm4MoeMTPModel"}
    v32 = {"DeepseekV32ForCausalLM": "DeepSeekMTPModel", "GlmMoeDsaForCausalLM": "DeepSeekMTPModel"}
    later = kw.pop("v32_unmodelled", False)
    runs = kw.pop("runs", ())
    qwen = kw.pop("qwen", None)  # None: the Qwen MTP classes are not modelled here; else whether Qwen3-Next raises on unknowns
    at = ", ".join(read)
    qwen_classes = {}
    if qwen is not None:
        qwen_classes = {
            "Qwen3NextMTP": _mtp_module_class("Qwen3NextMTP", f"{QN_MTP} @ {at}", "num_nextn_predict_layers", unknown_raises=qwen),
            "Qwen3_5MTP": _mtp_module_class("Qwen3_5MTP", f"{Q35_MTP} @ {at}", "mtp_num_hidden_layers", unknown_raises=True),
            "Qwen3_5MoeMTP": _mtp_module_class("Qwen3_5MoeMTP", f"{Q35_MTP} @ {at}", "mtp_num_hidden_layers", unknown_raises=True),
        }
        registry = {**registry, **dict(zip(QWEN_MTP_ARCHS, qwen_classes, strict=True))}
    return FamilyRange(
        engine="vllm",
        family="mtp",
        first=first,
        last=last,
        dispatch=Dispatch(
            "vllm",
            registry if later else {**registry, **v32},
            "DeepSeekMTPModel",
            cite=f"{SPEC_CFG} @ {', '.join(read)}",
            unknown_message="no MTP class for architectures {archs} in specbridge's rows; where vLLM's hf_config_override maps "
            "none either it raises NotImplementedError: Unsupported speculative method: 'mtp' (" + SPEC_CFG + ")",
        ),
        classes={
            # deepseek_v2.py's router gate is a ReplicatedLinear / GateLinear (a quantization method) in every release read
            "DeepSeekMTPModel": _mtp_class("DeepSeekMTPModel", f"{DSM} @ {at}", False, **{**kw, "gate_plain": False}),
            "Glm4MoeMTPModel": _mtp_class("Glm4MoeMTPModel", f"{GLM_MTP} @ {at}", True, **{**kw, "completeness": False, "top_embed": True}),
            **qwen_classes,
        },
        begins=begins,
        versions_read=read,
        runs=runs,
        unmodelled_archs={
            **(
                {
                    "DeepseekV32ForCausalLM": "vllm/models/deepseek_v32 (DeepseekV32MTP)",
                    "GlmMoeDsaForCausalLM": "vllm/models/deepseek_v32 (DeepseekV32MTP)",
                }
                if later
                else {}
            ),
            **{k: v for k, v in MTP_UNMODELLED.items() if k not in registry},
        },
    )


MTP_UNMODELLED = {
    "Qwen3NextForCausalLM": "qwen3_next_mtp.py (Qwen3NextMTP)",
    "Qwen3_5ForConditionalGeneration": "qwen3_5_mtp.py (Qwen3_5MTP)",
    "Qwen3_5MoeForConditionalGeneration": "qwen3_5_mtp.py (Qwen3_5MoeMTP)",
    "MiMoForCausalLM": "mimo_mtp.py (MiMoMTPModel)",
    "MiMoV2FlashForCausalLM": "mimo_v2_mtp.py (MiMoV2MTPModel)",
    "Ernie4_5_MoeForCausalLM": "ernie_mtp.py (ErnieMTPModel)",
    "LongcatFlashForCausalLM": "longcat_flash_mtp.py (LongCatFlashMTPModel)",
    "Glm4MoeLiteForCausalLM": "glm4_moe_lite_mtp.py (Glm4MoeLiteMTPModel)",
    "NemotronHForCausalLM": "nemotron_h_mtp.py (NemotronHMTPModel)",
    "Step3p5ForCausalLM": "step3p5_mtp.py (Step3p5MTP)",
}
RANGES: tuple[FamilyRange, ...] = (
    FamilyRange(
        engine="vllm",
        family="mtp",
        first="0.9.2",
        last="0.15",
        dispatch=Dispatch("vllm", {}, "DeepSeekMTPModel", cite=SPEC_CFG),
        classes={},
        begins="method mtp and the MTP classes were read from 0.16.0",
        versions_read=("0.9.2", "0.10.2", "0.11.0", "0.12.0", "0.14.0"),
        unmodelled="vLLM 0.9.2–0.15 name MTP methods per model (deepseek_mtp, qwen3_next_mtp, …; one method mtp from 0.11.0), "
        "override GLM's num_hidden_layers to 0 until 0.12.0 and keep the checkpoint's shared_head.head until 0.16.0; "
        "specbridge models MTP loading from 0.16.0",
    ),
    _mtp_range(
        first="0.16.0",
        last="0.16",
        read=("0.16.0",),
        begins=f"{DSM} and {GLM_MTP}: the proposer shares every shared_head.head with the target from 0.16.0; no completeness check yet",
        completeness=False,
        strict_all=True,
        top_embed=False,
    ),
    _mtp_range(
        first="0.17.0",
        last="0.20",
        read=("0.17.0", "0.18.0", "0.20.0"),
        begins=f"{DSM} raises for an MTP layer no tensor reached from 0.17.0 (vllm PR #35548); {MTP_LOADER} names every unfilled parameter",
        completeness=True,
        strict_all=True,
        top_embed=False,
    ),
    _mtp_range(
        first="0.21.0",
        last="0.25",
        read=("0.23.0", "0.24.0", "0.25.0"),
        begins=f"{MTP_LOADER} exempts modules with a quantization method from its check (read 0.23.0; 0.21–0.22 not read); "
        f"{QN_MTP}'s own loader skips a name it has no parameter for",
        completeness=True,
        strict_all=False,
        top_embed=False,
        qwen=False,
    ),
    _mtp_range(
        first="0.26.0",
        last="0.30",
        read=("0.26.0", "0.27.0", "0.29.0", "0.30.0"),
        begins=f"{QN_MTP} loads through AutoWeightsLoader (an unknown name raises): first in the 0.26.0 wheel",
        completeness=True,
        strict_all=False,
        top_embed=False,
        qwen=True,
        # the real MTP loaders (GLM-4.5, DeepSeek-V3, Qwen3-Next targets; tests/test_conformance_vllm_mtp.py): every
        # case this CPU builds (0.27.0: DeepSeek's MLA does not) agrees with these rows
        runs=(*all_agreed(MTP_CONF, "2026-12-01", 19, "0.27.0"), *all_agreed(MTP_CONF, "2026-12-01", 25, "0.29.0")),
    ),
    _mtp_range(
        first="0.31.0",
        last="0.31",
        read=("0.31.0",),
        begins=f"vllm/model_executor/models/glm4_moe.py Glm4MoE builds its router gate as a GateLinear (a ReplicatedLinear with "
        f"a quantization method, which {MTP_LOADER} exempts from its check) from the 0.31.0 wheel; 0.30.0 builds a plain "
        "nn.Linear, named when nothing filled it (found by scripts/adopt_release.py vllm 0.31.0: 'head-absent', "
        "'mtp-linears-absent', 'renamed-mtp-layers-0')",
        completeness=True,
        strict_all=False,
        top_embed=False,
        qwen=True,
        gate_plain=False,
    ),
    _mtp_range(
        first="0.32.0",
        last=None,
        read=("0.32.0",),
        begins=f"{DSM} also reads the target's top-level embed_tokens (0.32.0); GLM-5 and DeepSeek-V3.2 move to vllm/models/deepseek_v32",
        completeness=True,
        strict_all=False,
        top_embed=True,
        v32_unmodelled=True,
        qwen=True,
        gate_plain=False,
        runs=all_agreed(MTP_CONF, "2026-12-01", 25, "0.32.0"),
    ),
)
