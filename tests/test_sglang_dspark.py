"""SGLang's Qwen3DSparkModel (sglang/srt/models/dspark.py, --speculative-algorithm DSPARK; modelled from 0.5.23):
DFlashDraftModel's loader plus a Markov head whose unknown names raise; the confidence head is not built under the
default SGLANG_RAGGED_VERIFY_MODE (static). The rows are in src/specbridge/engines/sglang.py;
tests/test_conformance_sglang_dflash.py runs SGLang's own loader on the same fixtures."""

from __future__ import annotations

import dflash_fixtures as dfx
import numpy as np
import pytest
from conftest import run_cli
from test_sglang_dflash2 import _check

GATE = {
    "markov_head.gate_proj.weight": np.zeros((dfx.MARKOV_RANK, dfx.H + dfx.MARKOV_RANK), np.float32),
    "markov_head.gate_proj.bias": np.zeros((dfx.MARKOV_RANK,), np.float32),
}


def _core() -> dict:
    return {k: v for k, v in dfx.tensors_dspark().items() if not k.startswith(("embed_tokens.", "lm_head."))}


@pytest.fixture(scope="module")
def dspark(tmp_path_factory):
    return dfx.write(tmp_path_factory.mktemp("sg-dsp") / "dsp", dfx.config_dspark(), _core())


def test_dspark_loads_whole_on_0523_and_is_unmodelled_before(dspark):
    rc, codes, out = _check(dspark, "0.5.23")
    # the fixture ships a confidence head: ignored by design (info), never an error
    assert rc == 0 and set(codes) == {"L008"} and all("confidence_head." in m for m in codes["L008"]), codes
    params = {p["name"]: p["status"] for p in out["parameters"]}
    assert params["markov_head.markov_w1.weight"] == "loaded" and params["markov_head.markov_w2.weight"] == "loaded"
    assert not any(n.startswith("confidence_head.") for n in params)  # not built under the default ragged-verify mode
    for version in ("0.5.16", "0.5.22"):
        r = run_cli("check", dspark, "--engine", f"sglang=={version}")
        assert r.returncode == 2 and "from 0.5.23 only" in r.stdout + r.stderr, (version, r.stdout, r.stderr)


def test_unknown_markov_tensor_raises_and_a_gated_head_takes_it(tmp_path):
    ts = _core() | GATE
    rc, codes, _ = _check(dfx.write(tmp_path / "vanilla", dfx.config_dspark(), ts), "0.5.23")
    assert rc == 1 and any("DSpark unexpected markov weight 'markov_head.gate_proj." in m for m in codes["L004"]), codes
    rc, codes, out = _check(dfx.write(tmp_path / "gated", dfx.config_dspark(markov_head_type="gated"), ts), "0.5.23")
    assert rc == 0 and set(codes) == {"L008"}, codes
    assert {p["name"]: p["status"] for p in out["parameters"]}["markov_head.gate_proj.weight"] == "loaded"


def test_markov_rank_zero_raises(tmp_path):
    rc, codes, _ = _check(dfx.write(tmp_path / "r0", dfx.config_dspark(markov_rank=0), _core()), "0.5.23")
    assert rc == 1 and any("requires markov_rank > 0" in m for m in codes["L006"]), codes


def test_shipped_embedding_and_head_are_skipped(tmp_path):
    rc, codes, out = _check(dfx.write(tmp_path / "shipped", dfx.config_dspark(), dfx.tensors_dspark()), "0.5.23")
    assert rc == 0 and set(codes) <= {"L008"}, codes
    assert any("embed_tokens.weight" in m for m in codes["L008"]) and any("lm_head.weight" in m for m in codes["L008"]), codes
