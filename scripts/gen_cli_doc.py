"""Write the generated table of docs/cli.md (every numeric option: the commands that have it, the values it
takes, what 0 means where 0 is legal) from src/specbridge/cli/optspec.py's NUMBERS rows and the commands'
own options, between the page's `<!-- generated: numbers -->` markers.

python scripts/gen_cli_doc.py          # rewrite the table
python scripts/gen_cli_doc.py --check  # exit 1 if the page is stale (used by the tests)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from specbridge.cli.optspec import NUMBERS, bound  # noqa: E402
from specbridge.fuzzing import numeric_options  # noqa: E402

PAGE = ROOT / "docs" / "cli.md"


def numbers_table() -> str:
    commands: dict[str, list[str]] = {}
    for command, flag in numeric_options():
        commands.setdefault(flag, []).append(command)
    rows = [
        f"| `{flag}` | {', '.join(commands.get(flag, []))} | {bound(row)} | {row.what} | {row.zero or 'refused'} |"
        for flag, row in NUMBERS.items()
    ]
    return "\n".join(["| option | commands | values | what | 0 |", "| --- | --- | --- | --- | --- |", *rows])


def render(text: str) -> str:
    pattern = re.compile(r"(<!-- generated: numbers\b[^\n]*-->\n).*?(<!-- end: numbers -->)", re.S)
    if not pattern.search(text):
        raise SystemExit("docs/cli.md has no '<!-- generated: numbers … -->' … '<!-- end: numbers -->' markers")
    return pattern.sub(lambda m: m.group(1) + numbers_table() + "\n" + m.group(2), text)


def main(argv: list[str]) -> int:
    text = PAGE.read_text()
    fresh = render(text)
    if "--check" in argv:
        if fresh != text:
            print("docs/cli.md is stale: run python scripts/gen_cli_doc.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(fresh)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
