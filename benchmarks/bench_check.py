"""Whole-process time of `specbridge inspect` / `check` on the story's 4.3 GB Kimi-K2.5 drafter shape, the 689 GB
DeepSeek-V3-shaped target that carries an MTP head, and what a check costs as the engine tables grow.

Builds a sparse checkpoint with the exact names, dtypes and shapes of the story's drafter (and a 10×
larger one), then times each command as a fresh process, interleaved with two baselines measured in
the same run: `python -c pass` (interpreter start-up) and a raw header read (struct + json), the
floor for any header-only tool. Prints medians and ratios against that floor. Goals, as ratios to the
raw header read of the same run: `check --engine all` ≤ 4×, a single engine ≤ 3×; and `check` of the
DeepSeek-V3-shaped target (benchmarks/bench_mtp_index.py builds it: 163 shard headers over sparse holes)
≤ 0.5 s. Nothing is asserted: a shared, loaded machine reports what it measured (`uptime` is printed with it;
the CPU column is what the wall would be on an idle machine).

`--against SRC` times the same CLI commands from another source tree too (PYTHONPATH=SRC, e.g. a worktree
at an older commit), interleaved with this one's, so before and after are measured under the same load.

`--eras` times a check in one process while the engine tables hold 1×, 2× and 4× their rows (copies of every
EAGLE-3 era and family range registered under fake releases, 100 majors up per copy): a check of one engine
release stays flat (goal: the 4× time at most 1.25× the 1× time); `--engine all` answers every era, so it grows with them.

Every goal's ratio and whether it is met is said again at the end of the run, together (printed, never asserted).
The CLI runs from compiled bytecode, as an installed wheel has it, even where PYTHONDONTWRITEBYTECODE is set.

    python benchmarks/bench_check.py [--runs 15] [--dir /tmp/sb-bench] [--against /path/to/src] [--eras] [--no-mtp]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

H, V, VD, I, HT = 7168, 163840, 32000, 18432, 7168
KIMI = {
    "d2t": ("I64", [VD]),
    "t2d": ("BOOL", [V]),
    "embed_tokens.weight": ("BF16", [V, H]),
    "fc.weight": ("BF16", [H, 3 * HT]),
    "lm_head.weight": ("BF16", [VD, H]),
    "norm.weight": ("BF16", [H]),
    "layers.0.self_attn.q_proj.weight": ("BF16", [7168, 2 * H]),
    "layers.0.self_attn.k_proj.weight": ("BF16", [1024, 2 * H]),
    "layers.0.self_attn.v_proj.weight": ("BF16", [1024, 2 * H]),
    "layers.0.self_attn.o_proj.weight": ("BF16", [H, 7168]),
    "layers.0.mlp.gate_proj.weight": ("BF16", [I, H]),
    "layers.0.mlp.up_proj.weight": ("BF16", [I, H]),
    "layers.0.mlp.down_proj.weight": ("BF16", [H, I]),
    "layers.0.input_layernorm.weight": ("BF16", [H]),
    "layers.0.hidden_norm.weight": ("BF16", [H]),
    "layers.0.post_attention_layernorm.weight": ("BF16", [H]),
}
SIZE = {"BF16": 2, "I64": 8, "BOOL": 1}
KIMI_TARGET = {  # moonshotai/Kimi-K2.5's config.json, the fields check reads
    "architectures": ["KimiK25ForConditionalGeneration"],
    "model_type": "kimi_k25",
    "text_config": {
        "model_type": "deepseek_v3",
        "hidden_size": HT,
        "num_hidden_layers": 61,
        "vocab_size": V,
        "max_position_embeddings": 262144,
        "rope_theta": 50000.0,
        "torch_dtype": "bfloat16",
    },
}
# goals as ratios to the raw header read of the same run (wall, median); the MTP target's in seconds
GOAL_RATIO = {
    "check --json (all eras)": 4.0,
    "check (table, all eras)": 4.0,
    "check -e sglang==0.5.11 --json": 3.0,
    "check -e vllm (table)": 3.0,
}
MTP_GOAL_S = 0.5
FLAT_GOAL = 1.25  # --eras: a check of one engine release with the tables 4× over takes at most this × its 1× time
# every goal's line, said again together at the end of the run (met or not: printed, never asserted)
GOALS: list[str] = []


def speculators_config(scale: int) -> dict:
    return {
        "architectures": ["Eagle3DraftModel"],
        "draft_vocab_size": VD * scale,
        "eagle_aux_hidden_state_layer_ids": [2, 30, 58],
        "norm_before_residual": True,
        "speculators_config": {
            "algorithm": "eagle3",
            "proposal_methods": [{"proposal_type": "greedy", "speculative_tokens": 3}],
            "verifier": {"architectures": ["KimiK25ForConditionalGeneration"], "name_or_path": "moonshotai/Kimi-K2.5"},
        },
        "speculators_model_type": "eagle3",
        "target_hidden_size": None,
        "transformer_layer_config": {
            "model_type": "llama",
            "hidden_size": H,
            "num_attention_heads": 56,
            "num_key_value_heads": 8,
            "head_dim": 128,
            "intermediate_size": I * scale,
            "num_hidden_layers": 1,
            "vocab_size": V * scale,
            "rms_norm_eps": 1e-5,
        },
    }


def build(root: Path, scale: int) -> Path:
    """Sparse file: a real header, data section left as a hole (the tools never read it)."""
    d = root / f"kimi-drafter-x{scale}"
    d.mkdir(parents=True, exist_ok=True)
    header, off = {"__metadata__": {"format": "pt"}}, 0
    for name, (dt, shape) in KIMI.items():
        shape = list(shape)
        if scale > 1 and name not in ("fc.weight",) and not name.endswith("norm.weight") and dt == "BF16":
            # 10x: scale vocab and MLP width; attention stays consistent with the config
            if name in ("embed_tokens.weight", "lm_head.weight") or "gate_proj" in name or "up_proj" in name:
                shape[0] *= scale
            elif "down_proj" in name:
                shape[1] *= scale
        if name in ("d2t", "t2d"):
            shape[0] *= scale
        n = SIZE[dt]
        for s in shape:
            n *= s
        header[name] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + n]}
        off += n
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(d / "model.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        f.truncate(8 + len(h) + off)
    (d / "config.json").write_text(json.dumps(speculators_config(scale), indent=2))
    return d


RAW_READ = "import struct,json,sys;f=open(sys.argv[1],'rb');n=struct.unpack('<Q',f.read(8))[0];h=json.loads(f.read(n));print(len(h))"


def target_config(root: Path, scale: int) -> Path:
    d = root / f"kimi-k2.5-x{scale}"
    d.mkdir(parents=True, exist_ok=True)
    cfg = json.loads(json.dumps(KIMI_TARGET))
    cfg["text_config"]["vocab_size"] *= scale
    (d / "config.json").write_text(json.dumps(cfg))
    return d


def timed(cmd: list[str], env: dict | None = None) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one whole process; a command that fails (exit 2/3) is not
    a measurement, so it stops the run. On a shared, loaded machine the CPU time is what the wall time
    would be on an idle one (these commands do no I/O wait: the header is in the page cache)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    elapsed = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode not in (0, 1):  # 1: the checkpoint has findings, a normal answer
        sys.exit(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()[-500:]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def compiled(src: Path) -> None:
    """Bytecode as an installed wheel has it (pip compiles at install), even where PYTHONDONTWRITEBYTECODE is set."""
    import compileall

    compileall.compile_dir(src, quiet=1)


def src_env(src: Path | None) -> dict | None:
    """The environment that runs the CLI from another source tree (its `specbridge` package first on the path)."""
    if src is None:
        return None
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}


def measure(cmds: dict[str, tuple[list[str], dict | None]], runs: int) -> tuple[dict, dict]:
    """Each command `runs` times, interleaved so machine noise hits every command alike: (wall, CPU) lists."""
    wall: dict[str, list[float]] = {k: [] for k in cmds}
    cpu: dict[str, list[float]] = {k: [] for k in cmds}
    for _ in range(runs):
        for k, (c, env) in cmds.items():
            w, u = timed(c, env)
            wall[k].append(w)
            cpu[k].append(u)
    return wall, cpu


def goal_of(k: str) -> str:
    """The goal a row is held to ('' for the baselines and rows with none)."""
    name = k.removesuffix(" [against]")
    return f"≤ {GOAL_RATIO[name]:.0f}×" if name in GOAL_RATIO else ""


def print_rows(wall: dict, cpu: dict, base: str, label: str = "") -> None:
    """Medians and ratios to the baseline row `base` (wall to wall, CPU to CPU), with each ratio goal met or not."""
    bw, bc = statistics.median(wall[base]), statistics.median(cpu[base])
    print(f"{'command':44} {'median s':>9} {'min s':>7} {'× raw':>6} {'CPU s':>6} {'CPU × raw':>9}  goal (wall / CPU)")
    for k, ts in wall.items():
        med, used = statistics.median(ts), statistics.median(cpu[k])
        goal = goal_of(k)
        verdict = ""
        if goal:
            limit = float(goal[2:-1])
            verdict = f"{goal} {'ok' if med / bw <= limit else 'over'} / {'ok' if used / bc <= limit else 'over'}"
        print(f"{k:44} {med:9.3f} {min(ts):7.3f} {med / bw:6.2f} {used:6.3f} {used / bc:9.2f}  {verdict}")
        if goal:
            GOALS.append(f"{label}{k}: {med / bw:.2f}× wall, {used / bc:.2f}× CPU the raw header read; goal {verdict}")


def with_against(cmds: dict, against: Path | None) -> dict:
    """The CLI rows again, run from the `--against` source tree (the baselines need no twin)."""
    out = {k: (c, None) for k, c in cmds.items()}
    if against is not None:
        out |= {f"{k} [against]": (c, src_env(against)) for k, c in cmds.items() if "specbridge.cli.entry" in c}
    return out


def drafter_rows(root: Path, runs: int, against: Path | None) -> None:
    exe = [sys.executable, "-m", "specbridge.cli.entry"]
    for scale in (1, 10):
        ck = build(root, scale)
        tgt = target_config(root, scale)
        st = os.stat(ck / "model.safetensors")
        print(f"\n{ck.name}: {st.st_size / 1e9:.2f} GB apparent, {st.st_blocks * 512 / 1e6:.2f} MB on disk")
        cmds = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "raw header read": [sys.executable, "-c", RAW_READ, str(ck / "model.safetensors")],
            "inspect --json": [*exe, "inspect", str(ck), "--json"],
            "inspect (table)": [*exe, "inspect", str(ck)],
            "check -e sglang==0.5.11 --json": [*exe, "check", str(ck), "-e", "sglang==0.5.11", "--json"],
            "check -e vllm (table)": [*exe, "check", str(ck), "-e", "vllm"],
            "check --json (all eras)": [*exe, "check", str(ck), "--json"],
            "check (table, all eras)": [*exe, "check", str(ck)],
            "check --target --json": [*exe, "check", str(ck), "--target", str(tgt), "--json"],
        }
        wall, cpu = measure(with_against(cmds, against), runs)
        print_rows(wall, cpu, "raw header read", f"{ck.name}, ")


def mtp_rows(root: Path, runs: int, against: Path | None) -> None:
    """`check` of the 689 GB DeepSeek-V3-shaped target (its MTP head found from the index, 163 shards)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_mtp_index import RAW_INDEX
    from bench_mtp_index import build as build_target

    d = root / "deepseek-v3"
    if not (d / "config.json").exists():
        build_target(d)
    apparent = sum(f.stat().st_size for f in d.iterdir())
    print(f"\ndeepseek-v3 target with its MTP head: {apparent / 1e9:.0f} GB apparent, {len(list(d.glob('*.safetensors')))} shards")
    exe = [sys.executable, "-m", "specbridge.cli.entry"]
    cmds = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "raw read of the index json": [sys.executable, "-c", RAW_INDEX, str(d)],
        "check TARGET (table)": [*exe, "check", str(d)],
        "check TARGET --json": [*exe, "check", str(d), "--json"],
        "check TARGET -e vllm==0.32.0": [*exe, "check", str(d), "-e", "vllm==0.32.0"],
    }
    wall, cpu = measure(with_against(cmds, against), runs)
    print_rows(wall, cpu, "raw read of the index json")
    for k in wall:
        if k.startswith("check TARGET"):
            med, used = statistics.median(wall[k]), statistics.median(cpu[k])
            line = f"{k}: goal ≤ {MTP_GOAL_S} s: wall {med:.3f} s {'ok' if med <= MTP_GOAL_S else 'over'}, CPU {used:.3f} s {'ok' if used <= MTP_GOAL_S else 'over'}"
            print(f"  {line}")
            GOALS.append(line)


ERAS_CHILD = "--eras-child"


def bump(version: str | None, by: int) -> str | None:
    """`version` `by` majors up ('0.5.11' -> '100.5.11' for by=100): a release no table models."""
    import re

    return None if version is None else re.sub(r"^(v?)(\d+)", lambda m: f"{m[1]}{int(m[2]) + by}", version.strip())


def register_copies(times: int) -> None:
    """The engine tables with `times` copies of every EAGLE-3 era, family range and draft-model range, each copy under
    fake releases (100 majors up per copy), registered in this process as a newly read engine release would be."""
    from specbridge.engines import registry
    from specbridge.record import replace

    def copies(rows, fields):
        out = list(rows)
        for k in range(1, times):
            out += [replace(r, **{f: bump_all(getattr(r, f), 100 * k) for f in fields}) for r in rows]
        return tuple(out)

    def bump_all(value, by):
        return tuple(bump(v, by) for v in value) if isinstance(value, tuple) else bump(value, by)

    for name in list(registry.ENGINES):
        registry.ENGINES[name] = copies(registry.ENGINES[name], ("first", "last", "versions_read", "placeholders"))
    for name in list(registry.FAMILY_RANGES):
        registry.FAMILY_RANGES[name] = copies(registry.FAMILY_RANGES[name], ("first", "last", "versions_read"))
    for name in list(registry.DRAFT_MODEL):
        registry.DRAFT_MODEL[name] = copies(registry.DRAFT_MODEL[name], ("first", "last", "versions_read"))


def eras_child(times: int, runs: int, argv: list[str]) -> None:
    """In this process: the tables `times` over, one untimed check (imports, first use), then `runs` timed checks
    of `argv` (check's own arguments); prints the median seconds and the eras the tables hold."""
    import contextlib
    import io

    from specbridge.cli.commands import check_cmd
    from specbridge.engines.registry import ENGINES, FAMILY_RANGES

    register_copies(times)
    path, engines = Path(argv[0]), argv[1:]
    ts = []
    for _ in range(runs + 1):
        t0 = time.process_time()
        with contextlib.redirect_stdout(io.StringIO()):
            check_cmd(path, engines or None, as_json=True)
        ts.append(time.process_time() - t0)
    rows = sum(len(e) for e in ENGINES.values()) + sum(len(r) for r in FAMILY_RANGES.values())
    print(json.dumps({"median_s": statistics.median(ts[1:]), "rows": rows}))


def eras_rows(root: Path, runs: int) -> None:
    """A check's CPU time in one process as the tables grow: flat for one engine release, proportional for all."""
    ck = build(root, 1)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_mtp_index import build as build_target

    tgt = root / "deepseek-v3"
    if not (tgt / "config.json").exists():
        build_target(tgt)
    cases = {
        "EAGLE-3 drafter -e sglang==0.5.11": [str(ck), "sglang==0.5.11"],
        "EAGLE-3 drafter -e vllm==0.32.0": [str(ck), "vllm==0.32.0"],
        "MTP target -e vllm==0.32.0": [str(tgt), "vllm==0.32.0"],
        "EAGLE-3 drafter --engine all": [str(ck)],
    }
    print("\nin one process, CPU s of one check (median) as the engine tables hold 1×, 2×, 4× their rows:")
    print(f"{'check':38} {'1×':>8} {'2×':>8} {'4×':>8}  {'4× / 1×':>7}  rows")
    for label, argv in cases.items():
        got = []
        for times in (1, 2, 4):
            r = subprocess.run([sys.executable, __file__, ERAS_CHILD, str(times), str(runs), *argv], capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"{label} ×{times}: exit {r.returncode}: {r.stderr.strip()[-500:]}")
            got.append(json.loads(r.stdout.strip().splitlines()[-1]))
        meds = [g["median_s"] for g in got]
        print(f"{label:38} {meds[0]:8.4f} {meds[1]:8.4f} {meds[2]:8.4f}  {meds[2] / meds[0]:7.2f}  {'/'.join(str(g['rows']) for g in got)}")
        if "--engine all" not in label:  # `--engine all` answers every era: it grows with them by design
            flat = meds[2] / meds[0] <= FLAT_GOAL
            GOALS.append(f"eras 4× / 1×, {label}: {meds[2] / meds[0]:.2f}; goal flat (≤ {FLAT_GOAL}) {'ok' if flat else 'over'}")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == ERAS_CHILD:
        eras_child(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--dir", type=Path, default=None)
    ap.add_argument("--against", type=Path, default=None, help="another source tree (its src/), timed interleaved with this one")
    ap.add_argument("--eras", action="store_true", help="also time a check in one process with the tables doubled and quadrupled")
    ap.add_argument("--no-mtp", action="store_true", help="skip the DeepSeek-V3-shaped MTP target")
    args = ap.parse_args()
    root = args.dir or Path(tempfile.mkdtemp(prefix="sb-bench-check-"))
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    import specbridge

    compiled(Path(specbridge.__file__).parent)
    if args.against is not None:
        compiled(args.against / "specbridge")
    print(f"uptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    try:
        drafter_rows(root, args.runs, args.against)
        if not args.no_mtp:
            mtp_rows(root, max(3, args.runs // 3), args.against)
        if args.eras:
            eras_rows(root, max(3, args.runs // 3))
        print("\ngoals (this tree's rows; [against] rows are the other tree's):")
        for line in GOALS:
            print(f"  {line}")
        print(f"uptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    finally:
        if args.dir is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
