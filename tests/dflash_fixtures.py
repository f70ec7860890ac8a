"""Tiny DFlash drafters written the way vLLM's qwen3_dflash.py loads them (z-lab's layout: Qwen3 decoder layers with
q/k norms reading the hidden size, a model-level hidden_norm, fc over the target layers' states, the mask token in
dflash_config; embed_tokens and lm_head shared from the target), plus the mutations the public failures are made of."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from conftest import write_checkpoint

H, NH, NKV, HD, I, V, L = 64, 2, 2, 32, 128, 512, 2
TARGET_IDS = [0, 1, 2]
MASK_ID = V - 1


def config(**over) -> dict:
    cfg = {
        "architectures": ["DFlashDraftModel"],
        "model_type": "qwen3",
        "hidden_size": H,
        "num_hidden_layers": L,
        "num_attention_heads": NH,
        "num_key_value_heads": NKV,
        "head_dim": HD,
        "intermediate_size": I,
        "vocab_size": V,
        "rms_norm_eps": 1e-6,
        "max_position_embeddings": 2048,
        "rope_theta": 1000000.0,
        "hidden_act": "silu",
        "tie_word_embeddings": False,
        "block_size": 4,
        "dflash_config": {"target_layer_ids": TARGET_IDS, "mask_token_id": MASK_ID},
        "torch_dtype": "float32",
    }
    cfg.update(over)
    return cfg


def tensors(n_layers: int = L, n_ids: int = len(TARGET_IDS), seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)

    def w(*shape):
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    out = {"fc.weight": w(H, H * n_ids), "hidden_norm.weight": np.ones(H, np.float32), "norm.weight": np.ones(H, np.float32)}
    for i in range(n_layers):
        p = f"layers.{i}."
        out |= {
            p + "self_attn.q_proj.weight": w(NH * HD, H),
            p + "self_attn.k_proj.weight": w(NKV * HD, H),
            p + "self_attn.v_proj.weight": w(NKV * HD, H),
            p + "self_attn.o_proj.weight": w(H, NH * HD),
            p + "self_attn.q_norm.weight": np.ones(HD, np.float32),
            p + "self_attn.k_norm.weight": np.ones(HD, np.float32),
            p + "mlp.gate_proj.weight": w(I, H),
            p + "mlp.up_proj.weight": w(I, H),
            p + "mlp.down_proj.weight": w(H, I),
            p + "input_layernorm.weight": np.ones(H, np.float32),
            p + "post_attention_layernorm.weight": np.ones(H, np.float32),
        }
    return out


def write(dir: Path, cfg: dict | None = None, ts: dict | None = None) -> Path:
    return write_checkpoint(dir, cfg if cfg is not None else config(), ts if ts is not None else tensors())


# DFlash2 (vllm/model_executor/models/qwen3_dflash2.py @ 0.28.0–0.32.0; z-lab's published layout): DFlash plus a
# grouped dynamic convolution around each sublayer and a candidate selector over the head's top-k
TAPS, GROUP, RANK, TOP_K = 2, 16, 8, 4
DFLASH2 = {"conv_kernel_size": TAPS, "conv_group_size": GROUP, "selector_rank": RANK, "selector_top_k": TOP_K}


def config2(**over) -> dict:
    dc = {"target_layer_ids": TARGET_IDS, "mask_token_id": MASK_ID, **DFLASH2}
    return config(**{"architectures": ["DFlash2DraftModel"], "dflash_config": dc, **over})


def tensors2(n_layers: int = L, seed: int = 0, vocab: int = V) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed + 1)

    def w(*shape):
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    out = tensors(n_layers=n_layers, seed=seed)
    for i in range(n_layers):
        for conv in ("attention_conv", "mlp_conv"):
            out[f"layers.{i}.{conv}.base_kernel"] = w(2, TAPS, H)
            out[f"layers.{i}.{conv}.kernel_projection.weight"] = w(2 * TAPS * (H // GROUP), H)
    out |= {
        "candidate_selector.hidden_projection.weight": w(RANK, H),
        "candidate_selector.predecessor_codebook": w(vocab, RANK),
        "candidate_selector.successor_codebook": w(vocab, RANK),
    }
    return out


# DSpark (vllm/model_executor/models/qwen3_dspark.py; DeepSeek's DeepSpec layout): DFlash's backbone with the target
# layers, mask token and block size at the top level, plus a Markov head and a confidence head; it ships embed_tokens
# and lm_head
MARKOV_RANK = 8


def config_dspark(**over) -> dict:
    cfg = config(architectures=["Qwen3DSparkModel"], target_layer_ids=TARGET_IDS, mask_token_id=MASK_ID, block_size=4)
    del cfg["dflash_config"]
    cfg |= {"markov_rank": MARKOV_RANK, "markov_head_type": "vanilla", "enable_confidence_head": True, "confidence_head_with_markov": True}
    cfg.update(over)
    return cfg


def tensors_dspark(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed + 2)

    def w(*shape):
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    return tensors(seed=seed) | {
        "embed_tokens.weight": w(V, H),
        "lm_head.weight": w(V, H),
        "markov_head.markov_w1.weight": w(V, MARKOV_RANK),
        "markov_head.markov_w2.weight": w(V, MARKOV_RANK),
        "confidence_head.proj.weight": w(1, H + MARKOV_RANK),
        "confidence_head.proj.bias": w(1),
    }


# Laguna DFlash (vllm/model_executor/models/laguna_dflash.py @ 0.25.0–0.32.0): a LagunaForCausalLM config (renamed
# DFlashLagunaForCausalLM for method dflash) whose layers are Laguna's: a fused qkv_proj, a per-head g_proj gate,
# q/k norms, separate gate/up projections (num_experts 0: every layer dense), one aux norm per target state before fc
def config_laguna(**over) -> dict:
    cfg = config(
        architectures=["LagunaForCausalLM"],
        model_type="laguna",
        draft_vocab_size=V,
        gating=True,
        num_experts=0,
        layer_types=["full_attention"] * L,
        mlp_layer_types=["dense"] * L,
    )
    cfg.update(over)
    return cfg


def tensors_laguna(n_layers: int = L, n_ids: int = len(TARGET_IDS), seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed + 3)

    def w(*shape):
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    out = {"fc.weight": w(H, H * n_ids), "hidden_norm.weight": np.ones(H, np.float32), "norm.weight": np.ones(H, np.float32)}
    out |= {f"aux_hidden_norms.{k}.weight": np.ones(H, np.float32) for k in range(n_ids)}
    for i in range(n_layers):
        p = f"layers.{i}."
        out |= {
            p + "self_attn.qkv_proj.weight": w((NH + 2 * NKV) * HD, H),
            p + "self_attn.o_proj.weight": w(H, NH * HD),
            p + "self_attn.g_proj.weight": w(NH, H),
            p + "self_attn.q_norm.weight": np.ones(HD, np.float32),
            p + "self_attn.k_norm.weight": np.ones(HD, np.float32),
            p + "mlp.gate_proj.weight": w(I, H),
            p + "mlp.up_proj.weight": w(I, H),
            p + "mlp.down_proj.weight": w(H, I),
            p + "input_layernorm.weight": np.ones(H, np.float32),
            p + "post_attention_layernorm.weight": np.ones(H, np.float32),
        }
    return out
