"""Findings about the engine version itself: every placement that is not a plain, modelled release is
said, so an answer for `sglang==0.5.99` or a bare `sglang` never looks more certain than it is."""

from __future__ import annotations

from ..engines.registry import NEWER, NEWEST, PRERELEASE, Placement, modelled_range
from ..engines.spec import parse_version
from .findings import INFO, WARNING, Finding, finding


def version_findings(place: Placement) -> list[Finding]:
    name = place.era.engine
    first, newest = modelled_range(name)
    if place.how == NEWER:
        return [finding(
            "R001", WARNING,
            f"{name} {place.version} is newer than the newest release modelled ({newest}): checked against the "
            f"{place.era.name} era, which may no longer describe it",
            f"check against a modelled release (`specbridge engines` lists {first} – {newest}), or add the release's rows "
            "(docs/engines.md)",
        )]
    if place.how == NEWEST:
        return [finding(
            "R002", INFO,
            f"no {name} version given: answered for the newest modelled release ({place.version}, era {place.era.name})",
            f"pin the version you deploy: --engine {name}==VERSION",
        )]
    if place.how == PRERELEASE:
        return [finding(
            "R003", WARNING,
            f"{name} {place.version} is a pre-release: modelled as the release it precedes "
            f"({'.'.join(map(str, parse_version(place.version)))}, era {place.era.name}); changes made before that release may be missing",
            "check against the final release you deploy",
        )]
    return []

