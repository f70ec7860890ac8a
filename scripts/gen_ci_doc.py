"""Write the generated tables of docs/ci.md (exit codes, the keys every --json object has, the commands
with --json) from src/specbridge/cli/contract.py, between the page's `<!-- generated: NAME -->` markers.

python scripts/gen_ci_doc.py          # rewrite the tables
python scripts/gen_ci_doc.py --check  # exit 1 if the page is stale (used by the tests)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from specbridge.cli.contract import COMMON_KEYS, EXIT_CODES, JSON_COMMANDS  # noqa: E402

PAGE = ROOT / "docs" / "ci.md"


def sections() -> dict[str, str]:
    exit_rows = [f"| {code} | {meaning} |" for code, meaning in EXIT_CODES.items()]
    key_rows = [f"| `{key}` | {meaning} |" for key, meaning in COMMON_KEYS.items()]
    return {
        "exit-codes": "\n".join(["| code | meaning |", "| --- | --- |", *exit_rows]),
        "json-keys": "\n".join(["| key | value |", "| --- | --- |", *key_rows]),
        "json-commands": "Commands with `--json`: " + ", ".join(f"`{c}`" for c in JSON_COMMANDS) + ".",
    }


def render(text: str) -> str:
    for name, body in sections().items():
        pattern = re.compile(rf"(<!-- generated: {name}\b[^\n]*-->\n).*?(<!-- end: {name} -->)", re.S)
        if not pattern.search(text):
            raise SystemExit(f"docs/ci.md has no '<!-- generated: {name} … -->' … '<!-- end: {name} -->' markers")
        text = pattern.sub(lambda m, body=body: m.group(1) + body + "\n" + m.group(2), text)
    return text


def main() -> int:
    text = PAGE.read_text()
    new = render(text)
    if "--check" in sys.argv[1:]:
        if new != text:
            sys.stderr.write("docs/ci.md is stale: run python scripts/gen_ci_doc.py\n")
            return 1
        return 0
    PAGE.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
