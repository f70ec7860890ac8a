"""`specbridge engines`: every modelled engine and, for every drafter family, each release range with the releases
read, from the same tables `check` answers from (engines/registry.py): EAGLE-3's eras, each family's FAMILY_RANGES
rows (named as `check` names them: `family_era`) and the plain draft model's DRAFT_MODEL rows."""

from __future__ import annotations

from .contract import print_json


def engines_rows() -> list[dict]:
    """EAGLE-3's loader eras, one row each."""
    from ..engines.registry import ENGINES, releases_read

    return [
        {
            "engine": era.engine,
            "family": "eagle3",
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


def family_rows() -> list[dict]:
    """Every other drafter family's release ranges per engine, in the families' order (families/table.py), then the
    plain draft model's: the era `check` prints for it, the releases read, the classes, and whether it is modelled
    (a range the engine has the class in but specbridge does not model, or one without the class, says why)."""
    from ..engines.registry import DRAFT_MODEL, ENGINES, FAMILY_RANGES, family_era
    from ..families.table import FAMILIES

    out = []
    for fam in FAMILIES:
        for engine in ENGINES:
            for r in FAMILY_RANGES.get(engine, ()):
                if r.family != fam.name:
                    continue
                status = "modelled" if r.classes else "not modelled" if r.unmodelled else "no class"
                out.append(
                    {
                        "engine": engine,
                        "family": fam.name,
                        "era": family_era(r),
                        "first": r.first,
                        "last": r.last,
                        "releases_read": list(r.versions_read),
                        "classes": sorted(r.classes),
                        "status": status,
                        "why": r.unmodelled or r.absent or None,
                    }
                )
    for engine in ENGINES:
        for d in DRAFT_MODEL.get(engine, ()):
            span = f"{d.first}–{d.last}" if d.last else f"{d.first}+"
            out.append(
                {
                    "engine": engine,
                    "family": "draft_model",
                    "era": f"draft_model {span}",
                    "first": d.first,
                    "last": d.last,
                    "releases_read": list(d.versions_read),
                    "classes": [],
                    "status": "modelled" if d.method else "no method",
                    "why": None if d.method else d.refusal or None,
                    "method": d.method or None,
                }
            )
    return out


def engines_cmd(as_json: bool) -> int:
    from ..engines.registry import ENGINES, modelled_range

    rows, families = engines_rows(), family_rows()
    if as_json:
        ranges = {name: dict(zip(("first", "newest"), modelled_range(name))) for name in ENGINES}
        print_json("engines", {"ok": True, "engines": ranges, "eras": rows, "families": families})
        return 0
    from rich.markup import escape
    from rich.table import Table

    from .console import make_console

    c = make_console()
    t = Table(box=None, pad_edge=False)
    for col in ("engine", "family", "era", "releases", "source read at"):
        t.add_column(col)
    for r in rows:
        span = f"{r['first']} – {r['last'] or 'newer'}"
        read = r["releases_read"] + [f"{v} (placeholder: no source of it read)" for v in r["placed_at"]]
        t.add_row(r["engine"], r["family"], escape(r["era"]), span, ", ".join(read))
    for r in families:
        span = f"{r['first']} – {r['last'] or 'newer'}"
        era = r["era"] if r["status"] == "modelled" else f"{r['era']} ({r['status']})"
        t.add_row(r["engine"], r["family"], escape(era), span, ", ".join(r["releases_read"]) or "—")
    c.print(t)
    for name in ENGINES:
        first, newest = modelled_range(name)
        c.print(f"{name}: {first} – {newest} modelled; a newer {name}==VERSION is checked against the newest era with a warning (R001)")
    c.print(
        "a family's era is the name `check` shows for it (era dflash 0.31.0+); `--json` adds the classes and why a range is not modelled"
    )
    return 0
