"""The bodies of the header-only commands, shared by the typer app and the fast entry path."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..checkpoint.errors import CheckpointError


def fail(message: str, code: int = 2) -> int:
    """One clear line on stderr, no traceback; returns the exit code."""
    sys.stderr.write(f"specbridge: error: {message}\n")
    return code


def inspect_cmd(path: Path, as_json: bool) -> int:
    from ..checkpoint.reader import open_checkpoint
    from ..layouts.canonical import describe

    try:
        ckpt = open_checkpoint(path)
    except CheckpointError as e:
        return fail(str(e))
    d = describe(ckpt)
    if as_json:
        from .jsonout import inspect_json

        print(json.dumps(inspect_json(ckpt, d), indent=2))
    else:
        from . import render

        render.print_inspect(ckpt, d)
    return 0


def check_cmd(path: Path, engine: str, as_json: bool, verbose: bool = False) -> int:
    from ..checkpoint.reader import open_checkpoint
    from ..engines.registry import EngineSpecError
    from ..rules.check import check

    try:
        ckpt = open_checkpoint(path)
        results = check(ckpt, engine, str(path))
    except (CheckpointError, EngineSpecError) as e:
        return fail(str(e))
    ok = all(r.ok for r in results)
    if as_json:
        obj = results[0].to_json() if len(results) == 1 else {"ok": ok, "results": [r.to_json() for r in results]}
        print(json.dumps(obj, indent=2))
    else:
        from . import render

        if len(results) == 1 or verbose:
            for r in results:
                render.print_check(ckpt, r)
        else:
            render.print_check_summary(ckpt, results)
    return 0 if ok else 1
