"""Read the target (verifier) model's config: a model directory, its config.json, or a Hugging Face
cache directory (`models--org--name/snapshots/<rev>/`). Only what compatibility rules need."""

from __future__ import annotations

import os
from pathlib import Path

from ..record import field, record
from .assemble import read_json
from .errors import CheckpointError
from .hubref import HubRef, hub_ref_or_none, missing_path_line

# configs that wrap a text model (VL models, Kimi-K2.5 around DeepSeek-V3)
TEXT_KEYS = ("text_config", "language_config", "llm_config")


@record(frozen=False)
class TargetInfo:
    path: Path
    config: dict
    text: dict  # the text decoder's config (== config for plain LMs)
    architecture: str | None
    model_type: str | None
    text_model_type: str | None
    hidden_size: int | None
    num_layers: int | None
    vocab_size: int | None
    max_position_embeddings: int | None
    rope: dict = field(default_factory=dict)
    dtype: str | None = None
    quantization: dict | None = None
    tie_word_embeddings: bool = False
    bos_token_id: int | None = None
    eos_token_id: int | list | None = None
    tokenizer_sha256: str | None = None
    weights_dir: Path | None = None
    hub: HubRef | None = None  # when the target is a Hub id


def _find_config(p: Path) -> Path:
    if p.is_file():
        if p.name.endswith(".json"):
            return p
        raise CheckpointError(p, "target must be a model directory or its config.json")
    if (p / "config.json").is_file():
        return p / "config.json"
    snaps = p / "snapshots"
    if snaps.is_dir():  # a Hugging Face cache directory: newest snapshot with a config
        cands = sorted((s for s in snaps.iterdir() if (s / "config.json").is_file()), key=lambda s: s.stat().st_mtime)
        if cands:
            return cands[-1] / "config.json"
    raise CheckpointError(p, "no config.json for the target (give the model directory, its config.json or a HF cache dir)")


def rope_of(cfg: dict) -> dict:
    """Effective RoPE settings, whichever transformers generation wrote them."""
    params = cfg.get("rope_parameters") if isinstance(cfg.get("rope_parameters"), dict) else {}
    scaling = cfg.get("rope_scaling") if isinstance(cfg.get("rope_scaling"), dict) else {}
    theta = params.get("rope_theta", cfg.get("rope_theta"))
    rtype = params.get("rope_type") or scaling.get("rope_type") or scaling.get("type") or "default"
    factor = params.get("factor", scaling.get("factor"))
    return {"rope_theta": theta, "rope_type": rtype, "factor": factor}


def _int(v):
    return v if type(v) is int else None


def open_target(path: str | os.PathLike) -> TargetInfo:
    p = Path(path)
    hub = None
    if p.exists():
        cfg_path = _find_config(p)
        tok: Path | None = cfg_path.parent / "tokenizer.json"
        has_weights = any(cfg_path.parent.glob("*.safetensors")) or (cfg_path.parent / "model.safetensors.index.json").is_file()
        weights_dir = cfg_path.parent if has_weights else None
        where = cfg_path.parent
    else:  # a Hub id: only config.json is fetched; weights are read by range if a rule needs them
        ref = hub_ref_or_none(os.fspath(path))
        if ref is None:
            raise CheckpointError(os.fspath(path), f"target: {missing_path_line(os.fspath(path))}")
        from .hub import hub_target_config  # here: a local target (and a check without one) needs no Hub client

        cfg_path, tok, hub_weights, hub = hub_target_config(ref)
        weights_dir = Path(hub_weights) if hub_weights else None
        where = Path(hub.repo_id)
    cfg = read_json(cfg_path)
    text = next((cfg[k] for k in TEXT_KEYS if isinstance(cfg.get(k), dict)), cfg)
    archs = cfg.get("architectures") if isinstance(cfg.get("architectures"), list) else []
    import hashlib  # here: loading OpenSSL costs more than a small target's whole config read

    tok_sha = hashlib.sha256(tok.read_bytes()).hexdigest() if tok and tok.is_file() and tok.stat().st_size < 256 * 2**20 else None

    def get(k, default=None):
        v = text.get(k, cfg.get(k, default))
        return default if v is None else v

    return TargetInfo(
        path=where,
        config=cfg,
        text=text,
        architecture=archs[0] if archs and isinstance(archs[0], str) else None,
        model_type=cfg.get("model_type"),
        text_model_type=text.get("model_type"),
        hidden_size=_int(get("hidden_size")),
        num_layers=_int(get("num_hidden_layers")),
        vocab_size=_int(get("vocab_size")),
        max_position_embeddings=_int(get("max_position_embeddings")),
        rope=rope_of(text),
        dtype=get("torch_dtype") or get("dtype"),
        quantization=cfg.get("quantization_config") or text.get("quantization_config"),
        tie_word_embeddings=bool(get("tie_word_embeddings", False)),
        bos_token_id=_int(get("bos_token_id")),
        eos_token_id=get("eos_token_id"),
        tokenizer_sha256=tok_sha,
        weights_dir=weights_dir,
        hub=hub,
    )
