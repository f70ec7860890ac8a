"""EAGLE-1 conformance on SGLang's own loader: every installed SGLang release × EAGLE-1 drafters (research layout
under LlamaForCausalLMEagle, and the mutations that lose fc.bias or the whole drafter), compared with `check` as
tests/test_conformance_sglang.py compares EAGLE-3 drafters. Skipped per release when the environment is absent; the
counts are FamilyRange.runs rows in src/specbridge/engines/sglang.py."""

from __future__ import annotations

import eagle1_fixtures as e1
import numpy as np
import pytest
import test_conformance_sglang as base
from test_conformance_sglang import _env_ready

SELF = "tests/test_conformance_sglang_eagle1.py"
EAGLE = e1.config(architectures=["LlamaForCausalLMEagle"])
CASES: dict[str, tuple] = {
    "eagle-arch": (e1.tensors, EAGLE),
    "eagle-arch-no-bias": (lambda: e1.tensors(bias=False), EAGLE),
    "eagle-arch-no-embedding": (lambda: e1.tensors(embed=False), EAGLE),
    "eagle-arch-two-layers": (lambda: e1.tensors(n_layers=2), {**EAGLE, "num_hidden_layers": 2}),
    "eagle-arch-model-prefixed": (lambda: {"model." + k: v for k, v in e1.tensors().items()}, EAGLE),
    "eagle-arch-lm-head": (lambda: e1.tensors() | {"lm_head.weight": np.zeros((e1.V, e1.H), np.float32)}, EAGLE),
    "eagle-arch-unknown": (lambda: e1.tensors() | {"extra.weight": np.zeros((4, e1.H), np.float32)}, EAGLE),
    "eagle-arch-bias-flag": (e1.tensors, {**EAGLE, "bias": True}),
    "eagle-arch-vocab-maps": (lambda: e1.tensors() | {"d2t": np.zeros(e1.V, np.int64), "t2d": np.ones(e1.V, bool)}, EAGLE),
}
KNOWN: dict[tuple[str, str], str] = {}


RELEASES = base.family_releases("eagle")


@pytest.fixture(scope="session")
def eagle1_cases(tmp_path_factory):
    root = tmp_path_factory.mktemp("sglang-eagle1")
    return {name: e1.write(root / name, cfg, ts()) for name, (ts, cfg) in CASES.items()}


_RESULTS: dict[str, dict] = {}  # this matrix's harness output per release


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("version", RELEASES)
def test_check_matches_sglang_eagle1_loader(version, case, eagle1_cases, request):
    why = _env_ready(version)
    if why:
        pytest.skip(why)
    if (version, case) in KNOWN:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN[(version, case)]))
    r = base.real(version, eagle1_cases, cache=_RESULTS)[case]
    diff = base.family_case(version, eagle1_cases[case], r, "eagle", "LlamaForCausalLMEagle")
    assert not diff, f"sglang {version}, {case}:\n  " + "\n  ".join(diff)


def test_eagle1_run_rows_cover_the_matrix():
    base.family_runs_agree("eagle", SELF, len(CASES), KNOWN)
