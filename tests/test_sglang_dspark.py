"""SGLang's Qwen3DSparkModel (sglang/srt/models/dspark.py, --speculative-algorithm DSPARK; modelled from 0.5.16, its
first release): the release's DFlashDraftModel loader plus a Markov head whose unknown names raise; the confidence head
is not built under the default SGLANG_RAGGED_VERIFY_MODE (static). The rows are in src/specbridge/engines/sglang/dspark.py;
tests/test_conformance_sglang_dflash.py runs SGLang's own loader on the same fixtures."""

from __future__ import annotations

import json

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


def test_dspark_loads_whole_on_0523(dspark):
    rc, codes, out = _check(dspark, "0.5.23")
    # the fixture ships a confidence head: ignored by design (info), never an error
    assert rc == 0 and set(codes) == {"L008"} and all("confidence_head." in m for m in codes["L008"]), codes
    params = {p["name"]: p["status"] for p in out["parameters"]}
    assert params["markov_head.markov_w1.weight"] == "loaded" and params["markov_head.markov_w2.weight"] == "loaded"
    assert not any(n.startswith("confidence_head.") for n in params)  # not built under the default ragged-verify mode


@pytest.mark.parametrize("version", ["0.5.18", "0.5.19", "0.5.20", "0.5.22"])
def test_dspark_loads_whole_from_0518(dspark, version):
    rc, codes, _ = _check(dspark, version)
    assert rc == 0 and set(codes) == {"L008"}, (version, codes)


@pytest.mark.parametrize("version", ["0.5.16", "0.5.17"])
def test_dspark_ids_past_the_draft_layers_raise_through_0517(dspark, tmp_path, version):
    """0.5.16-0.5.17 inherit the DFlashDraftModel that checks target_layer_ids against num_target_layers, else the
    draft's own layer count: the fixture's ids [0, 1, 2] over 2 draft layers raise; num_target_layers fixes it."""
    rc, codes, _ = _check(dspark, version)
    assert rc == 1 and any("out-of-range layer id" in m for m in codes["L006"]), codes
    fixed = dfx.write(tmp_path / "ntl", dfx.config_dspark(num_target_layers=4), _core())
    rc, codes, _ = _check(fixed, version)
    assert rc == 0 and set(codes) == {"L008"}, codes


def test_dspark_draft_model_name_dispatches_from_0517(tmp_path):
    d = dfx.write(tmp_path / "dsdm", dfx.config_dspark(num_target_layers=4, architectures=["DSparkDraftModel"]), _core())
    rc, codes, _ = _check(d, "0.5.16")
    # 0.5.16 builds DSpark but not under this name: L005 names 0.5.17, whose class the rest of the report simulates
    assert rc == 1 and any("no DSpark class for 'DSparkDraftModel' (the first release with one is 0.5.17)" in m for m in codes["L005"]), (
        codes
    )
    rc, codes, _ = _check(d, "0.5.17")
    assert rc == 0 and set(codes) == {"L008"}, codes


def test_no_markov_head_type_raises(tmp_path):
    cfg = dfx.config_dspark()
    del cfg["markov_head_type"]
    rc, codes, _ = _check(dfx.write(tmp_path / "nohead", cfg, _core()), "0.5.20")
    assert rc == 1 and any("requires markov_head_type" in m for m in codes["L006"]), codes


def test_unknown_markov_tensor_raises_and_a_gated_head_takes_it(tmp_path):
    ts = _core() | GATE
    rc, codes, _ = _check(dfx.write(tmp_path / "vanilla", dfx.config_dspark(), ts), "0.5.23")
    assert rc == 1 and any("DSpark unexpected markov weight 'markov_head.gate_proj." in m for m in codes["L004"]), codes
    rc, codes, out = _check(dfx.write(tmp_path / "gated", dfx.config_dspark(markov_head_type="gated"), ts), "0.5.23")
    assert rc == 0 and set(codes) == {"L008"}, codes
    assert {p["name"]: p["status"] for p in out["parameters"]}["markov_head.gate_proj.weight"] == "loaded"


def test_markov_head_type_is_compared_lower_cased(tmp_path):
    """parse_dspark_draft_config and build_markov_head lower-case markov_head_type before comparing it (0.5.16-0.5.23):
    'Vanilla' loads the vanilla head, 'GATED' builds (and loads) the gated one, an unknown type raises in any case.
    SGLang's own loader agrees (tests/test_conformance_sglang_dflash.py, dspark-head-type-* cases)."""
    for version in ("0.5.16", "0.5.23"):
        d = dfx.write(tmp_path / f"cap-{version}", dfx.config_dspark(num_target_layers=4, markov_head_type="Vanilla"), _core())
        rc, codes, _ = _check(d, version)
        assert rc == 0 and set(codes) == {"L008"}, (version, codes)
    gated = dfx.write(tmp_path / "gated-upper", dfx.config_dspark(markov_head_type="GATED"), _core() | GATE)
    rc, codes, out = _check(gated, "0.5.23")
    assert rc == 0 and set(codes) == {"L008"}, codes
    assert {p["name"]: p["status"] for p in out["parameters"]}["markov_head.gate_proj.weight"] == "loaded"
    rc, codes, _ = _check(dfx.write(tmp_path / "linear", dfx.config_dspark(markov_head_type="Linear"), _core()), "0.5.23")
    assert rc == 1 and any("Unsupported DSpark markov_head_type" in m for m in codes["L006"]), codes


def test_the_head_is_built_from_the_top_level_type_only(tmp_path):
    """parse_dspark_draft_config finds a head type in dflash_config, but build_markov_head reads the top level (default
    vanilla): a gated head's gate_proj then names no parameter and raises. A dspark_* prefixed key lets a positive rank
    go without a head type (parse's uses_prefixed): the vanilla head is built."""
    cfg = dfx.config_dspark(dflash_config={"markov_head_type": "gated"})
    del cfg["markov_head_type"]
    rc, codes, _ = _check(dfx.write(tmp_path / "nested", cfg, _core() | GATE), "0.5.23")
    assert rc == 1 and any("unexpected markov weight 'markov_head.gate_proj." in m for m in codes["L004"]), codes
    assert "L006" not in codes, codes
    cfg = dfx.config_dspark(dspark_block_size=4)
    del cfg["markov_head_type"]
    rc, codes, _ = _check(dfx.write(tmp_path / "prefixed", cfg, _core()), "0.5.23")
    assert rc == 0 and set(codes) == {"L008"}, codes


def test_markov_rank_zero_raises(tmp_path):
    rc, codes, _ = _check(dfx.write(tmp_path / "r0", dfx.config_dspark(markov_rank=0), _core()), "0.5.23")
    assert rc == 1 and any("requires markov_rank > 0" in m for m in codes["L006"]), codes


def test_shipped_embedding_and_head_are_skipped(tmp_path):
    rc, codes, out = _check(dfx.write(tmp_path / "shipped", dfx.config_dspark(), dfx.tensors_dspark()), "0.5.23")
    assert rc == 0 and set(codes) <= {"L008"}, codes
    assert any("embed_tokens.weight" in m for m in codes["L008"]) and any("lm_head.weight" in m for m in codes["L008"]), codes


def _two_layer_target(tmp_path):
    tgt = tmp_path / "target"
    tgt.mkdir()
    cfg = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": dfx.H, "num_hidden_layers": 2}
    (tgt / "config.json").write_text(json.dumps(cfg | {"vocab_size": dfx.V}))
    return tgt


@pytest.mark.parametrize("key", ["target_layer_ids", "dspark_target_layer_ids"])
def test_dspark_target_layer_ids_are_read_by_d001_and_d002(tmp_path, key):
    """A DSpark drafter's ids live at the top level (target_layer_ids, or dspark_target_layer_ids), where vLLM's
    get_eagle3_aux_layers_from_config and SGLang's parse_dspark_draft_config read them, not in dflash_config."""
    cfg = dfx.config_dspark(num_target_layers=4)
    ids = cfg.pop("target_layer_ids")
    cfg[key] = ids
    d, target = dfx.write(tmp_path / key, cfg, _core()), _two_layer_target(tmp_path)
    for engine in ("vllm==0.32.0", "sglang==0.5.23"):
        r = run_cli("check", d, "--engine", engine, "--target", target, "--json")
        found = [f for f in json.loads(r.stdout)["findings"] if f["code"] == "D001"]
        assert r.returncode == 1 and found and "[3]" in found[0]["message"], (engine, r.stdout[-2000:])
    twice = dfx.write(tmp_path / f"{key}-twice", cfg | {"eagle_aux_hidden_state_layer_ids": ids}, _core())
    rc, codes, _ = _check(twice, "0.5.23")
    assert any(m.startswith(f"{key} {ids}") and "disagree" in m for m in codes["D002"]), codes
    good = dfx.write(tmp_path / f"{key}-plus-one", cfg | {"eagle_aux_hidden_state_layer_ids": [i + 1 for i in ids]}, _core())
    assert "D002" not in _check(good, "0.5.23")[1]
