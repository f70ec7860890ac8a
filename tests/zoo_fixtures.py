"""Tiny drafters of vLLM's other speculative classes, sized for the producer fixtures' tiny Llama target (H 64, 2 heads
of 32, vocab 512): the per-architecture EAGLE-3 classes (Qwen3 with q/k norms, DeepSeek with MLA attention), P-EAGLE
(EAGLE-3 plus mask_hidden, in a speculators config), a Medusa head and an MLP speculator. Each is what its vLLM class
builds (qwen3_eagle3.py, deepseek_eagle3.py, llama_eagle3.py with parallel drafting, medusa.py, mlp_speculator.py at
0.32.0), written in the checkpoint's own names (q_proj/k_proj/v_proj, q_a_proj/kv_a_proj_with_mqa, gate/up)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from conftest import write_checkpoint

H, NH, NKV, HD, I, V = 64, 2, 2, 32, 128, 512
# MLA geometry (DeepSeek-style, in miniature)
Q_RANK, KV_RANK, NOPE, ROPE, VHD = 64, 64, 32, 32, 32


def _w(rng, *shape):
    return (rng.standard_normal(shape) * 0.02).astype(np.float32)


def _base(arch: str, model_type: str, **over) -> dict:
    cfg = {
        "architectures": [arch],
        "model_type": model_type,
        "hidden_size": H,
        "num_hidden_layers": 1,
        "num_attention_heads": NH,
        "num_key_value_heads": NKV,
        "head_dim": HD,
        "intermediate_size": I,
        "vocab_size": V,
        "draft_vocab_size": V,
        "rms_norm_eps": 1e-6,
        "max_position_embeddings": 256,
        "hidden_act": "silu",
        "torch_dtype": "float32",
        "tie_word_embeddings": False,
    }
    return cfg | over


def _io(rng, n_aux: int = 3) -> dict[str, np.ndarray]:
    """What every EAGLE-3 drafter ships around its layer: fc over the target states, the final norm, its own head."""
    return {
        "fc.weight": _w(rng, H, H * n_aux),
        "norm.weight": np.ones(H, np.float32),
        "lm_head.weight": _w(rng, V, H),
        "embed_tokens.weight": _w(rng, V, H),
    }


def _mlp(rng, p: str) -> dict[str, np.ndarray]:
    return {p + "mlp.gate_proj.weight": _w(rng, I, H), p + "mlp.up_proj.weight": _w(rng, I, H), p + "mlp.down_proj.weight": _w(rng, H, I)}


def _norms(p: str) -> dict[str, np.ndarray]:
    return {
        n: np.ones(H, np.float32) for n in (p + "input_layernorm.weight", p + "post_attention_layernorm.weight", p + "hidden_norm.weight")
    }


# --- EAGLE-3, Qwen3 decoder layer (qwen3_eagle3.py): Llama's names plus q_norm/k_norm over head_dim -------------------
def qwen3_config(**over) -> dict:
    return _base("Eagle3Qwen3ForCausalLM", "qwen3", **over)


def qwen3_tensors(seed: int = 0, qk_norm: bool = True) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = "layers.0."
    out = _io(rng) | _mlp(rng, p) | _norms(p)
    out |= {
        p + "self_attn.q_proj.weight": _w(rng, NH * HD, 2 * H),
        p + "self_attn.k_proj.weight": _w(rng, NKV * HD, 2 * H),
        p + "self_attn.v_proj.weight": _w(rng, NKV * HD, 2 * H),
        p + "self_attn.o_proj.weight": _w(rng, H, NH * HD),
    }
    if qk_norm:
        out |= {p + "self_attn.q_norm.weight": np.ones(HD, np.float32), p + "self_attn.k_norm.weight": np.ones(HD, np.float32)}
    return out


# --- EAGLE-3, DeepSeek MLA decoder layer (deepseek_eagle3.py) -------------------------------------------------------------
def deepseek_config(**over) -> dict:
    mla = {
        "q_lora_rank": Q_RANK,
        "kv_lora_rank": KV_RANK,
        "qk_nope_head_dim": NOPE,
        "qk_rope_head_dim": ROPE,
        "v_head_dim": VHD,
    }
    # model_type deepseek_v2: vLLM turns a deepseek_v3 draft config into DeepSeekMTPModel (hf_config_override)
    cfg = _base("Eagle3DeepseekV3ForCausalLM", "deepseek_v2", **mla)
    for k in ("num_key_value_heads", "head_dim"):
        cfg.pop(k)
    return cfg | over


def deepseek_tensors(seed: int = 0, q_lora: bool = True) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = "layers.0.self_attn."
    out = _io(rng) | _mlp(rng, "layers.0.") | _norms("layers.0.")
    qk = NOPE + ROPE
    if q_lora:
        out |= {
            p + "q_a_proj.weight": _w(rng, Q_RANK, 2 * H),
            p + "q_a_layernorm.weight": np.ones(Q_RANK, np.float32),
            p + "q_b_proj.weight": _w(rng, NH * qk, Q_RANK),
        }
    else:
        out[p + "q_proj.weight"] = _w(rng, NH * qk, 2 * H)
    out |= {
        p + "kv_a_proj_with_mqa.weight": _w(rng, KV_RANK + ROPE, 2 * H),
        p + "kv_a_layernorm.weight": np.ones(KV_RANK, np.float32),
        p + "kv_b_proj.weight": _w(rng, NH * (NOPE + VHD), KV_RANK),
        p + "o_proj.weight": _w(rng, H, NH * VHD),
    }
    return out


# --- P-EAGLE: a speculators config (speculators_model_type "peagle") over an EAGLE-3 drafter with mask_hidden ----------
def peagle_config(model_type: str = "llama", mask_token_id: int | None = V - 1, **over) -> dict:
    layer = {k: v for k, v in _base("LlamaForCausalLM", model_type).items() if k not in ("architectures", "draft_vocab_size")}
    cfg = {
        "architectures": ["PEagleDraftModel"],
        "speculators_model_type": "peagle",
        "speculators_config": {
            "algorithm": "peagle",
            "proposal_methods": [{"proposal_type": "greedy", "speculative_tokens": 4}],
            "verifier": {"name_or_path": "tiny-llama", "architectures": ["LlamaForCausalLM"]},
        },
        "transformer_layer_config": layer,
        "draft_vocab_size": V,
        "target_hidden_size": H,
        "norm_before_residual": False,
        "eagle_aux_hidden_state_layer_ids": [1, 2, 3],
    }
    if mask_token_id is not None:
        cfg["mask_token_id"] = mask_token_id
    return cfg | over


def peagle_tensors(seed: int = 0, mask_hidden: bool = True, qk_norm: bool = False) -> dict[str, np.ndarray]:
    out = qwen3_tensors(seed, qk_norm=qk_norm)
    if mask_hidden:  # the hidden state fed to the masked slots: one value per fc input
        out["mask_hidden"] = _w(np.random.default_rng(seed + 1), 1, 3 * H)
    return out


# --- EAGLE-1, Llama-4 decoder layers (llama4_eagle.py): feed_forward.*, an input norm on every layer, final norm, head --
def llama4_config(**over) -> dict:
    # no MoE draft layer: moe_layers [] (asserted) and interleave_moe_layer_step 0 (else every layer is Llama4MoE)
    cfg = _base("EagleLlama4ForCausalLM", "llama4_text", intermediate_size_mlp=I, moe_layers=[], no_rope_layers=[1])
    cfg["interleave_moe_layer_step"] = 0
    cfg |= {"yoco_global_kv_layer": None, "yoco_local_kv_layer": None}
    return cfg | over


def llama4_tensors(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = "layers.0."
    out = {
        "fc.weight": _w(rng, H, 2 * H),
        "norm.weight": np.ones(H, np.float32),
        "lm_head.weight": _w(rng, V, H),
        "embed_tokens.weight": _w(rng, V, H),
        p + "self_attn.q_proj.weight": _w(rng, NH * HD, H),
        p + "self_attn.k_proj.weight": _w(rng, NKV * HD, H),
        p + "self_attn.v_proj.weight": _w(rng, NKV * HD, H),
        p + "self_attn.o_proj.weight": _w(rng, H, NH * HD),
        p + "feed_forward.gate_proj.weight": _w(rng, I, H),
        p + "feed_forward.up_proj.weight": _w(rng, I, H),
        p + "feed_forward.down_proj.weight": _w(rng, H, I),
        p + "input_layernorm.weight": np.ones(H, np.float32),
        p + "post_attention_layernorm.weight": np.ones(H, np.float32),
    }
    return out


# --- EAGLE-1, MiniCPM decoder layers (minicpm_eagle.py): names as vLLM's class has them (model.eagle_layers.N, fc,
# input_norm1/2, final norm, own lm_head); MiniCPM's muP scales in the config ------------------------------------------
def minicpm_config(**over) -> dict:
    # model_type llama: transformers has no MiniCPM config of its own (remote code); LlamaConfig keeps the muP fields
    cfg = _base("EagleMiniCPMForCausalLM", "llama", scale_emb=12, scale_depth=1.4, dim_model_base=256, mup_denominator=32)
    cfg.pop("head_dim")  # MiniCPMAttention: hidden // heads
    return cfg | over


def minicpm_tensors(seed: int = 0, prefix: str = "model.") -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = prefix + "eagle_layers.0."
    out = {
        prefix + "fc.weight": _w(rng, H, 2 * H),
        prefix + "input_norm1.weight": np.ones(H, np.float32),
        prefix + "input_norm2.weight": np.ones(H, np.float32),
        prefix + "norm.weight": np.ones(H, np.float32),
        prefix + "embed_tokens.weight": _w(rng, V, H),
        "lm_head.weight": _w(rng, V, H),
        p + "self_attn.q_proj.weight": _w(rng, NH * HD, H),
        p + "self_attn.k_proj.weight": _w(rng, NKV * HD, H),
        p + "self_attn.v_proj.weight": _w(rng, NKV * HD, H),
        p + "self_attn.o_proj.weight": _w(rng, H, NH * HD),
    }
    return out | _mlp(rng, p) | {k: v for k, v in _norms(p).items() if "hidden_norm" not in k}


# --- Medusa (medusa.py): FasterDecoding's old layout {head}.{layer}.linear.* and {head}.{N}.weight ---------------------
def medusa_config(heads: int = 2, **over) -> dict:
    cfg = {"architectures": ["MedusaModel"], "model_type": "medusa", "hidden_size": H, "vocab_size": V}
    return cfg | {"medusa_num_heads": heads, "medusa_num_layers": 1} | over


def medusa_tensors(heads: int = 2, old_layout: bool = True, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {}
    for h in range(heads):
        if old_layout:
            out |= {f"{h}.0.linear.weight": _w(rng, H, H), f"{h}.0.linear.bias": _w(rng, H), f"{h}.1.weight": _w(rng, V, H)}
        else:  # the names vLLM's class has
            out |= {f"blocks.{h}.layers.0.weight": _w(rng, H, H), f"lm_heads.{h}.weight": _w(rng, V, H)}
    return out


# --- MLP speculator (mlp_speculator.py; IBM's speculator.* layout) ----------------------------------------------------------
def mlp_speculator_config(n_predict: int = 2, **over) -> dict:
    cfg = {
        "architectures": ["MLPSpeculatorPreTrainedModel"],
        "model_type": "mlp_speculator",
        "emb_dim": H,
        "inner_dim": H,
        "n_predict": n_predict,
        "vocab_size": V,
        "tie_weights": False,
        "scale_input": False,
    }
    return cfg | over


def mlp_speculator_tensors(n_predict: int = 2, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {}
    for i in range(n_predict):
        out |= {
            f"speculator.emb.{i}.weight": _w(rng, V, H),
            f"speculator.proj.{i}.weight": _w(rng, H, H),
            f"speculator.head.{i}.weight": _w(rng, V, H),
            f"speculator.ln.{i}.weight": np.ones(H, np.float32),
            f"speculator.ln.{i}.bias": np.zeros(H, np.float32),
        }
    return out


def write(dir: Path, cfg: dict, ts: dict) -> Path:
    return write_checkpoint(dir, cfg, ts)
