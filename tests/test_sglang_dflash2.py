"""SGLang's DFlash2DraftModel (sglang/srt/models/dflash.py, 0.5.19+): DFlashDraftModel's loader plus grouped
convolutions and a candidate selector, served by the DFLASH worker. The rows are in src/specbridge/engines/sglang/dflash2.py;
tests/test_conformance_sglang_dflash.py runs SGLang's own loader on the same fixtures."""

from __future__ import annotations

import json
from pathlib import Path

import dflash_fixtures as dfx
import numpy as np
import pytest
from conftest import run_cli


def _check(path: Path, version: str, *extra: str) -> tuple[int, dict[str, list[str]], dict]:
    r = run_cli("check", path, "--engine", f"sglang=={version}", *extra, "--json")
    out = json.loads(r.stdout)
    codes: dict[str, list[str]] = {}
    for f in out["findings"]:
        codes.setdefault(f["code"], []).append(f["message"])
    return r.returncode, codes, out


@pytest.fixture(scope="module")
def dflash2(tmp_path_factory) -> Path:
    return dfx.write(tmp_path_factory.mktemp("sg-df2") / "df2", dfx.config2(), dfx.tensors2())


def test_dflash2_is_refused_before_0519_and_loads_whole_from_it(dflash2):
    rc, codes, _ = _check(dflash2, "0.5.18")
    assert rc == 1 and any("first release with one is 0.5.19" in m for m in codes["L005"]), codes
    for version in ("0.5.19", "0.5.20", "0.5.23"):
        rc, codes, out = _check(dflash2, version)
        assert rc == 0 and not codes, (version, codes)
        params = {p["name"]: p["status"] for p in out["parameters"]}
        assert params["candidate_selector.predecessor_codebook"] == "loaded"
        assert params["layers.1.mlp_conv.kernel_projection.weight"] == "loaded"
        assert "lm_head.weight" not in params  # the worker points lm_head at the target's head


def test_dflash2_aliases_dispatch_from_0523_only(tmp_path):
    p = dfx.write(tmp_path / "minimax", dfx.config2(architectures=["MiniMaxDFlash2DraftModel"]), dfx.tensors2())
    rc, codes, _ = _check(p, "0.5.23")
    assert rc == 0 and not codes, codes
    rc, codes, _ = _check(p, "0.5.20")
    assert rc == 1 and any("'MiniMaxDFlash2DraftModel' is no DFlash class" in m for m in codes["L005"]), codes


def test_missing_selector_or_convolution_tensors_are_left_at_their_initial_values(tmp_path):
    for part in ("candidate_selector", "_conv."):
        ts = {k: v for k, v in dfx.tensors2().items() if part not in k}
        rc, codes, out = _check(dfx.write(tmp_path / part.strip("._"), dfx.config2(), ts), "0.5.23")
        missing = [p["name"] for p in out["parameters"] if p["status"] == "missing"]
        assert rc == 1 and "L002" in codes and missing and all(part in n for n in missing), (part, codes, missing)


def test_selector_fields_absent_raise_as_sglang_does(tmp_path):
    cfg = dfx.config2()
    del cfg["dflash_config"]["selector_rank"]
    rc, codes, _ = _check(dfx.write(tmp_path / "no-rank", cfg, dfx.tensors2()), "0.5.23")
    assert rc == 1 and any("requires dflash_config.selector_rank" in m for m in codes["L006"]), codes
    assert any("needs rank and top_k together" in m for m in codes["L006"])


def test_shipped_embedding_and_head_are_ignored_by_design(tmp_path):
    ts = dfx.tensors2() | {n: np.zeros((dfx.V, dfx.H), np.float32) for n in ("embed_tokens.weight", "lm_head.weight")}
    rc, codes, _ = _check(dfx.write(tmp_path / "shipped", dfx.config2(), ts), "0.5.23")
    assert rc == 0 and set(codes) == {"L008"}, codes


def test_dflash2_relabelled_as_dflash_runs_without_its_selector_on_sglang(tmp_path):
    """SGLang's DFlashDraftModel builds the convolutions (0.5.19+) and skips the selector's names without a word."""
    p = dfx.write(tmp_path / "relabelled", dfx.config2(architectures=["DFlashDraftModel"]), dfx.tensors2())
    rc, codes, out = _check(p, "0.5.23")
    assert rc == 1 and any("skipped without a word" in m and "without its candidate selector" in m for m in codes["D008"])
    params = {q["name"]: q["status"] for q in out["parameters"]}
    assert params["layers.0.attention_conv.base_kernel"] == "loaded" and "candidate_selector.successor_codebook" not in params
    # before 0.5.19 no SGLang has the DFlash2 class (nor DFlashDraftModel's convolutions)
    rc, codes, _ = _check(p, "0.5.18")
    assert rc == 1 and any("first release with one is 0.5.19" in m for m in codes["L005"]), codes


def test_launch_line_is_dflashs(dflash2):
    r = run_cli("launch", dflash2, "--engine", "sglang==0.5.23", "--target", "Qwen/Qwen3-8B")
    assert r.returncode == 0, r.stderr
    assert "--speculative-algorithm DFLASH" in r.stdout and f"--speculative-num-draft-tokens {dfx.config2()['block_size']}" in r.stdout
