"""vLLM's EAGLE-3 drafter classes, one row per release range: Eagle3LlamaForCausalLM (llama_eagle3.py) and the
per-architecture classes Eagle3Qwen3ForCausalLM (qwen3_eagle3.py) and Eagle3DeepseekV2ForCausalLM (deepseek_eagle3.py).

Read from the PyPI wheels (0.8.5, 0.10.2, 0.14.0, 0.32.0, 0.33.0): `vllm/model_executor/models/llama_eagle3.py`,
`vllm/transformers_utils/configs/{eagle.py,speculators/}`, `vllm/v1/spec_decode/`.
Key facts: unknown names raise, missing parameters are silent (load_weights returns None, so the
"weights not initialized" check is off), `midlayer.` is renamed to `layers.0.`, everything but
lm_head gets a `model.` prefix, and speculators configs are translated.
The release ranges that use these classes (ERAS) are in eagle3.py.
"""

from __future__ import annotations

from ...record import replace
from ..common import STACK_LLAMA, eagle3_io, llama_decoder
from ..spec import Derive, DraftClass, Drop, Field, IgnoreSuffix, Param, Prefix, Raise, Rename, RenameTo, Stack
from .common import KEYERROR, PROP, SPEC_PY, VALUEERROR, VLLM_DERIVE, VLLM_FIELDS, F

VOCAB_STEPS = (
    Drop("t2d", why="vLLM never uses t2d", cite=f"{F} load_weights"),
    RenameTo("d2t", to="draft_id_to_target_id", cite=f"{F} load_weights"),
)
HT_NULL = Raise(
    "Ht_key is None",
    "TypeError: unsupported operand type(s) for *: 'NoneType' and 'int' (config has \"target_hidden_size\": null; "
    "vLLM tests hasattr/getattr, not the value — drop the key or give the number)",
    f"{F} LlamaModel.__init__ (fc input = target_hidden_size * n; every release read; 0.27.0 and 0.32.0 runs)",
)
D2T_ALWAYS = Param(
    "draft_id_to_target_id",
    ("Vd",),
    role="vocab map",
    missing_ok="Vd == V",
    missing_note="initialised to zeros = identity map; harmless only when the draft vocab is the full vocab",
)
D2T_IF_REDUCED = Param("draft_id_to_target_id", ("Vd",), when="Vd != V", role="vocab map")


def _class(
    *,
    versions: str,
    fc_in: str,
    d2t: Param,
    unknown_message: str,
    share_embed: str,
    share_head: str,
    multi_layer: bool,
    extra_fields=(),
    extra_raises=(),
    loader_extra=(),
    variants: bool = False,
    input_norm: bool | None = None,
    fc_norm: bool | None = None,
    qkv_bias: bool = True,
) -> DraftClass:
    """`variants`: the class has input_norm (norm_before_fc, from 0.18.0) and fc_norm (from 0.22.0); `input_norm` /
    `fc_norm` say so one at a time. A class without the parameter treats input_norm.weight as an unknown name."""
    input_norm = variants if input_norm is None else input_norm
    fc_norm = variants if fc_norm is None else fc_norm
    return DraftClass(
        name="Eagle3LlamaForCausalLM",
        file=f"{F} @ {versions}",
        fields=VLLM_FIELDS + tuple(extra_fields),
        derive=VLLM_DERIVE,
        params=eagle3_io(fc_in, fc_bias="False", head_when="True", input_norm=input_norm, fc_norm=fc_norm)
        + llama_decoder(
            "model.layers.{i}.",
            per_layer=True,
            # every layer has its own hidden_norm (no layer_idx test in any release read); o_proj's bias comes from
            # vLLM's llama.py LlamaDecoderLayer (attention_bias or bias), qkv_proj's from attention_bias (0.16.0+:
            # llama_eagle3.py rebuilds qkv_proj with bias=getattr(config, "attention_bias", False); before: bias=False)
            hidden_norm_when="True",
            o_bias_when="attention_bias or bias",
            qkv_bias_when="attention_bias" if qkv_bias else "False",
        )
        + (d2t,),
        loader=VOCAB_STEPS
        + tuple(loader_extra)
        + (Prefix("model.", unless="lm_head", cite=f"{F} load_weights: every non-lm_head name gets 'model.'"),)
        + (Rename(old="midlayer.", new="layers.0.", cite=f"{F} LlamaModel hf_to_vllm_mapper / load_weights"),)
        + STACK_LLAMA,
        unknown="raise",
        unknown_message=unknown_message,
        missing="silent",
        raises=tuple(extra_raises)
        + (HT_NULL,)
        + (
            ()
            if multi_layer
            else (Raise("L != 1", "only one draft layer is built; further layers' weights are unknown names", f"{F} @ {versions}"),)
        ),
        share_embed=share_embed,
        share_head=share_head,
        # the linear layers' weight_loader narrows a checkpoint wider than the parameter along the TP dimension
        # (loaded_weight.narrow(...)) and raises on a narrower one: the 0.27.0 and 0.32.0 runs (intermediate-smaller,
        # fewer-heads load silently)
        wider_tp="truncate",
        share_cite=PROP if "32" in versions or "14" in versions or "0.2" in versions else f"vllm/v1/spec_decode/eagle.py @ {versions}",
    )


N_AUX_V32 = (Field("n_aux", ("num_aux_hidden_states", "len:eagle_config.eagle_aux_hidden_state_layer_ids"), 3),)
# AutoWeightsLoader skips (skip_substrs before 0.29, WeightsMapper(orig_to_new_substr={...: None}) from 0.29): a
# checkpoint's input_norm when the config has no norm_before_fc, its fc when use_aux_hidden_state is false
AUTOLOADER_SKIPS = (
    Drop("mask_hidden", why="mask_hidden is only used with parallel drafting", cite=f"{F} load_weights"),
    Drop(
        "rotary_emb.inv_freq", why="rotary caches are recomputed", cite="vllm/model_executor/models/utils.py (ROTARY_EMBEDS_UNUSED_WEIGHTS)"
    ),
    Drop(
        "input_norm.",
        why="no norm_before_fc in the config: the loader skips input_norm",
        when="not norm_before_fc",
        cite=f"{F} Eagle3LlamaForCausalLM.load_weights (skip input_norm. unless norm_before_fc)",
    ),
    Drop(
        "fc.",
        why="use_aux_hidden_state is false: the loader skips fc",
        when="not use_aux",
        cite=f"{F} Eagle3LlamaForCausalLM.load_weights (skip fc. unless use_aux_hidden_state)",
    ),
    IgnoreSuffix(
        ".bias",
        why="unexpected .bias names are ignored",
        cite="vllm/model_executor/models/utils.py AutoWeightsLoader.load_weights (ignore_unexpected_suffixes .bias)",
    ),
)
V32_CLASS = _class(
    versions="0.30.0 and every later release read",
    fc_in="Ht*n_aux",
    d2t=D2T_IF_REDUCED,
    unknown_message=VALUEERROR,
    share_embed="'target' if not has_embed else 'own-unless-equal'",
    share_head="'target' if not has_head else 'own-unless-equal'",
    multi_layer=True,
    extra_fields=N_AUX_V32,
    variants=True,
    loader_extra=AUTOLOADER_SKIPS,
)
# 0.25.0 … 0.29.0: the same AutoWeightsLoader, but draft_id_to_target_id always exists (zeros = identity when unfilled)
V25_CLASS = _class(
    versions="0.25.0 … 0.29.0",
    fc_in="Ht*n_aux",
    d2t=D2T_ALWAYS,
    unknown_message=VALUEERROR,
    share_embed="'target' if not has_embed else 'own-unless-equal'",
    share_head="'target' if not has_head else 'own-unless-equal'",
    multi_layer=True,
    extra_fields=N_AUX_V32,
    variants=True,
    loader_extra=AUTOLOADER_SKIPS,
)
# 0.22.0 … 0.24.0: fc_norm and num_aux_hidden_states arrive; still the hand-written params_dict loader (KeyError)
V22_CLASS = _class(
    versions="0.22.0 … 0.24.0",
    fc_in="Ht*n_aux",
    d2t=D2T_ALWAYS,
    unknown_message=KEYERROR,
    share_embed="'target' if not has_embed else 'own-unless-equal'",
    share_head="'target' if not has_head else 'own-unless-equal'",
    multi_layer=True,
    extra_fields=N_AUX_V32,
    variants=True,
)
# 0.18.0 … 0.21.0: input_norm (norm_before_fc) arrives; fc is still target_hidden_size * 3
V18_CLASS = _class(
    versions="0.18.0 … 0.21.0",
    fc_in="Ht*3",
    d2t=D2T_ALWAYS,
    unknown_message=KEYERROR,
    share_embed="'target' if not has_embed else 'own-unless-equal'",
    share_head="'target' if not has_head else 'own-unless-equal'",
    multi_layer=True,
    extra_fields=(Field("n_aux", (), 3),),
    input_norm=True,
    fc_norm=False,
)
V14_CLASS = _class(
    versions="0.11.1 … 0.15.1 (read 0.14.0)",
    fc_in="Ht*3",
    d2t=D2T_ALWAYS,
    unknown_message=KEYERROR,
    share_embed="'target' if not has_embed else 'own-unless-equal'",
    share_head="'target' if not has_head else 'own-unless-equal'",
    multi_layer=True,
    extra_fields=(Field("n_aux", (), 3),),
    qkv_bias=False,
)
V16_CLASS = _class(
    versions="0.16.0 … 0.17.1",
    fc_in="Ht*3",
    d2t=D2T_ALWAYS,
    unknown_message=KEYERROR,
    share_embed="'target' if not has_embed else 'own-unless-equal'",
    share_head="'target' if not has_head else 'own-unless-equal'",
    multi_layer=True,
    extra_fields=(Field("n_aux", (), 3),),
)
# 0.8.5 / 0.10.2 read config.draft_vocab_size as a plain attribute into ParallelLMHead (llama_eagle3.py); 0.14 adds
# "Ensure draft_vocab_size is set" (None -> the target's vocab size)
VD_PLAIN = (
    Field(
        "Vd_raw",
        ("draft_vocab_size",),
        required="AttributeError: config has no attribute 'draft_vocab_size' (this vLLM reads it as a plain attribute; write it)",
        keep_null=True,
    ),
    Field("Vd_key", ("draft_vocab_size",), "absent", keep_null=True, kind="any"),
)
VD_NULL = Raise(
    "Vd_key is None",
    "TypeError: ParallelLMHead(None, hidden_size): draft_vocab_size is null and this vLLM does not "
    "default it (llama_eagle3.py Eagle3LlamaForCausalLM.__init__; 0.14 falls back to the target's vocab size)",
    F,
)
V110_CLASS = _class(
    versions="0.11.0",
    fc_in="Ht*3",
    d2t=D2T_ALWAYS,
    unknown_message=KEYERROR,
    share_embed="'target' if not has_embed else 'own-unless-equal'",
    share_head="'target' if not has_head else 'own-unless-equal'",
    multi_layer=False,  # LlamaModel builds one decoder layer until 0.11.1 (ModuleList over num_hidden_layers)
    extra_fields=(Field("n_aux", (), 3),),
    qkv_bias=False,
)
V10_CLASS = _class(
    versions="0.10.2",
    fc_in="Ht*3",
    d2t=D2T_ALWAYS,
    unknown_message=KEYERROR,
    # 0.10: the draft embedding is replaced by the target's whenever shapes match; lm_head never shared.
    share_embed="'target'",
    share_head="'own'",
    multi_layer=False,
    extra_fields=(Field("n_aux", (), 3), *VD_PLAIN),
    extra_raises=(VD_NULL,),
    qkv_bias=False,
)
V085_CLASS = _class(
    versions="0.8.5",
    fc_in="Ht*3",  # llama_eagle3.py@v0.8.5 LlamaModel: Linear(target_hidden_size * 3) when the config has it, else hidden_size * 3
    d2t=D2T_ALWAYS,
    unknown_message=KEYERROR,
    share_embed="'target' if not has_embed else 'own'",
    share_head="'own'",
    multi_layer=False,
    extra_fields=(Field("n_aux", (), 3), *VD_PLAIN),
    extra_raises=(VD_NULL,),
    qkv_bias=False,
)
# --- Per-architecture EAGLE-3 classes (0.30.0+): the same EAGLE-3 rules, their own parameter sets -------------------
# qwen3_eagle3.py and deepseek_eagle3.py: read in the 0.27.0, 0.29.0, 0.30.0, 0.31.0 and 0.32.0 wheels; 0.30.0–0.32.0
# differ only in typing (the 0.29.0 → 0.30.0 change is llama_eagle3.py's: draft_id_to_target_id only for a reduced
# vocabulary). Registered in every wheel read (0.27.0 … 0.32.0): Eagle3Qwen3ForCausalLM and PeagleQwen3ForCausalLM →
# qwen3_eagle3; Eagle3DeepseekV2ForCausalLM and Eagle3DeepseekV3ForCausalLM → deepseek_eagle3.
Q3 = "vllm/model_executor/models/qwen3_eagle3.py"
DS3 = "vllm/model_executor/models/deepseek_eagle3.py"
AT_30 = "0.30.0 … 0.32.0"
Q3_FIELDS = VLLM_FIELDS + (
    # Qwen3Eagle3Model: num_aux_layers, else num_aux_hidden_states, else the top-level ids, else eagle_config's, else 3
    Field(
        "n_aux",
        (
            "num_aux_layers",
            "num_aux_hidden_states",
            "len:eagle_aux_hidden_state_layer_ids",
            "len:eagle_config.eagle_aux_hidden_state_layer_ids",
        ),
        3,
    ),
    Field("model_type", ("model_type",), None, kind="any"),
)
# Qwen3Attention: head_dim = config.head_dim or hidden // heads; transformers' Qwen3Config defaults head_dim to 128
Q3_DERIVE = (
    Derive("nkv", "nkv_raw if nkv_raw is not None else nh"),
    Derive("hd", "hd_raw if hd_raw is not None else (128 if model_type == 'qwen3' else H // nh)"),
    Derive("Ht", "Ht_raw if Ht_raw is not None else H"),
    Derive("Vd", "Vd_raw if Vd_raw is not None else V"),
)
QWEN3_CLASS = DraftClass(
    name="Eagle3Qwen3ForCausalLM",
    file=f"{Q3} @ {AT_30}",
    fields=Q3_FIELDS,
    derive=Q3_DERIVE,
    params=eagle3_io("Ht*n_aux", fc_bias="False", head_when="True")
    + llama_decoder(
        "model.layers.{i}.",
        per_layer=True,
        hidden_norm_when="True",
        # Qwen3Eagle3DecoderLayer builds hidden_norm on every layer but only forward's `if self.layer_idx == 0` branch
        # calls it (_residual_norm): a multi-layer drafter (P-EAGLE) ships it for layer 0 only (qwen3_eagle3.py @ 0.27.0,
        # 0.29.0, 0.32.0)
        hidden_norm_missing_ok="i > 0",
        # Qwen3Attention builds o_proj without a bias; qkv_proj is rebuilt with bias=attention_bias
        o_bias_when="False",
        qkv_bias_when="attention_bias",
    )
    + (
        Param("model.layers.{i}.self_attn.q_norm.weight", ("hd",), per_layer=True, role="decoder"),
        Param("model.layers.{i}.self_attn.k_norm.weight", ("hd",), per_layer=True, role="decoder"),
        D2T_IF_REDUCED,
    ),
    loader=VOCAB_STEPS
    + AUTOLOADER_SKIPS
    + (Prefix("model.", unless="lm_head", cite=f"{Q3} load_weights: every non-lm_head name gets 'model.'"),)
    + (Rename(old="midlayer.", new="layers.0.", cite=f"{Q3} Qwen3Eagle3Model hf_to_vllm_mapper"),)
    + STACK_LLAMA,
    unknown="raise",
    unknown_message=VALUEERROR,
    missing="silent",
    raises=(HT_NULL,),
    share_embed="'target' if not has_embed else 'own-unless-equal'",
    share_head="'target' if not has_head else 'own-unless-equal'",
    share_cite=f"{PROP}; {Q3} load_weights (process_eagle_weight)",
    wider_tp="truncate",
    notes=("Qwen3 decoder layers: q_norm/k_norm over head_dim (Qwen3Config's default head_dim is 128, not hidden/heads)",),
)
MLA_IN = "2*H if i == 0 else H"  # layer 0's attention reads cat(embeds, hidden)
DS3_FIELDS = (
    VLLM_FIELDS
    + N_AUX_V32
    + (
        # DeepseekV2MLAAttention(q_lora_rank=config.q_lora_rank if hasattr(...)): a present null builds q_proj instead of
        # fused_qkv_a_proj; the defaults are transformers' DeepseekV2Config/DeepseekV3Config's
        Field("q_rank", ("q_lora_rank",), 1536, keep_null=True),
        Field("kv_rank", ("kv_lora_rank",), 512),
        Field("qk_nope", ("qk_nope_head_dim",), 128),
        Field("qk_rope", ("qk_rope_head_dim",), 64),
        Field("v_hd", ("v_head_dim",), 128),
        Field("model_type", ("model_type",), None, kind="any"),
    )
)
# every draft config passes through SpeculativeConfig.hf_config_override (the draft ModelConfig's hf_overrides, every
# wheel read 0.27.0 … 0.32.0): model_type deepseek_v3 / deepseek_v32 / glm_moe_dsa becomes deepseek_mtp with
# architectures [DeepSeekMTPModel], which method eagle3 then prefixes (conformance: 0.32.0 raises exactly this)
DS3_AS_MTP = Raise(
    "model_type in ('deepseek_v3', 'deepseek_v32', 'glm_moe_dsa')",
    "ValueError: Model architectures ['Eagle3DeepSeekMTPModel'] are not supported for now: vLLM's "
    "SpeculativeConfig.hf_config_override turns a draft config with model_type deepseek_v3 (or deepseek_v32, glm_moe_dsa) into DeepSeekMTPModel "
    "before method eagle3 prefixes Eagle3 (write model_type deepseek_v2: the DeepSeek EAGLE-3 class is the same)",
    f"{SPEC_PY} SpeculativeConfig.hf_config_override / compose_draft_hf_overrides @ 0.27.0 … 0.32.0 (the same model_type "
    "test in the 0.18.0 … 0.24.0 wheels)",
)


def _mla_decoder(p: str) -> tuple[Param, ...]:
    """DeepseekV2Eagle3DecoderLayer: MLA attention (deepseek_v2.py DeepseekV2MLAAttention with input_size 2H on layer 0),
    a dense DeepseekV2MLP (never MoE), input/post-attention norms and hidden_norm on every layer."""
    q = "q_rank is not None"
    return (
        Param(
            p + "self_attn.fused_qkv_a_proj.weight",
            shards=(("0", ("q_rank", MLA_IN)), ("1", ("kv_rank+qk_rope", MLA_IN))),
            when=q,
            per_layer=True,
            role="decoder",
        ),
        Param(p + "self_attn.q_a_layernorm.weight", ("q_rank",), when=q, per_layer=True, role="decoder"),
        Param(p + "self_attn.q_b_proj.weight", ("nh*(qk_nope+qk_rope)", "q_rank"), when=q, per_layer=True, role="decoder", tp_dim=0),
        Param(
            p + "self_attn.q_proj.weight",
            ("nh*(qk_nope+qk_rope)", MLA_IN),
            when="not " + f"({q})",
            per_layer=True,
            role="decoder",
            tp_dim=0,
        ),
        Param(p + "self_attn.kv_a_proj_with_mqa.weight", ("kv_rank+qk_rope", MLA_IN), when=f"not ({q})", per_layer=True, role="decoder"),
        Param(p + "self_attn.kv_a_layernorm.weight", ("kv_rank",), per_layer=True, role="decoder"),
        Param(p + "self_attn.kv_b_proj.weight", ("nh*(qk_nope+v_hd)", "kv_rank"), per_layer=True, role="decoder", tp_dim=0),
        Param(p + "self_attn.o_proj.weight", ("H", "nh*v_hd"), per_layer=True, role="decoder", tp_dim=1),
        Param(p + "mlp.gate_up_proj.weight", shards=(("0", ("I", "H")), ("1", ("I", "H"))), per_layer=True, role="decoder", tp_dim=0),
        Param(p + "mlp.down_proj.weight", ("H", "I"), per_layer=True, role="decoder", tp_dim=1),
        Param(p + "input_layernorm.weight", ("H",), per_layer=True, role="decoder"),
        Param(p + "hidden_norm.weight", ("H",), per_layer=True, role="decoder"),
        Param(p + "post_attention_layernorm.weight", ("H",), per_layer=True, role="decoder"),
    )


DEEPSEEK_EAGLE3_CLASS = DraftClass(
    name="Eagle3DeepseekV2ForCausalLM",
    file=f"{DS3} @ {AT_30}",
    fields=DS3_FIELDS,
    derive=VLLM_DERIVE,
    # fc is always built (no use_aux_hidden_state test), there is no input_norm (norm_before_fc is not read)
    params=eagle3_io("Ht*n_aux", fc_bias="False", head_when="True", fc_when="True", input_norm=False)
    + _mla_decoder("model.layers.{i}.")
    + (D2T_IF_REDUCED,),
    loader=VOCAB_STEPS
    + (
        Drop(
            "rotary_emb.inv_freq",
            why="rotary caches are recomputed",
            cite="vllm/model_executor/models/utils.py (ROTARY_EMBEDS_UNUSED_WEIGHTS)",
        ),
        IgnoreSuffix(
            ".bias",
            why="unexpected .bias names are ignored",
            cite="vllm/model_executor/models/utils.py AutoWeightsLoader.load_weights (ignore_unexpected_suffixes .bias)",
        ),
        Prefix("model.", unless="lm_head", cite=f"{DS3} load_weights: every non-lm_head name gets 'model.'"),
        Rename(old="midlayer.", new="layers.0.", cite=f"{DS3} DeepseekV2Eagle3Model hf_to_vllm_mapper"),
        Stack(".gate_proj", fused=".gate_up_proj", shard="0", cite=f"{DS3} hf_to_vllm_mapper"),
        Stack(".up_proj", fused=".gate_up_proj", shard="1", cite=f"{DS3} hf_to_vllm_mapper"),
        # the mapper stacks both MLA down-projections whatever q_lora_rank says: with q_lora_rank null there is no
        # fused_qkv_a_proj and kv_a_proj_with_mqa's tensor is an unknown name
        Stack(".q_a_proj", fused=".fused_qkv_a_proj", shard="0", cite=f"{DS3} hf_to_vllm_mapper"),
        Stack(".kv_a_proj_with_mqa", fused=".fused_qkv_a_proj", shard="1", cite=f"{DS3} hf_to_vllm_mapper"),
    ),
    unknown="raise",
    unknown_message=VALUEERROR,
    missing="silent",
    raises=(DS3_AS_MTP, HT_NULL),
    share_embed="'target' if not has_embed else 'own-unless-equal'",
    share_head="'target' if not has_head else 'own-unless-equal'",
    share_cite=f"{PROP}; {DS3} load_weights (process_eagle_weight)",
    wider_tp="truncate",
    notes=(
        "no mask_hidden, input_norm or use_aux_hidden_state skips: such tensors are unknown names here",
        "q_lora_rank null: the mapper still stacks kv_a_proj_with_mqa into fused_qkv_a_proj, which is then not built",
    ),
)
# 0.25.0 … 0.29.0: qwen3_eagle3.py and deepseek_eagle3.py (read in the 0.25.0, 0.26.0, 0.27.0, 0.28.0 and 0.29.0 wheels)
# differ from 0.30.0's only where llama_eagle3.py does: draft_id_to_target_id is always built (zeros = identity when
# unfilled). Otherwise the same parameters and loader: 0.25.0 → 0.26.0 adds per-layer sliding windows (Qwen3) and a
# logger (DeepSeek), 0.27.1 → 0.28.0 drops deepseek_eagle3.py's forced deepseek_yarn (below; no weights); the AutoWeightsLoader
# skip_substrs of 0.25.0 … 0.28.0 and the WeightsMapper(orig_to_new_substr={...: None}) of 0.29.0 drop the same names.
# The registry (Eagle3Qwen3ForCausalLM, Eagle3DeepseekV2/V3ForCausalLM) and the speculators qwen3 → Eagle3Qwen3ForCausalLM
# map (algos.py update_eagle3) are in every one of these wheels.
AT_25 = "0.25.0 … 0.29.0"


def _d2t_always(cls: DraftClass, file: str) -> DraftClass:
    params = tuple(D2T_ALWAYS if p is D2T_IF_REDUCED else p for p in cls.params)
    assert params != cls.params, "the 0.30+ class builds draft_id_to_target_id only for a reduced vocabulary"
    return replace(cls, file=f"{file} @ {AT_25}", params=params)


QWEN3_D2T_ALWAYS = _d2t_always(QWEN3_CLASS, Q3)
DEEPSEEK_EAGLE3_28 = replace(_d2t_always(DEEPSEEK_EAGLE3_CLASS, DS3), file=f"{DS3} @ 0.28.0 … 0.29.0")
# 0.18.0 … 0.27.1 (read in the 0.18.0 … 0.27.1 wheels; gone in the 0.28.0 wheel): DeepseekV2Eagle3DecoderLayer copies
# any truthy getattr(config, "rope_scaling") into rope_parameters with rope_type forced to deepseek_yarn, and get_rope's
# deepseek_yarn branch indexes rope_parameters["factor"], then ["original_max_position_embeddings"]
# (vllm/model_executor/layers/rotary_embedding/__init__.py). From 0.25.0 vLLM requires transformers >= 5.5.3, whose
# configs always carry a rope_scaling ({"rope_type": "default", "rope_theta": …} when config.json has none or null;
# yarn gets original_max_position_embeddings = max_position_embeddings filled in): a drafter without a rope factor
# raises KeyError 'factor' while the class is built (the 0.27.0 zoo conformance raises exactly this).
ROPE_FIELDS = (
    Field("rope_factor", ("rope_scaling.factor", "rope_parameters.factor"), None, kind="any"),
    Field(
        "rope_orig", ("rope_scaling.original_max_position_embeddings", "rope_parameters.original_max_position_embeddings"), None, kind="any"
    ),
    Field("rope_kind", ("rope_scaling.rope_type", "rope_scaling.type", "rope_parameters.rope_type"), None, kind="any"),
)
DS3_YARN = f"{DS3} DeepseekV2Eagle3DecoderLayer.__init__ (rope_type forced to deepseek_yarn) and vllm/model_executor/layers/rotary_embedding/__init__.py get_rope (deepseek_yarn)"


def _rope_raises(at: str, transformers: str) -> tuple[Raise, ...]:
    return (
        Raise(
            "rope_factor is None",
            f"KeyError: 'factor' (deepseek_eagle3.py forces rope_type deepseek_yarn over any rope_scaling, and {transformers} "
            "fills a default one without a factor: give rope_scaling a yarn factor, or use vLLM 0.28.0+)",
            f"{DS3_YARN} @ {at}",
        ),
        Raise(
            "rope_factor is not None and rope_orig is None and rope_kind != 'yarn'",
            "KeyError: 'original_max_position_embeddings' (deepseek_eagle3.py forces rope_type deepseek_yarn, which needs it; "
            "transformers fills it only for rope_type yarn)",
            f"{DS3_YARN} @ {at}",
        ),
    )


DS3_ROPE_RAISES = _rope_raises("0.25.0 … 0.27.1 (transformers >= 5.5.3; the 0.27.0 zoo conformance raises it)", "transformers 5")
DEEPSEEK_EAGLE3_25 = replace(
    DEEPSEEK_EAGLE3_28,
    file=f"{DS3} @ 0.25.0 … 0.27.1",
    fields=DEEPSEEK_EAGLE3_28.fields + ROPE_FIELDS,
    raises=(DS3_AS_MTP, *DS3_ROPE_RAISES, HT_NULL),
    notes=DEEPSEEK_EAGLE3_28.notes + ("rope_type forced to deepseek_yarn: a rope_scaling without a factor raises KeyError 'factor'",),
)
# 0.18.0 … 0.24.0: deepseek_eagle3.py with its own params_dict loader (read in every wheel 0.18.0 … 0.24.0; 0.18.0 is the
# first whose registry has Eagle3DeepseekV2/V3ForCausalLM, absent from 0.17.1's; 0.18.0 … 0.21.0 are byte-identical):
# DeepseekV2Eagle3Model.load_weights renames midlayer., stacks gate/up and q_a_proj/kv_a_proj_with_mqa (params_dict[name]
# of a fused parameter that is not built: KeyError) and skips any other name it has no parameter for (`continue`);
# fc is target_hidden_size * 3 until 0.21.0 (hasattr), target_hidden_size * num_aux_hidden_states (else eagle_config's
# ids, else 3) with fc_norm from 0.22.0. The forced deepseek_yarn rope is there too; these releases allow
# transformers 4.56+ (no default rope_scaling: no KeyError) or 5.5.1+ (pip's choice today: the KeyError below).
DS3_PD = f"{DS3} DeepseekV2Eagle3Model.load_weights (params_dict loop)"
_MLA_FIELDS = DS3_FIELDS[len(VLLM_FIELDS) + len(N_AUX_V32) :]
DS3_ROPE_RAISES_T5 = _rope_raises(
    "0.18.0 … 0.24.0 with transformers 5.5.1+ (4.56+ is allowed too: its configs carry no default rope_scaling)",
    "transformers 5 (the newest this vLLM allows; 4.x fills none)",
)


def _deepseek_params_dict(*, versions: str, fc_in: str, n_aux: tuple[Field, ...], fc_norm: bool) -> DraftClass:
    return replace(
        DEEPSEEK_EAGLE3_25,
        file=f"{DS3} @ {versions}",
        fields=VLLM_FIELDS + n_aux + _MLA_FIELDS + ROPE_FIELDS,
        params=eagle3_io(fc_in, fc_bias="False", head_when="True", fc_when="True", input_norm=False, fc_norm=fc_norm)
        + _mla_decoder("model.layers.{i}.")
        + (D2T_ALWAYS,),
        loader=VOCAB_STEPS
        + (
            Drop(
                "rotary_emb.inv_freq",
                why="rotary caches are recomputed",
                cite="vllm/model_executor/models/utils.py (ROTARY_EMBEDS_UNUSED_WEIGHTS)",
            ),
            Prefix("model.", unless="lm_head", cite=f"{DS3} load_weights: every non-lm_head name gets 'model.'"),
            Rename(old="midlayer.", new="layers.0.", cite=DS3_PD),
            Stack(".gate_proj", fused=".gate_up_proj", shard="0", cite=f"{DS3_PD} stacked_params_mapping"),
            Stack(".up_proj", fused=".gate_up_proj", shard="1", cite=f"{DS3_PD} stacked_params_mapping"),
            Stack(".q_a_proj", fused=".fused_qkv_a_proj", shard="0", cite=f"{DS3_PD} stacked_params_mapping"),
            Stack(".kv_a_proj_with_mqa", fused=".fused_qkv_a_proj", shard="1", cite=f"{DS3_PD} stacked_params_mapping"),
        ),
        unknown="skip",
        unknown_message="skipped without a message: DeepseekV2Eagle3Model.load_weights has no parameter {name} (`continue`)",
        unknown_stacked="raise",
        unknown_stacked_message="KeyError: '{name}' (DeepseekV2Eagle3Model.load_weights indexes params_dict with the fused name)",
        raises=(DS3_AS_MTP, *DS3_ROPE_RAISES_T5, HT_NULL),
        notes=(
            "unknown names under model. are skipped silently; a gate/up or q_a/kv_a name whose fused parameter is not built "
            "raises KeyError (q_lora_rank null: kv_a_proj_with_mqa)",
            "rope_type forced to deepseek_yarn: with transformers 5 a rope_scaling without a factor raises KeyError 'factor'",
        ),
    )


DEEPSEEK_EAGLE3_18 = _deepseek_params_dict(versions="0.18.0 … 0.21.0", fc_in="Ht*3", n_aux=(Field("n_aux", (), 3),), fc_norm=False)
DEEPSEEK_EAGLE3_22 = _deepseek_params_dict(versions="0.22.0 … 0.24.0", fc_in="Ht*n_aux", n_aux=N_AUX_V32, fc_norm=True)
# 0.24.0: qwen3_eagle3.py's first release (absent from the 0.22.0 and 0.23.0 wheels and registries). The same class as
# 0.25.0's but Qwen3Eagle3Model.load_weights is a params_dict loop: stacked q/k/v and gate/up, then params_dict[name] for
# any other name (KeyError, no .bias ignored); Eagle3Qwen3ForCausalLM.load_weights' skip_substrs (mask_hidden, fc. without
# aux states, input_norm. without norm_before_fc) and the rotary skip are as in 0.25.0.
Q3_PD = f"{Q3} Qwen3Eagle3Model.load_weights (params_dict loop) @ 0.24.0"
QWEN3_24 = replace(
    QWEN3_D2T_ALWAYS,
    file=f"{Q3} @ 0.24.0",
    loader=tuple(st for st in QWEN3_D2T_ALWAYS.loader if st.op != "ignore_suffix"),
    unknown_message=KEYERROR,
    notes=QWEN3_D2T_ALWAYS.notes + (f"any name without a parameter raises KeyError, an unexpected .bias too ({Q3_PD})",),
)
