"""`specbridge restore PATH`: put back the checkpoint an in-place conversion changed, byte for byte."""

from __future__ import annotations

import sys


def restore_cmd(path: str, as_json: bool) -> int:
    """Restore from the backup set (convert/backup.py); a checkpoint without one is refused (exit 2)."""
    from ..checkpoint.errors import CheckpointError
    from ..convert.backup import restore
    from .contract import fail

    try:
        r = restore(path)
    except CheckpointError as e:
        return fail(str(e))
    except OSError as e:  # a rename or write refused by the filesystem: nothing half done that a rerun cannot finish
        return fail(f"{path}: cannot restore: {e.strerror or e}; run restore again once that is fixed")
    others = [str(p) for p in r.backup.others] if r.backup else []
    if as_json:
        from .contract import print_json

        print_json(
            "restore",
            {
                "ok": True,
                "path": str(r.root),
                "backup": str(r.backup.path) if r.backup else None,
                "kind": r.backup.kind if r.backup else None,
                "restored": r.restored,
                "moved_in": r.moved_in,
                "removed": r.removed,
                "other_backups": others,
            },
        )
        return 0
    w = sys.stdout.write
    if r.backup is None:
        w(f"{r.root} has no backup: it was not changed (a run was killed before its backup was complete)\n")
    elif r.backup.kind == "files":
        w(f"restored {r.root} from its in-place backup files: {', '.join(r.restored)} as before the first in-place conversion\n")
    else:
        w(f"restored {r.root}: the original directory moved back from {r.backup.path}\n")
    if r.moved_in:
        w(f"  kept, made after the conversion: {', '.join(r.moved_in)}\n")
    if r.removed:
        w(f"  removed leftovers of interrupted runs: {', '.join(r.removed)}\n")
    for o in others:
        w(f"  note: {o} is another backup (made by an older specbridge, one per run); left as it is\n")
    return 0


def register(app) -> None:
    """Typer is imported here, not with the module: the fast path in entry.py runs restore_cmd without it."""
    import typer

    from .options import typer_param

    @app.command()
    def restore(
        path: str = typer_param("restore", "path"),
        as_json: bool = typer_param("restore", "as_json"),
    ) -> None:
        """Undo in-place conversions: put the original checkpoint back from its backup, byte for byte."""
        raise typer.Exit(restore_cmd(path, as_json))
