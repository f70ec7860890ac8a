"""convert refuses a destination it cannot tell from the source."""

from __future__ import annotations

import os
import shutil

import pytest
from conftest import SF_SGLANG, tree_state

from specbridge.checkpoint.errors import CheckpointError
from specbridge.convert.plan import plan_conversion
from specbridge.convert.run import _same_dir, execute
from specbridge.view import open_view


def one_line_refusal(r) -> str:
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    return lines[0]


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


def test_a_destination_that_is_the_source_through_a_symlink_is_refused(tmp_path, cli_here):
    src = tmp_path / "src"
    shutil.copytree(SF_SGLANG, src)
    os.symlink(src, tmp_path / "link")
    before = tree_state(tmp_path)
    r = cli_here("convert", src, "--to", "vllm", "-o", tmp_path / "link", "--force")
    assert "source" in one_line_refusal(r)
    assert tree_state(tmp_path) == before
