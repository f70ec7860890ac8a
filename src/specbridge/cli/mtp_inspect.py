"""`inspect` of a target that carries (or announces) an MTP head: the head from the index alone, and the
headers of only the shards that hold it. A target is hundreds of shards; its decoder is not what is asked."""

from __future__ import annotations

import sys
from collections import Counter

from ..checkpoint.errors import CheckpointError
from ..checkpoint.index import TargetIndex, index_first_or_none, read_target_index
from ..families.detect import FamilyVerdict, detect_family
from ..families.mtp import PARTS, MtpHead, find_mtp_head, head_of, mtp_shapes
from ..families.mtp_view import index_keys
from .contract import print_json


def mtp_family(config: dict, names) -> FamilyVerdict | None:
    """The family verdict when the evidence says MTP (names only: shapes are not read for it), else None. A checkpoint
    with no MTP head announced or named (every drafter) is answered without the detector, which the drafter's own
    reading runs once, later."""
    head = find_mtp_head(config, names)
    if not (head.announced or head.layers):
        return None
    v = detect_family(config, dict.fromkeys(names, ()))
    return v if v.family is not None and v.family.checker == "head" else None


def inspect_index_first(path, as_json: bool) -> int | None:
    """inspect of an MTP target read index-first; None (having read no shard header) when the input is not one."""
    try:
        idx = index_first_or_none(path, index_keys)
    except CheckpointError:
        return None  # the checkpoint reader says what is wrong with it, in its own words
    if idx is None:
        return None
    fam = mtp_family(idx.config, idx.weight_map)
    return None if fam is None else show(idx, fam, as_json)


def inspect_after_open(path, ckpt, as_json: bool) -> int | None:
    """inspect of an MTP target the checkpoint reader already opened (a single file on the Hub)."""
    fam = mtp_family(ckpt.config or {}, ckpt.tensors)
    if fam is None:
        return None
    try:
        idx = read_target_index(path)
    except CheckpointError as e:
        from .contract import fail

        return fail(str(e))
    return show(idx, fam, as_json)


def _layer_json(layer, shapes: dict) -> dict:
    dtypes = Counter(shapes[n][0] for n in layer.tensors if n in shapes)
    named = {n: {"dtype": shapes[n][0], "shape": list(shapes[n][1])} for n in layer.tensors if n in shapes and ".experts." not in n}
    return {"dtypes": dict(sorted(dtypes.items())), "named_tensors": named}


def body(idx: TargetIndex, fam: FamilyVerdict, head: MtpHead, shapes: dict) -> dict:
    from ..checkpoint.hubref import hub_sources

    mtp = head.to_json()
    for layer_json, layer in zip(mtp["layers"], head.layers, strict=True):
        layer_json |= _layer_json(layer, shapes)
    cfg = idx.config
    archs = cfg.get("architectures")
    return {
        "ok": True,
        "path": idx.path,
        "storage": idx.storage,
        "family": fam.to_json(),
        "target": {
            "architecture": archs[0] if isinstance(archs, list) and archs else None,
            "model_type": cfg.get("model_type"),
            "tensors": idx.tensors,  # None when the index was read in part
            "shards": idx.shards,  # named by the entries read
            "index_partial": idx.partial,
        },
        "mtp": mtp,
        **hub_sources(idx.hub),
    }


def show(idx: TargetIndex, fam: FamilyVerdict, as_json: bool) -> int:
    head = head_of(idx)
    try:
        shapes = mtp_shapes(idx, head)
    except CheckpointError as e:
        from .contract import fail

        return fail(str(e))
    if as_json:
        print_json("inspect", body(idx, fam, head, shapes))
        return 0
    print_human(idx, fam, head, shapes)
    return 0


def print_human(idx: TargetIndex, fam: FamilyVerdict, head: MtpHead, shapes: dict) -> None:
    """The head as a person reads it: on a terminal each line wrapped at spaces to its width, in a pipe one line
    per item (console.fold)."""
    from . import console

    width = console.page_width()

    def print(line: str) -> None:  # noqa: A001 - every line below goes through the fold
        sys.stdout.write(console.fold(line, width) + "\n")

    if idx.hub is not None:
        print(idx.hub.line())
    if idx.partial:
        print(f"{idx.path}  ({idx.storage}; index read in part: {len(idx.weight_map)} entries naming {idx.shards} file(s))")
    else:
        print(f"{idx.path}  ({idx.storage}, {idx.shards} file(s), {idx.tensors} tensors)")
    print(f"family: {fam.family.title if fam.family else fam.name}")
    for e in fam.evidence:
        print(f"  evidence: {e}")
    print("MTP head:")
    print(f"  style: {head.style}")
    announced = f"{head.announced} (config {head.announced_by})" if head.announced_by else "0 (no config key announces MTP)"
    print(f"  announced layers: {announced}")
    print(f"  found layers: {len(head.layers)}" + (f" ({', '.join(str(layer.index) for layer in head.layers)})" if head.layers else ""))
    if head.missing_layers():
        print(f"  MISSING layers (announced, no tensor): {', '.join(map(str, head.missing_layers()))}")
    if head.extra_layers():
        print(f"  layers beyond what the config announces: {', '.join(map(str, head.extra_layers()))}")
    for layer in head.layers:
        present = [p for p in PARTS if p in layer.parts]
        print(f"  layer {layer.index} ({layer.prefix}*, {len(layer.tensors)} tensors): {', '.join(present)}")
        if layer.missing:
            print(f"    MISSING parts: {', '.join(layer.missing)}")
        absent = [p for p in PARTS if p not in layer.parts and p not in layer.missing]
        if absent:
            print(f"    not in this layer (whether an engine takes the target's own is its loader's fact): {', '.join(absent)}")
        for part, raw in layer.raw:
            print(f"    {part} is written {raw}")
        dtypes = Counter(shapes[n][0] for n in layer.tensors if n in shapes)
        if dtypes:
            print(f"    dtypes: {', '.join(f'{d} ×{c}' for d, c in sorted(dtypes.items()))}")
        for n in layer.tensors:
            if n in shapes and ".experts." not in n and not n.endswith("_scale_inv"):
                if not any(w in n for w in (".self_attn.", ".mlp.", ".linear_attn.", ".mixer.")):
                    print(f"    {n} {shapes[n][0]} {list(shapes[n][1])}")
        if layer.unclassified:
            print(f"    unclassified: {', '.join(layer.unclassified[:4])}" + (" …" if len(layer.unclassified) > 4 else ""))
    for e in head.evidence:
        print(f"  evidence: {e}")
    of = f"the {idx.shards} the entries read name" if idx.partial else str(idx.shards)
    print(f"  read: {head.bytes_read} bytes, {head.headers_read} shard header(s) of {of}; no tensor data")
