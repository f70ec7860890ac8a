"""convert carries the checkpoint's other files (tokenizer, README, generation_config.json, chat template) into a
converted copy byte for byte, in the same atomic write, and says which; in place they stay as they are."""

from __future__ import annotations

import os
import shutil

import pytest
from conftest import SF_SGLANG, TINY_TARGET, run_cli, tree_state

# what a model directory holds beside its weights, each with bytes a text-mode copy would change
SIDE_FILES = {
    "tokenizer.json": b'{"model": {"vocab": {"\\u00e9": 1}}}\r\n',
    "tokenizer_config.json": b'{"chat_template": "{{ messages }}"}\n',
    "special_tokens_map.json": b'{"eos_token": "</s>"}',
    "generation_config.json": b'{"do_sample": false}\n',
    "README.md": b"# drafter\r\n\x00binary-ish tail \xff\n",
    "chat_template.jinja": b"{% for m in messages %}{{ m.content }}{% endfor %}",
}


def with_side_files(src, d):
    """A copy of fixture `src` at `d` with a model directory's other files, a subdirectory and a stray weights file."""
    shutil.copytree(src, d)
    for name, data in SIDE_FILES.items():
        (d / name).write_bytes(data)
    os.chmod(d / "tokenizer.json", 0o600)
    (d / "checkpoint-100").mkdir()
    (d / "checkpoint-100" / "optimizer.pt").write_bytes(b"x")
    (d / "optimizer.pt").write_bytes(b"not the drafter")
    return d


@pytest.mark.parametrize("layout", ["vllm", "speculators"])
def test_other_files_are_copied_byte_for_byte(tmp_path, layout, convert_json):
    """Before: the output held config.json and the weights only (tokenizer, README, generation_config lost)."""
    src = with_side_files(SF_SGLANG, tmp_path / "src")
    out = tmp_path / "out"
    r, obj = convert_json(src, "--to", layout, "-o", out, "--target", TINY_TARGET)
    assert r.returncode == 0 and obj["ok"], r.stderr
    assert obj["copied"] == sorted(SIDE_FILES)
    for name, data in SIDE_FILES.items():
        assert (out / name).read_bytes() == data, name
    assert os.stat(out / "tokenizer.json").st_mode & 0o777 == 0o600  # the source's mode, kept
    assert {n for n, _ in obj["not_copied"]} == {"checkpoint-100", "optimizer.pt"}
    assert sorted(os.listdir(out)) == sorted([*SIDE_FILES, "config.json", "model.safetensors"])
    assert "copied file(s) compared byte for byte" in obj["verified"]
    human = run_cli("convert", src, "--to", layout, "-o", tmp_path / "h", "--target", TINY_TARGET).stdout
    assert f"copied {len(SIDE_FILES)} other file(s) byte for byte: {', '.join(sorted(SIDE_FILES))}" in human
    assert "not copied: optimizer.pt (weights the conversion does not read" in human


@pytest.mark.parametrize("layout", ["speculators", "trtllm"], ids=["header-rename", "full-rewrite"])
def test_in_place_leaves_other_files_as_they_are(tmp_path, layout, convert_json):
    d = with_side_files(SF_SGLANG, tmp_path / "sg")
    before = {n: v for n, v in tree_state(d).items() if n not in ("config.json", "model.safetensors")}
    r, obj = convert_json(d, "--to", layout, "--in-place", "--target", TINY_TARGET)
    assert r.returncode == 0 and obj["copied"] == [] and obj["not_copied"] == [], r.stderr
    after = tree_state(d)
    assert all(after[n] == v for n, v in before.items())
    human = run_cli("convert", d, "--to", "sglang", "--in-place").stdout
    assert "other files: left in place, as they were" in human and "not copied" not in human
