"""Every --json document is written by contract.indented_json, which must write what json.dumps(indent=2,
allow_nan=False) writes, byte for byte, and refuse what it refuses."""

from __future__ import annotations

import json
import random
from enum import Enum

import pytest

from specbridge.cli.contract import dumps, indented_json


class Fate(str, Enum):
    LOADED = "loaded"


SCALARS = [0, -1, 2**70, 1.5, -0.0, 1e-300, 1e300, 0.1, True, False, None, "", "é", '\x00\n"\\', "\U0001f600", Fate.LOADED]
KEYS = ["k", "", "é", 1, 2.5, True, False, None, -3]


def _doc(rng: random.Random, depth: int = 0):
    roll = rng.random()
    if depth > 4 or roll < 0.4:
        return rng.choice(SCALARS)
    if roll < 0.7:
        return (
            [_doc(rng, depth + 1) for _ in range(rng.randint(0, 4))]
            if rng.random() < 0.8
            else tuple(_doc(rng, depth + 1) for _ in range(2))
        )
    return {rng.choice(KEYS): _doc(rng, depth + 1) for _ in range(rng.randint(0, 4))}


@pytest.mark.parametrize("seed", range(40))
def test_indented_json_is_json_dumps(seed):
    rng = random.Random(seed)
    for _ in range(50):
        doc = _doc(rng)
        assert indented_json(doc) == json.dumps(doc, indent=2, allow_nan=False)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), {"a": [1, float("nan")]}, {(1, 2): 3}, {"a": object()}, {1j}])
def test_refuses_what_json_refuses(bad):
    with pytest.raises(Exception) as ours:
        indented_json(bad)
    with pytest.raises(Exception) as theirs:
        json.dumps(bad, indent=2, allow_nan=False)
    assert (type(ours.value), str(ours.value)) == (type(theirs.value), str(theirs.value))


def test_non_finite_floats_become_null_as_before():
    assert dumps({"ok": True, "x": [float("nan"), 1.0]}) == json.dumps({"ok": True, "x": [None, 1.0]}, indent=2)
