"""The one rich Console setup of the human reports (check, inspect, engines): a leaf both report modules use."""

from __future__ import annotations

import os
import re
import sys

TYPE_CHECKING = False  # typing's constant, without importing typing on a check's path (about 1 ms)
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
    if not sys.stdout.isatty():
        return None
    import shutil  # a terminal only: a check piped into a file or CI log never loads it

    return shutil.get_terminal_size().columns


def fold(text: str, width: int | None) -> str:
    """`text` with each line longer than `width` wrapped at spaces, its continuation lines indented four
    columns past the line's own indent; never inside a word (a path or a tensor name stays whole). `width`
    None (a pipe): unchanged."""
    if width is None:
        return text
    import textwrap  # a terminal only (width is None in a pipe)

    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        hang = " " * (len(line) - len(line.lstrip(" ")) + 4)
        out += textwrap.wrap(line, width, subsequent_indent=hang, break_long_words=False, break_on_hyphens=False)
    return "\n".join(out)


# rich.markup's tag pattern (RE_TAGS, rich 13-15): a tag, or an escaped one after an odd number of backslashes
_MARKUP_TAG = re.compile(r"((\\*)\[([a-z#/@][^[]*?)])")


def plain_text(markup: str) -> str | None:
    """The text rich prints for `markup` on a page without colour (the tags dropped, escapes undone), or None where
    this reading might differ from rich's: a control character, tab or line break (rich strips, expands or splits
    them), a character that is not plainly printable, a `[@…]` handler tag, a closing tag without its opening one
    (rich raises MarkupError). rich.markup.render's parse, step for step, without its spans."""
    if not markup.isprintable():
        return None
    if "[" not in markup:
        return markup
    out: list[str] = []
    opened: list[str] = []
    position = 0
    for match in _MARKUP_TAG.finditer(markup):
        full_text, escapes, tag_text = match.groups()
        start, end = match.span()
        if start > position:
            out.append(markup[position:start].replace("\\[", "["))
        if escapes:
            backslashes, escaped = divmod(len(escapes), 2)
            out.append("\\" * backslashes)
            if escaped:
                out.append(full_text[len(escapes) :].replace("\\[", "["))
                position = end
                continue
        name = tag_text.partition("=")[0]
        if name.startswith("@"):
            return None
        if name.startswith("/"):
            closing = name[1:].strip()
            if closing:
                if closing not in opened:  # rich normalises the style name first: let it decide
                    return None
                del opened[len(opened) - 1 - opened[::-1].index(closing)]
            elif not opened:
                return None
            else:
                opened.pop()
        else:
            opened.append(name)
        position = end
    if position < len(markup):
        out.append(markup[position:].replace("\\[", "["))
    return "".join(out)


# Characters one column wide as rich counts them: its own fast path (rich.cells._SINGLE_CELL_UNICODE_RANGES) and the
# punctuation our pages print (tests/test_plain_page.py asks rich for each); any other costs importing rich.cells.
_ONE_CELL = frozenset(
    [chr(c) for lo, hi in ((0x20, 0x7E), (0xA0, 0xAC), (0xAE, 0x2FF), (0x370, 0x482), (0x2500, 0x25FC)) for c in range(lo, hi + 1)]
    + list("–—‘’“”…→←↔≤≥≠×·•")
)


def cells(text: str) -> int:
    """Columns `text` takes on a page, as rich.cells.cell_len counts them."""
    if text.isascii() or _ONE_CELL.issuperset(text):
        return len(text)
    from rich.cells import cell_len

    return cell_len(text)


def rich_colourless() -> bool:
    """Whether rich, given stdout, would write no colour or control code: no terminal, and neither FORCE_COLOR nor
    TTY_COMPATIBLE (https://force-color.org/) makes one of it (rich.console.Console.is_terminal's reading)."""
    if "FORCE_COLOR" in os.environ or "TTY_COMPATIBLE" in os.environ:
        return False
    try:
        return not sys.stdout.isatty()
    except ValueError:  # a closed stream: rich reads it as no terminal too
        return True


class PlainPage:
    """check's report in a pipe, written without rich: the same bytes rich's console (make_console) writes there,
    without the ~40 ms of importing rich and laying out its renderables. Each markup line is read by plain_text; one
    it cannot vouch for goes to rich itself (`rich`, made on first need), so the page never differs from rich's."""

    width = PIPE_WIDTH

    def __init__(self) -> None:
        self._rich: Console | None = None

    @property
    def rich(self) -> Console:
        if self._rich is None:
            self._rich = make_console()
        return self._rich

    def print(self, markup: str, style: str | None = None) -> None:
        """One line of markup; `style` (a colour) does not show on a page without colour."""
        text = plain_text(markup)
        if text is None:
            self.rich.print(markup, style=style)
        else:
            _NoTrailingBlanks().write(text + "\n")

    def grid(self, header: list[str], rows: list[list[str]], min_widths: dict[str, int]) -> bool:
        """A rich Table(box=None, pad_edge=False) of markup cells as rich lays it out on a page of PIPE_WIDTH
        (each column as wide as its widest cell or its min width, two blanks between columns, cells left-justified);
        False, having written nothing, where a cell is one plain_text cannot vouch for (the caller asks rich)."""
        texts = [[plain_text(cell) for cell in line] for line in (header, *rows)]
        if any(text is None for line in texts for text in line):
            return False
        widths = [max([min_widths.get(name, 0), *(cells(line[i]) for line in texts)]) for i, name in enumerate(header)]
        if sum(widths) + 2 * (len(widths) - 1) > self.width:
            return False  # rich would fold or collapse: its own layout
        out = _NoTrailingBlanks()
        for line in texts:
            out.write("  ".join(text + " " * (w - cells(text)) for text, w in zip(line, widths)) + "\n")
        return True


def page_console() -> PlainPage | Console:
    """check's report page: PlainPage where rich would write plain text (a pipe, no forced colour), else rich's
    console (make_console)."""
    return PlainPage() if rich_colourless() else make_console()
