"""A record behaves as the frozen dataclass it replaces: the same repr text, equality, hash, frozenness and
dataclasses API (specbridge/record.py says why it exists)."""

from __future__ import annotations

import dataclasses
from dataclasses import FrozenInstanceError, asdict, field, fields, replace

import pytest

from specbridge.engines.spec import Param, Rename, Step
from specbridge.record import record


def _pair():
    def body():
        return {
            "__annotations__": {"name": "str", "shape": "tuple", "source": "object", "notes": "dict"},
            "shape": (),
            "source": field(default=None, compare=False, repr=False),
            "notes": field(default_factory=dict),
        }

    rec = record(type("Row", (), body()))
    ref = dataclasses.dataclass(frozen=True)(type("Row", (), body()))
    return rec, ref


def test_repr_eq_and_hash_are_the_dataclasses():
    rec, ref = _pair()
    a, b = rec("x", (1, 2), source=object()), ref("x", (1, 2), source=object())
    assert repr(a) == repr(b) == "Row(name='x', shape=(1, 2), notes={})"
    assert a == rec("x", (1, 2)) and a != rec("y", (1, 2))  # `source` is compare=False, as in the dataclass
    assert hash(rec("x", (1, 2), notes=None)) == hash(ref("x", (1, 2), notes=None))
    assert (a == b) is False  # another class, even with the same fields: NotImplemented both ways, then identity


def test_frozen_and_the_dataclasses_api():
    rec, _ = _pair()
    a = rec("x")
    with pytest.raises(FrozenInstanceError):
        a.name = "y"
    with pytest.raises(FrozenInstanceError):
        del a.shape
    assert [f.name for f in fields(a)] == ["name", "shape", "source", "notes"]
    assert replace(a, name="y") == rec("y") and asdict(a) == {"name": "x", "shape": (), "source": None, "notes": {}}
    assert rec("x").notes is not rec("x").notes  # default_factory per instance


def test_engine_rows_are_records():
    p = Param("fc.weight", ("H", "3*H"), role="fc")
    assert p == Param("fc.weight", ("H", "3*H"), role="fc") and len({p, replace(p)}) == 1
    assert repr(p).startswith("Param(name='fc.weight', shape=('H', '3*H'),")
    # a Step subclass keeps its own keyword repr and compares as a Step of its class
    r = Rename("midlayer.", "layers.0.")
    assert repr(r) == "Rename(old='midlayer.', new='layers.0.')"
    assert r == Rename("midlayer.", "layers.0.") and r != Step("substr", "midlayer.", "layers.0.")
