"""Whole-process time and bytes of `specbridge inspect TARGET --json` on a DeepSeek-V3-shaped target: 61
decoder layers (3 dense, 58 MoE with 256 experts), FP8 weights with 128×128 block scales (weight_scale_inv),
and layer 61 the MTP head (embed_tokens, enorm, hnorm, eh_proj, shared_head.norm/head and a full MoE block):
about 92 k tensors over 163 shards, 690 GB apparent, a few MB on disk (every shard is a real safetensors
header over a sparse hole).

Each command runs as a fresh process, interleaved with baselines measured in the same run: `python -c pass`
(interpreter start-up), a raw read of the index json (the floor for an index-only answer) and a raw read of
all 163 shard headers (what a reader that opens every shard pays). Then the same inspect through the local Hub
stand-in (tests/hubserver.py) with a cold HF cache each run (and again warm), counting the bytes it served, against
a raw GET of the whole index json from the stand-in. Each row: wall time (median and min of --runs), the child's CPU
time (user + sys; on a loaded box the wall is mostly waiting), bytes read, shard headers read, and ratios to its
baseline. Goals (issue #24): well under 1 s locally, under 2 MB over the Hub.

    python benchmarks/bench_mtp_index.py [--runs 7] [--dir /tmp/sb-mtp]
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
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
H, VOCAB, Q_LORA, KV_LORA, HEADS, NOPE, ROPE, V_HEAD = 7168, 129280, 1536, 512, 128, 128, 64, 128
DENSE_I, MOE_I, BLOCK = 18432, 2048, 128


def deepseek_v3_config(layers: int = 61, experts: int = 256, dense: int = 3) -> dict:
    """deepseek-ai/DeepSeek-V3's config.json (the fields a loader reads)."""
    return {
        "architectures": ["DeepseekV3ForCausalLM"],
        "model_type": "deepseek_v3",
        "hidden_size": H,
        "intermediate_size": DENSE_I,
        "moe_intermediate_size": MOE_I,
        "num_hidden_layers": layers,
        "num_nextn_predict_layers": 1,
        "n_routed_experts": experts,
        "n_shared_experts": 1,
        "num_experts_per_tok": 8,
        "first_k_dense_replace": dense,
        "moe_layer_freq": 1,
        "num_attention_heads": HEADS,
        "num_key_value_heads": HEADS,
        "q_lora_rank": Q_LORA,
        "kv_lora_rank": KV_LORA,
        "qk_nope_head_dim": NOPE,
        "qk_rope_head_dim": ROPE,
        "v_head_dim": V_HEAD,
        "vocab_size": VOCAB,
        "max_position_embeddings": 163840,
        "rms_norm_eps": 1e-6,
        "rope_theta": 10000,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8", "weight_block_size": [BLOCK, BLOCK]},
    }


def _fp8(name: str, rows: int, cols: int) -> list[tuple[str, str, list[int]]]:
    blocks = [-(-rows // BLOCK), -(-cols // BLOCK)]
    return [(f"{name}.weight", "F8_E4M3", [rows, cols]), (f"{name}.weight_scale_inv", "F32", blocks)]


def layer_tensors(i: int, experts: int, dense: int) -> list[tuple[str, str, list[int]]]:
    p = f"model.layers.{i}."
    out = [(p + "input_layernorm.weight", "BF16", [H]), (p + "post_attention_layernorm.weight", "BF16", [H])]
    a = p + "self_attn."
    out += _fp8(a + "q_a_proj", Q_LORA, H) + [(a + "q_a_layernorm.weight", "BF16", [Q_LORA])]
    out += _fp8(a + "q_b_proj", HEADS * (NOPE + ROPE), Q_LORA)
    out += _fp8(a + "kv_a_proj_with_mqa", KV_LORA + ROPE, H) + [(a + "kv_a_layernorm.weight", "BF16", [KV_LORA])]
    out += _fp8(a + "kv_b_proj", HEADS * (NOPE + V_HEAD), KV_LORA) + _fp8(a + "o_proj", H, HEADS * V_HEAD)
    m = p + "mlp."
    if i < dense:
        return out + _fp8(m + "gate_proj", DENSE_I, H) + _fp8(m + "up_proj", DENSE_I, H) + _fp8(m + "down_proj", H, DENSE_I)
    out += [(m + "gate.weight", "BF16", [experts, H]), (m + "gate.e_score_correction_bias", "F32", [experts])]
    for e in [*map(str, range(experts)), "shared"]:
        q = m + ("shared_experts." if e == "shared" else f"experts.{e}.")
        out += _fp8(q + "gate_proj", MOE_I, H) + _fp8(q + "up_proj", MOE_I, H) + _fp8(q + "down_proj", H, MOE_I)
    return out


def target_tensors(layers: int = 61, experts: int = 256, dense: int = 3, mtp_layers: int = 1) -> list[tuple[str, str, list[int]]]:
    """Every tensor of the target, in the order the shards hold them; the MTP layers come last."""
    out = [("model.embed_tokens.weight", "BF16", [VOCAB, H])]
    for i in range(layers):
        out += layer_tensors(i, experts, dense)
    out += [("model.norm.weight", "BF16", [H]), ("lm_head.weight", "BF16", [VOCAB, H])]
    for i in range(layers, layers + mtp_layers):
        p = f"model.layers.{i}."
        out += [(p + "embed_tokens.weight", "BF16", [VOCAB, H]), (p + "enorm.weight", "BF16", [H]), (p + "hnorm.weight", "BF16", [H])]
        out += [(p + "eh_proj.weight", "BF16", [H, 2 * H]), (p + "shared_head.norm.weight", "BF16", [H])]
        out += [(p + "shared_head.head.weight", "BF16", [VOCAB, H])] + layer_tensors(i, experts, dense)
    return out


def write_shard(path: Path, tensors: list[tuple[str, str, list[int]]]) -> int:
    """A real safetensors header; the data section a sparse hole of the right size (nothing written)."""
    from specbridge.checkpoint.write import write_header_only

    return write_header_only(path, tensors, metadata={"format": "pt"})


def build(root: Path, layers: int = 61, experts: int = 256, dense: int = 3, shards: int = 163, drop: tuple[str, ...] = ()) -> Path:
    """The target directory: config.json, model.safetensors.index.json (as transformers writes it) and the
    shards. `drop`: name prefixes left out of the checkpoint (a re-quantization that lost the head)."""
    root.mkdir(parents=True, exist_ok=True)
    tensors = [t for t in target_tensors(layers, experts, dense) if not t[0].startswith(drop or ("\0",))]
    per = -(-len(tensors) // shards)
    wmap, total = {}, 0
    for k in range(shards):
        part = tensors[k * per : (k + 1) * per]
        name = f"model-{k + 1:05d}-of-{shards:06d}.safetensors"
        total += write_shard(root / name, part)
        wmap |= dict.fromkeys((t[0] for t in part), name)
    (root / "config.json").write_text(json.dumps(deepseek_v3_config(layers, experts, dense), indent=2))
    index = {"metadata": {"total_size": total}, "weight_map": wmap}
    (root / "model.safetensors.index.json").write_text(json.dumps(index, indent=2, sort_keys=True))
    return root


RAW_ALL = (
    "import glob,json,struct,sys\n"
    "for p in sorted(glob.glob(sys.argv[1]+'/*.safetensors')):\n"
    "  f=open(p,'rb');n=struct.unpack('<Q',f.read(8))[0];json.loads(f.read(n))"
)
RAW_INDEX = "import json,sys;print(len(json.load(open(sys.argv[1]+'/model.safetensors.index.json'))['weight_map']))"


def timed(cmd: list[str], env: dict | None = None) -> tuple[float, float, str]:
    """(wall s, CPU s of the child: user + sys, stdout). On a loaded box the wall is mostly waiting for a core."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()[-500:]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), r.stdout


def hub_env(url: str, cache: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_"))}
    return env | {"HF_ENDPOINT": url, "HF_HUB_CACHE": str(cache), "HF_HUB_DISABLE_TELEMETRY": "1"}


RAW_GET = "import sys,urllib.request;print(len(urllib.request.urlopen(sys.argv[1]).read()))"


@dataclass
class Row:
    """One command's runs: wall and CPU seconds, and per run the bytes and shard headers it read."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    read: list[int] = field(default_factory=list)
    headers: list[int] = field(default_factory=list)

    def add(self, wall: float, cpu: float, read: int, headers: int) -> None:
        self.wall.append(wall)
        self.cpu.append(cpu)
        self.read.append(read)
        self.headers.append(headers)


def header_bytes(d: Path) -> int:
    total = 0
    for p in d.glob("*.safetensors"):
        with open(p, "rb") as f:
            total += 8 + struct.unpack("<Q", f.read(8))[0]
    return total


def print_table(rows: dict[str, Row], baselines: dict[str, str]) -> None:
    med = statistics.median
    print(f"\n{'command':50} {'wall s':>7} {'min s':>6} {'cpu s':>6} {'bytes read':>11} {'headers':>7}  ratios (wall, bytes)")
    for k, r in rows.items():
        ratios = []
        base = baselines.get(k)
        if base:
            b = rows[base]
            ratios.append(f"{med(r.wall) / med(b.wall):.2f}× wall of {base!r}")
            if med(b.read):
                ratios.append(f"{med(r.read) / med(b.read):.3f}× its bytes")
        print(
            f"{k:50} {med(r.wall):7.3f} {min(r.wall):6.3f} {med(r.cpu):6.3f} {med(r.read):11.0f} {med(r.headers):7.0f}  {'; '.join(ratios)}"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--dir", type=Path, default=None)
    args = ap.parse_args()
    root = args.dir or Path(tempfile.mkdtemp(prefix="sb-bench-mtp-"))
    exe = [sys.executable, "-m", "specbridge.cli.entry"]
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # measure what an installed tool costs (pip compiles bytecode)
    import compileall

    import specbridge

    compileall.compile_dir(Path(specbridge.__file__).parent, quiet=1)
    sys.path.insert(0, str(ROOT / "tests"))
    from hubserver import FakeHub, make_repo

    try:
        t0 = time.perf_counter()
        d = build(root / "deepseek-v3")
        files = list(d.iterdir())
        apparent = sum(f.stat().st_size for f in files)
        on_disk = sum(f.stat().st_blocks * 512 for f in files)
        index_bytes = (d / "model.safetensors.index.json").stat().st_size
        n = len(json.loads((d / "model.safetensors.index.json").read_text())["weight_map"])
        shards = len(files) - 2
        print(f"built in {time.perf_counter() - t0:.1f} s: {n} tensors in {shards} shards, {apparent / 1e9:.0f} GB apparent, ")
        print(f"{on_disk / 1e6:.1f} MB on disk; the index json is {index_bytes / 1e6:.2f} MB")
        all_headers = header_bytes(d)
        py, raw_index, raw_all = "python -c pass", "raw read of the index json", f"raw read of all {shards} headers"
        inspect, hub_raw = "inspect TARGET --json", "raw GET of the index json (Hub)"
        hub_cold, hub_warm = "inspect org/deepseek-v3 --json (Hub, cold cache)", "inspect org/deepseek-v3 --json (Hub, warm)"
        local = {
            py: ([sys.executable, "-c", "pass"], 0, 0),
            raw_index: ([sys.executable, "-c", RAW_INDEX, str(d)], index_bytes, 0),
            raw_all: ([sys.executable, "-c", RAW_ALL, str(d)], all_headers, shards),
        }
        rows = {k: Row() for k in (py, raw_index, raw_all, inspect, hub_raw, hub_cold, hub_warm)}
        report: dict = {}
        hub_report: dict = {}
        with FakeHub({"org/deepseek-v3": make_repo(d)}) as hub:
            repo = hub.repos["org/deepseek-v3"]
            index_url = f"{hub.url}/org/deepseek-v3/resolve/{repo.commit}/model.safetensors.index.json"
            for run in range(args.runs):  # interleaved so machine noise hits every command alike
                for k, (c, nbytes, nheaders) in local.items():
                    wall, cpu, _ = timed(c)
                    rows[k].add(wall, cpu, nbytes, nheaders)
                wall, cpu, out = timed([*exe, "inspect", str(d), "--json"])
                report = json.loads(out)
                rows[inspect].add(wall, cpu, report["mtp"]["bytes_read"], report["mtp"]["headers_read"])
                hub.stats.reset()
                wall, cpu, _ = timed([sys.executable, "-c", RAW_GET, index_url])
                rows[hub_raw].add(wall, cpu, hub.stats.body_bytes, 0)
                cache = root / f"hf-cache-{run}"
                hub.stats.reset()
                wall, cpu, out = timed([*exe, "inspect", "org/deepseek-v3", "--json"], hub_env(hub.url, cache))
                hub_report = json.loads(out)
                rows[hub_cold].add(wall, cpu, hub.stats.body_bytes, hub_report["mtp"]["headers_read"])
                hub.stats.reset()
                wall, cpu, _ = timed([*exe, "inspect", "org/deepseek-v3", "--json"], hub_env(hub.url, cache))
                rows[hub_warm].add(wall, cpu, hub.stats.body_bytes, hub_report["mtp"]["headers_read"])
                shutil.rmtree(cache, ignore_errors=True)
        print_table(rows, {raw_index: py, raw_all: raw_index, inspect: raw_index, hub_cold: hub_raw, hub_warm: hub_raw})
        print("(bytes read: what the reader counted locally; over the Hub, every body byte the stand-in served, the API listing included)")
        mtp = report["mtp"]
        print(
            f"\nlocal: mtp style {mtp['style']}, layers {[x['index'] for x in mtp['layers']]}, index read whole "
            f"({report['target']['tensors']} tensors), {mtp['headers_read']} shard header(s) of {report['target']['shards']}"
        )
        partial = [e for e in hub_report["mtp"]["evidence"] if "read in part" in e or "read whole" in e]
        print(f"Hub: {hub_report['mtp']['bytes_read']} bytes counted by the reader; {partial[0] if partial else 'index read whole'}")
        same = {k: v for k, v in hub_report["mtp"].items() if k not in ("evidence", "bytes_read", "headers_read")}
        print(f"Hub head == local head: {same == {k: v for k, v in mtp.items() if k in same}}")
        goal_local = statistics.median(rows[inspect].wall) < 1.0
        goal_hub = statistics.median(rows[hub_cold].read) < 2_000_000
        print(f"goals: local < 1 s {'ok' if goal_local else 'MISSED'}; Hub < 2 MB {'ok' if goal_hub else 'MISSED'}")
    finally:
        if args.dir is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
