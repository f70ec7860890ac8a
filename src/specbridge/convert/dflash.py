"""Plan a DFlash conversion: any DFlash layout to the one every engine release with a DFlash class reads, with
what a named release needs on top. Never into EAGLE-3 (another architecture), never a change that is not real.

The layouts seen (tests/fixtures/corpus-families):
- z-lab's (z-lab/dflash dflash/model.py, MiMo's DFlash): `layers.N.*`, `fc`, `hidden_norm`, `norm`, `DFlashDraftModel`,
  `dflash_config.{target_layer_ids, mask_token_id}`; MiMo adds `mask_embedding.pt` beside the weights;
- Muse Glimmer's (meta-models/Muse-Glimmer-30B-assistant): `encoder.fc`, `encoder.output_norm_enc`,
  `MuseGlimmerAssistantModel`, model_type muse_glimmer_assistant, mask/target ids top-level. vLLM reads it from
  0.29.0 (qwen3_dflash.py hf_to_vllm_mapper, registry), SGLang from 0.5.19 (dflash.py vendor aliases), not before;
- a `model.`-prefixed save: vLLM's DFlashQwen3ForCausalLM.load_weights prefixes every non-lm_head name with
  `model.` (0.27.0, 0.32.0), so `model.layers.0.…` becomes `model.model.layers.0.…` and raises; SGLang strips it;
- a trained mask row shipped as a `mask_embedding` tensor: vLLM skips that name unless mask_embedding.pt exists
  (load_weights orig_to_new_substr / skip_substrs), SGLang has no parameter for it: both lose it. The engines read the
  mask embedding from mask_embedding.pt only, in the forms checkpoint/maskfile.py describes.
The destination ("dflash") is z-lab's names and config with the mask embedding as mask_embedding.pt in the form both
engines read ({embedding, mask_token_id}), and, with --target, num_target_layers (SGLang 0.5.11-0.5.16 size and
check fc from it, else from the draft's own layer count: sglang/srt/models/dflash.py @ 0.5.16).
"""

from __future__ import annotations

import copy
from pathlib import Path

from ..checkpoint.errors import CheckpointError
from ..checkpoint.maskfile import MASK_FILE, MaskFile, mask_file_bytes, read_mask_file
from ..checkpoint.write import OutTensor
from ..engines.registry import NotModelled, family_builds, placements
from ..layouts.table import LAYOUTS, Layout
from ..record import replace
from .common import ConvertError, ConvertRefused, Plan

DFLASH_LAYOUT = Layout(
    "dflash",
    "z-lab's DFlash: layers.N.*, fc, hidden_norm, norm, DFlashDraftModel + dflash_config, mask_embedding.pt",
    (),
    "dflash",
    "DFlashDraftModel",
    "output-of-layer",
    "dflash_config",
    sources=(
        "z-lab/dflash@44947fb dflash/model.py",
        "vllm 0.27.0/0.32.0 qwen3_dflash.py",
        "sglang srt/models/dflash.py from 0.5.11 (the DFlash rows)",
    ),
)
DFLASH_LAYOUTS = {"dflash": DFLASH_LAYOUT}
MUSE_ARCHS = ("MuseGlimmerAssistantModel", "DFlashMuseGlimmerAssistantModel")
READ_ARCHS = ("DFlashDraftModel", *MUSE_ARCHS)  # the architectures every engine builds as the plain DFlash class
# Muse Glimmer's names for the fc fusion (vllm qwen3_dflash.py @ 0.29.0 hf_to_vllm_mapper; sglang dflash.py @ 0.5.19)
RENAMES = (("encoder.fc.", "fc."), ("encoder.output_norm_enc.", "hidden_norm."))
MOVED_TO_DFLASH_CONFIG = ("target_layer_ids", "mask_token_id")


def _dest_name(name: str) -> str:
    n = name.removeprefix("model.")
    for old, new in RENAMES:
        if n.startswith(old):
            return new + n[len(old) :]
    return n


def source_layout(ckpt) -> str:
    names = list(ckpt.tensors)
    arch = ((ckpt.config or {}).get("architectures") or [None])[0]
    if arch in MUSE_ARCHS or any(n.removeprefix("model.").startswith("encoder.") for n in names):
        return "muse"
    if names and all(n.startswith("model.") or n.startswith("lm_head") for n in names):
        return "dflash (model.-prefixed)"
    return "dflash"


def engine_class(engine: str, arch: str | None = None):
    """(label "name==version", the DFlash class row that release builds for `arch`) for --engine NAME==VERSION."""

    places, _ = placements(engine, "dflash", "DFlash", arch)
    if len(places) != 1 or "==" not in engine:
        raise ConvertError(None, f"--engine {engine} names {len(places)} engine versions; convert writes for one (NAME==VERSION)")
    fp = places[0]
    label = f"{fp.era.engine}=={fp.version}"
    if fp.row is None:
        raise ConvertError(None, f"{label} has no DFlash drafter class (the first release with one is {fp.first}): no layout loads there")
    if arch in fp.row.unmodelled_archs:
        raise NotModelled(f"{label} builds {fp.row.unmodelled_archs[arch]} for {arch!r}; specbridge does not model that class yet")
    built = fp.row.classes.get(family_builds(fp.row, arch) or "")
    return label, built or next(iter(fp.row.classes.values()))


def plan_dflash(view, to: str | None, engine: str | None, target=None, embed: str = "keep"):
    """Every step of a DFlash conversion, decided before a byte is written (convert/common.py's Plan)."""

    src = view.ckpt
    if embed != "keep":
        raise ConvertRefused(None, "--embed applies to EAGLE-3 drafters; a DFlash drafter's embedding is carried as it is")
    if to is not None and to not in DFLASH_LAYOUTS:
        if to in LAYOUTS:
            raise ConvertRefused(
                src.root,
                f"a DFlash drafter is not converted into the EAGLE-3 layout {to!r}: another architecture (block drafting over "
                "a mask token, not a chain); serve it as DFlash (--to dflash, or --engine NAME==VERSION)",
            )
        raise ConvertRefused(None, f"unknown layout {to!r}; a DFlash drafter converts to: {', '.join(DFLASH_LAYOUTS)}")
    label, cls = engine_class(engine, view.drafter.architecture) if engine else (None, None)
    cfg0 = src.config or {}
    plan = Plan(src, replace(view.drafter, layout=source_layout(src)), DFLASH_LAYOUT, label, [], {})
    plan.family = "dflash"
    mask_tensor = _plan_tensors(plan)
    plan.config, changes = _dflash_config(cfg0, target)
    plan.notes += changes
    mid = plan.config.get("dflash_config", {}).get("mask_token_id")
    _plan_mask(plan, mask_tensor, mid, cfg0.get("hidden_size"), label, cls)
    if "num_target_layers" not in plan.config and "num_target_layers" not in plan.config.get("dflash_config", {}):
        plan.warnings.append(
            "no num_target_layers: SGLang 0.5.11-0.5.16 then size and check fc by the draft's own layer count "
            "(pass --target to write the target's)"
        )
    if mid is None:
        plan.warnings.append("no mask_token_id in the config: vLLM refuses to start and SGLang resolves one from the tokenizer")
    _carry_remote_code(plan)
    plan.noop = not (plan.renamed or plan.dropped or plan.added or plan.transformed) and plan.config == cfg0
    if plan.noop:
        plan.notes.append(
            "nothing to change: the drafter is already in the DFlash layout "
            + (f"{label} reads" if label else "every DFlash release reads")
        )
    return plan


def _plan_tensors(plan) -> object | None:
    """Every weight under its z-lab name; the mask_embedding tensor set aside for the side file."""

    src = plan.src
    seen: dict[str, str] = {}
    mask_tensor = None
    for name, info in src.tensors.items():
        if "mask_hidden" in name:
            raise ConvertError(
                src.root,
                f"{name}: vLLM asserts a DFlash drafter ships no mask_hidden (qwen3_dflash.py load_weights); it is not a "
                "DFlash tensor, refusing to guess where it goes",
            )
        if name.removeprefix("model.") == "mask_embedding":
            mask_tensor = info
            plan.dropped.append((name, f"moved to {MASK_FILE}: vLLM skips this name without that file, SGLang has no parameter for it"))
            continue
        new = _dest_name(name)
        if new in seen:
            raise ConvertError(src.root, f"{seen[new]} and {name} both become {new}")
        seen[new] = name
        plan.tensors.append(OutTensor(new, info))
        (plan.renamed.append((name, new)) if new != name else plan.unchanged.append(new))
    return mask_tensor


def _dflash_config(cfg0: dict, target) -> tuple[dict, list[str]]:
    cfg = copy.deepcopy(cfg0)
    notes = []
    archs = cfg.get("architectures")
    arch = archs[0] if isinstance(archs, list) and archs else None
    if cfg.get("speculators_model_type") == "dflash":
        raise ConvertRefused(
            None,
            "a speculators DFlash drafter (speculators_model_type dflash): vLLM reads it as it is (speculators/algos.py "
            "update_dflash: aux ids - 1, sample_from_anchor, causal SWA); convert does not rewrite it for other engines yet",
        )
    if arch not in (None, *READ_ARCHS):
        raise ConvertRefused(
            None, f"architectures {archs}: not the plain DFlash class; convert reads DFlashDraftModel and Muse Glimmer's names"
        )
    if arch != "DFlashDraftModel":
        cfg["architectures"] = ["DFlashDraftModel"]
        notes.append(
            f"architectures {archs} → ['DFlashDraftModel'] (vLLM registers the Muse Glimmer names from 0.29.0, SGLang from 0.5.19; "
            "DFlashDraftModel in every release with a DFlash class)"
        )
    if cfg.get("model_type") == "muse_glimmer_assistant":
        cfg["model_type"] = "qwen3"
        notes.append("model_type muse_glimmer_assistant → qwen3 (transformers before 5.15 has no muse_glimmer_assistant config)")
    dc = dict(cfg.get("dflash_config") or {})
    for key in MOVED_TO_DFLASH_CONFIG:
        if key in cfg and (key not in dc or dc[key] == cfg[key]):
            dc[key] = cfg.pop(key)
            notes.append(f"{key} moved into dflash_config (where every release reads it first)")
    if dc != (cfg.get("dflash_config") or {}) or "dflash_config" in cfg:
        cfg["dflash_config"] = dc
    rp = cfg.get("rope_parameters")
    if "rope_theta" not in cfg and isinstance(rp, dict) and "rope_theta" in rp:
        cfg["rope_theta"] = rp["rope_theta"]
        notes.append(f"rope_theta {rp['rope_theta']} copied from rope_parameters (transformers before 5 reads it at the top level only)")
    if "num_target_layers" not in cfg and "num_target_layers" not in dc and target is not None and target.num_layers:
        cfg["num_target_layers"] = target.num_layers
        notes.append(f"num_target_layers {target.num_layers} from the target (SGLang 0.5.11-0.5.16 size fc and check the ids by it)")
    return cfg, notes


def _plan_mask(plan, mask_tensor, mid, hidden, label, cls) -> None:
    """mask_embedding.pt: carried as it is when both engines read it, rewritten as {embedding, mask_token_id} when
    only vLLM would (a bare tensor), written from a mask_embedding tensor; refused for a release that reads none."""

    src = plan.src
    side = _side_file(src, MASK_FILE)
    if side is not None and mask_tensor is not None:
        raise ConvertError(src.root, f"both {MASK_FILE} and a mask_embedding tensor: two mask embeddings, refusing to pick one")
    if side is None and mask_tensor is None:
        return
    if cls is not None and MASK_FILE not in cls.side_files:
        raise ConvertError(
            src.root,
            f"{label} reads no mask embedding from a drafter (its DFlash class reads no {MASK_FILE}; the mask slots get the "
            f"target's own embedding row): no drafter layout carries it there; convert for a release that reads {MASK_FILE} "
            "(vLLM 0.26+, SGLang 0.5.20+ from a local directory)",
        )
    mf: MaskFile | None = read_mask_file(side) if side is not None else None
    emb = mf.embedding if mf is not None else mask_tensor
    where = MASK_FILE if mf is not None else mask_tensor.name
    if mf is not None and mf.mask_token_id is not None and mid is not None and mf.mask_token_id != mid:
        raise ConvertError(
            side,
            f"names mask_token_id {mf.mask_token_id}, the config {mid}: vLLM and SGLang both raise; which one was trained is not known",
        )
    mid = mid if mid is not None else (mf.mask_token_id if mf is not None else None)
    if mid is None:
        raise ConvertError(src.root, f"a mask embedding ({where}) but no mask_token_id: cannot say which row it replaces")
    if hidden and emb.numel != hidden and not (mf is not None and mf.per_position):
        raise ConvertError(src.root, f"{where} has {emb.numel} elements, hidden_size is {hidden}: vLLM raises on it")
    if mf is not None and (mf.sglang_form or mf.per_position):
        plan.extra_files[MASK_FILE] = side.read_bytes()
        plan.unchanged.append(MASK_FILE)
    else:
        data = emb.read_at(0, emb.nbytes)
        plan.extra_files[MASK_FILE] = mask_file_bytes(emb.dtype, (emb.numel,), data, mid)
        plan.side_changed = True
        if mf is not None:
            plan.transformed.append((MASK_FILE, "a bare tensor → {embedding, mask_token_id}: SGLang 0.5.20+ reads only that form"))
        else:
            plan.added.append((MASK_FILE, f"from the {mask_tensor.name} tensor {emb.dtype}{list(emb.shape)}, with mask_token_id {mid}"))
    plan.mask_expect = (emb.read_at(0, emb.nbytes), emb.dtype, mid)


SIDE_FILE_LIMIT = 64 << 20  # a mask embedding is hidden_size values (MiMo's: 8 KB); a per-position table a few MB


def _side_file(src, name: str) -> Path | None:
    """A file beside the weights: in the directory, or from a Hub source's repository (downloaded into the HF cache
    after its listed size is checked: SGLang reads mask_embedding.pt from a local directory only)."""
    if src.hub is None:
        root = src.root if src.root.is_dir() else src.root.parent
        return root / name if (root / name).is_file() else None
    from ..checkpoint.hub import resolve, small_file

    listing = resolve(src.hub)
    return small_file(src.hub, name, listing, SIDE_FILE_LIMIT) if name in listing.names else None


def _carry_remote_code(plan) -> None:
    """The auto_map modules beside the weights (dflash.py for trust_remote_code) come along unchanged."""
    src = plan.src
    mods = {v.split(".")[0] for v in ((src.config or {}).get("auto_map") or {}).values() if isinstance(v, str)}
    for m in sorted(mods):
        f = _side_file(src, f"{m}.py")
        if f is not None and f.stat().st_size < (1 << 20):
            plan.extra_files[f.name] = f.read_bytes()


def verify_side_files(plan, dst: Path) -> list[str]:
    """The mask embedding file re-read from the destination (no unpickling) and compared with its source."""
    if plan.mask_expect is None:
        return []
    data, dtype, mid = plan.mask_expect
    try:
        mf = read_mask_file(dst / MASK_FILE)
        got = mf.embedding.read_at(0, mf.embedding.nbytes)
    except CheckpointError as e:
        return [f"{MASK_FILE}: {e.message}"]
    problems = []
    if got != data or mf.embedding.dtype != dtype:
        problems.append(f"{MASK_FILE}: the embedding differs from its source")
    if mf.mask_token_id != mid and not mf.per_position:
        problems.append(f"{MASK_FILE}: mask_token_id {mf.mask_token_id}, expected {mid}")
    return problems
