"""Where a checkpoint file's bytes come from: a local file, or (checkpoint/hub.py) HTTP range reads.

Readers that only need a few byte ranges (safetensors headers, a torch zip's central directory and
pickle) take a `ByteSource`, so the same parsing serves a file on disk and a file on the Hub without
downloading the rest. Local sources stay plain paths everywhere else, so the writer can still copy
them in the kernel.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

from ..record import field, record
from .errors import CheckpointError


class ByteSource:
    """Random access to one file's bytes: `path` names it in messages, `size` is its length,
    `pread(offset, n)` returns bytes. Duck-typed (LocalSource, hub.HubFile, BlockCache): a plain class
    for annotations, not a typing.Protocol, because importing typing costs the header-only commands
    more than a millisecond of start-up."""

    path: Path
    size: int

    def pread(self, offset: int, n: int) -> bytes:
        raise NotImplementedError


@record
class LocalSource:
    """A file on disk. Opened per read: no descriptor is held between calls."""

    path: Path
    size: int

    @classmethod
    def of(cls, path: Path) -> LocalSource:
        try:
            return cls(Path(path), os.stat(path).st_size)
        except OSError as e:
            raise CheckpointError(path, f"cannot read: {e.strerror or e}") from None

    def pread(self, offset: int, n: int) -> bytes:
        try:
            with open(self.path, "rb") as f:
                f.seek(offset)
                return f.read(n)
        except OSError as e:
            raise CheckpointError(self.path, f"cannot read: {e.strerror or e}") from None


def read_exact(src: ByteSource, offset: int, n: int, what: str) -> bytes:
    """`n` bytes at `offset`, or a CheckpointError naming what was being read."""
    if offset < 0 or n < 0 or offset + n > src.size:
        raise CheckpointError(src.path, f"{what} at {offset}..{offset + n} runs past the end of the file ({src.size} bytes)")
    data = src.pread(offset, n)
    if len(data) != n:
        raise CheckpointError(src.path, f"{what} is cut short ({len(data)} of {n} bytes; file changed while reading?)")
    return data


class SourceFile(io.RawIOBase):
    """A read-only file object over a ByteSource, for stdlib parsers (zipfile) that want one."""

    def __init__(self, src: ByteSource):
        super().__init__()
        self._src = src
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: self._src.size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, b) -> int:
        n = max(0, min(len(b), self._src.size - self._pos))
        data = self._src.pread(self._pos, n) if n else b""
        b[: len(data)] = data
        self._pos += len(data)
        return len(data)


@record(frozen=False)
class BlockCache:
    """Small reads of a ByteSource served from aligned blocks kept for the life of this object.

    zipfile reads a central directory in many small pieces and each storage's local header sits
    in its own place: over HTTP each would be a request. Reading whole 4 KiB blocks once turns those
    into a few requests without fetching anything large. Reads longer than a few blocks go straight
    to the source."""

    inner: ByteSource
    block: int = 4096
    blocks: dict[int, bytes] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return self.inner.path

    @property
    def size(self) -> int:
        return self.inner.size

    def pread(self, offset: int, n: int) -> bytes:
        if n > 4 * self.block:
            return self.inner.pread(offset, n)
        first, last = offset // self.block, (offset + n - 1) // self.block
        missing = [b for b in range(first, last + 1) if b not in self.blocks]
        if missing:  # one read for the missing run (they are adjacent or few)
            lo, hi = missing[0] * self.block, min(self.size, (missing[-1] + 1) * self.block)
            data = self.inner.pread(lo, hi - lo)
            for b in range(missing[0], missing[-1] + 1):
                self.blocks[b] = data[(b - missing[0]) * self.block : (b - missing[0] + 1) * self.block]
        joined = b"".join(self.blocks[b] for b in range(first, last + 1))
        start = offset - first * self.block
        return joined[start : start + n]
