"""A Hub id (`org/name[@revision]`) and the commit it resolved to: plain data, so a Checkpoint or a target
can say where it was read from without importing the Hub client (checkpoint/hub.py)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}"
HUB_ID = re.compile(rf"^(?P<repo>{_NAME}/{_NAME})(?:@(?P<rev>[A-Za-z0-9._/-]{{1,200}}))?$")
COMMIT = re.compile(r"^[0-9a-f]{40}$")
DEFAULT_REVISION = "main"


@dataclass(frozen=True)
class HubRef:
    """A repo at a revision, and (once resolved) the commit it meant."""

    repo_id: str
    revision: str | None = None  # as asked; None means the default branch
    commit: str | None = None
    endpoint: str | None = None

    @property
    def asked(self) -> str:
        return self.revision or DEFAULT_REVISION

    @property
    def label(self) -> str:
        return self.repo_id + (f"@{self.revision}" if self.revision else "")

    def to_json(self) -> dict:
        return {"hub": self.repo_id, "revision": self.asked, "commit": self.commit, "endpoint": self.endpoint}

    def line(self) -> str:
        """The one line every human report prints for a Hub input."""
        return f"source: {self.repo_id} revision {self.asked} = commit {self.commit} ({self.endpoint})"


def hub_ref_or_none(text: str) -> HubRef | None:
    """`org/name[@rev]` → HubRef; anything else (or a path that exists) → None. Callers only ask
    after the local path was not found, so a directory named like a repo always wins."""
    if os.path.exists(text):
        return None
    m = HUB_ID.match(text)
    if not m or ".." in text:
        return None
    return HubRef(m["repo"], m["rev"])


def hub_sources(drafter: HubRef | None, target: HubRef | None = None) -> dict:
    """Keys to add to a JSON report for Hub inputs: `source` (the drafter) and `target_source`, each
    with the commit that was read. Empty for local inputs, so their reports keep exactly their keys."""
    out = {}
    if drafter is not None:
        out["source"] = drafter.to_json()
    if target is not None:
        out["target_source"] = target.to_json()
    return out
