"""The drafter's embedding judged by its statistics (and against the target's table when its weights are
at hand): one helper for `check` (E002/E003) and `convert` (the fresh-initialisation warning)."""

from __future__ import annotations

from ..checkpoint.errors import CheckpointError
from ..checkpoint.target import TargetInfo
from ..checkpoint.values import mean_std, row_bytes, sample_rows
from ..record import record
from .canonical import Drafter


@record
class EmbedStats:
    """embed_tokens sampled (16 rows) and compared with the target's table: what E002/E003 judge."""

    mean: float
    std: float
    init: float  # the config's initializer_range (0.02 when absent)
    differs: bool | None  # from the target's table; None when no target weights to compare with

    @property
    def fresh(self) -> bool:
        """Looks like a fresh initialisation: mean ≈ 0 and std ≈ initializer_range."""
        return abs(self.mean) < 0.1 * self.init and abs(self.std - self.init) < 0.15 * self.init


def embed_stats(d: Drafter, target: TargetInfo | None = None) -> EmbedStats | None:
    emb = d.tensors.get("embed_tokens.weight")
    if emb is None or len(emb.shape) != 2 or emb.dtype not in ("BF16", "F16", "F32"):
        return None
    _, rows = sample_rows(emb, 16)
    mean, std = mean_std(rows)
    init = d.cfg.get("initializer_range", 0.02) if isinstance(d.cfg.get("initializer_range", 0.02), (int, float)) else 0.02
    differs = None
    if target and target.weights_dir:
        from ..checkpoint.reader import open_checkpoint

        try:
            tck = open_checkpoint(target.weights_dir)
            te = next((x for n, x in tck.tensors.items() if n.endswith("embed_tokens.weight")), None)
            if te is not None and te.shape == emb.shape and te.dtype == emb.dtype:
                idx = list(range(0, emb.shape[0], max(1, emb.shape[0] // 16)))[:16]
                differs = row_bytes(te, idx) != row_bytes(emb, idx)
        except CheckpointError:
            differs = None
    return EmbedStats(mean, std, init, differs)
