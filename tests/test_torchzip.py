"""`pytorch_model.bin` drafters read without running their pickle: the same reports as the safetensors
twin, a byte-identical convert, and real malicious pickles refused with nothing executed.

torch (the `[ml]` extra) is used only to *write* fixtures with torch.save; the reader never imports it."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import SPEC_TRAIN, run_cli

from specbridge.checkpoint.errors import CheckpointError
from specbridge.checkpoint.reader import open_checkpoint
from specbridge.view import open_view

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.ml  # the ml tier: torch (./setup.sh --ml)


def _state_dict(d: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(d / "model.safetensors"))


@pytest.fixture(scope="module")
def twins(tmp_path_factory) -> tuple[Path, Path]:
    """The EAGLE research layout (midlayer.*, LlamaForCausalLM config) as safetensors, and its twin
    written by torch.save as pytorch_model.bin with the same config."""
    root = tmp_path_factory.mktemp("twins")
    st = root / "eagle-st"
    r = run_cli("convert", SPEC_TRAIN, "--to", "eagle", "-o", st)
    assert r.returncode == 0, r.stderr
    b = root / "eagle-bin"
    b.mkdir()
    shutil.copy(st / "config.json", b / "config.json")
    torch.save(_state_dict(st), b / "pytorch_model.bin")
    return st, b


def _json(*args) -> tuple[int, dict]:
    r = run_cli(*args, "--json")
    assert r.returncode in (0, 1), r.stderr
    return r.returncode, json.loads(r.stdout)


def test_bin_reader_runs_no_torch_and_no_pickle(twins):
    code = (
        "import sys, specbridge.checkpoint.reader as r; ck = r.open_checkpoint(sys.argv[1]); "
        "assert 'torch' not in sys.modules and 'pickle' not in sys.modules, sorted(m for m in sys.modules if 'pickle' in m or 'torch' in m); "
        "print(len(ck.tensors), ck.storage)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(twins[1])], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["16", "torch-zip"]


def test_bin_tensors_are_the_safetensors_bytes(twins):
    st, b = twins
    a, c = open_checkpoint(st), open_checkpoint(b)
    assert c.storage == "torch-zip" and c.weight_files == [b / "pytorch_model.bin"]
    assert set(a.tensors) == set(c.tensors)
    for name, t in a.tensors.items():
        u = c.tensors[name]
        assert (t.dtype, t.shape, t.nbytes) == (u.dtype, u.shape, u.nbytes), name
        assert t.read_bytes() == u.read_bytes(), name


@pytest.mark.parametrize("engine", ["sglang==0.5.11", "vllm", "all"])
def test_inspect_and_check_identical_to_the_twin(twins, engine):
    st, b = twins
    ca, ja = _json("check", st, "--engine", engine)
    cb, jb = _json("check", b, "--engine", engine)
    assert ca == cb
    assert json.loads(json.dumps(ja).replace(str(st), "CKPT")) == json.loads(json.dumps(jb).replace(str(b), "CKPT"))
    _, ia = _json("inspect", st)
    _, ib = _json("inspect", b)
    for k in ("path", "storage", "files"):
        ia.pop(k), ib.pop(k)
    assert ia == ib


def _tensor_hashes(d: Path) -> dict[str, str]:
    ck = open_checkpoint(d)
    return {n: hashlib.sha256(t.read_bytes()).hexdigest() + f"{t.dtype}{list(t.shape)}" for n, t in ck.tensors.items()}


def test_convert_bin_to_sglang_equals_converting_the_twin(twins, tmp_path):
    st, b = twins
    for src, dst in ((st, tmp_path / "a"), (b, tmp_path / "b")):
        r = run_cli("convert", src, "--to", "sglang", "-o", dst)
        assert r.returncode == 0, r.stderr + r.stdout
        assert "verified: 16/16 tensors" in r.stdout
    ha, hb = _tensor_hashes(tmp_path / "a"), _tensor_hashes(tmp_path / "b")
    assert ha == hb and len(ha) == 16
    assert json.loads((tmp_path / "a" / "config.json").read_text()) == json.loads((tmp_path / "b" / "config.json").read_text())


class _Shell:
    """Unpickling this runs a shell command (what a poisoned checkpoint does)."""

    def __init__(self, cmd: str):
        self.cmd = cmd

    def __reduce__(self):
        return (os.system, (self.cmd,))


class _Eval:
    def __init__(self, expr: str):
        self.expr = expr

    def __reduce__(self):
        return (eval, (self.expr,))  # pickled as __builtin__.eval at protocol 2


def _poisoned(d: Path, marker: Path, kind: str) -> Path:
    d.mkdir()
    shutil.copy(SPEC_TRAIN / "config.json", d / "config.json")
    sd = dict(_state_dict(SPEC_TRAIN))
    payload = _Shell(f"touch {marker}") if kind == "os.system" else _Eval(f"open({str(marker)!r}, 'w').close()")
    sd["layers.0.mlp.up_proj.weight"] = payload  # in the middle: everything before it parses fine
    torch.save(sd, d / "pytorch_model.bin")
    return d


@pytest.mark.parametrize("kind,global_name", [("os.system", "posix.system"), ("eval", "__builtin__.eval")])
def test_malicious_pickle_refused_and_nothing_runs(tmp_path, kind, global_name):
    marker = tmp_path / "pwned"
    d = _poisoned(tmp_path / "evil", marker, kind)
    for args in (("inspect", d), ("check", d, "--engine", "vllm"), ("convert", d, "--to", "sglang", "-o", tmp_path / "out")):
        r = run_cli(*args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and global_name in r.stderr and "nothing was executed" in r.stderr
        assert not marker.exists(), f"{args[0]} executed the pickle"
    assert not (tmp_path / "out").exists()
    # the control: the same file really runs its payload when unpickled the ordinary way
    load = f"import torch; torch.load({str(d / 'pytorch_model.bin')!r}, weights_only=False)"
    subprocess.run([sys.executable, "-c", load], capture_output=True, check=False, timeout=120)
    assert marker.exists()


def test_legacy_non_zip_torch_file_refused(tmp_path):
    d = tmp_path / "legacy"
    d.mkdir()
    shutil.copy(SPEC_TRAIN / "config.json", d / "config.json")
    torch.save(_state_dict(SPEC_TRAIN), d / "pytorch_model.bin", _use_new_zipfile_serialization=False)
    r = run_cli("check", d, "--engine", "vllm")
    assert r.returncode == 2 and "legacy (pre-1.6, non-zip)" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_compressed_member_refused(tmp_path, twins):
    d = tmp_path / "deflated"
    d.mkdir()
    shutil.copy(twins[1] / "config.json", d / "config.json")
    with zipfile.ZipFile(twins[1] / "pytorch_model.bin") as src, zipfile.ZipFile(d / "pytorch_model.bin", "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info))
    with pytest.raises(CheckpointError, match="compressed"):
        open_checkpoint(d)


def test_strided_view_described_but_never_copied(tmp_path):
    d = tmp_path / "strided"
    d.mkdir()
    shutil.copy(SPEC_TRAIN / "config.json", d / "config.json")
    sd = dict(_state_dict(SPEC_TRAIN))
    w = sd["fc.weight"]
    sd["fc.weight"] = w.t().contiguous().t()  # same values, column-major storage
    torch.save(sd, d / "pytorch_model.bin")
    t = open_checkpoint(d).tensors["fc.weight"]
    assert t.shape == tuple(w.shape) and t.strides == (1, w.shape[0])
    with pytest.raises(CheckpointError, match="strided view"):
        t.read_bytes()
    r = run_cli("inspect", d, "--json")
    assert r.returncode == 0, r.stderr
    [fc] = [x for x in json.loads(r.stdout)["tensors"] if x["name"] == "fc.weight"]
    assert fc["strides"] == [1, w.shape[0]] and fc["shape"] == list(w.shape)
    r = run_cli("convert", d, "--to", "sglang", "-o", tmp_path / "out")
    assert r.returncode != 0 and "strided view" in r.stderr and not (tmp_path / "out").exists()


def test_shared_storage_and_offsets(tmp_path):
    """Tied weights (one storage, two names) and a view at a storage offset read as their own bytes."""
    base = torch.arange(24, dtype=torch.float32)
    sd = {"a": base[4:10], "b": base.view(4, 6), "c": base.view(4, 6)}
    f = tmp_path / "x.pt"
    torch.save(sd, f)
    from specbridge.checkpoint.reader import read_weights

    tensors, _ = read_weights(f)
    assert tensors["a"].read_bytes() == base[4:10].numpy().tobytes()
    assert tensors["b"].read_bytes() == tensors["c"].read_bytes() == base.numpy().tobytes()
    assert tensors["b"].offset == tensors["c"].offset


def test_sharded_bin_index(tmp_path, twins):
    sd = _state_dict(twins[0])
    names = list(sd)
    d = tmp_path / "sharded"
    d.mkdir()
    shutil.copy(twins[0] / "config.json", d / "config.json")
    halves = {"pytorch_model-00001-of-00002.bin": names[:8], "pytorch_model-00002-of-00002.bin": names[8:]}
    for fname, part in halves.items():
        torch.save({n: sd[n] for n in part}, d / fname)
    wmap = {n: f for f, part in halves.items() for n in part}
    (d / "pytorch_model.bin.index.json").write_text(json.dumps({"metadata": {}, "weight_map": wmap}))
    ck = open_checkpoint(d)
    assert ck.storage == "torch-zip-sharded" and set(ck.tensors) == set(names)
    assert all(ck.tensors[n].read_bytes() == open_checkpoint(twins[1]).tensors[n].read_bytes() for n in names)


def test_bin_over_the_hub_matches_local(twins, tmp_path):
    """A pytorch_model.bin on the Hub: the zip directory, pickle and local headers by range, nothing more."""
    pytest.importorskip("huggingface_hub")
    from hubserver import FakeHub, make_repo
    from test_hub import cli

    b = twins[1]
    with FakeHub({"org/eagle-bin": make_repo(b)}) as hub:
        r = cli(hub, tmp_path / "cache", "check", "org/eagle-bin", "--engine", "vllm", "--json")
        ranged = all(rng for m, p, rng in hub.stats.requests if p.endswith(".bin") and m == "GET")
    want = run_cli("check", b, "--engine", "vllm", "--json")
    assert r.returncode == want.returncode, r.stderr
    got = json.loads(r.stdout)
    assert got.pop("source")["hub"] == "org/eagle-bin"
    assert got == json.loads(want.stdout.replace(str(b), "org/eagle-bin"))
    assert ranged


@pytest.mark.parametrize(
    "stream,needle",
    [
        (b"\x80\x02c__builtin__\nobject\n)\x81.", "__builtin__.object"),  # NEWOBJ after a refused global
        (b"\x80\x02(ctorch._utils\n_rebuild_tensor_v2\no.", "opcode b'o'"),  # OBJ
        (b"(i__builtin__\nlist\n.", "opcode b'i'"),  # INST: constructs by name
        (b"\x80\x02\x82\x01.", "opcode b'\\x82'"),  # EXT1: copyreg extension registry
        (b"\x80\x02P1\n.", "opcode b'P'"),  # text persistent id
        (b"\x80\x02ctorch\nFloatStorage\n)R.", "is a type"),  # calling a storage type
    ],
)
def test_interpreter_refuses_everything_torch_never_writes(stream, needle):
    from specbridge.checkpoint.torchzip import _Refused, run_pickle

    with pytest.raises(_Refused, match=re.escape(needle)):
        run_pickle(stream)


def test_eval_builds_the_same_drafter_from_the_bin(twins):
    """eval's drafter from pytorch_model.bin: the storages' bytes through torch.frombuffer, equal to
    the safetensors twin's parameter for parameter."""
    pytest.importorskip("transformers")
    from conftest import TINY_TARGET
    from transformers import AutoConfig, AutoModelForCausalLM

    from specbridge.eval.load import build_drafter

    cfg = AutoConfig.from_pretrained(TINY_TARGET)
    target = AutoModelForCausalLM.from_config(cfg)
    built = [build_drafter(open_view(d), target, cfg.num_hidden_layers) for d in twins]
    sa, sb = (b.model.state_dict() for b in built)
    assert sa.keys() == sb.keys()
    for k in sa:  # exactly equal (parameters nothing fills are NaN in both)
        torch.testing.assert_close(sa[k], sb[k], rtol=0, atol=0, equal_nan=True, msg=k)
    assert built[0].boundaries == built[1].boundaries


def test_mutated_pickles_and_zips_only_ever_refuse(twins, tmp_path):
    """Any byte flipped, cut or inserted in data.pkl or the zip: a CheckpointError (exit 2) or a
    description, never another exception and never a call."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from specbridge.checkpoint.source import LocalSource
    from specbridge.checkpoint.torchzip import _Refused, read_torch_zip, run_pickle

    raw = (twins[1] / "pytorch_model.bin").read_bytes()
    with zipfile.ZipFile(twins[1] / "pytorch_model.bin") as z:
        pkl = z.read(next(n for n in z.namelist() if n.endswith("data.pkl")))
    f = tmp_path / "m.bin"

    def mutate(data: bytes, edits) -> bytes:
        b = bytearray(data)
        for pos, val, kind in edits:
            i = pos % max(1, len(b))
            if kind == 0 and b:
                b[i] = val
            elif kind == 1:
                b.insert(i, val)
            else:
                del b[i:]
        return bytes(b)

    edits = st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 255), st.integers(0, 2)), min_size=1, max_size=4)

    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
    @given(edits)
    def pickles(e):
        try:
            run_pickle(mutate(pkl, e))
        except (_Refused, UnicodeDecodeError):
            pass

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(edits)
    def zips(e):
        f.write_bytes(mutate(raw, e))
        try:
            read_torch_zip(LocalSource.of(f))
        except CheckpointError:
            pass

    pickles()
    zips()
