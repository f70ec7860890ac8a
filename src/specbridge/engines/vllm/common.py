"""vLLM rows that more than one family file of this package reads: the source files they cite, the config fields
and derivations every Llama-shaped drafter starts from, the loaders' error texts, and the EAGLE-1/2 pieces both
eagle1.py and eagle1_siblings.py build on.
"""

from __future__ import annotations

from ..common import LLAMA_DERIVE, LLAMA_FIELDS
from ..spec import Derive, Field, LaunchCheck, Param

# the vLLM source files many rows cite
F = "vllm/model_executor/models/llama_eagle3.py"
PROP = "vllm/v1/spec_decode/llm_base_proposer.py (_maybe_share_embeddings/_maybe_share_lm_head)"
CFG = "vllm/transformers_utils/configs/speculators/algos.py (update_eagle3)"
REG = "vllm/model_executor/models/registry.py"
# a Llama-shaped drafter's config fields and derivations (EAGLE-3, EAGLE-1/2)
VLLM_FIELDS = LLAMA_FIELDS + (
    Field("Vd_raw", ("draft_vocab_size",), None),
    Field("bias", ("bias",), False, kind="bool"),
    # fc is sized with hasattr/getattr(config, "target_hidden_size"): a key present but null gives None * n
    Field("Ht_key", ("target_hidden_size",), "absent", keep_null=True, kind="any"),
)
VLLM_DERIVE = LLAMA_DERIVE + (Derive("Vd", "Vd_raw if Vd_raw is not None else V"),)
# the loaders' errors on a name with no parameter: the params_dict loops' and AutoWeightsLoader's
KEYERROR = "KeyError: '{name}' (hand-written params_dict loader)"
VALUEERROR = "ValueError: There is no module or parameter named '{component}' in {module}"
SPEC_PY = "vllm/config/speculative.py"
# DefaultModelLoader's completeness check (model_loader/default_loader.py track_weights_loading, an unquantized model
# whose load_weights returns the names it loaded): MTP heads, Medusa and EAGLE-1 0.9.0 … 0.9.1
NOT_INITIALISED = "ValueError: Following weights were not initialized from checkpoint: {{{names}}}"
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
