"""One checkpoint as every command reads it, worked out once: the family its evidence shows (families/detect.py),
the canonical description with the flattened config and geometry (layouts/canonical.py), and what it holds for the
engine rows' expressions. The CLI builds it right after opening and hands it down to the guard, the rules, the
simulator, inspect, convert, eval and launch, so no consumer describes, flattens or detects again."""

from __future__ import annotations

import os

from .checkpoint.reader import Checkpoint, open_checkpoint
from .engines.facts import checkpoint_facts
from .families.detect import FamilyVerdict, detect_family
from .families.table import Family
from .layouts.canonical import Drafter, describe
from .record import record


@record
class CheckpointView:
    """A checkpoint, its family verdict and evidence, its canonical description (layout, geometry, the flat
    config in `drafter.cfg`), and the facts the engine rows read (`has_embed`, …; simulate.ROW_NAMES)."""

    ckpt: Checkpoint
    verdict: FamilyVerdict
    drafter: Drafter
    facts: dict[str, bool]

    @property
    def family(self) -> Family | None:
        return self.verdict.family

    @property
    def flat(self) -> dict:
        """The draft's fields as one flat dict (layouts.canonical.flat_config), flattened once by describe."""
        return self.drafter.cfg


def read_view(ckpt: Checkpoint) -> CheckpointView:
    """Describe `ckpt` once: its family, its canonical description, its facts."""
    verdict = detect_family(ckpt.config, {n: t.shape for n, t in ckpt.tensors.items()}, str(ckpt.root))
    return CheckpointView(ckpt, verdict, describe(ckpt), checkpoint_facts(ckpt))


def open_view(path: str | os.PathLike) -> CheckpointView:
    """open_checkpoint, then read_view: what every library caller of check / simulate starts from."""
    return read_view(open_checkpoint(path))
