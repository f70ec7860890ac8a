"""Learning curve of a `specbridge train` run: validation accuracy against steps and trained tokens, a fit
per doubling of steps, and what the fit says a goal costs (steps, tokens, and hours at the run's own speed).

Why: on a small machine the accuracy goals are out of reach, and "train longer" is only useful with a number
attached. acc_j rises about linearly in log2(steps) over the runs we have, so the fit is
acc_j(s) = a_j + b_j * log2(s) over the history points after warmup, and the goal's steps are solved from it.
A warm-started run (`--init-from`) continues its parent's curve: pass the parent's report first.

    python scripts/learning_curve.py examples/smollm2-drafter/training_report.json [more reports] \
        [--goal 0.60] [--plot curve.png]
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path


def points(reports: list[dict]) -> list[dict]:
    """(cumulative step, cumulative trained tokens, acc_j) over the reports, each continuing the last."""
    out, step0, tokens0 = [], 0, 0.0
    for r in reports:
        per_step = r["train_tokens_per_step"] if "train_tokens_per_step" in r else tokens_per_step(r)
        for h in r["history"]:
            if h["step"] == 0 and out:
                continue  # a warm start's step 0 is its parent's last point
            out.append({"step": step0 + h["step"], "tokens": tokens0 + h["step"] * per_step, **h["val"]})
        step0 += r["steps"]
        tokens0 += r["steps"] * per_step
    return out


def tokens_per_step(report: dict) -> float:
    """Trained (loss) tokens per optimizer step, all ranks: the epoch's loss tokens over its steps."""
    d = report["data"]["train"]
    args = report["args"]
    world = report.get("world_size", 1)
    steps_per_epoch = max(1, d["seqs"] // (args["batch_size"] * world))
    return d["loss_tokens"] / steps_per_epoch


def fit(pts: list[dict], key: str, min_step: int) -> tuple[float, float]:
    """Least squares of acc = a + b * log2(step) over the points at or after min_step."""
    xs = [math.log2(p["step"]) for p in pts if p["step"] >= min_step]
    ys = [p[key] for p in pts if p["step"] >= min_step]
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - b * mx, b


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reports", nargs="+", type=Path)
    ap.add_argument("--goal", type=float, default=0.60, help="acc_0 goal to project")
    ap.add_argument("--min-step", type=int, default=70, help="fit from this step on (leave the warmup out)")
    ap.add_argument("--plot", type=Path)
    a = ap.parse_args()
    reports = [json.loads(p.read_text()) for p in a.reports]
    pts = points(reports)
    print("| step | trained tokens | acc_0 | acc_1 | acc_2 | full_acc_1 | full_acc_2 |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for p in pts:
        print(
            f"| {p['step']} | {p['tokens']:,.0f} | {p['acc_0']:.3f} | {p['acc_1']:.3f} | {p['acc_2']:.3f} "
            f"| {p['full_acc_1']:.3f} | {p['full_acc_2']:.3f} |"
        )
    a0, b0 = fit(pts, "acc_0", a.min_step)
    last = pts[-1]
    need = 2 ** ((a.goal - a0) / b0)
    tps = pts[-1]["tokens"] / max(pts[-1]["step"], 1)
    train_tok_s = sum(r["train_tokens_per_s_rank0"] * r.get("world_size", 1) for r in reports[-1:])
    print(f"\nfit acc_0 = {a0:.3f} + {b0:.4f} * log2(step)   (+{b0:.3f} per doubling of steps, from step {a.min_step})")
    print(
        f"acc_0 {a.goal:.2f} at step ≈ {need:,.0f} ({need / last['step']:.1f}x the {last['step']} steps so far): "
        f"≈ {need * tps / 1e6:.1f} M trained tokens; at this run's {train_tok_s:.0f} trained tokens/s that is "
        f"{need * tps / train_tok_s / 3600:.1f} h of training, on fresh data (no epoch repeated more than the runs did)"
    )
    if a.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 4))
        for key in ("acc_0", "acc_1", "acc_2"):
            ax.plot([p["step"] for p in pts if p["step"]], [p[key] for p in pts if p["step"]], "o-", label=key)
        xs = [a.min_step * 2 ** (i / 4) for i in range(int(4 * math.log2(need / a.min_step)) + 2)]
        ax.plot(xs, [a0 + b0 * math.log2(x) for x in xs], "--", color="grey", label="acc_0 fit")
        ax.axhline(a.goal, color="red", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("optimizer steps")
        ax.set_ylabel("validation accuracy")
        ax.legend()
        fig.tight_layout()
        fig.savefig(a.plot, dpi=120)
        print(f"plot: {a.plot}")


if __name__ == "__main__":
    main()
