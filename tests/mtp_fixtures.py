"""Tiny targets that carry a NextN (MTP) layer, for `check` of a target's head and SGLang's NEXTN conformance: GLM-4.5 (zai-org/GLM-4.5:
`model.layers.{num_hidden_layers}.{enorm,hnorm,eh_proj,shared_head.norm}` beside a full MoE decoder layer) and
DeepSeek-V3 (the same with MLA attention, plus copies of the embedding and head inside the MTP layer). Key names are
transformers' (Glm4MoeForCausalLM, DeepseekV3ForCausalLM); numpy only."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from conftest import write_checkpoint

H, NH, NKV, HD, I, MI, V, E = 64, 2, 2, 32, 128, 32, 512, 4
Q_LORA, KV_LORA, NOPE, ROPE, VHD = 32, 32, 16, 16, 16  # DeepSeek-V3's MLA, in miniature


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
        "partial_rotary_factor": 0.5,
        "intermediate_size": I,
        "moe_intermediate_size": MI,
        "n_routed_experts": E,
        "n_shared_experts": 1,
        "num_experts_per_tok": 2,
        "n_group": 1,
        "topk_group": 1,
        "norm_topk_prob": True,
        "routed_scaling_factor": 1.0,
        "first_k_dense_replace": 1,
        "attention_bias": True,
        "use_qk_norm": False,
        "hidden_act": "silu",
        "vocab_size": V,
        "rms_norm_eps": 1e-5,
        "rope_theta": 10000.0,
        "max_position_embeddings": 256,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    }
    return cfg | over


def deepseek_config(n_layers: int = 2, mtp: int = 1, **over) -> dict:
    cfg = glm_config(n_layers, mtp, architectures=["DeepseekV3ForCausalLM"], model_type="deepseek_v3", attention_bias=False)
    for k in ("head_dim", "partial_rotary_factor", "use_qk_norm"):
        del cfg[k]
    cfg |= {
        "q_lora_rank": Q_LORA,
        "kv_lora_rank": KV_LORA,
        "qk_nope_head_dim": NOPE,
        "qk_rope_head_dim": ROPE,
        "v_head_dim": VHD,
        "topk_method": "noaux_tc",
        "scoring_func": "sigmoid",
        "moe_layer_freq": 1,
        # YaRN as DeepSeek-V3 ships it (factor 40 over 4096), scaled down; SGLang's CPU rope factory requires rope_scaling
        "rope_scaling": {
            "type": "yarn",
            "factor": 4.0,
            "original_max_position_embeddings": 64,
            "beta_fast": 32,
            "beta_slow": 1,
            "mscale": 1.0,
            "mscale_all_dim": 1.0,
        },
    }
    return cfg | over


def _attention(prefix: str, config: dict, w) -> dict:
    if config["model_type"] == "deepseek_v3":
        a = prefix + "self_attn."
        return {
            f"{a}q_a_proj.weight": w(Q_LORA, H),
            f"{a}q_a_layernorm.weight": np.ones(Q_LORA, np.float32),
            f"{a}q_b_proj.weight": w(NH * (NOPE + ROPE), Q_LORA),
            f"{a}kv_a_proj_with_mqa.weight": w(KV_LORA + ROPE, H),
            f"{a}kv_a_layernorm.weight": np.ones(KV_LORA, np.float32),
            f"{a}kv_b_proj.weight": w(NH * (NOPE + VHD), KV_LORA),
            f"{a}o_proj.weight": w(H, NH * VHD),
        }
    out = {}
    for p, rows in (("q", NH * HD), ("k", NKV * HD), ("v", NKV * HD)):
        out[f"{prefix}self_attn.{p}_proj.weight"] = w(rows, H)
        if config.get("attention_bias"):
            out[f"{prefix}self_attn.{p}_proj.bias"] = w(rows)
    return out | {f"{prefix}self_attn.o_proj.weight": w(H, NH * HD)}


def decoder(prefix: str, moe: bool, config: dict, w) -> dict:
    out = {f"{prefix}input_layernorm.weight": np.ones(H, np.float32), f"{prefix}post_attention_layernorm.weight": np.ones(H, np.float32)}
    out |= _attention(prefix, config, w)
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


def mtp_layer(m: int, config: dict, w, prefix: str | None = None, copies: bool | None = None) -> dict:
    """MTP layer `m` as the published checkpoints write it; `copies`: the embed_tokens / shared_head.head copies
    DeepSeek-V3 ships in it (default: DeepSeek-V3 only); `prefix` replaces `model.layers.{m}.` (a renamed layout)."""
    p = prefix or f"model.layers.{m}."
    out = decoder(p, True, config, w) | {f"{p}{part}.weight": np.ones(H, np.float32) for part in ("enorm", "hnorm", "shared_head.norm")}
    out[f"{p}eh_proj.weight"] = w(H, 2 * H)
    if copies if copies is not None else config["model_type"] == "deepseek_v3":
        out |= {f"{p}embed_tokens.weight": w(V, H), f"{p}shared_head.head.weight": w(V, H)}
    return out


def target_tensors(
    config: dict, mtp: bool | tuple[int, ...] = True, mtp_prefix: str | None = None, seed: int = 0, copies: bool | None = None
) -> dict:
    """A whole target: embedding, dense layer 0, MoE layers, norm, head, and its MTP layers after the last: every one
    the config announces (`mtp` True), none (False), or the numbers given (a head missing some of its layers)."""
    rng = np.random.default_rng(seed)

    def w(*shape):
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    n = config["num_hidden_layers"]
    out = {"model.embed_tokens.weight": w(V, H), "model.norm.weight": np.ones(H, np.float32), "lm_head.weight": w(V, H)}
    for i in range(n):
        out |= decoder(f"model.layers.{i}.", i >= config.get("first_k_dense_replace", 0), config, w)
    layers = range(n, n + config.get("num_nextn_predict_layers", 0)) if mtp is True else (mtp or ())
    for m in layers:
        out |= mtp_layer(m, config, w, mtp_prefix, copies)
    return out


def write_target(dir: Path, config: dict, tensors: dict | None = None, **kw) -> Path:
    """The target as a directory: `tensors`, or target_tensors(config, **kw)."""
    return write_checkpoint(dir, config, tensors if tensors is not None else target_tensors(config, **kw))


def write_sharded_target(dir: Path, config: dict, tensors: dict | None = None, **kw) -> Path:
    """The target in two shards with an index, as published targets are: the decoder in one, the MTP layer(s)
    (`model.layers.{num_hidden_layers}.*` and after) in the other."""
    import json

    from safetensors.numpy import save_file

    ts = tensors if tensors is not None else target_tensors(config, **kw)
    n = config["num_hidden_layers"]
    head = {k for k in ts if k.startswith("model.layers.") and int(k.split(".")[2]) >= n}
    shards = {"model-00001-of-00002.safetensors": {k: v for k, v in ts.items() if k not in head}}
    shards["model-00002-of-00002.safetensors"] = {k: ts[k] for k in sorted(head)}
    dir.mkdir(parents=True, exist_ok=True)
    (dir / "config.json").write_text(json.dumps(config, indent=2))
    for name, part in shards.items():
        save_file(part, str(dir / name))
    weight_map = {k: name for name, part in shards.items() for k in part}
    (dir / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    return dir


def without(config: dict, drop) -> dict:
    """The whole target with the MTP layer's tensors that `drop(name)` selects left out (a head missing its experts,
    its attention, half a fused projection)."""
    n = config["num_hidden_layers"]
    return {k: v for k, v in target_tensors(config).items() if not (k.startswith(f"model.layers.{n}.") and drop(k))}
