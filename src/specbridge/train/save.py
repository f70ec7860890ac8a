"""Write a trained drafter in a serving layout, and read it back.

Only the speculators layout is written here (what `speculators` training saves and vLLM
loads): `model.safetensors` with `fc.weight`, `layers.0.*`, `norm.weight`, `lm_head.weight`,
`d2t`, `t2d` (+ `embed_tokens.weight` on request), floats in bf16, and a speculators
`config.json` with `eagle_aux_hidden_state_layer_ids` at top level (input-of-layer ids).
Other layouts come from `specbridge convert`, which starts from this one.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from ..model.drafter import DrafterConfig, Eagle3Drafter

LAYOUTS = ("speculators",)
SPECULATORS_VERSION = "0.9.0"  # the config schema we write is the one 0.9.0 writes


def speculators_config(
    cfg: DrafterConfig,
    verifier_name_or_path: str,
    ttt_steps: int,
    verifier_architectures=("LlamaForCausalLM",),
    bos_token_id=None,
    eos_token_id=None,
    dtype: str = "bfloat16",
) -> dict:
    import transformers

    layer = {
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": bos_token_id,
        "eos_token_id": eos_token_id,
        "head_dim": cfg.head_dim,
        "hidden_act": "silu",
        "hidden_size": cfg.hidden_size,
        "initializer_range": 0.02,
        "intermediate_size": cfg.intermediate_size,
        "layer_types": ["full_attention"],
        "max_position_embeddings": cfg.max_position_embeddings,
        "mlp_bias": False,
        "model_type": "llama",
        "num_attention_heads": cfg.num_heads,
        "num_hidden_layers": 1,
        "num_key_value_heads": cfg.num_kv_heads,
        "pad_token_id": None,
        "pretraining_tp": 1,
        "rms_norm_eps": cfg.rms_norm_eps,
        "rope_parameters": {"rope_theta": cfg.rope_theta, "rope_type": "default"},
        "sliding_window": None,
        "tie_word_embeddings": False,
        "use_cache": True,
        "use_sliding_window": False,
        "vocab_size": cfg.vocab_size,
    }
    return {
        "architectures": ["Eagle3DraftModel"],
        "auto_map": {"": "config.Eagle3SpeculatorConfig"},
        "draft_vocab_size": cfg.draft_vocab_size,
        "dtype": dtype,
        "eagle_aux_hidden_state_layer_ids": list(cfg.aux_layer_ids),
        "embed_requires_grad": False,
        "fc_norm": False,
        "norm_before_fc": False,
        "norm_before_residual": cfg.norm_before_residual,
        "norm_output": False,
        "speculators_config": {
            "algorithm": "eagle3",
            "default_proposal_method": "greedy",
            "proposal_methods": [
                {"accept_tolerance": 0.0, "proposal_type": "greedy", "speculative_tokens": ttt_steps, "verifier_accept_k": 1}
            ],
            "verifier": {"architectures": list(verifier_architectures), "name_or_path": verifier_name_or_path},
        },
        "speculators_model_type": "eagle3",
        "speculators_version": SPECULATORS_VERSION,
        "target_hidden_size": cfg.target_hidden_size,
        "tie_word_embeddings": False,
        "transformer_layer_config": layer,
        "transformers_version": transformers.__version__,
    }


def save_drafter(
    model: Eagle3Drafter,
    out_dir: str | Path,
    layout: str = "speculators",
    *,
    verifier_name_or_path: str,
    ttt_steps: int,
    save_embeddings: bool = False,
    verifier_architectures=("LlamaForCausalLM",),
    bos_token_id=None,
    eos_token_id=None,
) -> Path:
    """Write model.safetensors + config.json for `layout`; returns the directory."""
    from safetensors.torch import save_file

    if layout not in LAYOUTS:
        raise ValueError(
            f"train writes only the {' / '.join(LAYOUTS)} layout, not {layout!r}; "
            "write speculators, then run `specbridge convert` to get another layout"
        )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tensors = {}
    for name, t in model.folded_state_dict().items():
        if name == "embed_tokens.weight" and not save_embeddings:
            continue
        if name in ("d2t", "t2d") and model.cfg.draft_vocab_size == model.cfg.vocab_size:
            continue  # like speculators: the buffers exist only for a reduced draft vocab
        t = t.detach().cpu()
        tensors[name] = t.to(torch.bfloat16) if t.is_floating_point() else t
    save_file({k: v.contiguous() for k, v in tensors.items()}, str(out / "model.safetensors"), metadata={"format": "pt"})
    cfg = speculators_config(model.cfg, verifier_name_or_path, ttt_steps, verifier_architectures, bos_token_id, eos_token_id)
    (out / "config.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
    return out


def load_drafter(path: str | Path, target_model=None, dtype: torch.dtype = torch.float32) -> Eagle3Drafter:
    """Build an Eagle3Drafter from a speculators-layout dir. If embed_tokens was not saved,
    copy it from `target_model` (it is the target's frozen table anyway)."""
    from safetensors.torch import load_file

    path = Path(path)
    c = json.loads((path / "config.json").read_text())
    layer = c["transformer_layer_config"]
    rope = layer.get("rope_parameters") or {}
    cfg = DrafterConfig(
        hidden_size=layer["hidden_size"],
        intermediate_size=layer["intermediate_size"],
        num_heads=layer["num_attention_heads"],
        num_kv_heads=layer.get("num_key_value_heads") or layer["num_attention_heads"],
        head_dim=layer.get("head_dim") or layer["hidden_size"] // layer["num_attention_heads"],
        vocab_size=layer["vocab_size"],
        draft_vocab_size=c.get("draft_vocab_size") or layer["vocab_size"],
        aux_layer_ids=list(c.get("eagle_aux_hidden_state_layer_ids") or []),
        rms_norm_eps=layer.get("rms_norm_eps", 1e-6),
        rope_theta=float(rope.get("rope_theta", layer.get("rope_theta", 10000.0))),
        max_position_embeddings=layer.get("max_position_embeddings", 2048),
        norm_before_residual=bool(c.get("norm_before_residual", False)),
        target_hidden_size=c.get("target_hidden_size"),
    )
    if not cfg.aux_layer_ids:
        raise ValueError(f"{path}: config has no eagle_aux_hidden_state_layer_ids")
    model = Eagle3Drafter(cfg)
    state = load_file(str(path / "model.safetensors"))
    if "embed_tokens.weight" not in state:
        if target_model is None:
            raise ValueError(f"{path} has no embed_tokens.weight; pass target_model to copy it from")
        state["embed_tokens.weight"] = target_model.get_input_embeddings().weight.detach()
    state.setdefault("fc_input_scale", torch.ones(cfg.aux_width))  # saved drafters are folded
    if "d2t" not in state:  # full-vocab drafter
        state["d2t"] = torch.zeros(cfg.draft_vocab_size, dtype=torch.long)
        state["t2d"] = torch.ones(cfg.vocab_size, dtype=torch.bool)
    model.load_state_dict({k: (v.to(dtype) if v.is_floating_point() else v) for k, v in state.items()})
    return model.to(dtype).eval()
