"""`record`: the dataclass of every row and report, built without compiling code for each class.

Every row of the engine tables, and most of what a command builds, is a record. On Python 3.11 `dataclass` compiles
up to six functions per class from source (`__init__`, `__repr__`, `__eq__`, `__hash__`, and for a frozen class
`__setattr__`, `__delattr__`), about 0.5 ms a class, and importing `dataclasses` imports `inspect` (with `ast`, `dis`
and `tokenize`). A `check` defines some fifty such classes and creates about 500 instances, so that compilation was a
quarter of its time. A record compiles nothing: its `__init__`, `__repr__`, `__eq__`, `__hash__` and frozen guards are
the shared functions below, which read the class's field table. They behave as the dataclass's would: the same
signature rules (positional or keyword, defaults, `default_factory` per instance, `__post_init__`), the same repr text,
equality over the fields in order, `compare=False` and `repr=False` left out as there, a frozen class's hash and
`FrozenInstanceError`, a mutable class unhashable. `tests/test_record.py` holds them equal to the dataclass's.

`field`, `fields`, `replace` and `asdict` are this module's, shaped as `dataclasses`' are (and pass a real dataclass on
to `dataclasses`)."""

from __future__ import annotations

import operator

MISSING = type("Missing", (), {"__repr__": lambda self: "MISSING", "__slots__": ()})()


class FrozenInstanceError(AttributeError):
    """An assignment to a frozen record's field (dataclasses' error of the same name, for records)."""


class Field:
    """One field of a record: its name, default or default factory, and whether repr and equality read it."""

    __slots__ = ("name", "default", "default_factory", "repr", "compare", "metadata")

    def __init__(self, default=MISSING, default_factory=MISSING, repr=True, compare=True, metadata=None):
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = ""
        self.default, self.default_factory = default, default_factory
        self.repr, self.compare, self.metadata = repr, compare, metadata or {}

    def __repr__(self) -> str:
        return f"Field(name={self.name!r}, default={self.default!r}, default_factory={self.default_factory!r})"


def field(*, default=MISSING, default_factory=MISSING, repr=True, compare=True, metadata=None) -> Field:
    """A field with a default factory, or left out of repr or equality (dataclasses.field's keywords)."""
    return Field(default, default_factory, repr, compare, metadata)


def _repr(self) -> str:
    return f"{type(self).__qualname__}({', '.join(f'{n}={getattr(self, n)!r}' for n in self.__record_repr__)})"


def _key_of(names: tuple[str, ...]):
    """A function from a record to the tuple of its compared fields, read in C: `attrgetter` of several names gives
    their tuple, of one name the bare value (wrapped here), of none nothing."""
    if len(names) > 1:
        return operator.attrgetter(*names)
    if names:
        get = operator.attrgetter(*names)
        return lambda o: (get(o),)
    return lambda o: ()


def _eq(self, other: object) -> bool:
    if other.__class__ is not self.__class__:
        return NotImplemented
    return self.__record_key__(self) == other.__record_key__(other)


def _hash(self) -> int:
    return hash(self.__record_key__(self))


def _frozen_setattr(self, name, value):
    if name in self.__record_fields__ or "__record_frozen__" in type(self).__dict__:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")
    object.__setattr__(self, name, value)


def _frozen_delattr(self, name):
    if name in self.__record_fields__ or "__record_frozen__" in type(self).__dict__:
        raise FrozenInstanceError(f"cannot delete field {name!r}")
    object.__delattr__(self, name)


def _init(self, *args, **kwargs) -> None:
    names = self.__record_names__
    if kwargs or len(args) != len(names):
        args = _bind(type(self), names, args, kwargs)
    self.__dict__.update(zip(names, args))
    if self.__record_post_init__:
        self.__post_init__()


def _bind(cls: type, names: tuple, args: tuple, kwargs: dict):
    """The field values in order, from what the call gave and the defaults (dict operations only: most rows are
    built by keyword); a TypeError as the dataclass's `__init__` raises one, for too many, unknown, repeated or
    missing arguments."""
    if len(args) > len(names):
        raise TypeError(f"{cls.__qualname__}.__init__() takes {len(names) + 1} positional arguments but {len(args) + 1} were given")
    values = cls.__record_template__.copy()  # every field, in order: its default, or MISSING
    if args:
        if kwargs and not kwargs.keys().isdisjoint(names[: len(args)]):
            raise TypeError(
                f"{cls.__qualname__}.__init__() got multiple values for argument {next(k for k in kwargs if k in names[: len(args)])!r}"
            )
        values.update(zip(names, args))
    values.update(kwargs)
    if len(values) != len(names):
        raise TypeError(f"{cls.__qualname__}.__init__() got an unexpected keyword argument {next(k for k in kwargs if k not in names)!r}")
    for name in cls.__record_unfilled__:  # the fields without a plain default
        if values[name] is MISSING:
            factory = cls.__record_fields__[name].default_factory
            if factory is MISSING:
                raise TypeError(f"{cls.__qualname__}.__init__() missing 1 required argument: {name!r}")
            values[name] = factory()
    return values.values()


def _own_fields(cls: type) -> dict[str, Field]:
    """The fields the class body declares, in order: its annotations, less ClassVars, with their defaults (a plain
    class attribute or a `field`); a default factory's field leaves no class attribute, as in a dataclass."""
    out = {}
    for name, ann in vars(cls).get("__annotations__", {}).items():
        if isinstance(ann, str) and ann.startswith(("ClassVar", "typing.ClassVar")):
            continue
        value = vars(cls).get(name, MISSING)
        f = value if isinstance(value, Field) else Field(value)
        f.name = name
        if isinstance(value, Field):
            if f.default is MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, f.default)
        out[name] = f
    return out


def record(cls: type | None = None, *, frozen: bool = True):
    """`@record` (frozen) or `@record(frozen=False)`, in place of `@dataclass(frozen=True)` / `@dataclass` (module
    docstring). What the class defines itself is kept; a record's fields follow those of a record it derives from."""
    if cls is None:
        return lambda c: record(c, frozen=frozen)
    own = vars(cls)
    own_hash = own.get("__hash__") is not None  # a class body's __eq__ sets __hash__ None: not a hash of its own
    table: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        table.update(getattr(base, "__record_fields__", {}))
    table.update(_own_fields(cls))
    defaulted = None
    for f in table.values():
        if f.default is not MISSING or f.default_factory is not MISSING:
            defaulted = f.name
        elif defaulted:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")
    cls.__record_fields__ = table
    cls.__record_names__ = tuple(table)
    cls.__record_template__ = {n: f.default for n, f in table.items()}
    cls.__record_unfilled__ = tuple(n for n, f in table.items() if f.default is MISSING)
    cls.__record_repr__ = tuple(f.name for f in table.values() if f.repr)
    cls.__record_key__ = staticmethod(_key_of(tuple(f.name for f in table.values() if f.compare)))
    cls.__record_post_init__ = hasattr(cls, "__post_init__")
    cls.__match_args__ = cls.__record_names__
    if "__init__" not in own:
        cls.__init__ = _init
    if "__repr__" not in own:
        cls.__repr__ = _repr
    if "__eq__" not in own:
        cls.__eq__ = _eq
    if frozen:
        cls.__setattr__, cls.__delattr__ = _frozen_setattr, _frozen_delattr
        cls.__record_frozen__ = True  # its own instances take no attribute at all, as a frozen dataclass's
        if not own_hash:
            cls.__hash__ = _hash
    elif not own_hash:
        cls.__hash__ = None  # mutable and compared by value: unhashable, as a dataclass with eq
    return cls


def is_record(obj: object) -> bool:
    return hasattr(type(obj) if not isinstance(obj, type) else obj, "__record_fields__")


def fields(obj) -> tuple[Field, ...]:
    """A record's (or record class's) fields in order; a dataclass's through `dataclasses.fields`."""
    if not is_record(obj):
        import dataclasses

        return dataclasses.fields(obj)
    return tuple(obj.__record_fields__.values())


def replace(obj, /, **changes):
    """A copy of a record with some fields changed (dataclasses.replace); a dataclass through `dataclasses.replace`."""
    if not is_record(obj):
        import dataclasses

        return dataclasses.replace(obj, **changes)
    return type(obj)(**{**{n: getattr(obj, n) for n in obj.__record_names__}, **changes})


_ATOMS = (str, int, float, bool, type(None), bytes)


def asdict(obj):
    """A record as a dict, records inside it as dicts too, containers copied (dataclasses.asdict)."""
    if type(obj) in _ATOMS:
        return obj
    if is_record(obj) and not isinstance(obj, type):
        return {n: asdict(getattr(obj, n)) for n in obj.__record_names__}
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        return type(obj)(asdict(v) for v in obj)
    if isinstance(obj, dict):
        return type(obj)((asdict(k), asdict(v)) for k, v in obj.items())
    if not isinstance(obj, type) and hasattr(type(obj), "__dataclass_fields__"):
        import dataclasses

        return dataclasses.asdict(obj)
    import copy

    return copy.deepcopy(obj)
