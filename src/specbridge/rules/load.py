"""Turn a simulated engine load into findings: every dropped tensor and every unfilled parameter
is an error, because engines stay silent about both."""

from __future__ import annotations

from ..checkpoint.safetensors import FLOAT_DTYPES
from ..engines.simulate import (
    DROPPED,
    OVERWRITTEN,
    P_DEFAULT_INIT,
    P_HARMLESS,
    P_MISSING,
    P_PARTIAL,
    P_SHARED,
    UNUSED,
    LoadReport,
)
from .findings import ERROR, INFO, WARNING, Finding, finding


def _list(names: list[str], n: int = 4) -> str:
    head = ", ".join(names[:n])
    return head + (f" … (+{len(names) - n})" if len(names) > n else "")


def load_findings(rep: LoadReport, path: str, dtypes: dict[str, str]) -> list[Finding]:
    eng = f"{rep.engine}=={rep.version}"
    out: list[Finding] = []
    convert_fix = f"specbridge convert {path} --engine {eng} -o OUT"

    if not rep.dispatched:
        out.append(
            finding(
                "L005",
                ERROR,
                f"{rep.engine} {rep.version} cannot dispatch this config: {rep.dispatch_message}. "
                f"The rest of this report simulates its EAGLE-3 class ({rep.cls.name}) as if the config were converted.",
                convert_fix,
            )
        )
    build_errors = [e for e in rep.errors if e != rep.dispatch_message and not e.startswith("size mismatch") and e not in {t.reason for t in rep.tensors}]
    for e in build_errors:
        out.append(finding("L006", ERROR, f"{rep.engine} {rep.version} raises while building {rep.cls.name}: {e}", convert_fix))

    raising = [t for t in rep.tensors if t.status == "raises"]
    if raising:
        out.append(
            finding(
                "L004",
                ERROR,
                f"{rep.engine} {rep.version} refuses to load: {raising[0].reason} "
                f"({len(raising)} tensor(s): {_list([t.name for t in raising])}).",
                convert_fix,
            )
        )

    dropped = [t for t in rep.tensors if t.status == DROPPED]
    missing = [p for p in rep.params if p.status in (P_MISSING, P_PARTIAL)]
    dec_missing = [p for p in missing if p.role == "decoder"]
    dropped_float = [t for t in dropped if dtypes.get(t.name) in FLOAT_DTYPES]
    if dec_missing:
        msg = (
            f"the drafter's decoder layer will run at random initialisation on {rep.engine} {rep.version}: "
            f"{len(dec_missing)} decoder parameter(s) ({_list([p.name for p in dec_missing], 2)}) are never filled"
        )
        if dropped_float:
            msg += f", because {len(dropped_float)} tensor(s) ({_list([t.name for t in dropped_float], 2)}) match no parameter and are skipped silently"
        msg += ". Expect accept length ≈ 1.00 (no draft token accepted) and throughput below no speculation."
        out.append(finding("L002", ERROR, msg, convert_fix))
        missing = [p for p in missing if p.role != "decoder"]
    elif dropped_float:
        out.append(
            finding(
                "L001",
                ERROR,
                f"{rep.engine} {rep.version} silently drops {len(dropped_float)} float tensor(s) it has no parameter for: "
                f"{_list([t.name for t in dropped_float])} (→ {_list([t.engine_name or '?' for t in dropped_float], 2)}). "
                "Whatever they were trained to do is lost.",
                convert_fix,
            )
        )
    for t in dropped:
        if t not in dropped_float:
            out.append(finding("L001", WARNING, f"{t.name} ({dtypes.get(t.name)}) is skipped silently by {rep.engine} {rep.version}.", convert_fix))
    for p in missing:
        what = {"head": "the draft head (logits are random)", "fc": "the aux-state fusion", "norm": "a norm", "embed": "the embedding"}.get(p.role, p.role)
        shards = f" (shards {', '.join(p.missing_shards)})" if p.status == P_PARTIAL else ""
        out.append(
            finding(
                "L002",
                ERROR,
                f"{p.name}{shards} — {what} — is filled by nothing in the checkpoint on {rep.engine} {rep.version}; "
                "it keeps its random initial value and drafts will be rejected.",
                "add the tensor to the checkpoint (e.g. lm_head from the target: specbridge convert … --target T)"
                if p.role == "head"
                else convert_fix,
            )
        )
    for mm in rep.mismatched:
        out.append(
            finding(
                "L003",
                ERROR,
                f"{mm['name']}: checkpoint has {mm['found']}, {rep.engine} {rep.version} builds {mm['expected']} from config.json; loading raises a size mismatch.",
                "fix config.json so it describes these tensors (hidden_size, heads, head_dim, intermediate_size, draft_vocab_size, target_hidden_size)",
            )
        )
    bent = [t for t in rep.tensors if t.status in ("truncated", "padded")]
    if bent:
        out.append(
            finding(
                "L012",
                ERROR,
                f"{rep.engine} {rep.version} loads {len(bent)} tensor(s) that do not fit by cutting or zero-padding them, silently: "
                + "; ".join(f"{t.name} {t.reason}" for t in bent[:3]) + (" …" if len(bent) > 3 else "")
                + ". The loaded drafter is not the trained one.",
                "fix config.json so it describes these tensors (intermediate_size, heads, head_dim)",
            )
        )
    over = [t for t in rep.tensors if t.status == OVERWRITTEN]
    if over:
        out.append(
            finding(
                "L007",
                INFO,
                f"{_list([t.name for t in over])} loaded, then replaced by the target's weights on {rep.engine} {rep.version} "
                f"({rep.cls.share_cite}). Fine if the drafter was trained with the target's frozen table.",
            )
        )
    unused = [t for t in rep.tensors if t.status == UNUSED]
    if unused:
        out.append(finding("L008", INFO, f"ignored by design on {rep.engine} {rep.version}: " + "; ".join(f"{t.name} ({t.reason})" for t in unused)))
    for p in rep.params:
        if p.status == P_SHARED and p.role in ("embed", "head") and not p.filled_by:
            out.append(finding("L009", INFO, f"{p.name} is taken from the target model ({rep.cls.share_cite})."))
            vd, v = rep.ns.get("Vd"), rep.ns.get("V")
            if p.role == "head" and isinstance(vd, int) and isinstance(v, int) and vd != v:
                out.append(
                    finding(
                        "L010",
                        ERROR,
                        f"the head is borrowed from the target ({v} rows) but draft_vocab_size is {vd}: draft ids and logits will not line up.",
                        "ship the trained lm_head [draft_vocab_size, hidden] in the checkpoint",
                    )
                )
        if p.status == P_DEFAULT_INIT:
            out.append(finding("L002", WARNING, f"{p.name} is filled by nothing in the checkpoint on {rep.engine} {rep.version}; {p.note}.",
                               "ship the trained tensor, or serve on a release whose class has no such parameter"))
        if p.status == P_HARMLESS:
            out.append(finding("L011", INFO, f"{p.name} is not in the checkpoint; {p.note}."))
    return out
