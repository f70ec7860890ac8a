"""SIGKILL the writers at random moments; the source must be untouched and the destination whole or absent.

Each trial runs a real writer in a subprocess, kills it after a seeded random delay, then inspects
what is on disk. A kill lands in the middle of the copy most of the time, sometimes in the
fsync/rename window, and sometimes after the end: all outcomes must be a usable checkpoint.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from test_write import SRC_DIR, TRAIN_SAVE, make_safetensors

from specbridge.checkpoint.errors import CheckpointError
from specbridge.checkpoint.safetensors import read_header
from specbridge.checkpoint.write import OutTensor, header_backup_path, restore_header, verify_written, write_checkpoint

TRIALS = 20
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC_DIR), os.environ.get("PYTHONPATH", "")])}

WRITER = """
import sys
from pathlib import Path
from specbridge.checkpoint.safetensors import read_header
from specbridge.checkpoint.write import OutTensor, write_checkpoint
h = read_header(sys.argv[1])
ts = [OutTensor(n.replace("layers.0.", "midlayer."), t, transform="i64->i32" if n == "d2t" else None)
      for n, t in h.tensors.items()]
print("ready", flush=True)
write_checkpoint(Path(sys.argv[2]), ts, {"which": "new"}, metadata=h.metadata, force=sys.argv[3] == "1",
                 max_shard_bytes=48 << 20)
print("done", flush=True)
"""

IN_PLACE = """
import sys
from specbridge.checkpoint.safetensors import read_header
from specbridge.checkpoint.write import rewrite_header_in_place
path = sys.argv[1]
names = list(read_header(path).tensors)
a, b = "layers.0.", "midlayer."
if not any(n.startswith(a) for n in names):
    a, b = b, a
fwd = {n: n.replace(a, b) for n in names if n.startswith(a)}
back = {v: k for k, v in fwd.items()}
assert fwd
print("ready", flush=True)
while True:
    rewrite_header_in_place(path, fwd)
    rewrite_header_in_place(path, back)
"""


def blake(path: Path) -> str:
    h = hashlib.blake2b()
    with open(path, "rb") as f:
        while chunk := f.read(8 << 20):
            h.update(chunk)
    return h.hexdigest()


def start(code: str, *args) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-c", code, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    line = p.stdout.readline()
    if line != b"ready\n":
        p.kill()
        pytest.fail(f"writer did not start: {line!r} {p.stderr.read().decode()}")
    return p


def kill_after(p: subprocess.Popen, delay: float) -> bool:
    """SIGKILL after `delay` s; True when the process was still running (the kill interrupted it)."""
    try:
        p.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGKILL)
        p.wait()
        p.stdout.close()
        p.stderr.close()
        return True
    assert p.returncode == 0, p.stderr.read().decode()
    p.stdout.close()
    p.stderr.close()
    return False


@pytest.fixture(scope="module")
def big_source(tmp_path_factory) -> Path:
    """~64 MB: one 64 MB random bf16 tensor (so there are 3 shards) and a few small ones."""
    d = tmp_path_factory.mktemp("src")
    block = os.urandom(4 << 20)
    return make_safetensors(
        d / "model.safetensors",
        [
            ("d2t", "I64", (32000,), (np.arange(32000, dtype="<i8") * 4).tobytes(), 256000),
            ("layers.0.self_attn.q_proj.weight", "BF16", (32 << 20,), block * 16, 64 << 20),
            ("layers.0.input_layernorm.weight", "BF16", (4096,), os.urandom(8192), 8192),
            ("t2d", "BOOL", (8192,), bytes([1, 0]) * 4096, 8192),
        ],
        metadata={"format": "pt"},
    )


@pytest.mark.long
def test_sigkill_during_write_checkpoint(tmp_path, big_source):
    src_hash = blake(big_source)
    hdr = read_header(big_source)
    new_expected = [
        OutTensor(n.replace("layers.0.", "midlayer."), t, transform="i64->i32" if n == "d2t" else None) for n, t in hdr.tensors.items()
    ]
    old_expected = [OutTensor(n, t) for n, t in read_header(TRAIN_SAVE).tensors.items()]
    outs = tmp_path / "outs"
    outs.mkdir()
    dst = outs / "drafter"

    # Calibrate: how long does one full write take here (after start-up)? The slower of two runs.
    full = 0.0
    for _ in range(2):
        p = start(WRITER, big_source, dst, 0)
        t0 = time.monotonic()
        assert not kill_after(p, 120)
        full = max(full, time.monotonic() - t0)
        assert verify_written(dst, new_expected) == []
        shutil.rmtree(dst)

    rng = random.Random(20261130)
    outcomes = []
    for trial in range(TRIALS):
        force = trial % 2 == 1
        if force:  # an old, different, complete checkpoint is already there
            write_checkpoint(dst, old_expected, {"which": "old"})
        p = start(WRITER, big_source, dst, int(force))
        interrupted = kill_after(p, rng.uniform(0, 1.2 * full))

        assert blake(big_source) == src_hash, f"trial {trial}: the source changed"
        visible = [n for n in os.listdir(outs) if not n.startswith(".")]
        assert visible in ([], ["drafter"]), f"trial {trial}: {visible}"
        if not dst.exists():
            assert not force, f"trial {trial}: the old checkpoint vanished"
            state = "absent"
        elif verify_written(dst, new_expected) == []:
            assert json.loads((dst / "config.json").read_text()) == {"which": "new"}
            state = "new"
        else:
            assert force, f"trial {trial}: partial checkpoint at dst: {verify_written(dst, new_expected)[:3]}"
            problems = verify_written(dst, old_expected)
            assert problems == [], f"trial {trial}: dst is neither old nor new: {problems[:3]}"
            assert json.loads((dst / "config.json").read_text()) == {"which": "old"}
            state = "old"
        if not interrupted:
            assert state == "new", f"trial {trial}: writer finished but dst is {state}"
        outcomes.append(state)
        shutil.rmtree(dst, ignore_errors=True)
        for n in os.listdir(outs):  # temp dirs a killed writer leaves behind (hidden, never at dst)
            assert ".drafter.specbridge-" in n, n
            shutil.rmtree(outs / n)

    print("write outcomes", outcomes)
    # The random delays must have hit both sides of the rename, or the test proved nothing.
    assert outcomes.count("new") >= 1, outcomes
    assert outcomes.count("absent") + outcomes.count("old") >= 1, outcomes


def test_sigkill_during_in_place_rename(tmp_path):
    path = Path(shutil.copy(TRAIN_SAVE, tmp_path / "model.safetensors"))
    hdr = read_header(path)
    data = path.read_bytes()[hdr.data_start :]
    names_a = set(hdr.tensors)
    names_b = {n.replace("layers.0.", "midlayer.") for n in names_a}

    rng = random.Random(7)
    outcomes = []
    for trial in range(TRIALS):
        p = start(IN_PLACE, path)
        assert kill_after(p, rng.uniform(0.0, 0.3)), "the rename loop never ends by itself"
        try:
            names = set(read_header(path).tensors)
            state = "ok"
        except CheckpointError:  # torn header: the backup must bring it back
            restore_header(path)
            names = set(read_header(path).tensors)
            state = "restored"
        assert names in (names_a, names_b), f"trial {trial}: mixed names {sorted(names)[:4]}"
        assert path.read_bytes()[hdr.data_start :] == data, f"trial {trial}: data section changed"
        bk = header_backup_path(path)
        if bk.exists():  # a backup that exists is complete (it is renamed into place only once fsynced)
            raw = bk.read_bytes()
            assert len(raw) == hdr.data_start
        outcomes.append((state, "a" if names == names_a else "b"))

    print("in-place outcomes", outcomes)
    assert {o[1] for o in outcomes} == {"a", "b"}, outcomes
