"""V rules: the vocab maps (d2t offsets, t2d mask), read once per checkpoint (`Context.vocab`)."""

from __future__ import annotations

import operator
from array import array
from collections.abc import Iterator

from ..checkpoint.values import int_array
from .context import Context, d2t_targets, unset_in_t2d, zeros
from .findings import ERROR, WARNING
from .registry import CHECKPOINT, Hit, rule


@rule(
    "V001",
    "d2t is not an int64 offset table",
    severity=ERROR,
    failure_modes=(10,),
    scope=CHECKPOINT,
    fix="for int32, `specbridge convert PATH --to LAYOUT -o OUT` writes int64; a non-integer map has to be re-exported from the training run's vocab mapping.",
)
def d2t_dtype(c: Context) -> Iterator[Hit]:
    """`d2t` is not an integer tensor (error), cannot be read as one (error), or is int32 (warning). A float map
    gives wrong target ids for every draft token; int32 works where the engine converts it (TensorRT-LLM stores
    `d2t` as int32 itself) but SGLang, vLLM and every producer use int64.
    """
    info, vm = c.d.tensors.get("d2t"), c.vocab
    if info is None:
        return
    if vm.d2t_error:
        yield Hit(ERROR, vm.d2t_error)
    elif info.dtype != "I64":
        yield Hit(
            WARNING,
            f"d2t is {info.dtype}; producers and SGLang/vLLM use int64 (TensorRT-LLM converts to int32 itself).",
            f"specbridge convert {c.path} --to {c.d.layout} -o OUT (writes int64)",
        )


@rule(
    "V002",
    "d2t length differs from the draft vocab",
    severity=ERROR,
    failure_modes=(10,),
    scope=CHECKPOINT,
    fix="re-export `d2t` from the training run's vocab mapping, one offset per `lm_head` row.",
)
def d2t_length(c: Context) -> Iterator[Hit]:
    """`d2t` needs one entry per draft id, i.e. `lm_head` rows; it has another length. vLLM's
    `draft_id_to_target_id` has `draft_vocab_size` entries (the load raises a size mismatch); SGLang builds
    `hot_token_id` from it and indexes it with draft ids.
    """
    vm = c.vocab
    if vm.d2t is not None and vm.Vd and len(vm.d2t) != vm.Vd:
        yield Hit(ERROR, f"d2t has {len(vm.d2t)} entries but the draft vocab (lm_head rows) is {vm.Vd}.")


@rule(
    "V003",
    "d2t maps outside the target vocab",
    severity=ERROR,
    failure_modes=(10,),
    scope=CHECKPOINT,
    fix="re-export `d2t` for this target's vocab from the training run's mapping.",
)
def d2t_range(c: Context) -> Iterator[Hit]:
    """Some `i + d2t[i]` fall outside [0, V) of the target vocab: those drafts are tokens the target cannot verify,
    or an index error at run time (wrongly encoded maps: SafeAILab/EAGLE issue #222).
    """
    vm = c.vocab
    if vm.d2t is None or not vm.V or not len(vm.d2t) or (vm.lo >= 0 and vm.hi < vm.V):
        return
    tgt = list(d2t_targets(vm.d2t))
    outside = list(map(operator.not_, map(range(vm.V).__contains__, tgt)))
    first = outside.index(True)
    yield Hit(
        ERROR, f"{outside.count(True)} d2t entries map outside the target vocab [0, {vm.V}) (first: draft id {first} → {tgt[first]})."
    )


@rule(
    "V004",
    "d2t is not one-to-one / not sorted",
    severity=ERROR,
    failure_modes=(10,),
    scope=CHECKPOINT,
    fix="rebuild `d2t` from the training run's vocab mapping: target ids ascending, `d2t[i] = target_id[i] - i`.",
)
def d2t_one_to_one(c: Context) -> Iterator[Hit]:
    """Error when two draft ids map to the same target id (the map is not one-to-one, so part of the draft vocab
    can never be right); warning when the target ids are distinct but not increasing, which no producer writes
    (a hand-built or corrupted map).
    """
    vm = c.vocab
    if vm.d2t is None or vm.ascending:
        return
    taken = len(vm.d2t) - len(set(d2t_targets(vm.d2t)))
    if taken:
        yield Hit(ERROR, f"d2t maps {taken} draft ids onto target ids already taken: the map is not one-to-one.")
    else:
        yield Hit(WARNING, "d2t's target ids are not increasing; every producer writes them sorted ascending.")


@rule(
    "V005",
    "t2d disagrees with d2t",
    severity=ERROR,
    failure_modes=(10,),
    scope=CHECKPOINT,
    fix="recompute `t2d` from `d2t` (`specbridge convert`).",
)
def t2d_agrees(c: Context) -> Iterator[Hit]:
    """`t2d` (a V-long mask of the target ids the draft vocab selects) has the wrong length, another number of
    ids set than `d2t` has entries, or misses ids `d2t` selects. Engines do not use `t2d` (L008), but trainers
    and converters that do then work from a map that is not the drafter's.
    """
    vm = c.vocab
    if vm.t2d_error:
        yield Hit(ERROR, vm.t2d_error)
    if vm.t2d is None:
        return
    problems = []
    if vm.V and len(vm.t2d) != vm.V:
        problems.append(f"length {len(vm.t2d)} ≠ target vocab {vm.V}")
    set_count = len(vm.t2d) - zeros(vm.t2d)
    if set_count != len(vm.d2t):
        problems.append(f"{set_count} entries set ≠ {len(vm.d2t)} draft ids")
    miss = unset_in_t2d(vm.t2d, vm.d2t, inside=vm.lo >= 0 and vm.hi < len(vm.t2d))
    if miss:
        problems.append(f"{miss} ids selected by d2t are not set in t2d")
    if problems:
        yield Hit(ERROR, "t2d disagrees with d2t: " + "; ".join(problems) + ".", "recompute t2d from d2t (specbridge convert)")


@rule(
    "V006",
    "reduced draft vocab without d2t",
    severity=ERROR,
    failure_modes=(9,),
    scope=CHECKPOINT,
    fix="add `d2t` (offsets: `target_id = i + d2t[i]`) from the training run's vocab mapping.",
)
def reduced_without_d2t(c: Context) -> Iterator[Hit]:
    """The draft vocab is smaller than the target's but no `d2t` is shipped: engines read draft id i as target id
    i and every draft is wrong, accept length ≈ 1.00 (vLLM logs "Assuming draft and target model share the
    same vocab"; vllm-project/vllm PR #18488).
    """
    vm = c.vocab
    if "d2t" not in c.d.tensors and vm.Vd and vm.V and vm.Vd < vm.V:
        yield Hit(
            ERROR,
            f"reduced draft vocab ({vm.Vd} < {vm.V}) without a d2t tensor: engines then read draft id i as target id i "
            "and every draft is wrong (vLLM logs 'Assuming draft and target model share the same vocab').",
            "add d2t (offsets: target_id = i + d2t[i]) from the training run's vocab mapping",
        )


@rule(
    "V007",
    "full-vocab drafter ships d2t/t2d",
    severity=WARNING,
    failure_modes=(13,),
    scope=CHECKPOINT,
    fix="`specbridge convert PATH --engine vllm -o OUT` (drops `d2t`/`t2d`).",
)
def full_vocab_with_maps(c: Context) -> Iterator[Hit]:
    """`draft_vocab_size == vocab_size` and the checkpoint still has `d2t`/`t2d`. vLLM ≥ 0.32 builds no
    `draft_id_to_target_id` for a full vocab and raises on the name (L004); older vLLM pays a scatter on every
    step for an identity map (vllm-project/vllm PR #53458).
    """
    vm = c.vocab
    if "d2t" in c.d.tensors and vm.Vd and vm.V and vm.Vd == vm.V:
        yield Hit(
            WARNING,
            f"full-vocab drafter (draft_vocab_size = vocab_size = {vm.V}) ships d2t/t2d: vLLM ≥ 0.32 refuses it, "
            "older vLLM pays a scatter on every step.",
            f"specbridge convert {c.path} --engine vllm -o OUT (drops d2t/t2d)",
        )


@rule(
    "V008",
    "d2t holds absolute ids (d2t == arange)",
    severity=ERROR,
    failure_modes=(10,),
    scope=CHECKPOINT,
    fix="store offsets: `d2t[i] = target_id[i] - i`.",
)
def d2t_is_arange(c: Context) -> Iterator[Hit]:
    """`d2t` equals `arange`: it holds absolute target ids where offsets are expected, so engines map draft id i
    to target id 2i and nearly every draft is wrong (a producer bug seen in trainer exports, e.g.
    verl-project/verl-SpeCo PRs #66, #67).
    """
    d2t = c.vocab.d2t
    n = len(d2t) if d2t is not None else 0
    if n > 1 and d2t[0] == 0 and d2t[-1] == n - 1 and d2t == array(d2t.typecode, range(n)):
        yield Hit(
            ERROR,
            "d2t == arange: it holds absolute ids where offsets are expected, so target id = 2i for draft id i.",
            "store offsets: d2t[i] = target_id[i] - i",
        )


@rule(
    "V009",
    "drafter vocab differs from the target's",
    severity=ERROR,
    failure_modes=(14,),
    scope=CHECKPOINT,
    fix="use a drafter trained for this target.",
)
def vocab_differs(c: Context) -> Iterator[Hit]:
    """With `--target`: the drafter's `vocab_size`, or the rows of its `embed_tokens`, differ from the target's
    vocab. Drafter and target do not share a tokenizer, so draft tokens mean other text than the target's and
    acceptance collapses (SafeAILab/EAGLE issues #248, #258).
    """
    d, t = c.d, c.target
    if not (t and t.vocab_size):
        return
    if d.vocab_size and d.vocab_size != t.vocab_size:
        yield Hit(
            ERROR,
            f"drafter vocab_size {d.vocab_size} differs from the target's {t.vocab_size}: drafter and target do not share a tokenizer.",
            "use a drafter trained for this target",
        )
    emb = d.tensors.get("embed_tokens.weight")
    if emb is not None and emb.shape[0] != t.vocab_size:
        yield Hit(ERROR, f"embed_tokens has {emb.shape[0]} rows, the target vocab has {t.vocab_size}.")


@rule(
    "V010",
    "drafter tokenizer differs from the target's",
    severity=WARNING,
    failure_modes=(14,),
    scope=CHECKPOINT,
    fix="confirm both use the same tokenizer revision.",
)
def tokenizer_differs(c: Context) -> Iterator[Hit]:
    """Warning, with `--target`: the drafter ships a `tokenizer.json` whose hash differs from the target's. Same
    vocab size, possibly other tokens or merges (another revision), which lowers acceptance.
    """
    own = c.ckpt.root / "tokenizer.json"
    if c.target and c.target.tokenizer_sha256 and own.is_file():
        import hashlib  # only when there is a tokenizer to compare

        if hashlib.sha256(own.read_bytes()).hexdigest() != c.target.tokenizer_sha256:
            yield Hit(WARNING, "the drafter's tokenizer.json differs from the target's.", "confirm both use the same tokenizer revision")


@rule(
    "V011",
    "vocab map differs from the parent checkpoint's",
    severity=ERROR,
    failure_modes=(11,),
    scope=CHECKPOINT,
    fix="restore the parent's `d2t`/`t2d` and retrain, or resume with the parent's vocab map.",
)
def differs_from_parent(c: Context) -> Iterator[Hit]:
    """With `--parent`: the fine-tuned drafter's `d2t` differs from the one it was fine-tuned from. The vocab map
    was recomputed during fine-tuning, so `lm_head` row i now scores another token than it learned and
    acceptance drops (sgl-project/SpecForge PR #534). A warning when the parent has no `d2t` to compare.
    """
    d2t, parent = c.vocab.d2t, c.parent
    if d2t is None or parent is None:
        return
    pd = parent.tensors.get(next((n for n in parent.tensors if n.endswith("d2t")), ""), None)
    if pd is None:
        yield Hit(WARNING, f"the parent checkpoint {parent.root} has no d2t to compare with.")
    elif (parent_d2t := int_array(pd)).tolist() != d2t.tolist():
        diff = sum(map(operator.ne, parent_d2t, d2t)) + abs(len(d2t) - pd.shape[0])
        yield Hit(
            ERROR,
            f"d2t differs from the parent checkpoint's in {diff} position(s): the vocab map was recomputed during fine-tuning, "
            "so lm_head row i now scores another token than it learned (SpecForge #534).",
            "restore the parent's d2t/t2d and retrain, or resume with the parent's vocab map",
        )
