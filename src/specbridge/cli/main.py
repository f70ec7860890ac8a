"""The `specbridge` command line. Exit codes: 0 ok, 1 findings with severity error, 2 unusable input."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from ..checkpoint.errors import CheckpointError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="specbridge: get EAGLE-3 drafters from training to serving with nothing lost on the way.",
)


def fail(message: str, code: int = 2) -> None:
    """One clear line on stderr, no traceback."""
    sys.stderr.write(f"specbridge: error: {message}\n")
    raise typer.Exit(code)


def _open(path: Path):
    from ..checkpoint.reader import open_checkpoint

    try:
        return open_checkpoint(path)
    except CheckpointError as e:
        fail(str(e))


@app.command()
def inspect(
    path: Path = typer.Argument(..., help="drafter directory, .safetensors file or sharded index"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
) -> None:
    """Name the drafter's producer layout and geometry and list every tensor (headers only)."""
    from ..layouts.canonical import describe
    from . import render

    ckpt = _open(path)
    d = describe(ckpt)
    if as_json:
        print(json.dumps(render.inspect_json(ckpt, d), indent=2))
        return
    render.print_inspect(ckpt, d)


@app.command()
def check(
    path: Path = typer.Argument(..., help="drafter directory, .safetensors file or sharded index"),
    engine: str = typer.Option("all", "--engine", "-e", help="sglang, vllm, trtllm, NAME==VERSION, or all"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object (the stable contract)"),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="with --engine all: print every table too"),
) -> None:
    """Predict exactly what an engine version will load, drop, leave random or reject."""
    from ..engines.registry import EngineSpecError
    from ..rules.check import check as run_check
    from . import render

    ckpt = _open(path)
    try:
        results = run_check(ckpt, engine, str(path))
    except EngineSpecError as e:
        fail(str(e))
    ok = all(r.ok for r in results)
    if as_json:
        obj = results[0].to_json() if len(results) == 1 else {"ok": ok, "results": [r.to_json() for r in results]}
        print(json.dumps(obj, indent=2))
    elif len(results) == 1 or verbose:
        for r in results:
            render.print_check(ckpt, r)
    else:
        render.print_check_summary(ckpt, results)
    raise typer.Exit(0 if ok else 1)


def _register_optional() -> None:
    """Commands whose modules may pull heavy extras register themselves lazily."""
    for mod in ("train_cmd", "convert_cmd", "eval_cmd", "bench_cmd"):
        try:
            m = __import__(f"specbridge.cli.{mod}", fromlist=["register"])
        except ModuleNotFoundError as e:
            if e.name and e.name.startswith("specbridge.cli"):
                continue
            raise
        m.register(app)


_register_optional()


def main() -> None:
    app()


if __name__ == "__main__":
    main()
