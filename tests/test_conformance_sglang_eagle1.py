"""EAGLE-1 conformance on SGLang's own loader: every installed SGLang release × EAGLE-1 drafters (research layout
under LlamaForCausalLMEagle, and the mutations that lose fc.bias or the whole drafter), compared with `check` as
tests/test_conformance_sglang.py compares EAGLE-3 drafters. Skipped per release when the environment is absent; the
counts are FamilyRange.runs rows in src/specbridge/engines/sglang/eagle1.py."""

from __future__ import annotations

from pathlib import Path

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


def write_cases(root: Path) -> dict[str, Path]:
    """The matrix's drafters on disk (this test's fixture, and scripts/adopt_release.py's EAGLE-1 battery)."""
    return {name: e1.write(root / name, cfg, ts()) for name, (ts, cfg) in CASES.items()}


@pytest.fixture(scope="session")
def eagle1_cases(tmp_path_factory):
    return write_cases(tmp_path_factory.mktemp("sglang-eagle1"))


_RESULTS: dict[str, dict] = {}  # this matrix's harness output per release


@pytest.mark.engine
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


@pytest.mark.engine
@pytest.mark.parametrize("version", [v for v in RELEASES if v == "0.5.23"])
def test_converted_eagle1_drafters_load_on_sglangs_loader(version, tmp_path):
    """`convert --engine sglang==0.5.23` through SGLang's own loader: the research layout (LlamaForCausalLM, which SGLang
    builds as the plain target class), a model.-prefixed save, a tied config and a drafter trained without fc.bias each
    load once converted, as check predicts; the bias-free one's fc.bias is filled from the zeros convert wrote (left
    unfilled before: the matrix's eagle-arch-no-bias)."""
    from conftest import run_cli

    why = _env_ready(version)
    if why:
        pytest.skip(why)
    sources = {
        "research": e1.write(tmp_path / "research"),
        "prefixed": e1.write(tmp_path / "prefixed", ts={"model." + k: v for k, v in e1.tensors().items()}),
        "tied": e1.write(tmp_path / "tied", e1.config(tie_word_embeddings=True)),
        "no-bias": e1.write(tmp_path / "no-bias", ts=e1.tensors(bias=False)),
    }
    after = {}
    for name, src in sources.items():
        r = run_cli("convert", src, "--engine", f"sglang=={version}", "-o", tmp_path / f"{name}-converted")
        assert r.returncode == 0, r.stdout + r.stderr
        after[name] = tmp_path / f"{name}-converted"
    got = base.harness(version, after)
    for name, path in after.items():
        assert not base.family_case(version, path, got[name], "eagle", "LlamaForCausalLMEagle"), name
    assert all(not r["errors"] for r in got.values()) and "model.fc.bias" in got["no-bias"]["filled"], got["no-bias"]["unfilled"]
    assert [p for p, _ in got["no-bias"]["tensors"]["fc.bias"]["loaded_into"]] == ["model.fc.bias"]
