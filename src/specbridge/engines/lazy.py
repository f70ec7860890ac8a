"""An engine's table split into one file per drafter family, read lazily (PEP 562).

An engine package (engines/sglang/, engines/trtllm/) names its files and what each holds; importing the package
imports none of them. A name is read from its file the first time it is asked for, so a check of one family
(`family_ranges`) imports that family's files only, and engines/registry.py's tables (ERAS, FAMILY_RANGES, …) import
the files they name."""

from __future__ import annotations

import importlib
from typing import Any


class LazyTable:
    """`range_files`: the files whose RANGES make FAMILY_RANGES, in its order; `family_files`: drafter family ->
    the files whose RANGES hold its rows; `file_names`: file -> the other names the package gives from it."""

    def __init__(
        self,
        package: str,
        namespace: dict[str, Any],
        *,
        range_files: tuple[str, ...],
        family_files: dict[str, tuple[str, ...]],
        file_names: dict[str, tuple[str, ...]],
    ):
        self.package, self.namespace, self.range_files, self.family_files = package, namespace, range_files, family_files
        self.where = {name: file for file, names in file_names.items() for name in names}
        self.files = frozenset(file_names) | frozenset(range_files)

    def file(self, name: str) -> Any:
        return importlib.import_module(f"{self.package}.{name}")

    def family_ranges(self, family: str) -> tuple:
        """The engine's rows for one drafter family, in FAMILY_RANGES' order; imports that family's files only."""
        return tuple(r for file in self.family_files[family] for r in self.file(file).RANGES if r.family == family)

    def getattr(self, name: str) -> Any:
        """The package's module `__getattr__`: FAMILY_RANGES, a name of `file_names`, or a file; kept once read."""
        if name == "FAMILY_RANGES":
            value = tuple(r for file in self.range_files for r in self.file(file).RANGES)
        elif name in self.where:
            value = getattr(self.file(self.where[name]), name)
        elif name in self.files:
            return self.file(name)
        else:
            raise AttributeError(f"module {self.package!r} has no attribute {name!r}")
        self.namespace[name] = value
        return value

    def dir(self) -> list[str]:
        return sorted({*self.namespace, *self.where, *self.files, "FAMILY_RANGES"})
