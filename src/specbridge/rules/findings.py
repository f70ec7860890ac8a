"""Findings: a stable code, a severity, one plain sentence, and the fix (ruff-style). The rules that
emit them, with their documentation, are in `registry.py`."""

from __future__ import annotations

from ..record import asdict, record

ERROR, WARNING, INFO = "error", "warning", "info"


@record(frozen=False)
class Finding:
    code: str
    severity: str
    message: str
    fix: str | None = None

    def to_json(self) -> dict:
        return {**asdict(self), "doc": doc_link(self.code)}


def doc_link(code: str) -> str:
    """Where a finding's rule is explained (its section in the repository's docs/rules.md)."""
    return f"docs/rules.md#{code.lower()}"
