"""vLLM's other speculative classes on real vLLM: the per-architecture EAGLE-3 classes (qwen3_eagle3.py,
deepseek_eagle3.py; method eagle3), P-EAGLE (method eagle3 with parallel_drafting) and EAGLE-1 on Llama-4
(llama4_eagle.py) and MiniCPM (minicpm_eagle.py; method eagle), each a tiny drafter of tests/zoo_fixtures.py and a mutation, on the tiny Llama target.
Compared with `check` exactly as tests/test_conformance_vllm.py compares EAGLE-3 drafters. Skipped per release when its
venv is absent; the counts are the Run rows (test tests/test_conformance_vllm_zoo.py) in src/specbridge/engines/vllm/eagle3.py and peagle.py."""

from __future__ import annotations

from pathlib import Path

import pytest
import zoo_fixtures as z
from conftest import TINY_TARGET
from test_conformance_vllm import _ready, differences, run_loader

from specbridge.engines import vllm as table
from specbridge.engines.registry import newest_in_ci
from specbridge.families.table import BY_NAME
from specbridge.view import open_view

pytestmark = pytest.mark.full_conformance  # CI (per-era) leaves it to SPECBRIDGE_CONFORMANCE=all

SELF = "tests/test_conformance_vllm_zoo.py"


YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}


def _no(cfg: dict, key: str) -> dict:
    return {k: v for k, v in cfg.items() if k != key}


# (family check reads it as, vLLM method, parallel drafting) -> case -> (tensors, config)
MATRICES: dict[tuple[str, str, bool], dict[str, tuple]] = {
    ("eagle3", "eagle3", False): {
        "qwen3-eagle3": (z.qwen3_tensors, z.qwen3_config()),
        "qwen3-no-qk-norm": (lambda: z.qwen3_tensors(qk_norm=False), z.qwen3_config()),
        "qwen3-no-head-dim": (z.qwen3_tensors, _no(z.qwen3_config(), "head_dim")),
        "deepseek-eagle3": (z.deepseek_tensors, z.deepseek_config()),
        # a yarn rope with its factor: 0.25.0 … 0.27.1 (deepseek_yarn forced) build it instead of raising KeyError 'factor'
        "deepseek-yarn": (z.deepseek_tensors, z.deepseek_config(rope_scaling=YARN)),
        "deepseek-q-lora-null": (lambda: z.deepseek_tensors(q_lora=False), z.deepseek_config(q_lora_rank=None)),
        "deepseek-v3-model-type": (z.deepseek_tensors, z.deepseek_config(model_type="deepseek_v3")),
    },
    ("peagle", "eagle3", True): {
        "peagle-llama": (z.peagle_tensors, z.peagle_config()),
        "peagle-no-mask-hidden": (lambda: z.peagle_tensors(mask_hidden=False), z.peagle_config()),
    },
    ("eagle", "eagle", False): {
        "llama4-eagle1": (z.llama4_tensors, z.llama4_config()),
        "llama4-no-moe-layers": (z.llama4_tensors, _no(z.llama4_config(), "moe_layers")),
        "llama4-moe-step-default": (z.llama4_tensors, _no(z.llama4_config(), "interleave_moe_layer_step")),
        "minicpm-eagle1": (z.minicpm_tensors, z.minicpm_config()),
        "minicpm-research-names": (lambda: z.minicpm_tensors(prefix=""), z.minicpm_config()),
        "minicpm-no-dim-model-base": (z.minicpm_tensors, _no(z.minicpm_config(), "dim_model_base")),
        "minicpm-remote-model-type": (z.minicpm_tensors, z.minicpm_config(model_type="minicpm")),
    },
}
CASES = [(key, case) for key, m in MATRICES.items() for case in m]
KNOWN: dict[tuple[str, str], str] = {
    # load_weights fills every parameter and drops nothing (the harness's records agree with check), then vLLM's CPU MLA
    # backend packs W_UK for its kernel (convert_weight_packed) and refuses float32, the harness's dtype
    **dict.fromkeys(
        [("0.29.0", "deepseek-eagle3"), ("0.32.0", "deepseek-eagle3"), ("0.29.0", "deepseek-yarn"), ("0.32.0", "deepseek-yarn")],
        "CPU MLA weight packing needs bf16/fp16: RuntimeError after a load check agrees with",
    ),
    # with a yarn factor 0.27.0 builds the forced deepseek_yarn rope (deepseek-eagle3, without one, raises KeyError 'factor'
    # as check predicts), then its CPU attention backend refuses MLA before any weight is loaded
    ("0.27.0", "deepseek-yarn"): "past the rope: NotImplementedError 'MLA is not supported on CPU' (a CPU limit of 0.27.0)",
    # EagleLlama4ForCausalLM.load_weights permutes q/k for rotary (permute_qk_weight_for_rotary) into new tensors: the
    # harness sees q_proj/k_proj as copied nowhere and their bytes changed; names, shapes, missing and sharing agree
    **dict.fromkeys(
        # 0.29.0: the same llama4_eagle.py loader as 0.27.0 and 0.32.0 (not run there as a Llama-4 case)
        [("0.27.0", "llama4-eagle1"), ("0.29.0", "llama4-eagle1"), ("0.32.0", "llama4-eagle1")],
        "q/k rotary permutation makes new tensors: the harness reads them as dropped",
    ),
}
EAGLE3_KEY, PEAGLE_KEY = ("eagle3", "eagle3", False), ("peagle", "eagle3", True)


def _row_matrix(row) -> tuple | None:
    """Where each matrix's runs are recorded: the EAGLE-3 era that models the per-architecture classes, P-EAGLE's ranges
    (the Llama-4 EAGLE-1 cases have no row of their own: tests/test_conformance_vllm_eagle1.py's rows hold its matrix)."""
    if row.family == "peagle":
        return PEAGLE_KEY
    if row.family == "eagle3" and "Eagle3Qwen3ForCausalLM" in row.classes:
        return EAGLE3_KEY
    return None


def _releases(key: tuple) -> list[str]:
    """The releases a matrix runs on: those its rows record; the Llama-4 cases ride along with every zoo release."""
    rows = [row for row in (*table.FAMILY_RANGES, *table.ERAS) if _row_matrix(row) is not None]
    own = [row for row in rows if _row_matrix(row) == key] or rows
    return newest_in_ci(sorted({r.release for row in own for r in row.runs if r.test == SELF}))


PARAMS = [(rel, key, case) for key, m in MATRICES.items() for case in m for rel in _releases(key)]


@pytest.fixture(scope="session")
def zoo_cases(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("zoo-conformance")
    return {c: z.write(root / c, cfg, ts()) for m in MATRICES.values() for c, (ts, cfg) in m.items()}


_REAL: dict[tuple[str, tuple], dict] = {}


def real(release: str, key: tuple, cases: dict[str, Path], tmp_root: Path) -> dict[str, dict]:
    if (release, key) not in _REAL:
        mine = {c: cases[c] for c in MATRICES[key]}
        extra = ("--parallel-drafting",) if key[2] else ()
        _REAL[(release, key)] = run_loader(release, mine, tmp_root, method=key[1], arch="llama", extra=extra)
    return _REAL[(release, key)]


def predict(path: Path, release: str, family: str) -> dict:
    from specbridge.checkpoint.target import open_target
    from specbridge.rules.check import check

    (res,) = check(open_view(path), f"vllm=={release}", target=open_target(TINY_TARGET), family=BY_NAME[family])
    return {**res.to_json(), "kv_error": []}


@pytest.mark.engine
@pytest.mark.parametrize("release, key, case", PARAMS, ids=[f"{r}-{c}" for r, _, c in PARAMS])
def test_check_matches_real_vllm_zoo(release, key, case, zoo_cases, tmp_path_factory, request):
    why = _ready(release)
    if why:
        pytest.skip(why)
    if (release, case) in KNOWN:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN[(release, case)]))
    got = real(release, key, zoo_cases, tmp_path_factory.getbasetemp())[case]
    pred = predict(zoo_cases[case], release, key[0])
    diff = differences(zoo_cases[case], got, pred)
    if got["raised"] is None and got.get("draft_class") != pred["class"]:
        diff.append(f"class: vLLM {got.get('draft_class')}, check {pred['class']}")
    assert not diff, f"vllm {release}, {case}:\n  " + "\n  ".join(diff)


def test_zoo_run_rows_cover_their_matrix():
    rows = [row for row in (*table.FAMILY_RANGES, *table.ERAS) for run in row.runs if run.test == SELF]
    for row in rows:
        key = _row_matrix(row)
        assert key is not None, f"{row}: a run of {SELF} recorded where no zoo matrix belongs"
        for run in (r for r in row.runs if r.test == SELF):
            known = sum(1 for (v, c) in KNOWN if v == run.release and c in MATRICES[key])
            assert run.cases == len(MATRICES[key]) and run.agreed == run.cases - known, run
