"""R rules: the engine version itself. Every placement that is not a plain, modelled release is said,
so an answer for `sglang==0.5.99` or a bare `sglang` never looks more certain than it is."""

from __future__ import annotations

from collections.abc import Iterator

from ..engines.registry import NEWER, NEWEST, PRERELEASE, modelled_range
from ..engines.spec import parse_version
from .context import Context
from .findings import INFO, WARNING
from .registry import Hit, rule


@rule(
    "R001",
    "engine version newer than the newest release modelled",
    severity=WARNING,
    fix="check against a modelled release (`specbridge engines` lists the range), or add the release's rows (`docs/engines.md`).",
)
def newer_than_modelled(c: Context) -> Iterator[Hit]:
    """Warning: `--engine NAME==VERSION` names a release after the newest one whose source was read. It is checked
    against the newest era, which may no longer describe it: a release that changed loading can drop, refuse
    or leave random what this report says loads.
    """
    place = c.place
    if place is not None and place.how == NEWER:
        first, newest = modelled_range(place.era.engine)
        yield Hit(
            WARNING,
            f"{place.era.engine} {place.version} is newer than the newest release modelled ({newest}): checked against the "
            f"{place.era.name} era, which may no longer describe it",
            f"check against a modelled release (`specbridge engines` lists {first} – {newest}), or add the release's rows (docs/engines.md)",
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
