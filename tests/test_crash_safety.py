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
from conftest import STORY, TINY_TARGET, tree_state
from test_write import SRC_DIR, TRAIN_SAVE, make_safetensors

from specbridge.checkpoint.errors import CheckpointError
from specbridge.checkpoint.safetensors import read_header
from specbridge.checkpoint.write import OutTensor, header_backup_path, restore_header, verify_written, write_checkpoint
from specbridge.convert.backup import find_backup, restore

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


@pytest.mark.long  # a crash-kill loop
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


CONVERT_LOOP = """
import os, sys
from specbridge.cli.contract import CliError
from specbridge.cli.convert_cmd import convert_cmd
cycle = sys.argv[2].split(",")
target = sys.argv[3]  # the verifier a speculators config needs (the story drafter records none)
print("ready", flush=True)
os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
i = 0
while True:
    to = cycle[i % len(cycle)]
    convert_cmd(sys.argv[1], to, None, True, None, target if to == "speculators" else None, "keep", False, True, None, True)
    i += 1
"""


@pytest.mark.long  # a crash-kill loop
def test_sigkill_during_in_place_conversions_then_restore(tmp_path):
    """Issue #23: in-place conversions (header renames and full rewrites, one after another) killed with
    SIGKILL at a random moment; sometimes one more complete in-place run follows; `restore` then puts
    the original back byte for byte, whatever the kill interrupted (a header or config write, the copy
    of a full rewrite, the two renames), and leaves nothing beside it."""
    rng = random.Random(23)
    outcomes = []
    for trial in range(12):
        work = tmp_path / f"t{trial}"
        work.mkdir()
        d = work / "story"
        shutil.copytree(STORY, d)
        original = tree_state(d)
        p = start(CONVERT_LOOP, d, "sglang,trtllm,speculators,sglang,speculators", TINY_TARGET)
        assert kill_after(p, rng.uniform(0.05, 2.0)), "the conversion loop never ends by itself"
        state = "root missing" if not d.exists() else "set: " + (find_backup(d).kind if find_backup(d) else "none")
        hidden = [n for n in os.listdir(work) if n.startswith(".")]
        if trial % 2:  # a third run after the kill: completes, or refuses what the kill left (exit 2), never exit 3
            r = subprocess.run(
                [sys.executable, "-m", "specbridge", "convert", d, "--to", "sglang", "--in-place", "--json"],
                capture_output=True,
                text=True,
                env=ENV,
                timeout=120,
            )
            assert r.returncode in (0, 1, 2), r.stderr
            state += f", then exit {r.returncode}"
        r = subprocess.run([sys.executable, "-m", "specbridge", "restore", d], capture_output=True, text=True, env=ENV, timeout=120)
        if r.returncode == 2 and "nothing to restore" in r.stderr:  # killed before the first run changed anything
            assert find_backup(d) is None
        else:
            assert r.returncode == 0, f"trial {trial} ({state}): {r.stderr}"
        assert tree_state(d) == original, f"trial {trial} ({state}): not the original after restore"
        assert os.listdir(work) == ["story"], f"trial {trial} ({state}): left beside it: {os.listdir(work)}"
        outcomes.append((state, len(hidden)))
    print("in-place conversion kills", outcomes)
    # the kills landed in different places: mid full rewrite (its hidden directory left) and elsewhere
    assert any(h for _, h in outcomes) and any(not h for _, h in outcomes), outcomes


def test_restore_finishes_what_a_killed_rewrite_left(tmp_path):
    """The two states a kill between a full rewrite's steps leaves, built exactly: the root moved aside
    but the new directory not yet in place (root missing), and the backup directory still carrying
    the in-place backup files it is settled from. restore puts the original back from both."""
    for case in ("root missing", "unsettled"):
        work = tmp_path / case.replace(" ", "-")
        work.mkdir()
        d = work / "story"
        shutil.copytree(STORY, d)
        original = tree_state(d)
        r = subprocess.run([sys.executable, "-m", "specbridge", "convert", d, "--to", "sglang", "--in-place"], env=ENV, capture_output=True)
        assert r.returncode == 0, r.stderr
        # the moment between `rename(root, backup)` and `rename(new, root)` of a later full rewrite
        bdir = work / "story.specbridge-backup-20260101-000000"
        os.rename(d, bdir)
        if case == "unsettled":
            shutil.copytree(bdir, d, ignore=shutil.ignore_patterns("*.specbridge-*"))  # the new root is in place
        (work / ".story.specbridge-new-abc123").mkdir()  # a half-written new directory
        res = restore(d)
        assert res.backup.kind == "directory" and "model.safetensors" in res.restored and ".story.specbridge-new-abc123" in res.removed
        assert tree_state(d) == original, case
        assert os.listdir(work) == ["story"], os.listdir(work)


def test_restore_leaves_no_temp_file_of_a_killed_config_write(tmp_path):
    """A header rename killed while replacing config.json leaves its temp file in the converted directory;
    after a full rewrite (a backup directory) restore must not carry it into the original as a file
    made after the conversion. Found by the random kills above; built exactly here."""
    d = tmp_path / "story"
    shutil.copytree(STORY, d)
    original = tree_state(d)
    r = subprocess.run([sys.executable, "-m", "specbridge", "convert", d, "--to", "trtllm", "--in-place"], env=ENV, capture_output=True)
    assert r.returncode == 0, r.stderr
    (d / ".config.json.specbridge-tmp").write_text("{")  # the kill's leftover
    (d / "notes.txt").write_text("mine")  # made after the conversion: comes along
    restore(d)
    assert tree_state(d) == {**original, "notes.txt": (0o644 & ~_umask(), b"mine")}
    assert os.listdir(tmp_path) == ["story"]


def _umask() -> int:
    m = os.umask(0)
    os.umask(m)
    return m
