"""Plain draft models on real SGLang (--speculative-algorithm STANDALONE): every installed SGLang release a DRAFT_MODEL
row covers × the drafts of tests/test_draft_model.py (SmolLM2-135M's real tokenizer; the same map, a shifted map, a
padded vocab), through specbridge.conformance.sglang_standalone: SGLang's own argument parser, its own vocabulary
check (StandaloneWorkerV2._validate_vocab_compatibility, fed as the worker feeds it) and its own load of the draft's
class, against `check`'s T findings for the same release. Skipped per release when the environment is absent; the
counts are DraftModelRange.runs rows in src/specbridge/engines/sglang/draft_model.py."""

from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pytest
from conftest import write_checkpoint
from test_conformance_sglang import ENV, PY, REPO, _env_ready
from test_draft_model import check, make_draft, shifted, target  # noqa: F401 (target: the session fixture)

from specbridge.engines import sglang as table
from specbridge.engines.spec import in_release_range
from specbridge.engines.spec import parse_version as _pv

SELF = "tests/test_conformance_sglang_standalone.py"
CASES = {"same": {}, "shifted-map": {"tokenizer": "shifted"}, "padded-vocab": {"vocab": 49280}}


def _installed() -> list[str]:
    wheels = ENV / "wheels"
    return sorted((p.name for p in wheels.iterdir() if (p / ".specbridge-ok").is_file()), key=_pv) if wheels.is_dir() else []


def _releases() -> list[str]:
    """Per DRAFT_MODEL row, the installed releases it covers (per-era, as CI: the newest of them); the releases read
    when none is installed (their tests then skip)."""
    have, out = _installed(), []
    for row in table.DRAFT_MODEL:
        got = [v for v in have if in_release_range(v, row.first, row.last)]
        out += got[-1:] if os.environ.get("SPECBRIDGE_CONFORMANCE") == "per-era" else got
    return out or [row.versions_read[-1] for row in table.DRAFT_MODEL]


RELEASES = _releases()


def _row(version: str):
    return next(r for r in table.DRAFT_MODEL if in_release_range(version, r.first, r.last))


def _with_data(d):
    """make_draft's header-only safetensors rewritten with zeros (SGLang's loader reads the data)."""
    raw = (d / "model.safetensors").read_bytes()
    header = json.loads(raw[8 : 8 + int.from_bytes(raw[:8], "little")])
    tensors = {n: np.zeros(v["shape"], np.float32) for n, v in header.items() if n != "__metadata__"}
    return write_checkpoint(d, json.loads((d / "config.json").read_text()), tensors)


@pytest.fixture(scope="module")
def drafts(tmp_path_factory, target):  # noqa: F811
    root = tmp_path_factory.mktemp("sglang-standalone")
    out = {}
    for name, kw in CASES.items():
        kw = dict(kw)
        if kw.get("tokenizer") == "shifted":
            kw["tokenizer"] = shifted(target, 1000, 1100)
        out[name] = _with_data(make_draft(root / name, target, **kw))
    return out


_REAL: dict[str, dict] = {}


def real(version: str, target, drafts) -> dict[str, dict]:  # noqa: F811
    if version not in _REAL:
        cmd = [str(PY), "-m", "specbridge.conformance.sglang_standalone", "--sglang-dir", str(ENV / "wheels" / version)]
        env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
        proc = subprocess.run([*cmd, str(target), *map(str, drafts.values())], capture_output=True, text=True, timeout=900, env=env)
        assert proc.returncode == 0, f"harness failed for sglang {version}:\n{proc.stderr[-4000:]}"
        _REAL[version] = dict(zip(drafts, json.loads(proc.stdout), strict=True))
    return _REAL[version]


@pytest.mark.engine
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("version", RELEASES)
def test_check_matches_sglang_standalone(version, case, target, drafts, capsys):  # noqa: F811
    why = _env_ready(version)
    if why:
        pytest.skip(why)
    r = real(version, target, drafts)[case]
    assert r["sglang_version"] == version
    code, body = check(capsys, drafts[case], "--target", target, "--engine", f"sglang=={version}")
    findings = {f["code"]: f for f in body["results"][0]["findings"]}
    row = _row(version)
    # the algorithm: SGLang's parser refuses STANDALONE where the row has no method (T001 quotes its message)
    assert r["parses"] == bool(row.method) == ("T001" not in findings), (r, findings)
    if not r["parses"]:
        assert row.refusal in r["refusal"] and row.refusal in findings["T001"]["message"], r["refusal"]
        return
    # the start-up check: SGLang raises exactly where check says it refuses to start, with the row's words
    refuses = [f for f in findings.values() if "refuses to start" in f["message"]]
    assert bool(r.get("error")) == bool(refuses), (r, findings)
    assert r["validator"] == bool(row.vocab_size_raises)
    if r.get("error"):
        [f] = refuses
        said = f["message"].split("refuses to start: ", 1)[1]
        assert r["error"].startswith(said), (r["error"], said)
    # every draft that starts: a token map that differs is not SGLang's check, drafts are rejected (T003); the
    # validator's token-map branch is real but never reached (handed the draft's own tokenizer, it would raise)
    assert ("T003" in findings) == (case == "shifted-map")
    if r["validator"] and case == "shifted-map":
        assert r["draft_worker_tokenizer"] == "none" and "different token-to-id mappings" in r["error_with_draft_tokenizer"], r
    # the draft is its own registered class, loaded whole
    assert r["load"]["class"] == "LlamaForCausalLM" and r["load"]["dispatched"] and not r["load"]["errors"], r["load"]
    assert not r["load"]["unfilled"] and not r["load"]["partial"], r["load"]


def test_standalone_run_rows_cover_the_matrix():
    runs = [(row, run) for row in table.DRAFT_MODEL for run in row.runs]
    assert runs
    for row, run in runs:
        assert run.test == SELF and in_release_range(run.release, row.first, row.last)
        assert run.cases == run.agreed == len(CASES)
