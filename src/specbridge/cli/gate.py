"""The run's gate: which findings fail a check (--fail-on, --ignore), shared by every check path.

Its own leaf because commands.py (the drafters' check) and draft_check.py (a plain draft model's check, which
commands.py dispatches to) both apply it: kept in commands.py it tied the two into a circle."""

from __future__ import annotations

from .contract import fail

GATE_SEVERITIES = ("warning",)  # --fail-on warning: every warning fails the run (the strict CI gate, docs/ci.md)


def split_codes(values: list[str] | None, severities: tuple[str, ...] = ()) -> set[str]:
    """'--fail-on C001,A002 --fail-on V009' -> {'C001', 'A002', 'V009'} (validated against the catalogue); a
    severity name in `severities` ('warning') is kept as it is, lower case, and stands for every finding of it."""
    from ..rules.registry import RULES

    words = [c.strip() for v in values or () for c in v.split(",") if c.strip()]
    named = {w.lower() for w in words if w.lower() in severities}
    codes = {w.upper() for w in words if w.lower() not in severities}
    unknown = sorted(codes - set(RULES))
    if unknown:
        also = f" or a severity ({', '.join(severities)})" if severities else ""
        fail(f"unknown finding code(s) {', '.join(unknown)} (the catalogue: docs/rules.md{also})")
    return codes | named


def gate(results, fail_on: set[str], ignore: set[str]) -> list[str]:
    """The finding codes that fail this run: errors unless ignored, plus any code named in --fail-on and every
    finding of a severity named there (--fail-on warning)."""
    out = []
    for r in results:
        for f in r.findings:
            if (f.severity == "error" and f.code not in ignore) or f.code in fail_on or f.severity in fail_on:
                out.append(f.code)
    return sorted(set(out))
