"""`Later`: a regular expression compiled the first time it is used, not when its module is imported.

Python compiles a pattern in pure Python (`re._compiler`), 0.03–0.3 ms each. The family and rule modules hold dozens of
patterns that most checkpoints never reach (Medusa's and the MTP heads' layouts for an EAGLE-3 drafter, the
refusals of checkpoints that are no drafter, the Hub id syntax for a path that exists); compiled at import, every
`check` paid for all of them. A `Later` keeps the pattern's text. Its first `match`/`search`/… compiles it and puts the
compiled pattern's own methods in its slots, so every later call is the compiled pattern's, at nearly its cost (a loop
over a target's 100 k tensor names included)."""

from __future__ import annotations

import re

_BOUND = ("match", "fullmatch", "search", "finditer", "findall", "sub", "groupindex", "groups")


class Later:
    __slots__ = ("pattern", "flags", *_BOUND)

    def __init__(self, pattern: str, flags: int = 0):
        self.pattern, self.flags = pattern, flags

    @property
    def compiled(self) -> bool:
        """Whether a first use has compiled it (an unset slot raises without reaching __getattr__)."""
        try:
            object.__getattribute__(self, "match")
        except AttributeError:
            return False
        return True

    def __getattr__(self, name: str):
        """Reached only while a slot of _BOUND is still unset: the first use compiles, then fills them all."""
        if name not in _BOUND:
            raise AttributeError(f"'Later' object has no attribute {name!r}")
        rx = re.compile(self.pattern, self.flags)
        for n in _BOUND:
            setattr(self, n, getattr(rx, n))
        return getattr(rx, name)

    def __repr__(self) -> str:
        return f"Later({self.pattern!r})"
