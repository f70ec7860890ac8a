"""T rules: a plain draft model (a small causal LM served as vLLM `method: draft_model` or SGLang `STANDALONE`)
against its target, header-only: the engine release's support for the method, the vocab size, the token-to-id
map of `tokenizer.json`, the tokenizer model and merges, special tokens, chat template and max positions.

The engine tokenizes with the target's tokenizer and feeds the draft the target's ids; the draft proposes ids the
target verifies. Nothing translates between two vocabularies (vLLM's `use_heterogeneous_vocab` aside), so what
the draft learned an id to mean must be what the target's tokenizer means by it."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property

from ..record import record
from .context import Context
from .findings import ERROR, INFO, WARNING
from .registry import CHECKPOINT, Hit, rule

TYPE_CHECKING = False  # typing's constant, without importing typing on a check's path (about 1 ms)
if TYPE_CHECKING:  # the tokenizer reader is imported by the rules that read tokenizers (a draft model's check only)
    from ..checkpoint.tokenizer import MapDiff, TokenizerFacts

DRAFT = ("causal_lm",)
TEMPLATE_FIX = "use an instruct draft of the target's family (trained with its template), or fine-tune the draft on chats in that format"
MERGES_FIX = "use a draft model trained with the target's tokenizer revision (the same tokenizer.json)"


@record(frozen=False)
class Tokens:
    """The draft's and the target's tokenizer facts, read once per check (`Context.tokens`)."""

    draft: TokenizerFacts
    target: TokenizerFacts | None  # None: the target's files are not on disk (a Hub id read by config only)
    target_vocab: int | None  # the target's config vocab_size (what the engines compare)
    target_max_positions: int | None
    embed_rows: int | None  # the draft's embed_tokens rows
    head_rows: int | None  # the draft's lm_head rows (None: tied or absent)

    @cached_property
    def map_diff(self) -> MapDiff | None:
        from ..checkpoint.tokenizer import diff_maps

        return diff_maps(self.draft, self.target) if self.target is not None else None

    def to_json(self) -> dict:
        d, t = self.draft, self.target
        diff = self.map_diff
        return {
            "draft_files": d.read,
            "target_files": t.read if t else None,
            "vocab_size": {"draft": d.vocab_size, "draft_embedding_rows": self.embed_rows, "target": self.target_vocab},
            "token_map": {
                "draft_entries": len(d.ids) if d.ids is not None else None,
                "target_entries": len(t.ids) if t and t.ids is not None else None,
                "compared": d.ids is not None and t is not None and t.ids is not None,
                "equal": diff is None if d.ids is not None and t is not None and t.ids is not None else None,
                "differing_ids": diff.differing if diff else 0,
                "first_differing": [{"id": i, "draft": a, "target": b} for i, a, b in diff.first] if diff else [],
            },
            "max_position_embeddings": {"draft": d.max_positions, "target": self.target_max_positions},
        }


def _eng(c: Context) -> str:
    p = c.draft_place
    return f"{p.engine} {p.version}"


def _fmt(tok) -> str:
    return "(none)" if tok is None else repr(tok)


@rule(
    "T001",
    "the engine release has no plain draft-model method",
    severity=ERROR,
    families=DRAFT,
    fix="serve with a release that has it (vLLM ≥ 0.15.0 `method: draft_model`, SGLang ≥ 0.5.2 `STANDALONE`).",
)
def no_draft_method(c: Context) -> Iterator[Hit]:
    """The engine version asked for cannot serve a plain draft model: vLLM 0.10–0.14 raise `NotImplementedError`
    for `method: draft_model` (and for a draft path no other method claims: vLLM infers `draft_model` from it);
    SGLang before 0.5.2 has no `STANDALONE` algorithm. The rows are `DRAFT_MODEL` in
    `src/specbridge/engines/vllm/draft_model.py`, `sglang/draft_model.py`, each citing the file and releases read. A release older than every
    row read is said as a warning: not known either way.
    """
    p = c.draft_place
    if p is None:
        return
    if p.row is None:
        yield Hit(WARNING, f"{_eng(c)} is older than every {p.engine} release whose draft-model support was read; not checked.")
    elif not p.row.method:
        yield Hit(ERROR, f"{_eng(c)} cannot serve a plain draft model: it raises {p.row.refusal}", no_draft_method_fix(p.engine))


def no_draft_method_fix(engine: str) -> str:
    from ..engines.registry import DRAFT_MODEL

    first = next(r for r in DRAFT_MODEL[engine] if r.method)
    return f"serve with {engine} ≥ {first.first} ({first.method})"


@rule(
    "T002",
    "draft vocab size differs from the target's",
    severity=ERROR,
    failure_modes=(14,),
    families=DRAFT,
    fix="use a draft model of the target's tokenizer and vocab size (the same model family, a padded embedding included).",
)
def vocab_size_differs(c: Context) -> Iterator[Hit]:
    """The draft's `vocab_size` (config.json; or the rows of its `embed_tokens` / `lm_head`) differs from the
    target's. vLLM ≥ 0.15 refuses to start (`verify_equal_vocab_size_if_draft_model`, config/speculative.py;
    from 0.25 unless `use_heterogeneous_vocab`), SGLang ≥ 0.5.15 too (`_validate_vocab_compatibility`,
    standalone_worker_v2.py); SGLang 0.5.2–0.5.14 starts, and a draft id past the target's vocab is out of
    bounds for the target's verification. Note that a padded embedding (Qwen2.5-0.5B's 151936 rows against
    Qwen2.5-7B's 152064) differs here too, with an equal token map: the engines still refuse it.
    """
    t, p = c.tokens, c.draft_place
    if t is None or p is None or p.row is None or not p.row.method or not t.target_vocab:
        return
    draft = t.draft.vocab_size or t.embed_rows
    if draft is None:
        return
    rows = [f"{name} has {n} rows" for name, n in (("embed_tokens", t.embed_rows), ("lm_head", t.head_rows)) if n and n != t.target_vocab]
    if draft == t.target_vocab and not rows:
        return
    what = f"draft vocab_size {draft}" if draft != t.target_vocab else f"the draft's {' and '.join(rows)}"
    if p.row.vocab_size_raises and draft != t.target_vocab:
        then = f"{_eng(c)} refuses to start: {p.row.vocab_size_raises.format(target=t.target_vocab, draft=draft)}"
        fix = "use a draft model with the target's vocab size"
        if p.row.vocab_opt_out:
            fix += f"; or, if both tokenizers share most tokens, {p.row.vocab_opt_out}"
    else:
        then = f"{_eng(c)} does not check it: draft ids outside the target's vocab cannot be verified"
        fix = "use a draft model with the target's vocab size"
    yield Hit(ERROR, f"{what} differs from the target's vocab_size {t.target_vocab}: {then}", fix)


@rule(
    "T003",
    "draft token-to-id map differs from the target's: every draft rejected",
    severity=ERROR,
    failure_modes=(14,),
    families=DRAFT,
    fix="use a draft model trained with the target's tokenizer (the same tokenizer.json).",
)
def token_map_differs(c: Context) -> Iterator[Hit]:
    """The token-to-id map of the draft's `tokenizer.json` (model.vocab plus added_tokens) differs from the
    target's. The engine tokenizes with the target's tokenizer only and hands the draft the target's ids; the draft
    reads them as its own tokens and proposes ids that mean other text to the target, so the target rejects
    (nearly) every drafted token and decoding runs at one token per step plus the draft's cost. The most common
    question asked about vLLM's `draft_model` (issue #22). Every engine release starts silently: SGLang ≥ 0.5.15's
    `_validate_vocab_compatibility` compares the maps only when the draft worker has a tokenizer, and
    `TpModelWorker` never gives a draft worker one (tp_worker.py in every release read from 0.5.15 on; run on the installed releases).
    The first differing ids are named, with both tokens.
    """
    t, p = c.tokens, c.draft_place
    if t is None or p is None or p.row is None or not p.row.method:
        return
    diff = t.map_diff
    if diff is None:
        return
    first = "; ".join(f"id {i}: draft {_fmt(a)} vs target {_fmt(b)}" for i, a, b in diff.first)
    sizes = f" ({diff.draft_size} vs {diff.target_size} entries)" if diff.draft_size != diff.target_size else ""
    then = (
        f"{_eng(c)} refuses to start: {p.row.token_map_raises}"
        if p.row.token_map_raises
        else f"{_eng(c)} starts, and the target rejects every draft that uses them: acceptance near 0"
    )
    yield Hit(
        ERROR,
        f"the draft's token-to-id map differs from the target's in {diff.differing} ids{sizes} (first: {first}): {then}",
        "use a draft model trained with the target's tokenizer (the same tokenizer.json)",
    )


@rule(
    "T004",
    "tokenizer model or merges differ",
    severity=WARNING,
    scope=CHECKPOINT,
    failure_modes=(14,),
    families=DRAFT,
    fix="use a draft model trained with the target's tokenizer revision.",
)
def merges_differ(c: Context) -> Iterator[Hit]:
    """Equal token-to-id maps, but the tokenizer model type (BPE, Unigram, …) or the BPE merges differ. The
    engine splits text with the target's merges, so the draft reads id sequences split otherwise than it was
    trained on: the ids agree, acceptance drops.
    """
    t = c.tokens
    if t is None or t.target is None or t.target.ids is None or t.draft.ids is None or t.map_diff is not None:
        return
    d, g = t.draft, t.target
    if d.tokenizer_sha256 == g.tokenizer_sha256:
        return
    if d.model_type != g.model_type:
        yield Hit(WARNING, f"tokenizer model {d.model_type} (draft) vs {g.model_type} (target), with the same token map.", MERGES_FIX)
    elif d.merges is not None and g.merges is not None and d.merges != g.merges:
        n = sum(1 for a, b in zip(d.merges, g.merges, strict=False) if a != b) + abs(len(d.merges) - len(g.merges))
        yield Hit(
            WARNING,
            f"the BPE merges differ ({n} of {max(len(d.merges), len(g.merges))} merges) with the same token map: text is "
            "split into other ids than the draft was trained on.",
            MERGES_FIX,
        )


@rule(
    "T005",
    "special tokens differ",
    severity=WARNING,
    scope=CHECKPOINT,
    failure_modes=(14,),
    families=DRAFT,
    fix="use a draft model trained with the target's special tokens, or fine-tune it on the target's chat format.",
)
def special_tokens_differ(c: Context) -> Iterator[Hit]:
    """The bos/eos/pad/unk tokens differ: their strings (tokenizer_config.json, special_tokens_map.json) or ids
    (config.json, generation_config.json). The engine starts each prompt with the target's bos and ends turns
    with the target's eos; a draft trained with others proposes its own at those places, and they are rejected.
    Only tokens both sides name are compared.
    """
    t = c.tokens
    if t is None or t.target is None:
        return
    from ..checkpoint.tokenizer import SPECIAL

    d, g = t.draft, t.target
    out = []
    for name in SPECIAL:
        a, b = d.special.get(name), g.special.get(name)
        if not a or not b:
            continue
        if a["token"] is not None and b["token"] is not None and a["token"] != b["token"]:
            out.append(f"{name} {a['token']!r} vs {b['token']!r}")
        elif a["id"] is not None and b["id"] is not None and a["id"] != b["id"]:
            out.append(f"{name}_token_id {a['id']} vs {b['id']}")
    if out:
        yield Hit(
            WARNING,
            f"special tokens differ (draft vs target): {'; '.join(out)}. The engine uses the target's; the draft proposes "
            "its own at turn starts and ends, and they are rejected.",
            "set the draft's special tokens to the target's only if it was trained with them; else use a draft of the target's family",
        )


@rule(
    "T006",
    "chat template differs",
    severity=WARNING,
    scope=CHECKPOINT,
    families=DRAFT,
    fix="use a draft model trained with the target's chat template (an instruct model of the same family).",
)
def chat_template_differs(c: Context) -> Iterator[Hit]:
    """The draft's chat template (tokenizer_config.json `chat_template`, chat_template.jinja or chat_template.json)
    differs from the target's, or only one of them has one. Chat requests are rendered with the target's template;
    a draft trained on another format (or a base model with none) predicts the target's role markers poorly, so
    acceptance is lower on chat prompts than on plain completions.
    """
    t = c.tokens
    if t is None or t.target is None:
        return
    from ..checkpoint.tokenizer import template_key

    a, b = template_key(t.draft.chat_template), template_key(t.target.chat_template)
    if a == b or b is None:
        return
    if a is None:
        yield Hit(
            WARNING, "the draft has no chat template and the target has one: it was not trained on the target's chat format.", TEMPLATE_FIX
        )
    else:
        yield Hit(
            WARNING,
            f"the draft's chat template ({t.draft.chat_template_from}) differs from the target's ({t.target.chat_template_from}): "
            "chat prompts are rendered in the target's format.",
            TEMPLATE_FIX,
        )


@rule(
    "T007",
    "draft max positions below the target's",
    severity=WARNING,
    scope=CHECKPOINT,
    families=DRAFT,
    fix="cap the context at the draft's max positions (vLLM `--max-model-len`, SGLang `--context-length`), or use a draft with as many.",
)
def max_positions_smaller(c: Context) -> Iterator[Hit]:
    """The draft's `max_position_embeddings` is smaller than the target's. vLLM sizes the draft's context as
    min(draft, target) (`_maybe_override_draft_max_model_len`, config/speculative.py @ 0.15–0.32): sequences longer
    than the draft's positions run past what the draft was built (and its RoPE cache sized) for.
    """
    t = c.tokens
    if t is None or not t.draft.max_positions or not t.target_max_positions:
        return
    if t.draft.max_positions < t.target_max_positions:
        yield Hit(
            WARNING,
            f"the draft's max_position_embeddings {t.draft.max_positions} < the target's {t.target_max_positions}: "
            "longer contexts are past the draft's positions.",
            f"serve with --max-model-len {t.draft.max_positions} (vLLM) / --context-length {t.draft.max_positions} (SGLang), "
            "or use a draft with as many positions",
        )


@rule(
    "T008",
    "tokenizer not compared",
    severity=WARNING,
    scope=CHECKPOINT,
    families=DRAFT,
    fix="put tokenizer.json (and tokenizer_config.json) beside both checkpoints' config.json.",
)
def not_compared(c: Context) -> Iterator[Hit]:
    """The draft or the target has no readable `tokenizer.json` beside its config: the token maps (T003) and
    merges (T004) were not compared, and a draft of another tokenizer would pass unseen. An error-free check then
    says less than it seems.
    """
    t = c.tokens
    if t is None:
        return
    missing = [w for w, f in (("the draft", t.draft), ("the target", t.target)) if f is None or f.ids is None]
    if missing:
        where = " and ".join(missing)
        yield Hit(
            WARNING,
            f"{where} has no readable tokenizer.json: the token-to-id maps were not compared.",
            "put tokenizer.json beside the config.json of both (the target: its model directory, not a Hub id or an alias's bundled config)",
        )
    bad = [f"{w}: {', '.join(f.unreadable)}" for w, f in (("draft", t.draft), ("target", t.target)) if f is not None and f.unreadable]
    if bad:
        yield Hit(INFO, f"files present but not read as JSON ({'; '.join(bad)}).")
