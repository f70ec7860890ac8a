"""`specbridge verify` of a target's MTP head on SGLang (NEXTN), core tier: every outcome the real NextN loader stored
(tests/fixtures/conformance-nextn/observed.json, per release and case, rerun by tests/test_conformance_sglang_nextn.py)
fed through verify's comparison with check for that release: each agrees, and a changed outcome is a difference."""

from __future__ import annotations

import sys

import pytest
from test_conformance_sglang_nextn import CASES, STORED, _write

from specbridge.conformance import verify as V

ROWS = [(v, c) for v in STORED for c in STORED[v]]


@pytest.fixture(scope="module")
def targets(tmp_path_factory):
    return _write(tmp_path_factory.mktemp("nextn-verify"), list(CASES))


def _harness_record(obs: dict) -> dict:
    """The stored outcome back in the harness's own keys (sglang_loader --nextn)."""
    return {"class": obs["class"], "filled": obs["loaded"], "partial": obs["partial"], "unfilled": obs["left_at_init"]} | {
        "skipped": obs["skipped"],
        "errors": obs["errors"],
    }


def _verify(path, version: str, got: dict) -> V.VerifyResult:
    return V.finish(V.nextn_body(V.Request(str(path), "sglang", sys.executable), version, got))


@pytest.mark.parametrize(("version", "case"), ROWS)
def test_every_stored_nextn_outcome_agrees_with_check(version, case, targets):
    res = _verify(targets[case], version, _harness_record(STORED[version][case]))
    assert res.report["differences"] == [] and res.report["agrees"] is True, res.report["differences"]
    assert res.exit_code == (1 if STORED[version][case]["errors"] else 0)


def test_a_changed_outcome_is_a_difference(targets):
    version = max(STORED, key=lambda v: tuple(int(x) for x in v.split(".")[:3] if x.isdigit()))
    got = _harness_record(STORED[version]["glm-complete"])
    moved = got | {"filled": [n for n in got["filled"] if "eh_proj" not in n], "unfilled": [*got["unfilled"], "model.eh_proj.weight"]}
    assert _verify(targets["glm-complete"], version, moved).report["verdict"] == "disagrees"
    raised = got | {"errors": ["KeyError: 'model.decoder.foo.weight'"]}
    assert [d["what"] for d in _verify(targets["glm-complete"], version, raised).report["differences"]] == ["raises"]


def _newest() -> str:
    return max(STORED, key=lambda v: tuple(int(x) for x in v.split(".")[:3] if x.isdigit()))


W13 = "model.decoder.mlp.experts.w13_weight"


def test_the_decoder_block_is_compared_parameter_by_parameter(targets):
    """One parameter of the block moved (the routed experts left at init by SGLang while check says loaded, or the
    reverse on the layer without its experts) is a difference naming it; the rest of the block still agrees."""
    version = _newest()
    got = _harness_record(STORED[version]["deepseek-complete"])
    moved = got | {"filled": [n for n in got["filled"] if n != W13], "unfilled": [*got["unfilled"], W13]}
    diffs = _verify(targets["deepseek-complete"], version, moved).report["differences"]
    assert [d["what"] for d in diffs] == ["missing"] and diffs[0]["name"] == W13, diffs
    got = _harness_record(STORED[version]["glm-no-routed-experts"])
    loaded = got | {"filled": [*got["filled"], W13], "unfilled": [n for n in got["unfilled"] if n != W13]}
    diffs = _verify(targets["glm-no-routed-experts"], version, loaded).report["differences"]
    assert [d["what"] for d in diffs] == ["missing"] and diffs[0]["name"] == W13, diffs


def test_a_block_parameter_no_row_names_is_a_difference(targets):
    version = _newest()
    got = _harness_record(STORED[version]["glm-complete"])
    extra = got | {"filled": [*got["filled"], "model.decoder.self_attn.q_norm.weight"]}
    diffs = _verify(targets["glm-complete"], version, extra).report["differences"]
    assert any("q_norm" in d["message"] and "no row" in d["message"] for d in diffs), diffs
