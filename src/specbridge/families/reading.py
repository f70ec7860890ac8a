"""What a family module answers with and reads a checkpoint by: the TargetFit answer (families/fit.py asks each
family's `target_fit`), and the small readers of config values and tensor shapes the family modules share.

A leaf: the family modules import it and families/fit.py imports them, so these shared pieces live below both."""

from __future__ import annotations

from ..checkpoint.reader import Checkpoint
from ..record import record


@record
class TargetFit:
    """`hidden`: the width of one target hidden state the drafter takes; `source`: where its files say so (a config
    key, a tensor's shape); `effect`: what the engine does with target states of another width, and how that is known
    (the engine source, or 'inferred')."""

    hidden: int
    source: str
    effect: str


def config_int(cfg: dict, *keys: str) -> tuple[int | None, str | None]:
    """The first of `keys` the config holds as a positive integer, with its key."""
    for k in keys:
        v = cfg.get(k)
        if type(v) is int and v > 0:
            return v, k
    return None, None


def tensor_shape(ckpt: Checkpoint, suffix: str) -> tuple[int, ...] | None:
    """The shape of the tensor whose name is `suffix` (with or without a `model.` prefix)."""
    for name, info in ckpt.tensors.items():
        if name.removeprefix("model.") == suffix:
            return tuple(info.shape)
    return None
