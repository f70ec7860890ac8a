"""R rules: the engine version itself. Every placement that is not a plain, modelled release is said,
so an answer for `sglang==0.5.99` or a bare `sglang` never looks more certain than it is."""

from __future__ import annotations

from collections.abc import Iterator

from ..engines.registry import NEWER, NEWEST, PRERELEASE, modelled_range, release_read, releases_read
from ..engines.spec import parse_version
from .context import Context
from .findings import INFO, WARNING
from .registry import Hit, rule


@rule(
    "R001",
    "engine version newer than the newest release modelled",
    severity=WARNING,
    fix="pin a modelled release (`specbridge engines` lists the range; a mistyped version lands here too); for a release "
    "the tables do not model, `specbridge verify` says what the installed engine itself loads; or add the release's rows "
    "(`docs/engines.md`). `--fail-on warning` makes this a failure (the strict CI gate, `docs/ci.md`).",
)
def newer_than_modelled(c: Context) -> Iterator[Hit]:
    """Warning: `--engine NAME==VERSION` names a release after the newest one whose source was read. It is checked
    against the newest era, which may no longer describe it: a release that changed loading can drop, refuse
    or leave random what this report says loads, and a mistyped version (`sglang==9.9`) is answered the same way.
    A warning, not an error: the newest era is the best answer there is; `--fail-on warning` fails a CI run on it.
    """
    place = c.place
    if place is not None and place.how == NEWER:
        first, newest = modelled_range(place.era.engine)
        yield Hit(
            WARNING,
            f"{place.era.engine} {place.version} is newer than the newest release modelled ({newest}): checked against the "
            f"{place.era.name} era, which may no longer describe it",
            f"pin a modelled release (`specbridge engines` lists {first} – {newest}; is {place.version} a typo?); for a release the "
            "tables do not model, `specbridge verify` says what the installed engine itself loads",
        )


@rule(
    "R002",
    "engine version not given: the newest modelled release assumed",
    severity=INFO,
    fix="none needed — the answer is right for that release; to have it for the release you deploy, pin it: `--engine NAME==VERSION`.",
)
def newest_assumed(c: Context) -> Iterator[Hit]:
    """Information: `--engine NAME` without a version is answered for the newest modelled release (the message
    names it and its era).
    """
    place = c.place
    if place is not None and place.how == NEWEST:
        name = place.era.engine
        yield Hit(
            INFO,
            f"no {name} version given: answered for the newest modelled release ({place.version}, era {place.era.name})",
            f"pin the version you deploy: --engine {name}==VERSION",
        )


@rule("R003", "pre-release placed with the release it precedes", severity=WARNING, fix="check against the final release you deploy.")
def prerelease(c: Context) -> Iterator[Hit]:
    """Warning: an rc/alpha/beta/dev version is modelled as the final release it precedes (and that release's era);
    changes made before that release, and not yet in the pre-release, may be missing from the answer.
    """
    place = c.place
    if place is not None and place.how == PRERELEASE:
        release = ".".join(map(str, parse_version(place.version)))
        yield Hit(
            WARNING,
            f"{place.era.engine} {place.version} is a pre-release: modelled as the release it precedes "
            f"({release}, era {place.era.name}); changes made before that release may be missing",
            "check against the final release you deploy",
        )


@rule(
    "R004",
    "engine release whose loader source was not read",
    severity=WARNING,
    fix="check against a release the tables read (`specbridge engines` lists them), or read this release's loader and add it to the era's rows (`docs/engines.md`).",
)
def release_not_read(c: Context) -> Iterator[Hit]:
    """Warning: the version is placed in an era, but no source of it was read: a placeholder release (TensorRT-LLM
    1.3, placed where a change read at commits of no established release must land), or a release before the first
    or after the last one read for its era (`vllm==0.16.1` when only 0.16.0 was read). The era's behaviour is
    assumed to hold there; a change in that release would make this report wrong. A release between two read
    releases of one era is not flagged (the same loading was read on both sides); one newer than every modelled
    release is R001's.
    """
    place = c.place
    if place is None or release_read(place.era, place.version):
        return
    era, read = place.era, releases_read(place.era)
    if place.how == NEWER and read:
        return  # R001 says it
    if read:
        span = sorted(read, key=parse_version)
        why = f"its era ({era.name}) was read at {span[0]}" + (f" – {span[-1]}" if len(span) > 1 else "") + " only"
    else:
        why = f"no release of its era ({era.name}) was read: the era is only placed at {', '.join(era.placeholders)}"
    yield Hit(
        WARNING,
        f"{era.engine} {place.version}: no source of this release was read ({why}); predicted as that era, which may not describe it",
        f"check against a release the tables read (`specbridge engines`), or read {era.engine} {place.version}'s loader (docs/engines.md)",
    )
