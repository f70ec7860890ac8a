"""Building blocks the engine tables share: the Llama-style EAGLE-3 parameter list and config fields.

These are data constructors, not logic: each returns rows that a table can use as they are.
"""

from __future__ import annotations

from .spec import Derive, Field, Param, Stack

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


def llama_decoder(
    prefix: str,
    per_layer: bool,
    hidden_norm_when: str = "i == 0",
    o_bias_when: str = "False",
    qkv_bias_when: str = "False",
    qkv_in: str = QKV_IN,
    input_norm_when: str = "True",
    hidden_norm_missing_ok: str = "False",
) -> tuple[Param, ...]:
    """The EAGLE-3 decoder layer as the engines fuse it (qkv_proj, gate_up_proj).

    tp_dim marks the tensor-parallel dimension a loader narrows (column-parallel: rows; row-parallel:
    columns); engines differ in what they do when a checkpoint disagrees along it. `hidden_norm_missing_ok`: where
    nothing fills hidden_norm, is that harmless (a class that builds it on every layer but reads it only in layer 0)?"""
    return (
        Param(
            prefix + "self_attn.qkv_proj.weight",
            shards=(("q", ("nh*hd", qkv_in)), ("k", ("nkv*hd", qkv_in)), ("v", ("nkv*hd", qkv_in))),
            per_layer=per_layer,
            role="decoder",
            tp_dim=0,
        ),
        Param(
            prefix + "self_attn.qkv_proj.bias",
            shards=(("q", ("nh*hd",)), ("k", ("nkv*hd",)), ("v", ("nkv*hd",))),
            when=qkv_bias_when,
            per_layer=per_layer,
            role="decoder",
        ),
        Param(prefix + "self_attn.o_proj.weight", ("H", "nh*hd"), per_layer=per_layer, role="decoder", tp_dim=1),
        Param(prefix + "self_attn.o_proj.bias", ("H",), when=o_bias_when, per_layer=per_layer, role="decoder"),
        Param(
            prefix + "mlp.gate_up_proj.weight",
            shards=(("0", ("I", "H")), ("1", ("I", "H"))),
            per_layer=per_layer,
            role="decoder",
            tp_dim=0,
            pads=True,
        ),
        Param(prefix + "mlp.down_proj.weight", ("H", "I"), per_layer=per_layer, role="decoder", tp_dim=1, pads=True),
        Param(prefix + "input_layernorm.weight", ("H",), when=input_norm_when, per_layer=per_layer, role="decoder"),
        Param(
            prefix + "hidden_norm.weight",
            ("H",),
            when=hidden_norm_when,
            per_layer=per_layer,
            role="decoder",
            missing_ok=hidden_norm_missing_ok,
            missing_note="built on every layer, read only by layer 0's forward (the cat(embeds, hidden) step): unused here",
        ),
        Param(prefix + "post_attention_layernorm.weight", ("H",), per_layer=per_layer, role="decoder"),
    )


def eagle3_io(
    fc_in: str, fc_bias: str = "False", head_when: str = "not tie", fc_when: str = "use_aux", input_norm: bool = True, fc_norm: bool = True
) -> tuple[Param, ...]:
    """Everything around the decoder: embedding, fc fusion, norms, head. input_norm / fc_norm: whether
    this class has those optional norms at all (older releases silently lack them)."""
    return (
        Param("model.embed_tokens.weight", ("V", "H"), share="embed", role="embed"),
        Param("model.fc.weight", ("H", fc_in), when=fc_when, role="fc"),
        Param(
            "model.fc.bias",
            ("H",),
            when=fc_bias,
            role="fc",
            missing_small="True",
            missing_note="an nn.Linear bias nothing fills keeps its default initialisation U(±1/sqrt(fc_in)): a small constant "
            "offset on every fused state (|b| ≤ 0.01 for fc_in ≥ 10⁴), not a random layer",
        ),
        Param("model.input_norm.weight", (fc_in,), when="norm_before_fc" if input_norm else "False", role="fc"),
        Param("model.fc_norm.{j}.weight", ("Ht",), when="fc_norm" if fc_norm else "False", role="fc"),
        Param("model.norm.weight", ("H",), role="norm"),
        Param("lm_head.weight", ("Vd", "H"), when=head_when, share="head", role="head"),
    )


STACK_LLAMA = (
    Stack(".q_proj", fused=".qkv_proj", shard="q"),
    Stack(".k_proj", fused=".qkv_proj", shard="k"),
    Stack(".v_proj", fused=".qkv_proj", shard="v"),
    Stack(".gate_proj", fused=".gate_up_proj", shard="0"),
    Stack(".up_proj", fused=".gate_up_proj", shard="1"),
)


# what a decoder layer holds, as an MTP head's block is matched (Param.group_parts): attention, MLP / MoE, the two norms,
# and the linear-attention / mixer blocks hybrid targets use
DECODER_PARTS = ("self_attn.", "mlp.", "input_layernorm.", "post_attention_layernorm.", "linear_attn.", "mixer.")
