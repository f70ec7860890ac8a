"""Findings: a stable code, a severity, one plain sentence, and the fix (ruff-style)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

ERROR, WARNING, INFO = "error", "warning", "info"


@dataclass(frozen=True)
class Rule:
    code: str
    title: str
    failure_modes: tuple[int, ...] = ()  # rows of shared research failure-modes.md


@dataclass
class Finding:
    code: str
    severity: str
    message: str
    fix: str | None = None

    def to_json(self) -> dict:
        return asdict(self)


# The catalogue. docs/rules.md documents each code; tests/test_rules_catalogue.py keeps them in sync.
RULES: dict[str, Rule] = {
    r.code: r
    for r in [
        Rule("L001", "checkpoint tensors the engine silently drops", (1, 8, 38)),
        Rule("L002", "engine parameters nothing fills (left at random init)", (1, 2, 9)),
        Rule("L003", "tensor shape differs from the engine's parameter", (5, 6)),
        Rule("L004", "engine raises on checkpoint tensor names", (8, 38)),
        Rule("L005", "engine version cannot dispatch this config", (8,)),
        Rule("L006", "engine raises while building the drafter from this config", (7, 8)),
        Rule("L007", "checkpoint tensor replaced by the target's after loading", (3, 4)),
        Rule("L008", "checkpoint tensors the engine ignores by design", (13,)),
        Rule("L009", "embedding or head taken from the target", (2, 4)),
        Rule("L010", "head borrowed from the target while the draft vocab is reduced", (2, 9)),
        Rule("L011", "parameter left at an initial value that is right for this config", (9, 13)),
    ]
}


def finding(code: str, severity: str, message: str, fix: str | None = None) -> Finding:
    assert code in RULES, code
    return Finding(code, severity, message, fix)
