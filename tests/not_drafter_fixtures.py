"""Checkpoints that are no drafter, at their published shapes, header-only (sparse files: nothing but the headers is
written): a timm ViT-B/16, a PEFT LoRA adapter for Llama-3-8B (as PEFT saves it, and the same weights beside a
config.json), Mamba-130m (transformers' MambaForCausalLM names) and reward models (a Llama-3.1-8B sequence classifier
with a `score` head, and TRL's value head on a causal LM). Each is refused with one line naming what it is
(tests/test_not_drafters.py). Key lists: the producers' module names (timm vision_transformer.py, peft LoraModel,
transformers MambaMixer / LlamaForSequenceClassification, trl AutoModelForCausalLMWithValueHead)."""

from __future__ import annotations

import json
from pathlib import Path

from specbridge.checkpoint.write import write_header_only


def _write(d: Path, tensors: list[tuple[str, str, list[int]]], config: dict | None, weights: str = "model.safetensors") -> Path:
    d.mkdir(parents=True)
    if config is not None:
        (d / "config.json").write_text(json.dumps(config, indent=2))
    write_header_only(d / weights, tensors)
    return d


def vit(d: Path) -> Path:
    """timm vit_base_patch16_224: patch_embed, cls_token, pos_embed, 12 blocks.N.{norm1,attn.qkv,attn.proj,norm2,mlp.fc1,
    mlp.fc2}, norm, head (timm saves F32 and a config.json without `architectures`)."""
    D, MLP = 768, 3072
    t = [("cls_token", "F32", [1, 1, D]), ("pos_embed", "F32", [1, 197, D])]
    t += [("patch_embed.proj.weight", "F32", [D, 3, 16, 16]), ("patch_embed.proj.bias", "F32", [D])]
    for i in range(12):
        p = f"blocks.{i}."
        t += [(p + "norm1.weight", "F32", [D]), (p + "norm1.bias", "F32", [D])]
        t += [(p + "attn.qkv.weight", "F32", [3 * D, D]), (p + "attn.qkv.bias", "F32", [3 * D])]
        t += [(p + "attn.proj.weight", "F32", [D, D]), (p + "attn.proj.bias", "F32", [D])]
        t += [(p + "norm2.weight", "F32", [D]), (p + "norm2.bias", "F32", [D])]
        t += [(p + "mlp.fc1.weight", "F32", [MLP, D]), (p + "mlp.fc1.bias", "F32", [MLP])]
        t += [(p + "mlp.fc2.weight", "F32", [D, MLP]), (p + "mlp.fc2.bias", "F32", [D])]
    t += [("norm.weight", "F32", [D]), ("norm.bias", "F32", [D]), ("head.weight", "F32", [1000, D]), ("head.bias", "F32", [1000])]
    cfg = {"architecture": "vit_base_patch16_224", "num_classes": 1000, "num_features": D, "global_pool": "token"}
    return _write(d, t, cfg)


LORA_CONFIG = {
    "peft_type": "LORA",
    "task_type": "CAUSAL_LM",
    "base_model_name_or_path": "meta-llama/Meta-Llama-3-8B",
    "r": 16,
    "lora_alpha": 32,
    "lora_dropout": 0.05,
    "target_modules": ["q_proj", "v_proj"],
}


def _lora_tensors() -> list[tuple[str, str, list[int]]]:
    t = []
    for i in range(32):
        p = f"base_model.model.model.layers.{i}.self_attn."
        t += [(p + "q_proj.lora_A.weight", "BF16", [16, 4096]), (p + "q_proj.lora_B.weight", "BF16", [4096, 16])]
        t += [(p + "v_proj.lora_A.weight", "BF16", [16, 4096]), (p + "v_proj.lora_B.weight", "BF16", [1024, 16])]
    return t


def lora_adapter(d: Path) -> Path:
    """What PEFT's save_pretrained writes: adapter_config.json and adapter_model.safetensors (no config.json)."""
    out = _write(d, _lora_tensors(), None, "adapter_model.safetensors")
    (out / "adapter_config.json").write_text(json.dumps(LORA_CONFIG, indent=2))
    return out


def lora_with_config(d: Path) -> Path:
    """The adapter's weights beside the base model's config.json (a repository that ships both)."""
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32}
    return _write(d, _lora_tensors(), cfg)


def mamba(d: Path) -> Path:
    """state-spaces/mamba-130m-hf: backbone.embeddings, 24 backbone.layers.N.{norm, mixer.{A_log, D, conv1d, in_proj,
    x_proj, dt_proj, out_proj}}, backbone.norm_f (the head is tied: not saved)."""
    D, E, N, R, K, V = 768, 1536, 16, 48, 4, 50280
    t = [("backbone.embeddings.weight", "F32", [V, D])]
    for i in range(24):
        p = f"backbone.layers.{i}."
        t += [(p + "norm.weight", "F32", [D]), (p + "mixer.A_log", "F32", [E, N]), (p + "mixer.D", "F32", [E])]
        t += [(p + "mixer.conv1d.weight", "F32", [E, 1, K]), (p + "mixer.conv1d.bias", "F32", [E])]
        t += [(p + "mixer.in_proj.weight", "F32", [2 * E, D]), (p + "mixer.x_proj.weight", "F32", [R + 2 * N, D])]
        t += [
            (p + "mixer.dt_proj.weight", "F32", [E, R]),
            (p + "mixer.dt_proj.bias", "F32", [E]),
            (p + "mixer.out_proj.weight", "F32", [D, E]),
        ]
    t += [("backbone.norm_f.weight", "F32", [D])]
    cfg = {"architectures": ["MambaForCausalLM"], "model_type": "mamba", "hidden_size": D, "state_size": N}
    cfg |= {"num_hidden_layers": 24, "vocab_size": V, "expand": 2, "conv_kernel": K, "time_step_rank": R, "tie_word_embeddings": True}
    return _write(d, t, cfg)


def _llama(H: int, I: int, KV: int, V: int, layers: int, dtype: str = "BF16") -> list[tuple[str, str, list[int]]]:
    t = [("model.embed_tokens.weight", dtype, [V, H]), ("model.norm.weight", dtype, [H])]
    for i in range(layers):
        p = f"model.layers.{i}."
        t += [(p + "input_layernorm.weight", dtype, [H]), (p + "post_attention_layernorm.weight", dtype, [H])]
        t += [(p + "self_attn.q_proj.weight", dtype, [H, H]), (p + "self_attn.o_proj.weight", dtype, [H, H])]
        t += [(p + "self_attn.k_proj.weight", dtype, [KV, H]), (p + "self_attn.v_proj.weight", dtype, [KV, H])]
        t += [
            (p + "mlp.gate_proj.weight", dtype, [I, H]),
            (p + "mlp.up_proj.weight", dtype, [I, H]),
            (p + "mlp.down_proj.weight", dtype, [H, I]),
        ]
    return t


def reward_model(d: Path) -> Path:
    """A Llama-3.1-8B reward model (Skywork-Reward-Llama-3.1-8B's geometry): LlamaForSequenceClassification, the decoder
    stack and a `score` head of one row in place of lm_head."""
    H, I, KV, V = 4096, 14336, 1024, 128256
    t = _llama(H, I, KV, V, 32) + [("score.weight", "BF16", [1, H])]
    cfg = {"architectures": ["LlamaForSequenceClassification"], "model_type": "llama", "hidden_size": H, "intermediate_size": I}
    cfg |= {"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": V, "num_labels": 1}
    return _write(d, t, cfg)


def value_head(d: Path) -> Path:
    """TRL's AutoModelForCausalLMWithValueHead saved whole: a causal LM (the tiny target's geometry) whose state dict
    carries v_head.summary.{weight, bias} beside lm_head; its config is the causal LM's."""
    H, I, V = 64, 128, 512
    t = _llama(H, I, H, V, 2, "F32") + [
        ("lm_head.weight", "F32", [V, H]),
        ("v_head.summary.weight", "F32", [1, H]),
        ("v_head.summary.bias", "F32", [1]),
    ]
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": H, "intermediate_size": I}
    cfg |= {"num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 32, "vocab_size": V}
    return _write(d, t, cfg)


CASES = {
    "timm-vit": (vit, "a vision model"),
    "lora-adapter": (lora_adapter, "a LORA adapter"),
    "lora-with-config": (lora_with_config, "a LoRA adapter"),
    "mamba": (mamba, "a state-space (Mamba) model"),
    "reward-model": (reward_model, "a reward / value model"),
    "value-head": (value_head, "a reward / value model"),
}
