"""Write safetensors checkpoints by streaming bytes from their sources, never a tensor in memory.

Why not `safetensors.save_file`: it needs every tensor loaded (torch, GBs of RSS), it creates files
with mode 0600, and it writes straight into the destination, so a crash leaves half a checkpoint.
Here the header is built by hand, the data is copied in the kernel (`copy_file_range`), the
checkpoint directory appears atomically, and renames that keep the header length are done in place.

Verification rides along with the copy, on a second thread, and no full re-read and re-hash of source
and checkpoint follows the write: a range the kernel copied (copy_file_range, sendfile: every byte or
an error, identity guaranteed by the kernel) is checked at its ends — the first and last 64 KiB read
back and compared, which catches any offset or length mistake of ours — and a range copied through our
own memory (the last-resort loop) is read back and compared byte for byte (memcmp, ~10 GB/s).
"""

from __future__ import annotations

import errno
import itertools
import json
import os
import shutil
import struct
import sys
import threading
import time
from array import array
from collections.abc import Iterable
from pathlib import Path

from ..record import field, record
from .errors import CheckpointError
from .safetensors import DTYPE_BITS, TensorInfo, parse_header, read_header, tensor_nbytes

# Declared transforms: name -> (source dtype, output dtype). Only vocab maps need one today.
TRANSFORMS: dict[str, tuple[str, str]] = {
    "i64->i32": ("I64", "I32"),
    "i32->i64": ("I32", "I64"),
}
MAX_TRANSFORM_BYTES = 64 << 20  # transforms read their source whole; vocab maps are ~1 MB
COPY_CHUNK = 64 << 20  # bytes per copy call; also how often we start writeback
SIDE_CHUNK = 4 << 20  # bytes per read when copying or comparing a file carried as it is (tokenizer, README)
STREAM_CHUNK = 16 << 20  # bytes per read from a source that is not a local file (HTTP range)
BUFFER_BYTES = 8 << 20  # the last-resort copy loop and the verifier read this much at a time
SAMPLE_BYTES = 64 << 10  # a kernel-copied range is read back and compared at each end over this many bytes
HEADER_BACKUP_SUFFIX = ".specbridge-header-backup"
SINGLE_FILE = "model.safetensors"
INDEX_FILE = "model.safetensors.index.json"
CONFIG_FILE = "config.json"

# copy_file_range/sendfile fail with these when the kernel or the filesystem pair cannot do it.
_UNSUPPORTED = {errno.EXDEV, errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EBADF}


class WriteFailed(CheckpointError):
    """Writing failed part way (no space left, an I/O error) and nothing was placed: a failed run, not a
    refused request (the CLI exits 1, not 2)."""


class VerificationFailed(WriteFailed):
    """What was written is not what was asked (nothing was placed)."""


class HeaderDoesNotFit(CheckpointError):
    """The renamed header is longer than the old one: the caller must rewrite the whole file."""


@record
class OutTensor:
    """One tensor to write. Its bytes come from `source`, copied as they are or through a named transform."""

    name: str
    source: TensorInfo
    dtype: str | None = None  # the output dtype; derived from source + transform when None
    transform: str | None = None  # None (byte copy) or a key of TRANSFORMS

    def __post_init__(self):
        if self.source.strides is not None:
            raise CheckpointError(
                self.source.file,
                f"tensor {self.source.name!r} is a strided view (strides {list(self.source.strides)}); "
                "only contiguous tensors are copied (save it with .contiguous() first)",
            )
        if self.transform is None:
            want = self.source.dtype
        elif self.transform in TRANSFORMS:
            src_dtype, want = TRANSFORMS[self.transform]
            if self.source.dtype != src_dtype:
                raise CheckpointError(
                    self.source.file,
                    f"tensor {self.source.name!r} is {self.source.dtype}, transform {self.transform!r} needs {src_dtype}",
                )
        else:
            raise ValueError(f"unknown transform {self.transform!r}; known: {sorted(TRANSFORMS)}")
        if self.dtype is not None and self.dtype != want:
            raise ValueError(f"{self.name}: dtype {self.dtype} disagrees with source + transform ({want})")

    @property
    def out_dtype(self) -> str:
        return TRANSFORMS[self.transform][1] if self.transform else self.source.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return self.source.shape

    @property
    def nbytes(self) -> int:
        return tensor_nbytes(self.out_dtype, self.shape)


@record(frozen=False)
class WriteResult:
    files: list[Path]  # final paths, config and index included
    nbytes: int  # bytes in those files
    seconds: float
    problems: list[str] | None  # the verification's answer; None when not asked to verify
    verified: str = ""  # how the tensors were verified, in words (for the user's report)
    copied: list[Path] = field(default_factory=list)  # final paths of the files copied as they are (copy_files)


class CopyChecks:
    """Copied ranges read back from the destination and compared with the source, on a thread that
    follows the copy (bounded queue: the copy never runs more than a few chunks ahead). A kernel-copied
    range is compared at both ends (SAMPLE_BYTES each); a range copied through memory, whole. Both sides
    come from the page cache the copy just filled."""

    def __init__(self):
        import queue

        self.first_difference: dict[str, int | None] = {}  # tensor name -> byte offset in it of the first difference
        self.sampled: set[str] = set()  # tensors with a kernel-copied range, compared at its ends only
        self.error: BaseException | None = None
        self._done: dict[str, int] = {}  # tensor name -> bytes submitted so far (where its next range starts)
        self._queue: queue.Queue = queue.Queue(maxsize=4)
        self._files: dict[Path, object] = {}
        self._thread = threading.Thread(target=self._run, name="specbridge-copy-check", daemon=True)
        self._thread.start()

    def submit(self, name: str, src: Path, src_off: int, dst: Path, dst_off: int, count: int, kernel: bool) -> None:
        """Queue one copied range of tensor `name` (in order) for checking; blocks while the checker lags.
        `kernel`: the kernel copied it (compare its ends); otherwise our own loop did (compare it all)."""
        self.first_difference.setdefault(name, None)
        if kernel and count > 2 * SAMPLE_BYTES:
            self.sampled.add(name)
            ends = [(0, SAMPLE_BYTES), (count - SAMPLE_BYTES, SAMPLE_BYTES)]
        else:
            ends = [(0, count)]
        base = self._done.get(name, 0)  # where this range starts within the tensor
        for at, n in ends:
            if self.error is None:
                self._queue.put((name, src, src_off + at, dst, dst_off + at, n, base + at))
        self._done[name] = base + count

    def close(self) -> None:
        """Wait for every queued range; re-raise what the checker hit (an unreadable file is a failure)."""
        self._queue.put(None)
        self._thread.join()
        for f in self._files.values():
            f.close()
        self._files.clear()
        if self.error is not None:
            raise self.error

    def _read(self, path: Path, offset: int, buf: bytearray) -> bytearray:
        if path not in self._files:
            self._files[path] = open(path, "rb", buffering=0)
        f = self._files[path]
        f.seek(offset)
        n = f.readinto(buf)
        return buf if n == len(buf) else buf[:n]  # short: a file that ended early compares unequal

    def _compare(
        self, name: str, src: Path, src_off: int, dst: Path, dst_off: int, count: int, at: int, a: bytearray, b: bytearray
    ) -> None:
        """Compare `count` bytes; `at` is where they start within the tensor (for the first difference)."""
        done = 0
        while done < count:
            step = min(count - done, len(a))
            sa = self._read(src, src_off + done, a if step == len(a) else bytearray(step))
            sb = self._read(dst, dst_off + done, b if step == len(b) else bytearray(step))
            if sa != sb and self.first_difference[name] is None:
                i = next((i for i, (x, y) in enumerate(zip(sa, sb)) if x != y), min(len(sa), len(sb)))  # failures only
                self.first_difference[name] = at + done + i
            done += step

    def _run(self) -> None:
        a, b = bytearray(BUFFER_BYTES), bytearray(BUFFER_BYTES)
        while (item := self._queue.get()) is not None:
            if self.error is not None:
                continue  # drain: the writer is about to fail anyway
            try:
                self._compare(*item, a, b)
            except BaseException as e:  # noqa: BLE001 - handed to the writer's thread in close()
                self.error = e


# ---------------------------------------------------------------------------------------------
# One file


def transformed_bytes(t: OutTensor) -> bytes:
    """The output bytes of a transformed tensor. Refuses values that do not fit the narrower type."""
    src = t.source
    if src.nbytes > MAX_TRANSFORM_BYTES:
        raise CheckpointError(
            src.file, f"tensor {src.name!r} is {src.nbytes} bytes; transforms are for vocab maps (<= {MAX_TRANSFORM_BYTES})"
        )
    in_code, out_code = ("q", "i") if t.transform == "i64->i32" else ("i", "q")
    values = array(in_code)
    values.frombytes(src.read_bytes())
    if sys.byteorder == "big":  # safetensors is little-endian
        values.byteswap()
    if t.transform == "i64->i32" and len(values):
        lo, hi = min(values), max(values)
        if lo < -(2**31) or hi >= 2**31:
            raise CheckpointError(
                src.file, f"tensor {src.name!r}: values span {lo}..{hi}, which does not fit in int32; refusing to narrow it"
            )
    out = array(out_code, values)
    if sys.byteorder == "big":
        out.byteswap()
    return out.tobytes()


def header_bytes(tensors: list[OutTensor], metadata: dict[str, str] | None) -> bytes:
    """The 8-byte length + JSON header, tensors in the given order, padded to 8 like safetensors does."""
    return _header([(t.name, t.out_dtype, list(t.shape), t.nbytes) for t in tensors], metadata)


def _header(rows: list[tuple[str, str, list[int], int]], metadata: dict[str, str] | None) -> bytes:
    obj: dict[str, object] = {}
    if metadata:
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise ValueError("safetensors __metadata__ must map strings to strings")
        obj["__metadata__"] = dict(metadata)
    pos = 0
    for name, dtype, shape, n in rows:
        if name in obj or name == "__metadata__":
            raise CheckpointError(None, f"tensor name {name!r} is used twice (or is reserved)")
        obj[name] = {"dtype": dtype, "shape": shape, "data_offsets": [pos, pos + n]}
        pos += n
    raw = json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    raw += b" " * (-len(raw) % 8)
    parse_header(Path("<new header>"), raw, 8 + len(raw) + pos)  # never write what our reader would refuse
    return struct.pack("<Q", len(raw)) + raw


def write_header_only(
    path: Path, tensors: list[tuple[str, str, list[int]]], data: dict[str, bytes] | None = None, metadata: dict[str, str] | None = None
) -> int:
    """A safetensors file whose header names `tensors` (name, dtype, shape) and whose data is a hole of the right size
    (a sparse file: nothing written), except the tensors in `data`. For header-only fixtures and benchmarks: a
    690 GB target's shards cost their headers. Returns the data section's size."""
    rows = []
    for name, dtype, shape in tensors:
        n = DTYPE_BITS[dtype]
        for d in shape:
            n *= d
        rows.append((name, dtype, list(shape), -(-n // 8)))
    head = _header(rows, metadata)
    offsets = dict(zip((r[0] for r in rows), itertools.accumulate((r[3] for r in rows), initial=0), strict=False))
    size = sum(r[3] for r in rows)
    with open(path, "wb") as f:
        f.write(head)
        for name, raw in (data or {}).items():
            f.seek(len(head) + offsets[name])
            f.write(raw)
        f.truncate(len(head) + size)
    return size


def _pwrite_all(fd: int, data, offset: int) -> None:
    view = memoryview(data)
    while view:
        n = os.pwrite(fd, view, offset)
        view, offset = view[n:], offset + n


def _copy_range(src_fd: int, src_off: int, dst_fd: int, dst_off: int, count: int, method: list[str], src_name: str, after=None) -> None:
    """Copy in the kernel where possible; `method` remembers the fallback chosen for this file pair.
    `after(src_off, dst_off, n, kernel)` hears of every range copied, and whether the kernel copied it."""
    buf = None
    while count > 0:
        step = min(count, COPY_CHUNK)
        try:
            if method[0] == "copy_file_range":
                n = os.copy_file_range(src_fd, dst_fd, step, src_off, dst_off)
            elif method[0] == "sendfile":
                os.lseek(dst_fd, dst_off, os.SEEK_SET)
                n = os.sendfile(dst_fd, src_fd, src_off, step)
            else:
                if buf is None:
                    buf = memoryview(bytearray(BUFFER_BYTES))
                n = os.preadv(src_fd, [buf[: min(step, BUFFER_BYTES)]], src_off)
                _pwrite_all(dst_fd, buf[:n], dst_off)
        except OSError as e:
            if e.errno in _UNSUPPORTED and method[0] != "buffer":
                method[0] = "sendfile" if method[0] == "copy_file_range" else "buffer"
                continue
            raise
        if n == 0:
            raise CheckpointError(None, f"source {src_name} ended early (file truncated or changed while copying?)")
        # Start writeback now, so the final fsync does not stall on gigabytes of dirty pages.
        os.posix_fadvise(dst_fd, dst_off, n, os.POSIX_FADV_DONTNEED)
        if after is not None:
            after(src_off, dst_off, n, method[0] != "buffer")
        src_off, dst_off, count = src_off + n, dst_off + n, count - n


def _stream_from_source(t: OutTensor, fd: int, pos: int) -> bytes:
    """Copy a tensor whose bytes are not in a local file (a Hub file read by range) through memory
    in chunks, hashing them on the way: verification then compares with this digest instead of
    fetching the bytes a second time."""
    import hashlib

    h = hashlib.blake2b(digest_size=32)
    src, done = t.source, 0
    while done < src.nbytes:
        data = src.read_at(done, min(STREAM_CHUNK, src.nbytes - done))
        h.update(data)
        _pwrite_all(fd, data, pos + done)
        done += len(data)
    return h.digest()


def write_safetensors(
    dst_file: Path, tensors: list[OutTensor], metadata: dict[str, str] | None = None, checks: CopyChecks | None = None, progress=None
) -> dict[str, bytes]:
    """Write one safetensors file (which must not exist yet), streamed and fsynced; removed again on failure.
    Returns the blake2b of every tensor streamed from a non-local source (see _stream_from_source).
    With `checks`, every range copied from a local file is queued to be compared with what was written;
    `progress(n)` hears of every n bytes of tensor data written."""
    dst_file = Path(dst_file)
    header = header_bytes(tensors, metadata)
    # 0644 before umask, like cp and open(); safetensors' save_file gives 0600.
    fd = os.open(dst_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    sources: dict[Path, int] = {}
    streamed: dict[str, bytes] = {}
    try:
        _pwrite_all(fd, header, 0)
        pos = len(header)
        method = ["copy_file_range"]
        for t in tensors:
            if t.transform:
                _pwrite_all(fd, transformed_bytes(t), pos)
                if progress is not None:
                    progress(t.nbytes)
            elif t.source.source is not None:
                streamed[t.name] = _stream_from_source(t, fd, pos)
                if progress is not None:
                    progress(t.nbytes)
            else:
                src = t.source
                if src.file not in sources:
                    sources[src.file] = os.open(src.file, os.O_RDONLY | os.O_CLOEXEC)

                def after(s_off, d_off, n, kernel, name=t.name, path=src.file):
                    if checks is not None:
                        checks.submit(name, path, s_off, dst_file, d_off, n, kernel)
                    if progress is not None:
                        progress(n)

                _copy_range(sources[src.file], src.offset, fd, pos, src.nbytes, method, f"{src.file}:{src.name}", after)
            pos += t.nbytes
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        fd = -1
        try:
            os.unlink(dst_file)
        except OSError:
            pass
        raise
    finally:
        if fd >= 0:
            os.close(fd)
        for sfd in sources.values():
            os.close(sfd)
    return streamed


# ---------------------------------------------------------------------------------------------
# A checkpoint directory


def write_derived_tensor(path: Path, name: str, dtype: str, shape: list[int], nbytes: int, chunks: Iterable[bytes]) -> TensorInfo:
    """A tensor computed from others (t2d from d2t, head rows gathered from the target's) written, chunk
    by chunk, to a scratch single-tensor safetensors file, so the writer streams it like any source."""
    with open(path, "wb") as f:
        f.write(_header([(name, dtype, shape, nbytes)], None))
        f.writelines(chunks)
    return read_header(path).tensors[name]


def replace_file(path: Path, data: bytes, mode: int) -> None:
    """`path` replaced atomically and durably by `data` (temp file, fsync, rename, directory fsync)."""
    tmp = path.with_name(f".{path.name}.specbridge-tmp")
    tmp.unlink(missing_ok=True)
    _write_small_file(tmp, data)
    os.chmod(tmp, mode)
    os.replace(tmp, path)
    fsync_dir(path.parent)


def _write_small_file(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    try:
        _pwrite_all(fd, data, 0)
        os.fsync(fd)
    finally:
        os.close(fd)


def _copy_file(source: Path, path: Path) -> None:
    """`source`'s bytes (a symlink followed: HF caches link to blobs) into a new file `path` with the source's
    permission bits, fsynced."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    try:
        with open(source, "rb") as f:
            off = 0
            while chunk := f.read(SIDE_CHUNK):
                _pwrite_all(fd, chunk, off)
                off += len(chunk)
            mode = os.fstat(f.fileno()).st_mode & 0o7777
        os.fsync(fd)
    finally:
        os.close(fd)
    os.chmod(path, mode)


def verify_copies(dst_dir: Path, copy_files: dict[str, Path]) -> list[str]:
    """Each copied file re-read from `dst_dir` and compared with its source, byte for byte. Returns problems."""
    problems = []
    for name, source in copy_files.items():
        with open(source, "rb") as a, open(dst_dir / name, "rb") as b:
            while True:
                x, y = a.read(SIDE_CHUNK), b.read(SIDE_CHUNK)
                if x != y:
                    problems.append(f"{name}: the copy differs from {source}")
                    break
                if not x:
                    break
    return problems


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


_RENAME_NOREPLACE, _RENAME_EXCHANGE = 1, 2
_libc = None


def _renameat2(src: Path, dst: Path, flags: int) -> bool:
    """Linux renameat2 via libc. False when the kernel, libc or filesystem lacks it (caller falls back)."""
    import ctypes  # here, not at the top: it costs start-up time on every command

    global _libc
    if _libc is None:
        try:
            _libc = ctypes.CDLL(None, use_errno=True)
        except OSError:
            _libc = False
    fn = getattr(_libc, "renameat2", None) if _libc else None
    if fn is None:
        return False
    at_fdcwd = -100
    if fn(at_fdcwd, os.fsencode(src), at_fdcwd, os.fsencode(dst), ctypes.c_uint(flags)) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), os.fspath(src), None, os.fspath(dst))


def _place(tmp: Path, dst: Path, force: bool) -> Path | None:
    """Move the finished temp dir to dst so that dst always holds a complete checkpoint (old or new).

    Returns where the replaced checkpoint now sits (for the caller to remove), or None.
    """
    if not os.path.lexists(dst):
        if not _renameat2(tmp, dst, _RENAME_NOREPLACE):
            if os.path.lexists(dst):
                raise FileExistsError(errno.EEXIST, "appeared while writing", os.fspath(dst))
            os.rename(tmp, dst)
        return None
    if not force:
        raise FileExistsError(errno.EEXIST, "appeared while writing", os.fspath(dst))
    if _renameat2(tmp, dst, _RENAME_EXCHANGE):  # atomic swap: the old checkpoint is now at tmp
        return tmp
    # No exchange (old kernel or filesystem): two renames. A crash between them leaves the old
    # checkpoint complete under its hidden `aside` name, never a partial one at dst.
    aside = dst.with_name(f".{dst.name}.specbridge-old-{os.urandom(4).hex()}")
    os.rename(dst, aside)
    try:
        os.rename(tmp, dst)
    except BaseException:
        os.rename(aside, dst)
        raise
    return aside


def _shard_plan(tensors: list[OutTensor], max_shard_bytes: int | None) -> list[list[OutTensor]]:
    """Greedy, in order, like transformers: a new shard when the next tensor would overflow this one."""
    if max_shard_bytes is None:
        return [tensors]
    if max_shard_bytes <= 0:
        raise ValueError("max_shard_bytes must be positive")
    shards: list[list[OutTensor]] = [[]]
    size = 0
    for t in tensors:
        if shards[-1] and size + t.nbytes > max_shard_bytes:
            shards.append([])
            size = 0
        shards[-1].append(t)
        size += t.nbytes
    return shards


def _check_destination(dst: Path, tensors: list[OutTensor], force: bool) -> None:
    real_dst = Path(os.path.realpath(dst))
    for src_file in {t.source.file for t in tensors if t.source.source is None}:
        # Both the directory the path names and the one the file really lives in (HF caches symlink to blobs).
        named_dir = Path(os.path.realpath(os.path.dirname(os.path.abspath(src_file))))
        for src_dir in {named_dir, Path(os.path.realpath(src_file)).parent}:
            if src_dir == real_dst:
                raise CheckpointError(
                    dst, f"is the directory holding the source {src_file}; refusing to replace it (rename in place instead: --in-place)"
                )
            if real_dst in src_dir.parents:
                raise CheckpointError(dst, f"contains the source {src_file}; replacing it would delete the original")
    if os.path.lexists(dst):
        if os.path.islink(dst) or not os.path.isdir(dst):
            raise CheckpointError(dst, "exists and is not a directory; refusing to replace it")
        if not force:
            raise CheckpointError(dst, "already exists; pass --force to replace it")


def _os_error_line(e: OSError, what: str) -> str:
    if e.errno == errno.ENOSPC:
        return f"no space left on device while writing {what}; nothing was written"
    if e.errno == errno.EDQUOT:
        return f"disk quota exceeded while writing {what}; nothing was written"
    detail = e.strerror or str(e)
    if e.filename:
        detail += f" ({e.filename})"
    return f"{detail} while writing {what}; nothing was written"


def write_checkpoint(
    dst_dir: Path,
    tensors: list[OutTensor],
    config: dict,
    *,
    metadata: dict[str, str] | None = None,
    max_shard_bytes: int | None = None,
    force: bool = False,
    extra_files: dict[str, bytes] | None = None,
    copy_files: dict[str, Path] | None = None,
    verify: bool = False,
    progress=None,
) -> WriteResult:
    """Write config.json + weights (one file, or HF-style shards + index) so that dst_dir appears whole or not at all.

    Everything goes into a hidden sibling directory (same filesystem), is fsynced, then renamed into
    place; an existing dst_dir is replaced (force=True) by an atomic exchange. On any failure the
    temp dir is removed and dst_dir is as it was. `verify` checks the output before it is placed: every
    tensor copied from a local file compared with its source while copying (CopyChecks: the ends of what
    the kernel copied, all of what our own loop copied),
    the others (transformed, remote) by re-reading and hashing, every header re-read. `progress(n)` hears
    of every n bytes of tensor data written. `copy_files` ({name: source file}): files carried as they are (the
    checkpoint's tokenizer, README, …), inside the same atomic write, each compared byte for byte when verifying.
    """
    t0 = time.perf_counter()
    dst = Path(os.path.abspath(dst_dir))
    _check_destination(dst, tensors, force)
    shards = _shard_plan(tensors, max_shard_bytes)
    names = [SINGLE_FILE] if len(shards) == 1 else [f"model-{i:05d}-of-{len(shards):05d}.safetensors" for i in range(1, len(shards) + 1)]
    small: dict[str, bytes] = {CONFIG_FILE: (json.dumps(config, indent=2) + "\n").encode()}
    if len(shards) > 1:
        index = {
            "metadata": {"total_size": sum(t.nbytes for t in tensors)},
            "weight_map": {t.name: name for name, shard in zip(names, shards) for t in shard},
        }
        small[INDEX_FILE] = (json.dumps(index, indent=2, sort_keys=True) + "\n").encode()
    for name, data in (extra_files or {}).items():
        if name in small or name in names or not name or name in (".", "..") or "/" in name or os.sep in name:
            raise ValueError(f"extra file name {name!r} is not a plain, unused file name")
        small[name] = data
    for name in copy_files or {}:
        if name in small or name in names or not name or name in (".", "..") or "/" in name or os.sep in name:
            raise ValueError(f"copied file name {name!r} is not a plain, unused file name")

    try:
        dst.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CheckpointError(dst, _os_error_line(e, f"parent directory {dst.parent}")) from None
    while True:  # mkdir (not mkdtemp) so the directory gets 0777 & ~umask like any other
        tmp = dst.with_name(f".{dst.name}.specbridge-tmp-{os.urandom(4).hex()}")
        try:
            os.mkdir(tmp, 0o777)
            break
        except FileExistsError:
            continue
        except OSError as e:
            raise CheckpointError(dst, _os_error_line(e, f"temp directory {tmp.name}")) from None

    current = "the checkpoint"
    problems = None
    streamed: dict[str, bytes] = {}
    checks = CopyChecks() if verify else None
    try:
        for name, shard in zip(names, shards):
            current = name
            streamed.update(write_safetensors(tmp / name, shard, metadata, checks, progress))
        if checks is not None:
            current = "the copy check"
            checks.close()
        for name, data in small.items():
            current = name
            _write_small_file(tmp / name, data)
        for name, source in (copy_files or {}).items():
            current = name
            _copy_file(source, tmp / name)
        current = "the directory"
        fsync_dir(tmp)
        if verify:
            problems = verify_written(tmp, tensors, streamed, checks.first_difference) + verify_copies(tmp, copy_files or {})
            if problems:
                raise VerificationFailed(dst, f"verification failed ({len(problems)} problems, first: {problems[0]}); nothing was written")
        current = "the final rename"
        replaced = _place(tmp, dst, force)
    except BaseException as e:
        if checks is not None and current != "the copy check":
            try:
                checks.close()  # join the checker before its files disappear
            except BaseException:  # noqa: BLE001 - the original error is the one to report
                pass
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(e, FileExistsError) and current == "the final rename":
            raise CheckpointError(dst, "was created by someone else while we wrote; nothing was written") from None
        if isinstance(e, OSError):
            raise WriteFailed(dst, _os_error_line(e, current)) from e
        raise
    fsync_dir(dst.parent)
    if replaced is not None:
        shutil.rmtree(replaced, ignore_errors=True)
    files = [dst / n for n in [*names, *small]]
    how = verification_summary(tensors, checks) if verify else ""
    if verify and copy_files:
        how += f"; {len(copy_files)} copied file(s) compared byte for byte with their source"
    copied = [dst / n for n in copy_files or {}]
    return WriteResult(files, sum(f.stat().st_size for f in files), time.perf_counter() - t0, problems, how, copied)


def verification_summary(tensors: list[OutTensor], checks: CopyChecks) -> str:
    """What was verified how, in words: the user's report says it instead of a blanket "verified"."""
    compared = sum(1 for t in tensors if t.name in checks.first_difference)
    sampled = sum(1 for t in tensors if t.name in checks.sampled)
    parts = []
    if sampled:
        parts.append(
            f"{sampled} tensor(s) copied by the kernel (every byte or an error), each copied range's first and last "
            f"{SAMPLE_BYTES >> 10} KiB read back and compared with the source"
        )
    if compared - sampled:
        parts.append(f"{compared - sampled} tensor(s) read back whole and compared byte for byte with the source")
    if len(tensors) - compared:
        parts.append(f"{len(tensors) - compared} transformed or downloaded tensor(s) by blake2b after writing")
    return "; ".join(parts) + "; every header re-read (names, dtypes, shapes, offsets)"


# ---------------------------------------------------------------------------------------------
# Renames in place


def header_backup_path(path: Path) -> Path:
    return Path(path).with_name(Path(path).name + HEADER_BACKUP_SUFFIX)


def rewrite_header_in_place(path: Path, renames: dict[str, str], *, backup: bool = True) -> Path | None:
    """Rename tensors by rewriting only the header bytes; the data section is not touched.

    Only possible when the new header fits in the old header's length (it is padded with spaces).
    With backup=True the header as it was before the FIRST rename is kept in
    `<file>.specbridge-header-backup`: saved fsynced and atomically (a temp name, then rename) when there
    is none yet, and never overwritten by a later rename (one that does not belong to this file is
    refused), so any number of renames, and a crash during any of them, can be undone with
    `restore_header`. Returns that backup path, or None when backup=False or when nothing changes.
    Raises HeaderDoesNotFit when a full rewrite is needed.
    """
    path = Path(path)
    hdr = read_header(path)
    unknown = sorted(set(renames) - set(hdr.tensors))
    if unknown:
        raise CheckpointError(path, f"no tensor named {unknown[0]!r} to rename")
    with open(path, "rb") as f:
        old = f.read(hdr.data_start)
    obj = json.loads(old[8:])  # keeps key order and any extra fields
    new_obj = {k if k == "__metadata__" else renames.get(k, k): v for k, v in obj.items()}
    if len(new_obj) != len(obj):
        raise CheckpointError(path, "renames would give two tensors the same name (or use __metadata__)")
    raw = json.dumps(new_obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    if len(raw) > hdr.header_len:
        raise HeaderDoesNotFit(
            path, f"renamed header needs {len(raw)} bytes but the file has room for {hdr.header_len}; rewrite the file instead"
        )
    raw = raw.ljust(hdr.header_len, b" ")
    parse_header(path, raw, hdr.file_size)
    if raw == old[8:]:
        return None
    backup_path = None
    if backup:
        backup_path = header_backup_path(path)
        if os.path.lexists(backup_path):
            checked_header_backup(path, backup_path)  # the first state stays; a stranger's backup is refused
        else:
            _save_header_backup(path, old)
    write_header(path, raw)
    return backup_path


def write_header(path: Path, raw: bytes) -> None:
    """Put header bytes (without the 8-byte length, which they must keep) into `path`, fsynced."""
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        _pwrite_all(fd, raw, 8)
        os.fsync(fd)
    finally:
        os.close(fd)


def _save_header_backup(path: Path, header: bytes) -> Path:
    """Saved whole or not at all (a backup a crash cut short would otherwise pass for the original),
    readable by whoever can read the file."""
    backup = header_backup_path(path)
    replace_file(backup, header, os.stat(path).st_mode & 0o7777)
    return backup


def checked_header_backup(path: Path, backup: Path | None = None) -> bytes:
    """The header bytes saved for `path` (without the length prefix), after checking they belong to it:
    complete, the same length, and every tensor at the same offset, length, dtype and shape as `path` holds."""
    path = Path(path)
    backup = Path(backup) if backup else header_backup_path(path)
    try:
        saved = backup.read_bytes()
        with open(path, "rb") as f:
            prefix = f.read(8)
        size = os.stat(path).st_size
    except OSError as e:
        raise CheckpointError(path, f"cannot restore the header: {e.strerror or e}") from None
    if len(saved) < 8 or len(saved) != 8 + struct.unpack("<Q", saved[:8])[0]:
        raise CheckpointError(backup, "header backup is incomplete; not restoring")
    if saved[:8] != prefix:
        raise CheckpointError(backup, f"header backup is for a header of another length; it does not belong to {path}")
    old = parse_header(path, saved[8:], size)

    def layout(h):
        return sorted((t.offset, t.nbytes, t.dtype, t.shape) for t in h.tensors.values())

    try:
        current = read_header(path)
    except CheckpointError:
        current = None  # a torn header: exactly what the backup is for
    if current is not None and layout(current) != layout(old):
        raise CheckpointError(backup, f"header backup describes different data than {path} holds; not restoring")
    return saved[8:]


def restore_header(path: Path, backup: Path | None = None) -> None:
    """Put the header saved by rewrite_header_in_place back, after checking it belongs to this file."""
    write_header(Path(path), checked_header_backup(path, backup))


# ---------------------------------------------------------------------------------------------
# Verification


def _hash_range(path: Path, offset: int, nbytes: int, buf: memoryview) -> bytes:
    import hashlib

    h = hashlib.blake2b(digest_size=32)
    with open(path, "rb", buffering=0) as f:
        f.seek(offset)
        while nbytes > 0:
            n = f.readinto(buf[: min(nbytes, len(buf))])
            if not n:
                break  # short file: the digest will differ
            h.update(buf[:n])
            nbytes -= n
    return h.digest()


def _source_digest(src: TensorInfo) -> bytes:
    """blake2b of a non-local tensor's bytes, read again in chunks (when no digest was taken while writing)."""
    import hashlib

    h = hashlib.blake2b(digest_size=32)
    for start in range(0, src.nbytes, STREAM_CHUNK):
        h.update(src.read_at(start, min(STREAM_CHUNK, src.nbytes - start)))
    return h.digest()


def _written_files(dst) -> tuple[list[Path], dict | None, list[str]]:
    """The safetensors files of a written checkpoint, its index (if sharded), and problems found on the way."""
    if isinstance(dst, (list, tuple)):
        return [Path(p) for p in dst], None, []
    dst = Path(dst)
    if not dst.is_dir():
        return [dst], None, []
    if (dst / INDEX_FILE).exists():
        try:
            index = json.loads((dst / INDEX_FILE).read_text())
            # Shards the index forgot are read too, so a wrong index shows up as a wrong index.
            files = sorted(set(index["weight_map"].values()) | {p.name for p in dst.glob("model-*-of-*.safetensors")})
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            return [], None, [f"{dst / INDEX_FILE}: unreadable index ({e})"]
        return [dst / f for f in files], index, []
    if (dst / SINGLE_FILE).exists():
        return [dst / SINGLE_FILE], None, []
    return [], None, [f"{dst}: neither {SINGLE_FILE} nor {INDEX_FILE}"]


def verify_written(
    dst_files_or_dir, expected: list[OutTensor], streamed: dict[str, bytes] | None = None, checked: dict[str, int | None] | None = None
) -> list[str]:
    """Re-read what was written and compare with what was asked: names, dtypes, shapes, and a blake2b of
    every tensor's bytes against its source (or the transformed bytes; or, for a tensor streamed from a
    remote source, the digest taken as its bytes arrived). Streamed. Returns problems; [] = verified.
    `checked`: tensors whose bytes CopyChecks already compared while copying (name -> offset of the first
    differing byte, or None): their answer stands instead of reading both sides a second time."""
    import hashlib

    files, index, problems = _written_files(dst_files_or_dir)
    found: dict[str, TensorInfo] = {}
    for f in files:
        try:
            h = read_header(f)
        except CheckpointError as e:
            problems.append(str(e))
            continue
        for name, info in h.tensors.items():
            if name in found:
                problems.append(f"{name}: in both {found[name].file.name} and {f.name}")
            found[name] = info
    if index is not None:
        wmap = index.get("weight_map", {})
        for name, info in found.items():
            if wmap.get(name) != info.file.name:
                problems.append(f"{name}: index says {wmap.get(name)!r}, but it is in {info.file.name}")
        for name in sorted(set(wmap) - set(found)):
            problems.append(f"{name}: listed in the index but in no file")
        total = sum(t.nbytes for t in found.values())
        if index.get("metadata", {}).get("total_size") != total:
            problems.append(f"index total_size {index.get('metadata', {}).get('total_size')} != {total} tensor bytes")

    buf = memoryview(bytearray(BUFFER_BYTES))
    for t in expected:
        got = found.pop(t.name, None)
        if got is None:
            problems.append(f"{t.name}: missing")
            continue
        if got.dtype != t.out_dtype or got.shape != t.shape:
            problems.append(f"{t.name}: written as {got.dtype}{list(got.shape)}, expected {t.out_dtype}{list(t.shape)}")
            continue
        if checked is not None and t.name in checked:
            if checked[t.name] is not None:
                problems.append(f"{t.name}: bytes differ from source {t.source.file}:{t.source.name} (first at byte {checked[t.name]})")
            continue
        if t.transform:
            try:
                want = hashlib.blake2b(transformed_bytes(t), digest_size=32).digest()
            except CheckpointError as e:
                problems.append(f"{t.name}: {e}")
                continue
        elif t.source.source is not None:
            want = (streamed or {}).get(t.name) or _source_digest(t.source)
        else:
            want = _hash_range(t.source.file, t.source.offset, t.source.nbytes, buf)
        if _hash_range(got.file, got.offset, got.nbytes, buf) != want:
            problems.append(f"{t.name}: bytes differ from source {t.source.file}:{t.source.name}")
    for name in found:
        problems.append(f"{name}: written but not expected")
    return problems
