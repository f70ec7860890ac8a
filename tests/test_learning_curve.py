"""scripts/learning_curve.py: the fit recovers a known curve, and a warm-started run continues its parent's."""

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("learning_curve", ROOT / "scripts" / "learning_curve.py")
lc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lc)


def report(steps: list[int], a: float, b: float, offset: int = 0, loss_tokens: int = 16_000, seqs: int = 160) -> dict:
    def acc(s):
        return a + b * math.log2(s + offset) if s + offset else 0.0

    vals = [{"step": s, "val": {k: acc(s) for k in ("acc_0", "acc_1", "acc_2", "full_acc_1", "full_acc_2")}} for s in steps]
    return {
        "steps": steps[-1],
        "history": vals,
        "world_size": 1,
        "args": {"batch_size": 8},
        "data": {"train": {"seqs": seqs, "loss_tokens": loss_tokens}},
        "train_tokens_per_s_rank0": 100.0,
    }


def test_fit_recovers_the_curve_and_a_warm_start_continues_it(tmp_path):
    parent = report([0, 50, 100, 200], a=-0.3, b=0.08)
    child = report([0, 100, 200], a=-0.3, b=0.08, offset=200)
    pts = lc.points([parent, child])
    assert [p["step"] for p in pts] == [0, 50, 100, 200, 300, 400]  # the child's step 0 is the parent's last point
    assert pts[-1]["tokens"] == 400 * (16_000 / 20)
    a, b = lc.fit(pts, "acc_0", 50)
    assert abs(a + 0.3) < 1e-9 and abs(b - 0.08) < 1e-9
    paths = []
    for i, r in enumerate((parent, child)):
        paths.append(tmp_path / f"r{i}.json")
        paths[-1].write_text(json.dumps(r))
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts/learning_curve.py"), *map(str, paths), "--goal", "0.5", "--min-step", "50"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    # 0.5 = -0.3 + 0.08 * log2(s)  ->  s = 2**10
    assert "step ≈ 1,024" in out and "+0.080 per doubling" in out
