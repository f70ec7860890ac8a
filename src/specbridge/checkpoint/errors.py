"""One error type for unusable input, so every command can exit 2 with one clear line."""

from __future__ import annotations

import os


class CheckpointError(Exception):
    """The input cannot be used. `str()` is the one line the CLI prints."""

    def __init__(self, path: str | os.PathLike | None, message: str):
        self.path = None if path is None else os.fspath(path)
        self.message = message
        super().__init__(f"{self.path}: {message}" if self.path else message)
