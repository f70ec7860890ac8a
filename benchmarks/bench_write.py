"""Streaming checkpoint write vs `cp` vs the naive load/rename/save, on the 4.3 GB Kimi-K2.5 drafter shape.

Builds (or reuses, --src) a checkpoint with the drafter's exact names, dtypes and shapes and real,
non-sparse bf16 data, then times each way of producing a copy with `layers.0.` renamed to
`midlayer.` as a fresh process, interleaved in one run, with peak RSS from GNU time:

    cp            cp SRC DST (not durable: the data may still be in the page cache)
    cp+sync       cp SRC DST && sync DST (durable)
    ours          write_checkpoint (durable: every file and the dir fsynced, atomic rename)
    ours-nofsync  the same with fsync/fadvise disabled (to show what durability costs)
    naive         safetensors.torch load_file -> rename -> save_file
    convert-cli   `specbridge convert DIR --to sglang -o OUT` as users run it: plan, write, fsync, the
                  copy's CRC-32 check of source and destination, the post-convert check
    in-place      rewrite_header_in_place on a copy (forward, then back: 2 timings per round)
    in-place-cli  `specbridge convert DIR --engine sglang==0.5.11 --in-place` and back, whole process

Every output is deleted and `sync` run (untimed) before the next command. Prints medians and
paired ratios. Goals: convert-cli <= 1.1x `cp && sync`, its peak RSS < 64 MB, in-place-cli <= 0.15 s.

    python benchmarks/bench_write.py [--size-scale 0.05] [--runs 3] [--dir DIR] [--src FILE] [--keep]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import random
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

from bench_check import KIMI, SIZE, VD, V  # the story drafter's exact names and shapes, one definition

BLOCK = 16 << 20


def build(path: Path, scale: float) -> None:
    """Real data, streamed: bf16 tensors repeat one 16 MiB random block; d2t = arange*4; t2d has 32000 True."""
    shapes = {}
    for name, (dt, shape) in KIMI.items():
        shape = list(shape)
        if dt == "BF16" and len(shape) == 2:  # scale rows only; names and ranks stay the drafter's
            shape[0] = max(1, round(shape[0] * scale))
        shapes[name] = (dt, shape)
    # safetensors' own order: larger dtype first, then name
    order = sorted(shapes, key=lambda n: (-SIZE[shapes[n][0]], n))
    header, off = {"__metadata__": {"format": "pt"}}, 0
    for name in order:
        dt, shape = shapes[name]
        n = SIZE[dt]
        for s in shape:
            n *= s
        header[name] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + n]}
        off += n
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    block = os.urandom(BLOCK)
    t2d = bytearray(V)
    for i in random.Random(0).sample(range(V), VD):
        t2d[i] = 1
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw)
        for name in order:
            begin, end = header[name]["data_offsets"]
            if name == "d2t":
                f.write(b"".join(struct.pack("<q", i * 4) for i in range(VD)))
            elif name == "t2d":
                f.write(t2d)
            else:
                left = end - begin
                while left:
                    f.write(block[: min(left, BLOCK)])
                    left -= min(left, BLOCK)
        os.fsync(f.fileno())


# ---------------------------------------------------------------------------------------------
# Children: each measured command is a fresh `python -c` process that imports only what it uses.
# Each prints the seconds spent in the work itself, after interpreter start-up and imports.

OURS = """
import os, sys, time
from pathlib import Path
from specbridge.checkpoint.safetensors import read_header
from specbridge.checkpoint.write import OutTensor, write_checkpoint
if sys.argv[3] == "nofsync":
    os.fsync = lambda fd: None
    os.posix_fadvise = lambda *a: None
t0 = time.perf_counter()
h = read_header(sys.argv[1])
tensors = [OutTensor(n.replace("layers.0.", "midlayer."), t) for n, t in h.tensors.items()]
write_checkpoint(Path(sys.argv[2]), tensors, {"architectures": ["LlamaForCausalLMEagle3"]}, metadata=h.metadata)
print(time.perf_counter() - t0)
"""

NAIVE = """
import sys, time
from safetensors.torch import load_file, save_file
t0 = time.perf_counter()
tensors = load_file(sys.argv[1])
save_file({n.replace("layers.0.", "midlayer."): t for n, t in tensors.items()}, sys.argv[2], metadata={"format": "pt"})
print(time.perf_counter() - t0)
"""

IN_PLACE = """
import sys, time
from specbridge.checkpoint.safetensors import read_header
from specbridge.checkpoint.write import rewrite_header_in_place
t0 = time.perf_counter()
names = read_header(sys.argv[1]).tensors
a, b = ("layers.0.", "midlayer.") if any(n.startswith("layers.0.") for n in names) else ("midlayer.", "layers.0.")
rewrite_header_in_place(sys.argv[1], {n: n.replace(a, b) for n in names if n.startswith(a)})
print(time.perf_counter() - t0)
"""


GNU_TIME = "/usr/bin/time" if os.path.exists("/usr/bin/time") else None


def run(cmd: list[str], rss_file: Path) -> tuple[float, float | None, float | None]:
    """(wall seconds, peak RSS MiB, seconds the child reported) for one fresh process.

    Peak RSS comes from GNU time, not from our own wait4: a child's ru_maxrss inherits this
    parent's peak through fork+exec, so only a small intermediate process gives the
    child's own figure."""
    if GNU_TIME:
        cmd = [GNU_TIME, "-f", "%M", "-o", str(rss_file), *cmd]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"failed ({p.returncode}): {' '.join(cmd)}")
    rss = int(rss_file.read_text().split()[-1]) / 1024 if GNU_TIME else None
    try:
        inner = float(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        inner = None
    return wall, rss, inner


def remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()
    os.sync()


def verify(src: Path, out: Path) -> list[str]:
    from specbridge.checkpoint.safetensors import read_header
    from specbridge.checkpoint.write import OutTensor, verify_written

    return verify_written(out, [OutTensor(n.replace("layers.0.", "midlayer."), t) for n, t in read_header(src).tensors.items()])


def med(xs):
    return statistics.median(xs)


def span(xs, fmt="{:.2f}"):
    return f"{fmt.format(med(xs))} ({fmt.format(min(xs))}-{fmt.format(max(xs))})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, default=None, help="work directory (default: a new one under /tmp)")
    ap.add_argument("--src", type=Path, default=None, help="reuse this checkpoint file instead of building one")
    ap.add_argument("--size-scale", type=float, default=1.0, help="scale the big tensors' rows (1.0 = 4.3 GB)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-verify", action="store_true", help="skip hashing the first round's outputs")
    ap.add_argument("--keep", action="store_true", help="keep the built checkpoint")
    args = ap.parse_args()

    root = args.dir or Path(tempfile.mkdtemp(prefix="sb-bench-write-", dir="/tmp"))
    root.mkdir(parents=True, exist_ok=True)
    made_root = args.dir is None
    src = args.src
    try:
        if src is None:
            src = root / "src" / "model.safetensors"
            src.parent.mkdir(exist_ok=True)
            t0 = time.perf_counter()
            build(src, args.size_scale)
            print(f"built {src} in {time.perf_counter() - t0:.1f} s")
        size = src.stat().st_size
        free = shutil.disk_usage(root).free
        if free < 3.2 * size:
            raise SystemExit(f"need about {3.2 * size / 1e9:.1f} GB free in {root}, have {free / 1e9:.1f} GB")
        print(
            f"source {size / 1e9:.2f} GB; python {platform.python_version()}, safetensors {version('safetensors')}, "
            f"torch {version('torch')}, kernel {platform.release()}, {os.cpu_count()} CPUs"
        )
        # Measure what an installed tool costs: pip compiles bytecode at install time.
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        import specbridge

        compileall.compile_dir(Path(specbridge.__file__).parent, quiet=1)

        # the CLI needs a checkpoint directory: the speculators config of the story's drafter beside the file
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from bench_check import speculators_config

        (src.parent / "config.json").write_text(json.dumps(speculators_config(1), indent=2))
        cli = [sys.executable, "-m", "specbridge.cli.entry"]
        inplace_dir = root / "in-place-dir"
        inplace_dir.mkdir(exist_ok=True)
        subprocess.run(["cp", src, inplace_dir / "model.safetensors"], check=True)
        (inplace_dir / "config.json").write_text(json.dumps(speculators_config(1), indent=2))
        py = [sys.executable, "-c"]
        rss_file = root / "rss.txt"
        target = root / "in-place.safetensors"  # the in-place rename works on its own copy
        subprocess.run(["cp", src, target], check=True)
        os.sync()
        outs = {m: root / f"out-{m}" for m in ("cp", "cp+sync", "ours", "ours-nofsync", "naive", "convert-cli")}
        cmds = {
            "cp": ["cp", str(src), str(outs["cp"])],
            "cp+sync": ["sh", "-c", 'cp "$0" "$1" && sync "$1"', str(src), str(outs["cp+sync"])],
            "ours": [*py, OURS, str(src), str(outs["ours"]), "fsync"],
            "ours-nofsync": [*py, OURS, str(src), str(outs["ours-nofsync"]), "nofsync"],
            "naive": [*py, NAIVE, str(src), str(outs["naive"])],
            # the whole `specbridge convert --to sglang`: plan, streamed atomic write, hash verification, post-check
            # (exit 1 = the post-convert check found errors: only with --size-scale, whose shapes no config matches)
            "convert-cli": [
                "sh",
                "-c",
                '"$@"; test $? -le 1',
                "sh",
                *cli,
                "convert",
                str(src.parent),
                "--to",
                "sglang",
                "-o",
                str(outs["convert-cli"]),
            ],
        }
        wall = {m: [] for m in [*cmds, "in-place", "in-place-cli"]}
        rss = {m: [] for m in wall}
        inner_inplace = []
        modes = list(cmds)
        for r in range(args.runs):
            for m in modes[r % len(modes) :] + modes[: r % len(modes)]:  # rotate so no mode is always first
                w, peak, _ = run(cmds[m], rss_file)
                wall[m].append(w)
                rss[m].append(peak)
                if r == 0 and not args.no_verify and m in ("ours", "naive"):
                    problems = verify(src, outs[m])
                    print(f"  verify {m}: {'ok' if not problems else problems[:3]}")
                remove(outs[m])
            for _ in range(2):  # forward, then back: the copy ends as it began
                w, peak, inner = run([*py, IN_PLACE, str(target)], rss_file)
                wall["in-place"].append(w)
                rss["in-place"].append(peak)
                inner_inplace.append(inner)
            for to in ("--engine=sglang==0.5.11", "--to=speculators"):  # layers.0. <-> midlayer., header only
                w, peak, _ = run(
                    ["sh", "-c", '"$@"; test $? -le 1', "sh", *cli, "convert", str(inplace_dir), to, "--in-place", "--no-backup"], rss_file
                )
                wall["in-place-cli"].append(w)
                rss["in-place-cli"].append(peak)
            print(f"round {r + 1}/{args.runs}: " + ", ".join(f"{m} {wall[m][-1]:.2f}s" for m in modes))

        print(f"\n{'command':14} {'wall s, median (min-max)':>28} {'max peak RSS MiB':>17}")
        for m in wall:
            fmt = "{:.3f}" if m.startswith("in-place") else "{:.2f}"
            peak = f"{max(rss[m]):17.1f}" if GNU_TIME else "n/a (no GNU time)"
            print(f"{m:14} {span(wall[m], fmt):>28} {peak}")
        print(f"in-place work after start-up: {span(inner_inplace, '{:.4f}')} s")

        def ratio(a, b):
            return [x / y for x, y in zip(wall[a], wall[b])]

        print("\npaired ratios (same round), median (min-max):")
        for a, b in [
            ("ours", "cp"),
            ("ours", "cp+sync"),
            ("ours-nofsync", "cp"),
            ("convert-cli", "cp"),
            ("convert-cli", "cp+sync"),
            ("naive", "cp"),
            ("naive", "ours"),
            ("cp+sync", "cp"),
        ]:
            print(f"  {a + ' / ' + b:24} {span(ratio(a, b))}")

        def yes(ok: bool) -> str:
            return "yes" if ok else "NO"

        rss_ok = yes(max(rss["convert-cli"]) * 1.048576 < 64) if GNU_TIME else "n/a"
        print(
            f"\ngoals: convert-cli <= 1.1x cp+sync: {yes(med(ratio('convert-cli', 'cp+sync')) <= 1.1)}"
            f" | convert-cli peak RSS < 64 MB: {rss_ok}"
            f" | in-place-cli <= 0.15 s: {yes(med(wall['in-place-cli']) <= 0.15)}"
            f" | (writer alone: ours <= 1.1x cp+sync: {yes(med(ratio('ours', 'cp+sync')) <= 1.1)})"
        )
    finally:
        for p in root.glob("out-*"):
            remove(p)
        for p in [*root.glob("in-place.safetensors*"), root / "rss.txt"]:
            p.unlink(missing_ok=True)
        if not args.keep and args.src is None:
            shutil.rmtree(root / "src", ignore_errors=True)
            shutil.rmtree(root / "in-place-dir", ignore_errors=True)
            if made_root:
                shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
