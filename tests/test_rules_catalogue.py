"""Every rule code is documented, and every documented code exists."""

import re
from pathlib import Path

from specbridge.rules.registry import RULES

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


def test_every_rule_has_its_own_section_with_anchor_and_fix():
    """Findings link to `docs/rules.md#<code lowercased>`: each code needs a `### ` heading carrying that
    anchor, and its section (up to the next `### ` or `## `) a `**Fix:**` line."""
    lines = DOCS.read_text().splitlines()
    for code in RULES:
        marker = f'<a id="{code.lower()}"></a>{code} — '
        starts = [i for i, line in enumerate(lines) if line.startswith("### ") and marker in line]
        assert len(starts) == 1, f"{code}: expected one '### {marker}…' heading in docs/rules.md, found {len(starts)}"
        section = []
        for line in lines[starts[0] + 1 :]:
            if line.startswith("### ") or line.startswith("## "):
                break
            section.append(line)
        assert any(line.startswith("**Fix:**") for line in section), f"{code}: its section in docs/rules.md has no **Fix:** line"


def test_rules_page_is_generated_from_the_registry():
    """docs/rules.md is the registry's documentation (each rule function's docstring, fix and title)."""
    import subprocess
    import sys

    root = DOCS.parents[1]
    r = subprocess.run([sys.executable, str(root / "scripts" / "gen_rules_doc.py"), "--check"])
    assert r.returncode == 0, "docs/rules.md is stale: run python scripts/gen_rules_doc.py"


def test_every_rule_is_one_small_documented_function():
    """ruff-style: a rule is a function registered with its code; it documents itself and stays small."""
    import ast
    import inspect
    import textwrap

    for code, rule in RULES.items():
        fn = ast.parse(textwrap.dedent(inspect.getsource(rule.check))).body[0]
        body = fn.body[1:] if isinstance(fn.body[0], ast.Expr) and isinstance(fn.body[0].value, ast.Constant) else fn.body
        lines = body[-1].end_lineno - body[0].lineno + 1
        assert lines <= 30, f"{code} ({rule.check.__name__}) has {lines} lines of code"
        assert rule.doc and rule.fix and rule.severity in ("error", "warning", "info"), code


def test_a_rule_doc_is_its_docstring_as_inspect_cleans_it():
    """The registry cleans each docstring without importing `inspect` (registry.cleandoc): the text is inspect's."""
    import inspect

    from specbridge.rules.registry import cleandoc

    assert len(RULES) > 80
    for code, rule in RULES.items():
        assert rule.doc == inspect.cleandoc(rule.check.__doc__), code
    for doc in ("  one\n\n      two\n    three\n\n", "\tfirst\n\t\tsecond\n", "\n\n  lead\n  body\n", "x"):
        assert cleandoc(doc) == inspect.cleandoc(doc), repr(doc)
