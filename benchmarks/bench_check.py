"""Whole-process time of `specbridge inspect` / `check` on the story's 4.3 GB Kimi-K2.5 drafter shape.

Builds a sparse checkpoint with the exact names, dtypes and shapes of the story's drafter (and a 10×
larger one), then times each command as a fresh process, interleaved with two baselines measured in
the same run: `python -c pass` (interpreter start-up) and a raw header read (struct + json), the
floor for any header-only tool. Prints medians and ratios against that floor; goals: `check --json` over
every engine era ≤ 0.1 s, with `--target` (a Kimi-K2.5 config) ≤ 0.15 s, the rest ≤ 0.3 s.

    python benchmarks/bench_check.py [--runs 15] [--dir /tmp/sb-bench]
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
GOAL_S = {"check --json (all eras)": 0.1, "check --target --json": 0.15}


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


def timed(cmd: list[str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one whole process; a command that fails (exit 2/3) is not
    a measurement, so it stops the run. On a shared, loaded machine the CPU time is what the wall time
    would be on an idle one (these commands do no I/O wait: the header is in the page cache)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode not in (0, 1):  # 1: the checkpoint has findings, a normal answer
        sys.exit(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()[-500:]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--dir", type=Path, default=None)
    args = ap.parse_args()
    root = args.dir or Path(tempfile.mkdtemp(prefix="sb-bench-check-"))
    exe = [sys.executable, "-m", "specbridge.cli.entry"]
    # Measure what an installed tool costs: pip compiles bytecode at install time, so do the same
    # here even where PYTHONDONTWRITEBYTECODE is set for development.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    import compileall

    import specbridge

    compileall.compile_dir(Path(specbridge.__file__).parent, quiet=1)
    try:
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
                "check --target --json": [*exe, "check", str(ck), "--target", str(tgt), "--json"],
            }
            times = {k: [] for k in cmds}
            cpu = {k: [] for k in cmds}
            for _ in range(args.runs):  # interleaved so machine noise hits every command alike
                for k, c in cmds.items():
                    wall, used = timed(c)
                    times[k].append(wall)
                    cpu[k].append(used)
            base = statistics.median(times["raw header read"])
            print(f"{'command':34} {'median s':>9} {'min s':>7} {'× raw read':>10} {'CPU s':>6}  {'goal s':>6} (wall / CPU)")
            for k, ts in times.items():
                med, used = statistics.median(ts), statistics.median(cpu[k])
                goal = None if k in ("python -c pass", "raw header read") else GOAL_S.get(k, 0.3)
                verdict = "" if goal is None else f"{goal:6.2f} {'ok' if med <= goal else 'SLOW'} / {'ok' if used <= goal else 'SLOW'}"
                print(f"{k:34} {med:9.3f} {min(ts):7.3f} {med / base:10.2f} {used:6.3f}  {verdict}")
    finally:
        if args.dir is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
