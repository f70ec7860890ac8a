"""convert: every producer fixture to every layout, round trips, in place, and refusals."""

from __future__ import annotations

import json
import os
import shutil
import struct

import pytest
from conftest import ALL_PRODUCERS, SF_HF, SF_SGLANG, SPEC_CONVERT, SPEC_TRAIN, STORY, TINY_TARGET, mutate, raw_tensors, run_cli, tree_state

from specbridge.checkpoint.reader import open_checkpoint
from specbridge.layouts.canonical import describe
from specbridge.layouts.table import LAYOUTS
from specbridge.rules.check import check
from specbridge.view import open_view

LAYOUT_ENGINE = {"speculators": "vllm", "sglang": "sglang==0.5.11", "vllm": "vllm", "eagle": "vllm", "trtllm": "trtllm", "nemo": None}


def convert(*args):
    r = run_cli("convert", *args, "--json")
    return r, (json.loads(r.stdout) if r.stdout.strip().startswith("{") else None)


def verifier_for(layout: str) -> tuple:
    """The story drafter records no verifier: a speculators config needs one (vLLM refuses it without), --target gives it."""
    return ("--target", TINY_TARGET) if layout == "speculators" else ()


def tensor_bytes(path):
    return {n: (dt, sh, data) for n, (dt, sh, data) in raw_tensors(path).items()}


def canonical_bytes(path):
    ck = open_checkpoint(path)
    d = describe(ck)
    return {c: (t.dtype, t.shape, t.read_bytes()) for c, t in d.tensors.items()}


@pytest.mark.parametrize("src", ALL_PRODUCERS, ids=lambda p: f"{p.parent.name}/{p.name}")
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_every_fixture_to_every_layout(tmp_path, src, layout):
    dst = tmp_path / "out"
    r, obj = convert(src, "--to", layout, "-o", dst, "--target", TINY_TARGET)
    assert obj is not None, r.stderr
    assert obj["verify_problems"] == []
    d = describe(open_checkpoint(dst))
    assert d.layout == layout, d.evidence
    # the canonical content is unchanged (bytes, dtypes, shapes), whatever the layout
    before, after = canonical_bytes(src), canonical_bytes(dst)
    for name, (dt, sh, data) in after.items():
        assert before[name] == (dt, sh, data), name
    assert set(before) - set(after) <= {"t2d"} if layout == "trtllm" else set(before) == set(after)
    engine = LAYOUT_ENGINE[layout]
    if engine:
        [res] = check(open_view(dst), engine, str(dst))  # load-level: what the engine will do
        assert res.ok, [(f.code, f.message) for f in res.findings if f.severity == "error"]
    assert obj["ok"] is True or layout in ("eagle",), obj["check"] and [f for f in obj["check"]["findings"] if f["severity"] == "error"]


@pytest.mark.parametrize("layout", ["sglang", "vllm", "speculators", "trtllm"])
def test_aux_layers_survive_conversion(tmp_path, layout):
    """With the target known, the converted checkpoint feeds the engine the layers it was trained on."""
    for src in (SPEC_TRAIN, SF_SGLANG):
        dst = tmp_path / f"{src.name}-{layout}"
        r, obj = convert(src, "--to", layout, "-o", dst, "--target", TINY_TARGET)
        engine = {"speculators": "vllm", "sglang": "sglang", "vllm": "vllm", "trtllm": "trtllm"}[layout]
        from specbridge.checkpoint.target import open_target

        [res] = check(open_view(dst), engine, str(dst), target=open_target(TINY_TARGET))
        assert res.aux["fed"] == res.aux["trained"] == [1, 2, 3], (src.name, res.aux)
        assert res.ok, [(f.code, f.message) for f in res.findings if f.severity == "error"]


def test_round_trip_speculators_sglang_speculators_byte_identical(tmp_path):
    a, b = tmp_path / "sgl", tmp_path / "back"
    assert convert(SPEC_TRAIN, "--to", "sglang", "-o", a)[0].returncode == 0
    r, obj = convert(a, "--to", "speculators", "-o", b)
    assert r.returncode == 0, r.stdout + r.stderr
    assert tensor_bytes(b) == tensor_bytes(SPEC_TRAIN)
    cfg = json.loads((b / "config.json").read_text())
    src = json.loads((SPEC_TRAIN / "config.json").read_text())
    for k in ("draft_vocab_size", "eagle_aux_hidden_state_layer_ids", "norm_before_residual", "norm_before_fc", "fc_norm", "norm_output"):
        assert cfg[k] == src[k], k
    assert cfg["speculators_config"]["verifier"] == src["speculators_config"]["verifier"]
    assert cfg["transformer_layer_config"]["hidden_size"] == 64


def test_story_fix_for_sglang_0_5_11(tmp_path):
    dst = tmp_path / "fixed"
    r, obj = convert(STORY, "--engine", "sglang==0.5.11", "-o", dst)
    assert r.returncode == 0, r.stdout
    assert len(obj["renamed"]) == 10 and all(new.startswith("midlayer.") for _, new in obj["renamed"])
    assert obj["check"]["ok"] and obj["check"]["load"]["missing"] == []
    human = run_cli("convert", STORY, "--engine", "sglang==0.5.11", "-o", tmp_path / "h").stdout
    assert "renamed 10: layers.0.* → midlayer.*" in human and "unchanged 6: d2t, embed_tokens.weight" in human
    assert "check sglang==0.5.11: OK" in human


def test_in_place_header_rename_keeps_data_and_backup(tmp_path):
    d = tmp_path / "story"
    shutil.copytree(STORY, d)
    os.chmod(d / "model.safetensors", 0o640)
    before = (d / "model.safetensors").read_bytes()
    r, obj = convert(d, "--engine", "sglang==0.5.11", "--in-place")
    assert r.returncode == 0 and obj["method"] == "in-place header", r.stdout
    after = (d / "model.safetensors").read_bytes()
    assert len(after) == len(before)
    hl = struct.unpack("<Q", before[:8])[0]
    assert after[8 + hl :] == before[8 + hl :]  # the data section is untouched
    assert (d / "model.safetensors.specbridge-header-backup").is_file()
    assert (d / "config.json.specbridge-backup").read_bytes() == (STORY / "config.json").read_bytes()
    assert os.stat(d / "model.safetensors").st_mode & 0o777 == 0o640
    # idempotent
    r2, obj2 = convert(d, "--engine", "sglang==0.5.11", "--in-place")
    assert r2.returncode == 0 and obj2["method"] == "unchanged"
    assert (d / "model.safetensors").read_bytes() == after


def test_in_place_full_rewrite_keeps_backup_dir(tmp_path):
    d = tmp_path / "sf"
    shutil.copytree(SF_SGLANG, d)
    (d / "README.md").write_text("mine")
    (d / "tokenizer").mkdir()
    (d / "tokenizer" / "tokenizer.json").write_text("{}")
    r, obj = convert(d, "--to", "trtllm", "--in-place")  # drops t2d: not a names-only change
    assert r.returncode == 0 and obj["method"] == "rewrite", r.stdout
    backups = [p for p in tmp_path.iterdir() if ".specbridge-backup-" in p.name]
    assert len(backups) == 1 and tensor_bytes(backups[0]) == tensor_bytes(SF_SGLANG)
    assert "t2d" not in tensor_bytes(d)
    assert (d / "README.md").read_text() == "mine" and (d / "tokenizer" / "tokenizer.json").exists()  # the rest comes along
    assert (backups[0] / "README.md").exists()


# header renames only; a full rewrite after renames; renames after a full rewrite; full rewrites only
IN_PLACE_RUNS = [
    ("sglang", "speculators"),
    ("sglang", "speculators", "sglang"),
    ("sglang", "trtllm", "sglang"),
    ("trtllm", "sglang", "speculators"),
]


@pytest.mark.parametrize("layouts", IN_PLACE_RUNS, ids=lambda r: "-".join(r))
def test_in_place_runs_keep_one_backup_of_the_original_and_restore_puts_it_back(tmp_path, layouts):
    """Issue #23: two in-place runs left the config backup holding the original but the header backup the
    intermediate midlayer.* header. Now the first run's backup set is kept by every later one, and
    `restore` puts the original back byte for byte (every file, its mode, nothing else left behind)."""
    d = tmp_path / "story"
    shutil.copytree(STORY, d)
    os.chmod(d / "model.safetensors", 0o640)
    original = tree_state(d)
    first_set = None
    for i, layout in enumerate(layouts):
        r, obj = convert(d, "--to", layout, "--in-place", *verifier_for(layout))
        assert obj is not None and obj["method"] in ("in-place header", "rewrite"), r.stderr
        assert obj["backup"] and obj["backup_kept"] is (i > 0), obj
        siblings = sorted(p.name for p in tmp_path.iterdir() if p.name != "story")
        assert len(siblings) <= 1 and all(".specbridge-backup-" in n for n in siblings), siblings  # one set, nothing hidden left
        backup_set = {n: v for n, v in tree_state(d).items() if ".specbridge-" in n}
        if siblings:
            assert not backup_set  # one set: the directory, no files inside as well
            assert tree_state(tmp_path / siblings[0]) == original  # the directory is the original itself
            backup_set = siblings
        else:
            assert backup_set["config.json.specbridge-backup"][1] == original["config.json"][1]
            hb = backup_set.get("model.safetensors.specbridge-header-backup")
            assert hb is not None and original["model.safetensors"][1].startswith(hb[1])  # the original header
        if first_set is not None and isinstance(first_set, dict) and isinstance(backup_set, dict):
            assert backup_set == first_set, f"run {i + 1} ({layout}) changed the backup"
        first_set = backup_set
    human = run_cli("restore", d)
    assert human.returncode == 0 and f"restored {d}" in human.stdout, human.stderr
    assert tree_state(d) == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["story"]
    again = run_cli("restore", d, "--json")
    assert again.returncode == 2 and "nothing to restore" in again.stderr and json.loads(again.stdout)["ok"] is False


def test_restore_after_no_backup_run_and_refusals(tmp_path):
    """--no-backup on a later run keeps the first run's backup (it holds the original); restore takes a
    file of the checkpoint as convert does; a checkpoint
    never converted in place, or a missing one, is refused with exit 2; a header backup of another
    file is refused before any work."""
    d = tmp_path / "story"
    shutil.copytree(STORY, d)
    original = tree_state(d)
    assert convert(d, "--to", "sglang", "--in-place")[0].returncode == 0
    r, obj = convert(d, "--to", "speculators", "--in-place", "--no-backup", "--target", TINY_TARGET)
    assert r.returncode in (0, 1) and obj["backup_kept"] is True, r.stderr
    r = run_cli("restore", d / "config.json", "--json")  # a file of the checkpoint names its directory, as in convert
    assert r.returncode == 0 and json.loads(r.stdout)["kind"] == "files" and json.loads(r.stdout)["path"] == str(d), r.stderr
    assert tree_state(d) == original
    for p in (tmp_path / "nope", STORY):
        r = run_cli("restore", p)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    # a header backup that describes other data is refused by convert (nothing written) and by restore
    shutil.copy(SF_SGLANG / "model.safetensors", d / "model.safetensors.specbridge-header-backup")
    before = tree_state(d)
    r, _ = convert(d, "--to", "sglang", "--in-place")
    assert r.returncode == 2 and "header backup" in r.stderr and tree_state(d) == before, r.stderr
    r = run_cli("restore", d)
    assert r.returncode == 2 and "header backup" in r.stderr and tree_state(d) == before, r.stderr


def test_refuses_existing_destination_without_force(tmp_path):
    dst = tmp_path / "out"
    dst.mkdir()
    (dst / "keep.txt").write_text("mine")
    r = run_cli("convert", SF_SGLANG, "--to", "vllm", "-o", dst)
    assert r.returncode == 2 and "exists" in r.stderr and (dst / "keep.txt").read_text() == "mine"  # an unusable request
    r = run_cli("convert", SF_SGLANG, "--to", "vllm", "-o", dst, "--force")
    assert r.returncode == 0 and not (dst / "keep.txt").exists()


def test_output_is_what_the_layout_needs(tmp_path):
    # trtllm drops t2d; converting back derives it from d2t, equal to the original
    a, b = tmp_path / "trt", tmp_path / "spec"
    convert(SF_SGLANG, "--to", "trtllm", "-o", a)
    assert "t2d" not in tensor_bytes(a)
    r, obj = convert(a, "--to", "speculators", "-o", b, "--target", TINY_TARGET)
    assert any(n == "t2d" and "derived" in why for n, why in obj["added"])
    assert tensor_bytes(b)["t2d"] == tensor_bytes(SF_SGLANG)["t2d"]


def test_dtype_preserved_and_int32_vocab_map_widened(tmp_path):
    a = tmp_path / "fp32"
    convert(SPEC_CONVERT, "--to", "sglang", "-o", a)
    assert {dt for dt, _, _ in tensor_bytes(a).values()} == {dt for dt, _, _ in tensor_bytes(SPEC_CONVERT).values()}
    assert json.loads((a / "config.json").read_text())["torch_dtype"] == "float32"
    vals = struct.unpack("<128q", tensor_bytes(SF_SGLANG)["d2t"][2])
    i32 = mutate(SF_SGLANG, tmp_path / "i32", tensors=lambda t: {**t, "d2t": ("I32", [128], struct.pack("<128i", *vals))})
    r, obj = convert(i32, "--to", "vllm", "-o", tmp_path / "o")
    d2t = tensor_bytes(tmp_path / "o")["d2t"]
    assert d2t[0] == "I64" and struct.unpack("<128q", d2t[2]) == vals


def test_full_vocab_drops_vocab_maps_for_vllm(tmp_path):
    def full(t):
        out = dict(t)
        dt, (v, h), data = t["embed_tokens.weight"]
        out["lm_head.weight"] = (dt, [v, h], data)
        out["d2t"] = ("I64", [v], struct.pack(f"<{v}q", *([0] * v)))
        out["t2d"] = ("BOOL", [v], b"\x01" * v)
        return out

    src = mutate(SF_HF, tmp_path / "full", tensors=full, config=lambda c: c.update(draft_vocab_size=512))
    [before] = check(open_view(src), "vllm")
    assert not before.ok
    r, obj = convert(src, "--engine", "vllm", "-o", tmp_path / "o")
    assert r.returncode == 0 and {n for n, _ in obj["dropped"]} == {"d2t", "t2d"}
    assert obj["check"]["ok"]


def test_bad_inputs_write_nothing(tmp_path):
    out = tmp_path / "out"
    r = run_cli("convert", SF_SGLANG, "--to", "onnx", "-o", out)
    assert r.returncode == 2 and "unknown layout" in r.stderr and not out.exists()
    tgt = tmp_path / "t"
    tgt.mkdir()
    cfg = json.loads((TINY_TARGET / "config.json").read_text())
    cfg["vocab_size"] = 1000
    (tgt / "config.json").write_text(json.dumps(cfg))
    r = run_cli("convert", SF_SGLANG, "--to", "vllm", "-o", out, "--target", tgt)
    assert r.returncode == 1 and "vocab" in r.stderr and not out.exists()
    bad = tmp_path / "trunc"
    shutil.copytree(SF_SGLANG, bad)
    data = (bad / "model.safetensors").read_bytes()
    (bad / "model.safetensors").write_bytes(data[:-10])
    r = run_cli("convert", bad, "--to", "vllm", "-o", out)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and not out.exists()
    r = run_cli("convert", SF_SGLANG, "--to", "vllm")
    assert r.returncode == 2


def test_sharded_output(tmp_path):
    r, obj = convert(SPEC_TRAIN, "--to", "sglang", "-o", tmp_path / "o", "--shard-size", "40KB")
    assert r.returncode == 0
    assert (tmp_path / "o" / "model.safetensors.index.json").is_file()
    assert len(list((tmp_path / "o").glob("model-*.safetensors"))) > 1
    back = tmp_path / "b"
    convert(tmp_path / "o", "--to", "speculators", "-o", back)
    assert tensor_bytes(back) == tensor_bytes(SPEC_TRAIN)


def test_head_added_from_target_weights(tmp_path):
    """A drafter saved without lm_head (the Kimi-K2.6 case): SGLang would run a random head; convert
    with --target builds it from the target head's rows i + d2t[i]."""
    import random as _r

    rnd = _r.Random(0)
    head = bytes(rnd.getrandbits(8) & 0x3F for _ in range(512 * 64 * 2))
    tgt = tmp_path / "target"
    tgt.mkdir()
    (tgt / "config.json").write_text((TINY_TARGET / "config.json").read_text())
    from conftest import write_raw

    write_raw(
        tgt / "model.safetensors", {"lm_head.weight": ("BF16", [512, 64], head), "model.embed_tokens.weight": ("BF16", [512, 64], head)}
    )
    src = mutate(SF_SGLANG, tmp_path / "nohead", tensors=lambda t: {k: v for k, v in t.items() if k != "lm_head.weight"})
    [before] = check(open_view(src), "sglang")
    assert "lm_head.weight" in before.report.missing
    r, obj = convert(src, "--engine", "sglang", "-o", tmp_path / "o", "--target", tgt)
    assert r.returncode == 0, r.stdout + r.stderr
    assert any(n == "lm_head.weight" and "d2t" in why for n, why in obj["added"])
    assert obj["check"]["ok"] and obj["check"]["load"]["missing"] == []
    d2t = struct.unpack("<128q", tensor_bytes(SF_SGLANG)["d2t"][2])
    got = tensor_bytes(tmp_path / "o")["lm_head.weight"]
    row = 64 * 2
    assert got[1] == [128, 64] and got[2] == b"".join(head[(i + o) * row : (i + o + 1) * row] for i, o in enumerate(d2t))
    # without target weights: a warning, and the post-check says what SGLang will do
    r2, obj2 = convert(src, "--engine", "sglang", "-o", tmp_path / "o2")
    assert r2.returncode == 1 and any("no lm_head" in w for w in obj2["warnings"])
