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


def resolve_inputs(engine: str | None, target: Path | None, launch: str | None):
    """--launch names the engine; --engine may add the version. Returns (engine spec, target, launch)."""
    from ..checkpoint.target import open_target
    from ..engines.launch import parse_launch

    lau = parse_launch(launch) if launch else None
    if lau:
        if engine in (None, "all"):
            engine = lau.engine
        elif engine.split("==")[0].strip().lower() != lau.engine:
            raise ValueError(f"--engine {engine} but the launch command is for {lau.engine}")
        if target is None and lau.target and Path(lau.target).exists():
            target = Path(lau.target)
    tgt = open_target(target) if target else None
    return engine or "all", tgt, lau


def check_cmd(path: Path, engine: str | None, as_json: bool, verbose: bool = False, target: Path | None = None, launch: str | None = None, parent: Path | None = None) -> int:
    from ..checkpoint.reader import open_checkpoint
    from ..engines.launch import LaunchError
    from ..engines.registry import EngineSpecError
    from ..rules.check import check

    try:
        engine, tgt, lau = resolve_inputs(engine, target, launch)
        ckpt = open_checkpoint(path)
        par = open_checkpoint(parent) if parent else None
        results = check(ckpt, engine, str(path), target=tgt, launch=lau, parent=par)
    except (CheckpointError, EngineSpecError, LaunchError, ValueError) as e:
        return fail(str(e))
    ok = all(r.ok for r in results)
    if as_json:
        obj = results[0].to_json() if len(results) == 1 else {"ok": ok, "results": [r.to_json() for r in results]}
        from ..checkpoint.hub import hub_sources

        obj.update(hub_sources(ckpt, tgt))  # the commits read, for Hub ids only
        print(json.dumps(obj, indent=2))
    else:
        from . import render

        if len(results) == 1 or verbose:
            for r in results:
                render.print_check(ckpt, r)
        else:
            render.print_check_summary(ckpt, results)
    return 0 if ok else 1


def launch_cmd(path: Path, engine: str, target: str, steps: int, topk: int, draft_tokens: int | None, as_json: bool) -> int:
    from ..checkpoint.reader import open_checkpoint
    from ..engines.launch import LaunchError, build_launch, parse_launch
    from ..engines.registry import EngineSpecError
    from ..rules.check import check

    name = engine.split("==")[0].strip().lower()
    try:
        cmd = build_launch(name, target, str(path), steps, topk, draft_tokens)
        lau = parse_launch(cmd)
        tpath = Path(target)
        from ..checkpoint.target import open_target

        tgt = open_target(tpath) if tpath.exists() else None
        ckpt = open_checkpoint(path)
        [res] = check(ckpt, engine, str(path), target=tgt, launch=lau)
    except (CheckpointError, EngineSpecError, LaunchError) as e:
        return fail(str(e))
    errors = [f for f in res.findings if f.severity == "error"]
    if as_json:
        print(json.dumps({"ok": res.ok, "command": cmd if res.ok else None, "check": res.to_json()}, indent=2))
        return 0 if res.ok else 1
    if not res.ok:
        sys.stderr.write(f"specbridge: refusing to print a launch command: {len(errors)} error finding(s)\n")
        for f in errors:
            sys.stderr.write(f"{f.code} {f.message}\n" + (f"    fix: {f.fix}\n" if f.fix else ""))
        return 1
    if tgt is None:
        sys.stderr.write(f"note: {target} is not a local path; target-dependent rules (aux layers, vocab) were not checked\n")
    for f in res.findings:
        if f.severity == "warning":
            sys.stderr.write(f"{f.code} warning: {f.message}\n")
    print(cmd)
    return 0
