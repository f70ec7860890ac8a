"""`convert` at copy speed, with its guarantees: the copy is checked while it runs, on a second thread
(what the kernel copied at both ends of every range, what our own loop copied byte for byte) instead of
re-reading and re-hashing source and destination afterwards; the report says
what was verified how; a terminal gets a progress bar, pipes and --json do not; an in-place rename
takes the typer-free fast path."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import SF_SGLANG, STORY, TINY_TARGET, run_cli

from specbridge.checkpoint import write as W
from specbridge.checkpoint.errors import CheckpointError
from specbridge.checkpoint.safetensors import read_header
from specbridge.checkpoint.write import OutTensor, write_checkpoint
from specbridge.cli import progress as P

TRAIN_SAVE = STORY / "model.safetensors"  # bf16, layers.0.*


def renamed(src):
    return [OutTensor(n.replace("layers.0.", "midlayer."), t) for n, t in read_header(src).tensors.items()]


def test_copy_is_verified_while_copying_not_by_rehashing(tmp_path, monkeypatch):
    """Every tensor copied from a local file is compared with its source during the copy: the blake2b
    re-read of source and destination is never run for them."""

    def no_rehash(*a):
        raise AssertionError("re-read and re-hashed after writing")

    monkeypatch.setattr(W, "_hash_range", no_rehash)
    tensors = renamed(TRAIN_SAVE)
    res = write_checkpoint(tmp_path / "out", tensors, {}, verify=True)
    assert res.problems == []
    assert f"{len(tensors)} tensor(s) read back whole and compared byte for byte with the source" in res.verified  # all < 128 KiB
    monkeypatch.undo()
    assert W.verify_written(tmp_path / "out", tensors) == []  # the independent full check agrees


@pytest.mark.parametrize("where", ["first byte", "last byte"])
def test_a_corrupted_copy_is_caught_and_nothing_is_placed(tmp_path, monkeypatch, where):
    """The kernel copy is trusted for nothing: a byte changed on its way to the destination fails the write."""
    real = os.copy_file_range
    target = next(t for t in renamed(TRAIN_SAVE) if t.name == "fc.weight")

    def corrupting(src_fd, dst_fd, count, src_off, dst_off):
        n = real(src_fd, dst_fd, count, src_off, dst_off)
        if src_off == target.source.offset:  # fc.weight's range
            at = dst_off if where == "first byte" else dst_off + n - 1
            with open(f"/proc/self/fd/{dst_fd}", "r+b") as f:  # dst is write-only: flip through a second descriptor
                f.seek(at)
                b = f.read(1)
                f.seek(at)
                f.write(bytes([b[0] ^ 0xFF]))
        return n

    monkeypatch.setattr(W.os, "copy_file_range", corrupting)
    at = 0 if where == "first byte" else target.nbytes - 1
    with pytest.raises(CheckpointError, match=rf"fc\.weight: bytes differ from source .*\(first at byte {at}\)"):
        write_checkpoint(tmp_path / "out", renamed(TRAIN_SAVE), {}, verify=True)
    assert os.listdir(tmp_path) == []


def big_source(tmp_path):
    """One 1 MiB tensor: larger than the two 64 KiB ends a kernel-copied range is compared at."""
    data = bytes(range(256)) * 4096
    hdr = json.dumps({"w": {"dtype": "U8", "shape": [len(data)], "data_offsets": [0, len(data)]}}).encode()
    hdr += b" " * (-len(hdr) % 8)
    src = tmp_path / "big.safetensors"
    src.write_bytes(len(hdr).to_bytes(8, "little") + hdr + data)
    return [OutTensor("w", t) for t in read_header(src).tensors.values()]


def flipping(real, at_in_range):
    """copy_file_range that flips one byte of what it wrote, `at_in_range(n)` bytes into the range."""

    def copy(src_fd, dst_fd, count, src_off, dst_off):
        n = real(src_fd, dst_fd, count, src_off, dst_off)
        with open(f"/proc/self/fd/{dst_fd}", "r+b") as f:
            f.seek(dst_off + at_in_range(n))
            b = f.read(1)
            f.seek(dst_off + at_in_range(n))
            f.write(bytes([b[0] ^ 0xFF]))
        return n

    return copy


def test_kernel_copied_ranges_are_compared_at_both_ends(tmp_path, monkeypatch):
    tensors = big_source(tmp_path)
    res = write_checkpoint(tmp_path / "ok", tensors, {}, verify=True)
    assert res.verified.startswith("1 tensor(s) copied by the kernel (every byte or an error), each copied range's first and last 64 KiB")
    for where, at in (("start", lambda n: 3), ("end", lambda n: n - 5)):
        monkeypatch.setattr(W.os, "copy_file_range", flipping(os.copy_file_range, at))
        with pytest.raises(CheckpointError, match=r"w: bytes differ from source .*\(first at byte \d+\)"):
            write_checkpoint(tmp_path / where, tensors, {}, verify=True)
        monkeypatch.undo()


def test_ranges_copied_through_memory_are_compared_whole(tmp_path, monkeypatch):
    """Where the kernel cannot copy (EXDEV, EINVAL …), our own loop does, and every byte is compared."""
    import errno

    def unsupported(*a):
        raise OSError(errno.EXDEV, "cross-device")

    tensors = big_source(tmp_path)
    monkeypatch.setattr(W.os, "copy_file_range", unsupported)
    monkeypatch.setattr(W.os, "sendfile", unsupported)
    real_pwrite = W._pwrite_all

    def corrupt_middle(fd, data, offset):
        data = bytearray(data)
        if len(data) > 1 << 19:  # the tensor's bytes, not the header
            data[len(data) // 2] ^= 0xFF
        real_pwrite(fd, data, offset)

    res = write_checkpoint(tmp_path / "ok", tensors, {}, verify=True)
    assert res.verified.startswith("1 tensor(s) read back whole and compared byte for byte")
    monkeypatch.setattr(W, "_pwrite_all", corrupt_middle)
    with pytest.raises(CheckpointError, match=r"w: bytes differ from source .*\(first at byte 524288\)"):
        write_checkpoint(tmp_path / "bad", tensors, {}, verify=True)


def test_checker_failure_fails_the_write(tmp_path, monkeypatch):
    """If the checker cannot read back (here: the source vanishes under it), the write fails, never passes unchecked."""

    def unreadable(self, path, *a):
        raise OSError(5, "Input/output error", str(path))

    monkeypatch.setattr(W.CopyChecks, "_read", unreadable)
    with pytest.raises(CheckpointError, match="Input/output error"):
        write_checkpoint(tmp_path / "out", renamed(TRAIN_SAVE), {}, verify=True)
    assert os.listdir(tmp_path) == []


def test_convert_says_what_was_verified_how(tmp_path):
    r = run_cli("convert", STORY, "--engine", "sglang==0.5.11", "-o", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert "verified: 16/16 tensors: 16 tensor(s) read back whole and compared byte for byte with the source" in r.stdout
    j = run_cli("convert", STORY, "--engine", "sglang==0.5.11", "-o", tmp_path / "out2", "--json")
    obj = json.loads(j.stdout)
    assert "compared byte for byte" in obj["verified"] and obj["verify_problems"] == [] and j.stderr == ""  # no bar on a pipe
    shutil.copytree(STORY, tmp_path / "ip")
    ip = run_cli("convert", tmp_path / "ip", "--engine", "sglang==0.5.11", "--in-place", "--no-backup", "--json")
    assert json.loads(ip.stdout)["verified"].startswith("header re-read")


class FakeTTY(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_on_a_terminal_after_a_second(monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(P.time, "monotonic", lambda: clock[0])
    tty = FakeTTY()
    with P.CopyProgress(4 << 30, "convert → out[/]", stream=tty) as bar:
        bar(1 << 30)
        assert tty.getvalue() == ""  # under a second: nothing drawn
        clock[0] = 2.0
        bar(1 << 30)
        assert bar._bar is not None and bar.done == 2 << 30
    quiet = io.StringIO()  # a pipe
    with P.CopyProgress(4 << 30, "x", stream=quiet) as bar:
        clock[0] = 10.0
        bar(1 << 30)
    assert quiet.getvalue() == "" and bar._bar is None


def test_progress_bar_shows_bytes_rate_and_time_left(monkeypatch):
    monkeypatch.setattr(P, "SHOW_AFTER_S", 0.0)
    bar = P.CopyProgress(1 << 30, "convert", stream=FakeTTY())
    bar(1 << 20)
    columns = [type(c).__name__ for c in bar._bar.columns]
    bar._bar.stop()
    assert {"DownloadColumn", "TransferSpeedColumn", "TimeRemainingColumn"} <= set(columns)


def test_in_place_rename_takes_the_fast_path_without_typer(tmp_path):
    shutil.copytree(SF_SGLANG, tmp_path / "d")
    r = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-m",
            "specbridge.cli.entry",
            "convert",
            str(tmp_path / "d"),
            "--to",
            "speculators",
            "--in-place",
            "--no-backup",
            "--target",  # the verifier a speculators config needs (the drafter records none)
            str(TINY_TARGET),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode in (0, 1), r.stderr
    assert "in-place header" in r.stdout
    imported = {line.split("|")[-1].strip() for line in r.stderr.splitlines() if line.startswith("import time:")}
    assert not {"typer", "pydantic", "click", "rich", "torch", "numpy"} & imported


def test_fast_paths_and_typer_are_declared_once():
    """inspect/check/convert: the fast path and the typer command are built from the same optspec rows, so
    they accept exactly the same options (and the same positional argument)."""
    import typer.main

    from specbridge.cli.main import app
    from specbridge.cli.optspec import OPTIONS, parse_fast

    commands = typer.main.get_command(app).commands
    for name, rows in OPTIONS.items():
        cmd = commands[name]
        typer_opts = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts) if o.startswith("-")} - {"--help", "-h"}
        assert typer_opts == {f for r in rows for f in r.flags}, name
        assert [p.name for p in cmd.params] == [r.dest for r in rows], name  # same parameters, same order
        assert parse_fast(name, ["/x", "--bogus"]) is None  # anything else is typer's to explain
