"""Render a BenchReport: a rich table (text), and a PNG plot (matplotlib, optional)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from ..display import markup_safe, plot_safe
from .runner import BenchReport, LevelResult


def _f(x, fmt="{:.1f}", none="–"):
    return none if x is None else fmt.format(x)


def _ms3(d: dict) -> str:
    if not d or d.get("p50") is None:
        return "–"
    return "/".join(f"{d[k] * 1000:.0f}" if d[k] * 1000 >= 10 else f"{d[k] * 1000:.1f}" for k in ("p50", "p90", "p99"))


def render(rep: BenchReport, console: Console) -> None:
    """Lines that carry server text (URLs, model names, notes, errors) print with markup off: a model
    named `[/]` prints as written."""
    spec, base = rep.server("spec"), rep.server("baseline")
    head = f"specbridge bench  {rep.config.url}"
    if spec:
        head += f" (model {spec.model or '?'}, acceptance from {spec.engine})"
    if base:
        head += f"  vs baseline {rep.config.baseline_url} (model {base.model or '?'})"
    console.print(head, highlight=False, markup=False, emoji=False)
    console.print(
        f"prompts: {rep.config.prompts_source} ({len(rep.config.prompts)}), max_tokens {rep.config.max_tokens}, "
        f"timeout {rep.config.timeout:g} s/request",
        highlight=False,
        markup=False,
        emoji=False,
    )
    t = Table(show_edge=False, pad_edge=False)
    for col in (
        "conc",
        "reqs",
        "spec tok/s",
        "base tok/s",
        "speedup",
        "TTFT ms p50/90/99",
        "ITL ms p50/90/99",
        "MAL",
        "accept",
        "per-position",
    ):
        t.add_column(col, justify="right" if col not in ("per-position",) else "left")
    bl = {lv.concurrency: lv for lv in base.levels} if base else {}
    sp = dict(rep.speedups())
    for lv in spec.levels if spec else []:
        b: LevelResult | None = bl.get(lv.concurrency)
        a = lv.acceptance
        t.add_row(
            str(lv.concurrency),
            f"{lv.ok}/{lv.requests}",
            _f(lv.tok_s),
            _f(b.tok_s if b else None),
            _f(sp.get(lv.concurrency), "{:.2f}×"),
            _ms3(lv.ttft),
            _ms3(lv.itl),
            _f(a.mal if a else None, "{:.2f}"),
            _f(a.rate if a else None, "{:.1%}"),
            " ".join(f"{r:.2f}" for r in a.per_pos) if a and a.per_pos else "–",
        )
    console.print(t)
    if spec and spec.acceptance:
        a = spec.acceptance
        line = f"acceptance over the run ({a.source}): "
        if None not in (a.drafts, a.draft_tokens, a.accepted):  # counted drafts (an engine's counters)
            line += f"drafts {a.drafts:.0f}, drafted tokens {a.draft_tokens:.0f}, accepted {a.accepted:.0f}, "
        line += f"MAL {_f(a.mal, '{:.3f}')}"
        if a.rate is not None:
            line += f", draft acceptance {a.rate:.1%}"
        if a.per_pos:
            line += ", per-position " + " ".join(f"{r:.3f}" for r in a.per_pos)
        if a.note:
            line += f"  ({a.note})"
        console.print(line, highlight=False, markup=False, emoji=False)
    if spec and spec.note:
        console.print(f"note: {spec.note}", highlight=False, markup=False, emoji=False)
    if base:
        c = rep.crossover()
        msg = f"crossover: {c['note']}"
        if c.get("estimate"):
            msg += f" (≈ {c['estimate']})"
        console.print(msg, highlight=False, markup=False, emoji=False)
    if rep.error:
        console.print(f"[bold red]FAILED[/]: {markup_safe(rep.error)}", highlight=False, emoji=False)
    console.print(f"wall {rep.wall_s:.1f} s", highlight=False, markup=False, emoji=False)


def plot(rep: BenchReport, out: Path) -> None:
    """Throughput vs concurrency (spec vs baseline) and acceptance per level, as a PNG."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise RuntimeError(f"--plot needs matplotlib (pip install 'specbridge[bench]'): {e}") from None
    spec, base = rep.server("spec"), rep.server("baseline")
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for srv, label, style in ((spec, "spec", "o-"), (base, "baseline", "s--")):
        if srv and srv.levels:
            xs = [lv.concurrency for lv in srv.levels if lv.tok_s is not None]
            ys = [lv.tok_s for lv in srv.levels if lv.tok_s is not None]
            ax1.plot(xs, ys, style, label=plot_safe(f"{label} ({srv.model})"))  # the server names its model
    levels_x = sorted(rep.config.concurrency)
    c = rep.crossover()
    if c.get("estimate"):
        ax1.axvline(c["estimate"], color="grey", ls=":", label=f"crossover ≈ {c['estimate']}")
    for ax in (ax1, ax2):
        ax.set_xscale("log", base=2)
        ax.set_xticks(levels_x, [str(x) for x in levels_x])
        ax.minorticks_off()
    ax1.set_xlabel("concurrency")
    ax1.set_ylabel("output tokens / s")
    ax1.set_title("throughput")
    ax1.grid(True, alpha=0.3)
    ax1.legend()
    levels = [lv for lv in (spec.levels if spec else []) if lv.acceptance and lv.acceptance.mal is not None]
    if levels:
        ax2.plot([lv.concurrency for lv in levels], [lv.acceptance.mal for lv in levels], "o-", label="MAL")
        k = max((len(lv.acceptance.per_pos or []) for lv in levels), default=0)
        for i in range(k):
            ax2.plot(
                [lv.concurrency for lv in levels],
                [(lv.acceptance.per_pos or [None] * k)[i] for lv in levels],
                ".--",
                label=f"rate pos {i}",
            )
        ax2.legend()
    else:
        ax2.text(0.5, 0.5, "no acceptance data", ha="center", va="center", transform=ax2.transAxes)
    ax2.set_xlabel("concurrency")
    ax2.set_title("acceptance (engine counters)")
    ax2.grid(True, alpha=0.3)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
