"""Every --help reads at 80 columns: no line wider, nothing cut with "…", a description column a sentence fits in,
defaults whole, and command summaries that are prose (no line break inside a sentence)."""

from __future__ import annotations

import re

import pytest
import typer
from rich.cells import cell_len
from typer.testing import CliRunner

from specbridge.cli.helpfmt import HELP_MIN, paragraphs
from specbridge.cli.main import app

COLUMNS = 80
GROUP = typer.main.get_command(app)
COMMANDS = GROUP.list_commands(None)
_ROW = re.compile(r"^│ (\S.*?)(?:  +)(\S.*?) *│$")  # a panel row: names, then the description after 2+ blanks
_CONTINUED = re.compile(r"^│ {3,}(\S.*?) *│$")  # a description line under the one before


def render(*argv: str) -> str:
    result = CliRunner().invoke(app, [*argv, "--help"], env={"COLUMNS": str(COLUMNS)}, prog_name="specbridge")
    assert result.exit_code == 0, result.output
    return result.output


def panel_rows(text: str) -> list[tuple[int, list[str]]]:
    """Each panel row as (the column its description starts at, the description's lines)."""
    rows: list[tuple[int, list[str]]] = []
    for line in text.splitlines():
        first = _ROW.match(line)
        if first:
            rows.append((first.start(2), [first.group(2)]))
        elif rows and (more := _CONTINUED.match(line)) and line.index(more.group(1)) == rows[-1][0]:
            rows[-1][1].append(more.group(1))
    return rows


def test_every_command_is_covered():
    assert {"inspect", "check", "launch", "engines", "convert", "restore", "eval", "bench", "train", "sweep", "serve"} <= set(COMMANDS)


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_help_fits_80_columns_with_a_wide_description_column(command):
    text = render(*([command] if command else []))
    too_wide = [line for line in text.splitlines() if cell_len(line) > COLUMNS]
    assert not too_wide, too_wide
    assert "…" not in text
    rows = panel_rows(text)
    assert len(rows) >= 2, text  # the options (and commands) were found
    for start, lines in rows:
        assert COLUMNS - 2 - start >= HELP_MIN, (command, lines[0])  # the column between the names and the border


@pytest.mark.parametrize("command", COMMANDS)
def test_defaults_are_shown_whole_on_one_line(command):
    text = render(command)
    for line in text.splitlines():
        for at in [m.start() for m in re.finditer(r"\[default:", line)]:
            assert "]" in line[at:], (command, line)


def test_root_help_names_the_families_and_its_summaries_are_prose():
    text = render()
    flat = " ".join(text.replace("│", " ").split())
    assert "speculative-decoding drafters" in flat and "EAGLE-3 drafters" not in flat
    for family in ("EAGLE-3", "P-EAGLE", "DFlash", "DFlash2", "DSpark", "EAGLE-1/2", "Medusa", "MTP heads", "draft models"):
        assert family in flat, family
    for name in COMMANDS:
        summary = paragraphs(GROUP.get_command(None, name).help)[0]
        assert summary in flat, name
    # a line break inside a summary only where the next word would not fit: no hard break mid-sentence
    rows = panel_rows(text)
    assert len(rows) >= len(COMMANDS)
    for start, lines in rows:
        width = COLUMNS - 2 - start
        for line, following in zip(lines, lines[1:]):
            assert cell_len(line) + 1 + cell_len(following.split()[0]) > width, (line, following)
