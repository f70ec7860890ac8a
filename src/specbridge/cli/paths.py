"""Path options checked at the door, before any work: an output that cannot be written and an input
that is not there would otherwise be found after minutes of loading or measuring, or end in exit 3.
Each check is a refusal (exit 2, one line naming the option). Stdlib only (the fast path uses it)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from .contract import CliError


def _refuse(option: str, path, problem: str):
    raise CliError(f"{option} {path}: {problem}")


def _nearest_existing(p: Path) -> Path:
    p = Path(os.path.abspath(p))
    while not os.path.lexists(p) and p != p.parent:
        p = p.parent
    return p


def _probe_dir(option: str, path, d: Path) -> None:
    """Can a file be created in `d`? Asked of the filesystem itself: permission bits say nothing for root, a read-only
    mount or /proc. An unnamed file (O_TMPFILE) where the filesystem makes one, so that a process killed here leaves
    nothing behind in `d`; else a named file created and removed."""
    try:
        if hasattr(os, "O_TMPFILE"):
            try:
                os.close(os.open(d, os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, 0o600))
                return
            except OSError as e:
                if e.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):  # a filesystem without unnamed files
                    raise
        probe = d / f".specbridge-probe-{os.getpid()}-{os.urandom(3).hex()}"
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
    except OSError as e:  # ENOENT from a directory that exists: it takes no files (/proc)
        _refuse(option, path, f"cannot write in {d}: {'it takes no new files' if e.errno == errno.ENOENT else e.strerror or e}")
    os.unlink(probe)


def output_file(option: str, path) -> Path:
    """A file the command will write (--plot, --log): not a directory, in a directory that exists and takes
    new files (or itself writable when it exists)."""
    p = Path(path)
    if p.is_dir():
        _refuse(option, path, "is a directory; give a file name")
    parent = Path(os.path.abspath(p)).parent
    if not parent.exists():
        _refuse(option, path, f"no such directory {parent}")
    if not parent.is_dir():
        _refuse(option, path, f"{_nearest_existing(parent)} is not a directory")
    if p.exists():
        try:
            with open(p, "ab"):
                pass
        except OSError as e:
            _refuse(option, path, f"cannot write: {e.strerror or e}")
    else:
        _probe_dir(option, path, parent)
    return p


def output_dir(option: str, path, *, placed_beside: bool = False) -> Path:
    """A directory the command will create or fill (train --out, --log-dir), or with `placed_beside`
    write beside and rename into place (convert -o): not a file, and where it is written, a directory
    that takes new entries (missing parents are created, like mkdir -p)."""
    p = Path(path)
    if os.path.lexists(p) and not p.is_dir():
        _refuse(option, path, "exists and is not a directory")
    anc = _nearest_existing(Path(os.path.abspath(p)).parent if placed_beside else p)
    if not anc.is_dir():
        _refuse(option, path, f"{anc} is not a directory")
    _probe_dir(option, path, anc)
    return p


def input_file(option: str, path) -> Path:
    """A file the command reads (--prompts): there, a file, readable."""
    p = Path(path)
    if not os.path.lexists(p):
        _refuse(option, path, "no such file or directory")
    if p.is_dir():
        _refuse(option, path, "is a directory; give a file")
    try:
        with open(p, "rb"):
            pass
    except OSError as e:
        _refuse(option, path, f"cannot read: {e.strerror or e}")
    return p


def executable(option: str, path) -> str:
    """A program the command starts (--python): found (a path, or a name on PATH), a file, executable."""
    import shutil

    text = os.fspath(path)
    if os.sep not in text:
        if shutil.which(text) is None:
            _refuse(option, path, "no such program on PATH")
        return text
    if not os.path.lexists(text):
        _refuse(option, path, "no such file or directory")
    if os.path.isdir(text):
        _refuse(option, path, "is a directory; give the interpreter")
    if not os.access(text, os.X_OK):
        _refuse(option, path, "is not executable")
    return text
