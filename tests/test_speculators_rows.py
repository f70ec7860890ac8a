"""vLLM's speculators-config translation is row data (Dispatch.speculators_*: vllm/eagle3.py `translation`): its
refusals in vLLM's own words per algorithm, and the keys it copies only when not null. A family's row says it, so a
P-EAGLE drafter's refusal is update_peagle's, not update_eagle3's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import zoo_fixtures as z
from conftest import PRODUCERS

from specbridge.families.table import BY_NAME
from specbridge.rules.check import check
from specbridge.view import open_view

SPECULATORS = PRODUCERS / "speculators-0.9.0" / "train-save"


def _errors(path: Path, family: str) -> list[str]:
    (res,) = check(open_view(path), "vllm==0.32.0", family=BY_NAME[family])
    return res.report.errors


def _with_layer_type(src: Path, dst: Path, model_type: str) -> Path:
    shutil.copytree(src, dst)
    cfg = json.loads((dst / "config.json").read_text())
    cfg["transformer_layer_config"]["model_type"] = model_type
    (dst / "config.json").write_text(json.dumps(cfg))
    return dst


def test_an_eagle3_speculators_config_of_an_unknown_model_type_is_refused_as_update_eagle3_says(tmp_path):
    path = _with_layer_type(SPECULATORS, tmp_path / "e3", "gpt_neox")
    assert "ValueError: Unsupported model_type gpt_neox for Eagle3 speculator" in _errors(path, "eagle3")


def test_a_peagle_speculators_config_of_an_unknown_model_type_is_refused_as_update_peagle_says(tmp_path):
    path = z.write(tmp_path / "pe", z.peagle_config(model_type="gpt_neox"), z.peagle_tensors())
    assert "ValueError: Unsupported model_type gpt_neox for PEagle speculator" in _errors(path, "peagle")


def test_the_translation_drops_a_null_target_hidden_size_and_keeps_a_set_one(tmp_path):
    from specbridge.engines.registry import placements
    from specbridge.engines.simulate import dispatch

    ((place,), _) = placements("vllm==0.32.0")
    for value, kept in ((None, False), (64, True)):
        path = tmp_path / f"h{value}"
        shutil.copytree(SPECULATORS, path)
        cfg = json.loads((path / "config.json").read_text()) | {"target_hidden_size": value}
        (path / "config.json").write_text(json.dumps(cfg))
        d = dispatch(open_view(path), place.era)
        assert ("target_hidden_size" in d.view) == kept and place.era.dispatch.speculators_skip_null == ("target_hidden_size",)
