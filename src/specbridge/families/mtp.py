"""The multi-token-prediction (MTP / NextN) head a target ships inside its own checkpoint, found from tensor
names and config alone.

Each checkpoint style is a row (STYLES): where its MTP tensors live, how the number of the MTP layer is
written, and what each tensor name is, as vLLM 0.32.0's loaders read them (vllm/model_executor/models/
*_mtp.py and utils.get_spec_layer_idx_from_weight_name). The announced layer count comes from the config
key vLLM reads (config/speculative.py hf_config_override), at top level or in the text config. Names only:
`find_mtp_head` does no I/O; `mtp_shapes` reads the headers of the shards that hold the head, nothing else."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from ..checkpoint.index import TargetIndex, read_shard_headers, read_target_index
from ..later import Later
from ..record import field, record
from .names import at_least, lines_with, name_lines
from .reading import TargetFit

VLLM = "vllm/model_executor/models/{} @ 0.32.0"
# the keys vLLM reads (config/speculative.py), then MiniMax-M2's own (`num_mtp_modules`, with `use_mtp`)
ANNOUNCE_KEYS = ("num_nextn_predict_layers", "mtp_num_hidden_layers", "num_mtp_layers", "num_mtp_modules")
TEXT_KEYS = ("text_config", "language_config", "llm_config")  # as checkpoint/target.py reads a wrapped text model
PARTS = ("enorm", "hnorm", "eh_proj", "shared_head.norm", "shared_head.head", "embed_tokens", "decoder")
DECODER_WORDS = (
    "self_attn.",
    "mlp.",
    "input_layernorm.",
    "post_attention_layernorm.",
    "linear_attn.",
    "pre_mlp_layernorm.",
    "block_sparse_moe.",
    "mixer.",
)


@record
class Style:
    """One way a checkpoint lays out its MTP layers. `pattern`: group `prefix` (the layer's prefix up to
    and including its number) and `n` (the number as written); `shared`: tensors of the whole MTP module,
    outside any layer (Qwen3-Next's `mtp.fc`), that every layer uses; `aliases`: the style's own name of a
    part -> the part (`fc` -> `eh_proj`); `required`: the parts every layer of this style has; `after_decoder`:
    the numbers continue the decoder's (the first MTP layer is `num_hidden_layers`)."""

    name: str
    pattern: re.Pattern
    aliases: tuple[tuple[str, str], ...]
    required: tuple[str, ...]
    shared: re.Pattern | None = None
    after_decoder: bool = False
    cite: str = ""


STYLES: tuple[Style, ...] = (
    Style(
        "layers-after-decoder",  # DeepSeek-V3/V3.2, GLM-4.5+, Bailing, HY-V3, OpenPangu, Step-3.5, Kimi-K2
        Later(r"^(?P<prefix>(?:model\.language_model\.|language_model\.model\.|model\.)?layers\.(?P<n>\d+)\.)"),
        (
            ("enorm.", "enorm"),
            ("hnorm.", "hnorm"),
            ("eh_proj.", "eh_proj"),
            ("shared_head.norm.", "shared_head.norm"),
            ("shared_head.head.", "shared_head.head"),
            ("shared_head.output.", "shared_head.head"),  # Step-3.5 (step3p5_mtp.py renames it)
            ("embed_tokens.", "embed_tokens"),
            ("transformer.", "decoder"),  # Step-3.5's decoder block
        ),
        ("enorm", "hnorm", "eh_proj", "shared_head.norm", "decoder"),
        after_decoder=True,
        cite=f"{VLLM.format('utils.py')} (get_spec_layer_idx_from_weight_name); {VLLM.format('deepseek_mtp.py')} (_rewrite_spec_layer_name)",
    ),
    Style(
        "mtp-module",  # Qwen3-Next, Qwen3.5/3.6, EXAONE-MoE, Nemotron-H
        Later(r"^(?P<prefix>(?:language_model\.)?mtp\.layers\.(?P<n>\d+)\.)"),
        (("enorm.", "enorm"), ("hnorm.", "hnorm"), ("eh_proj.", "eh_proj"), ("final_layernorm.", "shared_head.norm")),
        ("enorm", "hnorm", "eh_proj", "shared_head.norm", "decoder"),
        shared=Later(r"^(?:language_model\.)?mtp\.(?P<part>fc|pre_fc_norm_embedding|pre_fc_norm_hidden|norm|embed_tokens)\."),
        cite=f"{VLLM.format('qwen3_next_mtp.py')} (mtp. -> model.); {VLLM.format('qwen3_5_mtp.py')}; {VLLM.format('nemotron_h_mtp.py')}",
    ),
    Style(
        "mtp-layers",  # MiMo-7B
        Later(r"^(?P<prefix>model\.mtp_layers\.(?P<n>\d+)\.)"),
        (
            ("token_layernorm.", "enorm"),
            ("hidden_layernorm.", "hnorm"),
            ("input_proj.", "eh_proj"),
            ("final_layernorm.", "shared_head.norm"),
        ),
        ("enorm", "hnorm", "eh_proj", "shared_head.norm", "decoder"),
        cite=f"{VLLM.format('mimo_mtp.py')} (hf_to_vllm_mapper)",
    ),
    Style(
        "model-mtp-layers",  # MiMo-V2-Flash, LongCat-Flash
        Later(r"^(?P<prefix>model\.mtp\.layers\.(?P<n>\d+)\.)"),
        (
            ("enorm.", "enorm"),
            ("hnorm.", "hnorm"),
            ("eh_proj.", "eh_proj"),
            ("final_layernorm.", "shared_head.norm"),
            ("transformer_layer.", "decoder"),  # LongCat-Flash's dense block
        ),
        ("enorm", "hnorm", "eh_proj", "shared_head.norm", "decoder"),
        shared=Later(r"^model\.mtp\.(?P<part>embed_tokens|norm)\."),
        cite=f"{VLLM.format('mimo_v2_mtp.py')} (model.mtp.layers.*); {VLLM.format('longcat_flash_mtp.py')}",
    ),
    Style(
        "mtp-blocks",  # ERNIE-4.5-MoE: one flat block per part, numbered
        Later(r"^(?P<prefix>model\.mtp_(?:emb_norm|hidden_norm|linear_proj|block)\.(?P<n>\d+)\.)"),
        (),
        ("enorm", "hnorm", "eh_proj", "decoder"),
        cite=f"{VLLM.format('ernie_mtp.py')} (hf_to_vllm_mapper)",
    ),
)
BY_STYLE = {s.name: s for s in STYLES}
SHARED_PART = {
    "fc": "eh_proj",
    "pre_fc_norm_embedding": "enorm",
    "pre_fc_norm_hidden": "hnorm",
    "norm": "shared_head.norm",
    "embed_tokens": "embed_tokens",
}
ERNIE_PART = {"emb_norm": "enorm", "hidden_norm": "hnorm", "linear_proj": "eh_proj", "block": "decoder"}


@record
class MtpLayer:
    """One MTP layer as the checkpoint writes it: its number, prefix, every tensor (its own and the module's
    shared ones), the parts present, and `raw`: (part, the name the checkpoint gives it) where that differs."""

    index: int
    prefix: str
    tensors: tuple[str, ...]
    parts: frozenset[str]
    raw: tuple[tuple[str, str], ...] = ()
    missing: tuple[str, ...] = ()  # parts the style's every layer has that this one lacks
    unclassified: tuple[str, ...] = ()  # tensors under the prefix that are none of the parts


@record(frozen=False)
class MtpHead:
    """The MTP head of a target: style, what the config announces and what the names hold."""

    style: str  # a STYLES name, or "none" when nothing is announced or found
    announced: int
    announced_by: str
    base: int
    layers: tuple[MtpLayer, ...]
    evidence: list[str] = field(default_factory=list)
    bytes_read: int = 0
    headers_read: int = 0
    cite: str = ""
    index_notes: list[str] = field(default_factory=list)  # how the target's index was read (also in evidence)

    def missing_layers(self) -> list[int]:
        """Announced layer numbers with no tensor."""
        found = {layer.index for layer in self.layers}
        return [n for n in range(self.base, self.base + self.announced) if n not in found]

    def extra_layers(self) -> list[int]:
        """Layer numbers with tensors beyond what the config announces (none when it announces nothing)."""
        if not self.announced:
            return []
        return [layer.index for layer in self.layers if not self.base <= layer.index < self.base + self.announced]

    def to_json(self) -> dict:
        return {
            "style": self.style,
            "announced": self.announced,
            "announced_by": self.announced_by or None,
            "base": self.base,
            "found": len(self.layers),
            "missing_layers": self.missing_layers(),
            "extra_layers": self.extra_layers(),
            "layers": [
                {
                    "index": layer.index,
                    "prefix": layer.prefix,
                    "parts": sorted(layer.parts, key=PARTS.index),
                    "missing_parts": list(layer.missing),
                    "raw_names": dict(layer.raw),
                    "unclassified": list(layer.unclassified),
                    "tensors": len(layer.tensors),
                }
                for layer in self.layers
            ],
            "evidence": self.evidence,
            "bytes_read": self.bytes_read,
            "headers_read": self.headers_read,
            "cite": self.cite,
        }


def _configs(config: Mapping) -> list[Mapping]:
    return [config, *(config[k] for k in TEXT_KEYS if isinstance(config.get(k), Mapping))]


def announced_layers(config: Mapping) -> tuple[int, str]:
    """(MTP layer count, "key" or "text_config.key") from the first announcing key; (0, "") when none does."""
    for i, cfg in enumerate(_configs(config)):
        where = "" if i == 0 else next(k for k in TEXT_KEYS if config.get(k) is cfg) + "."
        for key in ANNOUNCE_KEYS:
            v = cfg.get(key)
            if type(v) is int and v > 0:
                return v, where + key
    return 0, ""


def decoder_layers(config: Mapping) -> int | None:
    """num_hidden_layers of the text model (a wrapper's text_config first, as target.py reads it)."""
    for cfg in reversed(_configs(config)):
        v = cfg.get("num_hidden_layers")
        if type(v) is int and v >= 0:
            return v
    return None


def _part(style: Style, m: re.Match, rest: str) -> str | None:
    if style.name == "mtp-blocks":  # the part is in the prefix: model.mtp_emb_norm.0.weight
        return ERNIE_PART[m["prefix"].split(".")[1].removeprefix("mtp_")]
    for alias, part in style.aliases:
        if rest.startswith(alias):
            return part
    if rest.startswith(DECODER_WORDS):
        return "decoder"
    return None


def _layer_tensors(style: Style, names: list[str], base: int | None) -> dict[int, tuple[str, list[str]]]:
    """number -> (prefix, names) for the style's MTP layers; after-decoder numbers below `base` are the decoder's."""
    out: dict[int, tuple[str, list[str]]] = {}
    for name in names:
        m = style.pattern.match(name)
        if not m:
            continue
        n = int(m["n"])
        if style.after_decoder and (base is None or n < base):
            continue
        prefix = m["prefix"] if style.name != "mtp-blocks" else f"model.mtp_*.{n}."
        out.setdefault(n, (prefix, []))[1].append(name)
    return out


def _after(base: int) -> re.Pattern:
    """The lines of name_lines() that the after-decoder pattern matches with a layer number >= base."""
    wrappers = "(?:model\\.language_model\\.|language_model\\.model\\.|model\\.)?"
    return re.compile(rf"\n({wrappers}layers\.{at_least(base)}\.[^\n]*)")


def _guess_base(names: list[str]) -> int | None:
    """Without num_hidden_layers: the lowest layer number carrying an MTP-only part (enorm, hnorm, eh_proj)."""
    style = BY_STYLE["layers-after-decoder"]
    found = [int(m["n"]) for n in names if (m := style.pattern.match(n)) and re.search(r"\.(enorm|hnorm|eh_proj)\.", n)]
    return min(found) if found else None


def _build_layer(style: Style, n: int, prefix: str, own: list[str], shared: list[tuple[str, str]]) -> MtpLayer:
    parts: set[str] = set()
    raw: dict[str, str] = {}
    unclassified = []
    for name in own:
        m = style.pattern.match(name)
        assert m is not None  # `own` holds only names the pattern matched (_layer_tensors)
        part = _part(style, m, name[m.end() :])
        if part is None:
            unclassified.append(name)
            continue
        parts.add(part)
        stem = name.rsplit(".", 1)[0]
        if part != "decoder" and not stem.endswith(part) and part not in raw:
            raw[part] = stem
    for part, name in shared:
        parts.add(part)
        raw.setdefault(part, name.rsplit(".", 1)[0])
    missing = tuple(p for p in style.required if p not in parts)
    tensors = tuple(sorted([*own, *(name for _, name in shared)]))
    return MtpLayer(n, prefix, tensors, frozenset(parts), tuple(sorted(raw.items())), missing, tuple(sorted(unclassified)))


def _style_for_config(config: Mapping, key: str) -> Style:
    """The style a config that announces MTP would be written in, when no MTP tensor says it."""
    archs = config.get("architectures")
    arch = archs[0] if isinstance(archs, list) and archs and isinstance(archs[0], str) else ""
    types = {str(c.get("model_type", "")) for c in _configs(config)}
    if arch == "MiMoForCausalLM":
        return BY_STYLE["mtp-layers"]
    if arch.startswith("MiMoV2") or "longcat_flash" in types:
        return BY_STYLE["model-mtp-layers"]
    if "ernie4_5_moe" in types:
        return BY_STYLE["mtp-blocks"]
    if key.endswith("mtp_num_hidden_layers") or any(t.startswith(("qwen3_next", "qwen3_5", "exaone", "nemotron_h")) for t in types):
        return BY_STYLE["mtp-module"]
    return BY_STYLE["layers-after-decoder"]


# every name any style's MTP tensors can have, but the after-decoder layers (numbered from num_hidden_layers)
FIXED_PREFIXES = ("mtp.", "language_model.mtp.", "model.mtp.", "model.mtp_")
AFTER_DECODER_WRAPPERS = ("", "model.", "model.language_model.", "language_model.model.")  # as the style's pattern allows


def head_prefixes(config: Mapping) -> tuple[tuple[str, ...], tuple[str, ...]] | str:
    """(name prefixes that hold every tensor find_mtp_head would read as the head, prefixes of the first layer past
    those announced) for a config that announces MTP; else why every name has to be read."""
    announced, key = announced_layers(config)
    if not announced:
        return "the config announces no MTP layers (a head without one is found only among all names)"
    n = decoder_layers(config)
    if n is None:
        return f"config {key} = {announced} but no num_hidden_layers: the MTP layers' numbers are not known"
    layers = tuple(w + f"layers.{i}." for i in range(n, n + announced) for w in AFTER_DECODER_WRAPPERS)
    beyond = tuple(w + f"layers.{n + announced}." for w in AFTER_DECODER_WRAPPERS)
    return (*layers, *FIXED_PREFIXES), beyond


def find_mtp_head(config: Mapping, names: Iterable[str], names_are: str = "") -> MtpHead:
    """The MTP head the tensor names hold and the config announces; names only, no I/O. `names_are`: what the
    names are when not every name of the target (a partial index)."""
    names = list(names)
    announced, key = announced_layers(config)
    n_decoder = decoder_layers(config)
    evidence = [f"config {key} = {announced}"] if key else []
    found: list[tuple[Style, dict]] = []
    text = name_lines(names)
    odd = "\0" in text  # a name with a NUL or newline (never in a real checkpoint): read name by name, exactly
    mtp_named = [n for n in names if "mtp" in n] if odd else lines_with(text, "mtp")  # every style but after-decoder says so
    for style in STYLES:
        base = n_decoder if style.after_decoder else 0
        if style.after_decoder and base is None:
            base = _guess_base(names)
        candidates = mtp_named
        if style.after_decoder:  # only the names numbered from base: the decoder's ~100 k are skipped in one scan
            candidates = names if odd else [m[1] for m in _after(base).finditer(text)] if base is not None else []
        layers = _layer_tensors(style, candidates, base)
        shared = [(SHARED_PART[m["part"]], n) for n in candidates if style.shared and (m := style.shared.match(n))]
        if layers or shared:
            found.append((style, {"base": base, "layers": layers, "shared": shared}))
    if not found:
        if not announced:
            return MtpHead("none", 0, "", 0, (), ["no MTP tensor and no config key announcing MTP"])
        style = _style_for_config(config, key)
        base = (n_decoder or 0) if style.after_decoder else 0
        evidence.append(
            f"no MTP tensor in {names_are or f'{len(names)} names'} (looked for the {', '.join(s.name for s in STYLES)} layouts)"
        )
        return MtpHead(style.name, announced, key, base, (), evidence, cite=style.cite)
    style, got = max(found, key=lambda sg: sum(len(v[1]) for v in sg[1]["layers"].values()) + len(sg[1]["shared"]))
    if len(found) > 1:
        evidence.append(f"MTP tensors in more than one layout ({', '.join(s.name for s, _ in found)}); read as {style.name}")
    layers = tuple(_build_layer(style, n, p, own, got["shared"]) for n, (p, own) in sorted(got["layers"].items()))
    if not layers:  # only module-level tensors (mtp.fc without mtp.layers.*)
        prefix = got["shared"][0][1].split(".", 1)[0] + ".layers.0."
        layers = (_build_layer(style, 0, prefix, [], got["shared"]),)
    base = got["base"] or 0
    n_tensors = sum(len(layer.tensors) for layer in layers)
    where = f"layer numbers {', '.join(str(layer.index) for layer in layers)}"
    if style.after_decoder:
        how = f"num_hidden_layers = {n_decoder}" if n_decoder is not None else "the first layer with enorm/hnorm/eh_proj"
        where += f" (from {base}: {how})"
    evidence.append(f"{n_tensors} MTP tensor(s) in the {style.name} layout, {where}, e.g. {layers[0].tensors[0]}")
    return MtpHead(style.name, announced, key, base, layers, evidence, cite=style.cite)


def mtp_shapes(index: TargetIndex, head: MtpHead) -> dict[str, tuple[str, tuple[int, ...]]]:
    """name -> (dtype, shape) of the head's tensors, from the headers of only the shards that hold them;
    the reads are counted in `index` (and copied into `head`)."""
    wanted = sorted({name for layer in head.layers for name in layer.tensors})
    by_shard: dict[str, list[str]] = {}
    for name in wanted:
        if name in index.weight_map:
            by_shard.setdefault(index.weight_map[name], []).append(name)
    out: dict[str, tuple[str, tuple[int, ...]]] = {}
    headers = read_shard_headers(index, sorted(by_shard))
    for shard, names in sorted(by_shard.items()):
        tensors = headers[shard]
        for name in names:
            t = tensors.get(name)
            if t is not None:
                out[name] = (t.dtype, t.shape)
    head.bytes_read, head.headers_read = index.bytes_read, index.headers_read
    return out


def head_of(index: TargetIndex) -> MtpHead:
    """find_mtp_head over an index, with the index's reads counted."""
    names_are = f"the {len(index.weight_map)} index entries read (the index was read in part)" if index.partial else ""
    head = find_mtp_head(index.config, index.weight_map, names_are)
    head.evidence += index.notes
    head.index_notes = list(index.notes)
    head.bytes_read, head.headers_read = index.bytes_read, index.headers_read
    return head


__all__ = ["MtpHead", "MtpLayer", "TargetIndex", "find_mtp_head", "head_of", "mtp_shapes", "read_target_index"]


MTP_FIT = (
    "each MTP layer's eh_proj (Qwen's mtp.fc) is [hidden_size, 2 × hidden_size] over cat(enorm(embedding), hnorm(the "
    "target's hidden state)) (vllm/model_executor/models/deepseek_mtp.py, glm4_moe_mtp.py, qwen3_next_mtp.py @ 0.32.0), "
    "so hnorm and eh_proj cannot take another width (inferred from the source); the head's own shapes against the "
    "target's config are the load's (L003)"
)
FUSION = ("eh_proj.weight", "mtp.fc.weight")


def target_fit(ckpt) -> TargetFit | None:
    """An MTP head takes the hidden states of the model it ships in at the width of its eh_proj (Qwen: mtp.fc) rows.
    Compared with a `--target` given beside it; its own target's config is the load simulation's."""
    fused = next((tuple(t.shape) for n, t in sorted(ckpt.tensors.items()) if n.endswith(FUSION)), None)
    return TargetFit(fused[0], "eh_proj rows", MTP_FIT) if fused and len(fused) == 2 else None
