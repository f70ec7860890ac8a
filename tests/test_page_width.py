"""inspect's tensor list and convert's summary fit an 80-column terminal (wrapped at spaces, never inside a name)
and stay one line per item in a pipe (a CI log, grep)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.console import Console

from specbridge.cli import console as page
from specbridge.cli import render
from specbridge.cli.commands import inspect_cmd
from specbridge.cli.convert_cmd import convert_cmd

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "smollm2-drafter"
COLUMNS = 80


def _names() -> list[str]:
    from specbridge.checkpoint.reader import open_checkpoint

    return list(open_checkpoint(EXAMPLE).tensors)


def _inspect_on(monkeypatch, console: Console) -> None:
    monkeypatch.setattr(render, "console", console)
    assert inspect_cmd(EXAMPLE, False) == 0


def test_inspect_fits_an_80_column_terminal_with_every_name_whole(monkeypatch):
    out = io.StringIO()
    _inspect_on(monkeypatch, Console(file=out, width=COLUMNS, highlight=False, emoji=False))
    lines = out.getvalue().splitlines()
    assert [line for line in lines if cell_len(line.rstrip()) > COLUMNS] == []
    words = {word for line in lines for word in line.split()}
    for name in _names():
        assert name in words, name  # neither folded nor cut
    assert sum("→" in line for line in lines) >= len(_names())  # every canonical name still shown


def test_inspect_piped_is_one_line_per_tensor(monkeypatch, capsys):
    _inspect_on(monkeypatch, page.make_console())  # capsys: stdout is no terminal
    lines = capsys.readouterr().out.splitlines()
    for name in _names():
        (row,) = [line for line in lines if line.split()[:1] == [name] and "→" in line]
        assert "BF16" in row or "I64" in row or "BOOL" in row
        assert row.rstrip().endswith(f"→ {name}"), row  # this layout keeps every name


def _convert(tmp_path: Path) -> int:
    return convert_cmd(EXAMPLE, "sglang", tmp_path / "out", False, None, None, "keep", False, True, None, False)


def test_convert_summary_fits_an_80_column_terminal(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(page, "page_width", lambda: COLUMNS)
    assert _convert(tmp_path) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line for line in lines if len(line) > COLUMNS] == []
    assert any(line.startswith("  config.json: ") for line in lines)
    assert any(line.startswith("      +") or line.startswith("      -") for line in lines)  # its keys continue, indented
    assert "-transformers_version" in " ".join(lines).split()  # a key is never split


def test_convert_summary_piped_is_one_line_per_item(tmp_path, capsys):
    assert page.page_width() is None  # capsys: stdout is no terminal
    assert _convert(tmp_path) == 0
    lines = capsys.readouterr().out.splitlines()
    (config,) = [line for line in lines if line.startswith("  config.json: ")]
    assert "+attention_bias" in config and "-transformers_version" in config
    (verified,) = [line for line in lines if line.startswith("verified: ")]
    # the whole verification on its one line, the checkpoint's other files' comparison at its end
    assert "(names, dtypes, shapes, offsets)" in verified and verified.endswith("compared byte for byte with their source")


@pytest.mark.parametrize("width", [20, 40, 80])
def test_fold_wraps_at_spaces_only(width):
    line = "  config.json: " + ", ".join(f"+key_number_{i}" for i in range(30))
    folded = page.fold(line, width).splitlines()
    assert " ".join(" ".join(folded).split()) == " ".join(line.split())  # nothing lost, nothing split
    assert all(len(part) <= width or " " not in part.strip() for part in folded)
    assert page.fold(line, None) == line


def test_an_mtp_targets_inspect_fits_80_columns_and_is_one_line_per_item_piped(tmp_path, monkeypatch, capsys):
    import mtp_fixtures as mx

    target = mx.write_target(tmp_path / "glm", mx.glm_config())
    assert inspect_cmd(target, False) == 0  # piped
    piped = capsys.readouterr().out.splitlines()
    assert any(len(line) > COLUMNS and line.startswith("  evidence: ") for line in piped)  # long items stay whole
    monkeypatch.setattr(page, "page_width", lambda: COLUMNS)
    assert inspect_cmd(target, False) == 0
    wrapped = capsys.readouterr().out.splitlines()
    assert [line for line in wrapped if len(line) > COLUMNS] == []
    assert " ".join(" ".join(wrapped).split()) == " ".join(" ".join(piped).split())  # the same words, only folded
