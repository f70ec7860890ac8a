"""`Later` (specbridge/later.py): a pattern compiled on its first use answers as the compiled pattern does, and a
check of an EAGLE-3 drafter compiles none of the other families' layouts."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from conftest import STORY

from specbridge.later import Later


def test_a_later_pattern_answers_as_the_compiled_one():
    text = r"^(?P<prefix>model\.mtp\.layers\.(?P<n>\d+)\.)"
    later, rx = Later(text), re.compile(text)
    for name in ("model.mtp.layers.3.enorm.weight", "model.layers.3.x", ""):
        a, b = later.match(name), rx.match(name)
        assert (a and a.groupdict()) == (b and b.groupdict())
    assert Later(text).compiled is False and later.compiled is True
    assert later.groupindex == rx.groupindex and later.sub("", "model.mtp.layers.1.x") == "x"
    assert later.match.__self__ == rx  # after its first use, the compiled pattern's own method: no call in between
    assert Later("A", re.I).search("xa").group() == "a"
    with pytest.raises(AttributeError):
        Later("a").nope  # noqa: B018


def test_an_eagle3_check_compiles_no_other_family_layout():
    """What Later is for: Medusa's and the MTP heads' layouts, read only for checkpoints of their families."""
    code = (
        "import runpy, sys, atexit\n"
        "def said():\n"
        "    from specbridge.families import medusa, mtp\n"
        "    rows = [p for _, b, h in medusa.LAYOUTS for p in (b, h)] + [medusa.BLOCK] + [s.pattern for s in mtp.STYLES]\n"
        "    print(len(rows), sum(p.compiled for p in rows), file=sys.stderr)\n"
        "atexit.register(said)\n"
        f"sys.argv = ['specbridge', 'check', {str(STORY)!r}, '--engine', 'all', '--json']\n"
        "runpy.run_module('specbridge', run_name='__main__')"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert '"findings"' in r.stdout, r.stderr[-2000:]
    rows, compiled = map(int, r.stderr.split()[-2:])
    assert rows >= 10 and compiled == 0
