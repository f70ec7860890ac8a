"""Plan a conversion: source layout → canonical drafter → destination layout (names, config, vocab
maps, embed/head), with every change listed. Nothing is written here."""

from __future__ import annotations

from ..checkpoint.reader import Checkpoint
from ..checkpoint.safetensors import TensorInfo
from ..checkpoint.target import TargetInfo
from ..checkpoint.values import int_values
from ..checkpoint.write import OutTensor
from ..engines.capture import engine_capture
from ..engines.registry import resolve
from ..engines.simulate import speculators_missing
from ..layouts.canonical import Drafter
from ..layouts.embedding import embed_stats
from ..layouts.table import LAYOUTS, Layout, to_layout
from ..view import CheckpointView
from .common import ConvertError, ConvertRefused, HeadRows, Plan
from .configs import canon_config, settle_target_hidden, write_config
from .dflash import DFLASH_LAYOUTS
from .eagle1 import EAGLE1_ENGINE, EAGLE1_LAYOUTS
from .sidefiles import hub_note, side_files

# which engine a layout is checked against after writing
LAYOUT_ENGINE = {
    "speculators": "vllm",
    "sglang": "sglang",
    "vllm": "vllm",
    "eagle": "vllm",
    "trtllm": "trtllm",
    "nemo": None,
    "dflash": "vllm",  # every modelled vLLM DFlash range, each at its newest release read
    **EAGLE1_ENGINE,
}


def _aux_ids_for_engine(boundaries: list[int], engine: str, version: str, target: TargetInfo) -> list[int] | None:
    """The eagle_config ids that make this engine version capture exactly `boundaries` on this target."""
    for ids in ([b - 1 for b in boundaries], list(boundaries)):
        cap = engine_capture(
            engine, version, target.architecture, target.text_model_type or target.model_type, target.num_layers, None, ids
        )
        if cap.boundaries is not None and sorted(cap.boundaries) == sorted(boundaries):
            return ids
    return None


def plan_conversion(
    view: CheckpointView,
    to: str | None = None,
    engine: str | None = None,
    target: TargetInfo | None = None,
    target_ckpt: Checkpoint | None = None,
    embed: str = "keep",
) -> Plan:
    """Every step of a conversion, decided before a byte is written: the destination layout, then the
    vocab maps, the embedding, every tensor's new name, the head, and the config; a config the destination's
    engine would not load is refused here (nothing written); then the checkpoint's other files to carry.
    `view`: the source described once (view.read_view)."""
    plan = _plan_family(view, to, engine, target, target_ckpt, embed)
    refuse_unloadable_config(plan)
    plan.copy_files, plan.not_copied = side_files(plan.src, set(plan.extra_files))
    note = hub_note(plan.src)
    if note:
        plan.notes.append(note)
    return plan


# the option that fills each field an engine requires and a conversion can leave empty
SUPPLIED_BY = {"speculators_config.verifier.name_or_path": "--target TARGET (the target model's directory or Hub id)"}


def refuse_unloadable_config(plan: Plan) -> None:
    """A speculators config that the engine it is checked against would refuse (vLLM's
    validate_speculators_config: the fields the engine row lists as required) is not written: refused
    (exit 2) with the field and the option that supplies it, before anything, an in-place backup included."""
    engine = plan.engine or LAYOUT_ENGINE.get(plan.layout.name)
    if engine is None or "speculators_config" not in plan.config:
        return
    place = resolve(engine)[0]
    if not place.era.dispatch.speculators:
        return
    missing = speculators_missing(plan.config, place.era.dispatch)
    if missing:
        fixes = "; ".join(f"pass {SUPPLIED_BY[m]}" if m in SUPPLIED_BY else f"nothing convert reads holds {m}" for m in missing)
        raise ConvertRefused(
            plan.src.root,
            f"not converted: {place.era.engine} {place.version} refuses a speculators config without {', '.join(missing)}, "
            f"and the checkpoint does not record {'it' if len(missing) == 1 else 'them'}: {fixes}; nothing was written",
        )


def _plan_family(
    view: CheckpointView, to: str | None, engine: str | None, target: TargetInfo | None, target_ckpt: Checkpoint | None, embed: str
) -> Plan:
    """The plan for the drafter's family: DFlash and EAGLE-1 have their own planners; EAGLE-3 is planned here."""
    src, d = view.ckpt, view.drafter
    own = view.verdict.family.convert_plan() if view.verdict.family is not None else None
    if own is not None:  # the family's row names its planner (families/table.py convert_planner)
        return own(view, to, engine, target, embed)
    if to in EAGLE1_LAYOUTS:
        raise ConvertRefused(None, f"an EAGLE-3 drafter is not converted into the EAGLE-1 layout {to!r}: another architecture")
    if to in DFLASH_LAYOUTS:
        raise ConvertRefused(None, f"an EAGLE-3 drafter is not converted into the DFlash layout {to!r}: another architecture")
    layout, engine_label, era_version = destination(d, to, engine)
    refuse_impossible(src, d, layout, target)
    canon = canon_config(d)
    plan = Plan(src, d, layout, engine_label, [], {})
    plan_vocab_maps(plan, canon.draft_vocab_size)
    plan_embedding(plan, embed, target_ckpt)
    plan_tensors(plan, embed, target_ckpt)
    plan_head(plan, canon.draft_vocab_size, target_ckpt)
    plan_config(plan, canon, era_version, target)
    return plan


def destination(d: Drafter, to: str | None, engine: str | None) -> tuple[Layout, str | None, tuple | None]:
    """(layout to write, "name==version" when converting for an engine version, (era, version))."""
    if engine:
        places = resolve(engine)
        if len(places) != 1:
            raise ConvertError(None, f"--engine {engine} names {len(places)} engine versions; convert writes for one (NAME==VERSION)")
        era, version = places[0].era, places[0].version
        layout_name = to or era.native_layout  # the era row says which layout it loads
        if d.layers_in_keys > 1 and era.multi_layer_layout:
            layout_name = era.multi_layer_layout
        label, era_version = f"{era.engine}=={version}", (era, version)
    elif to is None:
        raise ConvertError(None, "say what to convert to: --to LAYOUT or --engine NAME==VERSION")
    else:
        layout_name, label, era_version = to, None, None
    if layout_name not in LAYOUTS:
        raise ConvertError(None, f"unknown layout {layout_name!r}; known: {', '.join(LAYOUTS)}")
    return LAYOUTS[layout_name], label, era_version


def refuse_impossible(src: Checkpoint, d: Drafter, layout: Layout, target: TargetInfo | None) -> None:
    if layout.single_layer_only and d.layers_in_keys > 1:
        raise ConvertError(
            None, f"layout {layout.name} names the decoder midlayer.* and holds one layer; this drafter has {d.layers_in_keys}"
        )
    if d.unrecognised:
        raise ConvertError(
            src.root,
            f"{len(d.unrecognised)} tensor(s) are not part of an EAGLE-3 drafter ({', '.join(d.unrecognised[:3])}); "
            "refusing to guess where they go",
        )
    if target and target.vocab_size and d.vocab_size and target.vocab_size != d.vocab_size:
        raise ConvertError(
            target.path, f"target vocab {target.vocab_size} ≠ drafter vocab {d.vocab_size}: this drafter was not trained for this target"
        )


def plan_vocab_maps(plan: Plan, Vd: int | None) -> None:  # noqa: N803 - the paper's names
    """d2t/t2d: dropped where the layout has no map for a full vocab, t2d derived from d2t where the layout wants one."""
    d, layout = plan.drafter, plan.layout
    V = d.vocab_size or d.vocab_from_keys
    full_vocab = V is not None and Vd is not None and V == Vd
    keep_maps = not (full_vocab and layout.vocab_map_only_if_reduced)
    if "d2t" in d.tensors and not keep_maps:
        for n in ("d2t", "t2d"):
            if n in d.tensors:
                plan.dropped.append(
                    (d.source_names[n], f"draft vocab = target vocab ({V}): {layout.name} has no vocab map then (vLLM ≥ 0.32 raises on it)")
                )
    if "d2t" in d.tensors and keep_maps and layout.writes_t2d and "t2d" not in d.tensors and V:
        plan.derive_t2d = V
    if "t2d" in d.tensors and not layout.writes_t2d:
        plan.dropped.append((d.source_names["t2d"], f"{layout.name} does not use t2d"))
    if not full_vocab and "d2t" not in d.tensors:
        plan.warnings.append(
            f"reduced draft vocab ({Vd} < {V}) without d2t: no engine can map draft ids to target ids; the output keeps this flaw"
        )


def plan_embedding(plan: Plan, embed: str, target_ckpt: Checkpoint | None) -> None:
    """--embed keep (warn when it looks freshly initialised), drop, or target (the target's table)."""
    d = plan.drafter
    if "embed_tokens.weight" not in d.tensors:
        if embed == "target":
            plan.notes.append("embed_tokens.weight added from the target")
        return
    emb = d.tensors["embed_tokens.weight"]
    stats = embed_stats(d)
    if embed == "drop":
        plan.dropped.append((d.source_names["embed_tokens.weight"], "--embed drop: engines then share the target's embedding"))
    elif embed == "target":
        te = _target_tensor(target_ckpt, "embed_tokens.weight")
        if te.shape != emb.shape or te.dtype != emb.dtype:
            raise ConvertError(
                target_ckpt.root, f"target embedding {te.dtype}{list(te.shape)} does not match the drafter's {emb.dtype}{list(emb.shape)}"
            )
        plan.notes.append(f"embed_tokens.weight replaced by the target's ({te.file.name}:{te.name})")
    elif stats is not None and stats.fresh:
        plan.warnings.append(
            f"embed_tokens.weight has the statistics of a fresh initialisation (std {stats.std:.4f} ≈ {stats.init}); carried as it is "
            "— check it against the target (--target with weights) or pass --embed drop|target"
        )


def plan_tensors(plan: Plan, embed: str, target_ckpt: Checkpoint | None) -> None:
    """Every kept tensor under its name in the destination layout (renamed / unchanged / transformed / added)."""
    d, layout = plan.drafter, plan.layout
    dropped = {n for n, _ in plan.dropped}
    for canon_name, info in d.tensors.items():
        src_name = d.source_names[canon_name]
        if src_name in dropped:
            continue
        new = to_layout(canon_name, layout)
        source, transform = info, None
        if canon_name == "d2t" and info.dtype == "I32":
            transform = "i32->i64"
            plan.transformed.append((new, "int32 → int64 offsets"))
        if canon_name == "embed_tokens.weight" and embed == "target":
            source = _target_tensor(target_ckpt, "embed_tokens.weight")
        plan.tensors.append(OutTensor(new, source, transform=transform))
        if source is not info:
            plan.added.append((new, "from the target, replacing the drafter's"))
        elif new != src_name:
            plan.renamed.append((src_name, new))
        elif transform is None:
            plan.unchanged.append(new)
    if embed == "target" and "embed_tokens.weight" not in d.tensors:
        te = _target_tensor(target_ckpt, "embed_tokens.weight")
        new = to_layout("embed_tokens.weight", layout)
        plan.tensors.append(OutTensor(new, te))
        plan.added.append((new, f"from the target ({te.file.name}:{te.name})"))
    if plan.derive_t2d is not None:
        plan.added.append((to_layout("t2d", layout), "derived from d2t"))
        plan.notes.append("t2d derived from d2t (True exactly at the target ids i + d2t[i])")


def plan_head(plan: Plan, Vd: int | None, target_ckpt: Checkpoint | None) -> None:  # noqa: N803
    """A missing lm_head: the target's head as it is (full vocab), or its rows i + d2t[i] (reduced)."""
    d = plan.drafter
    if "lm_head.weight" in d.tensors:
        return
    th = _target_head(target_ckpt)
    if th is None:
        plan.warnings.append(
            "no lm_head.weight: engines that do not borrow the target head will run a random head "
            "(SGLang with draft_vocab_size set); a reduced vocab cannot borrow it at all — pass --target with weights to add it"
        )
        return
    new = to_layout("lm_head.weight", plan.layout)
    if Vd == th.shape[0] and "d2t" not in d.tensors:
        plan.tensors.append(OutTensor(new, th))
        plan.added.append((new, f"the target's head ({th.file.name}:{th.name})"))
    elif "d2t" in d.tensors:
        rows = [i + o for i, o in enumerate(int_values(d.tensors["d2t"]))]
        if any(not 0 <= r < th.shape[0] for r in rows):
            raise ConvertError(d.tensors["d2t"].file, "d2t maps outside the target head's rows: cannot build lm_head from it")
        plan.gather_head = HeadRows(new, th, rows)
        plan.added.append((new, f"rows i + d2t[i] of the target's head ({th.file.name}:{th.name}), {len(rows)} × {th.shape[1]}"))
    else:
        plan.warnings.append(f"no lm_head.weight and no d2t for a {Vd}-row draft vocab: cannot pick the target head's rows")


def plan_config(plan: Plan, canon, era_version: tuple | None, target: TargetInfo | None) -> None:
    """The destination config.json: aux ids placed where and how the engine version reads them on this target."""
    ids = None
    if era_version and target and canon.boundaries is not None and target.num_layers and plan.layout.aux_ids_where == "eagle_config":
        era, version = era_version
        ids = _aux_ids_for_engine(canon.boundaries, era.engine, version, target)
        if ids is None:
            plan.warnings.append(
                f"no eagle_config ids make {era.engine} {version} capture boundaries {canon.boundaries} on {target.architecture}"
            )
        elif ids != [b - 1 for b in canon.boundaries]:
            plan.notes.append(
                f"aux ids written as {ids} so {era.engine} {version} on {target.architecture} captures boundaries {canon.boundaries}"
            )
    if target and canon.verifier.get("name_or_path") in (None, ""):
        canon.verifier = {"name_or_path": str(target.path), "architectures": [target.architecture] if target.architecture else []}
    hidden_note = settle_target_hidden(canon, plan.drafter, target.hidden_size if target else None)
    plan.config, notes = write_config(canon, plan.layout, ids)
    if hidden_note and (plan.layout.config_style == "speculators" or canon.target_hidden_size):
        plan.notes.append(hidden_note + "; written explicitly")
    plan.notes.append(canon.boundaries_note)
    plan.notes.append(canon.norm_before_residual_note)
    plan.warnings.extend(notes)


def _target_head(target_ckpt: Checkpoint | None) -> TensorInfo | None:
    """The target's output head; tied models (SmolLM2) have only the embedding, which is the head."""
    if target_ckpt is None:
        return None
    names = target_ckpt.tensors
    for suffix in ("lm_head.weight", "embed_tokens.weight"):
        for n, t in names.items():
            if n.endswith(suffix) and len(t.shape) == 2:
                return t
    return None


def _target_tensor(target_ckpt: Checkpoint | None, suffix: str) -> TensorInfo:
    if target_ckpt is None:
        raise ConvertError(None, "--embed target needs --target pointing at a directory with the target's weights")
    for n, t in target_ckpt.tensors.items():
        if n.endswith(suffix):
            return t
    raise ConvertError(target_ckpt.root, f"the target has no tensor ending in {suffix!r}")


def t2d_bytes(d2t: TensorInfo, vocab: int) -> bytes:
    ids = [i + o for i, o in enumerate(int_values(d2t))]
    out = bytearray(vocab)
    for t in ids:
        if not 0 <= t < vocab:
            raise ConvertError(d2t.file, f"d2t maps draft id to {t}, outside the vocab [0, {vocab}): cannot derive t2d")
        out[t] = 1
    return bytes(out)
