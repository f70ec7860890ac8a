"""What every eval path shares: the drafter's eval (eval_cmd.py) and a plain draft model's (eval_draft.py) pick the
device and load the target the same way, and report the same JSON keys, summary, plot and --fail-under verdict.

Its own leaf so that eval_cmd.py, which dispatches a plain draft model to eval_draft.py, and eval_draft.py both
import it from below instead of from each other. torch, transformers, rich and matplotlib stay imported inside
the functions that need them: `eval --help` and a refusal at the door load none of them."""

from __future__ import annotations

import sys
from pathlib import Path


def pick_device(torch, device: str) -> str:
    from .contract import fail

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        fail("--device cuda but torch sees no CUDA device (this torch build or machine has none); use --device cpu")
    return device


def load_target_or_fail(target: str, torch_dtype, device: str):
    from ..model.target import load_target
    from .contract import fail

    try:
        return load_target(target, dtype=torch_dtype, device=device)
    except (FileNotFoundError, RuntimeError) as e:
        fail(str(e))


def run_facts(notes: list[str], findings: list, tpath, draft, device: str, dtype: str) -> dict:
    """The last keys of every eval's JSON: the notes, check's findings, and what ran where."""
    return {
        "notes": notes,
        "findings": [f.to_json() for f in findings],
        "target": str(tpath),
        "draft": str(draft),
        "device": device,
        "dtype": dtype,
    }


def report_refusal(refused: str, engine_json: dict | None, findings: list, notes: list[str], as_json: bool) -> int:
    """The engine would not serve this drafter at all: said, exit 1."""
    from .contract import EXIT_FINDINGS, print_json

    if as_json:
        print_json(
            "eval",
            {
                "ok": False,
                "mean_accept_length": None,
                "per_position": [],
                "per_prompt": [],
                "num_prompts": 0,
                "engine": engine_json,
                "refused": refused,
                "notes": notes,
                "findings": [f.to_json() for f in findings],
            },
        )
    else:
        sys.stdout.write(f"predicted: the engine would not serve this drafter — {refused}\n")
    return EXIT_FINDINGS


def report_result(
    ck,
    draft,
    tpath,
    out: dict,
    engine_json: dict | None,
    notes: list[str],
    steps: int,
    topk: int,
    fail_under: float | None,
    plot: Path | None,
    as_json: bool,
) -> int:
    """JSON or the human summary, the plot, and the --fail-under verdict as the exit code."""
    from ..checkpoint.hubref import hub_sources
    from .contract import print_json

    mal = out["mean_accept_length"]
    ok = fail_under is None or mal >= fail_under
    out = {"ok": ok, "fail_under": fail_under, **out, **hub_sources(ck.hub)}  # the drafter's commit, for a Hub id
    if plot:
        try:
            _plot(out, plot)
        except (OSError, RuntimeError, ValueError) as e:  # checked at the door; what changed since is still one line
            from .contract import fail

            fail(f"--plot {plot}: cannot write: {getattr(e, 'strerror', None) or e}")
    if as_json:
        print_json("eval", out)
        return 0 if ok else 1
    from rich.console import Console

    c = Console(highlight=False, emoji=False)
    # a Hub drafter is named org/name@commit: the human summary says which commit was measured
    print_summary(c, out, ck.root if ck.hub is not None else draft, tpath, engine_json, steps, topk, notes)
    if fail_under is not None:
        c.print(f"gate: mean accept length {mal:.3f} {'≥' if ok else '<'} --fail-under {fail_under}: {'ok' if ok else '[bold red]FAIL[/]'}")
    return 0 if ok else 1


def print_summary(c, out: dict, draft, tpath, engine_json: dict | None, steps: int, topk: int, notes: list[str]) -> None:
    """The human summary of one eval, on rich console `c`. The drafter and target paths, the engine's
    name and the notes (which quote config values) are escaped: a `[/]` in any of them prints as written."""
    from rich.table import Table

    from ..display import markup_safe as esc

    where = f" as {esc(engine_json['name'])} {esc(engine_json['version'])} loads it" if engine_json else " (as trained)"
    c.print(
        f"[bold]{esc(draft)}[/] on {esc(tpath)}{where}: mean accept length [bold]{out['mean_accept_length']:.3f}[/] "
        f"over {out['num_prompts']} prompts ({out['drafts']} drafts, k={steps}, topk={topk}); draft acceptance rate {out['draft_acceptance_rate']:.1%}"
    )
    for n in notes:
        c.print(f"  note: {esc(n)}")
    t = Table(title="per position (accepted / drafts)")
    for j in range(len(out["per_position"])):
        t.add_column(f"pos {j}")
    t.add_row(*[f"{x:.3f}" for x in out["per_position"]])
    c.print(t)
    pp = sorted(out["per_prompt"])
    c.print(f"per prompt: min {pp[0]:.2f}, median {pp[len(pp) // 2]:.2f}, max {pp[-1]:.2f}")
    if out["mean_accept_length"] <= 1.0 + 1e-9:
        c.print(
            "[bold red]accept length 1.00: nothing is ever accepted — a loader or config bug, not a weak drafter (run specbridge check)[/]"
        )


def _plot(out: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..display import plot_safe

    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.5))
    a.bar(range(len(out["per_position"])), out["per_position"])
    a.set_xlabel("draft position")
    a.set_ylabel("acceptance rate")
    a.set_ylim(0, 1)
    a.set_title(f"mean accept length {out['mean_accept_length']:.2f}")
    if out.get("draft"):  # paths are the user's text: `$` would start mathtext
        fig.suptitle(plot_safe(f"{out['draft']} on {out.get('target', '?')}"), fontsize=9)
    b.hist(out["per_prompt"], bins=20)
    b.set_xlabel("accept length per prompt")
    b.set_ylabel("prompts")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
