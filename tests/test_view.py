"""Each checkpoint is described once per command (view.py): the guard, the rules, every engine version's simulated
load and the output read one CheckpointView instead of describing, flattening the config or detecting the family
again (before it, `check --engine all` on a speculators drafter flattened its config 21 times)."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path

import pytest
from conftest import SF_HF, SPEC_TRAIN, STORY, TINY_TARGET

from specbridge.cli import commands
from specbridge.engines import simulate
from specbridge.engines.registry import placements, resolve
from specbridge.families import detect
from specbridge.families.table import BY_NAME
from specbridge.layouts import canonical

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("gen_corpus_doc", ROOT / "scripts" / "gen_corpus_doc.py")
gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen)

# counted by code object, so a consumer that imported the function under another name is counted too
COUNTED = {
    canonical.describe.__code__: "describe",
    canonical.flat_config.__code__: "flat_config",
    detect.detect_family.__code__: "detect_family",
    simulate.checkpoint_facts.__code__: "checkpoint_facts",
    simulate.simulate.__code__: "simulate",
}
ONCE = {"describe": 1, "flat_config": 1, "detect_family": 1, "checkpoint_facts": 1}


def calls(run) -> tuple[Counter, int]:
    """How often each counted function ran during `run()`, and what `run` returned."""
    seen: Counter = Counter()

    def profile(frame, event, _arg):
        if event == "call" and frame.f_code in COUNTED:
            seen[COUNTED[frame.f_code]] += 1

    sys.setprofile(profile)
    try:
        code = run()
    finally:
        sys.setprofile(None)
    return seen, code


def dflash_drafter(tmp_path: Path) -> Path:
    [entry] = [e for e in gen.load_families() if e["id"] == "z-lab/Qwen3-8B-DFlash-b16"]
    return gen.build_family(entry, tmp_path)[0]


@pytest.mark.parametrize("path", [STORY, SPEC_TRAIN, SF_HF], ids=["story", "speculators", "specforge-hf"])
def test_check_all_describes_an_eagle3_drafter_once(path, capsys):
    """`check --engine all`: one description, one flattened config, one family verdict for every engine version."""
    seen, code = calls(lambda: commands.check_cmd(path, ["all"], True, target=TINY_TARGET))
    out = json.loads(capsys.readouterr().out)
    assert code in (0, 1) and out["family"]["name"] == "eagle3" and len(out["results"]) == len(resolve("all")) > 5
    assert seen["simulate"] == len(resolve("all"))
    assert {k: seen[k] for k in ONCE} == ONCE, seen


def test_check_all_describes_a_dflash_drafter_once(tmp_path, capsys):
    """The family path (check_family) reads the same one view."""
    seen, code = calls(lambda: commands.check_cmd(dflash_drafter(tmp_path), ["all"], True))
    out = json.loads(capsys.readouterr().out)
    places, _ = placements(["all"], "dflash", BY_NAME["dflash"].title)
    # a range that builds DFlashDraftModel with a class not modelled (vLLM 0.25.0) is named, not simulated
    places = [p for p in places if "DFlashDraftModel" not in p.row.unmodelled_archs]
    assert code in (0, 1) and out["family"]["name"] == "dflash" and seen["simulate"] == len(places) > 1
    assert {k: seen[k] for k in ONCE} == ONCE, seen


def test_check_with_a_parent_describes_the_checked_drafter_once(capsys):
    seen, code = calls(lambda: commands.check_cmd(SF_HF, ["all"], True, parent=STORY))
    assert code in (0, 1) and json.loads(capsys.readouterr().out)["family"]["name"] == "eagle3"
    assert {k: seen[k] for k in ONCE} == ONCE, seen


@pytest.mark.parametrize("as_json", [True, False])
def test_inspect_describes_once(as_json, capsys):
    seen, code = calls(lambda: commands.inspect_cmd(SPEC_TRAIN, as_json))
    assert code == 0 and capsys.readouterr().out
    assert {k: seen[k] for k in ONCE} == ONCE, seen


def test_launch_describes_once(capsys):
    seen, code = calls(lambda: commands.launch_cmd(SF_HF, "sglang==0.5.11", str(TINY_TARGET), 3, 1, None, True))
    assert code in (0, 1) and json.loads(capsys.readouterr().out)["check"]["engine"]["name"] == "sglang"
    assert {k: seen[k] for k in ONCE} == ONCE and seen["simulate"] == 1, seen


def test_check_family_leaves_the_view_as_described(tmp_path):
    """check_family reads a DFlash drafter under its family's name without rewriting the shared description."""
    from specbridge.rules.check import check
    from specbridge.view import open_view

    view = open_view(dflash_drafter(tmp_path))
    layout = view.drafter.layout
    [res] = check(view, "vllm==0.32.0", family=view.family)
    assert res.drafter.layout == "dflash" and view.drafter.layout == layout != "dflash"
