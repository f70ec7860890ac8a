"""One place per fact (issue #25): engine knowledge lives in the engine files' rows, so nothing else in src/
compares a value with an engine's name, and no file outside them writes the newest release read by hand
(that number changes with every release added, and adding one is one edit to the engine's rows)."""

from __future__ import annotations

import re
from pathlib import Path

from specbridge.engines.registry import ALIASES, ENGINES, modelled_range
from specbridge.engines.spec import parse_version

SRC = Path(__file__).resolve().parents[1] / "src" / "specbridge"
ENGINE_FILES = {f"engines/{name}.py" for name in ENGINES}
# Files still allowed to compare with an engine's name, each with why; an entry whose file no longer does fails
# below, so the list only shrinks.
ALLOWED = {
    # the lead is rewriting simulate.py for drafter families: its `d.style == "sglang"` / "trtllm" / "vllm"
    # branches become Dispatch row fields there
    "engines/simulate.py": "Dispatch.style branches, being rewritten",
    # --capture transformers|vllm picks the training capture backend (a venv running vLLM), not an engine table
    "train/trainer.py": "training capture backend",
    "cli/train_cmd.py": "argument parsing of --capture",
}

_NAME = "|".join(re.escape(n) for n in sorted({*ENGINES, *ALIASES}, key=len, reverse=True))
_LIT = rf"""["'](?:{_NAME})["']"""
COMPARISON = re.compile(
    rf"(?:==|!=)\s*{_LIT}"  # x == "vllm"
    rf"|{_LIT}\s*(?:==|!=)"  # "vllm" == x
    rf"|(?<!\bfor )\b[\w.]+\s+(?:not\s+)?in\s*[(\[{{][^)\]}}\n]*{_LIT}"  # x in ("auto", "vllm"), not a for loop
    rf"|\.(?:startswith|endswith)\(\s*{_LIT}"  # source.startswith("vllm")
    rf"|\bcase\s+{_LIT}",
    re.IGNORECASE,
)


def _sources() -> dict[str, str]:
    return {p.relative_to(SRC).as_posix(): p.read_text() for p in sorted(SRC.rglob("*.py"))}


def _comparisons(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if COMPARISON.search(line)]


def test_the_pattern_finds_what_it_is_for():
    """The grep is only worth its silence if it sees each form of comparison (and not a row's data)."""
    hits = [
        'if engine == "vllm":',
        'x = 1 if "SGLang" != name else 2',
        'if engine in ("auto", "sglang"):',
        'if a.source.startswith("vllm"):',
        'case "trtllm":',
        'elif spec not in ["tensorrt-llm"]:',
    ]
    misses = [
        'LAUNCHERS = {"sglang": sglang.LAUNCH}',
        'for layout in ("sglang", "speculators"):',
        'Launcher(engine="vllm")',
        'help="sglang or vllm"',
        'name = "vllm"',
    ]
    assert [h for h in hits if not _comparisons(h)] == []
    assert [m for m in misses if _comparisons(m)] == []


def test_no_engine_name_comparisons_outside_the_engine_files():
    found = {path: _comparisons(text) for path, text in _sources().items() if path not in ENGINE_FILES}
    stray = {path: lines for path, lines in found.items() if lines and path not in ALLOWED}
    assert stray == {}, "branch on a row field (engines/*.py), not on the engine's name"
    assert [path for path in ALLOWED if not found.get(path)] == [], "an allowed file no longer compares: drop it from ALLOWED"


def _newest_releases() -> dict[str, str]:
    """Each engine's newest release read, unless it is also an era boundary (a boundary is a fact that stays
    true when releases are added; "the newest read" does not)."""
    out = {}
    for name, eras in ENGINES.items():
        newest = modelled_range(name)[1]
        if all(parse_version(newest) != parse_version(era.first) for era in eras):
            out[name] = newest
    return out


def test_no_hand_written_newest_release_outside_the_engine_files():
    newest = _newest_releases()
    assert newest, "no engine's newest release to look for"
    pattern = re.compile(r"(?<![\w.])(?:" + "|".join(re.escape(v) for v in newest.values()) + r")(?![\w]|\.\d)")
    stray = {
        path: [line.strip() for line in text.splitlines() if pattern.search(line)]
        for path, text in _sources().items()
        if path not in ENGINE_FILES
    }
    assert {path: lines for path, lines in stray.items() if lines} == {}, f"write no newest release ({newest}) by hand"
