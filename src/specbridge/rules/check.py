"""`check`: simulate each requested engine version and collect findings, in the stable JSON shape."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..checkpoint.reader import Checkpoint
from ..engines.registry import Placement, resolve
from ..engines.simulate import LoadReport, simulate
from ..layouts.canonical import Drafter, describe
from ..layouts.embedding import embed_stats
from .context import Context
from .findings import ERROR, Finding
from .registry import CHECKPOINT, ENGINE, in_catalogue_order, run


@dataclass
class CheckResult:
    drafter: Drafter
    report: LoadReport
    findings: list[Finding] = field(default_factory=list)
    aux: dict | None = None  # resolved aux layers (with a target)
    place: Placement | None = None  # how the version was asked for (`--engine all`: one release standing for its era)

    @property
    def ok(self) -> bool:
        return not any(f.severity == ERROR for f in self.findings)

    def to_json(self) -> dict:
        r = self.report
        return {
            "ok": self.ok,
            "engine": {"name": r.engine, "version": r.version},
            "layout": self.drafter.layout,
            "layout_candidates": self.drafter.layout_candidates,  # more than one: the evidence fits several producers
            "load": {
                "dropped": r.dropped,  # silently lost
                "ignored_by_design": r.ignored_by_design,  # consumed on purpose (t2d) or replaced by the target's
                "missing": r.missing,
                "mismatched": r.mismatched,
                "errors": r.errors,
            },
            "findings": [f.to_json() for f in self.findings],
            # extensions beyond the stable contract: the full accounting
            "era": r.era.name,
            "class": r.cls.name,
            "tensors": [
                {"name": t.name, "status": t.status, "engine_name": t.engine_name, "shard": t.shard, "reason": t.reason} for t in r.tensors
            ],
            "parameters": [
                {"name": p.name, "shape": list(p.shape) if p.shape else None, "status": p.status, "filled_by": p.filled_by}
                for p in r.params
            ],
            "assumptions": r.assumptions,
            "aux_layers": self.aux,
        }


def check(ckpt: Checkpoint, engine: str, path_label: str | None = None, target=None, launch=None, parent=None) -> list[CheckResult]:
    """Simulate each engine version's load, then run the rule registry: the rules that name no engine
    once per checkpoint (reading a 1.6 M-entry t2d or sampling the embedding once, not per era), the
    others once per engine version."""
    drafter = describe(ckpt)
    base = Context(
        ckpt, drafter, target=target, launch=launch, path=path_label or str(ckpt.root), parent=parent, embed=embed_stats(drafter, target)
    )
    shared = run(CHECKPOINT, base)
    out = []
    for place in resolve(engine):
        ctx = replace(base, rep=simulate(ckpt, place.era, place.version), place=place)
        findings = in_catalogue_order(shared + run(ENGINE, ctx))
        out.append(CheckResult(drafter, ctx.rep, findings, ctx.aux.table() if ctx.aux else None, place))
    return out
