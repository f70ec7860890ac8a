"""The process entry (`specbridge`, `python -m specbridge`) ends without the interpreter's final collection walking
every object a command left (cli/entry.py run); a caller of `main()` in its own process keeps its collector as it was."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest
from conftest import STORY


def test_the_process_entry_freezes_what_the_command_left():
    code = (
        "import atexit, gc, os, sys\n"
        "atexit.register(lambda: os.write(2, f'frozen {gc.get_freeze_count()}\\n'.encode()))\n"
        f"sys.argv = ['specbridge', 'check', {str(STORY)!r}, '--engine', 'sglang==0.5.11', '--json']\n"
        "from specbridge.cli.entry import run\n"
        "run()"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode in (0, 1) and '"findings"' in r.stdout, r.stderr[-2000:]
    assert int(r.stderr.split("frozen ")[-1]) > 10_000  # the tables, the report: out of the exit's collection


def test_main_in_this_process_leaves_the_collector_alone(monkeypatch, capsys):
    from specbridge.cli import entry

    before, enabled = gc.get_freeze_count(), gc.isenabled()
    monkeypatch.setattr("sys.argv", ["specbridge", "check", str(STORY), "--engine", "sglang==0.5.11", "--json"])
    with pytest.raises(SystemExit):
        entry.main()
    assert '"findings"' in capsys.readouterr().out
    assert gc.get_freeze_count() == before and gc.isenabled() == enabled
