"""The human `check` report. One engine version: a one-screen summary (verdict, counts, findings with
their fix and doc), the full accounting with --tables. Several: one line per version, then each distinct
finding once with the versions it applies to. Everything from the input is escaped before rich sees it."""

from __future__ import annotations

from rich.console import Console

from ..display import markup_safe as escape
from ..engines.simulate import BUFFER, DROPPED, LOADED, OVERWRITTEN, P_LOADED, P_SHARED, UNUSED
from ..rules.findings import doc_link
from .console import make_console
from .render import print_accounting

SEV_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def counts_line(res) -> str:
    r = res.report
    t = {s: sum(1 for x in r.tensors if x.status == s) for s in (LOADED, DROPPED)}
    t[LOADED] += sum(1 for x in r.tensors if x.status == BUFFER)  # d2t filling hot_token_id is loaded too
    ignored = sum(1 for x in r.tensors if x.status in (UNUSED, OVERWRITTEN))
    other = len(r.tensors) - t[LOADED] - t[DROPPED] - ignored
    p_loaded = sum(1 for p in r.params if p.status == P_LOADED)
    p_shared = sum(1 for p in r.params if p.status == P_SHARED)
    parts = [f"{len(r.tensors)} tensors: {t[LOADED]} loaded, {t[DROPPED]} dropped silently, {ignored} ignored by design"]
    if other:
        parts[0] += f", {other} other (see --tables)"
    parts.append(
        f"{len(r.params)} {escape(r.cls.name)} parameters: {p_loaded} loaded, {len(r.missing)} missing, {p_shared} shared from the target"
    )
    if r.errors:
        parts.append(f"the engine raises: {escape(r.errors[0])}" + (f" (+{len(r.errors) - 1})" if len(r.errors) > 1 else ""))
    return "; ".join(parts)


def verdict_markup(ok: bool) -> str:
    return "[bold green]OK[/]" if ok else "[bold red]NOT OK[/]"


def print_finding(c: Console, f, versions: str = "") -> None:
    where = " " + escape(f"[{versions}]") if versions else ""
    c.print(f"[{SEV_STYLE[f.severity]}]{f.code} {f.severity}[/]{where}: {escape(f.message)}")
    if f.fix:
        c.print(f"    fix: {escape(f.fix)}")
    if f.severity != "info":
        c.print(f"    doc: {doc_link(f.code)}", style="dim")


def print_single(c: Console, ckpt, res, ok: bool) -> None:
    r = res.report
    c.print(
        f"[bold]{escape(str(ckpt.root))}[/]  layout [bold]{escape(res.drafter.layout)}[/] → [bold]{r.engine} {escape(r.version)}[/] "
        f"(era {escape(r.era.name)}; class {escape(r.cls.name)}): {verdict_markup(ok)}"
    )
    c.print(counts_line(res))
    for sev in ("error", "warning", "info"):
        for f in res.findings:
            if f.severity == sev:
                print_finding(c, f)
    c.print(
        f"[dim]every tensor and parameter: specbridge check {escape(str(ckpt.root))} --engine {r.engine}=={escape(r.version)} --tables[/]"
    )


def print_many(c: Console, ckpt, results, ok: bool) -> None:
    from rich.table import Table

    c.print(f"[bold]{escape(str(ckpt.root))}[/]  layout [bold]{escape(results[0].drafter.layout)}[/]: {verdict_markup(ok)}")
    t = Table(box=None, pad_edge=False)
    for col in ("engine", "version", "era", "verdict", "dropped", "missing", "raises", "errors"):
        t.add_column(col)
    for res in results:
        r = res.report
        errs = sorted({f.code for f in res.findings if f.severity == "error"})
        t.add_row(
            r.engine,
            escape(r.version),
            escape(r.era.name),
            "ok" if res.ok else "[red]NOT OK[/]",
            str(len(r.dropped)),
            str(len(r.missing)),
            str(len(r.errors)),
            ", ".join(errs) or "—",
        )
    c.print(t)
    infos: dict[str, list[str]] = {}
    for f, versions in distinct_findings(results):
        if f.severity == "info":
            infos.setdefault(f.code, []).append(versions)
        else:
            print_finding(c, f, versions)
    if infos:
        from ..rules.registry import RULES

        c.print(
            "info: " + "; ".join(f"{code} {RULES[code].title} " + escape(f"[{' | '.join(v)}]") for code, v in infos.items()), style="cyan"
        )
    c.print("[dim]one engine in full: specbridge check PATH --engine NAME==VERSION [--tables][/]")


def distinct_findings(results) -> list[tuple[object, str]]:
    """Each finding once, worst first, with the engine versions it applies to. Messages that differ only
    by the engine version they name are the same finding."""
    from ..rules.findings import Finding

    groups: dict[tuple, list] = {}
    first: dict[tuple, Finding] = {}
    for res in results:
        r = res.report
        for f in res.findings:
            general = Finding(f.code, f.severity, generalise(f.message, r), generalise(f.fix, r) if f.fix else None)
            key = (f.code, f.severity, general.message, general.fix)
            first.setdefault(key, general)
            groups.setdefault(key, []).append((r.engine, r.version))
    rank = {"error": 0, "warning": 1, "info": 2}
    out = []
    for key in sorted(groups, key=lambda k: (rank[k[1]], k[0])):
        by_engine: dict[str, list[str]] = {}
        for eng, ver in groups[key]:
            by_engine.setdefault(eng, []).append(ver)
        total = {eng: sum(1 for res in results if res.report.engine == eng) for eng in by_engine}
        versions = "; ".join(
            f"{eng} all" if len(v) == total[eng] and len(v) > 1 else f"{eng} {', '.join(v)}" for eng, v in by_engine.items()
        )
        out.append((first[key], versions))
    return out


def generalise(text: str, r) -> str:
    """The text with this engine version's own name taken out, so eras that say the same thing group."""
    return text.replace(f"{r.engine}=={r.version}", f"{r.engine}==VERSION").replace(f"{r.engine} {r.version}", r.engine)


def print_check(ckpt, results, tables: bool, failing: list[str]) -> None:
    c = make_console()
    ok = not failing
    if len(results) == 1:
        if tables:
            print_accounting(ckpt, results[0])  # the summary and findings follow
        print_single(c, ckpt, results[0], ok)
    else:
        print_many(c, ckpt, results, ok)
        if tables:
            for res in results:
                print_accounting(ckpt, res)
                for f in res.findings:
                    print_finding(c, f)
    if ok != all(r.ok for r in results):
        c.print(f"gate: {'failing on ' + ', '.join(failing) if failing else 'errors ignored by --ignore'}")
