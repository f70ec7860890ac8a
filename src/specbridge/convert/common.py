"""What every conversion planner fills and raises: the Plan (every change listed) and the two refusals.

Why a module of its own: the family planners (dflash.py, eagle1.py) build a Plan and raise these errors,
and plan.py dispatches to them; holding the shared pieces here keeps the arrows one way
(plan -> family planners -> common) instead of a circle through plan.py."""

from __future__ import annotations

from pathlib import Path

from ..checkpoint.errors import CheckpointError
from ..checkpoint.reader import Checkpoint
from ..checkpoint.safetensors import TensorInfo
from ..checkpoint.write import OutTensor
from ..layouts.canonical import Drafter
from ..layouts.table import Layout
from ..record import field, record


class ConvertError(CheckpointError):
    """The conversion cannot be done as asked (exit 1): the message says why and what would."""


@record
class HeadRows:
    """lm_head built from the target's head: these rows of `source`, in draft-id order, named `name`."""

    name: str
    source: TensorInfo
    rows: list[int]


@record(frozen=False)
class Plan:
    src: Checkpoint
    drafter: Drafter
    layout: Layout
    engine: str | None  # "sglang==0.5.11" when converting for an engine version
    tensors: list[OutTensor]
    config: dict
    renamed: list[tuple[str, str]] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    dropped: list[tuple[str, str]] = field(default_factory=list)  # (name, why)
    added: list[tuple[str, str]] = field(default_factory=list)  # (name, from where)
    transformed: list[tuple[str, str]] = field(default_factory=list)  # (name, transform)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    derive_t2d: int | None = None  # write a t2d of this many entries computed from d2t
    gather_head: HeadRows | None = None  # build lm_head from the target head's rows i + d2t[i]
    family: str = "eagle3"
    extra_files: dict[str, bytes] = field(default_factory=dict)  # small files written beside the weights (mask_embedding.pt)
    zeros: list = field(default_factory=list)  # tensors of zeros to write (convert/eagle1.py Zeros: SGLang's fc.bias)
    side_changed: bool = False  # an extra file differs from the source's (a header rename in place cannot do it)
    mask_expect: tuple | None = None  # (embedding bytes, dtype, mask id) the written mask_embedding.pt must hold
    noop: bool = False  # nothing to change: no file is written
    copy_files: dict[str, Path] = field(default_factory=dict)  # the checkpoint's other files, carried as they are (-o)
    not_copied: list[tuple[str, str]] = field(default_factory=list)  # (name, why) of entries beside the weights left out

    @property
    def names_only(self) -> bool:
        """Only tensor names change: a header rewrite in place can do it."""
        return not (self.dropped or self.added or self.transformed or self.side_changed) and len(self.tensors) == len(self.src.tensors)

    def summary(self) -> list[str]:
        lines = []
        if self.renamed:
            groups: dict[tuple[str, str], int] = {}
            for old, new in self.renamed:
                groups[_prefix_change(old, new)] = groups.get(_prefix_change(old, new), 0) + 1
            lines.append(
                f"renamed {len(self.renamed)}: "
                + "; ".join(f"{a}* → {b}*" + (f" ({n})" if len(groups) > 1 else "") for (a, b), n in groups.items())
            )
        if self.unchanged:
            lines.append(f"unchanged {len(self.unchanged)}: " + ", ".join(self.unchanged))
        for name, why in self.transformed:
            lines.append(f"transformed: {name} ({why})")
        for name, why in self.dropped:
            lines.append(f"dropped: {name} ({why})")
        for name, src in self.added:
            lines.append(f"added: {name} ({src})")
        return lines


def _prefix_change(old: str, new: str) -> tuple[str, str]:
    i = 0
    while i < min(len(old), len(new)) and old[-1 - i] == new[-1 - i]:
        i += 1
    # the shared tail starts at a dot: keep the dot with the prefixes ("layers.0." → "midlayer.")
    while i > 0 and old[len(old) - i] != ".":
        i -= 1
    if i > 0:
        i -= 1
    return old[: len(old) - i], new[: len(new) - i]


class ConvertRefused(CheckpointError):
    """A request convert refuses as asked (exit 2): the family or layout does not fit."""
