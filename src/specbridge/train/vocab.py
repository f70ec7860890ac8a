"""Draft vocabulary: the Vd most frequent target ids, as d2t offsets and a t2d mask.

Same rule as speculators' build_vocab_mappings_from_distribution: take the Vd most frequent
ids (ties broken by lower id, padded with unseen ids 0, 1, ... if fewer were seen), sort them
ascending, d2t[i] = used[i] - i (int64, so target_id = i + d2t[i]), t2d = bool mask over V.
"""

from __future__ import annotations

import torch


def build_vocab_map(counts: torch.Tensor, draft_vocab_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    vocab_size = counts.numel()
    if not 0 < draft_vocab_size <= vocab_size:
        raise ValueError(f"draft vocab size {draft_vocab_size} must be in [1, {vocab_size}]")
    # stable sort on -count keeps ascending id order among ties: lower id wins
    order = torch.argsort(-counts.to(torch.long), stable=True)
    used = torch.sort(order[:draft_vocab_size]).values.to(torch.long)
    d2t = used - torch.arange(draft_vocab_size, dtype=torch.long)
    t2d = torch.zeros(vocab_size, dtype=torch.bool)
    t2d[used] = True
    return d2t, t2d


def coverage(counts: torch.Tensor, t2d: torch.Tensor) -> float:
    """Share of the counted tokens that the draft vocab can propose at all."""
    total = int(counts.sum())
    return float(counts[t2d].sum()) / total if total else 0.0
