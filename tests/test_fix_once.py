"""A fix shared by several findings is printed once: the later findings say "fix: as above (CODE)". The MTP head
announced but absent gives five L002/L006 findings with one 250-character fix; JSON keeps every finding's fix."""

from __future__ import annotations

import json

import mtp_fixtures as mx
import pytest

from specbridge.cli.commands import check_cmd


@pytest.fixture(scope="module")
def glm_without_head(tmp_path_factory):
    return mx.write_target(tmp_path_factory.mktemp("fix-once") / "glm-nohead", mx.glm_config(), mtp=False)


def _fix_lines(out: str) -> list[str]:
    return [line.strip() for line in out.splitlines() if line.strip().startswith("fix: ")]


@pytest.mark.parametrize("engine", ["vllm==0.32.0", "vllm"])
def test_each_fix_is_printed_once(glm_without_head, capsys, engine):
    assert check_cmd(glm_without_head, [engine], False) == 1
    out = capsys.readouterr().out
    fixes = _fix_lines(out)
    written = [f for f in fixes if not f.startswith("fix: as above (")]
    assert len(written) == len(set(written)), written
    assert fixes.count("fix: as above (L002)") >= 4, fixes  # the four later L002 findings point at the first
    assert "\x00" not in out  # a grouped fix names its releases back, no placeholder left


def test_json_keeps_the_fix_on_every_finding(glm_without_head, capsys):
    assert check_cmd(glm_without_head, ["vllm==0.32.0"], True) == 1
    body = json.loads(capsys.readouterr().out)
    fixes = [f["fix"] for f in body["findings"] if f["code"] in ("L002", "L006")]
    assert len(fixes) >= 5 and len(set(fixes)) == 1 and "Glm4MoeMTPModel" in fixes[0]
