"""Carry out a conversion plan: streamed, atomic, verified tensor by tensor, original kept."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from ..checkpoint.errors import CheckpointError
from ..checkpoint.maskfile import MASK_FILE
from ..checkpoint.reader import Checkpoint, open_checkpoint
from ..checkpoint.safetensors import read_header
from ..checkpoint.write import (
    HEADER_BACKUP_SUFFIX,
    HeaderDoesNotFit,
    OutTensor,
    WriteFailed,
    checked_header_backup,
    fsync_dir,
    replace_file,
    rewrite_header_in_place,
    write_checkpoint,
    write_derived_tensor,
    write_header,
)
from ..layouts.table import to_layout
from ..record import field, record
from .backup import CONFIG_BACKUP, BackupSet, find_backup, is_temp, new_backup_dir, save_config_backup, settle
from .dflash import verify_side_files
from .plan import LAYOUT_ENGINE, Plan, t2d_bytes

IN_PLACE_VERIFIED = "header re-read: every tensor at its original offset, length, dtype and shape; the data section is not written"


@record(frozen=False)
class Result:
    dst: Path
    method: str  # "rewrite" | "in-place header" | "unchanged"
    seconds: float
    problems: list[str]
    backup: Path | None = None
    files: list[Path] = field(default_factory=list)
    verified: str = ""  # what was verified how, in words (the writer's account, or the in-place check's)
    kept: bool = False  # the backup is an earlier in-place run's, kept: it holds the original
    copied: list[str] = field(default_factory=list)  # the checkpoint's other files copied beside the new weights (-o)


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
    for z in plan.zeros:
        info = write_derived_tensor(
            tmpdir / f"zeros-{len(tensors)}.safetensors", z.name, z.dtype, list(z.shape), z.nbytes, [bytes(z.nbytes)]
        )
        tensors.append(OutTensor(z.name, info))
    vocab = plan.derive_t2d
    if vocab is not None:
        name = to_layout("t2d", plan.layout)
        info = write_derived_tensor(
            tmpdir / "derived.safetensors", name, "BOOL", [vocab], vocab, [t2d_bytes(plan.drafter.tensors["d2t"], vocab)]
        )
        tensors.append(OutTensor(name, info))
    return tensors


def _same_dir(a: Path, b: Path) -> bool:
    """Whether `a` and `b` name one directory: the same device and inode (a symlinked, bind-mounted or
    case-folded path to the source included). A path that does not exist is not the source; one that
    cannot be examined (permissions, a symlink loop, an I/O error) is refused, never answered False:
    writing over the source on a guess would replace the original."""
    try:
        sa, sb = _stat_or_none(a), _stat_or_none(b)
    except OSError as e:
        why = f"{e.strerror or e}" + (f": {e.filename}" if e.filename else "")
        raise CheckpointError(a, f"cannot tell whether this is the source directory {b} ({why}); not converting") from None
    if sa is None or sb is None:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def _stat_or_none(p: Path) -> os.stat_result | None:
    """os.stat of `p` (symlinks followed), None when it does not exist; any other failure raises."""
    try:
        return os.stat(p)
    except (FileNotFoundError, NotADirectoryError):
        return None


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
            dst,
            tensors,
            plan.config,
            metadata=metadata,
            max_shard_bytes=max_shard_bytes,
            force=force,
            extra_files=plan.extra_files,
            copy_files=plan.copy_files,
            verify=True,
            progress=progress,
        )
    _keep_modes(src, res.files)
    problems = (res.problems or []) + verify_side_files(plan, dst)
    return Result(
        dst,
        "rewrite",
        time.perf_counter() - t0,
        problems,
        files=res.files,
        verified=_side_verified(plan, res.verified),
        copied=[f.name for f in res.copied],
    )


def _side_verified(plan: Plan, how: str) -> str:
    return how + (f"; {MASK_FILE} re-read (no unpickling): embedding bytes and mask_token_id as planned" if plan.mask_expect else "")


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
    """Convert `plan.src` itself. Its backup set (convert/backup.py) is made by the first in-place run and
    kept by every later one, `--no-backup` included: it holds the original, which `restore` puts back."""
    src: Checkpoint = plan.src
    root = src.root
    existing = find_backup(root)
    for h in existing.headers if existing is not None else ():
        try:  # a backup that does not belong is refused before any work: keeping it would keep no original
            checked_header_backup(h.with_name(h.name[: -len(HEADER_BACKUP_SUFFIX)]), h)
        except CheckpointError as e:
            raise CheckpointError(e.path, f"{e.message.removesuffix('; not restoring')}; not converting in place over it") from None
    keep = backup or existing is not None
    old_config = (root / "config.json").read_bytes()
    new_config_text = json.dumps(plan.config, indent=2) + "\n"
    renames = dict(plan.renamed)
    if plan.names_only and src.storage == "safetensors" and plan.derive_t2d is None and plan.gather_head is None:
        if not renames and old_config.decode("utf-8", "replace") == new_config_text:
            return Result(root, "unchanged", time.perf_counter() - t0, [], _backup_path(existing), kept=existing is not None)
        wfile = src.weight_files[0]
        try:
            res = _rename_in_place(plan, root, wfile, renames, keep and (existing is None or existing.kind == "files"), t0)
        except HeaderDoesNotFit:
            res = None
        if res is not None:
            if existing is not None:
                res.backup, res.kept = _backup_path(existing), True
            return res
    return _rewrite_in_place(plan, root, existing, keep, metadata, max_shard_bytes, t0, progress)


def _backup_path(b: BackupSet | None) -> Path | None:
    """The path a report names for a backup set: its directory, or its header backup (config backup)."""
    if b is None:
        return None
    return b.path if b.kind == "directory" else (b.headers[0] if b.headers else b.path)


def _rename_in_place(plan: Plan, root: Path, wfile: Path, renames: dict[str, str], backup: bool, t0: float) -> Result:
    """Tensors renamed in the header, config.json replaced. Backups first (config, then header: each
    only when there is none yet), then the header, then the config; a failed config write puts this
    run's header back."""
    with open(wfile, "rb") as f:
        before = f.read(read_header(wfile).data_start)
    try:
        if backup:
            save_config_backup(root)
        hbackup = rewrite_header_in_place(wfile, renames, backup=backup) if renames else None
    except OSError as e:  # a backup that cannot be written stops the run before the header changes
        how = "`specbridge restore` puts the original back" if backup else "the header may be partly written"
        raise WriteFailed(root, f"{e.strerror or e} ({e.filename}); {how}") from None
    try:
        _write_config_atomic(root, plan.config)
    except OSError as e:
        if renames:
            write_header(wfile, before[8:])
        raise CheckpointError(root / "config.json", f"cannot write: {e.strerror}; header restored") from None
    problems = _verify_renamed_header(wfile, plan.src, renames)
    written = hbackup or (root / CONFIG_BACKUP if backup else None)
    return Result(root, "in-place header", time.perf_counter() - t0, problems, written, verified=IN_PLACE_VERIFIED)


def _rewrite_in_place(
    plan: Plan, root: Path, existing: BackupSet | None, keep: bool, metadata: dict, max_shard_bytes: int | None, t0: float, progress
) -> Result:
    """A full rewrite next to the source, then two renames. The first in-place run moves the original
    aside as the backup directory (settled back to the original if it carried in-place backup files);
    when a backup directory exists already, the directory replaced is an intermediate state: removed."""
    src: Checkpoint = plan.src
    parent = root.parent
    new_dir = parent / f".{root.name}.specbridge-new-{os.urandom(3).hex()}"
    with tempfile.TemporaryDirectory(prefix="specbridge-derived-") as td:
        tensors = _materialise_derived(plan, Path(td))
        res = write_checkpoint(
            new_dir,
            tensors,
            plan.config,
            metadata=metadata,
            max_shard_bytes=max_shard_bytes,
            extra_files=plan.extra_files,
            verify=True,
            progress=progress,
        )
    _keep_modes(src, res.files)
    side_problems = verify_side_files(plan, new_dir)
    if side_problems:  # before anything of the source moves
        shutil.rmtree(new_dir, ignore_errors=True)
        raise WriteFailed(root, f"verification failed ({side_problems[0]}); nothing was changed")
    if existing is not None and existing.kind == "directory":
        aside = parent / f".{root.name}.specbridge-discard-{os.urandom(3).hex()}"
    else:
        aside = new_backup_dir(root, time.strftime("%Y%m%d-%H%M%S"))
    moved: list[str] = []
    try:
        _bring_along(src, root, new_dir, keep, moved)
        os.rename(root, aside)
    except OSError as e:  # nothing changed yet: what was moved goes back, the new directory goes
        for name in moved:
            os.rename(new_dir / name, root / name)
        shutil.rmtree(new_dir, ignore_errors=True)
        raise WriteFailed(root, f"{e.strerror or e} ({e.filename}) before the new checkpoint was placed; nothing was changed") from None
    try:
        os.rename(new_dir, root)
    except OSError as e:
        os.rename(aside, root)
        shutil.rmtree(new_dir, ignore_errors=True)
        raise WriteFailed(root, f"{e.strerror or e} while placing the new checkpoint; nothing was changed") from None
    fsync_dir(parent)
    if existing is not None and existing.kind == "directory":
        shutil.rmtree(aside, ignore_errors=True)
        bpath = existing.path
    elif keep:
        settle(aside)  # in-place backup files inside: the directory becomes the original again
        bpath = aside
    else:
        shutil.rmtree(aside, ignore_errors=True)
        bpath = None
    return Result(
        root,
        "rewrite",
        time.perf_counter() - t0,
        res.problems or [],
        bpath,
        files=[root / f.name for f in res.files],
        verified=_side_verified(plan, res.verified),
        kept=existing is not None,
    )


def _bring_along(src: Checkpoint, root: Path, new_dir: Path, keep: bool, moved: list[str]) -> None:
    """Everything in the directory that is not the checkpoint itself (tokenizer, reports, training
    checkpoints, README) comes along: moved when no backup is kept (named in `moved`), copied otherwise."""
    own = {f.name for f in src.weight_files} | {"config.json", "model.safetensors.index.json", CONFIG_BACKUP}
    for entry in root.iterdir():
        if entry.name in own or entry.name.endswith(HEADER_BACKUP_SUFFIX) or is_temp(entry.name) or (new_dir / entry.name).exists():
            continue
        if not keep:
            os.rename(entry, new_dir / entry.name)
            moved.append(entry.name)
        elif entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, new_dir / entry.name, symlinks=True)
        else:
            shutil.copy2(entry, new_dir / entry.name, follow_symlinks=False)


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
    from ..view import read_view

    engine = plan.engine or LAYOUT_ENGINE.get(plan.layout.name)
    if engine is None:
        return None, None
    view = read_view(open_checkpoint(dst))
    return engine, check(view, engine, str(dst), target=target, family=view.verdict.family)
