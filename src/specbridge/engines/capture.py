"""Which target architectures can capture aux hidden states in which engine version, and which
physical layer boundaries each engine version actually feeds to the drafter's `fc`.

A *boundary* b is the residual stream entering target layer b (HF `hidden_states[b]`); b = N is the
final pre-norm state. Trainers and engines number aux layers two ways (input-of-layer b, or
output-of-layer b-1); everything here is converted to boundaries so they can be compared.

Nothing engine-specific lives here: each engine file holds its `CAPTURE` rows (`spec.CaptureRule`, with the
release range, the source read and the PR that changed it) and its support map; this module only interprets them.
Sources: every SGLang wheel read from 0.4.6.post5 on (the eras' `versions_read`; `set_eagle3_layers_to_capture` in `sglang/srt/models/*.py`),
vLLM wheels from 0.8.5 on (`_get_eagle3_aux_layers_from_config` in `v1/worker/gpu_model_runner.py`),
TensorRT-LLM@00679c66 `modeling_speculative.py`.
"""

from __future__ import annotations

from ..record import record
from .registry import capture_rule, era_at, modelled_range
from .spec import CaptureRule, in_release_range


@record(frozen=False)
class Capture:
    supported: bool | None  # None = unknown architecture for this engine table
    support_note: str
    ids_source: str
    boundaries: list[int] | None  # physical boundaries fed to fc, in order
    notes: list[str]
    cite: str


def default_boundaries(n: int) -> list[int]:
    """[2, N//2, N-3]: the common physical default (input-of-layer numbering)."""
    return [2, n // 2, n - 3]


def engine_capture(
    engine: str, version: str, arch: str | None, model_type: str | None, n_layers: int, top_ids: list[int] | None, ec_ids: list[int] | None
) -> Capture:
    """What this engine version captures for this target and this drafter's ids (its CAPTURE row, interpreted)."""
    rule = capture_rule(engine, version)
    arch = arch or ""
    supported, note = _support(rule, engine, version, arch, model_type)
    ids, source, notes = _configured_ids(rule, version, top_ids, ec_ids)
    if ids is None:
        chosen = default_boundaries(n_layers)
    elif arch in rule.first_id_rule:
        chosen = [i + rule.shift for i in ids] if ids and ids[0] == 1 else list(ids)
        notes.append(rule.first_id_note)
    else:
        chosen = [i + rule.shift for i in ids]
    return Capture(supported, note, source, _boundaries(rule, arch, chosen, n_layers, notes), notes, rule.cite)


def _support(rule: CaptureRule, engine: str, version: str, arch: str, model_type: str | None) -> tuple[bool | None, str]:
    """Whether the target can capture at all: the release each architecture gained it, else the era's model_type
    allow-list, else not tabled."""
    if rule.supported_since is not None:
        since = rule.supported_since.get(arch)
        if since is None:
            read = "–".join(modelled_range(engine))  # the releases whose source was read, first to newest
            return False, rule.support_never.format(arch=arch, version=version, read=read)
        ok = in_release_range(version, since, None)
        return ok, (rule.support_ok if ok else rule.support_later).format(arch=arch, version=version, since=since)
    allow = era_at(engine, version).capture_model_types
    if allow is not None:
        ok = any(a in (model_type or "").lower() for a in allow)
        return ok, rule.support_model_types.format(version=version, allow=list(allow), model_type=model_type)
    return None, rule.support_unknown


def _configured_ids(
    rule: CaptureRule, version: str, top_ids: list[int] | None, ec_ids: list[int] | None
) -> tuple[list[int] | None, str, list[str]]:
    """The ids this release reads (first present source of `ids_from`), how the report names them, and notes."""
    given = {"top-level": top_ids, "eagle_config": ec_ids}
    where = next((w for w in rule.ids_from if given[w] is not None), None)
    notes: list[str] = []
    if where is None and rule.unread_note and any(v is not None for v in given.values()):
        notes.append(rule.unread_note.format(version=version))
    if where is None:
        return None, rule.id_labels["default"], notes
    if rule.resets_to_default:
        notes.append(rule.resets_to_default)
        return None, "ignored (reset to default)", notes
    return given[where], rule.id_labels[where], notes


def _boundaries(rule: CaptureRule, arch: str, chosen: list[int], n: int, notes: list[str]) -> list[int]:
    """The boundaries the engine really feeds: SGLang captures before layer i for i < N (N unreachable, repeats
    collapse); vLLM keeps a sorted set (and never captures N on some targets); TensorRT-LLM as given."""
    if rule.boundaries == "before-each-layer":
        if any(i >= n for i in chosen):
            notes.append(rule.unreachable_note.format(n=n))
        return sorted({i for i in chosen if 0 <= i < n})
    if rule.boundaries == "sorted-set":
        b = sorted(set(chosen))
        if len(b) < len(chosen):
            notes.append(rule.collapse_note.format(chosen=chosen, collapsed=b))
        if arch in rule.never_last and n in b:
            notes.append(rule.never_last_note.format(n=n))
            b = [i for i in b if i != n]
        return [i for i in b if 0 <= i <= n]
    return chosen
