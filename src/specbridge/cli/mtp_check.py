"""`check` of a target that carries an MTP head: the head found from the index, loaded through each engine
release's MTP rows, with the M rules. A target is hundreds of shards: only the head's shards' headers are read."""

from __future__ import annotations

import sys

from ..checkpoint.errors import CheckpointError
from ..checkpoint.index import TargetIndex, index_first_or_none
from ..families.detect import detect_family
from ..families.mtp import head_of
from ..families.mtp_view import index_keys, mtp_view
from ..families.table import BY_NAME


def mtp_index(path, forced: bool) -> TargetIndex | None:
    """The target's index when its evidence says MTP (or `--mtp` says to read it as one); None having read no shard."""
    try:
        idx = index_first_or_none(path, index_keys)
    except CheckpointError:
        if forced:
            raise
        return None  # the checkpoint reader says what is wrong with it, in its own words
    if idx is None:
        if forced:
            raise CheckpointError(str(path), "--mtp reads a safetensors target (config.json and its index or model.safetensors)")
        return None
    v = detect_family(idx.config, dict.fromkeys(idx.weight_map, ()))
    return idx if forced or (v.family is not None and v.family.name == "mtp") else None


def check_mtp(idx: TargetIndex, path, specs, target, launch):
    """(results, skipped, head, verdict, the head as a checkpoint) of the MTP head's check on every requested engine version."""
    from ..rules.check import check_family

    head = head_of(idx)
    view = mtp_view(idx, head)
    verdict = detect_family(idx.config, dict.fromkeys(idx.weight_map, ()))
    results, skipped = check_family(view, specs, BY_NAME["mtp"], str(path), target=target, launch=launch, mtp=head)
    return results, skipped, head, verdict, view


def print_head(head) -> None:
    found = ", ".join(str(layer.index) for layer in head.layers) or "none"
    sys.stdout.write(
        f"MTP head: {head.style}; announced {head.announced}{f' ({head.announced_by})' if head.announced_by else ''}, "
        f"found layers {found}; read {head.bytes_read} bytes in {head.headers_read} shard header(s), no tensor data\n"
    )
    for note in head.index_notes:
        sys.stdout.write(f"  {note}\n")
