"""The one canonical drafter description every layout maps to and from.

Geometry comes from two witnesses — the tensors and the config — and both are kept, so a checker can
say when they disagree instead of silently trusting one.
"""

from __future__ import annotations

import re
from collections import Counter

from ..checkpoint.reader import Checkpoint
from ..checkpoint.safetensors import FLOAT_DTYPES, TensorInfo
from ..record import field, record
from .table import INPUT_OF_LAYER, LAYOUTS, OUTPUT_OF_LAYER, Layout, to_canonical

LAYER_RE = re.compile(r"^layers\.(\d+)\.")


def flat_config(config: dict) -> dict:
    """One flat dict of the draft's fields, whatever the producer's config style.

    speculators keeps geometry in `transformer_layer_config` and EAGLE-3 fields at the top level;
    every other producer writes a flat HF config. Top-level values win over nested ones.
    """
    if isinstance(config.get("transformer_layer_config"), dict):
        flat = dict(config["transformer_layer_config"])
        for k, v in config.items():
            if k != "transformer_layer_config" and (v is not None or k not in flat):
                flat[k] = v
        return flat
    return dict(config)


def config_style(config: dict) -> str:
    archs = config.get("architectures") or []
    arch = archs[0] if isinstance(archs, list) and archs and isinstance(archs[0], str) else ""
    if "speculators_config" in config or "transformer_layer_config" in config:
        return "speculators"
    if arch == "LlamaEagle3DraftModel":
        return "nemo"
    if "eagle3" in arch.lower() or "Eagle3" in arch:
        return "flat-eagle3"
    if "draft_vocab_size" in config:
        return "research"
    return "unknown"


def _int(v) -> int | None:
    return v if type(v) is int else None


@record(frozen=False)
class Drafter:
    """Canonical description of one EAGLE-3 drafter checkpoint."""

    layout: str
    evidence: list[str]
    layout_candidates: list[str]  # every layout the evidence fits: [layout], or more where it is ambiguous
    config_style: str
    key_style: str  # "layers" | "midlayer" | "model.layers" | "other"
    architecture: str | None
    tensors: dict[str, TensorInfo]  # canonical name -> info
    source_names: dict[str, str]  # canonical name -> name in the checkpoint
    unrecognised: list[str]  # checkpoint names that map to no canonical drafter tensor
    # geometry from tensors
    hidden_size: int | None = None  # H
    fc_in: int | None = None  # k * Ht
    layers_in_keys: int = 0
    q_out: int | None = None
    kv_out: int | None = None
    intermediate_from_keys: int | None = None
    draft_vocab_from_keys: int | None = None  # lm_head rows
    vocab_from_keys: int | None = None  # embed rows / t2d length
    dtype: str | None = None
    dtypes: dict[str, int] = field(default_factory=dict)
    # geometry from config
    cfg: dict = field(default_factory=dict)  # flat view
    cfg_hidden_size: int | None = None
    cfg_target_hidden_size: int | None = None
    cfg_layers: int | None = None
    num_heads: int | None = None
    num_kv_heads: int | None = None
    head_dim: int | None = None
    head_dim_explicit: bool = False
    intermediate_size: int | None = None
    vocab_size: int | None = None
    draft_vocab_size: int | None = None
    tie_word_embeddings: bool = False
    aux_ids: list[int] | None = None
    aux_ids_where: str | None = None
    aux_convention: str | None = None
    aux_convention_evidence: str | None = None

    @property
    def target_hidden(self) -> int | None:
        return self.cfg_target_hidden_size or self.hidden_size or self.cfg_hidden_size

    @property
    def num_aux(self) -> int | None:
        ht = self.target_hidden
        if self.fc_in and ht and self.fc_in % ht == 0:
            return self.fc_in // ht
        return None

    def has(self, canonical: str) -> bool:
        return canonical in self.tensors

    def geometry(self) -> dict:
        return {
            "hidden_size": self.hidden_size or self.cfg_hidden_size,
            "target_hidden_size": self.target_hidden,
            "num_aux_hidden_states": self.num_aux,
            "fc": [self.hidden_size, self.fc_in] if self.fc_in else None,
            "layers_in_keys": self.layers_in_keys,
            "layers_in_config": self.cfg_layers,
            "num_attention_heads": self.num_heads,
            "num_key_value_heads": self.num_kv_heads,
            "head_dim": self.head_dim,
            "intermediate_size": self.intermediate_size or self.intermediate_from_keys,
            "vocab_size": self.vocab_size or self.vocab_from_keys,
            "draft_vocab_size": self.draft_vocab_size or self.draft_vocab_from_keys,
            "d2t": self.has("d2t"),
            "t2d": self.has("t2d"),
            "embed_tokens": self.has("embed_tokens.weight"),
            "lm_head": self.has("lm_head.weight"),
            "tie_word_embeddings": self.tie_word_embeddings,
            "dtype": self.dtype,
            "aux_layer_ids": self.aux_ids,
            "aux_layer_ids_where": self.aux_ids_where,
            "aux_convention": self.aux_convention,
        }


CANONICAL_RE = re.compile(
    r"^(embed_tokens\.weight|fc\.weight|fc\.bias|norm\.weight|lm_head\.weight|d2t|t2d|input_norm\.weight"
    r"|fc_norm\.\d+\.weight|layers\.\d+\.(self_attn\.(q|k|v|o)_proj\.(weight|bias)|self_attn\.(q|k)_norm\.weight"
    r"|mlp\.(gate|up|down)_proj\.weight|(input_layernorm|hidden_norm|post_attention_layernorm)\.weight))$"
)


def _key_style(names: list[str]) -> str:
    if any(n.startswith("midlayer.") for n in names):
        return "midlayer"
    if any(n.startswith("model.layers.") for n in names):
        return "model.layers"
    if any(LAYER_RE.match(n) for n in names):
        return "layers"
    return "other"


def detect_layout(config: dict, names: list[str]) -> tuple[Layout, list[str], list[str]]:
    """Name the layout that produced this checkpoint, with the evidence for it, and every layout the
    evidence fits (more than one: ambiguous, said by inspect and check; the first is the one read)."""
    style = config_style(config)
    keys = _key_style(names)
    archs = config.get("architectures")
    ev = [f"config: {style} style (architectures={archs})", f"keys: decoder under {keys}.*"]
    candidates: list[str] = []
    if style == "speculators":
        name = "speculators"
    elif style == "nemo" or keys == "model.layers":
        name = "nemo"
    elif style == "research":
        name = "eagle" if keys != "layers" else "vllm"
        if keys == "layers":
            ev.append("research-style config with layers.N keys: vLLM-style")
    elif keys == "midlayer":
        name, candidates = _midlayer_producer(config, names, ev)
    else:
        name = "vllm"
    return LAYOUTS[name], ev, candidates or [name]


def _midlayer_producer(config: dict, names: list[str], ev: list[str]) -> tuple[str, list[str]]:
    """midlayer.* with a flat config: ModelOpt (trtllm) or an SGLang-style export (SpecForge, TorchSpec).
    Both load the same (same names, output-of-layer aux ids); where the evidence fits both, both are named."""
    ec = config.get("eagle_config") if isinstance(config.get("eagle_config"), dict) else {}
    modelopt = any(k in ec for k in ("next_layer_regular", "use_input_layernorm_in_first_layer", "parallel_draft_step"))
    # TorchSpec's native export is SGLang-style midlayer.*: the draft's whole state dict (embed_tokens included),
    # d2t and t2d together only with --prune-vocab, and _torchspec_version in config.json
    # (lightseekorg/TorchSpec@0db7eac tools/convert_to_hf.py _save_without_vocab_pruning / _save_with_vocab_pruning)
    torchspec = "_torchspec_version" in config
    if torchspec and modelopt:
        ev.append(
            "ambiguous: ModelOpt-style eagle_config keys (trtllm) and TorchSpec's _torchspec_version (sglang) both present; "
            "read as trtllm, and both load the same (same tensor names, output-of-layer aux ids)"
        )
        return "trtllm", ["trtllm", "sglang"]
    if torchspec:
        ev.append("TorchSpec export (_torchspec_version in config.json): SGLang-style, whether or not it has t2d")
        return "sglang", []
    if modelopt:
        ev.append("ModelOpt-style eagle_config keys")
        return "trtllm", []
    if "t2d" in names:
        return "sglang", []
    if "d2t" not in names and "embed_tokens.weight" in names:
        ev.append(
            "ambiguous: midlayer.* with embed_tokens, no vocab map and no producer mark fits a ModelOpt export (trtllm: "
            "no t2d) and a TorchSpec export without --prune-vocab whose config has no _torchspec_version (sglang); read as "
            "trtllm, and both load the same (same tensor names, output-of-layer aux ids)"
        )
        return "trtllm", ["trtllm", "sglang"]
    ev.append("no t2d tensor (ModelOpt does not export it)")
    return "trtllm", []


def layout_label(d: Drafter) -> str:
    """'trtllm', or 'trtllm (ambiguous: trtllm or sglang)' where the evidence fits more than one producer."""
    if len(d.layout_candidates) < 2:
        return d.layout
    return f"{d.layout} (ambiguous: {' or '.join(d.layout_candidates)})"


def _aux_ids(config: dict) -> tuple[list[int] | None, str | None]:
    top = config.get("eagle_aux_hidden_state_layer_ids")
    if isinstance(top, list) and all(type(i) is int for i in top):
        return list(top), "top-level"
    ec = config.get("eagle_config")
    if isinstance(ec, dict):
        ids = ec.get("eagle_aux_hidden_state_layer_ids")
        if isinstance(ids, list) and all(type(i) is int for i in ids):
            return list(ids), "eagle_config"
    return None, None


def describe(ckpt: Checkpoint) -> Drafter:
    config = ckpt.config or {}
    names = list(ckpt.tensors)
    layout, evidence, candidates = detect_layout(config, names)
    tensors: dict[str, TensorInfo] = {}
    source: dict[str, str] = {}
    unrecognised: list[str] = []
    for n, info in ckpt.tensors.items():
        c = to_canonical(n, layout)
        if c.startswith("midlayer."):  # midlayer keys under a layout that does not expect them
            c = "layers.0." + c[len("midlayer.") :]
        if c.startswith("model.") and not CANONICAL_RE.match(c):
            c2 = c[len("model.") :]
            c = c2 if CANONICAL_RE.match(c2) else c
        if CANONICAL_RE.match(c) and c not in tensors:
            tensors[c] = info
            source[c] = n
        else:
            unrecognised.append(n)

    flat = flat_config(config)
    archs = config.get("architectures")
    d = Drafter(
        layout=layout.name,
        evidence=evidence,
        layout_candidates=candidates,
        config_style=config_style(config),
        key_style=_key_style(names),
        architecture=archs[0] if isinstance(archs, list) and archs and isinstance(archs[0], str) else None,
        tensors=tensors,
        source_names=source,
        unrecognised=unrecognised,
        cfg=flat,
    )

    # from tensors
    def shape(n):
        return tensors[n].shape if n in tensors else None

    if shape("fc.weight") and len(shape("fc.weight")) == 2:
        d.hidden_size, d.fc_in = shape("fc.weight")
    elif shape("norm.weight"):
        d.hidden_size = shape("norm.weight")[0]
    d.layers_in_keys = len({int(m.group(1)) for n in tensors if (m := LAYER_RE.match(n))})
    if shape("layers.0.self_attn.q_proj.weight"):
        d.q_out = shape("layers.0.self_attn.q_proj.weight")[0]
    if shape("layers.0.self_attn.k_proj.weight"):
        d.kv_out = shape("layers.0.self_attn.k_proj.weight")[0]
    if shape("layers.0.mlp.gate_proj.weight"):
        d.intermediate_from_keys = shape("layers.0.mlp.gate_proj.weight")[0]
    if shape("lm_head.weight"):
        d.draft_vocab_from_keys = shape("lm_head.weight")[0]
    if shape("embed_tokens.weight"):
        d.vocab_from_keys = shape("embed_tokens.weight")[0]
    elif shape("t2d"):
        d.vocab_from_keys = shape("t2d")[0]
    floats = Counter(t.dtype for t in tensors.values() if t.dtype in FLOAT_DTYPES)
    d.dtypes = dict(Counter(t.dtype for t in ckpt.tensors.values()))
    d.dtype = max(floats, key=floats.__getitem__) if floats else None  # most_common(1)'s pick, without importing heapq

    # from config
    d.cfg_hidden_size = _int(flat.get("hidden_size"))
    d.cfg_target_hidden_size = _int(flat.get("target_hidden_size"))
    d.cfg_layers = _int(flat.get("num_hidden_layers"))
    d.num_heads = _int(flat.get("num_attention_heads"))
    d.num_kv_heads = _int(flat.get("num_key_value_heads")) or d.num_heads
    d.head_dim_explicit = _int(flat.get("head_dim")) is not None
    h = d.cfg_hidden_size or d.hidden_size
    d.head_dim = _int(flat.get("head_dim")) or (h // d.num_heads if h and d.num_heads else None)
    d.intermediate_size = _int(flat.get("intermediate_size"))
    d.vocab_size = _int(flat.get("vocab_size"))
    d.draft_vocab_size = _int(flat.get("draft_vocab_size"))
    d.tie_word_embeddings = bool(flat.get("tie_word_embeddings", False))
    d.aux_ids, d.aux_ids_where = _aux_ids(config)
    if d.aux_ids is None and isinstance(config.get("transformer_layer_config"), dict):
        d.aux_ids, d.aux_ids_where = _aux_ids(config["transformer_layer_config"])
    # aux convention: the producer's, unless the ids themselves say otherwise
    d.aux_convention = layout.aux_convention
    d.aux_convention_evidence = f"layout {layout.name} uses {layout.aux_convention} ids"
    return d


__all__ = ["Drafter", "describe", "detect_layout", "layout_label", "flat_config", "config_style", "INPUT_OF_LAYER", "OUTPUT_OF_LAYER"]
