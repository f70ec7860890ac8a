"""`specbridge eval`: offline acceptance with a real target, as trained or as an engine version loads it."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import typer

from .eval_common import load_target_or_fail, pick_device, report_refusal, report_result, run_facts
from .options import FLAG, dtype_or_fail, number_param, path_argument, prompt_format_or_fail, shared_param
from .optspec import MAX_NEW, PROMPT_FORMAT, PROMPTS

DEVICES = ("auto", "cpu", "cuda")
RUNNERS = ("V1", "V2")  # vLLM's model runners (engines/vllm/ DraftClass.runner): DFlash2's selector and DSpark run on V2 only


def validate_eval(
    steps: int,
    topk: int,
    draft_tokens: int | None,
    num_prompts: int | None,
    max_new: int,
    threads: int,
    device: str,
    dtype: str,
    fail_under: float | None,
) -> None:
    """Every option checked before the target is loaded (a bad value must not cost a minute first). The
    command line has checked each number by its optspec.NUMBERS row already; the same rows again here for a
    caller of eval_cmd itself, and the options that bound each other."""
    from .contract import fail
    from .optspec import check_number, validate_draft_shape

    validate_draft_shape(steps, topk, draft_tokens)
    for flag, value in (("--max-new-tokens", max_new), ("--num-prompts", num_prompts), ("--threads", threads)):
        check_number(flag, value)
    dtype_or_fail(dtype)
    if device not in DEVICES:
        fail(f"--device must be one of {', '.join(DEVICES)}, not {device!r}")
    check_fail_under(fail_under, steps)


def check_fail_under(fail_under: float | None, steps: int) -> None:
    from .contract import fail
    from .optspec import check_number

    check_number("--fail-under", fail_under)
    if fail_under is not None and fail_under > steps + 1:
        fail(f"--fail-under is a mean accept length: between 1 and steps + 1 = {steps + 1}, got {fail_under}")


def eval_cmd(
    draft: Path,
    target: str,
    engine: str | None,
    steps: int,
    topk: int,
    draft_tokens: int | None,
    prompts: Path | None,
    num_prompts: int | None,
    max_new: int,
    as_json: bool,
    plot: Path | None,
    algorithm: str,
    threads: int,
    device: str = "cpu",
    dtype: str = "float32",
    fail_under: float | None = None,
    prompt_format: str = PROMPT_FORMAT.default,
    runner: str | None = None,
) -> int:
    """Validate everything, load the drafter and the target, build the drafter as the engine version would
    load it, measure, report (with the --fail-under verdict)."""
    from .contract import fail
    from .paths import input_file, output_file
    from .targets import loadable_target

    device, dtype = device.strip().lower(), dtype.strip().lower()
    # --steps unset: 3 for EAGLE-3, the speculators config's speculative_tokens for P-EAGLE, block_size - 1 for DFlash
    # (known once the drafter is read); the gate's bound waits
    validate_eval(
        1 if steps is None else steps,
        topk,
        draft_tokens if steps is not None else None,
        num_prompts,
        max_new,
        threads,
        device,
        dtype,
        None if steps is None else fail_under,
    )
    prompt_format = prompt_format_or_fail(prompt_format)
    if prompts is not None:
        input_file("--prompts", prompts)
    if plot is not None:
        output_file("--plot", plot)
    if runner is not None:
        runner = runner.strip().upper()
        if runner not in RUNNERS:
            fail(f"--model-runner must be one of {', '.join(r.lower() for r in RUNNERS)}, not {runner.lower()!r}")
        if not engine:
            fail("--model-runner says which engine runner to model: pass it with --engine (as trained there is none)")
    load_as = loadable_target(target)
    # the validated options, as the draft-model, EAGLE-1/2 and DFlash paths take them
    opts = dict(steps=steps, topk=topk, draft_tokens=draft_tokens, prompts=prompts, num_prompts=num_prompts, max_new=max_new, plot=plot)
    opts |= dict(as_json=as_json, threads=threads, device=device, dtype=dtype, fail_under=fail_under, prompt_format=prompt_format)
    from .eval_draft import eval_draft_model, plain_draft_or_none

    plain = plain_draft_or_none(draft)  # a plain causal LM: measured as a draft model (method draft_model / STANDALONE)
    if plain is not None:
        return eval_draft_model(plain, draft, target, load_as, engine, opts)
    view = open_drafter(draft)
    fam = view.verdict.family  # its row says how eval drafts it (families/table.py eval_view)
    if runner is not None and not fam.runner_dependent:
        fail(f"--model-runner: only a DFlash2 or DSpark drafter's draft step depends on the runner, not a {fam.title} one")
    if fam.eval_view == "eagle1":
        return eval_eagle1(view, draft, load_as, engine, algorithm, **opts)
    if fam.eval_view == "block":
        return eval_dflash(view, draft, load_as, engine, runner=runner, **opts)
    parallel_view = fam.eval_view == "parallel"  # P-EAGLE: the k tokens in one parallel pass
    if steps is None:
        # 3, or what a speculators-format P-EAGLE config says it drafts (proposal_methods[0].speculative_tokens: the
        # num_speculative_tokens vLLM serves it with, and the line `launch` prints)
        from ..families.eagle import speculators_tokens

        trained = speculators_tokens(view.ckpt.config or {}) if parallel_view else None
        steps = trained or 3
        from .optspec import validate_draft_shape

        validate_draft_shape(steps, topk, draft_tokens)
        check_fail_under(fail_under, steps)
    if parallel_view and topk != 1:
        fail("--topk: P-EAGLE drafts all k tokens in one parallel pass (a chain, topk 1)")
    report, engine_json, findings = engine_view(view, engine)
    if report is not None and report.errors:  # check says the engine raises (L003–L006): nothing to measure
        say_version_findings(findings)
        return report_refusal(refusal(report, findings), engine_json, findings, [], as_json)
    parallel = None
    if parallel_view:  # the masked slots' token and mask_hidden, as this release reads them (before the target is loaded)
        need_ml()  # read as torch tensors
        from ..eval.load import peagle_parallel

        parallel = peagle_parallel(view, report)
        if isinstance(parallel, str):
            say_version_findings(findings)
            return report_refusal(parallel, engine_json, findings, [], as_json)
    torch, device, (model, tok, tpath) = load_for_eval(load_as, findings, threads, device, dtype)
    built = build_engine_drafter(view, model, report, algorithm)
    built.parallel = parallel
    built.model.to(device=device, dtype=getattr(torch, dtype))  # target and drafter in the same precision, as served
    if built.refused:
        return report_refusal(built.refused, engine_json, findings, built.notes, as_json)
    res = measure(model, built, prompts, tok, num_prompts, steps, topk, draft_tokens, max_new, quiet=as_json, prompt_format=prompt_format)
    extra = {
        **({"family": fam.name, "parallel_drafting": True, "pard_token": parallel[0]} if parallel else {}),
        "steps": steps,
        "topk": topk,
        "draft_tokens": draft_tokens or (steps + 1 if topk == 1 else steps * topk + 1),
        "max_new_tokens": max_new,
        "prompt_format": prompt_format,
        "prompts": str(prompts) if prompts else "bundled val.jsonl",
        "aux_boundaries": built.boundaries,
        "fc_skipped": built.skip_fc,
        **run_facts(built.notes, findings, tpath, draft, device, dtype),
    }
    return report_result(
        view.ckpt, draft, tpath, res.to_json(engine_json, extra), engine_json, built.notes, steps, topk, fail_under, plot, as_json
    )


def open_drafter(draft: Path):
    """The drafter described once (view.py), for the guard, check and the model built from it; or a refusal."""
    from ..checkpoint.errors import CheckpointError
    from ..checkpoint.reader import open_checkpoint
    from ..view import read_view
    from .contract import fail
    from .guards import refuse_non_drafter

    try:
        view = read_view(open_checkpoint(draft))
    except CheckpointError as e:
        fail(str(e))
    refuse_non_drafter(view, "eval")
    return view


def eval_dflash(
    view,
    draft,
    load_as,
    engine,
    *,
    steps,
    topk,
    draft_tokens,
    prompts,
    num_prompts,
    max_new,
    as_json,
    plot,
    threads,
    device,
    dtype,
    fail_under,
    prompt_format,
    runner=None,
) -> int:
    """A DFlash, DFlash2 or DSpark drafter: k drafted tokens per verify step, a chain (no tree: the block drafts one
    token per slot), built as trained or as the engine version loads it. DFlash's block is k + 1 tokens (k = --steps,
    default block_size - 1); DSpark's is k tokens from the anchor (default k = block_size, vLLM's
    num_speculative_tokens default for method dspark), then its Markov walk."""
    from ..families.dflash import geometry
    from .contract import fail

    anchored = view.verdict.family.block_from_anchor  # DSpark: its block predicts from the anchor
    cfg = view.ckpt.config or {}
    block = geometry(view.ckpt)["block_size"] or (cfg.get("dspark_block_size") if anchored else None)
    if steps is None:
        if not block or int(block) < 2:
            fail(f"the {view.verdict.family.title} config gives no block_size ≥ 2: pass --steps (draft tokens per verify step)")
        steps = int(block) if anchored else int(block) - 1
    if topk != 1:
        fail(f"--topk: a {view.verdict.family.title} block drafts one token per slot (a chain); tree drafting is EAGLE's")
    if draft_tokens is not None and draft_tokens != steps + 1:
        fail(f"--draft-tokens {draft_tokens}: a {view.verdict.family.title} step verifies steps + 1 = {steps + 1} tokens")
    check_fail_under(fail_under, steps)
    report, engine_json, findings = engine_view(view, engine)
    if report is not None and report.errors:
        say_version_findings(findings)
        return report_refusal(refusal(report, findings), engine_json, findings, [], as_json)
    torch, device, (model, tok, tpath) = load_for_eval(load_as, findings, threads, device, dtype)
    from ..eval.load import build_dflash

    try:
        built = build_dflash(view, model, report, runner=runner)
    except (NotImplementedError, ValueError) as e:  # a config eval does not model; a mask_embedding.pt that disagrees
        fail(str(e))
    if built.refused:
        return report_refusal(built.refused, engine_json, findings, built.notes, as_json)
    length = steps if built.model.c.sample_from_anchor else steps + 1  # DSpark's block starts predicting at the anchor
    if block and length > int(block):
        built.notes.append(f"--steps {steps}: a block of {length} tokens, longer than the {block} the drafter was trained with")
    built.model.to(device=device, dtype=getattr(torch, dtype))
    res = measure(model, built, prompts, tok, num_prompts, steps, 1, None, max_new, quiet=as_json, prompt_format=prompt_format)
    extra = {
        "family": view.verdict.family.name,
        "candidate_selector": built.model.use_selector if built.model.candidate_selector is not None else None,
        "markov_head": (
            (f"top-{built.model.c.markov_topk}" if built.model.c.markov_topk is not None else "dense")
            if built.model.markov_head is not None
            else None
        ),
        "confidence_head": built.model.confidence_head is not None if anchored else None,
        "steps": steps,
        "topk": 1,
        "draft_tokens": steps + 1,
        "block_size": block,
        "max_new_tokens": max_new,
        "prompt_format": prompt_format,
        "prompts": str(prompts) if prompts else "bundled val.jsonl",
        "aux_boundaries": built.boundaries,
        "mask_token_id": built.model.c.mask_token_id,
        **run_facts(built.notes, findings, tpath, draft, device, dtype),
    }
    return report_result(
        view.ckpt, draft, tpath, res.to_json(engine_json, extra), engine_json, built.notes, steps, 1, fail_under, plot, as_json
    )


def eval_eagle1(
    view,
    draft,
    load_as,
    engine,
    algorithm,
    *,
    steps,
    topk,
    draft_tokens,
    prompts,
    num_prompts,
    max_new,
    as_json,
    plot,
    threads,
    device,
    dtype,
    fail_under,
    prompt_format,
) -> int:
    """An EAGLE-1/2 drafter: a chain of k = --steps tokens per verify step (default 3), fed the target's last hidden
    state, built as trained or as the engine version loads it (check's load report)."""
    from .contract import fail

    steps = 3 if steps is None else steps
    if topk != 1:
        fail("--topk: eval drafts EAGLE-1/2 drafters as chains (topk 1); tree drafting is modelled for EAGLE-3 only")
    if draft_tokens is not None and draft_tokens != steps + 1:
        fail(f"--draft-tokens {draft_tokens}: a chain of {steps} verifies steps + 1 = {steps + 1} tokens")
    if algorithm.upper() not in ("EAGLE3", "EAGLE"):  # EAGLE3 is the option's default: an EAGLE-1/2 drafter runs as EAGLE
        fail(f"--algorithm {algorithm}: an EAGLE-1/2 drafter is run with the EAGLE algorithm")
    check_fail_under(fail_under, steps)
    report, engine_json, findings = engine_view(view, engine)
    if report is not None and report.errors:
        say_version_findings(findings)
        return report_refusal(refusal(report, findings), engine_json, findings, [], as_json)
    torch, device, (model, tok, tpath) = load_for_eval(load_as, findings, threads, device, dtype)
    from ..eval.load import build_eagle1

    built = build_eagle1(view, model, report)
    if built.refused:
        return report_refusal(built.refused, engine_json, findings, built.notes, as_json)
    built.model.to(device=device, dtype=getattr(torch, dtype))
    res = measure(model, built, prompts, tok, num_prompts, steps, 1, None, max_new, quiet=as_json, prompt_format=prompt_format)
    extra = {
        "family": view.verdict.family.name,
        "steps": steps,
        "topk": 1,
        "draft_tokens": steps + 1,
        "max_new_tokens": max_new,
        "prompt_format": prompt_format,
        "prompts": str(prompts) if prompts else "bundled val.jsonl",
        "feature": "the target's last hidden state (after its final norm)",
        "fc_bias_applied": built.model.fc.bias is not None,
        **run_facts(built.notes, findings, tpath, draft, device, dtype),
    }
    return report_result(
        view.ckpt, draft, tpath, res.to_json(engine_json, extra), engine_json, built.notes, steps, 1, fail_under, plot, as_json
    )


def need_ml() -> None:
    """Refuse (exit 2, naming the extra) when torch is not installed: eval measures with the models themselves."""
    from importlib.util import find_spec

    from .contract import fail

    if find_spec("torch") is None:
        fail(ML_MISSING)


ML_MISSING = "eval needs torch and transformers: pip install 'specbridge[ml]' (torch==2.13.0)"


def load_for_eval(load_as: str, findings: list, threads: int, device: str, dtype: str):
    """(torch, the device picked, the target's (model, tokenizer, path)), the engine-version warnings said first."""
    from .contract import fail

    try:
        import torch
    except ImportError:
        return fail(ML_MISSING)
    say_version_findings(findings)
    torch.set_num_threads(threads)
    device = pick_device(torch, device)
    return torch, device, load_target_or_fail(load_as, getattr(torch, dtype), device)


def engine_view(view, engine: str | None) -> tuple:
    """(the engine version's simulated load, its JSON summary, check's findings for it) — the very run
    `check --engine` makes, so eval and check agree — or (None, None, []) for the drafter as trained."""
    if not engine:
        return None, None, []
    from ..engines.registry import EngineSpecError, resolve
    from ..rules.check import check
    from .contract import fail

    try:
        places = resolve(engine)
    except (EngineSpecError, ValueError) as e:
        fail(str(e))
    if len(places) != 1:
        fail(f"--engine {engine} names {len(places)} engine versions; eval answers for one (NAME==VERSION)")
    family = view.verdict.family  # a DFlash drafter is checked as DFlash (the engine's DFlash row), as `check` does
    try:
        results = check(view, engine, family=family)
    except EngineSpecError as e:  # NotModelled: no row models this family on that engine or release
        fail(str(e))
    if not results:
        fail(f"--engine {engine}: specbridge models no {family.title} loading for this engine (see specbridge engines)")
    [res] = results
    report = res.report
    summary = {
        "name": report.engine,
        "version": report.version,
        "era": report.era.name,
        "class": report.cls.name,
        "dropped": report.dropped,
        "missing": report.missing,
        "errors": report.errors,
    }
    return report, summary, res.findings


def say_version_findings(findings: list) -> None:
    """The engine-version warnings (R001, R003, R004: a release not read) on stderr, as launch says them."""
    for f in findings:
        if f.code.startswith("R") and f.severity == "warning":
            sys.stderr.write(f"{f.code} warning: {f.message}\n")


def refusal(report, findings: list) -> str:
    """Why the engine would not serve the drafter, naming the codes check reports for it."""
    from ..rules.findings import ERROR
    from ..rules.load import ENGINE_RAISES_CODES

    codes = sorted({f.code for f in findings if f.severity == ERROR and f.code in ENGINE_RAISES_CODES})
    named = f" ({', '.join(codes)})" if codes else ""
    return f"{report.engine} {report.version} refuses to load it{named}: {report.errors[0]}"


def build_engine_drafter(view, model, report, algorithm: str):
    from ..eval.load import build_drafter

    text = model.config.get_text_config()
    arch = (model.config.architectures or [None])[0]
    return build_drafter(view, model, text.num_hidden_layers, report, arch, text.model_type, algorithm)


def measure(
    model,
    built,
    prompts: Path | None,
    tok,
    num_prompts: int | None,
    steps: int,
    topk: int,
    draft_tokens: int | None,
    max_new: int,
    quiet: bool,
    prompt_format: str = PROMPT_FORMAT.default,
):
    """The prompts through the target and the drafter (a progress bar on a terminal)."""
    from rich.progress import Progress

    from ..eval.run import evaluate, load_prompts
    from .contract import fail

    try:
        ids = load_prompts(prompts, tok, num_prompts, prompt_format)
    except (OSError, ValueError) as e:
        fail(f"prompts: {e}")
    with Progress(transient=True, disable=quiet or not sys.stderr.isatty()) as prog:
        task = prog.add_task("prompts", total=len(ids))
        from ..eval.load import BuiltEagle1

        if isinstance(built, BuiltEagle1):
            from ..eval.run import evaluate_eagle1

            return evaluate_eagle1(
                model,
                built.model,
                ids,
                k=steps,
                max_new=max_new,
                eos_id=tok.eos_token_id if tok is not None else None,
                progress=lambda: prog.advance(task),
            )
        if hasattr(built, "block_size"):  # a DFlash drafter (eval.load.BuiltDFlash)
            from ..eval.run import evaluate_dflash

            return evaluate_dflash(
                model,
                built.model,
                ids,
                built.boundaries,
                k=steps,
                max_new=max_new,
                eos_id=tok.eos_token_id if tok is not None else None,
                progress=lambda: prog.advance(task),
            )
        return evaluate(
            model,
            built.model,
            ids,
            built.boundaries,
            steps=steps,
            topk=topk,
            draft_tokens=draft_tokens,
            max_new=max_new,
            skip_fc=built.skip_fc,
            eos_id=tok.eos_token_id if tok is not None else None,
            progress=lambda: prog.advance(task),
            parallel=getattr(built, "parallel", None),
        )


def register(app: typer.Typer) -> None:
    @app.command("eval")
    def eval_(
        path: str = path_argument("drafter checkpoint (any layout)"),
        target: str = typer.Option(..., "--target", "-t", help="target model dir, or smollm2-135m"),
        engine: Optional[str] = typer.Option(None, "--engine", "-e", help="predict as NAME==VERSION would load the drafter"),
        steps: Optional[int] = number_param(
            "--steps",
            None,
            "-k",
            help="draft depth: draft tokens per step (vLLM num_speculative_tokens, SGLang --speculative-num-steps); "
            "default 3, for DFlash block_size - 1",
        ),
        topk: int = number_param("--topk", 1, help="tree drafting when > 1"),
        draft_tokens: Optional[int] = number_param("--draft-tokens", None, help="tree node budget (SGLang --speculative-num-draft-tokens)"),
        prompts: Optional[Path] = shared_param(PROMPTS),
        prompt_format: str = shared_param(PROMPT_FORMAT),
        num_prompts: Optional[int] = number_param("--num-prompts", None, help="use the first N prompts"),
        max_new: int = shared_param(MAX_NEW),
        as_json: bool = FLAG("--json", help="print one JSON object (docs/ci.md)"),
        plot: Optional[Path] = typer.Option(None, "--plot", help="write a PNG"),
        algorithm: str = typer.Option("EAGLE3", "--algorithm", help="the engine's speculative algorithm (EAGLE skips aux capture)"),
        threads: int = number_param(
            "--threads", int(os.environ.get("SPECBRIDGE_THREADS", "1")), help="torch threads (1 is fastest on small CPUs)"
        ),
        device: str = typer.Option("cpu", "--device", help="cpu, cuda or auto (cuda when torch sees one)"),
        dtype: str = typer.Option("float32", "--dtype", help="float32, bfloat16 or float16, for target and drafter"),
        fail_under: Optional[float] = number_param(
            "--fail-under", None, help="exit 1 when the mean accept length is below this (a CI gate)"
        ),
        model_runner: Optional[str] = typer.Option(
            None,
            "--model-runner",
            help="with --engine vllm==X and a DFlash2 or DSpark drafter: v1 or v2 (default: the runner the engine row says "
            "runs the candidate selector / the DSpark speculator on)",
        ),
    ) -> None:
        """Offline acceptance: mean accept length, per position, per prompt — also as an engine version would load it."""
        raise typer.Exit(
            eval_cmd(
                path,
                target,
                engine,
                steps,
                topk,
                draft_tokens,
                prompts,
                num_prompts,
                max_new,
                as_json,
                plot,
                algorithm,
                threads,
                device,
                dtype,
                fail_under,
                prompt_format,
                model_runner,
            )
        )
