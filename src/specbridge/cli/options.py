"""Option helpers every command shares, so a flag looks and reads the same everywhere."""

from __future__ import annotations

import typer

from .optspec import ARGUMENT, Opt, option
from .optspec import FLAG as FLAG_KIND


def FLAG(*names: str, help: str = "") -> bool:  # noqa: N802 - reads like typer.Option
    """An on/off switch, shown as a flag in --help (no value, no type column)."""
    return typer.Option(False, *names, help=help, metavar="", show_default=False)


def typer_param(command: str, dest: str):
    """The typer parameter of one row of `optspec.OPTIONS`: the fast path parses the same row."""
    o = option(command, dest)
    if o.kind == ARGUMENT:
        return typer.Argument(..., help=o.help)
    if o.kind == FLAG_KIND:
        return FLAG(*o.flags, help=o.help)
    return typer.Option(o.default, *o.flags, help=o.help)


def shared_param(o: Opt, **kw):
    """The typer option of a row several typer commands share (optspec.PROMPTS, PROMPT_FORMAT, MAX_NEW);
    `kw` adds typer's own checks (min=1)."""
    return typer.Option(o.default, *o.flags, help=o.help, **kw)


DTYPES = ("float32", "bfloat16", "float16")  # eval's and serve's --dtype


def dtype_or_fail(value: str) -> str:
    """--dtype checked at the door, case-insensitive (exit 2, one line): eval's precision, and serve's for the
    engine, so that serve can run what eval predicts."""
    from .commands import fail

    dtype = value.strip().lower()
    if dtype not in DTYPES:
        fail(f"--dtype must be one of {', '.join(DTYPES)}, not {dtype!r}")
    return dtype


def prompt_format_or_fail(value: str) -> str:
    """--prompt-format checked at the door (exit 2, one line)."""
    from ..prompts import PromptError, prompt_format
    from .commands import fail

    try:
        return prompt_format(value)
    except PromptError as e:
        fail(str(e))
