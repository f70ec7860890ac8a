"""`specbridge convert`: any layout to any layout, through the canonical drafter."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional


def _config_changes(old: dict, new: dict) -> list[str]:
    out = []
    for k in new:
        if k not in old:
            out.append(f"+{k}")
        elif old[k] != new[k]:
            out.append(f"~{k}" if k != "architectures" else f"architectures {old[k]} → {new[k]}")
    out += [f"-{k}" for k in old if k not in new]
    return out


def convert_cmd(
    src: Path,
    to: str | None,
    out: Path | None,
    in_place: bool,
    engine: str | None,
    target: Path | None,
    embed: str,
    force: bool,
    backup: bool,
    shard_size: str | None,
    as_json: bool,
) -> int:
    """Validate the request, plan the conversion, write it (with a progress bar on a terminal), check the
    result for its engine, and report every change."""
    from ..checkpoint.errors import CheckpointError
    from ..checkpoint.write import WriteFailed
    from ..convert.run import Result, execute, post_check
    from .contract import fail
    from .progress import CopyProgress

    to, embed, shard = validate_convert(to, out, in_place, engine, embed, shard_size, force)
    ck, tgt, plan = make_plan(src, to, engine, target, embed)
    if in_place and ck.hub is None:
        from .paths import output_dir

        output_dir("--in-place", ck.root)  # the checkpoint's own directory takes the backup and the new files
    if plan.noop:  # nothing to write: said as such, the drafter checked where it is
        res = Result(Path(out) if out is not None else ck.root, "unchanged", 0.0, [])
        engine_used, checks = post_check(plan, ck.root, tgt)
        ok = checks is None or all(r.ok for r in checks)
        (print_convert_json(src, ck, tgt, plan, res, checks, ok) if as_json else print_convert(src, ck, plan, res, checks, engine_used))
        return 0 if ok else 1
    try:
        with CopyProgress(sum(t.nbytes for t in plan.tensors), f"convert → {out or src}", enabled=False if as_json else None) as bar:
            res = execute(plan, out, in_place=in_place, backup=backup, force=force, max_shard_bytes=shard, progress=bar)
    except WriteFailed as e:  # no space left, an I/O error, a failed verification: a failed run
        return fail(str(e), 1)
    except CheckpointError as e:  # a destination that exists, is the source or cannot be written: an unusable request
        return fail(str(e))
    engine_used, checks = post_check(plan, src if plan.noop else res.dst, tgt)
    ok = not res.problems and (checks is None or all(r.ok for r in checks))
    if as_json:
        print_convert_json(src, ck, tgt, plan, res, checks, ok)
    else:
        print_convert(src, ck, plan, res, checks, engine_used)
    return 0 if ok else 1


def validate_convert(
    to: str | None, out: Path | None, in_place: bool, engine: str | None, embed: str, shard_size: str | None, force: bool = False
):
    """(layout, embed mode, shard bytes) as the request means them; a contradictory or unknown one, and a
    destination that exists (without --force) or cannot be written, are refused before any work."""
    from .contract import fail
    from .optspec import check_number
    from .paths import output_dir

    if (out is None) == (not in_place):
        fail("give exactly one of -o OUT or --in-place")
    if out is not None:
        output_dir("-o", out, placed_beside=True)
        if os.path.lexists(out) and not force:
            fail(f"{out}: already exists; pass --force to replace it")
    if to and engine:
        fail("give --to LAYOUT or --engine NAME==VERSION, not both (--engine already picks the layout that version loads)")
    to, embed = (to.strip().lower() if to else None), embed.strip().lower()
    if embed not in ("keep", "drop", "target"):
        fail(f"--embed must be keep, drop or target, not {embed!r}")
    try:
        shard = _size(shard_size) if shard_size is not None else None
    except ValueError as e:
        fail(str(e))
    return to, embed, check_number("--shard-size", shard)  # its NUMBERS row: 0 or less is no size


def make_plan(src: Path, to: str | None, engine: str | None, target, embed: str):
    """(checkpoint, target, plan): the drafter and target opened, every step decided before a byte is written."""
    from ..checkpoint.errors import CheckpointError
    from ..checkpoint.reader import open_checkpoint
    from ..convert.plan import ConvertError, plan_conversion
    from ..engines.registry import EngineSpecError
    from ..view import read_view
    from .contract import fail
    from .guards import refuse_non_drafter
    from .targets import open_target_arg

    try:
        view = read_view(open_checkpoint(src))
        refuse_non_drafter(view, "convert")
        tgt = open_target_arg(target) if target else None
        tck = open_checkpoint(tgt.weights_dir) if (tgt and tgt.weights_dir) else None
        return view.ckpt, tgt, plan_conversion(view, to, engine, tgt, tck, embed)
    except ConvertError as e:
        usage = ("unknown layout", "say what to convert", "convert writes for one")
        fail(str(e), 2 if any(u in str(e) for u in usage) else 1)
    except (EngineSpecError, CheckpointError) as e:
        fail(str(e))


def print_convert_json(src: Path, ck, tgt, plan, res, checks, ok: bool) -> None:
    from ..checkpoint.hubref import hub_sources
    from .contract import print_json

    print_json(
        "convert",
        {
            "ok": ok,
            "src": str(src),
            "dst": str(res.dst),
            "from_layout": plan.drafter.layout,
            "to_layout": plan.layout.name,
            "engine": plan.engine,
            "method": res.method,
            "renamed": [list(p) for p in plan.renamed],
            "unchanged": plan.unchanged,
            "dropped": [list(p) for p in plan.dropped],
            "added": [list(p) for p in plan.added],
            "transformed": [list(p) for p in plan.transformed],
            "config_changes": _config_changes(ck.config or {}, plan.config),
            "notes": plan.notes,
            "warnings": plan.warnings,
            "verify_problems": res.problems,
            "verified": res.verified,
            "backup": str(res.backup) if res.backup else None,
            "backup_kept": res.kept,
            "copied": res.copied,  # the checkpoint's other files copied into dst byte for byte (in place: left where they are)
            "not_copied": [list(p) for p in _not_copied(res, plan)],
            "check": checks[0].to_json() if checks else None,
            "checks": [r.to_json() for r in checks] if checks else [],
            **hub_sources(ck.hub, tgt.hub if tgt is not None else None),  # the commit converted, for a Hub source
        },
    )


def print_convert(src: Path, ck, plan, res, checks, engine_used) -> None:
    """Every change, how the result was verified, and the engine check, one line each in a pipe; on a terminal
    a line wider than it is wrapped at spaces (console.fold)."""
    from . import console

    width = console.page_width()

    def w(text: str) -> None:
        sys.stdout.write(console.fold(text, width))

    w(
        f"specbridge convert {src} → {res.dst}  (layout {plan.drafter.layout} → {plan.layout.name}"
        + (f", for {plan.engine}" if plan.engine else "")
        + ")\n"
    )
    if ck.hub is not None:
        w(f"  {ck.hub.line()}\n")
    for line in plan.summary():
        w(f"  {line}\n")
    changes = _config_changes(ck.config or {}, plan.config)
    if changes:
        w(f"  config.json: {', '.join(changes)}\n")
    for n in plan.notes:
        w(f"  note: {n}\n")
    for n in plan.warnings:
        w(f"  warning: {n}\n")
    if res.method == "unchanged":
        w("nothing to change: the checkpoint is already in this layout" + ("; nothing was written\n" if plan.noop else "\n"))
    else:
        n = len(plan.tensors) + (plan.derive_t2d is not None) + (plan.gather_head is not None) + len(plan.zeros)
        w(f"wrote {res.dst} ({res.method}, {res.seconds:.2f} s)" + (f"; backup: {res.backup}" if res.backup else "") + "\n")
        if res.backup:
            whose = "the first in-place conversion's backup, kept" if res.kept else "the backup"
            w(f"  {whose} holds the original: `specbridge restore {res.dst}` puts it back\n")
        if res.problems:
            w(f"VERIFY FAILED: {len(res.problems)} problem(s): {res.problems[:3]}\n")
        else:
            w(f"verified: {n}/{n} tensors: {res.verified}\n")
        w(_other_files_line(res, plan))
    from ..families.table import BY_NAME

    # a family read by its FAMILY_RANGES rows is checked on each range convert wrote for; EAGLE-3 on its one era
    ranges = BY_NAME[plan.family].checker == "ranges"
    for r in (checks if ranges else checks[:1]) if checks else ():
        errs = [f for f in r.findings if f.severity == "error"]
        w(
            f"check {r.report.engine}=={r.report.version}: {'OK' if r.ok else 'NOT OK'}"
            f" (dropped {len(r.report.dropped)}, missing {len(r.report.missing)}, errors {len(errs)})\n"
        )
        for f in errs:
            w(f"  {f.code} {f.message}\n")
    if not checks and engine_used is None:
        w(f"check: no engine loads the {plan.layout.name} layout natively; nothing to check against\n")


def _other_files_line(res, plan) -> str:
    """What became of the checkpoint's other files (tokenizer, README, …): copied, or left where they are."""
    if _in_place(res, plan):
        line = "other files: left in place, as they were\n"
    elif res.copied:
        line = f"copied {len(res.copied)} other file(s) byte for byte: {', '.join(res.copied)}\n"
    else:
        line = "other files: none beside the weights to copy\n"
    return line + "".join(f"  not copied: {name} ({why})\n" for name, why in _not_copied(res, plan))


def _in_place(res, plan) -> bool:
    return plan.src.hub is None and res.dst == plan.src.root


def _not_copied(res, plan) -> list[tuple[str, str]]:
    """The entries beside the weights a copy leaves out; none in place (everything stays or comes along)."""
    return [] if _in_place(res, plan) else plan.not_copied


def _size(s: str) -> int:
    units = {"kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 2**10, "mib": 2**20, "gib": 2**30, "b": 1}
    t = s.strip().lower()
    for u in sorted(units, key=len, reverse=True):
        if t.endswith(u):
            try:
                return int(float(t[: -len(u)]) * units[u])
            except ValueError:
                break
    try:
        return int(t)
    except ValueError:
        raise ValueError(f"cannot read size {s!r} (e.g. 5GB, 500MiB)") from None


def register(app) -> None:
    """Typer is imported here, not with the module: the fast path in entry.py runs convert_cmd without it."""
    import typer

    from .options import typer_param

    @app.command()
    def convert(
        path: str = typer_param("convert", "path"),
        to: Optional[str] = typer_param("convert", "to"),
        out: Optional[Path] = typer_param("convert", "out"),
        in_place: bool = typer_param("convert", "in_place"),
        engine: Optional[str] = typer_param("convert", "engine"),
        target: Optional[str] = typer_param("convert", "target"),
        embed: str = typer_param("convert", "embed"),
        force: bool = typer_param("convert", "force"),
        no_backup: bool = typer_param("convert", "no_backup"),
        shard_size: Optional[str] = typer_param("convert", "shard_size"),
        as_json: bool = typer_param("convert", "as_json"),
    ) -> None:
        """Convert between trainer and engine layouts: streamed, atomic, verified, original kept."""
        raise typer.Exit(convert_cmd(path, to, out, in_place, engine, target, embed, force, not no_backup, shard_size, as_json))
