"""Part of a large model.safetensors.index.json read by byte ranges: the weight_map entries under a few name
prefixes, found by binary search. transformers writes the index with json.dumps(indent=2, sort_keys=True)
(modeling_utils.py): one entry a line, names in order, weight_map the last key. A raw newline never occurs
inside a JSON string, so every line break is structural and a line read from any offset can be parsed
alone. Any line that is not one entry, any name out of order among the lines read, any other layout:
`IndexSearchError`, and the caller reads the whole index instead (saying why)."""

from __future__ import annotations

import json
import re
import threading
from concurrent.futures import Future, ThreadPoolExecutor

from ..record import field, record

BLOCK = 4096  # the unit of a probe; a DeepSeek-V3 index line is ~100 bytes, so a block holds ~40 entries
RUN = 64 * 1024  # what one read takes ahead while collecting a prefix's entries (a head's layer is ~160 KB of index)
ENTRY = re.compile(rb'^[ \t]*("(?:[^"\\\n]|\\.)*")[ \t]*:[ \t]*("(?:[^"\\\n]|\\.)*")[ \t]*(,?)[ \t]*\r?$')
WEIGHT_MAP = re.compile(rb'"weight_map"[ \t]*:[ \t]*\{[ \t]*\r?\n')
TAIL = re.compile(rb"\n[ \t]*\}[ \t]*\r?\n?[ \t]*\}\s*$")


class IndexSearchError(Exception):
    """The index is not laid out (or not ordered) as the search needs; the message says how."""


@record(frozen=False)
class PartialWeightMap:
    """What the search read: the entries under the prefixes (and the exact names asked), the index metadata,
    the bytes and range reads it took, and how many entries' order was checked."""

    weight_map: dict[str, str]
    metadata: dict
    bytes_read: int
    reads: int
    checked: int
    prefixes: tuple[str, ...]
    exact: tuple[str, ...]
    size: int


@record(frozen=False)
class _Lines:
    """A file read in BLOCK-aligned ranges, each read once; parsed entry lines by their start offset."""

    src: object  # a ByteSource: .size, .pread(offset, n)
    first: int = 0  # first entry line's start
    end: int = 0  # start of the line closing the weight_map
    blocks: dict[int, bytes] = field(default_factory=dict)
    seen: dict[int, tuple[int, str, str]] = field(default_factory=dict)  # start -> (end, name, file)
    bytes_read: int = 0
    reads: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    pending: dict[int, Future] = field(default_factory=dict)  # block -> the read in flight that brings it

    def fetch(self, first: int, last: int) -> None:
        """Blocks first..last into the cache, each run of missing ones in one range read; a block another thread is
        already reading is waited for, not read twice."""
        mine: list[tuple[int, int, Future]] = []
        with self.lock:
            k = first
            while k <= last:
                if k in self.blocks or k in self.pending:
                    k += 1
                    continue
                j = k
                while j + 1 <= last and j + 1 not in self.blocks and j + 1 not in self.pending:
                    j += 1
                fut: Future = Future()
                self.pending.update(dict.fromkeys(range(k, j + 1), fut))
                mine.append((k, j, fut))
                k = j + 1
        for n, (k, j, fut) in enumerate(mine):
            try:
                self._read_run(k, j)
            except BaseException as e:
                for _, _, f in mine[n:]:
                    f.set_exception(e)  # whoever waits on these blocks fails as this thread does
                raise
            fut.set_result(None)
        for k in range(first, last + 1):
            if k not in self.blocks:
                waiting = self.pending.get(k)
                if waiting is not None:
                    waiting.result()

    def _read_run(self, k: int, j: int) -> None:
        off, n = k * BLOCK, min((j + 1) * BLOCK, self.src.size) - k * BLOCK
        data = self.src.pread(off, n)
        if len(data) != n:
            raise IndexSearchError(f"range {off}..{off + n} came back with {len(data)} bytes")
        with self.lock:
            for i in range(k, j + 1):
                self.blocks[i] = data[(i - k) * BLOCK : (i - k + 1) * BLOCK]
                del self.pending[i]
            self.bytes_read += n
            self.reads += 1

    def span(self, start: int, stop: int) -> bytes:
        stop = min(stop, self.src.size)
        first, last = start // BLOCK, (stop - 1) // BLOCK
        self.fetch(first, last)
        data = b"".join(self.blocks[k] for k in range(first, last + 1))
        return data[start - first * BLOCK : stop - first * BLOCK]

    def line_start_at_or_after(self, off: int) -> int:
        """The start of the first line at or after `off` (a line starts after a newline)."""
        if off <= self.first:
            return self.first
        pos = off - 1
        while pos < self.end:
            chunk = self.span(pos, min(pos + BLOCK, self.end))
            i = chunk.find(b"\n")
            if i >= 0:
                return pos + i + 1
            pos += len(chunk)
        return self.end

    def entry(self, start: int) -> tuple[int, str, str]:
        """(next line's start, name, file) of the entry line at `start`."""
        if start in self.seen:
            return self.seen[start]
        pos, parts = start, []
        while True:
            chunk = self.span(pos, min(pos + BLOCK, self.end))
            i = chunk.find(b"\n")
            if i >= 0 or not chunk:
                parts.append(chunk[: i if i >= 0 else len(chunk)])
                break
            parts.append(chunk)
            pos += len(chunk)
        line = b"".join(parts)
        m = ENTRY.match(line)
        if m is None:
            raise IndexSearchError(f"the line at byte {start} is not one weight_map entry: {line[:80]!r}")
        nxt = start + len(line) + 1
        if (m[3] == b",") != (nxt < self.end):
            raise IndexSearchError(f"the entry at byte {start} has {'no ' if nxt < self.end else 'a '}trailing comma")
        try:
            name, file = json.loads(m[1]), json.loads(m[2])
        except ValueError as e:
            raise IndexSearchError(f"the entry at byte {start} does not parse ({e})") from None
        self.seen[start] = (min(nxt, self.end), name, file)
        return self.seen[start]

    def lower_bound(self, key: str) -> int:
        """The start of the first entry whose name is >= key (self.end when none)."""
        lo, hi = self.first, self.end  # lines starting before lo are < key; lines starting at or after hi are >= key
        while hi - lo > BLOCK:
            s = self.line_start_at_or_after((lo + hi) // 2)
            if s >= hi:
                break
            nxt, name, _ = self.entry(s)
            if name < key:
                lo = nxt
            else:
                hi = s
        s = lo
        while s < hi:
            nxt, name, _ = self.entry(s)
            if name >= key:
                return s
            s = nxt
        return hi


def _frame(lines: _Lines) -> dict:
    """Find where the weight_map's entries start and end; the metadata before them."""
    src = lines.src
    head = lines.span(0, min(src.size, BLOCK))
    m = WEIGHT_MAP.search(head)
    if m is None:
        raise IndexSearchError('"weight_map": { followed by a line break is not in the first block')
    try:
        outer = json.loads(head[: m.start()] + b'"weight_map": {}}')
    except ValueError:
        raise IndexSearchError(
            "what precedes the weight_map is not the start of one JSON object (is weight_map not the last key?)"
        ) from None
    if not isinstance(outer, dict) or set(outer) - {"metadata", "weight_map"}:
        raise IndexSearchError(f"the index has keys besides metadata and weight_map: {sorted(outer)}")
    tail_at = max(0, src.size - BLOCK)
    tail = lines.span(tail_at, src.size)
    t = TAIL.search(tail)
    if t is None:
        raise IndexSearchError("the file does not end by closing the weight_map and the object on their own lines")
    lines.first, lines.end = m.end(), tail_at + t.start() + 1
    if lines.end <= lines.first:
        raise IndexSearchError("the weight_map is empty")
    lines.entry(lines.first)  # the first and last lines must be entries (the last without a comma): the frame is right
    last = tail.rfind(b"\n", 0, t.start())
    if last < 0:
        raise IndexSearchError("the weight_map's last entry is not in the last block")
    lines.entry(tail_at + last + 1)
    meta = outer.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _entries_under(lines: _Lines, key: str, prefix: bool) -> list[tuple[str, str]]:
    """(name, file) of the entries whose names start with `key` (prefix) or equal it."""
    out = []
    s = lines.lower_bound(key)
    while s < lines.end:
        if prefix and (s // BLOCK not in lines.blocks or (s + BLOCK) // BLOCK not in lines.blocks):
            lines.fetch(s // BLOCK, (min(s + RUN, lines.end) - 1) // BLOCK)  # read on in one request
        nxt, name, file = lines.entry(s)
        if not (name.startswith(key) if prefix else name == key):
            break
        out.append((name, file))
        if not prefix:
            break
        s = nxt
    return out


def search_index(src, prefixes: tuple[str, ...], exact: tuple[str, ...]) -> PartialWeightMap:
    """The entries whose names start with one of `prefixes` or equal one of `exact`, by range reads of `src`."""
    lines = _Lines(src)
    targets = [(p, True) for p in sorted(set(prefixes))] + [(k, False) for k in sorted(set(exact))]
    # each name's search in its own thread: over the Hub a range read is a round trip, and the searches share blocks
    with ThreadPoolExecutor(max_workers=min(16, len(targets) + 1)) as pool:
        tail = (max(0, src.size - BLOCK) // BLOCK, (src.size - 1) // BLOCK)
        list(pool.map(lambda ks: lines.fetch(*ks), [(0, 0), tail]))
        meta = _frame(lines)
        found = list(pool.map(lambda t: _entries_under(lines, *t), targets))
    wmap = {name: file for part in found for name, file in part}
    # the order of every entry parsed, in file order: one out of place and the search cannot be trusted
    order = [lines.seen[s][1] for s in sorted(lines.seen)]
    bad = next((i for i in range(1, len(order)) if order[i - 1] >= order[i]), None)
    if bad is not None:
        raise IndexSearchError(f"weight_map names out of order ({order[bad - 1]!r} before {order[bad]!r})")
    return PartialWeightMap(wmap, meta, lines.bytes_read, lines.reads, len(order), tuple(prefixes), tuple(exact), src.size)
