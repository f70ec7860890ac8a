"""Fault injection: disk full and permission errors during convert, kill -9 during train checkpointing.
Each test fails if the guarantee breaks: source intact, no partial destination, one clear message."""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import SPEC_TRAIN, STORY, run_cli


def _hashes(d: Path) -> dict:
    return {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(d.iterdir()) if f.is_file()}


@pytest.fixture
def tiny_fs(tmp_path):
    """A 300 KB tmpfs: the story checkpoint (224 KB) fits once, not with its copy."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=300k", "tmpfs", str(mnt)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)])


def test_disk_full_during_convert(tmp_path, tiny_fs):
    src = tmp_path / "story"
    shutil.copytree(STORY, src)
    filler = tiny_fs / "filler"
    filler.write_bytes(b"x" * 150_000)  # leave too little room for the 224 KB output
    before = _hashes(src)
    r = run_cli("convert", src, "--engine", "sglang==0.5.11", "-o", tiny_fs / "out")
    assert r.returncode == 1 and "no space left on device" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tiny_fs / "out").exists() and [p.name for p in tiny_fs.iterdir()] == ["filler"]  # no partial DST, no temp left
    assert _hashes(src) == before


def test_disk_full_during_in_place_full_rewrite(tmp_path, tiny_fs):
    d = tiny_fs / "sf"
    shutil.copytree(SPEC_TRAIN, d)  # 224 KB in a 300 KB filesystem: a full rewrite beside it cannot fit
    before = _hashes(d)
    r = run_cli("convert", d, "--to", "trtllm", "--in-place")
    assert r.returncode == 1 and "no space left" in r.stderr
    assert _hashes(d) == before and sorted(p.name for p in tiny_fs.iterdir()) == ["sf"]


def test_permission_denied(tmp_path):
    if os.geteuid() == 0:
        # root ignores mode bits; a read-only bind mount is what stops root
        ro = tmp_path / "ro"
        ro.mkdir()
        r = subprocess.run(["mount", "--bind", "-o", "ro", str(ro), str(ro)], capture_output=True, text=True)
        if r.returncode != 0:
            r2 = subprocess.run(["mount", "--bind", str(ro), str(ro)], capture_output=True)
            r3 = subprocess.run(["mount", "-o", "remount,bind,ro", str(ro)], capture_output=True)
            if r2.returncode or r3.returncode:
                pytest.skip("cannot make a read-only mount here")
    else:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
    try:
        before = _hashes(STORY)
        r = run_cli("convert", STORY, "--to", "sglang", "-o", ro / "out")
        assert r.returncode == 2 and ("Read-only file system" in r.stderr or "Permission denied" in r.stderr)  # refused at the door
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
        assert not (ro / "out").exists() and _hashes(STORY) == before
    finally:
        subprocess.run(["umount", "-l", str(ro)], capture_output=True)


@pytest.mark.ml
def test_kill_train_during_checkpointing(tmp_path):
    """kill -9 the trainer at random moments while it checkpoints every step: every checkpoint on
    disk is complete, and --resume continues from the latest one."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    sys.path.insert(0, str(Path(__file__).parent))
    from test_train import make_counting_target

    tgt = tmp_path / "target"
    make_counting_target(tgt)
    out = tmp_path / "run"
    data = tmp_path / "data"
    base = [
        sys.executable,
        "-m",
        "specbridge.train",
        "--target",
        str(tgt),
        "--out",
        str(out),
        "--draft-vocab-size",
        "448",
        "--aux-layers",
        "1,2,3",
        "--batch-size",
        "4",
        "--max-new-tokens",
        "16",
        "--train-prompts",
        str(tgt / "train.jsonl"),
        "--val-prompts",
        str(tgt / "val.jsonl"),
        "--data-dir",
        str(data),
        "--save-every",
        "1",
        "--eval-every",
        "0",
    ]
    # the first run prepares and caches the data, and a first checkpoint
    subprocess.run(base + ["--train-steps", "2"], check=True, capture_output=True, timeout=600)
    rng = random.Random(3)
    for _trial in range(5):
        p = subprocess.Popen(base + ["--train-steps", "400", "--resume"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(4.0, 9.0))
        p.send_signal(signal.SIGKILL)
        p.wait()
        ckpts = sorted((out / "checkpoints").glob("step-*"))
        assert ckpts
        for c in ckpts:  # no torn checkpoint is ever taken for a real one
            if (c / "state.pt").exists():
                state = torch.load(c / "state.pt", map_location="cpu", weights_only=True)
                assert "drafter" in state and "step" in state
    r = subprocess.run(
        base + ["--train-steps", str(int(sorted((out / "checkpoints").glob("step-*"))[-1].name.split("-")[1]) + 1), "--resume"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert "resumed from" in r.stdout + r.stderr
