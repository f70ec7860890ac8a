"""Mutation check for the rules: switch off one finding code at a time and confirm the test suite notices.

    python scripts/rule_removal_check.py [CODE ...]

For each code, runs the check/compat tests with that code suppressed (a pytest plugin swaps the rule's
registry row for one whose findings are coded XXXX, severity info) and reports whether at least one
test failed. A code whose removal no test
notices is a rule without a real test.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = """
import os, pytest
code = os.environ["SB_RULE_OFF"]
@pytest.fixture(autouse=True)
def _rule_off(monkeypatch):
    if not code:
        return
    from specbridge.record import replace
    from specbridge.rules.registry import RULES, Hit
    rule = RULES[code]

    def off(ctx):  # the rule still runs, but its findings no longer carry its code or its severity
        for h in rule.check(ctx):
            yield Hit("info", h.message, h.fix)

    monkeypatch.setitem(RULES, code, replace(rule, code="XXXX", check=off))
"""


TESTS = ["tests/test_compat.py", "tests/test_check.py", "tests/test_corpus.py", "tests/test_cli.py", "tests/test_check_speed.py"]


def _suite(code: str) -> int:
    """The rule tests' exit status with rule `code` switched off ("" = none)."""
    env = {**os.environ, "SB_RULE_OFF": code, "PYTHONPATH": str(ROOT / "tests")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "_rule_off_plugin", *TESTS], cwd=ROOT, env=env, capture_output=True, text=True
    ).returncode


def main() -> None:
    sys.path.insert(0, str(ROOT / "src"))
    from specbridge.rules.registry import RULES

    codes = sys.argv[1:] or sorted(RULES)
    plug = ROOT / "tests" / "_rule_off_plugin.py"
    plug.write_text(PLUGIN)
    unnoticed = []
    try:
        if _suite("") != 0:  # nothing switched off: the suite must pass, or every code would look "noticed"
            sys.exit("the rule tests fail with every rule on: fix them first")
        for code in codes:
            noticed = _suite(code) != 0
            print(f"{code}: {'noticed' if noticed else 'NOT NOTICED'}", flush=True)
            if not noticed:
                unnoticed.append(code)
    finally:
        plug.unlink(missing_ok=True)
    print(
        f"\n{len(codes) - len(unnoticed)}/{len(codes)} rules are guarded by a failing test"
        + (f"; unguarded: {unnoticed}" if unnoticed else "")
    )
    sys.exit(1 if unnoticed else 0)


if __name__ == "__main__":
    main()
