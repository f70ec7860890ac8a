"""Human output: every tensor and every engine parameter accounted for, findings with their fix."""

from __future__ import annotations

from rich.table import Table

from ..checkpoint.reader import Checkpoint
from ..display import markup_safe as esc
from ..engines.simulate import Fate, Fill, LoadReport
from ..layouts.canonical import layout_label
from ..rules.check import CheckResult
from ..view import CheckpointView
from .console import make_console
from .jsonout import canonical_name as _canon

# Piped output (CI logs, files) gets a wide page so tensor names are never cut or folded. Every value
# from the checkpoint, config, target or engine goes through `esc` (a `[/]` in a tensor name must print,
# not raise MarkupError); emoji codes such as `:x:` in a name stay as written.
console = make_console()  # a terminal: its width; a pipe: no width, nothing folded

NAME_ALIGN = 64
FATE_STYLE = {
    Fate.LOADED: "green",
    Fate.DROPPED: "bold red",
    Fate.RAISES: "bold red",
    Fate.MISMATCHED: "bold red",
    Fate.UNUSED: "dim",
    Fate.BUFFER: "green",
    Fate.OVERWRITTEN: "yellow",
    Fate.TRUNCATED: "bold red",
    Fate.PADDED: "bold red",
    Fill.MISSING: "bold red",
    Fill.PARTIAL: "bold red",
    Fill.SHARED: "cyan",
    Fill.OWN_UNLESS_EQUAL: "green",
    Fill.HARMLESS: "dim",
    Fill.DEFAULT_INIT: "yellow",
}


def _styled(status: str) -> str:
    """A tensor's fate or a parameter's status in its colour (the status text itself escaped); a status
    without a colour (a new fate such as `padded`) prints plain, not as an empty tag `[]` and a `[/]`
    that closes nothing."""
    style = FATE_STYLE.get(status)
    return f"[{style}]{esc(status)}[/]" if style else esc(status)


def human_bytes(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1000
    return f"{n} B"


def tensor_lines(rows: list[tuple[str, str, str, str, str | None]], width: int) -> list[str]:
    """inspect's tensor rows (name, dtype, shape, bytes, canonical name) as markup lines, columns aligned (the
    name's up to NAME_ALIGN characters: one longer name runs past it, not every line). Never a table cell, so a
    name is never folded mid-word. One line per tensor when that fits `width` (always in a pipe, whose width
    is PIPE_WIDTH: one line grep finds); on a narrower terminal the canonical name goes on a line of its own
    under the row, and where even the row does not fit, everything after the name does."""
    widths = [min(max((len(row[i]) for row in rows), default=0), NAME_ALIGN) for i in range(4)]
    columns = sum(widths) + 2 * 3 + 2  # the four aligned cells, their gaps and the indent
    longest_canonical = max((len(row[4] or "unrecognised") for row in rows), default=0)
    lines = []
    for name, dtype, shape, nbytes, canonical in rows:
        cells = "  ".join(esc(v.ljust(w)) for v, w in zip((name, dtype, shape, nbytes), widths))
        arrow = f"→ {esc(canonical) if canonical else '[red]unrecognised[/]'}"
        if columns + 1 + 2 + longest_canonical <= width:
            lines.append(f"  {cells} {arrow}")
            continue
        if columns <= width:
            head, rest = cells.rstrip(), [arrow]
        else:
            head, rest = esc(name), ["  ".join(esc(v.ljust(w)) for v, w in zip((dtype, shape, nbytes), widths[1:])).rstrip(), arrow]
        lines.append(f"  {head}")
        if len(rest) == 2 and 6 + len(rest[0]) + 3 + len(canonical or "unrecognised") <= width:
            rest = [f"{rest[0]} {arrow}"]
        lines += [f"      {part}" for part in rest]
    return lines


def print_inspect(view: CheckpointView) -> None:
    ckpt, d, fam = view.ckpt, view.drafter, view.verdict
    console.print(f"[bold]{esc(ckpt.root)}[/]  ({esc(ckpt.storage)}, {len(ckpt.weight_files)} file(s))")
    console.print(f"family: [bold]{esc(fam.family.title)}[/] ({esc('; '.join(fam.evidence))})")
    if fam.mislabel is not None:
        console.print(f"[yellow]mislabelled: {esc(fam.mislabel.line())}[/]")
    console.print(f"layout: [bold]{esc(layout_label(d))}[/]  architecture: {esc(d.architecture)}")
    for e in d.evidence:
        console.print(f"  evidence: {esc(e)}")
    g = d.geometry()
    t = Table(title="geometry", show_header=False, box=None, pad_edge=False)
    for k, v in g.items():
        t.add_row(esc(k), esc(v))
    console.print(t)
    rows = [
        (info.name, info.dtype, str(list(info.shape)), human_bytes(info.nbytes), _canon(d, info.name)) for info in ckpt.tensors.values()
    ]
    console.print(f"[bold]tensors ({len(rows)})[/]: name dtype shape bytes → canonical name")
    for line in tensor_lines(rows, console.width):
        console.print(line, soft_wrap=True)
    console.print(f"total: {len(ckpt.tensors)} tensors, {human_bytes(ckpt.total_bytes)}, dtypes {esc(d.dtypes)}")
    if ckpt.pickles:
        console.print(f"[yellow]pickled files present, not read: {esc(', '.join(p.name for p in ckpt.pickles))}[/]")


def print_accounting(ckpt: Checkpoint, res: CheckResult) -> None:
    """check --tables: every checkpoint tensor's fate and every engine parameter's status, for one engine version."""
    r: LoadReport = res.report
    verdict = "[bold green]OK[/]" if res.ok else "[bold red]NOT OK[/]"
    console.print(
        f"[bold]{esc(ckpt.root)}[/]  layout [bold]{esc(layout_label(res.drafter))}[/] → [bold]{esc(r.engine)} {esc(r.version)}[/] "
        f"({esc(r.era.name)}; class {esc(r.cls.name)}; config read as {esc(r.config_view)}): {verdict}"
    )
    # one line per tensor and per parameter: a narrow page wraps them at spaces, never inside a name
    console.print(f"[bold]checkpoint tensors ({len(r.tensors)})[/]: name dtype shape → {esc(r.engine)} name: fate (why)")
    for t in r.tensors:
        info = ckpt.tensors[t.name]
        tgt = (t.engine_name or "—") + (f" [{t.shard}]" if t.shard else "")
        why = f" ({esc(t.reason)})" if t.reason else ""
        console.print(f"  {esc(t.name)} {esc(info.dtype)} {esc(list(info.shape))} → {esc(tgt)}: {_styled(t.status)}{why}")
    console.print(f"[bold]{esc(r.cls.name)} parameters ({len(r.params)})[/]: name shape: status ← filled by")
    for p in r.params:
        shape = esc(list(p.shape)) if p.shape else "?"
        console.print(f"  {esc(p.name)} {shape}: {_styled(p.status)} ← {esc(', '.join(p.filled_by) or '—')}")
    for a in r.assumptions:
        console.print(f"[dim]assumption: {esc(a)}[/]")
    if res.aux:
        a = res.aux
        console.print(f"aux layers (target boundaries, input of layer b): trained {esc(a['trained'])} — {esc(a['trained_note'])}")
        console.print(f"                                                  fed     {esc(a['fed'])} — {esc(a['ids_source'])}")
        for n in a["notes"]:
            console.print(f"  [dim]{esc(n)}[/]")
