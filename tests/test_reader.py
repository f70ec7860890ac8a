"""The checkpoint reader: real fixtures parse; every malformed input is refused with one clear line."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from conftest import ALL_PRODUCERS, SF_SGLANG, SPEC_TRAIN, STORY, raw_tensors, run_cli, write_raw

from specbridge.checkpoint.errors import CheckpointError
from specbridge.checkpoint.reader import open_checkpoint
from specbridge.checkpoint.safetensors import read_header


@pytest.mark.parametrize("path", ALL_PRODUCERS + [STORY], ids=lambda p: p.name)
def test_fixture_headers_match_safetensors_library(path):
    safetensors = pytest.importorskip("safetensors")
    ck = open_checkpoint(path)
    with safetensors.safe_open(str(path / "model.safetensors"), framework="numpy") as f:
        names = set(f.keys())
    assert names == set(ck.tensors)
    # byte ranges are contiguous and cover the file exactly
    infos = sorted(ck.tensors.values(), key=lambda t: t.offset)
    end = infos[0].offset
    for t in infos:
        assert t.offset == end
        end += t.nbytes
    assert end == (path / "model.safetensors").stat().st_size


def test_sharded_checkpoint(tmp_path):
    tensors = raw_tensors(SPEC_TRAIN)
    names = list(tensors)
    a, b = names[: len(names) // 2], names[len(names) // 2 :]
    write_raw(tmp_path / "model-00001-of-00002.safetensors", {n: tensors[n] for n in a})
    write_raw(tmp_path / "model-00002-of-00002.safetensors", {n: tensors[n] for n in b})
    wmap = {n: "model-00001-of-00002.safetensors" for n in a} | {n: "model-00002-of-00002.safetensors" for n in b}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": wmap}))
    (tmp_path / "config.json").write_text((SPEC_TRAIN / "config.json").read_text())
    ck = open_checkpoint(tmp_path)
    assert ck.storage == "safetensors-sharded"
    assert set(ck.tensors) == set(names)
    assert all(ck.tensors[n].read_bytes() == tensors[n][2] for n in names)


def _header_file(path: Path, header: bytes, data: bytes = b"") -> Path:
    path.write_bytes(struct.pack("<Q", len(header)) + header + data)
    return path


def _dir_with(tmp_path: Path, weights: bytes | None = None, name="model.safetensors", config=True) -> Path:
    d = tmp_path / "ckpt"
    d.mkdir()
    if weights is not None:
        (d / name).write_bytes(weights)
    if config:
        (d / "config.json").write_text((SF_SGLANG / "config.json").read_text())
    return d


def _good_bytes() -> bytes:
    return (SF_SGLANG / "model.safetensors").read_bytes()


def _hdr(obj) -> bytes:
    return json.dumps(obj).encode()


BAD_INPUTS = {
    "truncated": lambda: _good_bytes()[:-100],
    "header_past_end": lambda: struct.pack("<Q", 10_000_000) + b"{}",
    "tiny_file": lambda: b"\x01\x02",
    "overlapping": lambda: (
        struct.pack("<Q", 160)
        + _hdr(
            {"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}, "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}}
        ).ljust(160)
        + b"\0" * 24
    ),
    "unknown_dtype": lambda: (
        struct.pack("<Q", 80) + _hdr({"a": {"dtype": "Q7", "shape": [4], "data_offsets": [0, 4]}}).ljust(80) + b"\0" * 4
    ),
    "invalid_json": lambda: struct.pack("<Q", 16) + b'{"a": [1, 2,,]} ',
    "non_utf8": lambda: struct.pack("<Q", 8) + b'{"\xff\xfe":1}',
    "size_mismatch": lambda: (
        struct.pack("<Q", 80) + _hdr({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 8]}}).ljust(80) + b"\0" * 8
    ),
    "hole": lambda: struct.pack("<Q", 80) + _hdr({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}).ljust(80) + b"\0" * 8,
    "claims_100GB": lambda: (
        struct.pack("<Q", 96)
        + _hdr({"a": {"dtype": "F32", "shape": [25_000_000_000], "data_offsets": [0, 100_000_000_000]}}).ljust(96)
        + b"\0" * 64
    ),
    "huge_shape_small_span": lambda: (
        struct.pack("<Q", 96) + _hdr({"a": {"dtype": "BF16", "shape": [10**12, 10**12], "data_offsets": [0, 8]}}).ljust(96) + b"\0" * 8
    ),
    "not_object": lambda: struct.pack("<Q", 8) + b"[1,2,3] ",
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_safetensors_exit_2_one_line(tmp_path, case):
    d = _dir_with(tmp_path, BAD_INPUTS[case]())
    for cmd in ("inspect", "check"):
        r = run_cli(cmd, d, timeout=30)
        assert r.returncode == 2, (case, cmd, r.stdout, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("specbridge: error: "), r.stderr
        assert "Traceback" not in r.stderr and "model.safetensors" in lines[0]
        assert r.stdout == ""  # each within run_cli's timeout: no hang


def test_100gb_claim_refused_without_allocation(tmp_path):
    import resource

    f = tmp_path / "x.safetensors"
    f.write_bytes(BAD_INPUTS["claims_100GB"]())
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(CheckpointError, match="run past the data section"):
        read_header(f)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50_000  # KiB


@pytest.mark.parametrize(
    "case,setup,needle",
    [
        ("missing_config", lambda tmp: _dir_with(tmp, _good_bytes(), config=False), "no config.json"),
        ("no_weights", lambda tmp: _dir_with(tmp, None), "no weights found"),
        ("bin_only", lambda tmp: _dir_with(tmp, b"\x80\x02cos\nsystem\n.", name="pytorch_model.bin"), "never unpickled"),
        ("bin_file", lambda tmp: _header_file(tmp / "pytorch_model.bin", b"x"), "never unpickled"),
        ("nonexistent", lambda tmp: tmp / "nope", "no such file"),
        ("bad_config_json", lambda tmp: _bad_config(tmp), "invalid JSON"),
        ("index_escapes", lambda tmp: _bad_index(tmp, "../outside.safetensors"), "outside the checkpoint"),
        ("index_absolute", lambda tmp: _bad_index(tmp, "/etc/passwd"), "outside the checkpoint"),
        ("index_missing_shard", lambda tmp: _bad_index(tmp, "gone.safetensors"), "does not exist"),
    ],
)
def test_unusable_inputs_exit_2(tmp_path, case, setup, needle):
    p = setup(tmp_path)
    r = run_cli("check", p, "--engine", "sglang")
    assert r.returncode == 2, r.stderr
    assert needle in r.stderr and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def _bad_config(tmp):
    d = _dir_with(tmp, _good_bytes())
    (d / "config.json").write_text('{"architectures": [')
    return d


def _bad_index(tmp, shard):
    d = _dir_with(tmp, None)
    (d / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {"fc.weight": shard}}))
    return d


def test_symlinked_shard_leaving_dir_refused(tmp_path):
    outside = tmp_path / "outside.safetensors"
    outside.write_bytes(_good_bytes())
    d = _dir_with(tmp_path, None)
    (d / "shard.safetensors").symlink_to(outside)
    (d / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {"fc.weight": "shard.safetensors"}}))
    r = run_cli("inspect", d)
    assert r.returncode == 2 and "outside the checkpoint" in r.stderr


def test_pickle_is_never_executed(tmp_path):
    import pickle

    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    d = _dir_with(tmp_path, pickle.dumps(Evil()), name="pytorch_model.bin")
    r = run_cli("inspect", d)
    assert r.returncode == 2 and not marker.exists()
