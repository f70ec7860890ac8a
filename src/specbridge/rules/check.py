"""`check`: simulate each requested engine version and collect findings, in the stable JSON shape."""

from __future__ import annotations

from ..engines.registry import NotModelled, Placement, family_builds, family_era, family_name, family_rows, placements, resolve
from ..engines.simulate import LoadReport, simulate
from ..engines.spec import parse_version
from ..layouts.canonical import Drafter
from ..layouts.embedding import embed_stats
from ..record import field, record, replace
from ..view import CheckpointView
from .context import Context
from .findings import ERROR, Finding
from .registry import CHECKPOINT, ENGINE, in_catalogue_order, run


@record(frozen=False)
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


def check(
    view: CheckpointView, engine: str, path_label: str | None = None, target=None, launch=None, parent=None, family=None
) -> list[CheckResult]:
    """Simulate each engine version's load, then run the rule registry: the rules that name no engine
    once per checkpoint (reading a 1.6 M-entry t2d or sampling the embedding once, not per era), the
    others once per engine version. `view` (view.read_view) is the checkpoint described once; `family`
    other than EAGLE-3 checks it as that family (check_family)."""
    if family is not None and family.checker != "eras":
        return check_family(view, engine, family, path_label, target=target, launch=launch)[0]
    ckpt, drafter = view.ckpt, view.drafter
    base = Context(view, target=target, launch=launch, path=path_label or str(ckpt.root), parent=parent, embed=embed_stats(drafter, target))
    shared = run(CHECKPOINT, base)
    out = []
    for place in resolve(engine):
        ctx = replace(base, rep=simulate(view, place.era, place.version), place=place)
        findings = in_catalogue_order(shared + run(ENGINE, ctx))
        out.append(CheckResult(drafter, ctx.rep, findings, ctx.aux.table() if ctx.aux else None, place))
    return out


# where a target config names its routed experts (vLLM's ModelConfig.is_moe: get_num_experts() > 0)
TARGET_EXPERT_KEYS = ("n_routed_experts", "num_experts", "num_local_experts", "moe_num_experts")


def check_family(
    view: CheckpointView, engine: str, family, path_label: str | None = None, target=None, launch=None, mtp=None
) -> tuple[list[CheckResult], list[str]]:
    """`check` for a drafter of a family other than EAGLE-3 (families/table.py): each requested engine version
    is answered by that engine's row for the family (engines/*.py FAMILY_RANGES), with the rules that hold for
    every family (load simulation, version placement). Returns the results and a line per engine skipped
    because no row models the family there. An engine version whose release has no class for the family is
    answered with the class of the first release that has one, not dispatched (L005 says which release)."""
    places, skipped = placements(engine, family.name, family.title, view.drafter.architecture)
    # its family, not an EAGLE-3 producer layout (a copy: the view's description stays as described)
    drafter = replace(view.drafter, layout=family.name, layout_candidates=[family.name])
    view = replace(view, drafter=drafter)
    if target is not None and target.vocab_size:  # the rows that compare vocabularies with the target's read it
        view = replace(view, facts={**view.facts, "Vt": target.vocab_size})
    if target is not None:  # the rows whose draft layers follow the target's (DeepSeek's EAGLE class) read these
        experts = next((target.text.get(k) for k in TARGET_EXPERT_KEYS if type(target.text.get(k)) is int), 0)
        view = replace(view, facts={**view.facts, "Nt": target.num_layers, "Et": experts})
    arch = drafter.architecture
    base = Context(view, target=target, launch=launch, path=path_label or str(view.ckpt.root), family=family.name, mtp=mtp)
    shared = run(CHECKPOINT, base)
    out = []
    unmodelled = []
    for fp in places:
        rows = family_rows(fp.era.engine, family.name)
        # a release without the class is answered with the class of the first release that builds this architecture
        row = fp.row or next(
            (r for r in rows if family_builds(r, arch) in r.classes),
            next((r for r in rows if r.classes and arch not in r.unmodelled_archs), None) or next(r for r in rows if r.classes),
        )
        # as written, or as the registry is asked for it (vLLM's method eagle prefixes Eagle)
        key = arch if arch in row.unmodelled_archs or not arch else family_name(row, arch)
        if key in row.unmodelled_archs:
            unmodelled.append(f"{fp.era.engine} {fp.version} builds {row.unmodelled_archs[key]} for {arch!r}")
            continue
        # the era shown is the family's own range, not the EAGLE-3 loader era the release falls in
        era = replace(fp.era, name=family_era(row) + ("" if fp.row else " (not in it)"))
        rep = simulate(view, era, fp.version, row)
        # the release has the family but no class for this architecture, which a later release of it has (SGLang 0.5.10
        # and MistralForCausalLMEagle, first in 0.5.11): the engine's own refusal and this release's simulation stand,
        # and L005's fix names that first release
        if fp.row is not None and fp.first and not rep.dispatched and family_builds(fp.row, arch) not in fp.row.classes:
            if parse_version(fp.version) < parse_version(fp.first):
                rep.first_release_arch = arch
                rep.first_release = fp.first
        if fp.row is None:
            older_family = bool(rows) and fp.first != rows[0].first  # the family is older than this architecture's class
            what = f"{family.title} class for {arch!r}" if older_family else f"{family.title} drafter class"
            msg = f"{rep.engine} {rep.version} has no {what} (the first release with one is {fp.first})"
            rep.dispatched, rep.dispatch_message, rep.first_release, rep.simulated_release = False, msg, fp.first, row.first
            rep.first_release_arch = arch if older_family else None  # L005's fix: the first release with this class
            rep.errors.insert(0, msg)
        ctx = replace(base, rep=rep, place=fp)
        findings = in_catalogue_order(shared + run(ENGINE, ctx))
        out.append(CheckResult(drafter, rep, findings, None, fp))
    if not out and unmodelled:
        raise NotModelled(f"{'; '.join(unmodelled)}; specbridge does not model that class yet: nothing was checked")
    return out, skipped + [f"{u}; specbridge does not model that class yet: not checked" for u in unmodelled]
