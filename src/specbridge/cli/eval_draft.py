"""`eval DRAFT --target TARGET` where DRAFT is a plain causal LM (a draft model for vLLM `method: draft_model` /
SGLang `STANDALONE`): the acceptance measured by eval/draft_model.py, with check's T findings for the engine version
named (the same run `check DRAFT --target TARGET --engine …` makes) in the output."""

from __future__ import annotations

from pathlib import Path

from .contract import fail
from .eval_common import load_target_or_fail, pick_device, report_refusal, report_result, run_facts


def plain_draft_or_none(draft: Path):
    """The checkpoint's view when it is a plain causal LM, else None (eval reads it as a drafter)."""
    from ..checkpoint.errors import CheckpointError
    from ..checkpoint.reader import open_checkpoint
    from ..view import read_view

    try:
        view = read_view(open_checkpoint(draft))
    except CheckpointError:
        return None  # open_drafter says why
    fam = view.verdict.family
    return view if fam is not None and fam.checker == "draft_model" else None


def eval_draft_model(view, draft: Path, target: str, load_as: str, engine: str | None, o: dict) -> int:
    """Measure; `o` holds eval's validated options (steps, topk, draft_tokens, prompts, num_prompts, max_new, as_json,
    plot, threads, device, dtype, fail_under, prompt_format)."""
    from .draft_check import draft_results
    from .targets import open_target_arg

    steps = 3 if o["steps"] is None else o["steps"]  # --steps unset: vLLM's and SGLang's usual draft length
    if o["topk"] != 1:
        fail("a plain draft model drafts chains (vLLM's draft_model proposer): measure it with --topk 1")
    findings, engine_json = [], None
    if engine:
        from ..engines.registry import EngineSpecError

        try:
            results, _, _ = draft_results(view, open_target_arg(target), engine)
        except (EngineSpecError, ValueError) as e:
            fail(str(e))
        if len(results) != 1:
            fail(f"--engine {engine} names {len(results)} engine versions; eval answers for one (NAME==VERSION)")
        [res] = results
        findings, row = res.findings, res.place.row
        engine_json = {"name": res.place.engine, "version": res.place.version, "method": row.method if row else None}
        refused = [f for f in findings if f.code == "T001" and f.severity == "error"]
        if refused:
            return report_refusal(refused[0].message, engine_json, findings, [], o["as_json"])
    try:
        import torch
        from transformers import AutoModelForCausalLM
    except ImportError:
        return fail("eval needs torch and transformers: pip install 'specbridge[ml]' (torch==2.13.0)")
    from ..eval.draft_model import evaluate_draft_model
    from ..eval.run import load_prompts

    torch.set_num_threads(o["threads"])
    device = pick_device(torch, o["device"])
    dtype = getattr(torch, o["dtype"])
    model, tok, tpath = load_target_or_fail(load_as, dtype, device)
    dm = AutoModelForCausalLM.from_pretrained(view.ckpt.root, dtype=dtype).to(device).eval()
    try:
        ids = load_prompts(o["prompts"], tok, o["num_prompts"], o["prompt_format"])
    except (OSError, ValueError) as e:
        fail(f"prompts: {e}")
    eos = tok.eos_token_id if tok is not None else None
    res = evaluate_draft_model(model, dm, ids, steps=steps, max_new=o["max_new"], eos_id=eos)
    extra = {
        "family": "causal_lm",
        "steps": steps,
        "topk": 1,
        "draft_tokens": steps + 1,
        "max_new_tokens": o["max_new"],
        "prompt_format": o["prompt_format"],
        "prompts": str(o["prompts"]) if o["prompts"] else "bundled val.jsonl",
        **run_facts([], findings, tpath, draft, device, o["dtype"]),
    }
    out = res.to_json(engine_json, extra)
    return report_result(view.ckpt, draft, tpath, out, engine_json, [], steps, 1, o["fail_under"], o["plot"], o["as_json"])
