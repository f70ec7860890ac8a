"""A record behaves as the dataclass it replaces: the same signature, repr text, equality, hash, frozenness and
`fields` / `replace` / `asdict` (specbridge/record.py says why it exists). Each case builds the same class body both
ways and compares them."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from typing import ClassVar

import pytest
from conftest import STORY

from specbridge import record as rec_mod
from specbridge.engines.spec import Param, Rename, Step
from specbridge.record import FrozenInstanceError, asdict, fields, record, replace


def _pair(frozen: bool = True):
    def body(field):
        return {
            "__annotations__": {"name": "str", "shape": "tuple", "source": "object", "notes": "dict"},
            "shape": (),
            "source": field(default=None, compare=False, repr=False),
            "notes": field(default_factory=dict),
        }

    rec = record(type("Row", (), body(rec_mod.field)), frozen=frozen)
    ref = dataclasses.dataclass(frozen=frozen)(type("Row", (), body(dataclasses.field)))
    return rec, ref


def test_repr_eq_and_hash_are_the_dataclasses():
    rec, ref = _pair()
    a, b = rec("x", (1, 2), source=object()), ref("x", (1, 2), source=object())
    assert repr(a) == repr(b) == "Row(name='x', shape=(1, 2), notes={})"
    assert a == rec("x", (1, 2)) and a != rec("y", (1, 2))  # `source` is compare=False, as in the dataclass
    assert hash(rec("x", (1, 2), notes=None)) == hash(ref("x", (1, 2), notes=None))
    assert (a == b) is False  # another class, even with the same fields: NotImplemented both ways, then identity


@pytest.mark.parametrize(
    "args, kwargs",
    [((), {}), (("x", (), None, {}, 9), {}), (("x",), {"name": "y"}), (("x",), {"colour": 1}), ((), {"shape": ()})],
)
def test_a_wrong_call_raises_a_type_error_as_the_dataclass(args, kwargs):
    rec, ref = _pair()
    with pytest.raises(TypeError):
        ref(*args, **kwargs)
    with pytest.raises(TypeError) as e:
        rec(*args, **kwargs)
    assert "Row.__init__()" in str(e.value)


def test_arguments_bind_as_the_dataclass():
    rec, ref = _pair()
    for args, kwargs in [(("x",), {}), (("x", (1,)), {"notes": {"a": 1}}), ((), {"notes": {}, "name": "z"})]:
        a, b = rec(*args, **kwargs), ref(*args, **kwargs)
        assert asdict(a) == {k: v for k, v in dataclasses.asdict(b).items()}
        assert list(vars(a)) == [f.name for f in dataclasses.fields(b)]  # attributes set in field order


def test_frozen_and_the_api():
    rec, _ = _pair()
    a = rec("x")
    with pytest.raises(FrozenInstanceError):
        a.name = "y"
    with pytest.raises(FrozenInstanceError):
        del a.shape
    with pytest.raises(AttributeError):  # a frozen dataclass's own instances take no new attribute either
        a.other = 1
    assert [f.name for f in fields(a)] == ["name", "shape", "source", "notes"]
    assert replace(a, name="y") == rec("y") and asdict(a) == {"name": "x", "shape": (), "source": None, "notes": {}}
    assert rec("x").notes is not rec("x").notes  # default_factory per instance


def test_mutable_records_compare_but_do_not_hash():
    rec, ref = _pair(frozen=False)
    a = rec("x")
    a.name = "y"
    assert a == rec("y") and repr(a) == repr(ref("y"))
    assert rec.__hash__ is None and ref.__hash__ is None


def test_post_init_inheritance_and_dataclasses_passed_on():
    @record
    class Base:
        a: int
        b: int = 2

    @record
    class Child(Base):
        c: str = "c"
        k: ClassVar[int] = 3  # a class variable, no field

        def __post_init__(self):
            object.__setattr__(self, "c", self.c.upper())

    assert [f.name for f in fields(Child)] == ["a", "b", "c"] and Child.k == 3
    assert Child(1) == Child(1, 2, "C") and Child(1).c == "C" and Child(1, c="x").c == "X"
    with pytest.raises(TypeError):

        @record
        class Wrong:  # a field without a default after one with a default, as dataclass refuses
            a: int = 1
            b: str

    ref = dataclasses.dataclass(type("D", (), {"__annotations__": {"x": "int"}}))
    assert replace(ref(1), x=2) == ref(2) and [f.name for f in fields(ref)] == ["x"] and asdict(ref(1)) == {"x": 1}


def test_engine_rows_are_records():
    p = Param("fc.weight", ("H", "3*H"), role="fc")
    assert p == Param("fc.weight", ("H", "3*H"), role="fc") and len({p, replace(p)}) == 1
    assert repr(p).startswith("Param(name='fc.weight', shape=('H', '3*H'),")
    # a Step subclass keeps its own keyword repr and compares as a Step of its class
    r = Rename("midlayer.", "layers.0.")
    assert repr(r) == "Rename(old='midlayer.', new='layers.0.')"
    assert r == Rename("midlayer.", "layers.0.") and r != Step("substr", "midlayer.", "layers.0.")


def test_a_check_imports_neither_dataclasses_nor_inspect():
    """What record exists for: `check` on a drafter never loads the modules whose import was a tenth of its time."""
    code = (
        "import runpy, sys, atexit\n"
        "atexit.register(lambda: print(*(m for m in ('dataclasses', 'inspect') if m in sys.modules), file=sys.stderr))\n"
        f"sys.argv = ['specbridge', 'check', {str(STORY)!r}, '--engine', 'all', '--json']\n"
        "runpy.run_module('specbridge', run_name='__main__')"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode in (0, 1) and '"findings"' in r.stdout, r.stderr[-2000:]
    assert r.stderr.split() == []
