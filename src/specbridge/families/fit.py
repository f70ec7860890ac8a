"""What a drafter reads from its target, family by family, as the drafter's own files state it: the width of the target
hidden states it takes and where that width is written, with what the engines do when the target's are another width.

Each family's module says it for its own family (`target_fit(ckpt)`), and the family's row names that module
(families/table.py target_fit); `fit_of(family, ckpt)` is the one place the target-fit rules ask (rules/fit.py), so no
rule names a family. A family whose row names none reads no target hidden state (a plain draft model: its vocabulary
and tokenizer are the T rules'), or is EAGLE-3, whose G rules say it.
The target layers a drafter reads are DFlash's D001; the vocabulary the engine builds its embedding and head with is read
from each release's rows (rule F002)."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module

from ..checkpoint.reader import Checkpoint
from .reading import TargetFit
from .table import FAMILIES


def _readers() -> dict[str, Callable[[Checkpoint], TargetFit | None]]:
    """Each family's target_fit, from the module its row names (DFlash2 and DSpark: DFlash's, the same fc over the
    same target states)."""
    return {f.name: import_module(f"specbridge.families.{f.target_fit}").target_fit for f in FAMILIES if f.target_fit}


# the families whose modules state a target fit (the families the F rules run for)
FIT_FAMILIES = tuple(f.name for f in FAMILIES if f.target_fit)


def fit_of(family: str, ckpt: Checkpoint) -> TargetFit | None:
    """The drafter's target fit as its family's module reads it; None for a family that states none, or files that do
    not say (no width written anywhere)."""
    reader = _readers().get(family)
    return reader(ckpt) if reader is not None else None
