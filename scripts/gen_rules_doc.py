"""Write docs/rules.md from the rule registry (src/specbridge/rules/registry.py and the rule modules).

python scripts/gen_rules_doc.py          # rewrite the page
python scripts/gen_rules_doc.py --check  # exit 1 if the page is stale (used by the tests)
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from specbridge.rules.registry import CATEGORIES, ordered  # noqa: E402

PAGE = ROOT / "docs" / "rules.md"
INTRO = """# Finding codes

Generated from the rule registry by `scripts/gen_rules_doc.py` (a test fails when this page is stale):
each rule is one small function in `src/specbridge/rules/`, registered with its code, title, usual
severity and fix; its docstring is the section below.

Each finding has a stable code, a severity (`error` fails `check`, exit 1; `warning` and `info` do not), one
plain message and, where one exists, the fix. In `specbridge check --json` every finding also carries
`doc`, a link to its section on this page (`docs/rules.md#l002` for L002).

The `failure modes` column gives the rows of the project's failure-mode catalogue
([failure-modes.md](failure-modes.md)) that the rule detects; the sections cite the engines' own files,
releases and public issues/PRs as the code does. `docs/coverage.md` maps each code to its tests, and
`scripts/rule_removal_check.py` switches each rule off in turn to confirm a test notices.

In the fixes, `PATH` is the drafter checkpoint, `OUT` a new directory, `NAME==VERSION` the engine release
(`sglang==0.5.11`, `vllm==0.32.0`, `trtllm==1.2`) and `T` the target model.
"""


def render() -> str:
    rules = ordered()
    parts = [INTRO]
    for letter, (heading, about) in CATEGORIES.items():
        mine = [r for r in rules if r.code[0] == letter]
        parts += [
            f"\n## {heading} ({letter})\n",
            about.strip() + "\n",
            "| code | title | usual severity | failure modes |",
            "| --- | --- | --- | --- |",
        ]
        parts += [f"| {r.code} | {r.title} | {r.severity} | {', '.join(map(str, r.failure_modes)) or '—'} |" for r in mine]
        for r in mine:
            parts += [f'\n### <a id="{r.code.lower()}"></a>{r.code} — {r.title}', r.doc, f"**Fix:** {r.fix}"]
    return "\n".join(parts) + "\n"


if __name__ == "__main__":
    from pages import write_or_check

    sys.exit(write_or_check(PAGE, render(), sys.argv[1:]))
