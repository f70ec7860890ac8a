"""The `specbridge` command line. Exit codes: 0 ok, 1 findings with severity error, 2 unusable input."""

from __future__ import annotations

from typing import Optional

import typer

from .helpfmt import WideHelpCommand, WideHelpGroup
from .options import FLAG, number_param, path_argument, typer_param


class _App(typer.Typer):
    """typer's app whose every command (those the optional modules register too) prints helpfmt's --help."""

    def command(self, *args, cls=None, **kwargs):
        return super().command(*args, cls=cls or WideHelpCommand, **kwargs)


ROOT_HELP = (
    "specbridge: get speculative-decoding drafters (EAGLE-3, P-EAGLE, DFlash, DFlash2, DSpark, EAGLE-1/2, Medusa, "
    "MTP heads, plain draft models) from training to serving with nothing lost on the way."
)

app = _App(
    cls=WideHelpGroup,
    add_completion=True,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    help=ROOT_HELP,
)


def _version(value: bool) -> None:
    if value:
        from .. import __version__

        print(f"specbridge {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", "-V", callback=_version, is_eager=True, metavar="", help="print the version and exit"),
) -> None:
    """specbridge: get speculative-decoding drafters from training to serving with nothing lost on the way."""


def fail(message: str, code: int = 2) -> None:
    """Refuse: one line on stderr (and a JSON object on stdout under --json), exit `code`."""
    from .contract import CliError

    raise CliError(message, code)


@app.command()
def inspect(
    path: str = typer_param("inspect", "path"),
    as_json: bool = typer_param("inspect", "as_json"),
) -> None:
    """Name the drafter's producer layout and geometry and list every tensor (headers only)."""
    from .commands import inspect_cmd

    raise typer.Exit(inspect_cmd(path, as_json))


@app.command()
def check(
    path: str = typer_param("check", "path"),
    engine: Optional[list[str]] = typer_param("check", "engine"),
    target: Optional[str] = typer_param("check", "target"),
    launch: Optional[str] = typer_param("check", "launch"),
    parent: Optional[str] = typer_param("check", "parent"),
    mtp: bool = typer_param("check", "mtp"),
    as_json: bool = typer_param("check", "as_json"),
    tables: bool = typer_param("check", "tables"),
    fail_on: Optional[list[str]] = typer_param("check", "fail_on"),
    ignore: Optional[list[str]] = typer_param("check", "ignore"),
) -> None:
    """Predict exactly what an engine version will load, drop, leave random or reject.

    With --target and --launch, also whether drafter, target and launch flags fit together. A target with an MTP
    head: its head."""
    from .commands import check_cmd

    raise typer.Exit(check_cmd(path, engine, as_json, tables, target, launch, parent, fail_on, ignore, mtp))


@app.command()
def launch(
    path: str = path_argument("drafter checkpoint, or a target that carries an MTP head"),
    engine: str = typer.Option(..., "--engine", "-e", help="sglang, vllm or trtllm, optionally ==VERSION"),
    target: Optional[str] = typer.Option(
        None, "--target", "-t", help="target model path (or hub id) as the engine will be given it (a drafter needs it)"
    ),
    steps: Optional[int] = number_param(
        "--steps",
        None,
        help="draft steps (vLLM num_speculative_tokens, TensorRT-LLM max_draft_len); default 3, for a DFlash drafter its block_size - 1 (the whole trained block)",
    ),
    topk: Optional[int] = number_param("--topk", None, help="SGLang --speculative-eagle-topk (default 1; EAGLE-3 only)"),
    draft_tokens: Optional[int] = number_param(
        "--draft-tokens", None, help="SGLang --speculative-num-draft-tokens (default steps+1 for topk 1)"
    ),
    as_json: bool = FLAG("--json", help="print one JSON object"),
) -> None:
    """Print the exact, checked engine command line; refuse (exit 1, with the findings) what check flags.

    For a DFlash drafter: vLLM method dflash, SGLang DFLASH, TensorRT-LLM decoding_type DFlash, drafting its trained block.
    For a target with an MTP head: the line that serves the head (vLLM method mtp, SGLang NEXTN, TensorRT-LLM MTP).
    TensorRT-LLM's speculative settings live in a YAML file its line names (--config): printed first, as a shell
    here-document that writes it."""
    from .commands import launch_cmd

    raise typer.Exit(launch_cmd(path, engine, target, steps, topk, draft_tokens, as_json))


@app.command()
def engines(as_json: bool = FLAG("--json", help="print one JSON object")) -> None:
    """List every modelled engine, era and release range (what --engine NAME==VERSION can name)."""
    from .engines_cmd import engines_cmd

    raise typer.Exit(engines_cmd(as_json))


def _register_optional() -> None:
    """Commands whose modules may pull heavy extras register themselves lazily."""
    for mod in ("train_cmd", "convert_cmd", "restore_cmd", "eval_cmd", "bench_cmd", "serve_cmd", "verify_cmd"):
        try:
            m = __import__(f"specbridge.cli.{mod}", fromlist=["register"])
        except ModuleNotFoundError as e:
            if e.name and e.name.startswith("specbridge.cli"):
                continue
            raise
        m.register(app)


_register_optional()


def click_command():
    """The click command typer builds from `app`: what entry.run_typer invokes (and the fuzzer replaces)."""
    return typer.main.get_command(app)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
