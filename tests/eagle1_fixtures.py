"""Tiny EAGLE-1 drafters in the research layout (yuhuili/EAGLE-LLaMA3-Instruct-8B in miniature: fc [H, 2H] with a
bias over (embedding, target feature), Llama decoder layers of which layer 0 has no input_layernorm, an embedding),
sized for the producer fixtures' tiny Llama target (H 64, 2 heads of 32, vocab 512)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from conftest import write_checkpoint

H, NH, NKV, HD, I, V = 64, 2, 2, 32, 128, 512


def config(**over) -> dict:
    cfg = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": H,
        "num_hidden_layers": 1,
        "num_attention_heads": NH,
        "num_key_value_heads": NKV,
        "head_dim": HD,
        "intermediate_size": I,
        "vocab_size": V,
        "rms_norm_eps": 1e-6,
        "max_position_embeddings": 256,
        "hidden_act": "silu",
        "torch_dtype": "float32",
    }
    return cfg | over


def tensors(n_layers: int = 1, bias: bool = True, embed: bool = True, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)

    def w(*shape):
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    out = {"fc.weight": w(H, 2 * H)}
    if bias:
        out["fc.bias"] = w(H)
    if embed:
        out["embed_tokens.weight"] = w(V, H)
    for i in range(n_layers):
        p = f"layers.{i}."
        out |= {
            p + "self_attn.q_proj.weight": w(NH * HD, H),
            p + "self_attn.k_proj.weight": w(NKV * HD, H),
            p + "self_attn.v_proj.weight": w(NKV * HD, H),
            p + "self_attn.o_proj.weight": w(H, NH * HD),
            p + "mlp.gate_proj.weight": w(I, H),
            p + "mlp.up_proj.weight": w(I, H),
            p + "mlp.down_proj.weight": w(H, I),
            p + "post_attention_layernorm.weight": np.ones(H, np.float32),
        }
        if i > 0:  # EAGLE's cnets.py: layer 0 has no input_layernorm
            out[p + "input_layernorm.weight"] = np.ones(H, np.float32)
    return out


def write(dir: Path, cfg: dict | None = None, ts: dict | None = None) -> Path:
    return write_checkpoint(dir, cfg if cfg is not None else config(), ts if ts is not None else tensors())
