"""`specbridge verify` of a plain draft model (vLLM method draft_model, SGLang STANDALONE), core tier: each engine's
own start-up checks as conformance/vllm_draft_model.py and sglang_standalone.py record them (the shapes below are
their output), set beside check's T findings for the release. The real vLLM runs are tests/test_verify_engines.py and tests/test_conformance_vllm_draft_model.py."""

from __future__ import annotations

import sys

from test_draft_model import make_draft, target  # noqa: F401 (target: the session fixture)

from specbridge.checkpoint.target import open_target
from specbridge.cli.draft_check import draft_results
from specbridge.conformance import verify as V
from specbridge.view import open_view

VOCAB = (
    "ValueError: Target and draft model should have the same vocabulary size. Target model vocab_size=49152. "
    "Draft model vocab_size=49280. Please provide a draft model with the same vocabulary size."
)


def _verify(path, target, got: dict) -> V.VerifyResult:  # noqa: F811
    req = V.Request(str(path), "vllm", sys.executable, str(target))
    return V.finish(V.draft_model_body(req, open_view(path), "0.32.0", got, open_target(target)))


def _started(draft_len: int, target_len: int = 8192) -> dict:
    return {"ok": True, "error": None, "method": "draft_model", "draft_max_model_len": draft_len, "target_max_model_len": target_len}


def test_a_draft_vllm_starts_agrees(tmp_path, target):  # noqa: F811
    res = _verify(make_draft(tmp_path / "same", target), target, _started(8192))
    assert res.exit_code == 0 and res.report["verdict"] == "agrees" and res.report["family"] == "causal_lm"
    assert "vLLM starts it: the draft's context 8192 (the target's 8192)" in "\n".join(res.lines)


def test_a_vocabulary_vllm_refuses_is_the_refusal_t002_predicts(tmp_path, target):  # noqa: F811
    path = make_draft(tmp_path / "padded", target, vocab=49280)
    res = _verify(path, target, {"ok": False, "error": VOCAB})
    assert res.exit_code == 1 and res.report["verdict"] == "loader-error" and res.report["differences"] == []
    started = _verify(path, target, _started(8192))  # vLLM starting where check says it refuses: a difference
    assert started.report["verdict"] == "disagrees" and [d["what"] for d in started.report["differences"]] == ["raises"]


def test_the_draft_context_vllm_gives_is_the_one_t007_names(tmp_path, target):  # noqa: F811
    path = make_draft(tmp_path / "short", target, max_pos=2048)
    assert _verify(path, target, _started(2048)).report["verdict"] == "agrees"
    full = _verify(path, target, _started(8192)).report  # vLLM not cutting the context: check's T007 is the difference
    assert full["verdict"] == "disagrees" and [d["what"] for d in full["differences"]] == ["context"]


def test_a_draft_model_needs_its_target(tmp_path, target):  # noqa: F811
    import pytest

    path = make_draft(tmp_path / "d", target)
    with pytest.raises(V.VerifyRefused, match="--target"):
        V._verify_vllm_draft_model(V.Request(str(path), "vllm", sys.executable), open_view(path), "0.32.0", {})


def _sglang(path, target, version: str, got: dict) -> V.VerifyResult:  # noqa: F811
    req = V.Request(str(path), "sglang", sys.executable, str(target))
    return V.finish(V.standalone_body(req, open_view(path), version, got, open_target(target)))


LOAD = {"class": "LlamaForCausalLM", "dispatched": True, "errors": [], "unfilled": [], "partial": [], "skipped": []}


def test_sglang_standalone_outcomes_beside_check(tmp_path, target):  # noqa: F811
    """SGLang STANDALONE as conformance/sglang_standalone.py records it: a release whose parser refuses the algorithm
    (T001), one that takes a draft and loads it whole, and one whose start-up check raises where check says it refuses
    to start; each the other way round is a difference."""
    same = make_draft(tmp_path / "same", target)
    refused = {"parses": False, "refusal": "argument --speculative-algorithm: invalid choice: 'STANDALONE' (choose from ...)"}
    assert _sglang(same, target, "0.5.1.post3", refused).report["verdict"] == "loader-error"
    assert _sglang(same, target, "0.5.1.post3", refused).report["differences"] == []
    taken = {"parses": True, "error": "", "load": LOAD}
    assert _sglang(same, target, "0.5.23", taken).report["verdict"] == "agrees"
    assert _sglang(same, target, "0.5.1.post3", taken).report["verdict"] == "disagrees"  # check says the parser refuses
    padded = make_draft(tmp_path / "padded", target, vocab=49280)
    (res,) = draft_results(open_view(padded), open_target(target), ["sglang==0.5.23"])[0]
    said = next(f.message for f in res.findings if "refuses to start: " in f.message).split("refuses to start: ", 1)[1]
    raised = {"parses": True, "error": said + " (and the rest of SGLang's message)", "load": LOAD}
    out = _sglang(padded, target, "0.5.23", raised).report
    assert out["verdict"] == "loader-error" and out["differences"] == []
    assert _sglang(padded, target, "0.5.23", taken).report["verdict"] == "disagrees"  # check says it refuses to start
