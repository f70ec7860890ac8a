"""`check DRAFT --target TARGET` for a plain draft model (a small causal LM: vLLM `method: draft_model`, SGLang
`STANDALONE`): the tokenizer comparison read once (rules/draft_model.py Tokens), the checkpoint-wide T rules once,
the engine T rules once per engine version with its draft-model row (engines/*.py DRAFT_MODEL). Header-only."""

from __future__ import annotations

import sys
from pathlib import Path

from ..record import replace
from .contract import CliError, print_json


class PlainDraft:
    """check's answer when the verdict is a plain causal LM: check it as a draft model against --target (what
    check_draft is handed: the view read once, the target, the engines, the launch line)."""

    def __init__(self, view, target, specs, launch=None):
        self.view, self.target, self.specs, self.launch = view, target, specs, launch


class DraftResult:
    """One engine version's answer for a plain draft model."""

    def __init__(self, place, findings):
        self.place, self.findings = place, findings

    @property
    def ok(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)

    def to_json(self) -> dict:
        p, r = self.place, self.place.row
        return {
            "ok": self.ok,
            "engine": {"name": p.engine, "version": p.version},
            "placed": p.how,
            "range": None if r is None else f"{r.first}–{r.last}" if r.last else f"{r.first}+",
            "method": r.method if r else None,
            "source": r.cite if r else None,
            "findings": [f.to_json() for f in self.findings],
        }


def tokens_for(view, target):
    """The draft's and target's tokenizer facts (the target's from the directory of its config.json; none for a
    Hub id, whose tokenizer files are not fetched)."""
    from ..checkpoint.tokenizer import read_tokenizer_facts
    from ..rules.draft_model import Tokens

    ckpt = view.ckpt
    if ckpt.hub is not None or not Path(ckpt.root).is_dir():
        raise CliError(f"{ckpt.root}: a plain draft model is compared file by file: give its local directory")
    tdir = Path(target.path)
    tfacts = read_tokenizer_facts(tdir) if target.hub is None and tdir.is_dir() else None

    def rows(*names):
        t = next((ckpt.tensors[n] for n in names if n in ckpt.tensors), None)
        return t.shape[0] if t is not None and t.shape else None

    return Tokens(
        draft=read_tokenizer_facts(Path(ckpt.root)),
        target=tfacts,
        target_vocab=target.vocab_size,
        target_max_positions=target.max_position_embeddings,
        embed_rows=rows("model.embed_tokens.weight", "embed_tokens.weight"),
        head_rows=rows("lm_head.weight"),
    )


def draft_results(view, target, specs, launch=None) -> tuple[list[DraftResult], list[str], object]:
    """(one result per engine version, engines not checked, the tokenizer comparison); `launch`: the launch line the
    engine rules read (L014, L015)."""
    from ..engines.registry import draft_model_places
    from ..rules.context import Context
    from ..rules.registry import CHECKPOINT, ENGINE, in_catalogue_order, run

    places, skipped = draft_model_places(specs)
    tokens = tokens_for(view, target)
    base = Context(view, target=target, launch=launch, path=str(view.ckpt.root), family="causal_lm", tokens=tokens)
    shared = run(CHECKPOINT, base)
    out = [DraftResult(p, in_catalogue_order(shared + run(ENGINE, replace(base, draft_place=p)))) for p in places]
    return out, skipped, tokens


def check_draft(e: PlainDraft, as_json: bool, failing_codes: set[str], ignored_codes: set[str]) -> int:
    from .gate import gate

    view = e.view
    if e.target is None:  # a target passed by mistake, or a draft model without the target it drafts for
        from .guards import full_lm_reason

        why = full_lm_reason(view.ckpt, view.drafter) or f"a plain causal LM ({'; '.join(view.verdict.evidence)})"
        raise CliError(
            f"{view.ckpt.root}: looks like {why}; pass a drafter here (and a target as --target), or, to check it as a plain "
            "draft model (vLLM method draft_model, SGLang STANDALONE), pass its target as --target"
        )
    results, skipped, tokens = draft_results(view, e.target, e.specs, launch=e.launch)
    for line in skipped:
        sys.stderr.write(f"note: {line}\n")
    failing = gate(results, failing_codes, ignored_codes)
    ok = not failing
    if as_json:
        policy = {"fail_on": sorted(failing_codes), "ignore": sorted(ignored_codes), "failing": failing}
        body = {"ok": ok, "gate": policy, "family": view.verdict.to_json(), "draft_model": tokens.to_json()}
        body |= {"results": [r.to_json() for r in results], "not_checked": skipped}
        print_json("check", body)
        return 0 if ok else 1
    _print(view, e.target, results, tokens, ok, failing)
    return 0 if ok else 1


def _print(view, target, results, tokens, ok: bool, failing: list[str]) -> None:
    from ..rules.findings import Finding
    from .console import make_console
    from .report import print_finding, verdict_markup

    c = make_console()
    from ..display import markup_safe as escape

    c.print(f"[bold]{escape(str(view.ckpt.root))}[/]  plain draft model for [bold]{escape(str(target.path))}[/]: {verdict_markup(ok)}")
    j = tokens.to_json()
    tm, vs = j["token_map"], j["vocab_size"]
    same = "equal" if tm["equal"] else "not compared" if tm["equal"] is None else f"{tm['differing_ids']} ids differ"
    c.print(
        f"vocab {vs['draft']} vs {vs['target']}; token map ({tm['draft_entries']} vs {tm['target_entries']} entries): {same}; "
        f"max positions {j['max_position_embeddings']['draft']} vs {j['max_position_embeddings']['target']}"
    )
    for r in results:
        row = r.place.row
        if row is None:
            how = "older than every release read"
        else:
            how = f"{row.method or 'no draft-model method'} ({row.first}–{row.last or ''})"
        c.print(f"  {r.place.engine} {escape(r.place.version)}: {escape(how)}: {'ok' if r.ok else '[red]NOT OK[/]'}")
    # each finding once, the engine versions it holds for in brackets (a message naming its version says "the engine")
    groups: dict[tuple, list] = {}
    for r in results:
        here = f"{r.place.engine} {r.place.version}"
        for f in r.findings:
            groups.setdefault((f.code, f.severity, f.message.replace(here, "the engine"), f.fix), []).append(r.place)
    fixes_shown: dict[str, str] = {}
    for sev in ("error", "warning", "info"):
        for (code, severity, message, fix), places in groups.items():
            if severity == sev:
                where = "" if len(places) == len(results) else _versions(places)
                print_finding(c, Finding(code, severity, message, fix), where, fixes_shown)
    if ok != all(r.ok for r in results):
        c.print(f"gate: {'failing on ' + ', '.join(failing) if failing else 'errors ignored by --ignore'}")


def _versions(places) -> str:
    by: dict[str, list[str]] = {}
    for p in places:
        by.setdefault(p.engine, []).append(p.version)
    return "; ".join(f"{e} {', '.join(v)}" for e, v in by.items())


def draft_model_launch(view, engine: str, drafter: str, served: str, target, steps, topk, draft_tokens) -> tuple[str, DraftResult]:
    """(command line, check's result on it) for a plain draft model: the engine's `families['draft_model']` line with
    the method the release's DRAFT_MODEL row names (vLLM draft_model, SGLang STANDALONE); a release without one is
    refused with what it says instead (exit 1)."""
    from ..engines.launch import build_launch, family_steps, parse_launch
    from ..engines.registry import LAUNCHERS, draft_model_places
    from .optspec import validate_draft_shape

    if target is None:
        raise CliError("a plain draft model's launch line is checked against its target's tokenizer: give the target's directory")
    places, _ = draft_model_places(engine)
    if len(places) != 1:
        raise CliError(f"--engine {engine} names {len(places)} draft-model release ranges; a launch command is for one")
    place = places[0]
    if place.row is None or not place.row.method:
        why = place.row.refusal if place.row is not None else "older than every release read"
        raise CliError(f"{place.engine} {place.version} serves no plain draft model: {why}", 1)
    fam = LAUNCHERS[place.engine].families["draft_model"]
    if topk not in (None, 1) and not fam.tree:
        raise CliError(f"a plain draft model drafts one chain on {place.engine}, not a tree: drop --topk {topk}")
    steps = family_steps(place.engine, "draft_model", None) if steps is None else steps
    topk = 1 if topk is None else topk
    validate_draft_shape(steps, topk, draft_tokens)
    cmd = build_launch(place.engine, served, drafter, steps, topk, draft_tokens, family="draft_model", method=place.row.method)
    results, _, _ = draft_results(view, target, f"{place.engine}=={place.version}", launch=parse_launch(cmd))
    return cmd, results[0]
