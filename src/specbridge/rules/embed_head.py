"""E rules: whose embedding and head the engine runs. The embedding's statistics are sampled once per
checkpoint (`Context.embed`); what the engine keeps comes from its simulated load."""

from __future__ import annotations

from collections.abc import Iterator

from ..engines.simulate import P_LOADED, P_OWN_UNLESS_EQUAL
from .context import Context
from .findings import ERROR, INFO, WARNING
from .registry import Hit, rule


@rule(
    "E001", "tie_word_embeddings inconsistent with the head", severity=ERROR, failure_modes=(25,), fix="set `tie_word_embeddings` to false."
)
def tie_flag(c: Context) -> Iterator[Hit]:
    """Error when `tie_word_embeddings` is true with a reduced draft vocab: the head would be the V-row embedding,
    not a Vd-row head (sgl-project/SpecForge PR #140). Warning when it is true and the checkpoint also ships
    `lm_head.weight`: one of the two is ignored, and which depends on the engine.
    """
    d = c.d
    if not d.tie_word_embeddings:
        return
    Vd = d.draft_vocab_from_keys or d.draft_vocab_size
    V = d.vocab_size or d.vocab_from_keys
    # engines differ: SGLang's class makes lm_head the embedding when the flag is set (llama_eagle3.py: lm_head =
    # model.embed_tokens), vLLM's always builds its own lm_head of draft_vocab_size rows and never reads the flag
    # (llama_eagle3.py@v0.32.0 Eagle3LlamaForCausalLM.__init__). Judge the flag by what this engine's class built.
    if any(p.role == "head" for p in c.rep.params):
        yield Hit(
            INFO,
            f"tie_word_embeddings is true, but {c.eng}'s EAGLE-3 class ignores it: it builds its own "
            "lm_head of draft_vocab_size rows (loaded from the checkpoint, or shared from the target when absent).",
        )
    elif Vd and V and Vd != V:
        yield Hit(
            ERROR,
            f"tie_word_embeddings is true with a reduced draft vocab ({Vd} ≠ {V}): the head would be the {V}-row embedding.",
            "set tie_word_embeddings to false",
        )
    elif d.has("lm_head.weight"):
        yield Hit(WARNING, "tie_word_embeddings is true but the checkpoint also ships lm_head.weight: one of them is ignored.")


def _own_kept(c: Context) -> bool:
    return any(p.role == "embed" and p.status in (P_LOADED, P_OWN_UNLESS_EQUAL) for p in c.rep.params)


@rule(
    "E002",
    "embedding looks freshly initialised",
    severity=WARNING,
    failure_modes=(3,),
    fix="export the drafter with the target's embedding (or without `embed_tokens`, so engines share the target's); without target weights, pass `--target` with the target's weights to compare the tables.",
)
def fresh_embedding(c: Context) -> Iterator[Hit]:
    """`embed_tokens` (16 sampled rows) has the statistics of a fresh initialisation: mean ≈ 0, std ≈
    `initializer_range`. An exporter that skipped the frozen embedding and rebuilt the model from its config
    saves such a table. It is only an error when the target's weights are given, the tables differ, and the
    engine version keeps the drafter's own table (vLLM outside 0.9–0.10; vllm-project/vllm PR #28549): drafts then come
    from a random embedding. A warning when the engine replaces it anyway (SGLang), information without the
    target's weights.
    """
    emb = c.embed
    if emb is None or not emb.fresh or emb.differs is False:
        return
    stats = f"mean {emb.mean:.4f}, std {emb.std:.4f} ≈ initializer_range {emb.init}"
    if emb.differs is None:
        yield Hit(
            INFO,
            f"embed_tokens has the statistics of a fresh initialisation ({stats}); without the target's weights this cannot be confirmed.",
            "pass --target with the target's weights to compare the tables",
        )
        return
    own = _own_kept(c)
    use = f"{c.eng} keeps the drafter's own table" if own else f"{c.eng} replaces it with the target's"
    yield Hit(
        ERROR if own else WARNING,
        f"embed_tokens differs from the target's embedding and looks freshly initialised ({stats}): {use}.",
        "export the drafter with the target's embedding (or without embed_tokens, so engines share the target's)",
    )


@rule(
    "E003",
    "embedding differs from the target's",
    severity=WARNING,
    failure_modes=(3, 4),
    fix="as information none needed — the engine keeps the trained table; as a warning, serve with an engine version that keeps the drafter's own table (`specbridge check PATH --target T --engine all` shows which), or retrain with the target's frozen embedding.",
)
def trained_embedding(c: Context) -> Iterator[Hit]:
    """With the target's weights: the drafter's `embed_tokens` is not the target's and does not look random.
    Information when the engine version keeps the drafter's own (trained) table. A warning when the version
    replaces it with the target's (SGLang; vLLM 0.9–0.10, before PR #28549): a drafter trained with its own table loses
    it and acceptance drops.
    """
    emb = c.embed
    if emb is None or not emb.differs or emb.fresh:  # a fresh table that differs is E002's
        return
    if _own_kept(c):
        yield Hit(INFO, f"embed_tokens differs from the target's; {c.eng} keeps the drafter's own (trained) table.")
    else:
        yield Hit(
            WARNING,
            f"embed_tokens differs from the target's, but {c.eng} replaces it with the target's: "
            "a drafter trained with its own table loses it.",
        )
