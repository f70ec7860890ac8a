"""Mutation check for the rules: switch off one finding code at a time and confirm the test suite notices.

    python scripts/rule_removal_check.py [CODE ...]

For each code, runs the check/compat tests with that code suppressed (a pytest plugin wraps the
`finding` constructor) and reports whether at least one test failed. A code whose removal no test
notices is a rule without a real test.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = '''
import os, pytest
code = os.environ["SB_RULE_OFF"]
@pytest.fixture(autouse=True)
def _rule_off(monkeypatch):
    import specbridge.rules.compat as c, specbridge.rules.load as l
    real = c.finding
    def off(code_, *a, **k):
        f = real(code_, *a, **k)
        if code_ == code:
            f.code = "XXXX"
            f.severity = "info"
        return f
    monkeypatch.setattr(c, "finding", off)
    monkeypatch.setattr(l, "finding", off)
'''


def main() -> None:
    sys.path.insert(0, str(ROOT / "src"))
    from specbridge.rules.findings import RULES

    codes = sys.argv[1:] or sorted(RULES)
    plug = ROOT / "tests" / "_rule_off_plugin.py"
    plug.write_text(PLUGIN)
    unnoticed = []
    try:
        for code in codes:
            env = {**os.environ, "SB_RULE_OFF": code, "PYTHONPATH": str(ROOT / "tests")}
            r = subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-x", "-p", "_rule_off_plugin", "tests/test_compat.py", "tests/test_check.py",
                 "tests/test_corpus.py"],
                cwd=ROOT, env=env, capture_output=True, text=True,
            )
            noticed = r.returncode != 0
            print(f"{code}: {'noticed' if noticed else 'NOT NOTICED'}", flush=True)
            if not noticed:
                unnoticed.append(code)
    finally:
        plug.unlink(missing_ok=True)
    print(f"\n{len(codes) - len(unnoticed)}/{len(codes)} rules are guarded by a failing test" + (f"; unguarded: {unnoticed}" if unnoticed else ""))
    sys.exit(1 if unnoticed else 0)


if __name__ == "__main__":
    main()
