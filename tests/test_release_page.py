"""docs/adding-a-release.md: its generated part is current, the files it sends a newcomer to exist, and its claim that
a release's change is one range in one family file holds (a DFlash rename in a vLLM 0.33.0, written only in
engines/vllm/dflash.py, is what check answers from)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import dflash_fixtures as dfx

from specbridge.record import replace

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("gen_release_page", ROOT / "scripts" / "gen_release_page.py")
gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen)
PAGE = ROOT / "docs" / "adding-a-release.md"


def test_the_page_is_current():
    text = PAGE.read_text()
    assert gen.render(text) == text, "docs/adding-a-release.md is stale: run python scripts/gen_release_page.py"


def test_every_file_the_page_names_exists():
    text = PAGE.read_text()
    named = set(re.findall(r"`((?:engines|scripts|tests|docs|src)/[\w/.-]+\.(?:py|md|sh))`", text))
    assert len(named) > 15
    missing = [n for n in named if not (ROOT / n).is_file() and not (ROOT / "src" / "specbridge" / n).is_file()]
    assert missing == []


def test_a_release_is_one_range_in_one_family_file(tmp_path, monkeypatch):
    """vLLM 0.33.0 (say) renames the DFlash checkpoint's `proj.` to `fc.`: one range in engines/vllm/dflash.py."""
    from specbridge.engines import registry
    from specbridge.engines.spec import Rename
    from specbridge.engines.vllm import dflash
    from specbridge.families.table import BY_NAME
    from specbridge.rules.check import check
    from specbridge.view import open_view

    ts = dfx.tensors()
    ts["proj.weight"] = ts.pop("fc.weight")
    path = dfx.write(tmp_path / "renamed", dfx.config(), ts)

    def verdict():
        registry._FAMILY_ROWS.clear()
        (res,) = check(open_view(path), "vllm==0.33.0", family=BY_NAME["dflash"])
        return res.to_json()["era"], {t.name: t.status for t in res.report.tensors}["proj.weight"]

    era, before = verdict()
    assert era == "dflash 0.31.0+" and before != "loaded"

    newest = dflash.RANGES[-1]
    assert newest.family == "dflash" and newest.last is None
    cls = newest.classes["DFlashQwen3ForCausalLM"]
    renamed = replace(cls, loader=(Rename(old="proj.", new="fc."), *cls.loader))
    new_range = replace(newest, first="0.33.0", begins="(this test) proj. renamed fc.", classes={**newest.classes, cls.name: renamed})
    monkeypatch.setattr(dflash, "RANGES", (*dflash.RANGES[:-1], replace(newest, last="0.32"), new_range))
    try:
        assert verdict() == ("dflash 0.33.0+", "loaded")
    finally:
        monkeypatch.undo()
        registry._FAMILY_ROWS.clear()
