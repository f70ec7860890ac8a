"""Option helpers every command shares, so a flag looks and reads the same everywhere."""

from __future__ import annotations

import typer


def FLAG(*names: str, help: str = "") -> bool:  # noqa: N802 - reads like typer.Option
    """An on/off switch, shown as a flag in --help (no value, no type column)."""
    return typer.Option(False, *names, help=help, metavar="", show_default=False)
