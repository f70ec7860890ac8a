"""`check` reads a checkpoint once, describes it once and detects its family once, probes for a target's MTP head only
when the files can hold one, and imports the rows of the engines it is asked about only."""

from __future__ import annotations

import json
import sys
from collections import Counter

import mtp_fixtures as mx
import pytest
from conftest import SF_SGLANG, STORY

from specbridge import view as view_module
from specbridge.checkpoint import reader
from specbridge.cli import commands, entry, mtp_check
from specbridge.engines.registry import EngineTable
from specbridge.layouts import canonical


@pytest.fixture
def calls(monkeypatch):
    """How often check enters the reader, the describer, the detector and the index-first probe."""
    seen: Counter = Counter()

    def counting(module, name, key):
        real = getattr(module, name)

        def wrapper(*a, **k):
            seen[key] += 1
            return real(*a, **k)

        monkeypatch.setattr(module, name, wrapper)

    counting(reader, "open_checkpoint", "open")
    counting(canonical, "describe", "describe")
    counting(view_module, "describe", "describe")
    counting(view_module, "detect_family", "detect")
    counting(mtp_check, "detect_family", "detect")
    counting(mtp_check, "index_first_or_none", "probe")
    return seen


def run_check(capsys, *argv: str) -> tuple[int, dict]:
    rc = commands.check_cmd(*argv[:1], list(argv[1:]) or None, as_json=True)
    return rc, json.loads(capsys.readouterr().out)


def test_a_drafter_is_opened_described_and_detected_once_and_never_probed_as_a_target(calls, capsys):
    rc, body = run_check(capsys, str(SF_SGLANG), "sglang==0.5.11")
    assert body["family"]["name"] == "eagle3" and rc in (0, 1)
    assert calls == {"open": 1, "describe": 1, "detect": 1}


def test_a_target_with_an_mtp_head_is_probed_once_and_detected_once(calls, capsys, tmp_path):
    target = mx.write_target(tmp_path / "glm", mx.glm_config())
    rc, body = run_check(capsys, str(target), "vllm==0.32.0")
    assert body["family"]["name"] == "mtp" and body["mtp"]["layers"]
    assert calls == {"probe": 1, "describe": 1, "detect": 1}  # the head's view, never the whole target opened


def test_a_head_only_in_the_names_is_still_found_after_the_file_is_opened(calls, capsys, tmp_path):
    """A config that announces no MTP layer: the single file is opened first, then read as the target its names show."""
    target = mx.write_target(tmp_path / "glm", mx.glm_config(mtp=0), mtp=(2,))  # tests/test_mtp_check.py's "unannounced"
    rc, body = run_check(capsys, str(target), "vllm==0.32.0")
    assert body["family"]["name"] == "mtp" and [layer["index"] for layer in body["mtp"]["layers"]] == [2]
    assert calls["probe"] == 1


def test_check_mtp_on_the_fast_path_reads_the_input_as_a_target(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["specbridge", "check", str(STORY), "--mtp", "--json", "-e", "vllm==0.32.0"])
    with pytest.raises(SystemExit):
        entry.main()
    body = json.loads(capsys.readouterr().out)
    assert "mtp" in body and body["mtp"]["style"] == "none"  # --mtp said so: read as a target, which holds no head


def test_a_check_of_one_engine_reads_that_engines_rows_only(monkeypatch, capsys):
    """Every engine table (eras, family ranges, launch rows, …) is asked for sglang's rows only: the other engines'
    modules are never imported for it (EngineTable imports a module the first time its rows are asked for)."""
    asked: set[str] = set()
    real = EngineTable.__getitem__
    monkeypatch.setattr(EngineTable, "__getitem__", lambda self, name: asked.add(name) or real(self, name))
    run_check(capsys, str(SF_SGLANG), "sglang==0.5.11")
    assert asked == {"sglang"}
    asked.clear()
    run_check(capsys, str(SF_SGLANG))
    assert asked == {"sglang", "vllm", "trtllm"}  # --engine all: every engine's eras
