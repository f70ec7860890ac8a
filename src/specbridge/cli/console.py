"""The one rich Console setup of the human reports (check, inspect, engines): a leaf both report modules use."""

from __future__ import annotations

import re
import shutil
import sys
import textwrap
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

PIPE_WIDTH = 1_000_000  # a pipe has no page: a table takes its natural width, text is never folded
_STYLE_CODE = re.compile(r"\x1b\[[0-9;]*m")


def without_trailing_blanks(line: str) -> str:
    """`line` without the blanks at its end, the style codes among them kept (linear: a name of 10⁴ characters
    padded into a column must not cost 10⁸ steps)."""
    codes: list[str] = []
    while True:
        line = line.rstrip(" \t")
        at = line.rfind("\x1b[") if line.endswith("m") else -1
        if at < 0 or not _STYLE_CODE.fullmatch(line, at):
            return line + "".join(reversed(codes))
        codes.append(line[at:])
        line = line[:at]


class _NoTrailingBlanks:
    """stdout (looked up at each write, so a caller's redirection holds), with the blanks before each line end
    taken out: rich pads every table cell to its column's width, and a line should end where its text does."""

    def write(self, text: str) -> int:
        *lines, rest = text.split("\n")
        sys.stdout.write("".join(without_trailing_blanks(line) + "\n" for line in lines) + rest)
        return len(text)

    def __getattr__(self, name):
        return getattr(sys.stdout, name)


def make_console() -> Console:
    """On a terminal: its width (or COLUMNS), text wrapped at spaces. In a pipe (a CI log, a file, grep): no
    width and no wrapping, so a message is one line `grep` finds whole. Never a trailing blank."""
    from rich.console import Console  # here: the plain-text pages (convert's summary) fold lines without rich

    piped = not sys.stdout.isatty()
    return Console(
        file=_NoTrailingBlanks(),
        width=PIPE_WIDTH if piped else None,
        soft_wrap=piped,
        highlight=False,
        emoji=False,
    )


def page_width() -> int | None:
    """The terminal's width (COLUMNS honoured) when stdout is a terminal; None in a pipe, where a line is never
    folded (one line per item, as grep and a CI log want it)."""
    return shutil.get_terminal_size().columns if sys.stdout.isatty() else None


def fold(text: str, width: int | None) -> str:
    """`text` with each line longer than `width` wrapped at spaces, its continuation lines indented four
    columns past the line's own indent; never inside a word (a path or a tensor name stays whole). `width`
    None (a pipe): unchanged."""
    if width is None:
        return text
    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        hang = " " * (len(line) - len(line.lstrip(" ")) + 4)
        out += textwrap.wrap(line, width, subsequent_indent=hang, break_long_words=False, break_on_hyphens=False)
    return "\n".join(out)
