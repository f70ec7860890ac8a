"""check's report in a pipe is written without rich (cli/console.PlainPage, for speed): byte for byte what rich's
console writes there. The escape, the markup reading, the one-column characters and the table layout are each held
to rich's own, and so is the whole report of every shipped drafter on every engine."""

from __future__ import annotations

import contextlib
import io
import random

import pytest
from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape as rich_escape

from specbridge.cli import console as page
from specbridge.cli.commands import check_cmd
from specbridge.display import markup_safe

TRICKY = [
    "",
    "plain",
    "[bold]x[/]",
    "a[/]b",
    "\\",
    "\\\\",
    "x\\",
    "[x\\]",
    "\\[bold]",
    "\\\\[bold]",
    "\\\\\\[bold]",
    "[@click]",
    "[link=https://x]y[/link]",
    ":x: [red]",
    "[[a]]",
    "[/red]",
    "layers.0.[weird]/[/].weight",
    "0.4.6–0.4.8 midlayer (fc with bias)",
]
ALPHABET = "ab/[]\\@#=: –\t\n\x1b"


def _random_texts(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return TRICKY + ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 12))) for _ in range(n)]


def _rich_print(markup: str) -> str:
    out = io.StringIO()
    Console(file=out, width=page.PIPE_WIDTH, soft_wrap=True, highlight=False, emoji=False).print(markup)
    return out.getvalue()


@pytest.mark.parametrize("text", _random_texts(300))
def test_markup_safe_is_richs_escape(text):
    assert markup_safe(text) == rich_escape(text)


@pytest.mark.parametrize("text", _random_texts(300, seed=11))
def test_plain_text_is_what_rich_prints(text):
    for markup in (text, markup_safe(text), f"[bold]{markup_safe(text)}[/] and [red]{text}", f"[dim]{text}[/dim]"):
        plain = page.plain_text(markup)
        if plain is not None:  # None: rich itself prints it
            assert plain + "\n" == _rich_print(markup), repr(markup)


def test_one_column_characters_are_richs():
    assert [c for c in page._ONE_CELL if cell_len(c) != 1] == []


def _report(path, engines, tables: bool, plain: bool, monkeypatch) -> str:
    monkeypatch.setattr(page, "rich_colourless", lambda: plain)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        check_cmd(path, engines, False, tables)
    return out.getvalue()


def test_check_report_in_a_pipe_is_richs_byte_for_byte(tmp_path, monkeypatch):
    from test_cli import _shipped_drafters

    from specbridge.cli import commands

    # the report is checked once per drafter and engine list: the plain and the rich page (and the summary and
    # --tables pages) are printed from the same results, as one check run prints one of them
    checked, check_results = {}, commands._check_results

    def check_once(path, engines, *rest):
        key = (path, tuple(engines or ()), *rest)
        if key not in checked:
            checked[key] = check_results(path, engines, *rest)
        return checked[key]

    monkeypatch.setattr(commands, "_check_results", check_once)
    seen_grid = 0
    for d in _shipped_drafters(tmp_path):
        for engines, tables in ((None, False), (None, True), (["sglang"], False), (["vllm"], True), (["trtllm"], False)):
            plain = _report(d, engines, tables, True, monkeypatch)
            assert plain == _report(d, engines, tables, False, monkeypatch), (d, engines, tables)
            seen_grid += engines is None and "engine  version" in plain
    assert seen_grid >= 10  # the table itself was laid out without rich


def test_grid_hands_rich_what_it_cannot_vouch_for():
    p = page.PlainPage()
    assert not p.grid(["a", "b"], [["x\ty", "1"]], {})
    assert p.grid(["a", "b"], [["0.4.6–0.4.8 x", "—"]], {"a": 20})
