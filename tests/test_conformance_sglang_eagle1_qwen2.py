"""EAGLE-1 conformance on SGLang's Qwen2 drafter class (sglang/srt/models/qwen2_eagle.py Qwen2ForCausalLMEagle: the
EAGLE-1 drafter over Qwen2's layers, whose q/k/v projections always have a bias, loaded per name by qwen2.py's
load_weights): every installed SGLang release × tiny Qwen2 EAGLE-1 drafters in the research layout (fc [H, 2H] with
and without fc.bias, q/k/v biases, layer 0 without input_layernorm; yuhuili/EAGLE-Qwen2-7B-Instruct in miniature)
and their mutations, plus the Qwen2 weights served under LlamaForCausalLMEagle (whose layers have no q/k/v bias),
compared with `check` as tests/test_conformance_sglang_eagle1.py compares the Llama class. Skipped per release when
the environment is absent; the counts are FamilyRange.runs rows in src/specbridge/engines/sglang/eagle1.py."""

from __future__ import annotations

import eagle1_fixtures as e1
import numpy as np
import pytest
import test_conformance_sglang as base
from test_conformance_sglang import _env_ready

SELF = "tests/test_conformance_sglang_eagle1_qwen2.py"
QWEN2 = {k: v for k, v in e1.config(architectures=["Qwen2ForCausalLMEagle"], model_type="qwen2").items() if k != "head_dim"}
LLAMA = e1.config(architectures=["LlamaForCausalLMEagle"])


def qwen2_tensors(qkv_bias: bool = True, **kw) -> dict[str, np.ndarray]:
    """e1.tensors plus Qwen2's q/k/v biases on every layer."""
    t = e1.tensors(**kw)
    if qkv_bias:
        rng = np.random.default_rng(1)
        for n in [n for n in t if n.endswith(("q_proj.weight", "k_proj.weight", "v_proj.weight"))]:
            t[n.removesuffix("weight") + "bias"] = (rng.standard_normal(t[n].shape[0]) * 0.02).astype(np.float32)
    return t


# name -> (tensors, config, the class SGLang builds)
CASES: dict[str, tuple] = {
    "qwen2-eagle": (qwen2_tensors, QWEN2, "Qwen2ForCausalLMEagle"),
    "qwen2-eagle-no-fc-bias": (lambda: qwen2_tensors(bias=False), QWEN2, "Qwen2ForCausalLMEagle"),
    "qwen2-eagle-no-qkv-bias": (lambda: qwen2_tensors(qkv_bias=False), QWEN2, "Qwen2ForCausalLMEagle"),
    "qwen2-eagle-no-embedding": (lambda: qwen2_tensors(embed=False), QWEN2, "Qwen2ForCausalLMEagle"),
    "qwen2-eagle-two-layers": (lambda: qwen2_tensors(n_layers=2), {**QWEN2, "num_hidden_layers": 2}, "Qwen2ForCausalLMEagle"),
    "qwen2-eagle-model-prefixed": (lambda: {"model." + k: v for k, v in qwen2_tensors().items()}, QWEN2, "Qwen2ForCausalLMEagle"),
    "qwen2-eagle-lm-head": (
        lambda: qwen2_tensors() | {"lm_head.weight": np.zeros((e1.V, e1.H), np.float32)},
        QWEN2,
        "Qwen2ForCausalLMEagle",
    ),
    "qwen2-eagle-unknown": (
        lambda: qwen2_tensors() | {"extra.weight": np.zeros((4, e1.H), np.float32)},
        QWEN2,
        "Qwen2ForCausalLMEagle",
    ),
    "qwen2-eagle-vocab-maps": (
        lambda: qwen2_tensors() | {"d2t": np.zeros(e1.V, np.int64), "t2d": np.ones(e1.V, bool)},
        QWEN2,
        "Qwen2ForCausalLMEagle",
    ),
    "qwen2-weights-llama-arch": (qwen2_tensors, LLAMA, "LlamaForCausalLMEagle"),
}
KNOWN: dict[tuple[str, str], str] = {}


RELEASES = base.family_releases("eagle")


@pytest.fixture(scope="session")
def qwen2_cases(tmp_path_factory):
    root = tmp_path_factory.mktemp("sglang-eagle1-qwen2")
    return {name: e1.write(root / name, cfg, ts()) for name, (ts, cfg, _cls) in CASES.items()}


_RESULTS: dict[str, dict] = {}  # this matrix's harness output per release


@pytest.mark.engine
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("version", RELEASES)
def test_check_matches_sglang_qwen2_eagle1_loader(version, case, qwen2_cases, request):
    why = _env_ready(version)
    if why:
        pytest.skip(why)
    if (version, case) in KNOWN:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN[(version, case)]))
    r = base.real(version, qwen2_cases, cache=_RESULTS)[case]
    diff = base.family_case(version, qwen2_cases[case], r, "eagle", CASES[case][2])
    assert not diff, f"sglang {version}, {case}:\n  " + "\n  ".join(diff)


def test_qwen2_eagle1_run_rows_cover_the_matrix():
    base.family_runs_agree("eagle", SELF, len(CASES), KNOWN)
