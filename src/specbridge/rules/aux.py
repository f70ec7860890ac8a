"""A rules: the aux layers. Which target layer boundaries fc was trained on, which ones this engine
version captures and feeds (`Context.aux`), and whether the launch captures any at all."""

from __future__ import annotations

from collections.abc import Iterator

from ..engines.registry import LAUNCHERS
from .context import Context
from .findings import ERROR, INFO, WARNING
from .registry import Hit, rule


def _base(c: Context) -> tuple[str, str, str]:
    """(what was trained and what is fed, the engine's notes, the fix) for A002/A003/A006."""
    a, d = c.aux, c.d
    cap = a.capture
    base = f"trained on target boundaries {a.trained} ({a.trained_note}); {c.eng} feeds {cap.boundaries} ({cap.ids_source})"
    notes = ("; " + "; ".join(cap.notes)) if cap.notes else ""
    fix = f"{c.convert_fix} (writes the ids where and how this engine reads them)"
    if d.aux_ids_where == "top-level" and a.trained != list(d.aux_ids or []):
        fix = f'write "eagle_aux_hidden_state_layer_ids": {a.trained} (boundaries, input-of-layer) at the top level of config.json'
    return base, notes, fix


def _fed(c: Context) -> list[int] | None:
    return c.aux.capture.boundaries if c.aux else None


@rule(
    "A001",
    "target cannot capture aux hidden states on this engine version",
    severity=ERROR,
    failure_modes=(16,),
    fix="use an engine version whose target class captures aux states (`specbridge check PATH --target T --engine all` shows each version).",
)
def no_capture(c: Context) -> Iterator[Hit]:
    """The target class must implement aux capture in that engine version: SGLang `set_eagle3_layers_to_capture`
    (`sglang/srt/models/*.py`, read per wheel from 0.4.6.post5 on), vLLM `SupportsEagle3` from 0.32
    (`vllm/model_executor/models/interfaces.py`; otherwise a `RuntimeError` at load) and a `model_type`
    allow-list before. Without it the drafter gets no aux states and the launch fails. The table is
    `src/specbridge/engines/capture.py`; e.g. SGLang's `KimiK25ForConditionalGeneration` gained it in 0.5.10.
    TensorRT-LLM's support is not tabled.
    """
    cap = c.aux.capture if c.aux else None
    if cap is not None and cap.supported is False:
        yield Hit(
            ERROR,
            f"{cap.support_note}: the target cannot hand aux hidden states to the drafter on {c.eng} ({cap.cite}).",
            "use an engine version whose target class captures aux states (see docs/rules.md#a001)",
        )


@rule(
    "A002",
    "aux layers fed differ from the layers trained on",
    severity=ERROR,
    failure_modes=(17, 18),
    fix="`specbridge convert PATH --engine NAME==VERSION -o OUT` writes the ids where and how this engine reads them; for the ambiguous case, confirm the training run's layer ids (`specbridge eval` measures position-0 acceptance either way).",
)
def layers_differ(c: Context) -> Iterator[Hit]:
    """Every id is turned into a physical *boundary* (the residual stream entering target layer b): top-level ids
    (speculators/vLLM) mean boundary = id; `eagle_config` ids (SpecForge/ModelOpt/SGLang) mean output of layer
    id = boundary id+1. Each engine version's own rule is applied — where it reads ids (SGLang only under
    `eagle_config`; vLLM 0.11–0.31 only at top level; vLLM ≤ 0.10 ignores them), +1 shifts, the DeepSeek
    heuristic (SGLang ≥ 0.5.16, sgl-project/sglang PR #25454), SGLang 0.5.5.post3–0.5.10 resetting capture to
    the defaults at CUDA-graph init (fixed by #22836), vLLM's deduplication, the unreachable final boundary —
    and the result compared with training; the check prints both lists. When fc sees other layers than in
    training, position-0 acceptance collapses with no error. A warning when the convention is ambiguous
    (speculators/vLLM tensor names with ids under `eagle_config`): the ids may have been copied from a
    speculators config and be off by one.
    """
    fed = _fed(c)
    if fed is None or (c.k and len(fed) != c.k):  # a count mismatch is A003's
        return
    a = c.aux
    base, notes, fix = _base(c)
    if sorted(fed) != sorted(a.trained):
        yield Hit(ERROR, f"aux layers off: {base}{notes}. Position-0 acceptance collapses when fc sees other layers than in training.", fix)
    elif a.alternative is not None and sorted(a.alternative) != sorted(fed):
        yield Hit(
            WARNING,
            f"aux-layer convention ambiguous: the tensors are in speculators/vLLM naming but the ids {c.d.aux_ids} sit under "
            f"eagle_config. Read as SpecForge-style output-of-layer ids they mean boundaries {a.trained}, which {c.eng} feeds; if they "
            f"were copied from a speculators config (input-of-layer) the drafter was trained on {a.alternative} and {c.eng} is off by "
            f"one{notes}.",
            "confirm the training run's layer ids; specbridge eval measures position-0 acceptance either way",
        )


@rule(
    "A003",
    "number of captured aux states differs from fc",
    severity=ERROR,
    failure_modes=(19, 20),
    fix="`specbridge convert PATH --engine NAME==VERSION -o OUT` writes the ids where and how this engine reads them.",
)
def count_differs(c: Context) -> Iterator[Hit]:
    """The engine version captures a different number of states than `fc` takes: repeated boundaries collapse
    (vLLM stores the ids as a sorted set), the boundary after the last layer is never captured (SGLang's
    capture loop, sgl-project/sglang PR #32334; DeepSeek-family targets on vLLM, vllm-project/vllm PR #46788),
    or the version ignores the ids for its default three. The engine crashes combining the states, or fc
    never runs.
    """
    fed = _fed(c)
    if fed is not None and c.k and len(fed) != c.k:
        base, notes, fix = _base(c)
        yield Hit(
            ERROR,
            f"{c.eng} captures {len(fed)} aux state(s) {fed} but fc expects {c.k}: {base}{notes}. "
            "The engine crashes combining them, or fc never runs.",
            fix,
        )


@rule(
    "A004",
    "EAGLE-3 drafter launched without the EAGLE3 algorithm",
    severity=ERROR,
    failure_modes=(15,),
    fix='launch with `--speculative-algorithm EAGLE3` (SGLang) / `"method": "eagle3"` in `--speculative-config` (vLLM).',
)
def launched_without_eagle3(c: Context) -> Iterator[Hit]:
    """With `--launch`: an EAGLE-3 drafter (k ≥ 2 aux states) launched with another speculative algorithm. SGLang
    applies `fc` only when the incoming hidden width differs from the draft hidden size
    (`sglang/srt/models/llama_eagle3.py` forward); with `--speculative-algorithm EAGLE` no aux capture happens,
    the single hidden state has the draft's width (when target and draft hidden sizes are equal) and `fc` is
    skipped silently: accept length 1.00. Otherwise SGLang fails with a shape error, and vLLM with another
    method builds the wrong proposer.
    """
    from .load import _launch_method, right_line  # here, so the rule modules register in their own order

    L, d = c.launch, c.d
    algo, how = _launch_method(c)
    if not algo or algo == "EAGLE3" or not (c.k and c.k >= 2):
        return
    if LAUNCHERS[L.engine].eagle_skips_fc and algo == "EAGLE":
        what = (
            f"SGLang never captures aux states, feeds fc's place a single {c.ht}-wide hidden state, and — because that width "
            f"equals the draft hidden size — skips the fusion fc [{d.hidden_size}, {d.fc_in}] silently (shape check in "
            "llama_eagle3 forward): accept length ≈ 1.00"
            if (d.hidden_size or 0) == (c.ht or -1)
            else "SGLang feeds a single hidden state into fc and fails with a shape error"
        )
        yield Hit(
            ERROR,
            f"launched with --speculative-algorithm EAGLE but this is an EAGLE-3 drafter ({c.k} aux states): {what}.",
            right_line(c, "EAGLE3"),
        )
    else:
        said = LAUNCHERS[L.engine].eagle_on_eagle3 if algo == "EAGLE" else ""
        yield Hit(
            ERROR,
            f"launched with method {algo!r}{how} but this is an EAGLE-3 drafter ({c.k} aux states): "
            + (said or "the engine runs another proposer, which never captures the aux states fc reads")
            + ".",
            right_line(c, "EAGLE3"),
        )


@rule(
    "A005",
    "aux layer ids outside the target's layers",
    severity=ERROR,
    failure_modes=(19,),
    fix="use a drafter trained for this target, or correct the ids to the layers it was trained on (from the training run's config).",
)
def ids_outside_target(c: Context) -> Iterator[Hit]:
    """The configured aux layer ids lie outside [0, N] for a target with N layers: the engine cannot capture them
    (an index error, or states silently missing), and the drafter was most likely trained for another, deeper
    target.
    """
    ids = c.d.aux_ids
    n = c.target.num_layers if c.target else None
    if n and ids is not None and any(not 0 <= i <= n for i in ids):
        yield Hit(ERROR, f"aux layer ids {ids} lie outside the target's {n} layers.")


@rule(
    "A006",
    "aux layers resolved and in agreement",
    severity=INFO,
    failure_modes=(17,),
    fix="none needed — this records that the aux layers agree.",
)
def layers_agree(c: Context) -> Iterator[Hit]:
    """Information: the layers this engine version feeds are the layers the drafter was trained on; the message
    prints both lists and how the ids were read.
    """
    fed, a = _fed(c), c.aux
    if fed is None or (c.k and len(fed) != c.k) or sorted(fed) != sorted(a.trained):
        return
    if a.alternative is None or sorted(a.alternative) == sorted(fed):
        base, notes, _ = _base(c)
        yield Hit(INFO, f"aux layers agree: {base}{notes}.")
