"""`record`: a frozen dataclass whose repr, equality and hash are read from its fields instead of compiled for it.

Every row of the engine tables, and most of what a command builds, is a frozen dataclass. On Python 3.11
`dataclass(frozen=True)` compiles six functions per class from source (`__init__`, `__repr__`, `__eq__`, `__hash__`,
`__setattr__`, `__delattr__`), about 0.5 ms a class; a `check` imports some fifty such classes, so their compilation was
a quarter of its time. A record compiles only `__init__` and the frozen guards; `__repr__`, `__eq__` and `__hash__` are
the three functions below, shared, and behave as the dataclass's would (same text, same field order, fields declared
with `compare=False` or `repr=False` left out as there). `dataclasses.fields`, `replace` and `asdict` work unchanged."""

from __future__ import annotations

from dataclasses import dataclass, fields


def _repr(self) -> str:
    return f"{type(self).__qualname__}({', '.join(f'{n}={getattr(self, n)!r}' for n in self.__record_repr__)})"


def _key(self) -> tuple:
    return tuple(getattr(self, n) for n in self.__record_compare__)


def _eq(self, other: object) -> bool:
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _key(self) == _key(other)


def _hash(self) -> int:
    return hash(_key(self))


def record(cls: type) -> type:
    """`@record` in place of `@dataclass(frozen=True)` (module docstring). What the class defines itself is kept."""
    own = vars(cls)
    own_hash = own.get("__hash__") is not None  # a class body's __eq__ sets __hash__ None: not a hash of its own
    cls = dataclass(frozen=True, repr=False, eq=False)(cls)
    if "__repr__" not in own:
        cls.__repr__ = _repr
    if "__eq__" not in own:
        cls.__eq__ = _eq
    if not own_hash:
        cls.__hash__ = _hash
    found = fields(cls)
    cls.__record_repr__ = tuple(f.name for f in found if f.repr)
    cls.__record_compare__ = tuple(f.name for f in found if f.compare)
    return cls
