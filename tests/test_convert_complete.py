"""convert writes only configs the destination's engine loads (what it cannot fill is refused before anything is
written, in place included), and refuses a destination it cannot tell from the source."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from conftest import SF_HF, SF_SGLANG, SPEC_TRAIN, TINY_TARGET, mutate, run_cli, tree_state

from specbridge.checkpoint.errors import CheckpointError
from specbridge.convert.plan import plan_conversion
from specbridge.convert.run import _same_dir, execute
from specbridge.view import open_view

VERIFIER = "speculators_config.verifier.name_or_path"


def one_line_refusal(r) -> str:
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    return lines[0]


def test_a_speculators_config_without_its_verifier_is_refused_before_any_write(tmp_path, convert_json):
    """Before: exit 1 after writing a config vLLM raises on (verifier null, target_hidden_size null)."""
    out = tmp_path / "out"
    r = run_cli("convert", SF_SGLANG, "--to", "speculators", "-o", out)
    line = one_line_refusal(r)
    assert VERIFIER in line and "--target" in line and "vllm" in line, line
    assert not out.exists() and os.listdir(tmp_path) == []
    r, obj = convert_json(SF_SGLANG, "--to", "speculators", "-o", out)
    assert r.returncode == 2 and obj["ok"] is False and obj["error"]["exit_code"] == 2 and VERIFIER in obj["error"]["message"]


@pytest.mark.parametrize("backup", [(), ("--no-backup",)], ids=["backup", "no-backup"])
def test_in_place_refusal_leaves_the_tree_byte_identical(tmp_path, backup):
    """Before: the header was renamed, config.json replaced and backups made, then the post-check failed."""
    d = tmp_path / "sg"
    shutil.copytree(SF_SGLANG, d)
    (d / "tokenizer.json").write_bytes(b"{}")
    before = tree_state(tmp_path)  # the parent too: no backup directory beside it
    r = run_cli("convert", d, "--to", "speculators", "--in-place", *backup)
    assert VERIFIER in one_line_refusal(r)
    assert tree_state(tmp_path) == before


def test_the_converted_speculators_config_is_complete_for_vllm(tmp_path, convert_json):
    """--target fills the verifier; target_hidden_size is written as a number (fc input 192 = 3 × 64), never
    null; `check --engine vllm` on the output passes with no dispatch or build error."""
    out = tmp_path / "out"
    r, obj = convert_json(SF_SGLANG, "--to", "speculators", "-o", out, "--target", TINY_TARGET)
    assert r.returncode == 0 and obj["ok"], r.stderr
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["speculators_config"]["verifier"] == {"name_or_path": str(TINY_TARGET), "architectures": ["LlamaForCausalLM"]}
    assert cfg["target_hidden_size"] == 64
    assert any("target_hidden_size 64" in n for n in obj["notes"])
    chk = run_cli("check", out, "--engine", "vllm", "--json")
    report = json.loads(chk.stdout)
    assert chk.returncode == 0 and report["ok"], chk.stdout
    assert not [f for f in report["findings"] if f["severity"] == "error"]


def test_a_speculators_drafter_keeps_its_verifier_and_gets_a_number_for_null_target_hidden(tmp_path, convert_json):
    """A speculators checkpoint records its verifier: no --target needed; its null target_hidden_size becomes 64."""
    out = tmp_path / "out"
    r, obj = convert_json(SPEC_TRAIN, "--to", "speculators", "-o", out)
    assert r.returncode == 0 and obj["ok"], r.stderr
    cfg = json.loads((out / "config.json").read_text())
    assert json.loads((SPEC_TRAIN / "config.json").read_text())["target_hidden_size"] is None
    assert cfg["target_hidden_size"] == 64 and cfg["speculators_config"]["verifier"]["name_or_path"] == "tiny-target-llama-4l"


def test_target_hidden_size_from_the_fc_width_makes_a_flat_config_load(tmp_path, convert_json):
    """A drafter whose fc input (288) is not 3 × hidden_size (64) and whose config does not say target_hidden_size:
    the engines build fc from hidden_size and raise. The converted config says 96 (288 / 3), and loads."""

    def wide(ts):
        dt, (h, _), _ = ts["fc.weight"]
        return {**ts, "fc.weight": (dt, [h, 288], bytes(h * 288 * 2))}

    src = mutate(SF_HF, tmp_path / "wide", tensors=wide)
    before = run_cli("check", src, "--engine", "sglang", "--json")
    assert before.returncode == 1 and "L003" in {f["code"] for f in json.loads(before.stdout)["findings"]}
    for engine in ("sglang", "vllm"):
        out = tmp_path / engine
        r, obj = convert_json(src, "--engine", engine, "-o", out)
        assert r.returncode == 0 and obj["ok"], (engine, r.stdout)
        assert json.loads((out / "config.json").read_text())["target_hidden_size"] == 96
        assert any("target_hidden_size 96 (fc input 288 / 3 aux layers)" in n for n in obj["notes"])


def test_same_dir_fails_closed(tmp_path):
    """Before: an OSError answered False ("not the source"), so the write went ahead on a guess."""
    src = tmp_path / "src"
    shutil.copytree(SF_SGLANG, src)
    loop = tmp_path / "loop"
    os.symlink(loop, loop)  # stat raises ELOOP, as root too
    with pytest.raises(CheckpointError, match="cannot tell whether this is the source directory"):
        _same_dir(loop, src)
    assert _same_dir(tmp_path / "absent", src) is False
    link = tmp_path / "link"
    os.symlink(src, link)
    assert _same_dir(link, src) is True
    plan = plan_conversion(open_view(src), "vllm")
    before, entries = tree_state(src), sorted(os.listdir(tmp_path))
    with pytest.raises(CheckpointError, match="not converting"):
        execute(plan, loop / "out")
    assert tree_state(src) == before and sorted(os.listdir(tmp_path)) == entries


def test_a_destination_that_is_the_source_through_a_symlink_is_refused(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(SF_SGLANG, src)
    os.symlink(src, tmp_path / "link")
    before = tree_state(tmp_path)
    r = run_cli("convert", src, "--to", "vllm", "-o", tmp_path / "link", "--force")
    assert "source" in one_line_refusal(r)
    assert tree_state(tmp_path) == before


def test_target_hidden_size_is_read_from_the_checkpoint_before_the_target():
    """The recorded aux layer count divides the fc width first: a --target whose hidden size also divides it
    (12288 = 2 × 6144) does not override what the checkpoint says (3 × 4096)."""
    from types import SimpleNamespace

    from specbridge.convert.configs import target_hidden_of

    d = SimpleNamespace(cfg_target_hidden_size=None, fc_in=12288)
    assert target_hidden_of(d, 3, 6144)[0] == 4096
    assert target_hidden_of(d, None, 6144) == (6144, "the target's hidden_size; fc input 12288 = 2 × it")
    assert target_hidden_of(d, None, None) == (4096, "fc input 12288 / 3 aux layers, the producers' default")
    assert target_hidden_of(SimpleNamespace(cfg_target_hidden_size=5120, fc_in=12288), 3, 6144)[0] == 5120
    assert target_hidden_of(SimpleNamespace(cfg_target_hidden_size=None, fc_in=None), None, None) == (None, "")
