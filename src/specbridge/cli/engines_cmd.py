"""`specbridge engines`: every modelled engine, era and release range, from the engine tables."""

from __future__ import annotations

from .contract import print_json


def engines_rows() -> list[dict]:
    from ..engines.registry import ENGINES, releases_read

    return [
        {
            "engine": era.engine,
            "era": era.name,
            "first": era.min_version,
            "last": era.max_version,
            "releases_read": releases_read(era),
            "placed_at": list(era.placeholders),  # releases the era is placed at without any of their source read
            "classes": sorted(era.classes),
        }
        for eras in ENGINES.values()
        for era in eras
    ]


def engines_cmd(as_json: bool) -> int:
    from ..engines.registry import ENGINES, modelled_range

    rows = engines_rows()
    if as_json:
        print_json(
            "engines",
            {"ok": True, "engines": {name: dict(zip(("first", "newest"), modelled_range(name))) for name in ENGINES}, "eras": rows},
        )
        return 0
    from rich.markup import escape
    from rich.table import Table

    from .console import make_console

    c = make_console()
    t = Table(box=None, pad_edge=False)
    for col in ("engine", "era", "releases", "source read at"):
        t.add_column(col)
    for r in rows:
        span = f"{r['first']} – {r['last'] or 'newer'}"
        read = r["releases_read"] + [f"{v} (placeholder: no source of it read)" for v in r["placed_at"]]
        t.add_row(r["engine"], escape(r["era"]), span, ", ".join(read))
    c.print(t)
    for name in ENGINES:
        first, newest = modelled_range(name)
        c.print(f"{name}: {first} – {newest} modelled; a newer {name}==VERSION is checked against the newest era with a warning (R001)")
    return 0
