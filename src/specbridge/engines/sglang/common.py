"""What more than one SGLang family file reads: the stacked-name KeyError of llama.py's load_weights, the
o_proj bias rule, and the plain-class dispatch messages (EAGLE-3's and EAGLE-1/2's)."""

from __future__ import annotations

# 0.4.6-0.4.8: sglang/srt/models/llama.py LlamaForCausalLM.load_weights (which llama_eagle3 calls per name) looks a
# q/k/v/gate/up name's fused parameter up with params_dict[name] unguarded; 0.4.9 adds `if name not in params_dict:
# continue` (wheels read; the 0.4.6.post5 run raised on the story's layers.0.mlp.gate_proj)
STACKED_KEYERROR = (
    "KeyError: '{name}' (sglang/srt/models/llama.py load_weights indexes params_dict with a fused q/k/v/gate/up "
    "name the drafter class does not have; SGLang 0.4.9+ skips it)"
)
# … except a .bias name: `if name.endswith(".bias") and name not in params_dict: continue` (the GPTQ guard) comes first,
# so it is skipped silently (read at 0.4.6.post5 and 0.4.8.post1; 0.4.8.post1 run: LlamaForCausalLMEagle with Qwen2's q/k/v
# biases loads without an error)
STACKED_BIAS_SKIP = (".bias",)

LINEAR = (
    "sglang/srt/layers/linear.py (weight_loader: loaded_weight.narrow(...) along the TP dim; pad_or_narrow_weight from 0.5.3, PR #10112)"
)
O_BIAS = "attention_bias or bias"  # sglang/srt/models/llama.py LlamaDecoderLayer: LlamaAttention(bias=attention_bias or bias)

# A draft config naming an ordinary model class (the EAGLE research configs say LlamaForCausalLM) is not refused:
# model_config.py renames no Llama architecture for a draft, so SGLang builds that plain model (one ordinary
# layer; midlayer.* skipped by its load_weights), and the EAGLE3 worker then asks it for the hot-token map.
# (Llama and its subclass Mistral have set_embed, so the worker gets as far as the hot-token map; Qwen classes
# have no set_embed and fail one line earlier: not tabled here.)
PLAIN = ("LlamaForCausalLM", "MistralForCausalLM")
UNKNOWN_MSG = (
    "ValueError: Cannot find model module. '{arch}' is not a registered model in the Transformers library ... and 'AutoModel' "
    "is not present in the model config's 'auto_map' (sglang/srt/model_loader/utils.py resolve_transformers_arch, 0.4.9+: "
    "an architecture SGLang has no class for falls back to Transformers, which has none either)"
)
