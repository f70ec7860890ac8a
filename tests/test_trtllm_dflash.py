"""TensorRT-LLM's DFlash rows (src/specbridge/engines/trtllm/dflash.py): read from source, never run.

Each expectation below is what the read source implies; the comment on each says which line of it. No TensorRT-LLM
wheel installs here, so nothing is compared with a real load: a change to the rows that flips one of these outcomes
must be a change in what the source says."""

from __future__ import annotations

import json
from pathlib import Path

import dflash_fixtures as dfx
import numpy as np
import pytest
from conftest import run_cli

from specbridge.engines.registry import family_rows


@pytest.fixture(scope="module")
def dflash(tmp_path_factory) -> Path:
    return dfx.write(tmp_path_factory.mktemp("trt-dflash") / "qwen3-dflash-2l")


def _check(path: Path, engine: str) -> tuple[int, dict]:
    r = run_cli("check", path, "--engine", engine, "--json")
    return r.returncode, json.loads(r.stdout)


def _codes(out: dict) -> dict[str, list[str]]:
    codes: dict[str, list[str]] = {}
    for f in out["findings"]:
        codes.setdefault(f["code"], []).append(f["message"])
    return codes


def _mutant(tmp_path: Path, name: str, drop=(), add=None, rename=None) -> Path:
    ts = {k: v for k, v in dfx.tensors().items() if k not in drop} | (add or {})
    ts = {(rename or {}).get(k, k): v for k, v in ts.items()}
    return dfx.write(tmp_path / name, None, ts)


def test_every_trtllm_dflash_row_cites_what_was_read_and_says_it_never_ran():
    rows = family_rows("trtllm", "dflash")
    assert rows and all(r.classes and not r.runs and r.reads for r in rows)
    for r in rows:
        assert "not run" in r.begins.lower() or "never run" in r.begins.lower()
        assert all(x.file and x.release and x.shows for x in r.reads)


# one pin per release read: 1.3.0rc14 (the first with DFlashDecodingConfig), 1.3.0rc27, 1.4.0rc1 (the newest documentation
# read), and the 1.3.0 release they are placed with
@pytest.mark.parametrize("version", ["1.3.0rc14", "1.3.0", "1.3.0rc27", "1.4.0rc1"])
def test_the_two_layer_dflash_drafter_loads_on_trtllm(dflash, version):
    """DFlashForCausalLM's load_weights keeps fc.weight / hidden_norm.weight, maps norm.weight to model.norm.weight and
    prefixes model. to the layers (the backbone is Qwen3ForCausalLM: 'DFlashDraftModel' is no registered class, so
    model_type qwen3 is used); load_weights_from_target_model then takes embed_tokens and lm_head from the target.
    Every tensor loads, nothing is missing: no error (version placement warnings only: no release's loader was read)."""
    rc, out = _check(dflash, f"trtllm=={version}")
    assert rc == 0, out["findings"]
    assert out["class"] == "DFlashForCausalLM" and out["family"]["name"] == "dflash"
    assert {f["code"] for f in out["findings"] if f["severity"] != "info"} <= {"R001", "R003", "R004"}, out["findings"]
    assert all(t["status"] == "loaded" for t in out["tensors"])
    shared = {p["name"] for p in out["parameters"] if p["status"] == "shared-from-target"}
    assert shared == {"model.embed_tokens.weight", "lm_head.weight"}
    assert not out["load"]["missing"] and not out["load"]["dropped"]


@pytest.mark.parametrize("version", ["1.0.0", "1.2.0"])
def test_releases_before_dflash_name_the_first_release_with_it(dflash, version):
    """The 1.2 release notes list no DFlash; DFlashDecodingConfig is first in 1.3.0rc14's llm_args (PR #12794).
    (1.3.0rc1–rc13 are placed with 1.3.0, as every pre-release is: R003 says so; they are not answered L005.)"""
    rc, out = _check(dflash, f"trtllm=={version}")
    l005 = _codes(out).get("L005", [])
    assert rc == 1 and l005 and "first release with one is 1.3.0" in l005[0]


def test_a_missing_fc_fails(tmp_path):
    """load_weights builds self.fc only `if "fc.weight" in remapped`: without it project_target_hidden has no fc
    (AttributeError at the first draft step). Exit 1 with fc named."""
    rc, out = _check(_mutant(tmp_path, "no-fc", drop=("fc.weight",)), "trtllm==1.3.0")
    assert rc == 1 and any("fc.weight" in m for m in _codes(out)["L002"])


def test_fc_and_hidden_norm_under_model_prefix_are_lost(tmp_path):
    """Only the exact names 'fc.weight' / 'hidden_norm.weight' are kept for the drafter; 'model.fc.weight' already
    starts with model., goes to the backbone (which has no fc) and is skipped by allow_partial_loading, so fc is
    never built: the vLLM parameter naming fails on TensorRT-LLM."""
    p = _mutant(tmp_path, "model-fc", rename={"fc.weight": "model.fc.weight", "hidden_norm.weight": "model.hidden_norm.weight"})
    rc, out = _check(p, "trtllm==1.3.0")
    codes = _codes(out)
    assert rc == 1 and any("model.fc.weight" in m for m in codes["L001"]) and any("fc.weight" in m for m in codes["L002"])


def test_model_prefixed_layers_load_as_written(tmp_path):
    """Names already starting with model. are kept as they are (load_weights' remap): the same drafter with model.layers
    / model.norm loads alike."""
    ren = {k: f"model.{k}" for k in dfx.tensors() if k not in ("fc.weight", "hidden_norm.weight")}
    rc, out = _check(_mutant(tmp_path, "prefixed", rename=ren), "trtllm==1.3.0")
    assert rc == 0 and all(t["status"] == "loaded" for t in out["tensors"])


def test_fc_narrower_than_the_target_layers_fails(tmp_path):
    """fc is built from the tensor's own shape, but the captured target states are hidden × len(target_layer_ids)
    wide (DFlashSpecMetadata): an fc over 2 layers with 3 ids configured cannot be applied (reported here as a size
    mismatch; on the engine it fails at the first draft step, not at load)."""
    p = dfx.write(tmp_path / "narrow-fc", None, dfx.tensors(n_ids=2))
    rc, out = _check(p, "trtllm==1.3.0")
    assert rc == 1 and any("fc.weight" in m for m in _codes(out)["L003"])


def test_mask_hidden_is_dropped_silently_not_asserted(tmp_path):
    """vLLM's DFlash loader asserts on a shipped mask_hidden; TensorRT-LLM's reads no such name (model.mask_hidden is
    under no module of the backbone): it is lost without a word, which check reports as a silent drop (L001)."""
    p = _mutant(tmp_path, "mask-hidden", add={"mask_hidden": np.zeros((1, 1, dfx.H * 3), np.float32)})
    rc, out = _check(p, "trtllm==1.3.0")
    codes = _codes(out)
    assert rc == 1 and any("mask_hidden" in m for m in codes["L001"]) and "L006" not in codes


def test_no_mask_token_falls_back_past_the_embedding(tmp_path):
    """DFlashForCausalLM.__init__ reads dflash_config.mask_token_id, else mask_token_id, else vocab_size: without one the
    mask slots index one past the target's embedding (unless the launch sets DFlashDecodingConfig.mask_token_id)."""
    p = dfx.write(tmp_path / "no-mask", dfx.config(dflash_config={"target_layer_ids": dfx.TARGET_IDS}))
    rc, out = _check(p, "trtllm==1.3.0")
    assert rc == 1 and any("falls back to vocab_size" in m for m in _codes(out)["L006"])
    top = dfx.write(tmp_path / "top-mask", dfx.config(dflash_config={"target_layer_ids": dfx.TARGET_IDS}, mask_token_id=dfx.MASK_ID))
    assert _check(top, "trtllm==1.3.0")[0] == 0  # a top-level mask_token_id is read too


def test_shipped_embedding_and_head_are_replaced_by_the_targets(tmp_path):
    """load_weights_from_target_model assigns the target's embed_tokens and lm_head unconditionally: a shipped copy is
    never used (not an error: DFlash shares them by design)."""
    e = np.zeros((dfx.V, dfx.H), np.float32)
    p = _mutant(tmp_path, "with-head", add={"embed_tokens.weight": e, "lm_head.weight": e})
    rc, out = _check(p, "trtllm==1.3.0")
    status = {t["name"]: t["status"] for t in out["tensors"]}
    assert rc == 0 and status["embed_tokens.weight"] == status["lm_head.weight"] == "unused"


def test_laguna_drafters_are_refused_not_guessed(tmp_path):
    """Later modeling_dflash.py copies build DFlashLagunaForCausalLM for any architecture naming Laguna: not modelled."""
    p = dfx.write(tmp_path / "laguna", dfx.config(architectures=["DFlashLagunaForCausalLM"]))
    r = run_cli("check", p, "--engine", "trtllm==1.3.0")
    assert r.returncode == 2 and "does not model that class" in r.stderr
