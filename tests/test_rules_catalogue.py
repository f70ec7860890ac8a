"""Every rule code is documented, and every documented code exists."""

import re
from pathlib import Path

from specbridge.rules.findings import RULES

DOCS = Path(__file__).resolve().parents[1] / "docs" / "rules.md"


def test_every_rule_has_a_doc_row_and_back():
    text = DOCS.read_text()
    documented = set(re.findall(r"^\| ([A-Z]\d{3}) \|", text, re.M))
    assert documented == set(RULES)
    for code, rule in RULES.items():
        assert f"| {code} | {rule.title} |" in text


def test_coverage_page_is_fresh_and_every_rule_has_a_test():
    import subprocess
    import sys

    root = DOCS.parents[1]
    r = subprocess.run([sys.executable, str(root / "scripts" / "gen_coverage.py"), "--check"])
    assert r.returncode == 0, "docs/coverage.md is stale: run python scripts/gen_coverage.py"
    text = (root / "docs" / "coverage.md").read_text()
    assert "**none**" not in text and "**not covered**" not in text
