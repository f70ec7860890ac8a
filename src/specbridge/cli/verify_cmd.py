"""`specbridge verify PATH --engine vllm|sglang --python ENV_PY`: the engine's own loader on the drafter, in the engine's
environment, with check's prediction for that release set beside it (conformance/verify.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

from .contract import EXIT_INTERNAL, EXIT_USAGE, CliError
from .optspec import check_number


def verify_cmd(
    path: str,
    engine: str,
    python: str,
    target: str | None,
    method: str | None,
    sglang_dir: str | None,
    steps: int | None,
    as_json: bool,
    report_file: str | None,
) -> int:
    from ..conformance.verify import HarnessFailed, Request, VerifyRefused, verify
    from .contract import dumps, print_json

    if not Path(python).is_file():
        raise CliError(f"--python {python}: no such interpreter (the engine environment's bin/python)")
    if sglang_dir is not None and not Path(sglang_dir).is_dir():
        raise CliError(f"--sglang-dir {sglang_dir}: not a directory (a folder holding the unpacked sglang package)")
    if steps is not None:  # the --steps row (optspec.NUMBERS), also for a caller that skips the command line
        check_number("--steps", steps)
    req = Request(path, engine, python, target, method, sglang_dir, steps)
    try:
        res = verify(req)
    except VerifyRefused as e:
        raise CliError(str(e), EXIT_USAGE) from None
    except HarnessFailed as e:
        raise CliError(f"the harness failed: {e}", EXIT_INTERNAL) from None
    if report_file:
        from .contract import document

        Path(report_file).write_text(dumps(document("verify", res.report)) + "\n")
    if as_json:
        print_json("verify", res.report)
    else:
        sys.stdout.write("\n".join(res.lines) + "\n")
    if res.report["error"] is not None and not as_json:
        sys.stderr.write(f"specbridge: error: {res.report['error']['message']}\n")
    return res.exit_code


def register(app) -> None:
    """Typer is imported here, not with the module."""
    import typer

    from .options import FLAG, number_param, path_argument

    @app.command()
    def verify(
        path: str = path_argument("drafter checkpoint directory, or a target that carries an MTP head"),
        engine: str = typer.Option(..., "--engine", "-e", help="vllm or sglang (optionally ==VERSION: the environment must hold it)"),
        python: str = typer.Option(
            ...,
            "--python",
            help="the interpreter of an environment where the engine imports (yours, or one scripts/setup_vllm_cpu.sh / "
            "setup_sglang_conformance.sh made)",
        ),
        target: Optional[str] = typer.Option(
            None,
            "--target",
            "-t",
            help="target model directory, config.json or alias; vLLM: one without weights is built as a stand-in with random "
            "weights (default: a stand-in derived from the drafter's config)",
        ),
        method: Optional[str] = typer.Option(None, "--method", help="vLLM speculative method (default: the drafter family's)"),
        sglang_dir: Optional[str] = typer.Option(
            None, "--sglang-dir", help="a folder holding an unpacked sglang release, put first on sys.path (the conformance wheels/VERSION)"
        ),
        steps: Optional[int] = number_param("--steps", None, help="vLLM num_speculative_tokens (default: what launch would use)"),
        as_json: bool = FLAG("--json", help="print one JSON object (the report)"),
        report: Optional[str] = typer.Option(None, "--report", help="also write the JSON report to this file (to attach to a bug)"),
    ) -> None:
        """Run the engine's own loader on the drafter (CPU, in the engine's environment) and set check's prediction for
        that release beside it: exit 0 agreed and loaded cleanly, 1 the loader shows an error outcome or the prediction
        differs, 2 unusable input or not buildable on CPU, 3 the harness failed."""
        raise typer.Exit(verify_cmd(path, engine, python, target, method, sglang_dir, steps, as_json, report))
