"""The part of docs/adding-a-release.md that the tables write: which class rows serve which release ranges, so whoever
changes a row for a new release knows every range the change moves (a class row is one object; a range that should
not move needs its own copy, `replace(...)`, with `first=` at the new release).

Rewrites the section between the page's `<!-- generated: shared classes -->` and `<!-- end: shared classes -->` markers.

    python scripts/gen_release_page.py          # rewrite the section
    python scripts/gen_release_page.py --check  # exit 1 if it is stale (tests/test_release_page.py)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from specbridge.engines import registry  # noqa: E402
from specbridge.families.table import FAMILIES  # noqa: E402

PAGE = ROOT / "docs" / "adding-a-release.md"
PATTERN = re.compile(r"(<!-- generated: shared classes\b[^\n]*-->\n).*?(<!-- end: shared classes -->)", re.S)


def ranges_by_class(engine: str) -> list[tuple[object, list[str]]]:
    """Every class row of an engine with the ranges (era or family range names) that hold that very object, in table
    order."""
    import importlib

    served: dict[int, tuple[object, list[str]]] = {}
    rows = [(registry.family_era(r), r) for f in FAMILIES for r in registry.family_rows(engine, f.name)]  # EAGLE-3's eras first
    for label, row in rows:
        for cls in row.classes.values():
            served.setdefault(id(cls), (cls, []))[1].append(label)
    pkg = importlib.import_module(f"specbridge.engines.{engine}")
    out = []
    for cls, labels in served.values():
        where = pkg.row_file(cls)
        module = sys.modules.get(where.removesuffix(".py").replace("/", "."))
        names = [k for k, v in vars(module).items() if v is cls] if module is not None else []
        out.append((where.removeprefix("specbridge/engines/") + (f" `{names[0]}`" if names else ""), cls, labels))
    return out


def section() -> str:
    out = []
    for engine in registry.ALL_ENGINES:
        found = ranges_by_class(engine)
        shared = [(f, c, ls) for f, c, ls in found if len(ls) > 1]
        out.append(f"**{engine}**: {len(found)} class rows, {len(shared)} serving more than one range.\n\n")
        if shared:
            out.append("| class | its row (file, name) | ranges it serves |\n| --- | --- | --- |\n")
            out += [f"| `{c.name}` | {f} | {'; '.join(ls)} |\n" for f, c, ls in shared]
            out.append("\n")
    return "".join(out)


def render(text: str) -> str:
    if not PATTERN.search(text):
        raise SystemExit("docs/adding-a-release.md has no '<!-- generated: shared classes … -->' … '<!-- end: shared classes -->' markers")
    return PATTERN.sub(lambda m: m.group(1) + "\n" + section() + m.group(2), text)


def main() -> int:
    text = PAGE.read_text()
    new = render(text)
    if "--check" in sys.argv[1:]:
        if new != text:
            print("docs/adding-a-release.md is stale: run python scripts/gen_release_page.py")
            return 1
        return 0
    PAGE.write_text(new)
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
