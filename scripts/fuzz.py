"""Long fuzz run over the reader, config parser, checkers and the CLI's human reports, seeded with every
real fixture.

    python scripts/fuzz.py --seconds 600 [--seed 1]     # a long run, as many inputs as the time allows
    python scripts/fuzz.py --inputs 5000 [--seed 1]     # a fixed number of inputs (the same ones for a seed)

Each input runs in this process with a per-input time limit (SIGALRM): the library (`exercise`), then
`inspect`, `check` (all eras, and one era's tables), `convert` and eval's summary rendered as users see
them (`render_cli`, through the CLI's entry point). Prints inputs tried, how many were accepted/refused,
the CLI exit codes seen, crashes (any exception but CheckpointError, and any CLI exit other than 0/1/2,
i.e. what users would see as exit 3), hangs (time limit hit) and the peak RSS. Exit 1 on any crash or hang.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from specbridge.fuzzing import exercise, hostile_index, mutate_bytes, mutate_config, render_cli  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"  # the repository's own producer fixtures and the story


class Hang(Exception):
    pass


def _alarm(*_):
    raise Hang()


def seeds() -> list[Path]:
    """Every fixture checkpoint directory in the repository (one with a model.safetensors)."""
    return sorted({p.parent for p in FIXTURES.rglob("model.safetensors")})


def run(seconds: float | None, seed: int, per_input: float = 5.0, quiet: bool = False, cli: bool = True, inputs: int | None = None) -> dict:
    """Fuzz for `seconds`, or (`inputs`) exactly that many inputs: the same inputs for a seed whatever the
    machine's speed (what the tests use: no count may depend on how loaded the machine is)."""
    rng = random.Random(seed)
    srcs = seeds()
    # per-input limits: 5 s of CPU (a shared, loaded machine must not turn slowness into "hangs")
    # and a wall-clock backstop for anything that blocks
    signal.signal(signal.SIGPROF, _alarm)
    signal.signal(signal.SIGALRM, _alarm)
    stats = {"inputs": 0, "ok": 0, "refused": 0, "crashes": 0, "hangs": 0, "slowest_s": 0.0, "cli_runs": 0, "cli_exit": {0: 0, 1: 0, 2: 0}}
    crashes = []
    work = Path(tempfile.mkdtemp(prefix="sb-fuzz-"))
    outside = work / "outside.safetensors"
    shutil.copy(srcs[0] / "model.safetensors", outside)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t_end = time.monotonic() + (seconds if seconds is not None else float("inf"))
    try:
        while time.monotonic() < t_end and (inputs is None or stats["inputs"] < inputs):
            src = rng.choice(srcs)
            d = work / f"case{stats['inputs']}"
            shutil.copytree(src, d)
            kind = rng.random()
            if kind < 0.55:
                data = (d / "model.safetensors").read_bytes()
                for _ in range(rng.randrange(1, 3)):
                    data = mutate_bytes(data, rng)
                (d / "model.safetensors").write_bytes(data)
            elif kind < 0.85:
                cfg = json.loads((d / "config.json").read_text())
                (d / "config.json").write_text(json.dumps(mutate_config(cfg, rng)))
            else:
                hostile_index(d, rng, outside)
            stats["inputs"] += 1
            t0 = time.monotonic()
            signal.setitimer(signal.ITIMER_PROF, per_input)
            signal.setitimer(signal.ITIMER_REAL, per_input * 12)
            try:
                out = exercise(d)
                stats["ok" if out == "ok" else "refused"] += 1
                for _, code in render_cli(d, work) if cli else ():
                    stats["cli_runs"] += 1
                    stats["cli_exit"][code] += 1
            except Hang:
                stats["hangs"] += 1
                crashes.append((str(d), "hang"))
            except Exception:  # noqa: BLE001 - that is what a crash is
                stats["crashes"] += 1
                crashes.append((str(d), traceback.format_exc(limit=4)))
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
                signal.setitimer(signal.ITIMER_REAL, 0)
            stats["slowest_s"] = max(stats["slowest_s"], time.monotonic() - t0)
            if not crashes or crashes[-1][0] != str(d):
                shutil.rmtree(d, ignore_errors=True)
    finally:
        if not crashes:
            shutil.rmtree(work, ignore_errors=True)
    stats["cpu_s"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_utime, 1)
    stats["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    stats["rss_growth_mb"] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024
    stats["crash_details"] = crashes[:5]
    return stats


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=120)
    ap.add_argument("--inputs", type=int, default=None, help="a fixed number of inputs instead of --seconds")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    s = run(None if a.inputs else a.seconds, a.seed, inputs=a.inputs)
    print(json.dumps({k: v for k, v in s.items() if k != "crash_details"}, indent=2))
    for where, tb in s["crash_details"]:
        print(f"--- {where}\n{tb}")
    sys.exit(1 if s["crashes"] or s["hangs"] else 0)
