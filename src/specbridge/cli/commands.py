"""The bodies of the header-only commands, shared by the typer app and the fast entry path.

Every refusal raises `CliError` (one line on stderr; with --json also an object on stdout); every
result under --json goes through `contract.print_json` (schema, tool version, strict JSON)."""

from __future__ import annotations

import sys
from pathlib import Path

from ..checkpoint.errors import CheckpointError
from .contract import CliError, fail, print_json
from .gate import GATE_SEVERITIES, gate, split_codes
from .optspec import validate_draft_shape


def inspect_cmd(path: Path, as_json: bool) -> int:
    from .mtp_inspect import inspect_after_open, inspect_index_first

    shown = inspect_index_first(path, as_json)  # a target with an MTP head: its index, not every shard header
    if shown is not None:
        return shown
    from ..checkpoint.reader import open_checkpoint  # after: a target's MTP head needs neither (~40 ms of imports)
    from ..view import read_view
    from .guards import refuse_non_drafter

    try:
        view = read_view(open_checkpoint(path))  # described once, for the guard and the output
    except CheckpointError as e:
        return fail(str(e))
    if view.ckpt.hub is not None:  # a single file on the Hub is read here, not index-first
        shown = inspect_after_open(path, view.ckpt, as_json)
        if shown is not None:
            return shown
    fam = refuse_non_drafter(view, "inspect")
    own = fam.family.describe(view.ckpt)  # P-EAGLE's files are an EAGLE-3 drafter's plus mask_hidden: EAGLE-3's description
    if own is not None:
        return _inspect_family(view, own, as_json)
    if as_json:
        from .jsonout import inspect_json

        print_json("inspect", {"ok": True, **inspect_json(view), "family": fam.to_json()})
    else:
        from . import render

        render.print_inspect(view)
    return 0


def _inspect_family(view, geometry: dict, as_json: bool) -> int:
    """inspect for a family other than EAGLE-3: the family, its evidence, its own geometry, every tensor."""
    ckpt, fam = view.ckpt, view.verdict
    tensors = [{"name": t.name, "dtype": t.dtype, "shape": list(t.shape), "bytes": t.nbytes} for t in ckpt.tensors.values()]
    if as_json:
        from ..checkpoint.hubref import hub_sources

        body = {
            "ok": True,
            "path": str(ckpt.root),
            "storage": ckpt.storage,
            "files": [str(f) for f in ckpt.weight_files],
            "family": fam.to_json(),
        }
        body |= {"geometry": geometry, "tensors": tensors, "totals": {"tensors": len(tensors), "bytes": ckpt.total_bytes}}
        print_json("inspect", {**body, "metadata": ckpt.metadata, **hub_sources(ckpt.hub)})
        return 0
    from . import console

    width = console.page_width()

    def print(line: str) -> None:  # noqa: A001 - a terminal folds each line at its width, a pipe keeps it whole
        sys.stdout.write(console.fold(line, width) + "\n")

    print(f"{ckpt.root}  ({ckpt.storage}, {len(ckpt.weight_files)} file(s))")
    print(f"family: {fam.family.title}")
    if fam.mislabel is not None:
        print(f"mislabelled: {fam.mislabel.line()}")
    for e in fam.evidence:
        print(f"  evidence: {e}")
    print("geometry:")
    for k, v in geometry.items():
        print(f"  {k}: {v}")
    print(f"tensors ({len(tensors)}):")
    for t in tensors:
        print(f"  {t['name']} {t['dtype']} {t['shape']}")
    return 0


def resolve_inputs(engines: list[str] | None, target: str | Path | None, launch: str | None):
    """--launch names the engine; --engine may add the version. Returns (engine specs, target, launch)."""
    from ..engines.launch import parse_launch
    from ..engines.registry import engine_name, split_specs
    from .targets import open_target_arg

    lau = parse_launch(launch) if launch else None
    specs = split_specs(engines) if engines else []
    if lau:
        if not specs or specs == ["all"]:
            specs = [lau.engine]
        elif any(engine_name(s) != lau.engine for s in specs):
            raise CliError(f"--engine {','.join(specs)} but the launch command is for {lau.engine}")
        if target is None and lau.target and Path(lau.target).exists():
            target = Path(lau.target)
    tgt = open_target_arg(target) if target is not None else None
    return specs or ["all"], tgt, lau


def check_cmd(
    path: Path,
    engines: list[str] | None,
    as_json: bool,
    tables: bool = False,
    target: str | Path | None = None,
    launch: str | None = None,
    parent: Path | None = None,
    fail_on: list[str] | None = None,
    ignore: list[str] | None = None,
    mtp: bool = False,
) -> int:
    from .draft_check import PlainDraft

    failing_codes, ignored_codes = split_codes(fail_on, GATE_SEVERITIES), split_codes(ignore)
    try:
        got = _check_results(path, engines, target, launch, parent, mtp)
    except (CheckpointError, ValueError) as e:  # ValueError: EngineSpecError, LaunchError, a value read wrong
        return fail(str(e), getattr(e, "exit_code", 2))  # NoFamilyClass: the release has none (1)
    if isinstance(got, Exception):  # mtp_check.HeadOnly: no release asked for models the head's class: what the files alone say
        from .mtp_check import print_head_only

        return print_head_only(got, as_json)
    if isinstance(got, PlainDraft):  # a plain causal LM: a draft model for method draft_model / STANDALONE
        from ..engines.registry import EngineSpecError
        from .draft_check import check_draft

        try:
            return check_draft(got, as_json, failing_codes, ignored_codes)
        except (CheckpointError, EngineSpecError) as err:
            return fail(str(err))
    ckpt, tgt, results, skipped, fam, head = got
    for line in skipped:
        sys.stderr.write(f"note: {line}\n")
    failing = gate(results, failing_codes, ignored_codes)
    ok = not failing
    if as_json:
        policy = {"fail_on": sorted(failing_codes), "ignore": sorted(ignored_codes), "failing": failing}
        if len(results) == 1:
            body = {**results[0].to_json(), "ok": ok, "engine_ok": results[0].ok, "gate": policy}
        else:
            body = {"ok": ok, "gate": policy, "results": [r.to_json() for r in results]}
        body |= {"family": fam.to_json(), "not_checked": skipped}
        if head is not None:
            body["mtp"] = head.to_json()
        from ..checkpoint.hubref import hub_sources

        body.update(hub_sources(ckpt.hub, tgt.hub if tgt is not None else None))  # the commits read, for Hub ids only
        print_json("check", body)
    else:
        from . import report

        if head is not None:
            from .mtp_check import print_head

            print_head(head)
        report.print_check(ckpt, results, tables=tables, failing=failing)
    return 0 if ok else 1


def _probe_first(path, forced: bool) -> bool:
    """Whether the MTP probe (mtp_check.mtp_probe) reads `path` before the checkpoint reader does: when --mtp asks,
    for a Hub id, for a directory with a sharded index (a target's: only its index is read, never every shard header)
    and for a config that announces MTP layers. A local single-file checkpoint whose config announces none (every
    drafter) is opened once, and probed after only if its names hold a head (mtp_named)."""
    from ..checkpoint.assemble import read_json
    from ..families.mtp import announced_layers

    p = Path(path)
    if forced or not p.exists():
        return True
    if p.is_file():  # the probe reads an index json or a config.json given as the path, not a weights file
        return p.name.endswith(".safetensors.index.json") or p.name == "config.json"
    try:
        if any(f.name.endswith(".safetensors.index.json") for f in p.iterdir()):
            return True
        config = read_json(p / "config.json") if (p / "config.json").is_file() else {}
    except (CheckpointError, OSError):
        return True  # the probe answers as it always has (None), and the reader says what is wrong
    return isinstance(config, dict) and announced_layers(config)[0] > 0


def mtp_named(path, view) -> bool:
    """A local single-file safetensors checkpoint, opened, whose config announces no MTP layer but whose names hold an
    MTP head (mtp_check.mtp_family's first test): it is probed as a target after all."""
    from ..families.mtp import find_mtp_head

    if view.ckpt.hub is not None or view.ckpt.storage != "safetensors" or not Path(path).is_dir():
        return False
    return bool(find_mtp_head(view.ckpt.config or {}, view.ckpt.tensors).layers)


def _check_results(path, engines, target, launch, parent, mtp: bool):
    """(checkpoint, target, results, engines not checked, family verdict, MTP head or None): a drafter read as the
    family its evidence shows, or a target's MTP head read from its index; or the answer of another kind the verdict
    calls for (mtp_check.HeadOnly: no release asked for models the head; draft_check.PlainDraft: a plain causal LM).
    The checkpoint is read and described once, and its family detected once. A drafter imports none of the MTP probe."""
    specs, tgt, lau = resolve_inputs(engines, target, launch)
    probe = None
    if _probe_first(path, mtp):  # a target: its index, the head's shard headers
        from .mtp_check import mtp_probe

        probe = mtp_probe(path, mtp)
    view = None
    if probe is None:
        from ..checkpoint.reader import open_checkpoint
        from ..view import read_view

        view = read_view(open_checkpoint(path))  # described once, for the guard, the rules and the simulation
        if mtp_named(path, view):
            from .mtp_check import mtp_probe

            probe = mtp_probe(path, False)
    if probe is not None:
        from .mtp_check import HeadOnly, mtp_outcome

        if parent:
            raise CliError("--parent reads EAGLE-3 drafters; this is a target's MTP head")
        got = mtp_outcome(probe, path, specs, tgt, lau)
        if isinstance(got, HeadOnly):
            return got
        results, skipped, head, fam, mview = got
        return mview.ckpt, tgt, results, skipped, fam, head
    if view.verdict.family is not None and view.verdict.family.checker == "draft_model":
        from .draft_check import PlainDraft

        if parent:
            raise CliError("--parent reads EAGLE-3 drafters; this is a plain causal LM (a draft model)")
        return PlainDraft(view, tgt, specs, lau)
    from ..rules.check import check, check_family
    from .guards import refuse_non_drafter

    fam = refuse_non_drafter(view, "check")
    if fam.family.checker == "eras":  # EAGLE-3: the engines' loader eras
        par = None
        if parent:
            from ..checkpoint.reader import open_checkpoint

            par = open_checkpoint(parent)
        return view.ckpt, tgt, check(view, specs, str(path), target=tgt, launch=lau, parent=par), [], fam, None
    if parent:
        raise CliError(f"--parent reads EAGLE-3 drafters only so far; this is a {fam.family.title} drafter")
    results, skipped = check_family(view, specs, fam.family, str(path), target=tgt, launch=lau)
    return view.ckpt, tgt, results, skipped, fam, None


def launch_env(engine: str, res) -> tuple[str, ...]:
    """The environment a launch line sets for check's result: the model runner the dispatched class drafts as
    trained on (DraftClass.runner, rule D007), as the engine's LAUNCH row selects it."""
    from ..engines.launch import runner_env

    rep = res.report
    return runner_env(rep.engine, rep.cls.runner) if rep.dispatched and rep.cls is not None else ()


def check_drafter(view, engine: str, label: str, tgt, lau, what: str = "launch"):
    """check's one result for a drafter read as the family its files show (EAGLE-3 or DFlash), with a launch line:
    what `launch` prints, `serve` and `sweep` start. An engine spec that spans several of the family's release
    ranges is refused: a launch line is for one release."""
    from ..engines.registry import resolve
    from ..families.table import readers
    from ..rules.check import check, check_family
    from .guards import refuse_non_drafter

    # the families `launch` reads: `serve` and `sweep` start its lines (each engine's LAUNCH row says which it has)
    fam = refuse_non_drafter(view, what, read_here=readers("launch")).family
    if fam.checker == "eras":
        [res] = check(view, engine, label, target=tgt, launch=lau)
        return res
    if "==" not in engine and len(places := resolve(engine)) == 1:  # a bare name: its newest release, as for EAGLE-3
        engine = f"{places[0].era.engine}=={places[0].version}"
    results, skipped = check_family(view, engine, fam, label, target=tgt, launch=lau)
    if len(results) != 1:
        raise CliError(
            f"--engine {engine} spans {len(results)} {fam.title} release ranges; name one release (NAME==VERSION)"
            if results
            else "; ".join(skipped) or f"nothing checks a {fam.title} drafter on {engine}"
        )
    return results[0]


def drafter_launch(
    view, engine: str, drafter: str, served: str, tgt, steps: int | None, topk: int | None, draft_tokens, extra=None, files=None
):
    """(command line, check's result on it, family) for a drafter read as the family its files show: an EAGLE-3
    drafter gets the engine's LAUNCH line, a DFlash, DFlash2 or DSpark drafter its `families[family]` line, drafting
    the block it was trained on unless `steps` is given, on the model runner its class needs (LAUNCH.runner_env). `launch` prints it; `serve` and `sweep` start it.
    An engine whose line names its speculative config as a file (LAUNCH.spec_file, TensorRT-LLM) gets the file too:
    `files` (a dict) receives its name and text, and check reads the line with it."""
    from ..engines.launch import LaunchError, build_launch, family_steps, parse_launch, spec_file_text
    from ..engines.registry import LAUNCHERS, engine_name
    from ..families.dflash import block_size
    from ..families.eagle import speculators_tokens
    from .guards import refuse_non_drafter

    name = engine_name(engine)
    fam = refuse_non_drafter(view, "launch").family
    if LAUNCHERS[name].chain_only and topk not in (None, 1):
        raise CliError(f"the {name} line drafts a chain (max_draft_len), not a tree: drop --topk {topk}")
    row = LAUNCHERS[name].families.get(fam.name)
    if fam.checker == "eras":  # EAGLE-3: the engine's own LAUNCH line
        steps, topk = 3 if steps is None else steps, 1 if topk is None else topk
    else:
        if row is None:  # no line: what check knows of the engine's class comes first
            check_drafter(view, engine, drafter, tgt, None)
            raise LaunchError(f"no launch command for a {fam.name} drafter on {name} (its LAUNCH row has none)")
        if topk not in (None, 1) and not row.tree:
            kind = "block" if "block" in row.steps else "chain"  # the steps come from the trained block, or not
            raise CliError(f"a {fam.title} drafter drafts one {kind}, not a tree (on {name}): drop --topk {topk}")
        topk = 1 if topk is None else topk
        if steps is None:
            cfg = view.ckpt.config or {}
            steps = family_steps(name, fam.name, block_size(cfg), speculators_tokens(cfg))
            if steps is None:
                raise CliError(f"{view.ckpt.root}: no block_size in the drafter's config; pass --steps (tokens drafted per step)")
    validate_draft_shape(steps, topk, draft_tokens)  # the user's window against the drafter's default depth
    written = spec_file_text(name, drafter, steps, fam.name)
    text = dict([written]) if written else None
    cmd = build_launch(name, served, drafter, steps, topk, draft_tokens, extra, family=fam.name)
    res = check_drafter(view, engine, drafter, tgt, parse_launch(cmd, text))
    env = launch_env(name, res)  # a class that drafts as trained on one model runner only: the line selects it
    if env:
        cmd = build_launch(name, served, drafter, steps, topk, draft_tokens, extra, family=fam.name, env=env)
        res = check_drafter(view, engine, drafter, tgt, parse_launch(cmd, text))
    if files is not None and text:
        files.update(text)
    return cmd, res, fam.name


def launch_cmd(
    path: Path, engine: str, target: str | None, steps: int | None, topk: int | None, draft_tokens: int | None, as_json: bool
) -> int:
    from ..checkpoint.reader import open_checkpoint
    from ..engines.launch import LaunchError, build_launch, parse_launch, spec_file_text
    from ..engines.registry import LAUNCHERS, EngineSpecError, resolve
    from ..view import read_view
    from .targets import servable_target

    if steps is not None:  # the window checked before anything is read; unset, once the drafter's default is known
        validate_draft_shape(steps, 1 if topk is None else topk, draft_tokens)
    try:
        places = resolve(engine)
        if len(places) != 1:
            return fail(f"--engine {engine} names {len(places)} engine versions; a launch command is for one")
        name = places[0].era.engine
        if name not in LAUNCHERS:  # the engines with a LAUNCH row
            return fail(f"launch prints {', '.join(LAUNCHERS)} command lines; not {name}")
        from ..checkpoint.hub import engine_model_arg
        from .mtp_check import HeadOnly, check_mtp, mtp_probe

        files: dict[str, str] = {}  # the speculative config file the line names (TensorRT-LLM's --config)
        probe = mtp_probe(path, False)  # a target with an MTP head: the line serves the head inside it
        idx = probe.index if probe is not None else None
        if idx is not None:
            if target is not None:
                return fail(f"{path} carries its own MTP head: the engine serves it from the target itself; drop --target")
            served, tgt = engine_model_arg(path), None
            steps, topk = 3 if steps is None else steps, 1 if topk is None else topk
            validate_draft_shape(steps, topk, draft_tokens)
            cmd = build_launch(name, served, None, steps, topk, draft_tokens)
            written = spec_file_text(name, None, steps)
            files.update([written] if written else [])
            lau = parse_launch(cmd, files)
            try:
                results, _, _, _, view = check_mtp(idx, path, engine, None, lau, probe=probe)
                ckpt = view.ckpt
            except HeadOnly as e:  # refused like a check that found nothing it can run, with what the files say
                return fail("; ".join([e.why, *(f"{f.code} {f.message}" for f in e.findings if f.severity == "error")]))
            if len(results) != 1:  # a bare engine name answers each of its MTP release ranges
                return fail(f"--engine {engine} spans {len(results)} MTP release ranges; name one release (NAME==VERSION)")
            res = results[0]
        else:
            if target is None:
                return fail("--target is required for a drafter (the target model the engine will be given)")
            served, tgt = servable_target(target)
            drafter = engine_model_arg(path)  # a Hub id stays an id: the engine downloads it
            view = read_view(open_checkpoint(path))
            ckpt = view.ckpt
            if view.verdict.family is not None and view.verdict.family.checker == "draft_model":  # a plain draft model
                from .draft_check import draft_model_launch

                cmd, res = draft_model_launch(view, engine, drafter, served, tgt, steps, topk, draft_tokens)
            else:
                cmd, res, _ = drafter_launch(view, engine, drafter, served, tgt, steps, topk, draft_tokens, files=files)
    except (CheckpointError, EngineSpecError, LaunchError, ValueError) as e:
        return fail(str(e), getattr(e, "exit_code", 2))
    errors = [f for f in res.findings if f.severity == "error"]
    if as_json:
        from ..checkpoint.hubref import hub_sources

        sources = hub_sources(ckpt.hub, tgt.hub if tgt is not None else None)
        body = {"ok": res.ok, "command": cmd if res.ok else None, "check": res.to_json(), **sources}
        if files:
            body["files"] = files if res.ok else None  # name -> text of each file the command reads
        print_json("launch", body)
        return 0 if res.ok else 1
    if not res.ok:
        sys.stderr.write(f"specbridge: refusing to print a launch command: {len(errors)} error finding(s)\n")
        for f in errors:
            sys.stderr.write(f"{f.code} {f.message}\n" + (f"    fix: {f.fix}\n" if f.fix else ""))
        return 1
    if tgt is None and idx is None:
        sys.stderr.write(f"note: {served} is a Hub id not read here; target-dependent rules (aux layers, vocab) were not checked\n")
    for f in res.findings:
        if f.severity == "warning":
            sys.stderr.write(f"{f.code} warning: {f.message}\n")
    for fname, text in files.items():  # the file the command names, written by the shell before it runs
        print(f"cat > {fname} <<'EOF'\n{text}EOF")
    print(cmd)
    return 0
