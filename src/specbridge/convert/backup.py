"""The one backup an in-place conversion keeps of a checkpoint, and `restore`, which puts it back.

A checkpoint converted in place has at most one backup set, made by its first in-place conversion and
never overwritten by a later one, so it always holds the original:

- "files": the original `config.json` as `config.json.specbridge-backup` and each renamed weight
  file's original header as `<file>.specbridge-header-backup`, beside them (a header-only rename);
- "directory": the whole original directory as a sibling `<name>.specbridge-backup-<time>` (a full
  rewrite). A full rewrite of a checkpoint that has a "files" set first turns the moved-aside
  directory back into the original (`settle`), so the set becomes a "directory" one.

Every step leaves a state `restore` can finish from, a kill -9 between any two included: the root
missing (killed between the two renames of a full rewrite), a backup directory still holding its
in-place files, backup files partly removed.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ..checkpoint.errors import CheckpointError
from ..checkpoint.write import HEADER_BACKUP_SUFFIX, checked_header_backup, fsync_dir, replace_file, write_header
from ..record import field, record

CONFIG_BACKUP = "config.json.specbridge-backup"
DIR_BACKUP_MARK = ".specbridge-backup-"
TEMP_MARK = ".specbridge-tmp"  # checkpoint.write.replace_file's temp name: `.NAME.specbridge-tmp`


def is_temp(name: str) -> bool:
    """A temp file of an atomic replace a kill cut short: never part of a checkpoint."""
    return name.startswith(".") and name.endswith(TEMP_MARK)


@record(frozen=False)
class BackupSet:
    kind: str  # "files" | "directory"
    path: Path  # the backup directory, or the config backup (files)
    headers: list[Path] = field(default_factory=list)  # header backups (files)
    others: list[Path] = field(default_factory=list)  # further backup directories (older tools made one per run)

    @property
    def config(self) -> Path | None:
        return self.path if self.kind == "files" and self.path.exists() else None


@record(frozen=False)
class Restored:
    root: Path
    backup: BackupSet | None  # None: there was none, only leftovers of a run killed before it made one
    restored: list[str]  # the files (or the directory) put back
    moved_in: list[str]  # entries made after the conversion, carried into the restored directory
    removed: list[str]  # leftovers of interrupted runs removed


def backup_dirs(root: Path) -> list[Path]:
    """The sibling backup directories of `root`, oldest first (the name ends in the time it was made)."""
    root = Path(os.path.abspath(root))
    prefix = root.name + DIR_BACKUP_MARK
    try:
        names = sorted(n for n in os.listdir(root.parent) if n.startswith(prefix) and os.path.isdir(root.parent / n))
    except OSError:
        return []
    return [root.parent / n for n in names]


def in_place_files(d: Path) -> tuple[Path | None, list[Path]]:
    """The config backup (or None) and the header backups inside directory `d`."""
    try:
        names = sorted(os.listdir(d))
    except OSError:
        return None, []
    headers = [d / n for n in names if n.endswith(HEADER_BACKUP_SUFFIX)]
    return (d / CONFIG_BACKUP if CONFIG_BACKUP in names else None), headers


def find_backup(root: Path) -> BackupSet | None:
    """The checkpoint's backup set, or None. A sibling directory wins over files inside: it holds the
    original, files inside are then an older tool's record of a later state."""
    root = Path(os.path.abspath(root))
    dirs = backup_dirs(root)
    if dirs:
        return BackupSet("directory", dirs[0], others=dirs[1:])
    config, headers = in_place_files(root)
    if config is None and not headers:
        return None
    return BackupSet("files", config or root / CONFIG_BACKUP, headers)


def new_backup_dir(root: Path, stamp: str) -> Path:
    """A sibling name for the original directory that sorts after any existing one."""
    bdir = root.parent / f"{root.name}{DIR_BACKUP_MARK}{stamp}"
    n = 1
    while os.path.lexists(bdir):
        n += 1
        bdir = root.parent / f"{root.name}{DIR_BACKUP_MARK}{stamp}-{n}"
    return bdir


def save_config_backup(root: Path) -> Path | None:
    """`config.json` saved as the config backup (whole or not at all, with its mode), unless one exists:
    the first state is the one kept. Returns the backup written, or None."""
    cb = root / CONFIG_BACKUP
    if os.path.lexists(cb):
        return None
    cfg = root / "config.json"
    replace_file(cb, cfg.read_bytes(), os.stat(cfg).st_mode & 0o7777)
    return cb


def settle(d: Path) -> list[str]:
    """Apply the in-place backup files inside directory `d` (headers, then config.json) and remove them:
    `d` then holds the checkpoint as it was before its first in-place conversion. Every step can be
    repeated, so a settle cut short is finished by the next; temp files of writes a kill cut short go.
    Returns the files put back."""
    config, headers = in_place_files(d)
    pairs = [(h, h.with_name(h.name[: -len(HEADER_BACKUP_SUFFIX)])) for h in headers]
    saved = [(f, checked_header_backup(f, h)) for h, f in pairs]  # every backup checked before anything is written
    for f, raw in saved:
        write_header(f, raw)
    done = [f.name for f, _ in saved]
    if config is not None:
        replace_file(d / "config.json", config.read_bytes(), os.stat(config).st_mode & 0o7777)
        done.append("config.json")
    for h, _ in pairs:
        h.unlink()
    for name in os.listdir(d):
        if is_temp(name):
            os.unlink(d / name)
    if config is not None:
        config.unlink()  # last: while it exists, the set is still recognised
    fsync_dir(d)
    return done


def leftovers(root: Path) -> list[Path]:
    """Hidden directories an interrupted in-place conversion or restore left beside `root` (ours by name)."""
    marks = (f".{root.name}.specbridge-new-", f"..{root.name}.specbridge-new-", f".{root.name}.specbridge-discard-")
    try:
        return sorted(root.parent / n for n in os.listdir(root.parent) if n.startswith(marks))
    except OSError:
        return []


def restore(root: Path) -> Restored:
    """Put the original back: the backup set's files applied in place, or its directory moved back into
    `root` (entries made in `root` after the conversion are carried along). The backup is removed once
    the original is back; leftovers of interrupted runs too (without a backup set, they are all there is
    to undo: a run killed before its backup was complete had changed nothing)."""
    given, root = os.fspath(root), Path(os.path.abspath(root))
    if root.is_file():  # convert takes a weights file or config.json too: its directory is the checkpoint
        root = root.parent
    b = find_backup(root)
    if b is None:
        temps = [root / n for n in os.listdir(root) if is_temp(n)] if os.path.isdir(root) else []
        if temps or leftovers(root):  # killed before its first backup was complete: root is the original
            return Restored(root, None, [], [], _remove(temps + leftovers(root)))
        if not os.path.lexists(root):
            raise CheckpointError(given, "no such file or directory, and no backup of it from an in-place conversion")
        raise CheckpointError(given, "has no backup from an in-place conversion (convert --in-place keeps one); nothing to restore")
    if b.kind == "files":
        return Restored(root, b, settle(root), [], _remove(leftovers(root)))
    done = settle(b.path)  # a full rewrite killed before it had settled its backup
    discard = None
    moved: list[str] = []
    if os.path.lexists(root):
        moved = _carry_new_entries(root, b.path)
        discard = root.parent / f".{root.name}.specbridge-discard-{os.urandom(3).hex()}"
        os.rename(root, discard)
    os.rename(b.path, root)
    fsync_dir(root.parent)
    if discard is not None:
        shutil.rmtree(discard, ignore_errors=True)
    return Restored(root, b, done or [root.name], moved, _remove(leftovers(root)))


def _carry_new_entries(root: Path, original: Path) -> list[str]:
    """Entries of `root` the original lacks (made after the conversion) moved into it, so restoring
    loses nothing; the converted checkpoint's own files, and temp files of writes a kill cut short, are
    what restoring replaces."""
    own = {"config.json", "model.safetensors", "model.safetensors.index.json", CONFIG_BACKUP}
    moved = []
    for name in sorted(os.listdir(root)):
        if name in own or name.endswith((".safetensors", HEADER_BACKUP_SUFFIX)) or is_temp(name) or os.path.lexists(original / name):
            continue
        os.rename(root / name, original / name)
        moved.append(name)
    return moved


def _remove(paths: list[Path]) -> list[str]:
    for p in paths:
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)
    return [p.name for p in paths]
