"""A Hub id (`org/name[@revision]`) and the commit it resolved to: plain data, so a Checkpoint or a target
can say where it was read from without importing the Hub client (checkpoint/hub.py)."""

from __future__ import annotations

import os

from ..later import Later
from ..record import record

_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}"
HUB_ID = Later(rf"^(?P<repo>{_NAME}/{_NAME})(?:@(?P<rev>[A-Za-z0-9._/-]{{1,200}}))?$")
COMMIT = Later(r"^[0-9a-f]{40}$")
DEFAULT_REVISION = "main"


@record
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


LOCAL_PREFIXES = ("./", "../", "/", "~")  # how a person writes a path; never a Hub id


def hub_ref_or_none(text: str) -> HubRef | None:
    """`org/name[@rev]` → HubRef; anything that is or could be a local path → None: a path that exists,
    one written as a path (`./`, `../`, `/`, `~`), and one whose first part is a local directory
    (`examples/stroy` beside `examples/`): a typo there is a missing file, not a request to the network.
    Callers only ask after the local path was not found, so a directory named like a repo always wins."""
    if os.path.exists(text) or text.startswith(LOCAL_PREFIXES) or text in (".", ".."):
        return None
    m = HUB_ID.match(text)
    if not m or ".." in text or os.path.isdir(m["repo"].split("/")[0]):
        return None
    return HubRef(m["repo"], m["rev"])


def missing_path_line(text: str) -> str:
    """The refusal for a path that is not there and is not read as a Hub id: says why not, when it looks like one."""
    m = HUB_ID.match(text)
    if m and os.path.isdir(m["repo"].split("/")[0]) and not text.startswith(LOCAL_PREFIXES):
        return f"no such file or directory (read as a local path, not a Hub id: {m['repo'].split('/')[0]}/ is a directory here)"
    return "no such file or directory"


def hub_sources(drafter: HubRef | None, target: HubRef | None = None) -> dict:
    """Keys to add to a JSON report for Hub inputs: `source` (the drafter) and `target_source`, each
    with the commit that was read. Empty for local inputs, so their reports keep exactly their keys."""
    out = {}
    if drafter is not None:
        out["source"] = drafter.to_json()
    if target is not None:
        out["target_source"] = target.to_json()
    return out
