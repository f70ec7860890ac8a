"""Human output: every tensor and every engine parameter accounted for, findings with their fix."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from ..checkpoint.reader import Checkpoint
from ..engines.simulate import LoadReport
from ..layouts.canonical import Drafter
from ..rules.check import CheckResult
from .jsonout import canonical_name as _canon

import sys

# Piped output (CI logs, files) gets a wide page so tensor names are never cut or folded.
console = Console(highlight=False, soft_wrap=False, width=None if sys.stdout.isatty() else 220)

SEV_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
FATE_STYLE = {
    "loaded": "green",
    "dropped": "bold red",
    "raises": "bold red",
    "mismatched": "bold red",
    "unused": "dim",
    "buffer": "green",
    "overwritten": "yellow",
    "missing": "bold red",
    "partial": "bold red",
    "shared-from-target": "cyan",
    "own-unless-equal": "green",
    "initial-value": "dim",
}


def human_bytes(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1000
    return f"{n} B"


def print_inspect(ckpt: Checkpoint, d: Drafter) -> None:
    console.print(f"[bold]{ckpt.root}[/]  ({ckpt.storage}, {len(ckpt.weight_files)} file(s))")
    console.print(f"layout: [bold]{d.layout}[/]  architecture: {d.architecture}")
    for e in d.evidence:
        console.print(f"  evidence: {e}")
    g = d.geometry()
    t = Table(title="geometry", show_header=False, box=None, pad_edge=False)
    for k, v in g.items():
        t.add_row(k, str(v))
    console.print(t)
    tt = Table(title="tensors")
    for col in ("name", "dtype", "shape", "bytes", "canonical"):
        tt.add_column(col, overflow="fold")
    for info in ckpt.tensors.values():
        tt.add_row(info.name, info.dtype, str(list(info.shape)), human_bytes(info.nbytes), _canon(d, info.name) or "[red]unrecognised[/]")
    console.print(tt)
    console.print(f"total: {len(ckpt.tensors)} tensors, {human_bytes(ckpt.total_bytes)}, dtypes {d.dtypes}")
    if ckpt.pickles:
        console.print(f"[yellow]pickled files present, not read: {', '.join(p.name for p in ckpt.pickles)}[/]")


def _print_findings(res: CheckResult) -> None:
    for f in res.findings:
        console.print(f"[{SEV_STYLE[f.severity]}]{f.code} {f.severity}[/]: {f.message}")
        if f.fix:
            console.print(f"    fix: {f.fix}")


def print_check(ckpt: Checkpoint, res: CheckResult) -> None:
    r: LoadReport = res.report
    verdict = "[bold green]OK[/]" if res.ok else "[bold red]NOT OK[/]"
    console.print(
        f"[bold]{ckpt.root}[/]  layout [bold]{res.drafter.layout}[/] → [bold]{r.engine} {r.version}[/] "
        f"({r.era.name}; class {r.cls.name}; config read as {r.config_view}): {verdict}"
    )
    tt = Table(title=f"checkpoint tensors ({len(r.tensors)})")
    for col in ("checkpoint name", "dtype", "shape", f"{r.engine} name", "fate", "why"):
        tt.add_column(col, overflow="fold")
    for t in r.tensors:
        info = ckpt.tensors[t.name]
        tgt = (t.engine_name or "—") + (f" [{t.shard}]" if t.shard else "")
        tt.add_row(t.name, info.dtype, str(list(info.shape)), tgt, f"[{FATE_STYLE.get(t.status, '')}]{t.status}[/]", t.reason)
    console.print(tt)
    pt = Table(title=f"{r.cls.name} parameters ({len(r.params)})")
    for col in ("parameter", "shape", "status", "filled by"):
        pt.add_column(col, overflow="fold")
    for p in r.params:
        pt.add_row(p.name, str(list(p.shape)) if p.shape else "?", f"[{FATE_STYLE.get(p.status, '')}]{p.status}[/]", ", ".join(p.filled_by) or "—")
    console.print(pt)
    for a in r.assumptions:
        console.print(f"[dim]assumption: {a}[/]")
    if res.aux:
        a = res.aux
        console.print(f"aux layers (target boundaries, input of layer b): trained {a['trained']} — {a['trained_note']}")
        console.print(f"                                                  fed     {a['fed']} — {a['ids_source']}")
        for n in a["notes"]:
            console.print(f"  [dim]{n}[/]")
    _print_findings(res)
    console.print()


def print_check_summary(ckpt: Checkpoint, results: list[CheckResult]) -> None:
    d = results[0].drafter
    console.print(f"[bold]{ckpt.root}[/]  layout [bold]{d.layout}[/]")
    t = Table(title="every engine version we model")
    for col in ("engine", "version", "era", "verdict", "dropped", "missing", "mismatched", "raises", "findings"):
        t.add_column(col, overflow="fold")
    for res in results:
        r = res.report
        errs = sorted({f.code for f in res.findings if f.severity == "error"})
        dropped = [x for x in r.tensors if x.status == "dropped"]
        t.add_row(
            r.engine,
            r.version,
            r.era.name,
            "[green]ok[/]" if res.ok else "[red]NOT OK[/]",
            str(len(dropped)),
            str(len(r.missing)),
            str(len(r.mismatched)),
            str(len(r.errors)),
            ", ".join(errs) or "—",
        )
    console.print(t)
    for res in results:
        if not res.ok:
            console.print(f"[bold]{res.report.engine} {res.report.version}[/] ({res.report.era.name}):")
            _print_findings(res)
    console.print("details for one engine: specbridge check PATH --engine NAME==VERSION")
