"""An engine's table split into one file per drafter family, read lazily (PEP 562).

An engine package (engines/sglang/, engines/trtllm/) names its files and what each holds; importing the package
imports none of them. A name is read from its file the first time it is asked for, so a check of one family
(`family_ranges`) imports that family's files only, and engines/registry.py's tables (ERAS, FAMILY_RANGES, …) import
the files they name."""

from __future__ import annotations

import importlib


class LazyTable:
    """`range_files`: the files whose RANGES make FAMILY_RANGES, in its order; `family_files`: drafter family ->
    the files whose RANGES hold its rows; `file_names`: file -> the names the package gives from it (the tables
    engines/registry.py reads, at least); `search`: every file, in the order any other public name is looked for."""

    def __init__(
        self,
        package: str,
        namespace: dict[str, object],
        *,
        range_files: tuple[str, ...],
        family_files: dict[str, tuple[str, ...]],
        file_names: dict[str, tuple[str, ...]],
        search: tuple[str, ...] = (),
    ):
        self.package, self.namespace, self.range_files, self.family_files = package, namespace, range_files, family_files
        self.where = {name: file for file, names in file_names.items() for name in names}
        self.search = tuple(dict.fromkeys((*search, *file_names, *range_files)))
        self.files = frozenset(self.search)

    def file(self, name: str) -> object:
        return importlib.import_module(f"{self.package}.{name}")

    def family_ranges(self, family: str) -> tuple:
        """The engine's rows for one drafter family, in FAMILY_RANGES' order; imports that family's files only."""
        return tuple(r for file in self.family_files[family] for r in self.file(file).RANGES if r.family == family)

    def getattr(self, name: str) -> object:
        """The package's module `__getattr__`: FAMILY_RANGES, a name of `file_names`, or a file; kept once read."""
        if name == "FAMILY_RANGES":
            value = tuple(r for file in self.range_files for r in self.file(file).RANGES)
        elif name in self.where:
            value = getattr(self.file(self.where[name]), name)
        elif name in self.files:
            return self.file(name)
        else:
            value = self._searched(name)
        self.namespace[name] = value
        return value

    def _searched(self, name: str) -> object:
        """Any other public name: the first file of `search` that defines it."""
        if not name.startswith("_"):
            for file in self.search:
                found = vars(self.file(file))
                if name in found:
                    return found[name]
        raise AttributeError(f"module {self.package!r} has no attribute {name!r}")

    def row_file(self, cls) -> str:
        """The file whose rows hold DraftClass `cls` (a file's own name for it, else a range of its RANGES or ERAS),
        among the files imported so far: what a RowError names."""
        import sys

        loaded = [(f, sys.modules[f"{self.package}.{f}"]) for f in self.search if f"{self.package}.{f}" in sys.modules]
        where = self.package.replace(".", "/")
        for f, mod in loaded:
            if any(v is cls for k, v in vars(mod).items() if not k.startswith("__")):
                return f"{where}/{f}.py"
        for f, mod in loaded:
            for r in (*vars(mod).get("RANGES", ()), *vars(mod).get("ERAS", ())):
                if any(c is cls for c in r.classes.values()):
                    return f"{where}/{f}.py"
        return f"{where}/"

    def dir(self) -> list[str]:
        return sorted({*self.namespace, *self.where, *self.files, "FAMILY_RANGES"})
