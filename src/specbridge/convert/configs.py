"""config.json for each layout, written from one canonical description of the drafter.

Every EAGLE-3 field whose default differs between producers and engines (norm_before_residual,
draft_vocab_size, target_hidden_size, aux ids and their numbering) is written explicitly, so the
next reader never falls back to its own default.
"""

from __future__ import annotations

from ..layouts.canonical import Drafter
from ..layouts.table import Layout
from ..record import field, record

LLAMA_KEYS = (
    "attention_bias",
    "attention_dropout",
    "bos_token_id",
    "eos_token_id",
    "pad_token_id",
    "head_dim",
    "hidden_act",
    "hidden_size",
    "initializer_range",
    "intermediate_size",
    "max_position_embeddings",
    "mlp_bias",
    "model_type",
    "num_attention_heads",
    "num_hidden_layers",
    "num_key_value_heads",
    "pretraining_tp",
    "rms_norm_eps",
    "rope_parameters",
    "rope_scaling",
    "rope_theta",
    "tie_word_embeddings",
    "use_cache",
    "vocab_size",
    "layer_types",
    "sliding_window",
    "use_sliding_window",
)
# What a layout's config cannot express (verifier, aux layers in research/NeMo configs) is kept here,
# so conversions round-trip without loss. Engines read configs into HF config objects and ignore it.
PROVENANCE = "specbridge_provenance"
DTYPE_NAMES = {"BF16": "bfloat16", "F16": "float16", "F32": "float32", "F64": "float64"}
# producers' defaults when the config does not say (speculators 0.9.0 `models/eagle3/config.py`; vLLM 0.32
# `transformers_utils/configs/eagle.py`)
NBR_DEFAULT = {"speculators": True}  # everyone else trains with the residual taken before hidden_norm


@record(frozen=False)
class Canon:
    """The drafter's config facts, independent of any layout."""

    llama: dict  # plain decoder-layer fields (hidden_size, heads, rope, …)
    draft_vocab_size: int | None
    target_hidden_size: int | None
    boundaries: list[int] | None  # aux layers as physical boundaries (input of target layer b)
    boundaries_note: str
    norm_before_residual: bool
    norm_before_residual_note: str
    norm_before_fc: bool = False
    fc_norm: bool = False
    norm_output: bool = False
    bias: bool = False
    dtype: str | None = None
    verifier: dict = field(default_factory=dict)
    speculative_tokens: int = 3
    quantization_config: dict | None = None
    target_hidden_known: int | None = None  # the target's hidden size however learned (equal to hidden_size included)


def target_hidden_of(d: Drafter, n_aux: int | None, target_hidden_size: int | None) -> tuple[int | None, str]:
    """The target hidden size the drafter's fc was built for, and where it was read: the config's own value, else
    the fc input width (n_aux × target_hidden_size) over the recorded aux layer count, else over the --target's
    hidden size when it divides it, else over 3 (the producers' default). (None, "") when nothing says."""
    if d.cfg_target_hidden_size:
        return d.cfg_target_hidden_size, "from the config"
    if d.fc_in and n_aux and d.fc_in % n_aux == 0:
        return d.fc_in // n_aux, f"fc input {d.fc_in} / {n_aux} aux layers"
    if d.fc_in and target_hidden_size and d.fc_in % target_hidden_size == 0:
        return target_hidden_size, f"the target's hidden_size; fc input {d.fc_in} = {d.fc_in // target_hidden_size} × it"
    if d.fc_in and d.fc_in % 3 == 0:
        return d.fc_in // 3, f"fc input {d.fc_in} / 3 aux layers, the producers' default"
    if target_hidden_size:
        return target_hidden_size, "the target's hidden_size"
    return None, ""


def settle_target_hidden(c: Canon, d: Drafter, target_hidden_size: int | None) -> str | None:
    """Fill `c`'s target hidden size from the checkpoint and the target (target_hidden_of); a note when it was
    not in the config. Flat layouts write it only when it differs from hidden_size (their readers fall back to
    hidden_size); the speculators layout always writes the number, never null."""
    ht, where = target_hidden_of(d, len(c.boundaries) if c.boundaries else None, target_hidden_size)
    c.target_hidden_known = ht
    if ht is not None and ht != c.llama.get("hidden_size"):
        c.target_hidden_size = ht
    if ht is None or d.cfg_target_hidden_size:
        return None
    return f"target_hidden_size {ht} ({where}): not in the source config"


def canon_config(d: Drafter) -> Canon:
    cfg = d.cfg
    llama = {k: cfg[k] for k in LLAMA_KEYS if k in cfg}
    llama["model_type"] = cfg.get("model_type") if cfg.get("model_type") in ("llama", "qwen3") else "llama"
    if d.hidden_size:
        llama["hidden_size"] = d.hidden_size
    if d.layers_in_keys:
        llama["num_hidden_layers"] = d.layers_in_keys
    if d.vocab_from_keys and "vocab_size" not in llama:
        llama["vocab_size"] = d.vocab_from_keys
    if d.head_dim and "head_dim" not in llama:
        llama["head_dim"] = d.head_dim
    if d.intermediate_from_keys:
        llama["intermediate_size"] = d.intermediate_from_keys
    llama["tie_word_embeddings"] = False if d.has("lm_head.weight") else bool(cfg.get("tie_word_embeddings", False))
    ids = d.aux_ids
    if ids is None:
        b, note = None, "no aux layer ids recorded: each engine uses its default (the same physical layers as the producers' defaults)"
    elif d.aux_ids_where == "top-level":
        b, note = list(ids), f"top-level ids {ids} (input-of-layer) = boundaries {list(ids)}"
    else:
        b, note = [i + 1 for i in ids], f"eagle_config ids {ids} (output-of-layer) = boundaries {[i + 1 for i in ids]}"
    nbr = cfg.get("norm_before_residual")
    if isinstance(nbr, bool):
        nbr_note = f"norm_before_residual {nbr} (from the config)"
    else:
        nbr = NBR_DEFAULT.get(d.layout, False)
        nbr_note = f"norm_before_residual {nbr} ({d.layout}'s default; now written explicitly)"
    ec = cfg.get("eagle_config") if isinstance(cfg.get("eagle_config"), dict) else {}
    spec = cfg.get("speculators_config") if isinstance(cfg.get("speculators_config"), dict) else {}
    prov = cfg.get(PROVENANCE) if isinstance(cfg.get(PROVENANCE), dict) else {}
    if not spec and prov:
        spec = {"verifier": prov.get("verifier") or {}, "proposal_methods": [{"speculative_tokens": prov.get("speculative_tokens")}]}
    if b is None and isinstance(prov.get("aux_boundaries"), list):
        b, note = list(prov["aux_boundaries"]), f"aux boundaries {prov['aux_boundaries']} (recorded by specbridge)"
    methods = spec.get("proposal_methods") if isinstance(spec.get("proposal_methods"), list) else []
    tokens = methods[0].get("speculative_tokens") if methods and isinstance(methods[0], dict) else None
    vd = d.draft_vocab_from_keys or d.draft_vocab_size
    return Canon(
        llama=llama,
        draft_vocab_size=vd,
        target_hidden_size=d.cfg_target_hidden_size if d.cfg_target_hidden_size and d.cfg_target_hidden_size != d.hidden_size else None,
        boundaries=b,
        boundaries_note=note,
        norm_before_residual=bool(nbr),
        norm_before_residual_note=nbr_note,
        norm_before_fc=bool(cfg.get("norm_before_fc") or ec.get("norm_before_fc")),
        fc_norm=bool(cfg.get("fc_norm") or cfg.get("use_aux_norm")),
        norm_output=bool(cfg.get("norm_output")),
        bias=bool(cfg.get("bias")) or d.has("fc.bias"),
        dtype=DTYPE_NAMES.get(d.dtype or ""),
        verifier=dict(spec.get("verifier") or {}),
        speculative_tokens=tokens if isinstance(tokens, int) else 3,
        quantization_config=cfg.get("quantization_config"),
    )


def _flags(c: Canon) -> dict:
    out = {"norm_before_residual": c.norm_before_residual}
    if c.norm_before_fc:
        out["norm_before_fc"] = True
    if c.fc_norm:
        out["fc_norm"] = True
    if c.norm_output:
        out["norm_output"] = True
    if c.bias:
        out["bias"] = True
    return out


def write_config(c: Canon, layout: Layout, ids_for_eagle_config: list[int] | None = None) -> tuple[dict, list[str]]:
    """The config.json `layout` expects, and notes on anything that layout cannot express."""
    notes: list[str] = []
    dtype = {"torch_dtype": c.dtype} if c.dtype else {}
    if layout.config_style == "speculators":
        tlc = dict(c.llama)
        cfg = {
            "architectures": ["Eagle3Speculator"],
            "speculators_model_type": "eagle3",
            "speculators_version": "0.9.0",
            "speculators_config": {
                "algorithm": "eagle3",
                "default_proposal_method": "greedy",
                "proposal_methods": [
                    {"proposal_type": "greedy", "speculative_tokens": c.speculative_tokens, "accept_tolerance": 0.0, "verifier_accept_k": 1}
                ],
                "verifier": c.verifier or {"name_or_path": None, "architectures": []},
            },
            "transformer_layer_config": tlc,
            "draft_vocab_size": c.draft_vocab_size,
            "target_hidden_size": c.target_hidden_size or c.target_hidden_known,
            "eagle_aux_hidden_state_layer_ids": c.boundaries,
            "norm_before_fc": c.norm_before_fc,
            "fc_norm": c.fc_norm,
            "norm_output": c.norm_output,
            "norm_before_residual": c.norm_before_residual,
            "tie_word_embeddings": False,
            **({"dtype": c.dtype} if c.dtype else {}),
        }
        if not c.verifier.get("name_or_path"):
            notes.append("speculators_config.verifier.name_or_path is unknown (vLLM requires it): fill it in or pass --target")
        return cfg, notes

    base = {k: v for k, v in c.llama.items()}
    prov = {}
    if c.verifier.get("name_or_path") or c.verifier.get("architectures"):
        prov["verifier"] = c.verifier
        prov["speculative_tokens"] = c.speculative_tokens
    if c.boundaries is not None and layout.aux_ids_where == "none":
        prov["aux_boundaries"] = list(c.boundaries)
    if prov:
        base[PROVENANCE] = prov
    if c.quantization_config:
        base["quantization_config"] = c.quantization_config
    eagle = {"draft_vocab_size": c.draft_vocab_size, **_flags(c)}
    if c.target_hidden_size:
        eagle["target_hidden_size"] = c.target_hidden_size
    if layout.config_style == "research":
        if c.boundaries is not None:
            notes.append(
                f"the EAGLE research layout has nowhere to record aux layers; it hard-codes [2, N//2, N-3] (trained: {c.boundaries})"
            )
        return {"architectures": [layout.architecture], **base, **eagle, **dtype}, notes
    if layout.config_style == "nemo":
        if c.boundaries is not None:
            notes.append(
                f"NeMo's config.json has no aux-layer field; record boundaries {c.boundaries} with the recipe (aux_layer_ids {[b - 1 for b in c.boundaries]})"
            )
        return {"architectures": [layout.architecture], **base, **eagle, **dtype}, notes
    # flat LlamaForCausalLMEagle3 (sglang / vllm / trtllm)
    cfg = {"architectures": [layout.architecture], **base, **eagle, **dtype}
    if c.boundaries is not None:
        if layout.aux_ids_where == "top-level":
            cfg["eagle_aux_hidden_state_layer_ids"] = list(c.boundaries)
        else:
            ids = ids_for_eagle_config if ids_for_eagle_config is not None else [b - 1 for b in c.boundaries]
            cfg["eagle_config"] = {"eagle_aux_hidden_state_layer_ids": ids, "use_aux_hidden_state": True}
            if c.norm_before_fc:
                cfg["eagle_config"]["norm_before_fc"] = True
    return cfg, notes
