"""The write-or-check step every generated docs page shares (rules, coverage, corpus, engine matrix):
`--check` exits 1, saying how to regenerate, when the committed page differs from what its generator
renders; otherwise the page is rewritten."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def write_or_check(page: Path, text: str, argv: list[str]) -> int:
    rel = page.relative_to(ROOT)
    if "--check" in argv:
        if page.is_file() and page.read_text() == text:
            return 0
        print(f"{rel} is stale: run python scripts/{Path(sys.argv[0]).name}", file=sys.stderr)
        return 1
    page.write_text(text)
    print(f"wrote {rel}")
    return 0
