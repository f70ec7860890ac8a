"""`Later`: a regular expression compiled the first time it is used, not when its module is imported.

Python compiles a pattern in pure Python (`re._compiler`), 0.05–0.2 ms each. A module of patterns that most inputs
never reach (the refusals of checkpoints that are no drafter, the Hub id syntax for a path that exists) would make every
`check` pay for all of them. A `Later` keeps the pattern's text and compiles it on its first `match`/`search`; it is
meant for patterns read a few times per command, not inside a loop over a target's 100 k tensor names."""

from __future__ import annotations

import re


class Later:
    __slots__ = ("pattern", "flags", "_rx")

    def __init__(self, pattern: str, flags: int = 0):
        self.pattern, self.flags, self._rx = pattern, flags, None

    @property
    def compiled(self) -> re.Pattern:
        if self._rx is None:
            self._rx = re.compile(self.pattern, self.flags)
        return self._rx

    def match(self, string: str) -> re.Match | None:
        return self.compiled.match(string)

    def search(self, string: str) -> re.Match | None:
        return self.compiled.search(string)

    def __repr__(self) -> str:
        return f"Later({self.pattern!r})"
