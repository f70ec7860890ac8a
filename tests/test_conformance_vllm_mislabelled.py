"""Mislabelled drafters on real vLLM (tests/mislabel_fixtures.py): the class vLLM builds for the architecture name, and
what its loader does with the other family's tensors, against `check`'s prediction (the class it simulates and rule
L017's outcome). The EAGLE-3-named cases load with method eagle3 on the tiny Llama target, the DFlash-named one with
method dflash on the Qwen3 build of it, as tests/test_conformance_vllm_zoo.py and test_conformance_vllm_dflash.py
load their drafters. Skipped per release when its venv is absent (scripts/setup_vllm_cpu.sh)."""

from __future__ import annotations

import re
from pathlib import Path

import mislabel_fixtures as mf
import pytest
import zoo_fixtures as z
from conftest import TINY_TARGET
from test_conformance_vllm import _ready, run_loader

from specbridge.checkpoint.target import open_target
from specbridge.rules.check import check
from specbridge.view import open_view

pytestmark = [pytest.mark.engine, pytest.mark.full_conformance]

RELEASES = ("0.27.1", "0.29.0", "0.32.0")
# method and target build per case: what the architecture name asks vLLM for
GROUPS = {
    ("eagle3", "llama"): ("dflash-as-eagle3", "eagle1-as-eagle3", "eagle3-fc-eagle1", "eagle3-fc-1x"),
    ("dflash", "qwen3"): ("eagle3-as-dflash", "eagle3-as-dflash-configured"),
}
PARAMS = [(rel, key, case) for rel in RELEASES for key, cases in GROUPS.items() for case in cases]
_REAL: dict[tuple[str, tuple], dict] = {}


@pytest.fixture(scope="session")
def mislabelled(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("mislabelled-conformance")
    return {name: z.write(root / name, cfg, ts) for name, (cfg, ts) in mf.cases().items()}


def real(release: str, key: tuple, cases: dict[str, Path], tmp_root: Path) -> dict[str, dict]:
    if (release, key) not in _REAL:
        _REAL[(release, key)] = run_loader(release, {c: cases[c] for c in GROUPS[key]}, tmp_root, method=key[0], arch=key[1])
    return _REAL[(release, key)]


def shapes_of(message: str) -> list[tuple[int, ...]]:
    """Every shape a message names: [64, 128] as check writes it, torch.Size([64, 128]) as vLLM does, (64, 128) as
    SGLang's DFlash loader does."""
    found = re.findall(r"\[(\d+(?:,\s*\d+)*)\]", message) + re.findall(r"\((\d+(?:,\s*\d+)+)\)", message)
    return [tuple(int(x) for x in m.split(",") if x.strip()) for m in found]


def agrees(raised: str, predicted: list[str]) -> bool:
    """The engine's exception is one check predicts: the same missing config attribute, unknown name or config key, the
    same (checkpoint, parameter) shapes, or the engine's own words as the row quotes them."""
    for p in predicted:
        keys = set(re.findall(r"`([^`]+)`", p))
        if keys and keys & set(re.findall(r"`([^`]+)`", raised)):
            return True
        missing = re.findall(r"has no attribute '([^']+)'", p)  # the config attribute read (whatever the config class)
        if missing and all(f"attribute '{a}'" in raised for a in missing):
            return True
        named = re.findall(r"named '([^']+)'", p)  # the unknown name, bare or under its layer ('layers.0.hidden_norm')
        if named and all(f"'{n}'" in raised or f".{n}'" in raised for n in named):
            return True
        want = shapes_of(p)
        if len(want) == 2 and set(want) <= set(shapes_of(raised)):
            return True
        said = raised.split(": ", 1)[-1][:40]  # the engine's own words, as the row quotes them
        if len(said) > 20 and said in p:
            return True
    return False


@pytest.mark.parametrize("release, key, case", PARAMS, ids=[f"{r}-{c}" for r, _, c in PARAMS])
def test_check_matches_real_vllm_on_a_mislabelled_drafter(release, key, case, mislabelled, tmp_path_factory):
    why = _ready(release)
    if why:
        pytest.skip(why)
    view = open_view(mislabelled[case])
    (res,) = check(view, f"vllm=={release}", target=open_target(TINY_TARGET), family=view.family)
    assert "L017" in {f.code for f in res.findings}
    got = real(release, key, mislabelled, tmp_path_factory.getbasetemp())[case]
    assert (got["raised"] is not None) == bool(res.report.errors), (got["raised"], res.report.errors)
    if got["raised"] is not None:
        assert agrees(got["raised"], res.report.errors), f"vLLM {release}: {got['raised']!r}; check: {res.report.errors}"
    else:
        assert got.get("draft_class") == res.report.cls.name, (got.get("draft_class"), res.report.cls.name)
