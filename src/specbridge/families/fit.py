"""What a drafter reads from its target, family by family, as the drafter's own files state it: the width of the target
hidden states it takes and where that width is written, with what the engines do when the target's are another width.

Each family's module says it for its own family (`target_fit(ckpt)`); `fit_of(family, ckpt)` is the one place the
target-fit rules ask (rules/fit.py), so no rule names a family. A family absent here reads no target hidden state
(a plain draft model: its vocabulary and tokenizer are the T rules'), or is EAGLE-3, whose G rules say it.
The target layers a drafter reads are DFlash's D001; the vocabulary the engine builds its embedding and head with is read
from each release's rows (rule F002)."""

from __future__ import annotations

from collections.abc import Callable

from ..checkpoint.reader import Checkpoint
from . import dflash, eagle, medusa, mtp
from .reading import TargetFit


def _readers() -> dict[str, Callable[[Checkpoint], TargetFit | None]]:
    return {
        "dflash": dflash.target_fit,
        "dflash2": dflash.target_fit,  # DFlash plus a head: the same fc over the same target states
        "dspark": dflash.target_fit,  # 'DSpark extends DFlash' (speculators' update_dspark)
        "eagle": eagle.target_fit,
        "medusa": medusa.target_fit,
        "mtp": mtp.target_fit,
    }


# the families whose modules state a target fit (the families the F rules run for)
FIT_FAMILIES = ("dflash", "dflash2", "dspark", "eagle", "medusa", "mtp")


def fit_of(family: str, ckpt: Checkpoint) -> TargetFit | None:
    """The drafter's target fit as its family's module reads it; None for a family that states none, or files that do
    not say (no width written anywhere)."""
    reader = _readers().get(family)
    return reader(ckpt) if reader is not None else None
