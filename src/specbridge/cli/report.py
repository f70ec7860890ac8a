"""The human `check` report. One engine version: a one-screen summary (verdict, counts, findings with
their fix and doc), the full accounting with --tables. Several: one line per version, then each distinct
finding once with the versions it applies to. Everything from the input is escaped before rich sees it. In a pipe
the page is console.PlainPage: rich's bytes, written without importing rich (check answers at header speed)."""

from __future__ import annotations

from ..display import markup_safe as escape
from ..engines.simulate import Fate, Fill
from ..layouts.canonical import layout_label
from ..rules.findings import doc_link
from .console import PIPE_WIDTH, PlainPage, page_console

TYPE_CHECKING = False  # typing's constant, without importing typing on a check's path (about 1 ms)
if TYPE_CHECKING:
    from rich.console import Console

SEV_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
# Every tensor fate and every parameter fill in the summary's words, so its counts add up to the totals.
# The first three of each are always said (a 0 is news too); the rest only when some tensor or parameter has them.
TENSOR_WORDS: dict[str, str] = {
    Fate.LOADED: "loaded",
    Fate.BUFFER: "loaded",  # d2t filling hot_token_id is loaded too
    Fate.DROPPED: "dropped silently",
    Fate.UNUSED: "ignored by design",
    Fate.OVERWRITTEN: "ignored by design",  # loaded, then replaced by the target's
    Fate.RAISES: "make the engine raise",
    Fate.MISMATCHED: "of the wrong shape",
    Fate.TRUNCATED: "cut silently to fit",
    Fate.PADDED: "zero-padded silently",
}
PARAM_WORDS: dict[str, str] = {
    Fill.LOADED: "loaded",
    Fill.MISSING: "missing",
    Fill.SHARED: "shared from the target",
    Fill.PARTIAL: "partly filled",
    Fill.OWN_UNLESS_EQUAL: "kept unless equal to the target's",
    Fill.HARMLESS: "left at an initial value right for this config",
    Fill.DEFAULT_INIT: "left at a default initialisation",
}
ALWAYS_SAID = 3


def _tally(statuses: list[str], words: dict[str, str]) -> str:
    """'4 loaded, 10 dropped silently, …': one count per phrase, in the table's order; a status without a
    phrase (a fate added later) is counted under its own name, so the counts still add up."""
    phrases = list(dict.fromkeys(words.values()))
    counts = dict.fromkeys(phrases[:ALWAYS_SAID], 0)
    for s in statuses:
        phrase = words.get(s, str(s))
        counts[phrase] = counts.get(phrase, 0) + 1
    order = {p: i for i, p in enumerate(phrases)}
    return ", ".join(f"{n} {escape(p)}" for p, n in sorted(counts.items(), key=lambda kv: order.get(kv[0], len(order))))


def counts_line(res) -> str:
    r = res.report
    parts = [
        f"{len(r.tensors)} tensors: {_tally([t.status for t in r.tensors], TENSOR_WORDS)}",
        f"{len(r.params)} {escape(r.cls.name)} parameters: {_tally([p.status for p in r.params], PARAM_WORDS)}",
    ]
    if r.errors:
        parts.append(f"the engine raises: {escape(r.errors[0])}" + (f" (+{len(r.errors) - 1})" if len(r.errors) > 1 else ""))
    return "; ".join(parts)


def verdict_markup(ok: bool) -> str:
    return "[bold green]OK[/]" if ok else "[bold red]NOT OK[/]"


def print_finding(c: Console | PlainPage, f, versions: str = "", fixes_shown: dict[str, str] | None = None) -> None:
    """One finding: its line, its fix, its doc link. With `fixes_shown` (fix text -> the code it was printed under),
    a fix already printed for an earlier finding of this report is not printed again: "fix: as above (L002)"
    (an MTP head absent reads five L002/L006 findings with one 250-character fix). JSON keeps every fix."""
    where = " " + escape(f"[{versions}]") if versions else ""
    c.print(f"[{SEV_STYLE[f.severity]}]{f.code} {f.severity}[/]{where}: {escape(f.message)}")
    if f.fix and fixes_shown is not None and f.fix in fixes_shown:
        c.print(f"    fix: as above ({fixes_shown[f.fix]})")
    elif f.fix:
        c.print(f"    fix: {escape(f.fix)}")
        if fixes_shown is not None:
            fixes_shown[f.fix] = f.code
    if f.severity != "info":
        c.print(f"    doc: {doc_link(f.code)}", style="dim")


def print_single(c: Console | PlainPage, ckpt, res, ok: bool, tables: bool = False) -> None:
    r = res.report
    c.print(
        f"[bold]{escape(str(ckpt.root))}[/]  layout [bold]{escape(layout_label(res.drafter))}[/] → [bold]{r.engine} {escape(r.version)}[/] "
        f"(era {escape(r.era.name)}; class {escape(r.cls.name)}): {verdict_markup(ok)}"
    )
    c.print(counts_line(res))
    fixes_shown: dict[str, str] = {}
    for sev in ("error", "warning", "info"):
        for f in res.findings:
            if f.severity == sev:
                print_finding(c, f, fixes_shown=fixes_shown)
    if not tables:  # the way to the full accounting, unless it was just printed
        c.print(
            f"[dim]every tensor and parameter: specbridge check {escape(str(ckpt.root))} --engine {r.engine}=={escape(r.version)} --tables[/]"
        )


def print_many(c: Console | PlainPage, ckpt, results, ok: bool, tables: bool = False) -> None:
    c.print(f"[bold]{escape(str(ckpt.root))}[/]  layout [bold]{escape(layout_label(results[0].drafter))}[/]: {verdict_markup(ok)}")
    # an era's name begins with its release range: the column is never narrower than that word, so a narrow
    # terminal wraps the description under it instead of cutting the range; long words fold, never hidden
    range_width = max(len(res.report.era.name.split(" ")[0]) for res in results)
    header = ["engine", "version", "era", "verdict", "dropped", "missing", "raises", "errors"]
    rows = []
    for res in results:
        r = res.report
        errs = sorted({f.code for f in res.findings if f.severity == "error"})
        rows.append(
            [
                r.engine,
                escape(r.version),
                escape(r.era.name),
                "ok" if res.ok else "[red]NOT OK[/]",
                str(len(r.dropped)),
                str(len(r.missing)),
                str(len(r.errors)),
                ", ".join(errs) or "—",
            ]
        )
    if not (isinstance(c, PlainPage) and c.grid(header, rows, {"era": range_width})):
        _rich_table(c.rich if isinstance(c, PlainPage) else c, header, rows, range_width)
    infos: dict[str, list[str]] = {}
    fixes_shown: dict[str, str] = {}
    for f, versions in distinct_findings(results):
        if f.severity == "info":
            infos.setdefault(f.code, []).append(versions)
        else:
            print_finding(c, f, versions, fixes_shown)
    if infos:
        from ..rules.registry import RULES

        c.print(
            "info: " + "; ".join(f"{code} {RULES[code].title} " + escape(f"[{' | '.join(v)}]") for code, v in infos.items()), style="cyan"
        )
    if not tables:
        c.print("[dim]one engine in full: specbridge check PATH --engine NAME==VERSION [--tables][/]")


def _rich_table(c: Console, header: list[str], rows: list[list[str]], range_width: int) -> None:
    """print_many's table laid out by rich: on a terminal (its width), or cells PlainPage.grid does not vouch for."""
    from rich.table import Table

    t = Table(box=None, pad_edge=False)
    for col in header:
        if col == "era":
            t.add_column(col, min_width=range_width, overflow="fold")
        else:
            t.add_column(col, no_wrap=col != "errors")
    for row in rows:
        t.add_row(*row)
    # a narrow terminal: one blank between columns leaves the era its range
    if c.measure(t, options=c.options.update_width(PIPE_WIDTH)).maximum > c.width:
        t.collapse_padding = True
    c.print(t)


def distinct_findings(results) -> list[tuple[object, str]]:
    """Each finding once, worst first, with the engine versions it applies to. Messages that differ only
    by the engine version they name are the same finding; the message then names all of them."""
    from ..rules.findings import Finding

    groups: dict[tuple, list] = {}
    first: dict[tuple, Finding] = {}
    for res in results:
        r = res.report
        for f in res.findings:
            general = Finding(f.code, f.severity, generalise(f.message, r), generalise(f.fix, r) if f.fix else None)
            key = (f.code, f.severity, general.message, general.fix)
            first.setdefault(key, general)
            groups.setdefault(key, []).append(res)
    rank = {"error": 0, "warning": 1, "info": 2}
    out = []
    for key in sorted(groups, key=lambda k: (rank[k[1]], k[0])):
        by_engine: dict[str, list] = {}
        for res in groups[key]:
            by_engine.setdefault(res.report.engine, []).append(res)
        total = {eng: sum(1 for res in results if res.report.engine == eng) for eng in by_engine}
        versions = "; ".join(
            f"{eng} all" if len(v) == total[eng] and len(v) > 1 else f"{eng} {', '.join(res.report.version for res in v)}"
            for eng, v in by_engine.items()
        )
        f = first[key]
        message, fix = f.message, f.fix
        for eng, rs in by_engine.items():  # the message and its fix name the releases back (no placeholder left)
            message = message.replace(f"{eng} {VERSIONS}", f"{eng} {releases_named(rs)}")
            fix = fix.replace(f"{eng} {VERSIONS}", f"{eng} {releases_named(rs)}") if fix else fix
        out.append((Finding(f.code, f.severity, message, fix), versions))
    return out


VERSIONS = "\x00versions\x00"  # where a grouped message names its engine's releases


def generalise(text: str, r) -> str:
    """The text with this engine version's own name taken out, so eras that say the same thing group; a
    command keeps `NAME==VERSION` to fill in, prose gets the releases back once grouped."""
    return text.replace(f"{r.engine}=={r.version}", f"{r.engine}==VERSION").replace(f"{r.engine} {r.version}", f"{r.engine} {VERSIONS}")


def releases_named(results) -> str:
    """The releases a finding applies to, in words: a release that stands for its era (`--engine all`) is
    its era's range, neighbouring eras joined ('0.4.9–0.5.11'); a release asked for by name is itself."""
    from ..engines.registry import ALL, ENGINES

    eras = ENGINES[results[0].report.engine]
    runs: list[list] = []  # era indices in a row, or a release's own label
    for res in results:
        place = res.place
        # a family range's result carries its own era (a renamed copy, not one of the engine's EAGLE-3 eras): named by release
        if place is not None and place.how == ALL and res.report.era in eras:
            i = eras.index(res.report.era)
            if runs and isinstance(runs[-1], list) and runs[-1][-1] == i - 1:
                runs[-1].append(i)
            else:
                runs.append([i])
        else:
            runs.append(res.report.version)
    return ", ".join(_era_span(eras[r[0]], eras[r[-1]]) if isinstance(r, list) else r for r in runs)


def _era_span(first, last) -> str:
    """'0.4.9–0.5.11', '0.5.17+', or '0.5.2' for one release."""
    from ..engines.spec import parse_version

    if last.max_version is None:
        return f"{first.min_version}+"
    if parse_version(first.min_version) == parse_version(last.max_version):
        return last.max_version
    return f"{first.min_version}–{last.max_version}"


def print_check(ckpt, results, tables: bool, failing: list[str]) -> None:
    c = page_console()
    ok = not failing
    if len(results) == 1:
        if tables:
            from .render import print_accounting  # --tables: rich lays out every tensor's line

            print_accounting(ckpt, results[0])  # the summary and findings follow
        print_single(c, ckpt, results[0], ok, tables)
    else:
        print_many(c, ckpt, results, ok, tables)
        if tables:
            from .render import print_accounting

            for res in results:
                print_accounting(ckpt, res)
                fixes_shown: dict[str, str] = {}
                for f in res.findings:
                    print_finding(c, f, fixes_shown=fixes_shown)
    if ok != all(r.ok for r in results):
        c.print(f"gate: {'failing on ' + ', '.join(failing) if failing else 'errors ignored by --ignore'}")
