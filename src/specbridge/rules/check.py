"""`check`: simulate each requested engine version and collect findings, in the stable JSON shape."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..checkpoint.reader import Checkpoint
from ..engines.registry import resolve
from ..engines.simulate import LoadReport, simulate
from ..layouts.canonical import Drafter, describe
from .findings import ERROR, Finding
from .load import load_findings


@dataclass
class CheckResult:
    drafter: Drafter
    report: LoadReport
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(f.severity == ERROR for f in self.findings)

    def to_json(self) -> dict:
        r = self.report
        return {
            "ok": self.ok,
            "engine": {"name": r.engine, "version": r.version},
            "layout": self.drafter.layout,
            "load": {
                "dropped": r.dropped,
                "missing": r.missing,
                "mismatched": r.mismatched,
                "errors": r.errors,
            },
            "findings": [f.to_json() for f in self.findings],
            # extensions beyond the stable contract: the full accounting
            "era": r.era.name,
            "class": r.cls.name,
            "tensors": [
                {"name": t.name, "status": t.status, "engine_name": t.engine_name, "shard": t.shard, "reason": t.reason}
                for t in r.tensors
            ],
            "parameters": [
                {"name": p.name, "shape": list(p.shape) if p.shape else None, "status": p.status, "filled_by": p.filled_by}
                for p in r.params
            ],
            "assumptions": r.assumptions,
        }


def check(ckpt: Checkpoint, engine: str, path_label: str | None = None, extra_rules=None) -> list[CheckResult]:
    drafter = describe(ckpt)
    dtypes = {n: t.dtype for n, t in ckpt.tensors.items()}
    out = []
    for era, version in resolve(engine):
        rep = simulate(ckpt, era, version)
        res = CheckResult(drafter, rep, load_findings(rep, path_label or str(ckpt.root), dtypes))
        if extra_rules:
            res.findings.extend(extra_rules(drafter, rep))
        out.append(res)
    return out
