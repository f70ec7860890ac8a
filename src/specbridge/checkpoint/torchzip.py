"""Read `pytorch_model.bin` / `.pt` checkpoints (torch's zip format) without running their pickle.

A torch checkpoint is a zip: `<prefix>/data.pkl` (a pickle describing the tensors), one stored
(uncompressed) member `<prefix>/data/<key>` per storage, and `<prefix>/byteorder`. `pickle.load`
on data.pkl can call any importable function, so we never use it, nor import torch. Instead a small
interpreter below understands exactly the opcodes and globals torch's own tensor rebuild emits
(`torch._utils._rebuild_tensor_v2`, typed storages, `collections.OrderedDict`, …) and builds plain
descriptions: dtype, shape, strides, storage offset. Anything else — `os.system`, `builtins.eval`,
an object constructor, an extension code — is refused before anything is called, with the name of
what was asked for. The storages' bytes are then located inside the zip by offset, so reading,
converting and verifying them is the same byte-range work as for safetensors.
"""

from __future__ import annotations

import io
import math
import struct
import zipfile
from pathlib import Path

from ..record import record
from .errors import CheckpointError
from .safetensors import MAX_NDIM, MAX_TENSORS, TensorInfo
from .source import ByteSource, SourceFile, read_exact

MAX_PICKLE_BYTES = 64 * 2**20
ZIP_MAGIC = b"PK\x03\x04"
LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")  # the 30-byte zip local file header

# torch's legacy typed storages -> (safetensors dtype, bytes per element)
STORAGE_DTYPES: dict[str, tuple[str, int]] = {
    "FloatStorage": ("F32", 4),
    "DoubleStorage": ("F64", 8),
    "HalfStorage": ("F16", 2),
    "BFloat16Storage": ("BF16", 2),
    "LongStorage": ("I64", 8),
    "IntStorage": ("I32", 4),
    "ShortStorage": ("I16", 2),
    "CharStorage": ("I8", 1),
    "ByteStorage": ("U8", 1),
    "BoolStorage": ("BOOL", 1),
    "ComplexFloatStorage": ("C64", 8),
}
# torch dtypes (as `_rebuild_tensor_v3` names them next to an UntypedStorage) -> (dtype, bytes)
TORCH_DTYPES: dict[str, tuple[str, int]] = {
    "float32": ("F32", 4),
    "float": ("F32", 4),
    "float64": ("F64", 8),
    "double": ("F64", 8),
    "float16": ("F16", 2),
    "half": ("F16", 2),
    "bfloat16": ("BF16", 2),
    "int64": ("I64", 8),
    "long": ("I64", 8),
    "int32": ("I32", 4),
    "int": ("I32", 4),
    "int16": ("I16", 2),
    "short": ("I16", 2),
    "int8": ("I8", 1),
    "uint8": ("U8", 1),
    "uint16": ("U16", 2),
    "uint32": ("U32", 4),
    "uint64": ("U64", 8),
    "bool": ("BOOL", 1),
    "float8_e4m3fn": ("F8_E4M3", 1),
    "float8_e5m2": ("F8_E5M2", 1),
    "float8_e8m0fnu": ("F8_E8M0", 1),
    "complex64": ("C64", 8),
}
REBUILDS = {"_rebuild_tensor_v2", "_rebuild_tensor_v3", "_rebuild_parameter", "_rebuild_parameter_with_state"}


# ---------------------------------------------------------------------------------------------
# What the interpreter builds: plain descriptions, never objects of the pickle's choosing


@record
class Global:
    """An allowlisted global, by name. Calling it (REDUCE) is interpreted by `_call`, not Python."""

    module: str
    name: str


@record
class StorageRef:
    key: str
    dtype: str | None  # None for an UntypedStorage (the tensor names its dtype)
    itemsize: int  # bytes per element of `numel`
    numel: int


@record
class TensorRef:
    storage: StorageRef
    dtype: str
    itemsize: int
    storage_offset: int  # in elements
    shape: tuple[int, ...]
    strides: tuple[int, ...]


class StateDict(dict):
    """collections.OrderedDict as torch's state_dict pickles it; BUILD sets `_metadata`, kept aside."""

    state: dict | None = None


class _Refused(Exception):
    pass


def _allowed_global(module: str, name: str) -> Global:
    ok = (
        (module, name) == ("collections", "OrderedDict")
        or (module == "torch._utils" and name in REBUILDS)
        or (module == "torch" and (name in STORAGE_DTYPES or name in TORCH_DTYPES))
        or (module, name) == ("torch.storage", "UntypedStorage")
        or (module, name) == ("torch", "UntypedStorage")
    )
    if not ok:
        raise _Refused(f"it asks for the global {module}.{name}, which torch's tensor format never needs")
    return Global(module, name)


def _ints(v, what: str) -> tuple[int, ...]:
    if not isinstance(v, tuple) or len(v) > MAX_NDIM or not all(type(x) is int and x >= 0 for x in v):
        raise _Refused(f"{what} must be a tuple of at most {MAX_NDIM} non-negative ints, got {v!r}"[:200])
    return v


def _tensor(args: tuple, dtype_arg: Global | None) -> TensorRef:
    """torch._utils._rebuild_tensor_v2/v3(storage, storage_offset, size, stride, requires_grad, hooks, …)."""
    if len(args) < 4 or not isinstance(args[0], StorageRef) or type(args[1]) is not int or args[1] < 0:
        raise _Refused("a tensor rebuild with arguments torch never writes")
    st = args[0]
    shape, strides = _ints(args[2], "size"), _ints(args[3], "stride")
    if len(shape) != len(strides):
        raise _Refused(f"size {shape} and stride {strides} differ in length")
    if dtype_arg is None:
        if st.dtype is None:
            raise _Refused("an untyped storage without a dtype")
        dtype, itemsize = st.dtype, st.itemsize
    else:
        if dtype_arg.module != "torch" or dtype_arg.name not in TORCH_DTYPES:
            raise _Refused(f"tensor dtype {dtype_arg.module}.{dtype_arg.name} is not a torch dtype we know")
        dtype, itemsize = TORCH_DTYPES[dtype_arg.name]
    return TensorRef(st, dtype, itemsize, args[1], shape, strides)


def _call(fn, args):
    """REDUCE: the only calls a torch checkpoint makes, interpreted here instead of executed."""
    if not isinstance(fn, Global) or not isinstance(args, tuple):
        raise _Refused("it calls something that is not an allowlisted global")
    if fn.name == "OrderedDict":
        if args:
            raise _Refused("OrderedDict called with arguments")
        return StateDict()
    if fn.name == "_rebuild_tensor_v2":
        return _tensor(args, None)
    if fn.name == "_rebuild_tensor_v3":
        return _tensor(args, args[6] if len(args) > 6 else None)
    if fn.name in ("_rebuild_parameter", "_rebuild_parameter_with_state"):
        if not args or not isinstance(args[0], TensorRef):
            raise _Refused(f"{fn.name} without a tensor")
        return args[0]
    raise _Refused(f"it calls {fn.module}.{fn.name}, which is a type, not a function torch calls here")


def _persistent(pid) -> StorageRef:
    """BINPERSID: ('storage', storage type, key, location, numel) — torch's storage reference."""
    if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
        raise _Refused(f"a persistent id torch never writes: {pid!r}"[:200])
    _, stype, key, _location, numel = pid
    if not isinstance(stype, Global) or not isinstance(key, str) or type(numel) is not int or numel < 0:
        raise _Refused("a malformed storage reference")
    if stype.name in STORAGE_DTYPES:
        dtype, itemsize = STORAGE_DTYPES[stype.name]
        return StorageRef(key, dtype, itemsize, numel)
    if stype.name == "UntypedStorage":
        return StorageRef(key, None, 1, numel)
    raise _Refused(f"storage type {stype.module}.{stype.name}")


# ---------------------------------------------------------------------------------------------
# The interpreter


class _Mark:
    pass


MARK = _Mark()


def _pop_mark(stack: list) -> list:
    for i in range(len(stack) - 1, -1, -1):
        if stack[i] is MARK:
            items = stack[i + 1 :]
            del stack[i:]
            return items
    raise _Refused("MARK missing")


def _setitems(d, items: list) -> None:
    if not isinstance(d, dict) or len(items) % 2:
        raise _Refused("SETITEMS on something that is not a dict")
    for k, v in zip(items[::2], items[1::2]):
        if not isinstance(k, (str, int)):
            raise _Refused(f"dict key of type {type(k).__name__}")
        d[k] = v


def run_pickle(data: bytes):
    """Interpret a torch data.pkl. Returns the top-level object (dicts, lists, tuples, scalars,
    TensorRef). Raises _Refused naming the first thing torch's format does not contain."""
    stack: list = []
    memo: dict[int, object] = {}
    pos = 0
    n = len(data)

    def take(k: int) -> bytes:
        nonlocal pos
        if pos + k > n:
            raise _Refused("the pickle ends in the middle of an instruction")
        b = data[pos : pos + k]
        pos += k
        return b

    def line() -> str:
        nonlocal pos
        end = data.find(b"\n", pos)
        if end < 0:
            raise _Refused("unterminated GLOBAL")
        s = data[pos:end].decode("utf-8", "replace")
        pos = end + 1
        return s

    def pop():
        if not stack or stack[-1] is MARK:
            raise _Refused("stack underflow")
        return stack.pop()

    while True:
        op = take(1)
        if op == b"\x80":  # PROTO
            take(1)
        elif op == b"\x95":  # FRAME (protocol 4): frames are only a hint for buffering
            take(8)
        elif op == b".":  # STOP
            return pop()
        elif op == b"(":
            stack.append(MARK)
        elif op == b"}":
            stack.append({})
        elif op == b"]":
            stack.append([])
        elif op == b")":
            stack.append(())
        elif op == b"N":
            stack.append(None)
        elif op == b"\x88":
            stack.append(True)
        elif op == b"\x89":
            stack.append(False)
        elif op == b"K":  # BININT1
            stack.append(take(1)[0])
        elif op == b"M":  # BININT2
            stack.append(struct.unpack("<H", take(2))[0])
        elif op == b"J":  # BININT
            stack.append(struct.unpack("<i", take(4))[0])
        elif op == b"\x8a":  # LONG1
            k = take(1)[0]
            stack.append(int.from_bytes(take(k), "little", signed=True))
        elif op == b"G":  # BINFLOAT
            stack.append(struct.unpack(">d", take(8))[0])
        elif op == b"X":  # BINUNICODE
            k = struct.unpack("<I", take(4))[0]
            stack.append(take(k).decode("utf-8", "surrogatepass"))
        elif op == b"\x8c":  # SHORT_BINUNICODE
            k = take(1)[0]
            stack.append(take(k).decode("utf-8", "surrogatepass"))
        elif op == b"q":  # BINPUT
            memo[take(1)[0]] = stack[-1] if stack else _underflow()
        elif op == b"r":  # LONG_BINPUT
            memo[struct.unpack("<I", take(4))[0]] = stack[-1] if stack else _underflow()
        elif op == b"\x94":  # MEMOIZE
            memo[len(memo)] = stack[-1] if stack else _underflow()
        elif op in (b"h", b"j"):  # BINGET, LONG_BINGET
            idx = take(1)[0] if op == b"h" else struct.unpack("<I", take(4))[0]
            if idx not in memo:
                raise _Refused(f"memo entry {idx} read before it was written")
            stack.append(memo[idx])
        elif op == b"t":
            stack.append(tuple(_pop_mark(stack)))
        elif op in (b"\x85", b"\x86", b"\x87"):  # TUPLE1..3
            k = op[0] - 0x84
            items = [pop() for _ in range(k)][::-1]
            stack.append(tuple(items))
        elif op == b"0":  # POP
            pop()
        elif op == b"a":  # APPEND
            v = pop()
            _list(stack).append(v)
        elif op == b"e":  # APPENDS
            items = _pop_mark(stack)
            _list(stack).extend(items)
        elif op == b"s":  # SETITEM
            v, k = pop(), pop()
            _setitems(stack[-1] if stack else None, [k, v])
        elif op == b"u":  # SETITEMS
            items = _pop_mark(stack)
            _setitems(stack[-1] if stack else None, items)
        elif op == b"c":  # GLOBAL
            module = line()
            stack.append(_allowed_global(module, line()))
        elif op == b"\x93":  # STACK_GLOBAL
            name, module = pop(), pop()
            if not isinstance(module, str) or not isinstance(name, str):
                raise _Refused("STACK_GLOBAL with non-string names")
            stack.append(_allowed_global(module, name))
        elif op == b"Q":  # BINPERSID
            stack.append(_persistent(pop()))
        elif op == b"R":  # REDUCE
            args, fn = pop(), pop()
            stack.append(_call(fn, args))
        elif op == b"b":  # BUILD: only the state of an OrderedDict (state_dict's _metadata)
            state = pop()
            obj = stack[-1] if stack else _underflow()
            if not isinstance(obj, StateDict) or not isinstance(state, dict):
                raise _Refused("BUILD on something other than an OrderedDict")
            obj.state = state
        else:
            raise _Refused(f"pickle opcode {op!r} at byte {pos - 1}, which torch's tensor format never uses")


def _underflow():
    raise _Refused("stack underflow")


def _list(stack: list) -> list:
    if not stack or not isinstance(stack[-1], list):
        raise _Refused("APPEND on something that is not a list")
    return stack[-1]


# ---------------------------------------------------------------------------------------------
# The zip around it


@record
class TorchZip:
    path: Path
    tensors: dict[str, TensorInfo]
    metadata: dict[str, str]


def is_zip(head: bytes) -> bool:
    return head[:4] == ZIP_MAGIC


def _members(src: ByteSource) -> dict[str, zipfile.ZipInfo]:
    try:
        with zipfile.ZipFile(io.BufferedReader(SourceFile(src), 1 << 16)) as z:
            return {i.filename: i for i in z.infolist()}
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, struct.error) as e:
        raise CheckpointError(src.path, f"not a readable torch zip checkpoint: {e}") from None


def _data_offset(src: ByteSource, info: zipfile.ZipInfo) -> int:
    """Where a stored member's bytes begin: after its local header (whose extra field torch uses
    to align the data, so it differs from the central directory's)."""
    if info.compress_type != zipfile.ZIP_STORED:
        raise CheckpointError(src.path, f"zip member {info.filename} is compressed; torch stores members uncompressed, refusing")
    if info.flag_bits & 0x1:
        raise CheckpointError(src.path, f"zip member {info.filename} is encrypted")
    raw = read_exact(src, info.header_offset, LOCAL_HEADER.size, f"local header of {info.filename}")
    sig, *_rest, name_len, extra_len = LOCAL_HEADER.unpack(raw)
    if sig != ZIP_MAGIC:
        raise CheckpointError(src.path, f"zip member {info.filename}: bad local header")
    start = info.header_offset + LOCAL_HEADER.size + name_len + extra_len
    if start + info.file_size > src.size:
        raise CheckpointError(src.path, f"zip member {info.filename} runs past the end of the file: truncated?")
    return start


def _prefix(src: ByteSource, members: dict[str, zipfile.ZipInfo]) -> str:
    pkls = [m for m in members if m.endswith("/data.pkl") and m.count("/") == 1]
    if len(pkls) != 1:
        raise CheckpointError(src.path, f"a zip but not a torch checkpoint: expected one <name>/data.pkl, found {len(pkls)}")
    return pkls[0][: -len("data.pkl")]


def _byteorder(src: ByteSource, members: dict[str, zipfile.ZipInfo], prefix: str) -> None:
    info = members.get(prefix + "byteorder")
    if info is None:
        return  # torch before 1.10 wrote none; it only ever ran little-endian in practice
    order = read_exact(src, _data_offset(src, info), min(info.file_size, 16), "byteorder").strip()
    if order != b"little":
        raise CheckpointError(src.path, f"storages are {order.decode('ascii', 'replace')}-endian; only little-endian is supported")


def _flatten(obj, src: ByteSource) -> dict[str, TensorRef]:
    """The name -> tensor mapping: a state_dict, or one nested under a single dict key
    ("state_dict", "model", …) as training scripts save it."""
    if not isinstance(obj, dict):
        raise CheckpointError(src.path, f"the pickle holds a {type(obj).__name__}, not a dict of tensors")
    tensors = {k: v for k, v in obj.items() if isinstance(v, TensorRef)}
    if not tensors:
        nested = [v for v in obj.values() if isinstance(v, dict) and any(isinstance(x, TensorRef) for x in v.values())]
        if len(nested) == 1:
            return _flatten(nested[0], src)
        raise CheckpointError(src.path, "no tensors at the top level of the pickle")
    bad = [k for k in tensors if not isinstance(k, str)]
    if bad:
        raise CheckpointError(src.path, f"tensor key {bad[0]!r} is not a string")
    if len(tensors) > MAX_TENSORS:
        raise CheckpointError(src.path, f"{len(tensors)} tensors exceeds the {MAX_TENSORS}-tensor limit")
    return tensors


def _contiguous(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    expect = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size != 1 and stride != expect:
            return False
        expect *= size
    return True


def _describe(name: str, ref: TensorRef, members, prefix: str, src: ByteSource, offsets: dict[str, int]) -> TensorInfo:
    st = ref.storage
    info = members.get(f"{prefix}data/{st.key}")
    if info is None:
        raise CheckpointError(src.path, f"tensor {name!r}: storage {st.key!r} has no data/{st.key} member")
    if st.key not in offsets:
        offsets[st.key] = _data_offset(src, info)
    storage_bytes = st.numel * st.itemsize
    if info.file_size != storage_bytes:
        raise CheckpointError(
            src.path, f"tensor {name!r}: storage {st.key} holds {info.file_size} bytes, its reference says {storage_bytes}"
        )
    numel = math.prod(ref.shape)
    if (
        numel
        and ref.storage_offset * ref.itemsize + ((sum((s - 1) * d for s, d in zip(ref.shape, ref.strides)) + 1) * ref.itemsize)
        > storage_bytes
    ):
        raise CheckpointError(
            src.path,
            f"tensor {name!r}: shape {list(ref.shape)}, strides {list(ref.strides)} at offset {ref.storage_offset} reach past its storage ({storage_bytes} bytes)",
        )
    contiguous = _contiguous(ref.shape, ref.strides)
    return TensorInfo(
        name=name,
        dtype=ref.dtype,
        shape=ref.shape,
        file=src.path,
        offset=offsets[st.key] + ref.storage_offset * ref.itemsize,
        nbytes=numel * ref.itemsize,
        strides=None if contiguous else ref.strides,
    )


def read_torch_zip(src: ByteSource) -> TorchZip:
    """Describe every tensor of a torch zip checkpoint (no code run, no tensor data read)."""
    head = read_exact(src, 0, min(4, src.size), "the file's first bytes")
    if not is_zip(head):
        if head[:1] == b"\x80":
            raise CheckpointError(
                src.path,
                "legacy (pre-1.6, non-zip) torch serialization: a bare pickle stream, never unpickled (it can run code); "
                "re-save it with torch>=1.6 (torch.save) in a trusted environment, or convert it to safetensors there",
            )
        raise CheckpointError(src.path, "not a torch zip checkpoint (no zip signature); other pickled weights are never unpickled")
    members = _members(src)
    prefix = _prefix(src, members)
    _byteorder(src, members, prefix)
    pkl = members[prefix + "data.pkl"]
    if pkl.file_size > MAX_PICKLE_BYTES:
        raise CheckpointError(src.path, f"data.pkl is {pkl.file_size} bytes, over the {MAX_PICKLE_BYTES}-byte limit")
    data = read_exact(src, _data_offset(src, pkl), pkl.file_size, "data.pkl")
    try:
        obj = run_pickle(data)
    except _Refused as e:
        raise CheckpointError(src.path, f"refusing to unpickle: {e} (nothing was executed)") from None
    except (UnicodeDecodeError, struct.error, RecursionError) as e:
        raise CheckpointError(src.path, f"refusing to unpickle: malformed pickle ({e}) (nothing was executed)") from None
    offsets: dict[str, int] = {}
    tensors = {name: _describe(name, ref, members, prefix, src, offsets) for name, ref in _flatten(obj, src).items()}
    return TorchZip(src.path, tensors, {"format": "pt"})
