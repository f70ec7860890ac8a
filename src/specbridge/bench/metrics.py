"""Acceptance as the engine itself counts it.

vLLM (0.8.5+; names checked on 0.32 CPU): Prometheus `/metrics` counters
  vllm:spec_decode_num_drafts_total, vllm:spec_decode_num_draft_tokens_total,
  vllm:spec_decode_num_accepted_tokens_total, vllm:spec_decode_num_accepted_tokens_per_pos_total{position=".."}
  MAL = 1 + accepted / drafts (bonus token included), draft acceptance rate = accepted / draft_tokens,
  per-position rate_i = accepted_per_pos[i] / drafts. Deltas over a run are taken between two scrapes.

SGLang: `/server_info` internal_states[*].avg_spec_accept_length (cumulative since start; reported as is),
  and per-request `meta_info` (spec_accept_length, spec_verify_ct, spec_num_correct_drafts, ...; with
  `return_spec_tokens_details` in OpenAI responses under `sglext.spec_tokens_details`), aggregated over the run as
  completion tokens / verify forwards.
"""

from __future__ import annotations

import math
import re

from ..record import field, record

DRAFTS = "vllm:spec_decode_num_drafts"
DRAFT_TOKENS = "vllm:spec_decode_num_draft_tokens"
ACCEPTED = "vllm:spec_decode_num_accepted_tokens"
ACCEPTED_POS = "vllm:spec_decode_num_accepted_tokens_per_pos"


class MetricsError(ValueError):
    """The server's metrics cannot be trusted (unparseable, non-finite, going backwards)."""


_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?[ \t]+(\S+)(?:[ \t]+-?\d+)?[ \t]*$")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,|$)')


def parse_prometheus(text: str, max_bad: int = 0) -> list[tuple[str, dict[str, str], float]]:
    """Parse the Prometheus text exposition format into (name, labels, value) samples.

    Raises MetricsError when more than max_bad sample lines do not parse (a server answering garbage)."""
    out: list[tuple[str, dict[str, str], float]] = []
    bad: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        labels: dict[str, str] = {}
        ok = m is not None
        if m and m.group(2):
            pos, body = 0, m.group(2)
            while pos < len(body):
                lm = _LABEL.match(body, pos)
                if not lm or lm.end() == pos:
                    ok = False
                    break
                labels[lm.group(1)] = lm.group(2).replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")
                pos = lm.end()
        if ok:
            try:
                value = float(m.group(3))
            except ValueError:
                ok = False
        if not ok:
            bad.append(line[:120])
            continue
        out.append((m.group(1), labels, value))
    if len(bad) > max_bad:
        raise MetricsError(f"{len(bad)} line(s) are not Prometheus samples, e.g. {bad[0]!r}")
    return out


@record(frozen=False)
class SpecCounters:
    """One scrape of vLLM's spec-decode counters (summed over engines/models)."""

    present: bool = False
    drafts: float = 0.0
    draft_tokens: float = 0.0
    accepted: float = 0.0
    per_pos: dict[int, float] = field(default_factory=dict)
    other_vllm: bool = False  # any vllm:* metric seen (tells a vLLM server without speculation)

    def minus(self, before: "SpecCounters") -> "SpecCounters":
        d = SpecCounters(present=self.present or before.present, other_vllm=self.other_vllm)
        d.drafts = self.drafts - before.drafts
        d.draft_tokens = self.draft_tokens - before.draft_tokens
        d.accepted = self.accepted - before.accepted
        d.per_pos = {i: self.per_pos.get(i, 0.0) - before.per_pos.get(i, 0.0) for i in sorted(set(self.per_pos) | set(before.per_pos))}
        vals = [d.drafts, d.draft_tokens, d.accepted, *d.per_pos.values()]
        if any(v < 0 for v in vals):
            raise MetricsError("spec-decode counters went backwards between two scrapes (server restarted?)")
        return d


def vllm_counters(text: str) -> SpecCounters:
    c = SpecCounters()
    for name, labels, value in parse_prometheus(text):
        if name.startswith("vllm:"):
            c.other_vllm = True
        base = name[:-6] if name.endswith("_total") else name
        if base not in (DRAFTS, DRAFT_TOKENS, ACCEPTED, ACCEPTED_POS):
            continue  # includes the *_created samples
        if not math.isfinite(value) or value < 0:
            raise MetricsError(f"{name} = {value}: not a finite non-negative counter")
        c.present = True
        if base == DRAFTS:
            c.drafts += value
        elif base == DRAFT_TOKENS:
            c.draft_tokens += value
        elif base == ACCEPTED:
            c.accepted += value
        else:
            try:
                pos = int(labels.get("position", ""))
            except ValueError:
                raise MetricsError(f"{name} has a non-integer position label {labels.get('position')!r}") from None
            c.per_pos[pos] = c.per_pos.get(pos, 0.0) + value
    if c.present:
        if c.accepted > c.draft_tokens + 1e-9:
            raise MetricsError(f"accepted tokens ({c.accepted:g}) exceed drafted tokens ({c.draft_tokens:g})")
        if sum(c.per_pos.values()) > c.accepted + 1e-6 and c.per_pos:
            raise MetricsError("per-position accepted tokens add up to more than the accepted total")
    return c


@record(frozen=False)
class Acceptance:
    """Acceptance over a run, as the engine counted it."""

    source: str  # "vllm /metrics", "sglang meta_info", "sglang /server_info"
    drafts: float | None = None  # vLLM: draft chains; SGLang: verify forwards
    draft_tokens: float | None = None
    accepted: float | None = None
    mal: float | None = None  # mean acceptance length, bonus token included
    rate: float | None = None  # accepted / drafted tokens
    per_pos: list[float] | None = None  # per-position acceptance rate
    k: int | None = None  # draft tokens per step, where known
    note: str = ""

    def to_json(self) -> dict:
        return {k: getattr(self, k) for k in ("source", "drafts", "draft_tokens", "accepted", "mal", "rate", "per_pos", "k", "note")}


def vllm_acceptance(delta: SpecCounters) -> Acceptance:
    a = Acceptance("vllm /metrics", drafts=delta.drafts, draft_tokens=delta.draft_tokens, accepted=delta.accepted)
    if delta.per_pos:
        a.k = max(delta.per_pos) + 1
    elif delta.drafts:
        a.k = round(delta.draft_tokens / delta.drafts)
    if delta.drafts > 0:
        a.mal = 1.0 + delta.accepted / delta.drafts
        a.per_pos = [delta.per_pos.get(i, 0.0) / delta.drafts for i in range(a.k or 0)]
    else:
        a.note = "no draft was proposed during the run"
    if delta.draft_tokens > 0:
        a.rate = delta.accepted / delta.draft_tokens
    return a


# ---- SGLang ----------------------------------------------------------------------------------------

SPEC_KEYS = ("spec_verify_ct", "spec_accept_length", "spec_num_correct_drafts", "spec_num_proposed_drafts", "spec_accept_rate")


def find_spec_details(obj, depth: int = 0) -> dict | None:
    """The first dict (bounded search) carrying SGLang's per-request spec fields (meta_info or sglext)."""
    if depth > 6:
        return None
    if isinstance(obj, dict):
        if any(k in obj for k in SPEC_KEYS):
            return {k: obj[k] for k in SPEC_KEYS if k in obj}
        for v in obj.values():
            if isinstance(v, (dict, list)):
                r = find_spec_details(v, depth + 1)
                if r is not None:
                    return r
    elif isinstance(obj, list):
        for v in obj[:16]:
            r = find_spec_details(v, depth + 1)
            if r is not None:
                return r
    return None


def sglang_request_acceptance(details: list[tuple[int, dict]]) -> Acceptance | None:
    """Aggregate per-request (completion_tokens, spec details) into one acceptance figure."""
    verify = tokens = correct = proposed = 0.0
    have_verify = have_drafts = False
    for n_tokens, d in details:
        v = d.get("spec_verify_ct")
        if isinstance(v, (int, float)) and v > 0:
            verify += v
            tokens += n_tokens
            have_verify = True
        c, p = d.get("spec_num_correct_drafts"), d.get("spec_num_proposed_drafts")
        if isinstance(c, (int, float)) and isinstance(p, (int, float)):
            correct += c
            proposed += p
            have_drafts = True
    if not (have_verify or have_drafts):
        return None
    a = Acceptance("sglang meta_info")
    if have_verify:
        a.drafts = verify
        a.mal = tokens / verify
    if have_drafts:
        a.draft_tokens, a.accepted = proposed, correct
        a.rate = correct / proposed if proposed else None
    return a


def sglang_server_info_mal(info) -> float | None:
    """Mean of internal_states[*].avg_spec_accept_length (cumulative since the server started)."""
    if not isinstance(info, dict):
        raise MetricsError("/server_info is not a JSON object")
    states = info.get("internal_states")
    if states is None:
        return None
    if isinstance(states, dict):
        states = [states]
    if not isinstance(states, list):
        raise MetricsError("/server_info internal_states is not a list")
    vals = []
    for s in states:
        v = s.get("avg_spec_accept_length") if isinstance(s, dict) else None
        if v is None:
            continue
        if not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise MetricsError(f"/server_info avg_spec_accept_length = {v!r}")
        vals.append(float(v))
    return sum(vals) / len(vals) if vals else None
