"""`specbridge bench`: throughput, TTFT/ITL and the engine's own acceptance counters against a running
OpenAI-compatible server (vLLM or SGLang), optionally against a no-speculation baseline server.

httpx is imported only inside the command (the `bench` extra), so the rest of the CLI works without it.
Exit codes: 0 ok, 1 the run failed (a server erred, hung, died or answered garbage metrics), 2 bad input.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from .options import FLAG, number_param, numbers_param, prompt_format_or_fail, shared_param
from .optspec import MAX_NEW, PROMPT_FORMAT, PROMPTS


class _Progress:
    """A rich progress bar on stderr, one task per (server, level)."""

    def __init__(self, enabled: bool):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.p = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            disable=not enabled,
            transient=False,
        )

    def __enter__(self):
        self.p.start()
        return self

    def __exit__(self, *exc):
        self.p.stop()

    def add(self, desc: str, total: int):
        from ..display import markup_safe

        return self.p.add_task(markup_safe(desc), total=total)  # the description names the server URL

    def advance(self, task) -> None:
        self.p.advance(task)

    def finish(self, task) -> None:
        self.p.stop_task(task)


def bench_command(
    url: str = typer.Option(..., "--url", help="the server under test (speculation on), e.g. http://127.0.0.1:8000"),
    baseline_url: Optional[str] = typer.Option(
        None, "--baseline-url", help="the same target without speculation, for speedup and crossover"
    ),
    prompts: Optional[Path] = shared_param(PROMPTS),
    prompt_format: str = shared_param(PROMPT_FORMAT),
    concurrency: str = numbers_param("--concurrency", "1,4,16", help="comma-separated concurrency levels"),
    max_tokens: int = shared_param(MAX_NEW),
    num_prompts: int = number_param("--num-prompts", 16, help="requests per level (at least the concurrency)"),
    timeout: float = number_param("--timeout", 60.0, help="seconds per request (whole stream) and per metrics read"),
    warmup: int = number_param("--warmup", 1, help="warm-up requests per server (not measured)"),
    max_errors: int = number_param("--max-errors", 0, help="failed requests tolerated before the run stops"),
    engine: str = typer.Option(
        "auto", "--engine", help="where acceptance is read: auto, vllm (/metrics), sglang (/server_info, meta_info), none"
    ),
    model: Optional[str] = typer.Option(None, "--model", help="model name to request (default: the first of /v1/models)"),
    as_json: bool = FLAG("--json", help="print one JSON object (docs/ci.md)"),
    plot: Optional[Path] = typer.Option(None, "--plot", help="write a PNG: throughput vs concurrency and acceptance"),
    progress: bool = typer.Option(True, "--progress/--no-progress", metavar="", help="progress bar on stderr"),
) -> None:
    """Benchmark a serving endpoint: output tok/s, TTFT and inter-token latency percentiles per concurrency.

    Acceptance is read from the engine's own counters (deltas over the run), with the speedup vs a baseline and
    the crossover. Prompts are sent as token ids from the server's /tokenize: the same ids eval measures."""
    from .contract import EXIT_FINDINGS, error_object, fail, print_json

    try:
        import httpx  # noqa: F401
    except ImportError as exc:
        fail(f"bench needs the bench extra (pip install 'specbridge[bench]'): {exc}")
    import asyncio

    from rich.console import Console

    from ..bench.prompts import PromptError, load_prompts
    from ..bench.report import plot as do_plot
    from ..bench.report import render
    from ..bench.runner import ENGINES, BenchConfig, run_bench
    from .paths import input_file, output_file

    prompt_format = prompt_format_or_fail(prompt_format)
    if prompts is not None:
        input_file("--prompts", prompts)
    if plot is not None:
        output_file("--plot", plot)  # before a single request: not found out after the whole benchmark
    if engine not in ENGINES:
        raise typer.BadParameter(f"--engine {engine!r}: one of {', '.join(ENGINES)}")
    for u in (url, baseline_url):
        if u is not None and not u.startswith(("http://", "https://")):
            raise typer.BadParameter(f"{u!r}: expected an http(s):// URL")
    try:
        plist, source = load_prompts(prompts)
    except PromptError as e:
        fail(f"--prompts {e}")
    cfg = BenchConfig(
        url=url,
        baseline_url=baseline_url,
        prompts=plist,
        prompts_source=source,
        concurrency=sorted(set(concurrency)),  # checked and parsed by its NUMBERS row
        max_tokens=max_tokens,
        prompt_format=prompt_format,
        num_prompts=num_prompts,
        timeout=timeout,
        warmup=warmup,
        max_errors=max_errors,
        engine=engine,
        model=model,
    )
    with _Progress(progress and sys.stderr.isatty()) as prog:
        rep = asyncio.run(run_bench(cfg, prog))
    if plot is not None and rep.servers:
        try:
            do_plot(rep, plot)
        except (RuntimeError, OSError) as e:
            if rep.ok:
                fail(f"--plot {plot}: {e}")
            sys.stderr.write(f"specbridge: error: --plot {plot}: {e}\n")
    if as_json:  # the run's failure as the contract's error object (the report keeps its reason as text)
        print_json("bench", {**rep.to_json(), "error": None if rep.ok else error_object(EXIT_FINDINGS, rep.error)})
    else:
        render(rep, Console(width=160, emoji=False))
    if not rep.ok:
        sys.stderr.write(f"specbridge: bench failed: {rep.error}\n")
        raise typer.Exit(EXIT_FINDINGS)
    raise typer.Exit(0)


def register(app: typer.Typer) -> None:
    app.command("bench")(bench_command)
