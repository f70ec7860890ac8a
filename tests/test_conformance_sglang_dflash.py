"""DFlash conformance on SGLang's own loader: every installed SGLang release with a DFlash class × the DFlash matrix of
tests/test_conformance_vllm_dflash.py (plus num_target_layers, which SGLang reads).

The harness (src/specbridge/conformance/sglang_loader.py) builds SGLang's DFlashDraftModel by architectures[0] from the
wheel's own sglang/srt/models/dflash.py and runs its `load_weights`; the comparison is tests/test_conformance_sglang.py's
(dispatch, raises, the parameter set and shapes, filled/partial/unfilled, consumed/skipped, which name landed where).
Skipped per release when the environment is absent. The counts are FamilyRange.runs rows in
src/specbridge/engines/sglang.py."""

from __future__ import annotations

import dflash_fixtures as dfx
import pytest
import test_conformance_sglang as base
from test_conformance_sglang import _env_ready
from test_conformance_vllm_dflash import CASES as VLLM_CASES

SELF = "tests/test_conformance_sglang_dflash.py"
# architecture-qwen3 names a target class SGLang would build as a plain Qwen3 model (check: no DFlash class): the
# harness builds whatever architectures[0] exports, so that case is not a loader comparison
CASES = {k: v for k, v in VLLM_CASES.items() if k != "architecture-qwen3"} | {
    "num-target-layers": (dfx.tensors, dfx.config(num_target_layers=4)),
    "model-prefixed": (lambda: {"model." + k: v for k, v in dfx.tensors().items()}, dfx.config(num_target_layers=4)),
}
KNOWN: dict[tuple[str, str], str] = {}


RELEASES = base.family_releases("dflash")


@pytest.fixture(scope="session")
def dflash_cases(tmp_path_factory):
    root = tmp_path_factory.mktemp("sglang-dflash")
    return {name: dfx.write(root / name, cfg, ts()) for name, (ts, cfg) in CASES.items()}


_RESULTS: dict[str, dict] = {}  # this matrix's harness output per release


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("version", RELEASES)
def test_check_matches_sglang_dflash_loader(version, case, dflash_cases, request):
    why = _env_ready(version)
    if why:
        pytest.skip(why)
    if (version, case) in KNOWN:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN[(version, case)]))
    r = base.real(version, dflash_cases, cache=_RESULTS)[case]
    diff = base.family_case(version, dflash_cases[case], r, "dflash", "DFlashDraftModel")
    assert not diff, f"sglang {version}, {case}:\n  " + "\n  ".join(diff)


def test_dflash_run_rows_cover_the_matrix():
    base.family_runs_agree("dflash", SELF, len(CASES), KNOWN)
