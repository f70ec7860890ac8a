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
from .mtp_inspect import mtp_family


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
    return idx if forced or mtp_family(idx.config, idx.weight_map) is not None else None


class HeadOnly(Exception):
    """No engine release asked for has a modelled class for this target's head: what the files alone say (the
    checkpoint-scope M rules) is still worth saying — a head announced and absent is broken on every engine."""

    def __init__(self, head, verdict, findings, why: str):
        super().__init__(why)
        self.head, self.verdict, self.findings, self.why = head, verdict, findings, why


def check_mtp(idx: TargetIndex, path, specs, target, launch):
    """(results, skipped, head, verdict, the head as a CheckpointView) of the MTP head's check on every requested
    engine version; HeadOnly when none of them models the head's class."""
    from ..engines.registry import NotModelled
    from ..engines.simulate import checkpoint_facts
    from ..layouts.canonical import describe
    from ..rules.check import check_family
    from ..view import CheckpointView

    head = head_of(idx)
    ckpt = mtp_view(idx, head)
    verdict = detect_family(idx.config, dict.fromkeys(idx.weight_map, ()))  # the target's, from its whole index
    view = CheckpointView(ckpt, verdict, describe(ckpt), checkpoint_facts(ckpt))  # described once, handed down
    try:
        results, skipped = check_family(view, specs, BY_NAME["mtp"], str(path), target=target, launch=launch, mtp=head)
    except NotModelled as e:
        raise HeadOnly(head, verdict, head_findings(view, head, str(path)), str(e)) from None
    return results, skipped, head, verdict, view


def head_findings(view, head, path: str) -> list:
    """The rules that read the files alone (announced vs shipped layers, whole layers), run once."""
    from ..rules.context import Context
    from ..rules.registry import CHECKPOINT, run

    return run(CHECKPOINT, Context(view, path=path, family="mtp", mtp=head))


def print_head_only(e: HeadOnly, as_json: bool) -> int:
    """The head's own findings when no engine class is modelled: exit 1 with an error among them, else 2 (nothing an
    engine does was checked)."""
    from .contract import print_json

    errors = [f for f in e.findings if f.severity == "error"]
    if as_json:
        print_json(
            "check",
            {
                "ok": False,
                "family": e.verdict.to_json(),
                "mtp": e.head.to_json(),
                "findings": [f.to_json() for f in e.findings],
                "results": [],
                "not_checked": [e.why],
            },
        )
    else:
        print_head(e.head)
        for f in e.findings:
            sys.stdout.write(f"{f.code} {f.severity}: {f.message}\n" + (f"    fix: {f.fix}\n" if f.fix else ""))
        sys.stderr.write(f"note: {e.why}\n")
    return 1 if errors else 2


def print_head(head) -> None:
    found = ", ".join(str(layer.index) for layer in head.layers) or "none"
    sys.stdout.write(
        f"MTP head: {head.style}; announced {head.announced}{f' ({head.announced_by})' if head.announced_by else ''}, "
        f"found layers {found}; read {head.bytes_read} bytes in {head.headers_read} shard header(s), no tensor data\n"
    )
    for note in head.index_notes:
        sys.stdout.write(f"  {note}\n")
