"""--help laid out to read at any terminal width, 80 columns included.

typer's rich help gives each option five columns (name, short name, negative name, type, help) and no share of
the width to the help text: at 80 columns a description was squeezed into 13-19 columns and a default cut with
"…". Here an option is two columns, its names (with the value it takes) and its help, the help column taking
whatever the names leave (never under HELP_MIN columns), text wrapped at spaces and never cut. The rows come
from click's public `get_help_record`, so defaults, ranges and `[required]` read as typer computes them.
Command descriptions are prose: a single line break inside a paragraph is a space, a blank line a new paragraph.
"""

from __future__ import annotations

import inspect
import io
import sys
import textwrap
from typing import TYPE_CHECKING

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text
from typer.core import TyperCommand, TyperGroup

if TYPE_CHECKING:
    from click import Command, Context, HelpFormatter, Parameter

MAX_WIDTH = 100  # on a wide terminal help stays a readable block
HELP_MIN = 30  # the description column never gets fewer columns than this
NAMES_MAX = 30  # names longer than this wrap inside their column instead of taking the description's room


def paragraphs(text: str | None) -> list[str]:
    """`text`'s paragraphs (blank-line separated), each with its single line breaks joined into spaces."""
    body = inspect.cleandoc(text or "").partition("\f")[0]
    return [" ".join(p.split()) for p in body.split("\n\n") if p.strip()]


def summary(command: Command) -> str:
    """What the root help's command list says of `command`: the first paragraph of its help."""
    found = paragraphs(command.short_help or command.help)
    return found[0] if found else ""


def _split_extras(help_text: str) -> tuple[str, str]:
    """click's help record as (help, extras): "…  [default: 64; x>=1]" gives "[default: 64] [x>=1]", shown dim,
    each bracket as typer's own help showed it."""
    if help_text.endswith("]"):
        at = help_text.rfind("[")
        if at == 0 or (at > 0 and help_text[at - 2 : at] == "  "):
            extras = " ".join(f"[{part}]" for part in help_text[at + 1 : -1].split("; "))
            return help_text[:at].rstrip(), extras
    return help_text, ""


def _fill(body: str, extras: str, width: int) -> Text:
    """`body` wrapped at spaces to `width`, then the dim `extras` ("[default: 1,4,16]") on its last line when
    they fit there, else on a line of their own: a default is never split across lines."""
    lines = textwrap.wrap(body, width, break_long_words=True, break_on_hyphens=False) if body else []
    text = Text("\n".join(lines))
    if extras:
        if lines and len(lines[-1]) + 1 + len(extras) <= width:
            text.append(" " + extras, style="dim")
        else:
            text.append(("\n" if lines else "") + extras, style="dim")
    return text


def _panel(title: str, rows: list[tuple[str, str, str]], width: int) -> Panel:
    """rows of (names, help, extras) in two fixed columns: the names at most NAMES_MAX wide (longer ones
    fold), the help taking the rest of the panel and never under HELP_MIN."""
    inner = width - 4  # the panel's border and padding
    names_width = min(NAMES_MAX, max(len(r[0]) for r in rows), max(8, inner - 2 - HELP_MIN))
    help_width = max(HELP_MIN, inner - 2 - names_width)
    table = Table(show_header=False, box=None, padding=(0, 1), pad_edge=False, expand=False)
    table.add_column(width=names_width, overflow="fold", style="bold cyan")
    table.add_column(width=help_width, overflow="fold")
    for names, body, extras in rows:
        table.add_row(Text(names), _fill(body, extras, help_width))
    return Panel(table, title=title, title_align="left", border_style="dim", width=width)


def _param_rows(ctx: Context, params: list[Parameter]) -> list[tuple[str, str, str]]:
    rows = []
    for param in params:
        record = param.get_help_record(ctx)
        if record is not None:
            names, help_text = record
            # "<float range>" is "<float>": the range itself is in the help column ("[default: 600; x>=1]")
            rows.append((names.strip().replace(" range>", ">"), *_split_extras(help_text)))
    return rows


def _is_argument(param) -> bool:
    """A positional argument (typer may carry its own copy of click: its classes are not `click`'s)."""
    return getattr(param, "param_type_name", "") == "argument"


def render_help(command: Command, ctx: Context) -> str:
    """`command`'s full help as text (styled only when stdout is a terminal)."""
    probe = Console()
    width = min(probe.width, MAX_WIDTH)
    out = io.StringIO()
    console = Console(
        file=out,
        width=width,
        force_terminal=sys.stdout.isatty(),
        color_system=probe.color_system and "auto",
        highlight=False,
        emoji=False,
    )
    usage = " ".join([ctx.command_path, *command.collect_usage_pieces(ctx)])
    parts: list = [Text.assemble(("Usage: ", "yellow"), (usage, "bold")), Text("")]
    for i, para in enumerate(paragraphs(command.help)):
        parts += [Text(para, style="" if i == 0 else "dim"), Text("")]
    params = command.get_params(ctx)
    arguments = _param_rows(ctx, [p for p in params if _is_argument(p)])
    options = _param_rows(ctx, [p for p in params if not _is_argument(p)])
    if arguments:
        parts.append(_panel("Arguments", arguments, width))
    if options:
        parts.append(_panel("Options", options, width))
    if hasattr(command, "list_commands"):  # the root group
        commands = []
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                commands.append((name, summary(sub), ""))
        if commands:
            parts.append(_panel("Commands", commands, width))
    console.print(Group(*parts), soft_wrap=False)
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines())


class WideHelpCommand(TyperCommand):
    """A typer command whose --help is `render_help`'s."""

    def format_help(self, ctx: Context, formatter: HelpFormatter) -> None:
        formatter.write(render_help(self, ctx))


class WideHelpGroup(TyperGroup):
    """The typer group (the root command) whose --help is `render_help`'s."""

    def format_help(self, ctx: Context, formatter: HelpFormatter) -> None:
        formatter.write(render_help(self, ctx))
