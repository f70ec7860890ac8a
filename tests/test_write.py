"""write.py against real producer checkpoints: round trips, shards, transforms, permissions,
atomic replacement, in-place renames, fallbacks, disk full, bounded memory."""

from __future__ import annotations

import errno
import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import safetensors
import safetensors.numpy

import specbridge
from specbridge.checkpoint import write as W
from specbridge.checkpoint.errors import CheckpointError
from specbridge.checkpoint.safetensors import read_header
from specbridge.checkpoint.write import (
    HeaderDoesNotFit,
    OutTensor,
    header_backup_path,
    restore_header,
    rewrite_header_in_place,
    verify_written,
    write_checkpoint,
    write_safetensors,
)

PRODUCERS = Path(__file__).resolve().parent / "fixtures/producers"
FIXTURES = sorted(PRODUCERS.glob("*/*/model.safetensors"))
TRAIN_SAVE = PRODUCERS / "speculators-0.9.0/train-save/model.safetensors"  # bf16, layers.0.*
FP32 = PRODUCERS / "speculators-0.9.0/convert-eagle3-from-specforge-sglang-export/model.safetensors"
SRC_DIR = Path(specbridge.__file__).resolve().parents[1]


def make_safetensors(path: Path, entries, metadata=None) -> Path:
    """A safetensors file written by hand (not by the code under test). data=None leaves a sparse hole."""
    header, pos = {}, 0
    if metadata:
        header["__metadata__"] = metadata
    for name, dtype, shape, _data, nbytes in entries:
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [pos, pos + nbytes]}
        pos += nbytes
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw)
        for _, _, _, data, nbytes in entries:
            if data is None:
                f.seek(nbytes, os.SEEK_CUR)
            else:
                assert len(data) == nbytes
                f.write(data)
        f.truncate()
    return path


def renamed(src: Path, old="layers.0.", new="midlayer.", transforms=None) -> list[OutTensor]:
    transforms = transforms or {}
    return [OutTensor(n.replace(old, new), t, transform=transforms.get(n)) for n, t in read_header(src).tensors.items()]


def file_bytes(path: Path) -> bytes:
    return Path(path).read_bytes()


def leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in Path(parent).iterdir() if ".specbridge-" in p.name)


# ---------------------------------------------------------------------------------------------
# Round trips


@pytest.mark.parametrize("src", FIXTURES, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_round_trip_renamed(tmp_path, src):
    hdr = read_header(src)
    # speculators names -> SpecForge names, and the reverse for SpecForge exports
    old, new = ("layers.0.", "midlayer.") if any(n.startswith("layers.0.") for n in hdr.tensors) else ("midlayer.", "layers.0.")
    tensors = renamed(src, old, new)
    config = {"architectures": ["LlamaForCausalLMEagle3"], "hidden_size": 64, "nested": {"a": [1, 2]}}
    out = tmp_path / "out"
    res = write_checkpoint(out, tensors, config, metadata=hdr.metadata)

    assert res.files == [out / "model.safetensors", out / "config.json"]
    assert res.nbytes == sum(f.stat().st_size for f in res.files)
    assert res.problems is None
    assert sorted(os.listdir(out)) == ["config.json", "model.safetensors"]
    assert (out / "config.json").read_text() == json.dumps(config, indent=2) + "\n"
    assert verify_written(out, tensors) == []

    got = read_header(out / "model.safetensors")
    assert got.header_len % 8 == 0
    assert got.metadata == hdr.metadata
    assert list(got.tensors) == [t.name for t in tensors]  # order as given
    for t in tensors:
        g = got.tensors[t.name]
        assert (g.dtype, g.shape) == (t.source.dtype, t.source.shape)
        assert g.read_bytes() == t.source.read_bytes()
    # Every renamed name went somewhere and nothing kept the old prefix.
    assert not any(n.startswith(old) for n in got.tensors)

    # The reference implementation parses it (bf16 cannot become numpy arrays, so list keys/shapes/dtypes).
    with safetensors.safe_open(out / "model.safetensors", "np") as f:
        assert sorted(f.keys()) == sorted(got.tensors)
        assert f.metadata() == hdr.metadata
        for name in f.keys():
            sl = f.get_slice(name)
            assert tuple(sl.get_shape()) == got.tensors[name].shape
            assert sl.get_dtype() == got.tensors[name].dtype


def test_fp32_output_loads_with_safetensors(tmp_path):
    tensors = renamed(FP32)
    write_checkpoint(tmp_path / "out", tensors, {})
    src = safetensors.numpy.load_file(FP32)
    out = safetensors.numpy.load_file(tmp_path / "out" / "model.safetensors")
    assert sorted(out) == sorted(n.replace("layers.0.", "midlayer.") for n in src)
    for name, arr in src.items():
        o = out[name.replace("layers.0.", "midlayer.")]
        assert o.dtype == arr.dtype and o.shape == arr.shape
        assert np.array_equal(o, arr)


def test_write_safetensors_alone_and_refuses_existing(tmp_path):
    tensors = renamed(TRAIN_SAVE)
    dst = tmp_path / "x.safetensors"
    write_safetensors(dst, tensors, {"format": "pt"})
    assert verify_written(dst, tensors) == []
    before = file_bytes(dst)
    with pytest.raises(FileExistsError):
        write_safetensors(dst, tensors, None)
    assert file_bytes(dst) == before


def test_duplicate_and_reserved_names_refused(tmp_path):
    t = read_header(TRAIN_SAVE).tensors["norm.weight"]
    for tensors in ([OutTensor("a", t), OutTensor("a", t)], [OutTensor("__metadata__", t)]):
        with pytest.raises(CheckpointError):
            write_checkpoint(tmp_path / "out", tensors, {})
        assert not (tmp_path / "out").exists()
        assert leftovers(tmp_path) == []


def test_empty_and_zero_size_tensors(tmp_path):
    src = make_safetensors(tmp_path / "z.safetensors", [("empty", "F32", (0, 4), b"", 0), ("one", "U8", (1,), b"\x07", 1)])
    tensors = renamed(src)
    write_checkpoint(tmp_path / "out", tensors, {})
    assert verify_written(tmp_path / "out", tensors) == []
    assert safetensors.numpy.load_file(tmp_path / "out" / "model.safetensors")["empty"].shape == (0, 4)


# ---------------------------------------------------------------------------------------------
# Shards


def test_sharded_output_and_index(tmp_path):
    tensors = renamed(TRAIN_SAVE)
    limit = 40_000
    out = tmp_path / "out"
    res = write_checkpoint(out, tensors, {"x": 1}, metadata={"format": "pt"}, max_shard_bytes=limit)

    shard_files = sorted(p.name for p in out.glob("*.safetensors"))
    n = len(shard_files)
    assert n > 2
    assert shard_files == [f"model-{i:05d}-of-{n:05d}.safetensors" for i in range(1, n + 1)]
    assert not (out / "model.safetensors").exists()
    assert {p.name for p in res.files} == {*shard_files, "config.json", "model.safetensors.index.json"}

    index = json.loads((out / "model.safetensors.index.json").read_text())
    assert index["metadata"]["total_size"] == sum(t.nbytes for t in tensors)
    assert set(index["weight_map"]) == {t.name for t in tensors}
    # Independently: each tensor is where the index says; shards keep the order; sizes respect the limit.
    order = []
    for f in shard_files:
        h = read_header(out / f)
        assert h.metadata == {"format": "pt"}
        size = sum(t.nbytes for t in h.tensors.values())
        assert size <= limit or len(h.tensors) == 1
        for name in h.tensors:
            assert index["weight_map"][name] == f
            order.append(name)
        with safetensors.safe_open(out / f, "np") as sf:
            assert sorted(sf.keys()) == sorted(h.tensors)
    assert order == [t.name for t in tensors]
    assert verify_written(out, tensors) == []

    # A broken index is noticed.
    index["weight_map"][tensors[0].name] = shard_files[-1]
    (out / "model.safetensors.index.json").write_text(json.dumps(index))
    problems = verify_written(out, tensors)
    assert any(tensors[0].name in p and "index says" in p for p in problems)


def test_shard_limit_larger_than_checkpoint_gives_one_file(tmp_path):
    tensors = renamed(TRAIN_SAVE)
    write_checkpoint(tmp_path / "out", tensors, {}, max_shard_bytes=10**9)
    assert sorted(os.listdir(tmp_path / "out")) == ["config.json", "model.safetensors"]


def test_extra_files(tmp_path):
    tensors = renamed(TRAIN_SAVE)
    res = write_checkpoint(tmp_path / "out", tensors, {}, extra_files={"generation_config.json": b"{}\n"})
    assert (tmp_path / "out" / "generation_config.json").read_bytes() == b"{}\n"
    assert tmp_path / "out" / "generation_config.json" in res.files
    for bad in ("config.json", "../x", "a/b", "model.safetensors", ""):
        with pytest.raises(ValueError):
            write_checkpoint(tmp_path / "out2", tensors, {}, extra_files={bad: b""})
    assert not (tmp_path / "out2").exists()


# ---------------------------------------------------------------------------------------------
# Transforms


def test_i64_to_i32_and_back(tmp_path):
    tensors = renamed(TRAIN_SAVE, transforms={"d2t": "i64->i32"})
    d2t = next(t for t in tensors if t.name == "d2t")
    assert (d2t.out_dtype, d2t.nbytes) == ("I32", d2t.source.nbytes // 2)
    write_checkpoint(tmp_path / "a", tensors, {})
    assert verify_written(tmp_path / "a", tensors) == []
    src = np.frombuffer(d2t.source.read_bytes(), "<i8")
    h = read_header(tmp_path / "a" / "model.safetensors")
    assert h.tensors["d2t"].dtype == "I32"
    assert np.array_equal(np.frombuffer(h.tensors["d2t"].read_bytes(), "<i4"), src)

    back = [OutTensor("d2t", h.tensors["d2t"], transform="i32->i64", dtype="I64")]
    write_checkpoint(tmp_path / "b", back, {})
    assert read_header(tmp_path / "b" / "model.safetensors").tensors["d2t"].read_bytes() == d2t.source.read_bytes()


@pytest.mark.parametrize("bad", [2**31, -(2**31) - 1, 2**62])
def test_i64_to_i32_refuses_values_that_do_not_fit(tmp_path, bad):
    vals = np.array([0, 5, bad, -3], "<i8")
    src = make_safetensors(tmp_path / "s.safetensors", [("d2t", "I64", (4,), vals.tobytes(), 32)])
    tensors = [OutTensor("d2t", read_header(src).tensors["d2t"], transform="i64->i32")]
    with pytest.raises(CheckpointError, match="does not fit in int32"):
        write_checkpoint(tmp_path / "out", tensors, {})
    assert not (tmp_path / "out").exists()
    assert leftovers(tmp_path) == []


def test_i64_to_i32_boundaries_fit(tmp_path):
    vals = np.array([2**31 - 1, -(2**31), 0], "<i8")
    src = make_safetensors(tmp_path / "s.safetensors", [("d2t", "I64", (3,), vals.tobytes(), 24)])
    tensors = [OutTensor("d2t", read_header(src).tensors["d2t"], transform="i64->i32")]
    write_checkpoint(tmp_path / "out", tensors, {})
    assert np.array_equal(safetensors.numpy.load_file(tmp_path / "out" / "model.safetensors")["d2t"], vals.astype("<i4"))


def test_transform_declarations_checked(tmp_path):
    hdr = read_header(TRAIN_SAVE)
    with pytest.raises(CheckpointError, match="needs I64"):
        OutTensor("x", hdr.tensors["norm.weight"], transform="i64->i32")
    with pytest.raises(ValueError, match="unknown transform"):
        OutTensor("x", hdr.tensors["d2t"], transform="bf16->f32")
    with pytest.raises(ValueError):
        OutTensor("x", hdr.tensors["d2t"], dtype="I32")  # a dtype change needs a declared transform
    with pytest.raises(ValueError):
        OutTensor("x", hdr.tensors["d2t"], dtype="I64", transform="i64->i32")


def test_transform_refuses_big_tensors(tmp_path):
    n = W.MAX_TRANSFORM_BYTES // 8 + 1
    src = make_safetensors(tmp_path / "s.safetensors", [("d2t", "I64", (n,), None, n * 8)])
    tensors = [OutTensor("d2t", read_header(src).tensors["d2t"], transform="i64->i32")]
    with pytest.raises(CheckpointError, match="transforms are for vocab maps"):
        write_checkpoint(tmp_path / "out", tensors, {})
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------------------------
# Permissions, existing destinations, sources


@pytest.mark.parametrize("umask,file_mode,dir_mode", [(0o022, 0o644, 0o755), (0o077, 0o600, 0o700), (0o002, 0o644, 0o775)])
def test_permissions_follow_umask(tmp_path, umask, file_mode, dir_mode):
    old = os.umask(umask)
    try:
        res = write_checkpoint(tmp_path / "out", renamed(TRAIN_SAVE), {}, max_shard_bytes=50_000)
    finally:
        os.umask(old)
    assert len(res.files) > 3
    for f in res.files:
        assert f.stat().st_mode & 0o777 == file_mode, f
    assert (tmp_path / "out").stat().st_mode & 0o777 == dir_mode


def test_refuses_existing_dst_without_force(tmp_path):
    dst = tmp_path / "out"
    dst.mkdir()
    (dst / "keep.txt").write_text("mine")
    with pytest.raises(CheckpointError, match="already exists"):
        write_checkpoint(dst, renamed(TRAIN_SAVE), {})
    assert os.listdir(dst) == ["keep.txt"]
    assert leftovers(tmp_path) == []


def test_refuses_a_file_at_dst_even_with_force(tmp_path):
    (tmp_path / "out").write_text("x")
    with pytest.raises(CheckpointError, match="not a directory"):
        write_checkpoint(tmp_path / "out", renamed(TRAIN_SAVE), {}, force=True)
    assert (tmp_path / "out").read_text() == "x"


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2-exchange", "two-renames"])
def test_force_replaces_whole_directory(tmp_path, monkeypatch, exchange):
    if not exchange:
        monkeypatch.setattr(W, "_renameat2", lambda *a: False)
    dst = tmp_path / "out"
    old_tensors = renamed(FP32)
    write_checkpoint(dst, old_tensors, {"old": True}, max_shard_bytes=60_000)
    (dst / "stale.txt").write_text("from the old checkpoint")
    new_tensors = renamed(TRAIN_SAVE)
    write_checkpoint(dst, new_tensors, {"new": True}, force=True)
    assert sorted(os.listdir(dst)) == ["config.json", "model.safetensors"]
    assert json.loads((dst / "config.json").read_text()) == {"new": True}
    assert verify_written(dst, new_tensors) == []
    assert leftovers(tmp_path) == []


def test_no_exchange_support_without_dst(tmp_path, monkeypatch):
    monkeypatch.setattr(W, "_renameat2", lambda *a: False)
    tensors = renamed(TRAIN_SAVE)
    write_checkpoint(tmp_path / "out", tensors, {})
    assert verify_written(tmp_path / "out", tensors) == []


def test_refuses_to_write_over_source_directory(tmp_path):
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    src = Path(shutil.copy(TRAIN_SAVE, ckpt / "model.safetensors"))
    before = file_bytes(src)
    tensors = renamed(src)
    with pytest.raises(CheckpointError, match="in-place"):
        write_checkpoint(ckpt, tensors, {}, force=True)
    with pytest.raises(CheckpointError, match="holding the source"):
        write_checkpoint(tmp_path / "." / "ckpt", tensors, {}, force=True)
    # A directory that contains the source would be deleted by force: refused as well.
    with pytest.raises(CheckpointError, match="contains the source"):
        write_checkpoint(tmp_path, tensors, {}, force=True)
    assert file_bytes(src) == before and os.listdir(ckpt) == ["model.safetensors"]
    # A source reached through a symlink (as in the HF cache: snapshots/... -> blobs/...) counts for both dirs.
    snap, blobs = tmp_path / "snap", tmp_path / "blobs"
    snap.mkdir()
    blobs.mkdir()
    shutil.copy(TRAIN_SAVE, blobs / "abc123")
    (snap / "model.safetensors").symlink_to(blobs / "abc123")
    linked = renamed(snap / "model.safetensors")
    for d in (snap, blobs):
        with pytest.raises(CheckpointError, match="holding the source"):
            write_checkpoint(d, linked, {}, force=True)
    assert (snap / "model.safetensors").read_bytes() == before
    # Writing *inside* the source's directory is fine.
    write_checkpoint(ckpt / "converted", tensors, {})
    assert verify_written(ckpt / "converted", tensors) == []


# ---------------------------------------------------------------------------------------------
# Failure handling


def test_keyboard_interrupt_cleans_up(tmp_path, monkeypatch):
    def boom(*a):
        raise KeyboardInterrupt

    monkeypatch.setattr(W, "_write_small_file", boom)
    with pytest.raises(KeyboardInterrupt):
        write_checkpoint(tmp_path / "out", renamed(TRAIN_SAVE), {})
    assert os.listdir(tmp_path) == []


def test_os_error_becomes_one_line_checkpoint_error(tmp_path, monkeypatch):
    def eio(*a, **k):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(W.os, "copy_file_range", eio)
    with pytest.raises(CheckpointError) as ei:
        write_checkpoint(tmp_path / "out", renamed(TRAIN_SAVE), {})
    msg = str(ei.value)
    assert "\n" not in msg and "Input/output error while writing model.safetensors; nothing was written" in msg
    assert os.listdir(tmp_path) == []


def test_truncated_source_is_refused(tmp_path):
    src = Path(shutil.copy(TRAIN_SAVE, tmp_path / "s.safetensors"))
    tensors = renamed(src)  # offsets read now; then the file is cut short
    os.truncate(src, src.stat().st_size - 100)
    with pytest.raises(CheckpointError, match="ended early"):
        write_checkpoint(tmp_path / "out", tensors, {})
    assert not (tmp_path / "out").exists() and leftovers(tmp_path) == []


@pytest.mark.parametrize("fail", [["copy_file_range"], ["copy_file_range", "sendfile"]], ids=["sendfile", "buffer-loop"])
def test_copy_fallbacks(tmp_path, monkeypatch, fail):
    used = []

    def unsupported(name, code):
        def f(*a, **k):
            used.append(name)
            raise OSError(code, os.strerror(code))

        return f

    if "copy_file_range" in fail:
        monkeypatch.setattr(W.os, "copy_file_range", unsupported("copy_file_range", errno.EXDEV))
    if "sendfile" in fail:
        monkeypatch.setattr(W.os, "sendfile", unsupported("sendfile", errno.EINVAL))
    real_preadv = os.preadv
    monkeypatch.setattr(W.os, "preadv", lambda *a: used.append("preadv") or real_preadv(*a))
    monkeypatch.setattr(W, "BUFFER_BYTES", 4096)  # many loop turns on a small file
    tensors = renamed(TRAIN_SAVE)
    write_checkpoint(tmp_path / "out", tensors, {})
    assert verify_written(tmp_path / "out", tensors) == []
    assert used.count("copy_file_range") == 1  # tried once, then remembered for the file
    if "sendfile" in fail:
        assert used.count("sendfile") == 1 and used.count("preadv") > len(tensors)
    else:
        assert "preadv" not in used


def test_disk_full(tmp_path):
    """A real ENOSPC: write onto a 200 KB tmpfs (the checkpoint is 216 KB)."""
    small = tmp_path / "small"
    small.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=200k", "tmpfs", str(small)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs to fill up (needs root): {r.stderr.strip()}")
    try:
        src = Path(shutil.copy(TRAIN_SAVE, tmp_path / "s.safetensors"))
        before = file_bytes(src)
        with pytest.raises(CheckpointError) as ei:
            write_checkpoint(small / "out", renamed(src), {"a": 1})
        msg = str(ei.value)
        assert "no space left on device while writing model.safetensors; nothing was written" in msg
        assert "\n" not in msg
        assert os.listdir(small) == []  # no partial dst, no temp dir
        assert file_bytes(src) == before
        # ... and there is room again afterwards for something that fits.
        write_checkpoint(small / "ok", renamed(src)[:3], {})
    finally:
        subprocess.run(["umount", str(small)], check=True)


# ---------------------------------------------------------------------------------------------
# Verification can fail


def test_verify_detects_problems(tmp_path):
    tensors = renamed(TRAIN_SAVE)
    out = tmp_path / "out"
    write_checkpoint(out, tensors, {})
    f = out / "model.safetensors"
    t = read_header(f).tensors["midlayer.self_attn.q_proj.weight"]
    with open(f, "r+b") as fh:  # flip one byte in the middle of q_proj
        fh.seek(t.offset + t.nbytes // 2)
        b = fh.read(1)
        fh.seek(-1, os.SEEK_CUR)
        fh.write(bytes([b[0] ^ 0xFF]))
    problems = verify_written(out, tensors)
    assert problems == [f"midlayer.self_attn.q_proj.weight: bytes differ from source {TRAIN_SAVE}:layers.0.self_attn.q_proj.weight"]

    assert verify_written(out, tensors + [OutTensor("extra", tensors[0].source)])[-1] == "extra: missing"
    problems = verify_written(out, [x for x in tensors if x.name != "norm.weight"])
    assert any(p == "norm.weight: written but not expected" for p in problems)
    wrong = [OutTensor(x.name, x.source, transform="i64->i32") if x.name == "d2t" else x for x in tensors]
    assert any(p.startswith("d2t: written as I64") for p in verify_written(out, wrong))
    assert verify_written(tmp_path / "nothing-here", tensors) != []


def test_write_checkpoint_verify_flag(tmp_path):
    tensors = renamed(TRAIN_SAVE, transforms={"d2t": "i64->i32"})
    res = write_checkpoint(tmp_path / "out", tensors, {}, verify=True)
    assert res.problems == []


# ---------------------------------------------------------------------------------------------
# In-place header rewrite


def test_in_place_rename_same_length(tmp_path):
    path = Path(shutil.copy(TRAIN_SAVE, tmp_path / "model.safetensors"))
    original = file_bytes(path)
    hdr = read_header(path)
    renames = {n: n.replace("layers.0.", "midlayer.") for n in hdr.tensors if n.startswith("layers.0.")}
    assert len(renames) == 10

    backup = rewrite_header_in_place(path, renames)
    assert backup == header_backup_path(path) == tmp_path / "model.safetensors.specbridge-header-backup"
    assert backup.read_bytes() == original[: hdr.data_start]
    new = read_header(path)
    assert (new.header_len, new.file_size, new.metadata) == (hdr.header_len, hdr.file_size, hdr.metadata)
    assert list(new.tensors) == [renames.get(n, n) for n in hdr.tensors]
    assert file_bytes(path)[hdr.data_start :] == original[hdr.data_start :]
    with safetensors.safe_open(path, "np") as f:
        assert sorted(f.keys()) == sorted(new.tensors)
    assert sorted(os.listdir(tmp_path)) == ["model.safetensors", backup.name]  # no temp files left

    restore_header(path)
    assert file_bytes(path) == original


def test_in_place_swap_names_and_no_op(tmp_path):
    path = Path(shutil.copy(TRAIN_SAVE, tmp_path / "model.safetensors"))
    original = file_bytes(path)
    assert rewrite_header_in_place(path, {}) is None
    assert rewrite_header_in_place(path, {"lm_head.weight": "lm_head.weight"}) is None
    assert file_bytes(path) == original and not header_backup_path(path).exists()
    a, b = read_header(path).tensors["norm.weight"], read_header(path).tensors["layers.0.hidden_norm.weight"]
    rewrite_header_in_place(
        path, {"norm.weight": "layers.0.hidden_norm.weight", "layers.0.hidden_norm.weight": "norm.weight"}, backup=False
    )
    assert not header_backup_path(path).exists()
    h = read_header(path).tensors
    assert (h["layers.0.hidden_norm.weight"].offset, h["norm.weight"].offset) == (a.offset, b.offset)


def test_in_place_header_does_not_fit(tmp_path):
    path = Path(shutil.copy(TRAIN_SAVE, tmp_path / "model.safetensors"))
    original = file_bytes(path)
    with pytest.raises(HeaderDoesNotFit) as ei:
        rewrite_header_in_place(path, {"d2t": "d2t" + "x" * 20})
    assert isinstance(ei.value, CheckpointError) and "rewrite the file" in str(ei.value)
    assert file_bytes(path) == original
    assert os.listdir(tmp_path) == ["model.safetensors"]
    # Shorter names always fit (padding grows).
    rewrite_header_in_place(path, {"layers.0.mlp.up_proj.weight": "up"}, backup=False)
    assert "up" in read_header(path).tensors


def test_in_place_refusals(tmp_path):
    path = Path(shutil.copy(TRAIN_SAVE, tmp_path / "model.safetensors"))
    original = file_bytes(path)
    with pytest.raises(CheckpointError, match="no tensor named 'nope'"):
        rewrite_header_in_place(path, {"nope": "x"})
    with pytest.raises(CheckpointError, match="same name"):
        rewrite_header_in_place(path, {"d2t": "t2d"})
    with pytest.raises(CheckpointError, match="same name"):
        rewrite_header_in_place(path, {"d2t": "__metadata__"})
    assert file_bytes(path) == original and os.listdir(tmp_path) == ["model.safetensors"]


def test_restore_after_torn_header(tmp_path):
    """The case the backup exists for: the header write was cut short, leaving unparseable JSON."""
    path = Path(shutil.copy(TRAIN_SAVE, tmp_path / "model.safetensors"))
    original = file_bytes(path)
    renames = {n: n.replace("layers.0.", "midlayer.") for n in read_header(path).tensors if n.startswith("layers.0.")}
    rewrite_header_in_place(path, renames)
    new_header = file_bytes(path)[: read_header(path).data_start]
    torn = bytearray(original)
    half = len(new_header) // 2
    torn[:half] = new_header[:half]
    torn[half : half + 1] = b"\x00"  # make sure the JSON is broken whatever the overlap
    path.write_bytes(bytes(torn))
    with pytest.raises(CheckpointError):
        read_header(path)
    restore_header(path)
    assert file_bytes(path) == original


def test_restore_refuses_a_backup_that_does_not_belong(tmp_path):
    a = Path(shutil.copy(TRAIN_SAVE, tmp_path / "a.safetensors"))
    b = Path(shutil.copy(FP32, tmp_path / "b.safetensors"))
    rewrite_header_in_place(a, {"d2t": "d2u"})
    before_b = file_bytes(b)
    with pytest.raises(CheckpointError, match="another length|different data"):
        restore_header(b, header_backup_path(a))
    # A backup of the same length whose layout differs (t2d as U8 instead of BOOL) is refused too.
    c = Path(shutil.copy(TRAIN_SAVE, tmp_path / "c.safetensors"))
    hc = read_header(c)
    obj = json.loads(file_bytes(c)[8 : hc.data_start])
    obj["t2d"]["dtype"] = "U8"
    bogus = json.dumps(obj, separators=(",", ":")).encode().ljust(hc.header_len, b" ")
    header_backup_path(c).write_bytes(file_bytes(c)[:8] + bogus)
    before_c = file_bytes(c)
    with pytest.raises(CheckpointError, match="different data"):
        restore_header(c)
    assert file_bytes(c) == before_c
    assert file_bytes(b) == before_b
    # An incomplete backup is refused.
    bk = header_backup_path(a)
    bk.write_bytes(bk.read_bytes()[:-10])
    with pytest.raises(CheckpointError, match="incomplete"):
        restore_header(a)


# ---------------------------------------------------------------------------------------------
# Bounded memory


def test_peak_rss_bounded_on_a_big_checkpoint(tmp_path):
    """A 320 MB checkpoint (one 256 MB tensor) is written and verified with < 64 MB peak RSS."""
    big = 256 << 20
    src = make_safetensors(
        tmp_path / "src.safetensors",
        [
            ("d2t", "I64", (1000,), np.arange(1000, dtype="<i8").tobytes(), 8000),
            ("layers.0.big.weight", "BF16", (big // 2,), None, big),
            ("layers.0.other.weight", "U8", (64 << 20,), None, 64 << 20),
        ],
    )
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from specbridge.checkpoint.safetensors import read_header\n"
        "from specbridge.checkpoint.write import OutTensor, write_checkpoint\n"
        "h = read_header(sys.argv[1])\n"
        "ts = [OutTensor(n.replace('layers.0.', 'midlayer.'), t, transform='i64->i32' if n == 'd2t' else None) for n, t in h.tensors.items()]\n"
        "r = write_checkpoint(Path(sys.argv[2]), ts, {}, verify=True)\n"
        "assert r.problems == [], r.problems\n"
        "assert 'numpy' not in sys.modules and 'torch' not in sys.modules\n"
        # VmHWM, not ru_maxrss: the latter inherits the (big) pytest parent's peak through fork+exec.
        "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')][0])\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC_DIR), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([sys.executable, "-c", code, str(src), str(tmp_path / "out")], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    peak_kib = int(r.stdout.strip())
    assert peak_kib < 64 * 1024, f"peak RSS {peak_kib} KiB"
    assert (tmp_path / "out" / "model.safetensors").stat().st_size > big
