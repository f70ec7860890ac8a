"""Read small tensors' values (vocab maps, a few embedding rows) without numpy or torch.

Only what the compatibility rules need, capped so a hostile header cannot make us read gigabytes.
"""

from __future__ import annotations

import math
import operator
import struct
from array import array
from itertools import chain, repeat

from .errors import CheckpointError
from .safetensors import TensorInfo

MAX_VALUES_BYTES = 64 * 2**20

_INT = {"I64": "q", "I32": "i", "I16": "h", "I8": "b", "U8": "B", "U16": "H", "U32": "I", "U64": "Q", "BOOL": "B"}


def int_array(t: TensorInfo) -> array:
    """An integer (or bool) tensor as an `array`: indexing, counting, min/max and comparison then run in C,
    which a 1.6 M-entry t2d needs (a list of Python ints costs ~50 ms to build alone)."""
    if t.dtype not in _INT:
        raise CheckpointError(t.file, f"{t.name}: expected an integer tensor, got {t.dtype}")
    if t.nbytes > MAX_VALUES_BYTES:
        raise CheckpointError(t.file, f"{t.name}: {t.nbytes} bytes is too large for a vocab map")
    a = array(_INT[t.dtype])
    a.frombytes(t.read_bytes())
    return a


def int_values(t: TensorInfo) -> list[int]:
    return int_array(t).tolist()


def _floats(raw: bytes, dtype: str) -> list[float]:
    if dtype == "F32":
        return list(struct.unpack(f"<{len(raw) // 4}f", raw))
    if dtype == "F16":
        return list(struct.unpack(f"<{len(raw) // 2}e", raw))
    if dtype == "BF16":  # bf16 is the top half of a float32: place the bytes, no Python loop
        wide = bytearray(2 * len(raw))
        wide[2::4] = raw[0::2]
        wide[3::4] = raw[1::2]
        return memoryview(wide).cast("f").tolist()
    raise CheckpointError(None, f"unsupported float dtype {dtype}")


def sample_rows(t: TensorInfo, n_rows: int = 16, max_cols: int = 1024) -> tuple[list[int], list[list[float]]]:
    """n_rows rows spread over a 2-D float tensor, the first max_cols values of each (row indices,
    values): enough for mean/std, cheap for a 7168-wide, 163840-row embedding."""
    rows, cols = t.shape
    elt = t.nbytes // max(1, rows * cols)
    take = min(cols, max_cols)
    idx = sorted({int(i * (rows - 1) / max(1, n_rows - 1)) for i in range(n_rows)}) if rows else []
    # through read_spans: the tensor may live in a torch zip or on the Hub (16 small range reads)
    return idx, [_floats(raw, t.dtype) for raw in t.read_spans([(r * cols * elt, take * elt) for r in idx])]


def row_bytes(t: TensorInfo, rows: list[int]) -> list[bytes]:
    r_total, cols = t.shape
    elt = t.nbytes // max(1, r_total * cols)
    return t.read_spans([(r * cols * elt, cols * elt) for r in rows])


def mean_std(values: list[list[float]]) -> tuple[float, float]:
    """Mean and standard deviation of the finite values, in C-level loops (16 k sampled values per check). A finite
    sum means every value is finite (a float16/bfloat16/float32 value times 16 k cannot overflow a double), so only a
    sample holding inf or nan is filtered."""
    flat = list(chain.from_iterable(values))
    total = sum(flat)
    if not math.isfinite(total):
        flat = list(filter(math.isfinite, flat))
        total = sum(flat)
    if not flat:
        return 0.0, 0.0
    m = total / len(flat)
    dev = list(map(operator.sub, flat, repeat(m)))
    return m, math.sqrt(sum(map(operator.mul, dev, dev)) / len(flat))
