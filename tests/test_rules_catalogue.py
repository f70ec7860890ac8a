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
