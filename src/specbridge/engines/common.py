"""Building blocks the engine tables share: the Llama-style EAGLE-3 parameter list and config fields.

These are data constructors, not logic: each returns rows that a table can use as they are.
"""

from __future__ import annotations

from .spec import Derive, Field, Param, Step

LLAMA_FIELDS = (
    Field("H", ("hidden_size",), 4096),
    Field("L", ("num_hidden_layers",), 32),
    Field("nh", ("num_attention_heads",), 32),
    Field("nkv_raw", ("num_key_value_heads",), None),
    Field("hd_raw", ("head_dim",), None),
    Field("I", ("intermediate_size",), 11008),
    Field("V", ("vocab_size",), 32000),
    Field("Ht_raw", ("target_hidden_size",), None),
    Field("tie", ("tie_word_embeddings",), False, kind="bool"),
    Field("attention_bias", ("attention_bias",), False, kind="bool"),
    Field("fc_norm", ("fc_norm", "use_aux_norm"), False, kind="bool"),
    Field("norm_before_fc", ("eagle_config.norm_before_fc", "norm_before_fc"), False, kind="bool"),
    Field("use_aux", ("eagle_config.use_aux_hidden_state",), True, kind="bool"),
)
LLAMA_DERIVE = (
    Derive("nkv", "nkv_raw if nkv_raw is not None else nh"),
    Derive("hd", "hd_raw if hd_raw is not None else H // nh"),
    Derive("Ht", "Ht_raw if Ht_raw is not None else H"),
)

# q/k/v of layer 0 read cat(embeds, hidden) = 2H; later layers are ordinary decoder layers.
QKV_IN = "2*H if i == 0 else H"


def llama_decoder(prefix: str, per_layer: bool) -> tuple[Param, ...]:
    """The EAGLE-3 decoder layer as the engines fuse it (qkv_proj, gate_up_proj)."""
    return (
        Param(
            prefix + "self_attn.qkv_proj.weight",
            shards=(("q", ("nh*hd", QKV_IN)), ("k", ("nkv*hd", QKV_IN)), ("v", ("nkv*hd", QKV_IN))),
            per_layer=per_layer,
            role="decoder",
        ),
        Param(prefix + "self_attn.o_proj.weight", ("H", "nh*hd"), per_layer=per_layer, role="decoder"),
        Param(prefix + "mlp.gate_up_proj.weight", shards=(("0", ("I", "H")), ("1", ("I", "H"))), per_layer=per_layer, role="decoder"),
        Param(prefix + "mlp.down_proj.weight", ("H", "I"), per_layer=per_layer, role="decoder"),
        Param(prefix + "input_layernorm.weight", ("H",), per_layer=per_layer, role="decoder"),
        Param(prefix + "hidden_norm.weight", ("H",), when="i == 0", per_layer=per_layer, role="decoder"),
        Param(prefix + "post_attention_layernorm.weight", ("H",), per_layer=per_layer, role="decoder"),
    )


def eagle3_io(fc_in: str, fc_bias: str = "False", head_when: str = "not tie") -> tuple[Param, ...]:
    """Everything around the decoder: embedding, fc fusion, norms, head."""
    return (
        Param("model.embed_tokens.weight", ("V", "H"), share="embed", role="embed"),
        Param("model.fc.weight", ("H", fc_in), when="use_aux", role="fc"),
        Param("model.fc.bias", ("H",), when=fc_bias, role="fc"),
        Param("model.input_norm.weight", (fc_in,), when="norm_before_fc", role="fc"),
        Param("model.fc_norm.{j}.weight", ("Ht",), when="fc_norm", role="fc"),
        Param("model.norm.weight", ("H",), role="norm"),
        Param("lm_head.weight", ("Vd", "H"), when=head_when, share="head", role="head"),
    )


STACK_LLAMA = (
    Step("stack", ".q_proj", ".qkv_proj", "q"),
    Step("stack", ".k_proj", ".qkv_proj", "k"),
    Step("stack", ".v_proj", ".qkv_proj", "v"),
    Step("stack", ".gate_proj", ".gate_up_proj", "0"),
    Step("stack", ".up_proj", ".gate_up_proj", "1"),
)
