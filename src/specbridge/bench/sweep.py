"""Sweep speculative settings on a real server: restart the engine for each setting (and once
without speculation), benchmark it, and report the best setting per concurrency.

The story compared 16 draft steps against 10/5; the right setting depends on concurrency, and
speculation stops paying at some load — so the answer is a table, not one number."""

from __future__ import annotations

import asyncio
import os
import shlex
from pathlib import Path

from ..engines.launch import build_launch, with_interpreter, without_speculation
from ..engines.registry import SERVERS
from ..record import field, record
from .runner import BenchConfig, run_bench
from .server import ServerProcess, ServerStartError, free_port
from .watchdog import log_lines, watch


@record(frozen=False)
class Setting:
    steps: int | None  # None = no speculation (the baseline)
    topk: int = 1
    draft_tokens: int | None = None

    @property
    def label(self) -> str:
        if self.steps is None:
            return "no speculation"
        return f"steps {self.steps}" + (f", topk {self.topk}, draft tokens {self.draft_tokens}" if self.topk > 1 else "")


@record(frozen=False)
class SweepResult:
    setting: Setting
    tok_s: dict[int, float | None] = field(default_factory=dict)  # concurrency -> output tok/s
    mal: float | None = None
    error: str | None = None
    start_s: float | None = None


def server_command(
    engine: str,
    python: str | None,
    target: str,
    draft: str,
    port: int,
    s: Setting,
    extra: list[str],
    family: str = "eagle3",
    env: tuple[str, ...] = (),
) -> list[str]:
    """The argv a sweep starts for one setting: the line `specbridge launch` prints for it (`build_launch`,
    the engine's LAUNCH row, its line for the drafter's family), run by `python` when given, its speculative tail
    cut for the baseline (the model runner `env` selects kept: the same server without a drafter); then the address and the engine's `sweep_flags` (its SERVE row)."""
    line = build_launch(engine, target, draft, s.steps or 1, s.topk, s.draft_tokens, family=family, env=env)
    argv = shlex.split(line) if s.steps else without_speculation(engine, shlex.split(line))
    return with_interpreter(engine, argv, python) + ["--host", "127.0.0.1", "--port", str(port), *SERVERS[engine].sweep_flags, *extra]


def run_sweep(
    engine: str,
    python: str | None,
    target: str,
    draft: str,
    settings: list[Setting],
    bench: BenchConfig,
    log_dir: Path,
    phase_timeout: float = 600,
    extra: list[str] | None = None,
    say=print,
    family: str = "eagle3",
    env: tuple[str, ...] = (),
) -> list[SweepResult]:
    out = []
    for s in [Setting(None)] + settings:
        port = free_port()
        cmd = server_command(engine, python, target, draft, port, s, list(extra or []), family, env)
        res = SweepResult(s)
        say(f"== {s.label}: {shlex.join(cmd)}")
        row = SERVERS[engine]
        ready_url = f"http://127.0.0.1:{port}{row.ready_path}"
        srv = ServerProcess(cmd, log_path=log_dir / f"server-{len(out)}.log", env={**os.environ, **row.sweep_env}, stop_grace=10)
        try:
            srv.start()
            prog, err = watch(log_lines(srv, ready_url, engine, poll=0.3), engine, phase_timeout, phase_timeout * 3, alive=srv.alive)
            if err:
                res.error = err
            else:
                res.start_s = prog.reached[-1][1]
                cfg = BenchConfig(**{**bench.__dict__, "url": f"http://127.0.0.1:{port}", "baseline_url": None})
                rep = asyncio.run(run_bench(cfg))
                if rep.error:
                    res.error = rep.error
                run = rep.server("spec")
                if run:
                    res.tok_s = {lv.concurrency: lv.tok_s for lv in run.levels}
                    res.mal = run.acceptance.mal if run.acceptance else None
        except ServerStartError as e:
            res.error = str(e)
        except OSError as e:  # the program is not there (an engine not installed, a wrong --python)
            res.error = f"cannot start {cmd[0]}: {e.strerror or e}"
        finally:
            srv.stop()
        say(
            f"   {'error: ' + res.error.splitlines()[0] if res.error else 'tok/s ' + str({k: round(v, 1) if v else v for k, v in res.tok_s.items()})}"
            + (f", MAL {res.mal:.2f}" if res.mal else "")
        )
        out.append(res)
    return out


def best_per_concurrency(results: list[SweepResult]) -> list[dict]:
    base = results[0]
    levels = sorted({c for r in results for c in r.tok_s})
    rows = []
    for c in levels:
        b = base.tok_s.get(c)
        cands = [(r.tok_s.get(c), r) for r in results[1:] if r.tok_s.get(c)]
        if not cands:
            rows.append({"concurrency": c, "best": None, "speedup": None, "baseline_tok_s": b})
            continue
        t, r = max(cands, key=lambda x: x[0])
        sp = t / b if b else None
        best = r.setting.label if (sp is None or sp >= 1) else "no speculation"
        rows.append(
            {
                "concurrency": c,
                "best": best,
                "best_speculative": r.setting.label,
                "tok_s": t,
                "baseline_tok_s": b,
                "speedup": sp,
                "mal": r.mal,
            }
        )
    return rows


def sweep_table(results: list[SweepResult]) -> list[dict]:
    """One row per setting × concurrency: output tok/s, the engine's accept length, speedup over no speculation
    at the same concurrency (what a user reads to pick a setting)."""
    base = results[0].tok_s
    rows = []
    for r in results:
        for c in sorted(set(r.tok_s) | set(base)):
            t, b = r.tok_s.get(c), base.get(c)
            rows.append(
                {
                    "setting": r.setting.label,
                    "steps": r.setting.steps,
                    "concurrency": c,
                    "tok_s": t,
                    "mal": r.mal,
                    "speedup": (t / b) if t and b else None,
                    "error": r.error,
                }
            )
    return rows


def format_table(rows: list[dict]) -> str:
    """The sweep as a markdown table (stdout and docs read the same text)."""
    out = ["| setting | concurrency | tok/s | accept length | speedup |", "| --- | --- | --- | --- | --- |"]
    for r in rows:
        tok = f"{r['tok_s']:.1f}" if r["tok_s"] else ("error" if r["error"] else "–")
        mal = f"{r['mal']:.2f}" if r["mal"] else "–"
        sp = f"{r['speedup']:.2f}×" if r["speedup"] else "–"
        out.append(f"| {r['setting']} | {r['concurrency']} | {tok} | {mal} | {sp} |")
    return "\n".join(out)


def plot_sweep(rows: list[dict], path: Path, title: str = "") -> None:
    """Speedup over no speculation against draft steps, one line per concurrency."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..display import plot_safe

    fig, ax = plt.subplots(figsize=(5.5, 3.5))
    for c in sorted({r["concurrency"] for r in rows}):
        pts = sorted((r["steps"], r["speedup"]) for r in rows if r["concurrency"] == c and r["steps"] and r["speedup"])
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=f"concurrency {c}")
    ax.set_xticks(sorted({r["steps"] for r in rows if r["steps"]}))
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("draft steps")
    ax.set_ylabel("speedup over no speculation")
    ax.legend()
    if title:
        ax.set_title(plot_safe(title), fontsize=9, wrap=True)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
