"""Inputs that are checkpoints but not drafters: recognised at the door and refused with one line that
says what they look like, instead of being read as some layout and "converted" into a broken drafter."""

from __future__ import annotations

import re

from ..later import Later
from .contract import CliError

DRAFT_ARCH = Later(r"eagle|speculator|draft|mtp", re.I)


def full_lm_reason(ckpt, d) -> str | None:
    """Why this checkpoint is a whole causal LM rather than an EAGLE-3 drafter, or None.

    A drafter has an fc fusion, a vocab map or a `midlayer`, and one or a few decoder layers; a target
    has many decoder layers and none of the drafter's parts."""
    names = ckpt.tensors
    drafter_parts = any(n.split(".")[-2:-1] == ["fc"] or n.startswith(("fc.", "model.fc.")) for n in names) or any(
        n in ("d2t", "t2d", "model.d2t", "model.t2d") or ".midlayer." in f".{n}" for n in names
    )
    if drafter_parts or d.layers_in_keys < 2 or (d.architecture and DRAFT_ARCH.search(d.architecture)):
        return None
    return (
        f"{d.architecture or 'a causal LM'} with {d.layers_in_keys} decoder layers and no fc fusion, vocab map or midlayer: "
        "a full model (a target?), not an EAGLE-3 drafter"
    )


def refuse_non_drafter(view, command: str, read_here: tuple[str, ...] | None = None):
    """The checkpoint's drafter family (the view's verdict, families/detect.py), or a one-line refusal (exit 2)
    saying what was seen: a full model, no known family, evidence that fits two families, a family specbridge
    does not model, or one `command` does not read (`read_here`: by default the families whose row says
    `command` reads them, families/table.py readers). A checkpoint is never read as a family its evidence does
    not show."""
    from ..families.table import readers

    read_here = readers(command) if read_here is None else read_here
    ckpt, v = view.ckpt, view.verdict
    if v.not_drafter:
        raise CliError(f"{ckpt.root}: {v.not_drafter}; nothing was read as a drafter ({command} reads drafters)")
    if v.family is not None and v.family.checker == "head" and v.family.name not in read_here:  # a target with a head
        raise CliError(
            f"{ckpt.root}: a target carrying its own MTP head ({'; '.join(v.evidence)}); {command} does not read MTP heads "
            "(inspect, check and launch read them from the target)"
        )
    why = full_lm_reason(ckpt, view.drafter)
    if why:
        raise CliError(f"{ckpt.root}: looks like {why}; pass a drafter here (and a target as --target)")
    ev = "; ".join(v.evidence)
    if v.candidates:
        raise CliError(f"{ckpt.root}: the evidence fits {' and '.join(v.candidates)} equally ({ev}); not read as either")
    if v.family is None:
        raise CliError(f"{ckpt.root}: fits no drafter family specbridge knows (saw {v.seen}); nothing was checked")
    if v.family.checker == "draft_model":
        raise CliError(f"{ckpt.root}: looks like a {v.family.title} ({ev}), not a drafter; pass a drafter here (and a target as --target)")
    if not v.family.modelled:
        raise CliError(
            f"{ckpt.root}: a {v.family.title} drafter ({ev}); specbridge does not model {v.family.title} loading yet, "
            "so nothing was checked (it reads EAGLE-3, DFlash, DFlash2, DSpark and EAGLE-1/2 drafters)"
        )
    if v.mislabel is not None and command in ("convert", "eval"):  # it would be rewritten / built as the wrong network
        from ..families.table import BY_NAME

        shown, named = BY_NAME[v.mislabel.shown].short, BY_NAME[v.mislabel.named].short
        raise CliError(
            f"{ckpt.root}: architectures[0] {v.mislabel.arch!r} names the {named} family but the tensors are {shown} "
            f"tensors ({'; '.join(v.mislabel.evidence)}); {command} does not read one family's tensors as another's: give "
            f"the config the {shown} architecture (`specbridge check` names the one each engine builds, L017)"
        )
    if v.family.name not in read_here:
        from ..families.table import FAMILIES

        reads = " and ".join(f.title for f in FAMILIES if f.name in read_here)
        raise CliError(
            f"{ckpt.root}: a {v.family.title} drafter ({ev}); {command} reads {reads} drafters{' only so far' if len(read_here) == 1 else ''}"
        )
    return v


def refuse_drafter_as_target(info) -> None:
    """A drafter given as --target (drafter and target swapped) would make every rule compare wrong things."""
    cfg = info.config
    arch = info.architecture or ""
    if DRAFT_ARCH.search(arch) or "speculators_config" in cfg or "eagle_config" in cfg:
        raise CliError(
            f"{info.path}: --target looks like an EAGLE-3 drafter ({arch or 'speculators config'}), not a target model; "
            "were drafter and target swapped?"
        )
