"""Carry out a conversion plan: streamed, atomic, verified tensor by tensor, original kept."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..checkpoint.errors import CheckpointError
from ..checkpoint.reader import Checkpoint, open_checkpoint
from ..checkpoint.safetensors import read_header
from ..checkpoint.write import (
    HeaderDoesNotFit,
    OutTensor,
    fsync_dir,
    replace_file,
    restore_header,
    rewrite_header_in_place,
    write_checkpoint,
    write_derived_tensor,
)
from ..layouts.table import to_layout
from .plan import LAYOUT_ENGINE, Plan, t2d_bytes

CONFIG_BACKUP = "config.json.specbridge-backup"
IN_PLACE_VERIFIED = "header re-read: every tensor at its original offset, length, dtype and shape; the data section is not written"


@dataclass
class Result:
    dst: Path
    method: str  # "rewrite" | "in-place header" | "unchanged"
    seconds: float
    problems: list[str]
    backup: Path | None = None
    files: list[Path] = field(default_factory=list)
    verified: str = ""  # what was verified how, in words (the writer's account, or the in-place check's)


GATHER_SPAN_BYTES = 16 << 20  # most bytes read at once when gathering head rows
GATHER_GAP_BYTES = 1 << 20  # unneeded bytes read rather than start another read (another HTTP request)


def _gathered_rows(th, rows: list[int], row_bytes: int):
    """The given rows of a 2-D tensor, in order, read as few spans as possible: a head on the Hub
    would otherwise cost one HTTP request per row (tens of thousands); nearby rows share a read."""
    i = 0
    while i < len(rows):
        j = i + 1
        while (
            j < len(rows)
            and rows[j] > rows[j - 1]
            and (rows[j] - rows[j - 1] - 1) * row_bytes <= GATHER_GAP_BYTES
            and (rows[j] - rows[i] + 1) * row_bytes <= GATHER_SPAN_BYTES
        ):
            j += 1
        span = th.read_at(rows[i] * row_bytes, (rows[j - 1] - rows[i] + 1) * row_bytes)
        for r in rows[i:j]:
            yield span[(r - rows[i]) * row_bytes : (r - rows[i] + 1) * row_bytes]
        i = j


def _materialise_derived(plan: Plan, tmpdir: Path) -> list[OutTensor]:
    """Tensors computed from others (t2d from d2t, lm_head rows gathered from the target's head) go
    through a scratch file written row by row, so the writer still streams everything from a file."""
    tensors = list(plan.tensors)
    g = plan.gather_head
    if g is not None:
        th = g.source
        row_bytes = th.nbytes // th.shape[0]
        info = write_derived_tensor(
            tmpdir / "head.safetensors",
            g.name,
            th.dtype,
            [len(g.rows), th.shape[1]],
            len(g.rows) * row_bytes,
            _gathered_rows(th, g.rows, row_bytes),
        )
        tensors.append(OutTensor(g.name, info))
    vocab = plan.derive_t2d
    if vocab is not None:
        name = to_layout("t2d", plan.layout)
        info = write_derived_tensor(
            tmpdir / "derived.safetensors", name, "BOOL", [vocab], vocab, [t2d_bytes(plan.drafter.tensors["d2t"], vocab)]
        )
        tensors.append(OutTensor(name, info))
    return tensors


def _same_dir(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def execute(
    plan: Plan,
    dst: Path | None,
    *,
    in_place: bool = False,
    backup: bool = True,
    force: bool = False,
    max_shard_bytes: int | None = None,
    progress=None,
) -> Result:
    """`progress(n)`: told of every n bytes of tensor data written (a terminal's progress bar)."""
    src = plan.src
    t0 = time.perf_counter()
    metadata = dict(src.metadata) or {"format": "pt"}
    if in_place and src.hub is not None:
        raise CheckpointError(src.root, "a Hub repository cannot be converted in place; give -o DST")
    if in_place and src.storage.startswith("torch-zip"):
        raise CheckpointError(src.weight_files[0], "a torch checkpoint is converted to safetensors with -o DST, not in place")
    if in_place:
        return _in_place(plan, backup, metadata, max_shard_bytes, t0, progress)
    assert dst is not None
    if _same_dir(dst, src.root):
        raise CheckpointError(dst, "the destination is the source directory; use --in-place (keeps a backup) to convert in place")
    with tempfile.TemporaryDirectory(prefix="specbridge-derived-") as td:
        tensors = _materialise_derived(plan, Path(td))
        res = write_checkpoint(
            dst, tensors, plan.config, metadata=metadata, max_shard_bytes=max_shard_bytes, force=force, verify=True, progress=progress
        )
    _keep_modes(src, res.files)
    return Result(dst, "rewrite", time.perf_counter() - t0, res.problems or [], files=res.files, verified=res.verified)


def _keep_modes(src: Checkpoint, files: list[Path]) -> None:
    """Output files get the permission bits their source had (a checkpoint shared with a serving
    user must stay readable by it; safetensors' own save_file would give 0600). A Hub source has no
    local modes to keep: the writer's defaults stand."""
    if src.hub is not None:
        return
    wmode = src.weight_files[0].stat().st_mode & 0o7777
    cmode = src.config_path.stat().st_mode & 0o7777 if src.config_path else wmode
    for f in files:
        os.chmod(f, cmode if f.name.endswith(".json") else wmode)


def _write_config_atomic(root: Path, config: dict) -> None:
    replace_file(root / "config.json", (json.dumps(config, indent=2) + "\n").encode(), 0o666 & ~_umask())


def _umask() -> int:
    m = os.umask(0)
    os.umask(m)
    return m


def _in_place(plan: Plan, backup: bool, metadata: dict, max_shard_bytes: int | None, t0: float, progress=None) -> Result:
    src: Checkpoint = plan.src
    root = src.root
    old_config = (root / "config.json").read_bytes()
    new_config_text = json.dumps(plan.config, indent=2) + "\n"
    renames = dict(plan.renamed)
    if plan.names_only and src.storage == "safetensors" and plan.derive_t2d is None and plan.gather_head is None:
        if not renames and old_config.decode("utf-8", "replace") == new_config_text:
            return Result(root, "unchanged", time.perf_counter() - t0, [])
        wfile = src.weight_files[0]
        try:
            hbackup = rewrite_header_in_place(wfile, renames, backup=backup) if renames else None
        except HeaderDoesNotFit:
            hbackup = "full"
        if hbackup != "full":
            if backup:
                cb = root / CONFIG_BACKUP
                if not cb.exists():
                    cb.write_bytes(old_config)
            try:
                _write_config_atomic(root, plan.config)
            except OSError as e:
                if hbackup:
                    restore_header(wfile, hbackup)
                raise CheckpointError(root / "config.json", f"cannot write: {e.strerror}; header restored") from None
            problems = _verify_renamed_header(wfile, src, renames)
            return Result(
                root,
                "in-place header",
                time.perf_counter() - t0,
                problems,
                hbackup if isinstance(hbackup, Path) else None,
                verified=IN_PLACE_VERIFIED,
            )
    # full rewrite next to the source, then swap directories; the original becomes the backup
    parent = root.parent
    new_dir = parent / f".{root.name}.specbridge-new-{os.urandom(3).hex()}"
    with tempfile.TemporaryDirectory(prefix="specbridge-derived-") as td:
        tensors = _materialise_derived(plan, Path(td))
        res = write_checkpoint(
            new_dir, tensors, plan.config, metadata=metadata, max_shard_bytes=max_shard_bytes, verify=True, progress=progress
        )
    # everything in the directory that is not the checkpoint itself (tokenizer, reports, training
    # checkpoints, README) comes along: moved when no backup is kept, copied otherwise
    own = {f.name for f in src.weight_files} | {"config.json", "model.safetensors.index.json", CONFIG_BACKUP}
    for entry in root.iterdir():
        if entry.name in own or entry.name.endswith(".specbridge-header-backup") or (new_dir / entry.name).exists():
            continue
        if not backup:
            os.rename(entry, new_dir / entry.name)
        elif entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, new_dir / entry.name, symlinks=True)
        else:
            shutil.copy2(entry, new_dir / entry.name, follow_symlinks=False)
    bdir = parent / f"{root.name}.specbridge-backup-{time.strftime('%Y%m%d-%H%M%S')}"
    os.rename(root, bdir)
    os.rename(new_dir, root)
    fsync_dir(parent)
    _keep_modes(
        Checkpoint(bdir, None, bdir / "config.json", {}, [bdir / f.name for f in src.weight_files], src.storage),
        [root / f.name for f in res.files],
    )
    if not backup:
        shutil.rmtree(bdir, ignore_errors=True)
    return Result(
        root,
        "rewrite",
        time.perf_counter() - t0,
        res.problems or [],
        bdir if backup else None,
        files=[root / f.name for f in res.files],
        verified=res.verified,
    )


def _verify_renamed_header(wfile: Path, src: Checkpoint, renames: dict[str, str]) -> list[str]:
    """An in-place rename never touches the data section, so verifying it means: the new header
    parses, and every tensor sits at exactly the same bytes (offset, length, dtype, shape) as before."""
    new = read_header(wfile).tensors
    problems = []
    for old_name, t in src.tensors.items():
        n = renames.get(old_name, old_name)
        got = new.get(n)
        if got is None:
            problems.append(f"{n}: missing after the rename")
        elif (got.offset, got.nbytes, got.dtype, got.shape) != (t.offset, t.nbytes, t.dtype, t.shape):
            problems.append(f"{n}: moved or changed ({got.dtype}{list(got.shape)} at {got.offset})")
    if len(new) != len(src.tensors):
        problems.append(f"{len(new)} tensors after the rename, {len(src.tensors)} before")
    return problems


def post_check(plan: Plan, dst: Path, target=None):
    """Re-open what was written and run `check` for the engine the conversion was for."""
    from ..rules.check import check

    engine = plan.engine or LAYOUT_ENGINE.get(plan.layout.name)
    if engine is None:
        return None, None
    ck = open_checkpoint(dst)
    return engine, check(ck, engine, str(dst), target=target)
