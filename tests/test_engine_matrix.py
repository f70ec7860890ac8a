"""docs/engine-matrix.md is generated from the engine tables and must be current: change a table row without
rerunning `python scripts/gen_engine_matrix.py` and this fails."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from specbridge import record

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("gen_engine_matrix", ROOT / "scripts" / "gen_engine_matrix.py")
gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen)


def test_engine_matrix_page_is_current():
    page = ROOT / "docs" / "engine-matrix.md"
    assert page.is_file() and page.read_text() == gen.render(), "docs/engine-matrix.md is stale: run python scripts/gen_engine_matrix.py"


def test_a_table_change_shows_on_the_page(monkeypatch):
    """The page is a function of the tables: a changed row (SGLang 0.5.3–0.5.11 suddenly raising on unknown
    names, or a new run recorded) changes the rendered page, so the freshness test above catches it."""
    from specbridge.engines import registry
    from specbridge.engines.spec import Run

    before = gen.render()
    eras = list(registry.ENGINES["sglang"])
    i = next(k for k, e in enumerate(eras) if e.first == "0.5.3")
    cls = eras[i].classes["LlamaForCausalLMEagle3"]
    eras[i] = record.replace(eras[i], classes={"LlamaForCausalLMEagle3": record.replace(cls, unknown="raise")})
    monkeypatch.setitem(registry.ENGINES, "sglang", tuple(eras))
    changed = gen.render()
    assert changed != before and "| sglang | 0.5.3–0.5.11 | 0.5.3–0.5.11 midlayer | `model.midlayer.*` | raises |" in changed
    eras[i] = record.replace(eras[i], runs=eras[i].runs + (Run("0.5.7", "2099-01-01", "t", 30, 30),))
    monkeypatch.setitem(registry.ENGINES, "sglang", tuple(eras))
    assert "0.5.7" in gen.render()


def test_the_story_question_is_one_row():
    """'What does SGLang 0.5.11 do with a speculators (layers.0.*) drafter?' — one row, with how it is known."""
    rows = [ln for ln in gen.render().splitlines() if ln.startswith("| speculators (`layers.0.*`, flat config) | sglang | 0.5.3–0.5.11 |")]
    assert len(rows) == 1
    assert "10 dropped" in rows[0] and "L002" in rows[0] and "| run " in rows[0] and "0.5.11" in rows[0]
