"""Tiny EAGLE-1/2 drafters of vLLM's other method-eagle classes, sized for the producer fixtures' tiny Llama target (H 64,
2 heads of 32, vocab 512, 4 layers): Cohere (cohere_eagle.py: Cohere layers, LayerNorm, fc with a bias, names read as
written), DeepSeek (deepseek_eagle.py: enorm/hnorm, MLA attention, its own head; every name but lm_head gets "model.")
and Mistral (mistral_eagle.py: Mistral/Llama layers, no head, Mistral-format names renamed). Each is what its class
builds at 0.32.0, in the checkpoint's own names (q_proj/k_proj/v_proj, gate/up, q_a_proj/kv_a_proj_with_mqa)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from conftest import write_checkpoint

H, NH, NKV, HD, I, V = 64, 2, 2, 32, 128, 512
Q_RANK, KV_RANK, NOPE, ROPE, VHD = 64, 64, 32, 32, 32  # MLA geometry in miniature


def _w(rng, *shape):
    return (rng.standard_normal(shape) * 0.02).astype(np.float32)


def _ones(*shape):
    return np.ones(shape, np.float32)


def _base(arch: str, model_type: str, **over) -> dict:
    cfg = {
        "architectures": [arch],
        "model_type": model_type,
        "hidden_size": H,
        "num_hidden_layers": 1,
        "num_attention_heads": NH,
        "num_key_value_heads": NKV,
        "intermediate_size": I,
        "vocab_size": V,
        "max_position_embeddings": 256,
        "hidden_act": "silu",
        "torch_dtype": "float32",
    }
    return cfg | over


def _attn_mlp(rng, p: str) -> dict[str, np.ndarray]:
    return {
        p + "self_attn.q_proj.weight": _w(rng, NH * HD, H),
        p + "self_attn.k_proj.weight": _w(rng, NKV * HD, H),
        p + "self_attn.v_proj.weight": _w(rng, NKV * HD, H),
        p + "self_attn.o_proj.weight": _w(rng, H, NH * HD),
        p + "mlp.gate_proj.weight": _w(rng, I, H),
        p + "mlp.up_proj.weight": _w(rng, I, H),
        p + "mlp.down_proj.weight": _w(rng, H, I),
    }


# --- Cohere (cohere_eagle.py): CohereDecoderLayer (one LayerNorm weight, parallel attention + MLP), fc [H, 2H] + bias ---
def cohere_config(**over) -> dict:
    # Cohere2Config's defaults: tie_word_embeddings true (the embedding is the head), LayerNorm eps 1e-5. layer_types: the
    # draft config is an EAGLEConfig, never a CohereConfig, so CohereAttention reads config.layer_types[layer index], the
    # index counting the target's layers, whose own layer_types cohere_eagle.py prepends (a Cohere2 target)
    return (
        _base("CohereForCausalLM", "cohere2", layer_norm_eps=1e-5, logit_scale=1.0, tie_word_embeddings=True)
        | {"layer_types": ["full_attention"]}
        | over
    )


def cohere_tensors(seed: int = 0, embed: bool = False, qk_norm: bool = False, prefix: str = "model.") -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = prefix + "layers.0."
    out = {prefix + "fc.weight": _w(rng, H, 2 * H), prefix + "fc.bias": _w(rng, H), prefix + "norm.weight": _ones(H)}
    out |= _attn_mlp(rng, p) | {p + "input_layernorm.weight": _ones(H)}
    if qk_norm:
        out |= {p + "self_attn.q_norm.weight": _ones(NH, HD), p + "self_attn.k_norm.weight": _ones(NKV, HD)}
    if embed:
        out[prefix + "embed_tokens.weight"] = _w(rng, V, H)
    return out


# --- DeepSeek (deepseek_eagle.py): fc over cat(enorm(embeds), hnorm(hidden)), a DeepseekV2DecoderLayer (MLA), its head --
def deepseek_config(**over) -> dict:
    mla = {"q_lora_rank": Q_RANK, "kv_lora_rank": KV_RANK, "qk_nope_head_dim": NOPE, "qk_rope_head_dim": ROPE, "v_head_dim": VHD}
    # model_type deepseek_v3: vLLM's hf_config_override makes it DeepSeekMTPModel, which method eagle prefixes with Eagle;
    # the draft layer (index = the target's 4 layers + 0) is dense only below first_k_dense_replace
    cfg = _base("DeepseekV3ForCausalLM", "deepseek_v3", rms_norm_eps=1e-6, first_k_dense_replace=100, **mla)
    cfg.pop("num_key_value_heads")
    return cfg | over


def deepseek_tensors(seed: int = 0, q_lora: bool = True, head: bool = True) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    p, a = "layers.0.", "layers.0.self_attn."
    out = {
        "embed_tokens.weight": _w(rng, V, H),
        "fc.weight": _w(rng, H, 2 * H),
        "enorm.weight": _ones(H),
        "hnorm.weight": _ones(H),
        "norm.weight": _ones(H),
        p + "input_layernorm.weight": _ones(H),
        p + "post_attention_layernorm.weight": _ones(H),
        p + "mlp.gate_proj.weight": _w(rng, I, H),
        p + "mlp.up_proj.weight": _w(rng, I, H),
        p + "mlp.down_proj.weight": _w(rng, H, I),
        a + "kv_a_proj_with_mqa.weight": _w(rng, KV_RANK + ROPE, H),
        a + "kv_a_layernorm.weight": _ones(KV_RANK),
        a + "kv_b_proj.weight": _w(rng, NH * (NOPE + VHD), KV_RANK),
        a + "o_proj.weight": _w(rng, H, NH * VHD),
    }
    if q_lora:
        out |= {
            a + "q_a_proj.weight": _w(rng, Q_RANK, H),
            a + "q_a_layernorm.weight": _ones(Q_RANK),
            a + "q_b_proj.weight": _w(rng, NH * (NOPE + ROPE), Q_RANK),
        }
    else:
        out[a + "q_proj.weight"] = _w(rng, NH * (NOPE + ROPE), H)
    if head:
        out["lm_head.weight"] = _w(rng, V, H)
    return out


# a DeepSeek-V3 draft config as released: n_routed_experts set and first_k_dense_replace 3, so the draft layer (index =
# the target's layers + 0) is a DeepseekV2MoE layer over any target of 3 layers or more (the tiny target has 4)
E, MI = 4, 32  # routed experts, their (and the one shared expert's) intermediate size


def deepseek_moe_config(**over) -> dict:
    moe = {
        "first_k_dense_replace": 3,
        "n_routed_experts": E,
        "n_shared_experts": 1,
        "moe_intermediate_size": MI,
        "num_experts_per_tok": 2,
        "n_group": 1,
        "topk_group": 1,
        "topk_method": "noaux_tc",
        "scoring_func": "sigmoid",
        "norm_topk_prob": True,
        "routed_scaling_factor": 2.5,
    }
    return deepseek_config(**moe) | over


def deepseek_moe_tensors(seed: int = 0, bias: bool = True, shared: bool = True) -> dict[str, np.ndarray]:
    """The MoE-shaped draft layer in DeepSeek-V3's own names: router gate (+ its score-correction bias), per-expert
    gate/up/down and the shared expert, in place of the dense mlp.gate_proj/up_proj/down_proj."""
    rng = np.random.default_rng(seed + 1)
    m = "layers.0.mlp."
    out = {k: v for k, v in deepseek_tensors(seed).items() if not k.startswith(m)}
    out[m + "gate.weight"] = _w(rng, E, H)
    if bias:
        out[m + "gate.e_score_correction_bias"] = np.zeros(E, np.float32)
    for e in range(E):
        x = f"{m}experts.{e}."
        out |= {x + "gate_proj.weight": _w(rng, MI, H), x + "up_proj.weight": _w(rng, MI, H), x + "down_proj.weight": _w(rng, H, MI)}
    if shared:
        x = m + "shared_experts."
        out |= {x + "gate_proj.weight": _w(rng, MI, H), x + "up_proj.weight": _w(rng, MI, H), x + "down_proj.weight": _w(rng, H, MI)}
    return out


# --- Mistral (mistral_eagle.py): Mistral (Llama) decoder layers, fc [H, 2H] without a bias, a final norm, no head -------
def mistral_config(**over) -> dict:
    return _base("MistralForCausalLM", "mistral", head_dim=HD, rms_norm_eps=1e-6, tie_word_embeddings=False) | over


def mistral_tensors(seed: int = 0, prefix: str = "model.", fc_bias: bool = False) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = prefix + "layers.0."
    out = {prefix + "fc.weight": _w(rng, H, 2 * H), prefix + "norm.weight": _ones(H)}
    out |= _attn_mlp(rng, p) | {p + "input_layernorm.weight": _ones(H), p + "post_attention_layernorm.weight": _ones(H)}
    if fc_bias:
        out[prefix + "fc.bias"] = _w(rng, H)
    return out


def mistral_native_tensors(seed: int = 0) -> dict[str, np.ndarray]:
    """The same drafter in Mistral's own names (consolidated.safetensors): eagle_linear, layers.N.attention.wq, …"""
    rename = {
        "model.fc.": "eagle_linear.",
        "model.norm.": "norm.",
        "model.layers.": "layers.",
        "self_attn.q_proj": "attention.wq",
        "self_attn.k_proj": "attention.wk",
        "self_attn.v_proj": "attention.wv",
        "self_attn.o_proj": "attention.wo",
        "mlp.gate_proj": "feed_forward.w1",
        "mlp.down_proj": "feed_forward.w2",
        "mlp.up_proj": "feed_forward.w3",
        "input_layernorm": "attention_norm",
        "post_attention_layernorm": "ffn_norm",
    }
    out = {}
    for k, v in mistral_tensors(seed).items():
        for a, b in rename.items():
            k = k.replace(a, b)
        out[k] = v
    return out


# --- Mistral Large 3 (mistral_large_3_eagle.py): fc straight over cat(embeds, hidden), a DeepseekV2DecoderLayer (MLA),
# Mistral-format names; embedding and head always the target's ----------------------------------------------------------
def mistral_large3_config(**over) -> dict:
    """What vLLM's Mistral-format reader makes of an MLA params.json (model_type deepseek_v3, architectures
    [MistralLarge3ForCausalLM]); first_k_dense_replace is the draft's own (the class adds the target's layers to both it
    and the layer index), so 1 keeps the one draft layer dense"""
    mla = {"q_lora_rank": Q_RANK, "kv_lora_rank": KV_RANK, "qk_nope_head_dim": NOPE, "qk_rope_head_dim": ROPE, "v_head_dim": VHD}
    cfg = _base("MistralLarge3ForCausalLM", "deepseek_v3", rms_norm_eps=1e-6, first_k_dense_replace=1, **mla)
    cfg.pop("num_key_value_heads")
    return cfg | over


def mistral_large3_tensors(seed: int = 0, q_lora: bool = True, head: bool = False) -> dict[str, np.ndarray]:
    """The drafter in Mistral's own names (consolidated.safetensors): eagle_linear, layers.N.attention.wq_a, …"""
    rng = np.random.default_rng(seed)
    p, a = "layers.0.", "layers.0.attention."
    out = {
        "eagle_linear.weight": _w(rng, H, 2 * H),
        "norm.weight": _ones(H),
        p + "attention_norm.weight": _ones(H),
        p + "ffn_norm.weight": _ones(H),
        p + "feed_forward.w1.weight": _w(rng, I, H),
        p + "feed_forward.w3.weight": _w(rng, I, H),
        p + "feed_forward.w2.weight": _w(rng, H, I),
        a + "wkv_a_with_mqa.weight": _w(rng, KV_RANK + ROPE, H),
        a + "kv_a_norm.weight": _ones(KV_RANK),
        a + "wkv_b.weight": _w(rng, NH * (NOPE + VHD), KV_RANK),
        a + "wo.weight": _w(rng, H, NH * VHD),
    }
    if q_lora:
        out |= {
            a + "wq_a.weight": _w(rng, Q_RANK, H),
            a + "q_a_norm.weight": _ones(Q_RANK),
            a + "wq_b.weight": _w(rng, NH * (NOPE + ROPE), Q_RANK),
        }
    else:  # no Mistral name maps to q_proj: HF's name, read as written
        out["model.layers.0.self_attn.q_proj.weight"] = _w(rng, NH * (NOPE + ROPE), H)
    if head:
        out["output.weight"] = _w(rng, V, H)
    return out


def write(dir: Path, cfg: dict, ts: dict) -> Path:
    return write_checkpoint(dir, cfg, ts)
