"""The MTP corpus (tests/fixtures/corpus-mtp) rebuilt as header-only sharded targets: config.json, an index, and
safetensors shards whose headers name every tensor of the published key list and whose data is a hole (sparse
files). The key lists are published names; shapes and dtypes are derived from the config (the corpus stores names,
not headers): norms [H] (MLA's low-rank norms their rank, q/k norms head_dim), eh_proj and Qwen's mtp.fc [H, 2H], embeddings and heads [V, H], the router
gate [E, H] and its bias [E], a routed expert's gate/up [moe_intermediate_size, H] and down [H, moe_intermediate_size]
(the slices of vLLM's FusedMoE w13/w2 the rows account per expert), scales F32, a quantized weight F8/I32 beside its
scale, MLA's and GLM-4.5's attention projections from their head counts and ranks (SGLang's NextN rows check them
one by one), anything else a one-element placeholder the engine rows count but do not shape-check (an MTP decoder
block's shared-expert linears, other attention layouts)."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

from specbridge.checkpoint.write import write_header_only

DIR = Path(__file__).resolve().parent / "fixtures" / "corpus-mtp"
_SPEC = importlib.util.spec_from_file_location("corpus_mtp_build", DIR / "_build.py")
build = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(build)

ROUTED_EXPERT = re.compile(r"\.experts\.\d+\.(gate|up|down)_proj\.weight$")
SCALES = ("weight_scale_inv", "weight_scale", "weight_scale_2", "input_scale", "weight_global_scale", "input_global_scale")
HEAD_SHARD, BODY_SHARD = "model-00002-of-00002.safetensors", "model-00001-of-00002.safetensors"


def entries() -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(DIR.glob("*.json")) if not p.name.startswith("_")]


def _text(cfg: dict) -> dict:
    return cfg.get("text_config") if isinstance(cfg.get("text_config"), dict) else cfg


def shape_of(name: str, cfg: dict) -> list[int]:
    t = _text(cfg)
    h, v, e = t.get("hidden_size", 1), t.get("vocab_size", 1), t.get("n_routed_experts") or t.get("num_experts") or 1
    if name.endswith("q_a_layernorm.weight"):
        return [t.get("q_lora_rank") or h]
    if name.endswith("kv_a_layernorm.weight"):
        return [t.get("kv_lora_rank") or h]
    if name.endswith(("q_norm.weight", "k_norm.weight")):
        return [t.get("head_dim") or h // max(t.get("num_attention_heads", 1), 1)]
    if name.endswith(".weight") and "norm" in name.rsplit(".", 2)[-2]:
        return [h]
    if name.endswith(("eh_proj.weight", "mtp.fc.weight")):
        return [h, 2 * h]
    if name.endswith(("embed_tokens.weight", "lm_head.weight", "shared_head.head.weight")):
        return [v, h]
    if name.endswith("mlp.gate.weight"):
        return [e, h]
    if name.endswith("e_score_correction_bias"):
        return [e]
    attn = _attention_shape(name, t)
    if attn:
        return attn
    expert = ROUTED_EXPERT.search(name)
    if expert and t.get("moe_intermediate_size"):
        mi = t["moe_intermediate_size"]
        return [h, mi] if expert.group(1) == "down" else [mi, h]
    return [1]


ATTENTION = re.compile(r"\.self_attn\.(q|k|v|o|q_a|q_b|kv_a|kv_b)_proj(?:_with_mqa)?\.(weight|bias)$")


def _attention_shape(name: str, t: dict) -> list[int] | None:
    """An attention projection's shape where the config describes it whole: MLA's (q_lora_rank / kv_lora_rank and the
    qk_nope / qk_rope / v head dims) and GLM-4.5's grouped-query attention (heads × head_dim, bias with attention_bias).
    Other attention layouts (Qwen3-Next's gated q_proj, …) stay placeholders."""
    m = ATTENTION.search(name)
    if not m:
        return None
    proj, leaf, h, nh = m.group(1), m.group(2), t.get("hidden_size", 1), t.get("num_attention_heads", 1)
    if t.get("kv_lora_rank"):
        q_rank, kv_rank, rope = t.get("q_lora_rank"), t["kv_lora_rank"], t.get("qk_rope_head_dim", 0)
        qk, vhd = t.get("qk_nope_head_dim", 0) + rope, t.get("v_head_dim", 0)
        rows = {"q_a": [q_rank, h], "q_b": [nh * qk, q_rank], "q": [nh * qk, h], "kv_a": [kv_rank + rope, h]}
        rows |= {"kv_b": [nh * (t.get("qk_nope_head_dim", 0) + vhd), kv_rank], "o": [h, nh * vhd]}
        return rows.get(proj) if leaf == "weight" and None not in rows.get(proj, [None]) else None
    if t.get("model_type") != "glm4_moe":
        return None
    hd, nkv = t.get("head_dim") or h // max(nh, 1), t.get("num_key_value_heads", nh)
    out = {"q": nh * hd, "k": nkv * hd, "v": nkv * hd}.get(proj)
    if proj == "o":
        return [h, nh * hd] if leaf == "weight" else None
    return None if out is None else ([out, h] if leaf == "weight" else [out])


def dtype_of(name: str, names: set[str], cfg: dict) -> str:
    leaf = name.rsplit(".", 1)[-1]
    if leaf in SCALES:
        return "F32"
    if leaf in ("weight_packed", "qweight", "qzeros"):
        return "I32"
    stem = name[: -len(".weight")] if name.endswith(".weight") else None
    if stem and any(f"{stem}.{s}" in names for s in SCALES):
        method = str((_text(cfg).get("quantization_config") or cfg.get("quantization_config") or {}).get("quant_method", ""))
        return "U8" if "fp4" in method or method == "modelopt" else "F8_E4M3"
    return "BF16"


def _shape_key(name: str) -> str:
    """What shape_of reads of a name: its last four parts with the dot before them (the routed-expert pattern is the
    longest it matches), or the whole name when it is shorter; a published target's ~10^5 names share a few hundred."""
    parts = name.rsplit(".", 4)
    return name[len(parts[0]) :] if len(parts) == 5 else name


def _write_shard(path: Path, names: list[str], names_all: set[str], cfg: dict) -> None:
    shapes: dict[str, list[int]] = {}
    rows = []
    for n in names:
        key = _shape_key(n)
        if key not in shapes:
            shapes[key] = shape_of(key, cfg)
        rows.append((n, dtype_of(n, names_all, cfg), list(shapes[key])))
    write_header_only(path, rows)


def write_target(entry: dict, out: Path) -> Path:
    """The entry as a target directory; the MTP tensors and the top-level embedding/head in one shard, the rest in another."""
    cfg = entry["config"]
    names = list(build.all_names(entry))
    mtp = set(entry["weight_map"]) | {"model.embed_tokens.weight", "lm_head.weight"}
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(cfg))
    shard = {n: HEAD_SHARD if n in mtp else BODY_SHARD for n in names}
    all_names = set(names)
    for f in (BODY_SHARD, HEAD_SHARD):
        _write_shard(out / f, [n for n in names if shard[n] == f], all_names, cfg)
    (out / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": shard}, sort_keys=True))
    return out
