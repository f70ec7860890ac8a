"""kill -9 `specbridge convert` at random moments: the source is always intact; DST is either absent
or complete and verified; an in-place rename leaves the old or the new header, never a broken file."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import STORY, raw_tensors, write_raw

from specbridge.checkpoint.reader import open_checkpoint

TRIALS = 20


def sha(p: Path) -> str:
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 22), b""):
            h.update(chunk)
    return h.hexdigest()


@pytest.fixture(scope="module")
def big_source(tmp_path_factory):
    """The story's drafter with a ~150 MB embedding, so a conversion takes long enough to interrupt."""
    d = tmp_path_factory.mktemp("big") / "story-big"
    shutil.copytree(STORY, d)
    t = raw_tensors(STORY)
    rows = 150_000_000 // (64 * 2)
    t["embed_tokens.weight"] = ("BF16", [rows, 64], os.urandom(rows * 64 * 2))
    write_raw(d / "model.safetensors", t)
    cfg = json.loads((d / "config.json").read_text())
    cfg["vocab_size"] = rows
    (d / "config.json").write_text(json.dumps(cfg))
    # t2d must match the vocab; keep the drafter valid for the post-check
    t2d = bytearray(rows)
    t2d[:512] = raw_tensors(STORY)["t2d"][2]
    t["t2d"] = ("BOOL", [rows], bytes(t2d))
    write_raw(d / "model.safetensors", t)
    return d


def _run_and_kill(args, delay):
    p = subprocess.Popen(
        [sys.executable, "-m", "specbridge.cli.entry", *map(str, args)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    time.sleep(delay)
    killed = p.poll() is None
    if killed:
        p.send_signal(signal.SIGKILL)
    p.wait()
    return killed


@pytest.mark.long
def test_kill_convert_rewrite(tmp_path, big_source):
    rng = random.Random(1234)
    src_hash = {f.name: sha(f) for f in big_source.iterdir()}
    # how long an uninterrupted run takes, to spread the kills over it
    t0 = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "specbridge.cli.entry", "convert", big_source, "--to", "sglang", "-o", tmp_path / "full"],
        check=True,
        capture_output=True,
    )
    full = time.monotonic() - t0
    complete = open_checkpoint(tmp_path / "full")
    killed_count = 0
    for i in range(TRIALS):
        dst = tmp_path / f"dst{i}"
        killed_count += _run_and_kill(["convert", big_source, "--to", "sglang", "-o", dst], rng.uniform(0.05, full * 0.95))
        assert {f.name: sha(f) for f in big_source.iterdir()} == src_hash
        if dst.exists():
            ck = open_checkpoint(dst)  # complete: parses, and every tensor equals the finished run's
            assert {n: t.read_bytes() for n, t in ck.tensors.items()} == {n: t.read_bytes() for n, t in complete.tensors.items()}
        leftovers = [p for p in tmp_path.iterdir() if p.name.startswith(f".dst{i}.")]
        assert all(".specbridge-tmp-" in p.name for p in leftovers)  # only hidden temp dirs, never a partial DST
    # how many runs the kill caught mid-way depends on the machine's speed: said, not asserted (a run that finished is
    # held to the same whole-or-absent outcome)
    print(f"{killed_count} of {TRIALS} runs killed mid-way")


@pytest.mark.long  # a crash-kill loop
def test_kill_convert_in_place(tmp_path):
    rng = random.Random(99)
    for i in range(TRIALS):
        d = tmp_path / f"s{i}"
        shutil.copytree(STORY, d)
        old_header = (d / "model.safetensors").read_bytes()
        _run_and_kill(["convert", d, "--engine", "sglang==0.5.11", "--in-place"], rng.uniform(0.05, 0.6))
        data = (d / "model.safetensors").read_bytes()
        hl = struct.unpack("<Q", data[:8])[0]
        assert data[8 + hl :] == old_header[8 + hl :]  # data never touched
        names = set(open_checkpoint(d).tensors)  # header is whole: old names or new names
        assert names in (set(raw_tensors(STORY)), {n.replace("layers.0.", "midlayer.") for n in raw_tensors(STORY)})
        json.loads((d / "config.json").read_text())  # config whole too
