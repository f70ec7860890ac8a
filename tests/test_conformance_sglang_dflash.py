"""DFlash conformance on SGLang's own loader: every installed SGLang release with a DFlash class × the DFlash matrix of
tests/test_conformance_vllm_dflash.py (plus num_target_layers, which SGLang reads).

The harness (src/specbridge/conformance/sglang_loader.py) builds SGLang's DFlashDraftModel by architectures[0] from the
wheel's own sglang/srt/models/dflash.py and runs its `load_weights`; the comparison is tests/test_conformance_sglang.py's
(dispatch, raises, the parameter set and shapes, filled/partial/unfilled, consumed/skipped, which name landed where).
Skipped per release when the environment is absent. The counts are FamilyRange.runs rows in
src/specbridge/engines/sglang/dflash.py, dflash2.py and dspark.py."""

from __future__ import annotations

from pathlib import Path

import dflash_fixtures as dfx
import numpy as np
import pytest
import test_conformance_sglang as base
from test_conformance_sglang import _env_ready
from test_conformance_vllm_dflash import CASES as VLLM_CASES

from specbridge.families.table import BY_NAME

SELF = "tests/test_conformance_sglang_dflash.py"
# architecture-qwen3 names a target class SGLang would build as a plain Qwen3 model (check: no DFlash class): the
# harness builds whatever architectures[0] exports, so that case is not a loader comparison
CASES = {k: v for k, v in VLLM_CASES.items() if k != "architecture-qwen3"} | {
    "num-target-layers": (dfx.tensors, dfx.config(num_target_layers=4)),
    "model-prefixed": (lambda: {"model." + k: v for k, v in dfx.tensors().items()}, dfx.config(num_target_layers=4)),
}
KNOWN: dict[tuple[str, str], str] = {}


RELEASES = base.family_releases("dflash")


def _no(part: str):
    return lambda: {k: v for k, v in dfx.tensors2().items() if part not in k}


def _no_rank() -> dict:
    cfg = dfx.config2()
    del cfg["dflash_config"]["selector_rank"]
    return cfg


# DFlash2DraftModel (0.5.19+): DFlash's loader plus grouped convolutions and the candidate selector; name -> (tensors,
# config, the class SGLang builds). Run in the same harness process as the DFlash matrix where a release has both.
CASES2 = {
    "dflash2-clean": (dfx.tensors2, dfx.config2(), "DFlash2DraftModel"),
    "dflash2-no-selector": (_no("candidate_selector"), dfx.config2(), "DFlash2DraftModel"),
    "dflash2-no-conv": (_no("_conv."), dfx.config2(), "DFlash2DraftModel"),
    "dflash2-no-rank": (dfx.tensors2, _no_rank(), "DFlash2DraftModel"),
    "dflash2-shipped-embed-head": (
        lambda: dfx.tensors2() | {n: np.zeros((dfx.V, dfx.H), np.float32) for n in ("embed_tokens.weight", "lm_head.weight")},
        dfx.config2(),
        "DFlash2DraftModel",
    ),
    "dflash2-model-prefixed": (lambda: {"model." + k: v for k, v in dfx.tensors2().items()}, dfx.config2(), "DFlash2DraftModel"),
    # relabelled as base DFlash: SGLang builds DFlashDraftModel (its convolutions) and skips the selector's names
    "dflash2-as-dflash": (dfx.tensors2, dfx.config2(architectures=["DFlashDraftModel"]), "DFlashDraftModel"),
}
RELEASES2 = base.family_releases("dflash2")


def _dspark_core() -> dict:
    """DSpark's tensors without the embed/head it may ship (SGLang's worker shares the target's)."""
    return {k: v for k, v in dfx.tensors_dspark().items() if not k.startswith(("embed_tokens.", "lm_head."))}


def _gate(rows: int = dfx.MARKOV_RANK) -> dict:
    return {
        "markov_head.gate_proj.weight": np.zeros((rows, dfx.H + dfx.MARKOV_RANK), np.float32),
        "markov_head.gate_proj.bias": np.zeros((rows,), np.float32),
    }


def _no_head_type(**over) -> dict:
    cfg = dfx.config_dspark(**over)
    del cfg["markov_head_type"]
    return cfg


def _nested_gated() -> dict:
    cfg = dfx.config_dspark(num_target_layers=4, dflash_config={"markov_head_type": "gated"})
    del cfg["markov_head_type"]
    return cfg


# Qwen3DSparkModel (sglang/srt/models/dspark.py, modelled from 0.5.16): the release's DFlash loader plus the Markov head;
# the confidence head is not built (SGLANG_RAGGED_VERIFY_MODE defaults to static), so its names are skipped. Without
# num_target_layers, 0.5.16-0.5.17 check the ids [0, 1, 2] against the 2 draft layers and raise
CASES3 = {
    "dspark-clean": (_dspark_core, dfx.config_dspark(), "Qwen3DSparkModel"),
    "dspark-shipped-embed-head": (dfx.tensors_dspark, dfx.config_dspark(), "Qwen3DSparkModel"),
    # a gated head's gate_proj under a vanilla config: DSpark's own markov loop raises
    "dspark-unknown-markov": (lambda: _dspark_core() | _gate(), dfx.config_dspark(), "Qwen3DSparkModel"),
    "dspark-markov-rank-0": (_dspark_core, dfx.config_dspark(markov_rank=0), "Qwen3DSparkModel"),
    "dspark-gated": (lambda: _dspark_core() | _gate(), dfx.config_dspark(markov_head_type="gated"), "Qwen3DSparkModel"),
    "dspark-num-target-layers": (_dspark_core, dfx.config_dspark(num_target_layers=4), "Qwen3DSparkModel"),
    # markov_head_type in another case: parse_dspark_draft_config and build_markov_head lower-case it before comparing
    "dspark-head-type-capitalised": (_dspark_core, dfx.config_dspark(num_target_layers=4, markov_head_type="Vanilla"), "Qwen3DSparkModel"),
    "dspark-gated-upper-case": (
        lambda: _dspark_core() | _gate(),
        dfx.config_dspark(num_target_layers=4, markov_head_type="GATED"),
        "Qwen3DSparkModel",
    ),
    "dspark-head-type-unsupported": (_dspark_core, dfx.config_dspark(num_target_layers=4, markov_head_type="Linear"), "Qwen3DSparkModel"),
    # the head type only in dflash_config: parse_dspark_draft_config reads it there, build_markov_head only at the top
    # level (default vanilla), so a gated head's gate_proj reaches no parameter
    "dspark-gated-nested": (lambda: _dspark_core() | _gate(), _nested_gated(), "Qwen3DSparkModel"),
    # parse_dspark_draft_config: a positive rank needs a head type, unless a dspark_* prefixed key is set (uses_prefixed);
    # build_markov_head then defaults to vanilla
    "dspark-no-head-type-prefixed": (_dspark_core, _no_head_type(num_target_layers=4, dspark_block_size=4), "Qwen3DSparkModel"),
    "dspark-no-head-type": (_dspark_core, _no_head_type(), "Qwen3DSparkModel"),
    # DSparkDraftModel: in dspark.py's EntryClass from 0.5.17 (0.5.16 cannot dispatch it)
    "dspark-draft-model-arch": (
        _dspark_core,
        dfx.config_dspark(num_target_layers=4, architectures=["DSparkDraftModel"]),
        "DSparkDraftModel",
    ),
    "dspark-model-prefixed": (
        lambda: {"model." + k: v for k, v in dfx.tensors_dspark().items()},
        dfx.config_dspark(num_target_layers=4),
        "Qwen3DSparkModel",
    ),
}
RELEASES3 = base.family_releases("dspark")


def write_cases(root: Path) -> dict[str, Path]:
    """The DFlash, DFlash2 and DSpark matrices' drafters on disk (this test's fixture, scripts/adopt_release.py)."""
    out = {name: dfx.write(root / name, cfg, ts()) for name, (ts, cfg) in CASES.items()}
    out |= {name: dfx.write(root / name, cfg, ts()) for name, (ts, cfg, _cls) in CASES2.items()}
    return out | {name: dfx.write(root / name, cfg, ts()) for name, (ts, cfg, _cls) in CASES3.items()}


@pytest.fixture(scope="session")
def dflash_cases(tmp_path_factory):
    return write_cases(tmp_path_factory.mktemp("sglang-dflash"))


def _cases(version: str, all_cases: dict) -> dict:
    """The checkpoints one harness process loads for `version`: the DFlash matrix, plus DFlash2's and DSpark's where
    the release has (a modelled) such class (one SGLang import per release)."""
    return {
        k: v for k, v in all_cases.items() if k in CASES or (k in CASES2 and version in RELEASES2) or (k in CASES3 and version in RELEASES3)
    }


_RESULTS: dict[str, dict] = {}  # this file's harness output per release


@pytest.mark.engine
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("version", RELEASES)
def test_check_matches_sglang_dflash_loader(version, case, dflash_cases, request):
    why = _env_ready(version)
    if why:
        pytest.skip(why)
    if (version, case) in KNOWN:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN[(version, case)]))
    r = base.real(version, _cases(version, dflash_cases), cache=_RESULTS)[case]
    diff = base.family_case(version, dflash_cases[case], r, "dflash", "DFlashDraftModel")
    assert not diff, f"sglang {version}, {case}:\n  " + "\n  ".join(diff)


@pytest.mark.engine
@pytest.mark.parametrize("case", list(CASES2))
@pytest.mark.parametrize("version", RELEASES2)
def test_check_matches_sglang_dflash2_loader(version, case, dflash_cases):
    why = _env_ready(version)
    if why:
        pytest.skip(why)
    r = base.real(version, _cases(version, dflash_cases), cache=_RESULTS)[case]
    diff = base.family_case(version, dflash_cases[case], r, "dflash2", CASES2[case][2])
    assert not diff, f"sglang {version}, {case}:\n  " + "\n  ".join(diff)


@pytest.mark.engine
@pytest.mark.parametrize("case", list(CASES3))
@pytest.mark.parametrize("version", RELEASES3)
def test_check_matches_sglang_dspark_loader(version, case, dflash_cases):
    why = _env_ready(version)
    if why:
        pytest.skip(why)
    r = base.real(version, _cases(version, dflash_cases), cache=_RESULTS)[case]
    if r.get("dispatched") is False:  # no dspark.py class of that name: SGLang cannot dispatch it, nor may check
        [res] = base.check(base.open_view(dflash_cases[case]), f"sglang=={version}", family=BY_NAME["dspark"])
        assert res.report.dispatched is False, f"sglang {version} cannot dispatch {case}; check dispatched it"
        return
    diff = base.family_case(version, dflash_cases[case], r, "dspark", CASES3[case][2])
    assert not diff, f"sglang {version}, {case}:\n  " + "\n  ".join(diff)


def test_dflash_run_rows_cover_the_matrix():
    from specbridge.engines.sglang import DSPARK_CASES

    assert DSPARK_CASES == len(CASES3)
    base.family_runs_agree("dflash", SELF, len(CASES), KNOWN)
    base.family_runs_agree("dflash2", SELF, len(CASES2), {})
    base.family_runs_agree("dspark", SELF, len(CASES3), {})
