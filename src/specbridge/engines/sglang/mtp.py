"""SGLang's MTP rows (--speculative-algorithm NEXTN): the NextN classes reading a target's own MTP layer."""

from __future__ import annotations

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
    Param,
    QuantSkip,
    Raise,
    RenameRegex,
    Stack,
    all_agreed,
)

# --- MTP heads inside a target (--speculative-algorithm NEXTN, an alias of EAGLE) ----------------------------------
# The draft is the target's own checkpoint read by a NextN class (configs/model_config.py _config_draft_model renames
# the target's architecture); it reads the one MTP layer model.layers.{nextn_id}.* and takes embed/head from the target.
NEXTN_CFG = "sglang/srt/configs/model_config.py (ModelConfig._config_draft_model)"
NEXTN_CONF = "tests/test_conformance_sglang_nextn.py"
DSN = "sglang/srt/models/deepseek_nextn.py"
GLMN = "sglang/srt/models/glm4_moe_nextn.py"
NEXTN_LOAD = (
    "DeepseekV2ForCausalLM.load_weights(is_nextn=True) (models/deepseek_v2.py; deepseek_common/deepseek_weight_loader.py from 0.5.8)"
)
NEXTN_FIELDS = (
    Field("H", ("hidden_size",)),
    Field("V", ("vocab_size",)),
    Field("N", ("num_hidden_layers",)),
    Field("quant", ("quantization_config",), None, kind="any"),
    # what the target's decoder-layer class reads to build the NextN layer's block (deepseek_v2.py / glm4_moe.py)
    Field("E", ("n_routed_experts",), None),
    Field("nS", ("n_shared_experts",), None),
    Field("mI", ("moe_intermediate_size",), None),
    Field("NH", ("num_attention_heads",), None),
    Field("NKV", ("num_key_value_heads",), None),
    Field("hd", ("head_dim",), None),
    Field("attn_bias", ("attention_bias",), False, kind="bool"),
    Field("qk_norm", ("use_qk_norm",), False, kind="bool"),
    Field("q_rank", ("q_lora_rank",), None),
    Field("kv_rank", ("kv_lora_rank",), None),
    Field("nope", ("qk_nope_head_dim",), None),
    Field("rope", ("qk_rope_head_dim",), None),
    Field("vhd", ("v_head_dim",), None),
    Field("topk_method", ("topk_method",), None, kind="any"),
)
NNPL_REQUIRED = Field("L", ("num_nextn_predict_layers",), None, required="ValueError: num_nextn_predict_layers is not in the config")
# from 0.5.22 a config without the key loads as one NextN layer (observed on the 0.5.22 and 0.5.23 wheels, conformance run)
NNPL_DEFAULT = Field("L", ("num_nextn_predict_layers",), 1)
# "compatible with old design": a one-layer config is a standalone NextN checkpoint whose layer is 0
NEXTN_DERIVE = (
    Derive("nextn_id", "0 if N == 1 else N"),
    Derive("one", "1"),
    Derive("hdim", "hd if hd else H // NH"),  # glm4_moe.py Glm4MoeAttention: head_dim or hidden_size // num_heads
)
NEXTN_ONE = Raise("L is not None and L != 1", "AssertionError: Only 1 nextn layer is supported", f"{DSN} / {NEXTN_LOAD}")
NEXTN_QUANT_CITE = "sglang/srt/model_loader/loader.py _get_quantization_config (the NextN decoder's prefix is model.decoder)"


def _nextn_quant(mapper: bool) -> tuple[QuantSkip, ...]:
    """SGLang matches ignore lists against its own module names: the NextN decoder is `model.decoder.*`, so entries
    written in checkpoint names (model.layers.{N}.*) do not match; from 0.5.10 DeepseekV3ForCausalLMNextN's mapper
    renames `model.layers.61` entries (DeepSeek-V3/R1's layer number only). modelopt_fp4 builds the body unquantized."""
    rename = (r"^model\.layers\.\d+\.", "model.decoder.")
    entry = ("model.layers.61", "model.decoder") if mapper else None
    q = "sglang/srt/layers/quantization"
    return (
        QuantSkip("fp8", ("ignored_layers", "modules_to_not_convert"), "exact", f"{q}/fp8.py; {NEXTN_QUANT_CITE}", rename, entry),
        QuantSkip("compressed-tensors", ("ignore",), "regex", f"{q}/compressed_tensors; {NEXTN_QUANT_CITE}", rename, entry),
        QuantSkip("modelopt", ("exclude_modules", "ignore"), "wildcard", f"{q}/modelopt_quant.py; {NEXTN_QUANT_CITE}", rename, entry),
        QuantSkip("modelopt_fp4", (), "exact", f"{DSN} DeepseekModelNextN.__init__ (modelopt_fp4 → quant_config None)", everything=True),
    )


# --- the NextN layer's decoder block, parameter by parameter -------------------------------------------------------
# `model.decoder` is the target's own decoder-layer class built with is_nextn=True, which makes it a MoE layer
# (is_layer_sparse: `is_nextn or …`): DeepseekV2DecoderLayer (MLA attention, DeepseekV2MoE) or Glm4MoeDecoderLayer
# (GQA attention, Glm4MoeSparseMoeBlock). Read in the 0.4.8.post1 (deepseek_v2.py only), 0.5.1.post3, 0.5.2, 0.5.11,
# 0.5.16, 0.5.17, 0.5.18 and 0.5.23 wheels; the same parameters in every stored conformance outcome (0.4.6.post5 …
# 0.5.23; the shared experts aside, below). A linear's shape
# is checked only for an unquantized target (a quantized one stores its own packing, its scales beside).
DSV2 = "sglang/srt/models/deepseek_v2.py"
GLMM = "sglang/srt/models/glm4_moe.py"
FUSED_MOE = "sglang/srt/layers/moe/fused_moe_triton/layer.py (FusedMoE.weight_loader: one expert's slice per call)"


def _lin(*dims: str) -> tuple[str, ...]:
    return tuple(f"({d}) if quant is None else None" for d in dims)


def _block_attention(*, glm: bool) -> tuple[Param, ...]:
    """The attention of the NextN decoder: GLM's QKVParallelLinear qkv_proj (bias with attention_bias, q/k norms with
    use_qk_norm) and o_proj; DeepSeek's MLA: with q_lora_rank the fused_qkv_a_proj_with_mqa (q_a_proj and
    kv_a_proj_with_mqa, concatenated by the loader), q_a_layernorm and q_b_proj, else q_proj and kv_a_proj_with_mqa;
    then kv_a_layernorm, kv_b_proj and o_proj."""
    a = "model.decoder.self_attn."
    if glm:
        qkv = (("q", _lin("NH*hdim", "H")), ("k", _lin("NKV*hdim", "H")), ("v", _lin("NKV*hdim", "H")))
        qkv_b = (("q", ("NH*hdim",)), ("k", ("NKV*hdim",)), ("v", ("NKV*hdim",)))
        return (
            Param(a + "qkv_proj.weight", shards=qkv, role="decoder"),
            Param(a + "qkv_proj.bias", shards=qkv_b, when="attn_bias", role="decoder"),
            Param(a + "o_proj.weight", _lin("H", "NH*hdim"), role="decoder"),
            Param(a + "q_norm.weight", ("hdim",), when="qk_norm", role="decoder"),
            Param(a + "k_norm.weight", ("hdim",), when="qk_norm", role="decoder"),
        )
    qa = (("q_a", _lin("q_rank", "H")), ("kv_a", _lin("kv_rank + rope", "H")))
    return (
        Param(a + "fused_qkv_a_proj_with_mqa.weight", shards=qa, when="q_rank", role="decoder", whole=True),
        Param(a + "q_a_layernorm.weight", ("q_rank",), when="q_rank", role="decoder"),
        Param(a + "q_b_proj.weight", _lin("NH*(nope + rope)", "q_rank"), when="q_rank", role="decoder"),
        Param(a + "q_proj.weight", _lin("NH*(nope + rope)", "H"), when="not q_rank", role="decoder"),
        Param(a + "kv_a_proj_with_mqa.weight", _lin("kv_rank + rope", "H"), when="not q_rank", role="decoder"),
        Param(a + "kv_a_layernorm.weight", ("kv_rank",), role="decoder"),
        Param(a + "kv_b_proj.weight", _lin("NH*(nope + vhd)", "kv_rank"), role="decoder"),
        Param(a + "o_proj.weight", _lin("H", "NH*vhd"), role="decoder"),
    )


def _block_params(*, glm: bool) -> tuple[Param, ...]:
    """The decoder block one parameter at a time: its two norms, the attention, the router (gate weight; GLM's
    Glm4MoeGate always has e_score_correction_bias, DeepSeek's MoEGate only for topk_method noaux_tc), the routed
    experts as FusedMoE builds them (w13_weight: every expert's gate and up; w2_weight: its down; a slice per
    expert, each left as allocated (torch.empty) when no tensor reaches it), the shared experts, and what the rows do
    not name one by one (a quantized target's scales)."""
    m = "model.decoder.mlp."
    bias_when = "E" if glm else "E and topk_method == 'noaux_tc'"
    return (
        Param("model.decoder.input_layernorm.weight", ("H",), role="decoder"),
        Param("model.decoder.post_attention_layernorm.weight", ("H",), role="decoder"),
        *_block_attention(glm=glm),
        Param(m + "gate.weight", ("E", "H"), when="E", role="decoder"),
        Param(m + "gate.e_score_correction_bias", ("E",), when=bias_when, role="decoder"),
        Param(
            m + "experts.w13_weight",
            shards=(("0", _lin("mI", "H")), ("1", _lin("mI", "H"))),
            experts="E",
            when="E",
            role="routed experts",
        ),
        Param(m + "experts.w2_weight", shards=(("", _lin("H", "mI")),), experts="E", when="E", role="routed experts"),
        # n_shared_experts: a DeepseekV2MLP / Glm4MoeMLP `shared_experts` (gate_up_proj, down_proj), or, with shared
        # experts fusion, one more expert slice of w13_weight / w2_weight (the loader renames 'mlp.shared_experts' to
        # 'mlp.experts.{n_routed_experts}'). Which one is decided at start-up by the GPU, the flags and the target, not
        # by the checkpoint: deepseek_nextn.py determine_num_fused_shared_experts("DeepseekV3ForCausalLMNextN") @
        # 0.4.8.post1 … 0.5.17 (deepseek_v2.py: CUDA sm80+, n_routed_experts 256, n_shared_experts 1, no EP/DeepEP),
        # determine_num_fused_shared_experts() @ 0.5.18, get_num_fused_shared_experts() (layers/moe/utils.py: the
        # target's choice) @ 0.5.23; glm4_moe_nextn.py determine_num_fused_shared_experts("Glm4MoeForCausalLMNextN")
        # @ 0.5.1.post3, 0.5.2 (glm4_moe.py: CUDA sm80+, n_shared_experts 1, no EP), `0 if disable_shared_experts_fusion
        # else 1` @ 0.5.11 … 0.5.17, determine_num_fused_shared_experts() @ 0.5.18, get_num_fused_shared_experts() @
        # 0.5.23 (the CPU conformance harness builds the draft alone: GLM's fused on 0.5.8–0.5.22, DeepSeek's on
        # 0.5.19–0.5.22). Either way the checkpoint's mlp.shared_experts.* tensors fill it: one group here
        Param(m + "shared_experts.*", when="E and nS", role="decoder", group=True),
        # a quantized target's scales (weight_scale_inv, input_scale, …) go to parameters its quantization method adds
        Param(
            "model.decoder.*",
            when="quant is not None",
            role="decoder",
            group=True,
            group_parts=DECODER_PARTS,
            missing_ok="True",
            missing_note="no quantization scale of the NextN layer reached it (weight_scale_inv, input_scale, …: what the rows above "
            "do not name one by one); the findings on the layer's weights say whether the layer is whole",
        ),
    )


def _block_loader(*, glm: bool, cite: str) -> tuple:
    """The block's own steps, after the NextN rename: routed experts by expert_params_mapping (before the stacked
    mapping, which skips `mlp.experts.` names not in params_dict), then the stacked projections."""
    mapping = f"{cite} (FusedMoE.make_expert_params_mapping over n_routed_experts; {FUSED_MOE})"
    experts = (
        ExpertShard(r"\.mlp\.experts\.(\d+)\.gate_proj\.weight$", fused=".mlp.experts.w13_weight", shard="0", cite=mapping),
        ExpertShard(r"\.mlp\.experts\.(\d+)\.up_proj\.weight$", fused=".mlp.experts.w13_weight", shard="1", cite=mapping),
        ExpertShard(r"\.mlp\.experts\.(\d+)\.down_proj\.weight$", fused=".mlp.experts.w2_weight", shard="", cite=mapping),
    )
    stacked = f"{cite} (stacked_params_mapping)"
    if glm:
        attn = tuple(Stack(f".{s}_proj.", fused=".qkv_proj.", shard=s, cite=stacked) for s in ("q", "k", "v"))
    else:
        qa = f"{cite} (fuse_qkv_a_proj: q_a_proj and kv_a_proj_with_mqa cached, then concatenated into one write)"
        attn = (
            Stack(".q_a_proj.", fused=".fused_qkv_a_proj_with_mqa.", shard="q_a", when="q_rank", cite=qa),
            Stack(".kv_a_proj_with_mqa.", fused=".fused_qkv_a_proj_with_mqa.", shard="kv_a", when="q_rank", cite=qa),
        )
    return (
        Drop("rotary_emb.inv_freq", why="rotary caches are recomputed", cite=cite),
        *experts,
        *attn,
        Stack(".gate_proj.", fused=".gate_up_proj.", shard="0", cite=stacked),
        Stack(".up_proj.", fused=".gate_up_proj.", shard="1", cite=stacked),
        IgnoreSuffix(".bias", why="an extra .bias (GPTQ) no parameter takes is skipped", cite=cite),
    )


def _nextn_class(*, name: str, file: str, glm_layer: bool, unknown_raises: bool, mapper: bool, nnpl_default: bool = False) -> DraftClass:
    """DeepseekV3ForCausalLMNextN / Glm4MoeForCausalLMNextN: one MTP layer, its own norms and eh_proj at the top, the
    target's decoder-layer class as `model.decoder`; the checkpoint's embed_tokens / shared_head.head are skipped."""
    own = f"{file} + {NEXTN_LOAD}"
    at = file.split(" @ ", 1)[1]
    layer_load = f"{GLMM} Glm4MoeForCausalLM.load_weights(is_nextn=True)" if glm_layer else NEXTN_LOAD
    return DraftClass(
        name=name,
        file=file,
        fields=NEXTN_FIELDS + ((NNPL_DEFAULT if nnpl_default else NNPL_REQUIRED),),
        derive=NEXTN_DERIVE,
        params=(
            Param("model.embed_tokens.weight", ("V", "H"), share="embed", role="embed"),
            Param("model.enorm.weight", ("H",), role="mtp norm"),
            Param("model.hnorm.weight", ("H",), role="mtp norm"),
            Param("model.eh_proj.weight", ("H", "2*H"), role="mtp projection"),
            Param("model.shared_head.norm.weight", ("H",), role="norm"),
            Param("lm_head.weight", ("V", "H"), share="head", role="head"),
            *_block_params(glm=glm_layer),
        ),
        loader=(
            Drop("model.embed_tokens.weight", why="the target's own embedding (the NextN layer takes the target's)", cite=own),
            Drop("lm_head.weight", why="the target's own head (the NextN layer takes the target's)", cite=own),
            Drop("shared_head.head", why="'Use shared head and embed weights from target model'", cite=own),
            Drop("embed_tokens", why="'Use shared head and embed weights from target model'", cite=own),
            KeepLayers(
                r"^model\.layers\.(\d+)\.",
                first="nextn_id",
                count="one",
                why="not the NextN layer (model.layers.{nextn_id}.*): skipped",
                cite=f"{own} (names not starting with the NextN prefix: continue)",
            ),
            RenameRegex(r"^model\.layers\.\d+\.(shared_head\.norm|eh_proj|enorm|hnorm)\.", r"model.\1.", cite=own),
            RenameRegex(r"^model\.layers\.\d+\.", "model.decoder.", cite=own),
            *_block_loader(glm=glm_layer, cite=f"{layer_load} @ {at}"),
        ),
        unknown="raise" if unknown_raises else "skip",
        unknown_message="KeyError: '{name}' (params_dict)" if unknown_raises else "{name} not found in params_dict (a warning; skipped)",
        missing="silent",
        raises=(NEXTN_ONE,),
        share_embed="'target'",
        share_head="'target'",
        share_cite="sglang/srt/speculative/eagle_worker.py (set_embed_and_head from the target; eagle_worker_v2.py init_lm_head)",
        methods=("NEXTN", "EAGLE"),
        quant_skips=_nextn_quant(mapper),
        notes=(
            "the decoder block (model.decoder) is the target's own decoder-layer class, accounted parameter by parameter: "
            "its norms, attention, router and routed experts (FusedMoE w13_weight / w2_weight, one slice per expert); the "
            "shared experts are counted as one group (fused into the routed experts' tensor or not, by GPU and flags); "
            "DeepSeek's fused_qkv_a_proj_with_mqa is written only once both q_a_proj and kv_a_proj_with_mqa were read",
        ),
    )


def _nextn_range(*, first: str, last: str | None, read: tuple[str, ...], begins: str, glm: bool | None, **kw) -> FamilyRange:
    """`glm`: None (no GLM NextN class yet), False (its loader indexes params_dict: KeyError), True (it skips)."""
    at = f" @ {read[0]} … {read[-1]}" if len(read) > 1 else f" @ {read[0]}"
    classes = {"DeepseekV3ForCausalLMNextN": _nextn_class(name="DeepseekV3ForCausalLMNextN", file=DSN + at, glm_layer=False, **kw)}
    registry = {"DeepseekV3ForCausalLM": "DeepseekV3ForCausalLMNextN"}
    if glm is not None:
        classes["Glm4MoeForCausalLMNextN"] = _nextn_class(
            name="Glm4MoeForCausalLMNextN", file=GLMN + at, glm_layer=True, **{**kw, "unknown_raises": not glm}
        )
        registry["Glm4MoeForCausalLM"] = "Glm4MoeForCausalLMNextN"
    return FamilyRange(
        engine="sglang",
        family="mtp",
        first=first,
        last=last,
        dispatch=Dispatch(
            "sglang",
            registry,
            "DeepseekV3ForCausalLMNextN",
            cite=f"{NEXTN_CFG}{at}",
            unknown_message="SGLang renames no NextN/MTP draft class for architectures {archs} in specbridge's rows (" + NEXTN_CFG + ")",
        ),
        classes=classes,
        begins=begins,
        versions_read=read,
        # the real NextN loaders on every cached release, stored and compared with these rows (DeepSeek's 6 cases; GLM's
        # 6 more once its class exists)
        runs=(
            *all_agreed(NEXTN_CONF, "2026-12-01", 6 if glm is None else 12, *read),
            # the NextN layer without its routed experts / its attention, per family (the wheels installed that day)
            *all_agreed(NEXTN_CONF, "2026-12-05", 2 if glm is None else 4, *(r for r in read if r in NEXTN_BLOCK_RUN)),
        ),
        unmodelled_archs={
            "Qwen3NextForCausalLM": "Qwen3NextForCausalLMMTP (qwen3_next_mtp.py)",
            "Qwen3_5ForConditionalGeneration": "Qwen3_5ForCausalLMMTP (qwen3_5_mtp.py)",
            "Qwen3_5MoeForConditionalGeneration": "Qwen3_5ForCausalLMMTP (qwen3_5_mtp.py)",
            "MiMoForCausalLM": "MiMoMTP (mimo_mtp.py)",
            "Ernie4_5_MoeForCausalLM": "Ernie4_5_MoeForCausalLMMTP",
            "LongcatFlashForCausalLM": "LongcatFlashForCausalLMNextN",
            "GlmMoeDsaForCausalLM": "DeepseekV3ForCausalLMNextN (0.5.9–0.5.12) / GlmMoeDsaForCausalLMNextN (0.5.16+)",
            "DeepseekV32ForCausalLM": "DeepseekV3ForCausalLMNextN (from 0.5.12)",
        },
    )


NEXTN_BLOCK_RUN = ("0.4.8.post1", "0.5.1.post3", "0.5.2", "0.5.11", "0.5.16", "0.5.23")
NEXTN_GLM_RAISES = ("0.4.9.post6", "0.5.1.post3", "0.5.2")
NEXTN_LATER = ("0.5.4.post3", "0.5.5.post3", "0.5.8", "0.5.9")
NEXTN_MAPPED = ("0.5.10", "0.5.11", "0.5.12", "0.5.16", "0.5.19", "0.5.20", "0.5.21")
NEXTN_NNPL_DEFAULT = ("0.5.22", "0.5.23")
RANGES = (
    _nextn_range(
        first="0.4.6",
        last="0.4.7",
        read=("0.4.6.post5", "0.4.7.post1"),
        begins=f"{DSN} as read in the 0.4.6.post5 wheel (the oldest cached): an unknown name inside the NextN layer is a KeyError",
        glm=None,
        unknown_raises=True,
        mapper=False,
    ),
    _nextn_range(
        first="0.4.8",
        last="0.4.8",
        read=("0.4.8.post1",),
        begins=f"{NEXTN_LOAD}: an unknown name is skipped with a warning from the 0.4.8.post1 wheel",
        glm=None,
        unknown_raises=False,
        mapper=False,
    ),
    _nextn_range(
        first="0.4.9",
        last="0.5.3",
        read=NEXTN_GLM_RAISES,
        begins=f"{GLMN} and the Glm4MoeForCausalLM → Glm4MoeForCausalLMNextN rename first ship in the 0.4.9.post6 wheel (its loader "
        "indexes params_dict: KeyError on an unknown name)",
        glm=False,
        unknown_raises=False,
        mapper=False,
    ),
    _nextn_range(
        first="0.5.4",
        last="0.5.9",
        read=NEXTN_LATER,
        begins="sglang/srt/models/glm4_moe.py load_weights(is_nextn=True) skips a name not in params_dict: first in the 0.5.4.post3 wheel",
        glm=True,
        unknown_raises=False,
        mapper=False,
    ),
    _nextn_range(
        first="0.5.10",
        last="0.5.21",
        read=NEXTN_MAPPED,
        begins=f"{DSN} DeepseekV3ForCausalLMNextN.hf_to_sglang_mapper renames model.layers.61 → model.decoder in quantization ignore "
        "lists: first in the 0.5.10 wheel",
        glm=True,
        unknown_raises=False,
        mapper=True,
    ),
    _nextn_range(
        first="0.5.22",
        last=None,
        read=NEXTN_NNPL_DEFAULT,
        begins="a config without num_nextn_predict_layers loads as one NextN layer instead of raising: first seen in the 0.5.22 "
        "wheel (tests/test_conformance_sglang_nextn.py; 0.5.21 still raises)",
        glm=True,
        unknown_raises=False,
        mapper=True,
        nnpl_default=True,
    ),
)
