"""A DFlash drafter's `mask_embedding.pt`, read and written without torch and without unpickling.

The engines load it with `torch.load(..., weights_only=True)` and accept two forms:
- vLLM (vllm/model_executor/models/qwen3_dflash.py `_read_mask_embedding`, 0.27.0 and 0.32.0 read): a bare tensor,
  or a dict whose `embedding` is the tensor and whose optional `mask_token_id` must equal the config's;
- SGLang from 0.5.20 (sglang/srt/speculative/dflash_worker_v2.py `_maybe_merge_trained_mask_embedding`, read in the
  0.5.20 wheel and the newest: the engines/sglang/dflash.py rows): only the dict, `saved["embedding"]` and
  `int(saved["mask_token_id"])` (a bare tensor raises).
The dict with both keys (what MiMo ships) is read by both, so that is the form written here. The file is read with
the torch-zip interpreter of torchzip.py (no code run); written as torch's zip format by hand: one `data.pkl` of
protocol-2 opcodes that rebuild the tensor from one storage, the storage's bytes, `byteorder` and `version`.
"""

from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path

from ..record import record
from .errors import CheckpointError
from .safetensors import TensorInfo
from .sidefiles import MASK_FILE  # noqa: F401  (convert and eval read the name from here too)
from .source import LocalSource, read_exact
from .torchzip import STORAGE_DTYPES, TensorRef, _data_offset, _describe, _members, _prefix, _Refused, run_pickle

STORAGE_OF = {dtype: name for name, (dtype, _size) in STORAGE_DTYPES.items()}


@record
class MaskFile:
    """What a mask_embedding.pt holds: the embedding (where its bytes are), the mask token id it names (None for a
    bare tensor or a dict without one), its form ("dict" or "tensor") and whether it is SGLang's per-position table."""

    path: Path
    embedding: TensorInfo
    mask_token_id: int | None
    form: str
    per_position: bool = False

    @property
    def sglang_form(self) -> bool:
        """SGLang 0.5.20+ reads `saved["embedding"]` and `int(saved["mask_token_id"])`: only a dict with both."""
        return self.form == "dict" and self.mask_token_id is not None


def read_mask_file(path: Path) -> MaskFile:
    """The file's embedding and keys, its pickle interpreted (never run), no tensor bytes read."""
    src = LocalSource.of(path)
    members = _members(src)
    prefix = _prefix(src, members)
    pkl = members[prefix + "data.pkl"]
    try:
        obj = run_pickle(read_exact(src, _data_offset(src, pkl), pkl.file_size, "data.pkl"))
    except _Refused as e:
        raise CheckpointError(path, f"refusing to unpickle: {e} (nothing was executed)") from None
    except (UnicodeDecodeError, struct.error, RecursionError) as e:
        raise CheckpointError(path, f"refusing to unpickle: malformed pickle ({e}) (nothing was executed)") from None
    if isinstance(obj, TensorRef):
        ref, mid, form, per_pos = obj, None, "tensor", False
    elif isinstance(obj, dict) and isinstance(obj.get("embedding"), TensorRef):
        ref, mid, form, per_pos = obj["embedding"], obj.get("mask_token_id"), "dict", bool(obj.get("per_position"))
        if mid is not None and type(mid) is not int:
            raise CheckpointError(path, f"mask_token_id is {mid!r}, not an int")
    else:
        raise CheckpointError(path, "holds neither a tensor nor a dict with an 'embedding' tensor: no engine reads it")
    info = _describe("embedding", ref, members, prefix, src, {})
    if info.strides is not None:
        raise CheckpointError(path, "the embedding is a strided view; re-save it contiguous")
    return MaskFile(path, info, mid, form, per_pos)


def _str(s: str) -> bytes:
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def _int(v: int) -> bytes:
    if 0 <= v < 256:
        return b"K" + bytes([v])
    if 0 <= v < 65536:
        return b"M" + struct.pack("<H", v)
    if -(2**31) <= v < 2**31:
        return b"J" + struct.pack("<i", v)
    n = (v.bit_length() + 8) // 8
    return b"\x8a" + bytes([n]) + v.to_bytes(n, "little", signed=True)


def _tuple(items: list[bytes]) -> bytes:
    return b"(" + b"".join(items) + b"t"


def mask_file_bytes(dtype: str, shape: tuple[int, ...], data: bytes, mask_token_id: int) -> bytes:
    """A torch zip holding {"embedding": tensor(dtype, shape) over `data`, "mask_token_id": id}, as torch.save
    writes it (protocol 2, one storage "0", members stored uncompressed under "archive/")."""
    if dtype not in STORAGE_OF:
        raise CheckpointError(None, f"cannot write a {dtype} mask embedding as a torch storage")
    itemsize = STORAGE_DTYPES[STORAGE_OF[dtype]][1]
    numel = len(data) // itemsize
    strides, acc = [], 1
    for s in reversed(shape):
        strides.insert(0, acc)
        acc *= s
    if acc != numel:
        raise CheckpointError(None, f"shape {list(shape)} does not hold {numel} elements")
    storage = b"Q"  # BINPERSID over ('storage', torch.<T>Storage, '0', 'cpu', numel)
    pid = _tuple([_str("storage"), b"ctorch\n" + STORAGE_OF[dtype].encode() + b"\n", _str("0"), _str("cpu"), _int(numel)])
    tensor = (
        b"ctorch._utils\n_rebuild_tensor_v2\n"
        + _tuple(
            [
                pid + storage,
                _int(0),
                _tuple([_int(s) for s in shape]),
                _tuple([_int(s) for s in strides]),
                b"\x89",
                b"ccollections\nOrderedDict\n)R",
            ]
        )
        + b"R"
    )
    pkl = b"\x80\x02}(" + _str("embedding") + tensor + _str("mask_token_id") + _int(mask_token_id) + b"u."
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for name, blob in (("data.pkl", pkl), ("byteorder", b"little"), ("data/0", data), ("version", b"3\n")):
            z.writestr(zipfile.ZipInfo(f"archive/{name}", date_time=(1980, 1, 1, 0, 0, 0)), blob)
    return out.getvalue()
