"""`check` of a target that carries an MTP head: the head found from the index, loaded through each engine
release's MTP rows, with the M rules. A target is hundreds of shards: only the head's shards' headers are read."""

from __future__ import annotations

import sys
from typing import NamedTuple

from ..checkpoint.errors import CheckpointError
from ..checkpoint.index import TargetIndex, index_first_or_none
from ..families.detect import FamilyVerdict, detect_family
from ..families.mtp import MtpHead, head_of
from ..families.mtp_view import index_keys, mtp_view
from ..families.table import BY_NAME
from .mtp_inspect import mtp_family


def _read_index(path, forced: bool) -> TargetIndex | None:
    """The target's index read first (no shard header of a sharded one); None for anything else unless forced."""
    try:
        idx = index_first_or_none(path, index_keys)
    except CheckpointError:
        if forced:
            raise
        return None  # the checkpoint reader says what is wrong with it, in its own words
    if idx is None and forced:
        raise CheckpointError(str(path), "--mtp reads a safetensors target (config.json and its index or model.safetensors)")
    return idx


def mtp_index(path, forced: bool) -> TargetIndex | None:
    """The target's index when its evidence says MTP (or `--mtp` says to read it as one); None having read no shard."""
    idx = _read_index(path, forced)
    if idx is None:
        return None
    return idx if forced or mtp_family(idx.config, idx.weight_map) is not None else None


class MtpProbe(NamedTuple):
    """A target read index-first, with the head found in it and the family verdict on its names: worked out once by
    the probe and handed to the check, which neither finds nor detects again."""

    index: TargetIndex
    head: MtpHead
    verdict: FamilyVerdict


def mtp_probe(path, forced: bool) -> MtpProbe | None:
    """mtp_index, keeping the head and the verdict it was decided on (mtp_family's test: a head announced or named,
    and the names read as the MTP family); None having read no shard."""
    idx = _read_index(path, forced)
    if idx is None:
        return None
    head = head_of(idx)
    if not forced and not (head.announced or head.layers):
        return None
    verdict = detect_family(idx.config, dict.fromkeys(idx.weight_map, ()))  # the target's, from its whole index
    if not forced and (verdict.family is None or verdict.family.checker != "head"):
        return None
    return MtpProbe(idx, head, verdict)


class HeadOnly(Exception):
    """No engine release asked for has a modelled class for this target's head: what the files alone say (the
    checkpoint-scope M rules) is still worth saying — a head announced and absent is broken on every engine.
    `check` receives it as an answer (mtp_outcome); check_mtp raises it for its callers."""

    def __init__(self, head, verdict, findings, why: str):
        super().__init__(why)
        self.head, self.verdict, self.findings, self.why = head, verdict, findings, why


def mtp_outcome(probe: MtpProbe, path, specs, target, launch):
    """(results, skipped, head, verdict, the head as a CheckpointView) of the MTP head's check on every requested
    engine version, or a HeadOnly answer when none of them models the head's class."""
    from ..engines.facts import checkpoint_facts
    from ..engines.registry import NotModelled
    from ..layouts.canonical import describe
    from ..rules.check import check_family
    from ..view import CheckpointView

    head, verdict = probe.head, probe.verdict
    ckpt = mtp_view(probe.index, head)
    view = CheckpointView(ckpt, verdict, describe(ckpt), checkpoint_facts(ckpt))  # described once, handed down
    try:
        results, skipped = check_family(view, specs, BY_NAME["mtp"], str(path), target=target, launch=launch, mtp=head)
    except NotModelled as e:
        return HeadOnly(head, verdict, head_findings(view, head, str(path)), str(e))
    return results, skipped, head, verdict, view


def check_mtp(idx: TargetIndex, path, specs, target, launch, probe: MtpProbe | None = None):
    """mtp_outcome for an index (`probe`: the one mtp_probe read, whose head and verdict are used as they are);
    raises HeadOnly when no requested engine version models the head's class."""
    if probe is None:
        probe = MtpProbe(idx, head_of(idx), detect_family(idx.config, dict.fromkeys(idx.weight_map, ())))
    got = mtp_outcome(probe, path, specs, target, launch)
    if isinstance(got, HeadOnly):
        raise got
    return got


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
