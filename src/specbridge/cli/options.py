"""Option helpers every command shares, so a flag looks and reads the same everywhere."""

from __future__ import annotations

import typer

from .optspec import ARGUMENT, NUMBERS, Opt, check_number, number_list, option
from .optspec import FLAG as FLAG_KIND


def FLAG(*names: str, help: str = "") -> bool:  # noqa: N802 - reads like typer.Option
    """An on/off switch, shown as a flag in --help (no value, no type column)."""
    return typer.Option(False, *names, help=help, metavar="", show_default=False)


def path_argument(help: str):
    """The first argument of every command that reads a checkpoint: `path` in the code, PATH in every usage
    line and --help (docs/cli.md: one vocabulary)."""
    return typer.Argument(..., help=help, metavar="PATH")


def typer_param(command: str, dest: str):
    """The typer parameter of one row of `optspec.OPTIONS`: the fast path parses the same row."""
    o = option(command, dest)
    if o.kind == ARGUMENT:
        return path_argument(o.help)
    if o.kind == FLAG_KIND:
        return FLAG(*o.flags, help=o.help)
    return typer.Option(o.default, *o.flags, help=o.help)


def shared_param(o: Opt):
    """The typer option of a row several typer commands share (optspec.PROMPTS, PROMPT_FORMAT, MAX_NEW); a
    numeric one is checked by its NUMBERS row as the line is parsed."""
    if o.flags[0] in NUMBERS:
        return number_param(o.flags[0], o.default, *o.flags[1:], help=o.help)
    return typer.Option(o.default, *o.flags, help=o.help)


def number_checker(flag: str):
    """The parse-time check of `flag`'s optspec.NUMBERS row (a typer callback): a value out of range is
    refused before the command's body runs, the same way on every command that has the option."""

    def check(value):
        return check_number(flag, value)

    return check


def number_param(flag: str, default, *more_flags: str, help: str = "", **kw):
    """A numeric option (int or float), checked by its optspec.NUMBERS row while the line is parsed."""
    return typer.Option(default, flag, *more_flags, help=help, callback=number_checker(flag), **kw)


def numbers_param(flag: str, default: str | None, help: str = ""):
    """A comma list of integers (sweep's draft shapes, bench's and sweep's concurrency levels): parsed and each
    item checked by `flag`'s NUMBERS row while the line is parsed; the command receives the list of ints."""

    def parse(value):
        return number_list(flag, value)

    return typer.Option(default, flag, help=help, callback=parse)


DTYPES = ("float32", "bfloat16", "float16")  # eval's and serve's --dtype


def dtype_or_fail(value: str) -> str:
    """--dtype checked at the door, case-insensitive (exit 2, one line): eval's precision, and serve's for the
    engine, so that serve can run what eval predicts."""
    from .contract import fail

    dtype = value.strip().lower()
    if dtype not in DTYPES:
        fail(f"--dtype must be one of {', '.join(DTYPES)}, not {dtype!r}")
    return dtype


def prompt_format_or_fail(value: str) -> str:
    """--prompt-format checked at the door (exit 2, one line)."""
    from ..prompts import PromptError, prompt_format
    from .contract import fail

    try:
        return prompt_format(value)
    except PromptError as e:
        fail(str(e))
