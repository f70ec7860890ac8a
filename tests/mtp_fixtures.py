"""Tiny targets that carry an MTP head, laid out as the published checkpoints lay theirs out: GLM-4.5
(zai-org/GLM-4.5: `model.layers.{num_hidden_layers}.{enorm,hnorm,eh_proj,shared_head.norm}` beside a full MoE decoder
layer) and DeepSeek-V3 (the same, plus copies of the embedding and head inside the MTP layer). Numpy only: the
header-only commands read them; the conformance tests build theirs with transformers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from conftest import write_checkpoint

H, NH, NKV, HD, I, MI, V, E = 64, 2, 2, 32, 128, 32, 512, 4


def glm_config(n_layers: int = 2, mtp: int = 1, **over) -> dict:
    cfg = {
        "architectures": ["Glm4MoeForCausalLM"],
        "model_type": "glm4_moe",
        "hidden_size": H,
        "num_hidden_layers": n_layers,
        "num_nextn_predict_layers": mtp,
        "num_attention_heads": NH,
        "num_key_value_heads": NKV,
        "head_dim": HD,
        "intermediate_size": I,
        "moe_intermediate_size": MI,
        "n_routed_experts": E,
        "n_shared_experts": 1,
        "num_experts_per_tok": 2,
        "first_k_dense_replace": 1,
        "attention_bias": True,
        "vocab_size": V,
        "rms_norm_eps": 1e-5,
        "max_position_embeddings": 256,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    }
    return cfg | over


def deepseek_config(n_layers: int = 2, mtp: int = 1, **over) -> dict:
    return glm_config(n_layers, mtp, architectures=["DeepseekV3ForCausalLM"], model_type="deepseek_v3", attention_bias=False) | over


def decoder(prefix: str, moe: bool, bias: bool, w) -> dict:
    out = {f"{prefix}input_layernorm.weight": np.ones(H, np.float32), f"{prefix}post_attention_layernorm.weight": np.ones(H, np.float32)}
    for p, rows in (("q", NH * HD), ("k", NKV * HD), ("v", NKV * HD)):
        out[f"{prefix}self_attn.{p}_proj.weight"] = w(rows, H)
        if bias:
            out[f"{prefix}self_attn.{p}_proj.bias"] = w(rows)
    out[f"{prefix}self_attn.o_proj.weight"] = w(H, NH * HD)
    if not moe:
        return out | {f"{prefix}mlp.{p}_proj.weight": w(I, H) for p in ("gate", "up")} | {f"{prefix}mlp.down_proj.weight": w(H, I)}
    out[f"{prefix}mlp.gate.weight"] = w(E, H)
    out[f"{prefix}mlp.gate.e_score_correction_bias"] = np.zeros(E, np.float32)
    for e in [*(f"experts.{k}" for k in range(E)), "shared_experts"]:
        out |= {
            f"{prefix}mlp.{e}.gate_proj.weight": w(MI, H),
            f"{prefix}mlp.{e}.up_proj.weight": w(MI, H),
            f"{prefix}mlp.{e}.down_proj.weight": w(H, MI),
        }
    return out


def mtp_layer(m: int, w, bias: bool, copies: bool, parts=("enorm", "hnorm", "eh_proj", "shared_head.norm", "decoder")) -> dict:
    """MTP layer `m` as the published checkpoints write it; `copies`: DeepSeek-V3's embed_tokens / shared_head.head copies."""
    p = f"model.layers.{m}."
    out = decoder(p, True, bias, w) if "decoder" in parts else {}
    for part in ("enorm", "hnorm", "shared_head.norm"):
        if part in parts:
            out[f"{p}{part}.weight"] = np.ones(H, np.float32)
    if "eh_proj" in parts:
        out[f"{p}eh_proj.weight"] = w(H, 2 * H)
    if copies:
        out |= {f"{p}embed_tokens.weight": w(V, H), f"{p}shared_head.head.weight": w(V, H)}
    return out


def target_tensors(config: dict, mtp_layers: tuple[int, ...] | None = None, copies: bool = False, seed: int = 0, **kw) -> dict:
    """A whole target: embedding, dense layer 0, MoE layers, norm, head, and the MTP layers (`mtp_layers`, default: every
    announced one)."""
    rng = np.random.default_rng(seed)

    def w(*shape):
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    n, bias = config["num_hidden_layers"], config.get("attention_bias", False)
    out = {"model.embed_tokens.weight": w(V, H), "model.norm.weight": np.ones(H, np.float32), "lm_head.weight": w(V, H)}
    for i in range(n):
        out |= decoder(f"model.layers.{i}.", i >= config.get("first_k_dense_replace", 0), bias, w)
    announced = range(n, n + config.get("num_nextn_predict_layers", 0))
    for m in announced if mtp_layers is None else mtp_layers:
        out |= mtp_layer(m, w, bias, copies, **kw)
    return out


def write_target(dir: Path, config: dict, **kw) -> Path:
    return write_checkpoint(dir, config, target_tensors(config, **kw))
