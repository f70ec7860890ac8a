"""Header-only safetensors reading, validated the way the format requires.

We parse the JSON header ourselves instead of calling `safe_open`: it is the only way to stay
torch-free and in the tens of milliseconds for multi-GB files, and it lets us refuse hostile
headers (huge claims, overlaps, holes) before anything is allocated or mapped.
"""

from __future__ import annotations

import json
import math
import os
import struct
from pathlib import Path

from ..record import field, record
from .errors import CheckpointError

# Byte size (in bits, to cover sub-byte types) of every dtype the safetensors spec knows.
DTYPE_BITS: dict[str, int] = {
    "BOOL": 8,
    "U8": 8,
    "I8": 8,
    "F8_E5M2": 8,
    "F8_E4M3": 8,
    "F8_E8M0": 8,
    "F4": 4,
    "F6_E2M3": 6,
    "F6_E3M2": 6,
    "I16": 16,
    "U16": 16,
    "F16": 16,
    "BF16": 16,
    "I32": 32,
    "U32": 32,
    "F32": 32,
    "I64": 64,
    "U64": 64,
    "F64": 64,
    "C64": 64,
}
FLOAT_DTYPES = {"F16", "BF16", "F32", "F64", "F8_E5M2", "F8_E4M3", "F8_E8M0", "F4", "F6_E2M3", "F6_E3M2"}

# Bounds. safetensors itself caps the header at 100 MB; real drafters need a few KB.
MAX_HEADER_BYTES = 100_000_000
MAX_TENSORS = 200_000
MAX_NDIM = 16


@record
class TensorInfo:
    """Where one tensor's bytes live; nothing is read until asked."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    file: Path
    offset: int  # absolute byte offset in `file`
    nbytes: int
    # Where the bytes are when `file` is not a local file (a Hub file read by HTTP range): a
    # checkpoint.source.ByteSource. None: read `file` directly (and let the writer copy in the kernel).
    source: object | None = field(default=None, compare=False, repr=False)
    # Element strides when the tensor is not one contiguous row-major range (a view saved by
    # torch.save); such a tensor is described, but its bytes cannot be read or copied as one range.
    strides: tuple[int, ...] | None = None

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    def read_at(self, start: int, n: int) -> bytes:
        """`n` bytes from `start` within this tensor's bytes, from wherever they live."""
        return self.read_spans([(start, n)])[0]

    def read_spans(self, spans: list[tuple[int, int]]) -> list[bytes]:
        """The bytes of each (start, n) span within this tensor, the file opened once for all of them (a check
        samples 16 embedding rows)."""
        if self.strides is not None:
            raise CheckpointError(
                self.file,
                f"tensor {self.name!r} is a strided view (strides {list(self.strides)}), not one byte range; refusing to read it as one",
            )
        for start, n in spans:
            if start < 0 or n < 0 or start + n > self.nbytes:
                raise CheckpointError(self.file, f"tensor {self.name!r}: read {start}..{start + n} outside its {self.nbytes} bytes")
        if self.source is not None:
            out = [self.source.pread(self.offset + start, n) for start, n in spans]
        else:
            out = []
            with open(self.file, "rb") as f:
                for start, n in spans:
                    f.seek(self.offset + start)
                    out.append(f.read(n))
        if any(len(data) != n for data, (_, n) in zip(out, spans)):
            raise CheckpointError(self.file, f"tensor {self.name!r} is cut short (file changed while reading?)")
        return out

    def read_bytes(self) -> bytes:
        return self.read_at(0, self.nbytes)


@record
class SafetensorsHeader:
    path: Path
    header_len: int  # the JSON header's length as written (incl. padding)
    data_start: int  # 8 + header_len
    file_size: int
    metadata: dict[str, str]
    tensors: dict[str, TensorInfo]  # in data order


def tensor_nbytes(dtype: str, shape: tuple[int, ...]) -> int:
    bits = DTYPE_BITS[dtype] * math.prod(shape)
    return (bits + 7) // 8


def read_header(path: str | os.PathLike) -> SafetensorsHeader:
    """Parse and fully validate a safetensors header. Raises CheckpointError, never anything else."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < 8:
                raise CheckpointError(path, f"not a safetensors file: {size} bytes, shorter than the 8-byte header length")
            (n,) = struct.unpack("<Q", f.read(8))
            if n > MAX_HEADER_BYTES:
                raise CheckpointError(path, f"header length {n} exceeds the {MAX_HEADER_BYTES}-byte limit")
            if 8 + n > size:
                raise CheckpointError(path, f"header length {n} runs past the end of the file ({size} bytes): truncated or not safetensors")
            raw = f.read(n)
    except OSError as e:
        raise CheckpointError(path, f"cannot read: {e.strerror or e}") from None
    return parse_header(path, raw, size)


def parse_header(path: Path, raw: bytes, file_size: int) -> SafetensorsHeader:
    n = len(raw)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CheckpointError(path, f"header is not valid UTF-8 (byte {e.start})") from None
    if not text.startswith("{"):
        raise CheckpointError(path, "header does not start with '{': not a safetensors file")
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as e:
        raise CheckpointError(path, f"header is not valid JSON: {getattr(e, 'msg', e)}") from None
    if not isinstance(obj, dict):
        raise CheckpointError(path, "header is not a JSON object")

    meta = obj.pop("__metadata__", None) or {}
    if not isinstance(meta, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in meta.items()):
        raise CheckpointError(path, "__metadata__ must map strings to strings")
    if len(obj) > MAX_TENSORS:
        raise CheckpointError(path, f"{len(obj)} tensors exceeds the {MAX_TENSORS}-tensor limit")

    data_start = 8 + n
    data_len = file_size - data_start
    entries: list[tuple[int, int, str, str, tuple[int, ...]]] = []
    for name, info in obj.items():
        if not isinstance(info, dict):
            raise CheckpointError(path, f"tensor {name!r}: entry is not an object")
        dtype, shape, offs = info.get("dtype"), info.get("shape"), info.get("data_offsets")
        if dtype not in DTYPE_BITS:
            raise CheckpointError(path, f"tensor {name!r}: unknown dtype {dtype!r}")
        if not isinstance(shape, list) or len(shape) > MAX_NDIM or not all(type(d) is int and d >= 0 for d in shape):
            raise CheckpointError(path, f"tensor {name!r}: shape must be a list of non-negative integers, got {shape!r}")
        if not isinstance(offs, list) or len(offs) != 2 or not all(type(o) is int and o >= 0 for o in offs) or offs[0] > offs[1]:
            raise CheckpointError(path, f"tensor {name!r}: data_offsets must be [begin, end] with 0 <= begin <= end, got {offs!r}")
        begin, end = offs
        if end > data_len:
            raise CheckpointError(
                path, f"tensor {name!r}: data_offsets {offs} run past the data section ({data_len} bytes): file truncated?"
            )
        # Shapes can claim astronomically many elements; offsets were bounded by the file size above,
        # so compare in Python ints (no allocation) and refuse any disagreement.
        shp = tuple(shape)
        need = tensor_nbytes(dtype, shp)
        if need != end - begin:
            raise CheckpointError(path, f"tensor {name!r}: {dtype}{list(shp)} needs {need} bytes but data_offsets span {end - begin}")
        entries.append((begin, end, name, dtype, shp))

    entries.sort(key=lambda e: (e[0], e[1]))
    pos = 0
    tensors: dict[str, TensorInfo] = {}
    for begin, end, name, dtype, shp in entries:
        if begin < pos:
            raise CheckpointError(path, f"tensor {name!r}: data_offsets overlap the previous tensor (begins at {begin} < {pos})")
        if begin > pos:
            raise CheckpointError(path, f"tensor {name!r}: gap in the data section before it ({pos}..{begin})")
        pos = end
        tensors[name] = TensorInfo(name, dtype, shp, path, data_start + begin, end - begin)
    if pos != data_len:
        raise CheckpointError(path, f"data section is {data_len} bytes but tensors cover {pos}: trailing or missing bytes")
    return SafetensorsHeader(path, n, data_start, file_size, meta, tensors)
