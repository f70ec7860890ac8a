"""L rules: a simulated engine load turned into findings. Every dropped tensor and every unfilled
parameter is an error, because engines stay silent about both."""

from __future__ import annotations

from collections.abc import Iterator

from ..checkpoint.safetensors import FLOAT_DTYPES
from ..engines.expr import row_context, value_or
from ..engines.launch import corrected_line, infer_method, inference_test
from ..engines.registry import LAUNCHERS, METHOD_INFERENCE, method_inference
from ..engines.simulate import (
    DROPPED,
    LOADED,
    OVERWRITTEN,
    P_DEFAULT_INIT,
    P_HARMLESS,
    P_MISSING,
    P_PARTIAL,
    P_SHARED,
    PADDED,
    RAISES,
    TRUNCATED,
    UNUSED,
    row_origin,
)
from .context import Context
from .findings import ERROR, INFO, WARNING
from .registry import Hit, rule

# The findings check reports when the simulated load raises (a size mismatch, an unknown name the engine indexes,
# no class for the config, a class that cannot be built): `eval --engine` then refuses, naming them.
ENGINE_RAISES_CODES = frozenset({"L003", "L004", "L005", "L006"})


def _list(names: list[str], n: int = 4) -> str:
    head = ", ".join(names[:n])
    return head + (f" … (+{len(names) - n})" if len(names) > n else "")


def _dropped_float(c: Context) -> list:
    return [t for t in c.rep.tensors if t.status == DROPPED and c.ckpt.tensors[t.name].dtype in FLOAT_DTYPES]


def _decoder_missing(c: Context) -> list:
    return [p for p in c.rep.params if p.status in (P_MISSING, P_PARTIAL) and p.role == "decoder"]


@rule(
    "L001",
    "checkpoint tensors the engine silently drops",
    severity=ERROR,
    failure_modes=(1, 8, 38),
    fix="`specbridge convert PATH --engine NAME==VERSION -o OUT` writes the names that engine version reads (EAGLE-3, DFlash "
    "and Llama EAGLE-1/2 drafters); biases a class builds only under a config flag (Medusa's `medusa_fc_bias`) need the flag.",
)
def dropped_tensors(c: Context) -> Iterator[Hit]:
    """The engine's loader, after its own renames, maps a checkpoint tensor to no parameter and skips it. A
    float tensor is an error; a non-float one (an integer buffer the engine has no use for) a warning. When
    the dropped tensors leave decoder parameters unfilled, the same facts are reported once, as L002.
    Whatever the dropped tensor learned is lost, and nothing says so at startup: SGLang's `load_weights`
    (`sglang/srt/models/llama_eagle3.py`) skips unknown names without a log line, and TensorRT-LLM is assumed
    to do the same (not verified, see `docs/engines.md`). Typical case: `layers.0.*` keys on SGLang ≤ 0.5.11,
    whose decoder is `midlayer.*` until the rename in 0.5.12 (sgl-project/sglang PR #24663).
    """
    rep, floats = c.rep, _dropped_float(c)
    if floats and not _decoder_missing(c):  # with an unfilled decoder, L002 tells the same story
        yield Hit(
            ERROR,
            f"{rep.engine} {rep.version} silently drops {len(floats)} float tensor(s) it has no parameter for: "
            f"{_list([t.name for t in floats])} (→ {_list([t.engine_name or '?' for t in floats], 2)}). "
            "Whatever they were trained to do is lost.",
            _bias_flag_fix(c, floats) or c.convert_fix,
        )
    for t in rep.tensors:
        if t.status == DROPPED and t not in floats:
            yield Hit(
                WARNING, f"{t.name} ({c.ckpt.tensors[t.name].dtype}) is skipped silently by {rep.engine} {rep.version}.", c.convert_fix
            )


def _bias_flag_fix(c: Context, floats: list) -> str | None:
    """Dropped tensors that are all biases of loaded weights, in a class that builds them only under a config flag
    (its `fc_bias` field, false here: Medusa's ResidualBlock, nn.Linear(bias=medusa_fc_bias)): the fix is the flag."""
    loaded = {t.name for t in c.rep.tensors if t.status == LOADED}
    flag = next((f for f in c.rep.cls.fields if f.name == "fc_bias" and f.kind == "bool"), None)
    if flag is None or c.rep.ns.get("fc_bias") or not all(t.name.endswith(".bias") and t.name[:-5] + ".weight" in loaded for t in floats):
        return None
    return f'set "{flag.sources[0]}": true in config.json: {c.rep.cls.name} builds these biases only then'


@rule(
    "L002",
    "engine parameters nothing fills (left at random init)",
    severity=ERROR,
    failure_modes=(1, 2, 9),
    fix="`specbridge convert PATH --engine NAME==VERSION -o OUT` for the layouts convert writes (EAGLE-3, DFlash, Llama "
    "EAGLE-1/2); for a missing EAGLE-3 head, add the tensor to the checkpoint, e.g. `lm_head` from the target with "
    "`specbridge convert PATH --engine NAME==VERSION --target T -o OUT`; a Medusa head is trained per head: ship its "
    "`lm_heads.N` tensors and build no more heads than were trained (H001).",
)
def unfilled_parameters(c: Context) -> Iterator[Hit]:
    """Nothing in the checkpoint fills an engine parameter (or only some of its tensor-parallel shards), so it
    keeps its random initial value. When decoder parameters are unfilled the finding also names the checkpoint
    tensors that were dropped instead (usually the same weights under another name).
    For the decoder this means accept length ≈ 1.00 (no draft token accepted) and throughput below no
    speculation; for the head, random logits. Neither engine reports it: SGLang never reports missing
    parameters, and vLLM's `load_weights` (`vllm/model_executor/models/llama_eagle3.py`) returns `None`, which
    switches off its own "weights not initialized" check. A drafter whose config declares `draft_vocab_size`
    with an untied head but ships no `lm_head` gets a fresh head on SGLang (sgl-project/sglang issue #27829).
    """
    rep, decoder, floats = c.rep, _decoder_missing(c), _dropped_float(c)
    if decoder:
        msg = (
            f"the drafter's decoder layer will run at random initialisation on {rep.engine} {rep.version}: "
            f"{len(decoder)} decoder parameter(s) ({_list([p.name for p in decoder], 2)}) are never filled"
        )
        params = {p.name for p in rep.params}
        held = [t for t in floats if t.engine_name in params]  # read into a parameter the loader then never writes
        unmatched = [t for t in floats if t.engine_name not in params]
        if unmatched:
            msg += f", because {len(unmatched)} tensor(s) ({_list([t.name for t in unmatched], 2)}) match no parameter and are skipped silently"
        if held:
            msg += f"{'; and' if unmatched else ', because'} {_list([t.name for t in held], 2)}: {held[0].reason}"
        yield Hit(
            ERROR, msg + ". Expect accept length ≈ 1.00 (no draft token accepted) and throughput below no speculation.", c.convert_fix
        )
    for p in rep.params:
        if p.status in (P_MISSING, P_PARTIAL) and p.role != "decoder":
            yield _unfilled(c, p)
        elif p.status == P_DEFAULT_INIT:
            yield Hit(
                WARNING,
                f"{p.name} is filled by nothing in the checkpoint on {rep.engine} {rep.version}; {p.note}.",
                "ship the trained tensor, or serve on a release whose class has no such parameter",
            )


def _unfilled(c: Context, p) -> Hit:
    """One unfilled parameter outside the decoder (the head, fc, a norm, the embedding)."""
    what = {
        "head": "the draft head (logits are random)",
        "fc": "the aux-state fusion",
        "norm": "a norm",
        "embed": "the embedding",
    }.get(p.role, p.role)
    shards = f" (shards {', '.join(p.missing_shards)})" if p.status == P_PARTIAL else ""
    if p.role == "routed experts":
        return _unfilled_experts(c, p)
    if p.role == "head" and c.fam.per_head:  # each Medusa head is trained on its own: the target's head is not one
        fix = (
            f"ship the trained {p.name} (a Medusa head has its own; the target's lm_head is not one), or build no more heads "
            "than were trained (medusa_num_heads; vLLM builds one per num_speculative_tokens, H001)"
        )
    elif p.role == "head":
        fix = "add the tensor to the checkpoint (e.g. lm_head from the target: specbridge convert … --target T)"
    else:
        fix = c.convert_fix
    return Hit(
        ERROR,
        f"{p.name}{shards} — {what} — is filled by nothing in the checkpoint on {c.eng}; "
        "it keeps its random initial value and drafts will be rejected.",
        fix,
    )


def _unfilled_experts(c: Context, p) -> Hit:
    """A fused routed-expert parameter (FusedMoE's w13_weight / w2_weight) some or all of whose experts no tensor
    fills: said by expert id, not by shard, with what the engine does with the slices left."""
    ids = sorted({int(s.split(".")[0]) for s in p.missing_shards}) if p.status == P_PARTIAL else None
    n = p.shape[0] if p.shape else None
    which = f"expert{'s' if len(ids) > 1 else ''} {_list([str(i) for i in ids], 8)} of {n}" if ids else f"all {n} routed experts"
    return Hit(
        ERROR,
        f"{p.name}: {which} {'is' if ids and len(ids) == 1 else 'are'} filled by nothing in the checkpoint on {c.eng}; FusedMoE allocates the parameter "
        "uninitialised (torch.empty): where the load starts, that MoE layer runs on whatever memory held and its drafts are rejected.",
        c.convert_fix,
    )


@rule(
    "L003",
    "tensor shape differs from the engine's parameter",
    severity=ERROR,
    failure_modes=(5, 6),
    fix="fix `config.json` so it describes these tensors (`hidden_size`, heads, `head_dim`, `intermediate_size`, `draft_vocab_size`, `target_hidden_size`).",
)
def shape_mismatch(c: Context) -> Iterator[Hit]:
    """The engine builds each parameter from `config.json` (hidden size, heads, `head_dim`, intermediate size,
    draft vocab, `target_hidden_size`); the checkpoint tensor has another shape. Loading raises a size
    mismatch (`size mismatch for … copying a param with shape …`) and the server does not start. Typical
    case: Qwen3-family drafters whose `head_dim` is not `hidden_size / num_attention_heads` and a config
    without `head_dim` (SafeAILab/EAGLE issue #315, sgl-project/sglang issue #8038).
    """
    for mm in c.rep.mismatched:
        yield Hit(
            ERROR,
            f"{mm['name']}: checkpoint has {mm['found']}, {c.eng} builds {mm['expected']} from config.json; loading raises a size mismatch.",
            "fix config.json so it describes these tensors (hidden_size, heads, head_dim, intermediate_size, draft_vocab_size, target_hidden_size)",
        )


@rule(
    "L004",
    "engine raises on checkpoint tensor names",
    severity=ERROR,
    failure_modes=(8, 38),
    fix="`specbridge convert PATH --engine NAME==VERSION -o OUT`.",
)
def raising_names(c: Context) -> Iterator[Hit]:
    """vLLM raises on a name it cannot place (`vllm/model_executor/models/llama_eagle3.py` `load_weights`):
    `ValueError: There is no module or parameter named …` from 0.32 (the WeightsMapper loader), `KeyError`
    from the hand-written `params_dict` loader before. The server fails at load. Typical causes: keys that
    already carry `model.` (vLLM adds it to every name but `lm_head`), `d2t` on a full-vocab drafter from
    0.32 (there is no `draft_id_to_target_id` parameter then), and a multi-layer drafter on releases that
    build one draft layer (≤ 0.10).
    """
    raising = [t for t in c.rep.tensors if t.status == RAISES]
    if raising:
        yield Hit(
            ERROR,
            f"{c.eng} refuses to load: {raising[0].reason} ({len(raising)} tensor(s): {_list([t.name for t in raising])}).",
            c.convert_fix,
        )


@rule(
    "L005",
    "engine version cannot dispatch this config",
    severity=ERROR,
    failure_modes=(8,),
    fix="`specbridge convert PATH --engine NAME==VERSION -o OUT` writes the config that engine version dispatches.",
)
def no_dispatch(c: Context) -> Iterator[Hit]:
    """The engine picks the drafter class from `config.json` and this version has none for it: SGLang dispatches
    on `architectures[0]` and reads no speculators-format config; vLLM needs a registered architecture, or a
    speculators config with the fields its translation requires (`Invalid speculators config structure`);
    vLLM 0.8.5 reads no speculators configs at all. The server fails at startup. The report still simulates
    the engine's EAGLE-3 class as if the config were converted, so the next problem shows in the same run: the
    class the engine maps the config's model_type to when it has one (vLLM: qwen3 → Eagle3Qwen3ForCausalLM; for
    EAGLE-1, mistral → EagleMistralForCausalLM, and the fix names the architecture to write, `MistralForCausalLM`,
    which vLLM prefixes with Eagle), else its Llama-style class. A release that has the family but not the
    drafter's architecture (SGLang 0.5.10 and `MistralForCausalLMEagle`) gets the fix of the first release with it.
    A release with no class at all for the drafter's family (a DFlash drafter before the engine's first DFlash
    class) has nothing to convert to: the fix names the first release that has one, and the rest of the report is
    what the first modelled release does with the checkpoint.
    """
    rep = c.rep
    if not rep.dispatched and rep.first_release and rep.simulated_release:  # a later release's class stands in
        serve = f"serve it on {rep.engine} {rep.first_release} or later"
        check = f"(specbridge check {c.path} --engine {rep.engine}=={rep.first_release})"
        yield Hit(
            ERROR,
            f"{c.eng} cannot dispatch this config: {rep.dispatch_message}. The rest of this report is what "
            f"{rep.engine} {rep.simulated_release}'s {rep.cls.name} does with it.",
            f"{serve}, the first with a class for {rep.first_release_arch!r} {check}"  # the family is older than the class
            if rep.first_release_arch
            else f"{serve} {check}; no layout loads on {c.eng}",  # no class for the family at all
        )
    elif not rep.dispatched:
        fix = rep.dispatch_fix or c.convert_fix
        if rep.first_release_arch:  # the family is here, this architecture's class comes later
            fix = (
                f"serve it on {rep.engine} {rep.first_release} or later, the first with a class for "
                f"{rep.first_release_arch!r} (specbridge check {c.path} --engine {rep.engine}=={rep.first_release}); "
                f"on {c.eng} only another class of the family loads: {fix}"
            )
        yield Hit(
            ERROR,
            f"{c.eng} cannot dispatch this config: {rep.dispatch_message}. "
            f"The rest of this report simulates its {c.fam.title if c.fam.checker == 'eras' else c.family} class ({rep.cls.name}) "
            "as if the config were converted.",
            fix,
        )


@rule(
    "L006",
    "engine raises while building the drafter from this config",
    severity=ERROR,
    failure_modes=(7, 8),
    fix="`specbridge convert PATH --engine NAME==VERSION -o OUT` writes a config that version can build; a multi-layer drafter needs an engine version that builds several layers.",
)
def build_raises(c: Context) -> Iterator[Hit]:
    """The config dispatches, but constructing the drafter class raises. Examples from the engines' source:
    SGLang ≤ 0.5.11 with `num_hidden_layers != 1` (`ValueError: EAGLE3 currently only supports 1 layer`,
    `LlamaForCausalLMEagle3.__init__`; multi-layer drafters load from 0.5.12), SGLang's Kimi MLA drafter with
    more than one layer, a config without a `draft_vocab_size` key on SGLang (an `AttributeError`; `null`
    means full vocab), and `"target_hidden_size": null` on SGLang (a `TypeError`: it tests the key, not the
    value). The server fails at startup.
    """
    rep = c.rep
    reasons = {t.reason for t in rep.tensors}
    for e in rep.errors:
        if e != rep.dispatch_message and not e.startswith("size mismatch") and e not in reasons:
            yield Hit(ERROR, f"{c.eng} raises while building {rep.cls.name}: {e}", c.convert_fix)


@rule(
    "L007",
    "checkpoint tensor replaced by the target's after loading",
    severity=INFO,
    failure_modes=(3, 4),
    fix="none needed — the drafter runs with the target's table, which is correct for a drafter trained with the target's frozen embedding; E002/E003 report the case where it is not.",
)
def overwritten(c: Context) -> Iterator[Hit]:
    """Information. The tensor loads, then the engine replaces it with the target's weights: SGLang's worker
    (`sglang/srt/speculative/eagle_worker_v2.py`, `eagle_worker.py` before 0.5.16) sets the target's
    embedding on the drafter unless `target_hidden_size` differs; vLLM 0.9–0.10 replaced the draft embedding
    whenever the shapes matched. The finding names the engine file that does it. This is what most drafters
    are trained for (a frozen copy of the target's table); E003 warns when the drafter's own table differs.
    """
    over = [t.name for t in c.rep.tensors if t.status == OVERWRITTEN]
    if over:
        yield Hit(
            INFO,
            f"{_list(over)} loaded, then replaced by the target's weights on {c.eng} ({c.rep.cls.share_cite}). "
            "Fine if the drafter was trained with the target's frozen table.",
        )


@rule(
    "L008",
    "checkpoint tensors the engine ignores by design",
    severity=INFO,
    failure_modes=(13,),
    fix="none needed — the engine derives or does not need what these tensors hold; serving is unaffected.",
)
def ignored_by_design(c: Context) -> Iterator[Hit]:
    """Information. Tensors the engine reads past on purpose: `t2d` (no engine uses it; SGLang turns `d2t` into
    `hot_token_id`), `mask_hidden` on vLLM ≥ 0.32 (parallel drafting only), `rotary_emb.inv_freq` (recomputed),
    unexpected `.bias` names on vLLM ≥ 0.32 (`ignore_unexpected_suffixes`; C010 says when that loses a trained
    `fc.bias`), and `embed_tokens` on TensorRT-LLM when draft and target hidden sizes match. Each is listed
    with the reason.
    """
    unused = [t for t in c.rep.tensors if t.status == UNUSED]
    if unused:
        yield Hit(INFO, f"ignored by design on {c.eng}: " + "; ".join(f"{t.name} ({t.reason})" for t in unused))


def _borrowed(c: Context) -> list:
    return [p for p in c.rep.params if p.status == P_SHARED and p.role in ("embed", "head") and not p.filled_by]


@rule(
    "L009",
    "embedding or head taken from the target",
    severity=INFO,
    failure_modes=(2, 4),
    fix="none needed — the target's table is the one such a drafter was trained with; L010 fires if the vocab makes the borrowed head unusable.",
)
def borrowed_from_target(c: Context) -> Iterator[Hit]:
    """Information. The checkpoint has no tensor for the embedding or the head and the engine shares the
    target's: vLLM when the draft has none (`vllm/v1/spec_decode/llm_base_proposer.py`
    `_maybe_share_embeddings` / `_maybe_share_lm_head`, vllm-project/vllm PR #28549), SGLang's
    `set_embed_and_head` (the head from the target when `draft_vocab_size` is null and the head untied,
    0.5.2+), TensorRT-LLM when no `lm_head` is shipped. Right for a full-vocab drafter trained with the
    target's tables; with a reduced vocab the borrowed head is wrong, which L010 reports.
    """
    for p in _borrowed(c):
        yield Hit(INFO, f"{p.name} is taken from the target model ({c.rep.cls.share_cite}).")


@rule(
    "L010",
    "head borrowed from the target while the draft vocab is reduced",
    severity=ERROR,
    failure_modes=(2, 9),
    fix="ship the trained `lm_head` [draft_vocab_size, hidden] in the checkpoint.",
)
def borrowed_head_reduced_vocab(c: Context) -> Iterator[Hit]:
    """The head is shared from the target (L009) but `draft_vocab_size` is smaller than the vocab. The target head
    has V rows while the drafter's ids are in [0, Vd) and go through `d2t`: draft ids and logits do not line
    up, and drafts are rejected (accept length ≈ 1.00).
    """
    vd, v = c.rep.ns.get("Vd"), c.rep.ns.get("V")
    if isinstance(vd, int) and isinstance(v, int) and vd != v and any(p.role == "head" for p in _borrowed(c)):
        yield Hit(
            ERROR,
            f"the head is borrowed from the target ({v} rows) but draft_vocab_size is {vd}: draft ids and logits will not line up.",
            "ship the trained lm_head [draft_vocab_size, hidden] in the checkpoint",
        )


@rule(
    "L011",
    "parameter left at an initial value that is right for this config",
    severity=INFO,
    failure_modes=(9, 13),
    fix="none needed — the initial value is what a full-vocab drafter needs; with a reduced vocab the missing `d2t` is an error instead (V006).",
)
def harmless_initial_value(c: Context) -> Iterator[Hit]:
    """Information. A parameter no tensor fills, but whose initial value is the right one for this config: vLLM
    before 0.32 always builds `draft_id_to_target_id` and initialises it to zeros, the identity map — correct
    for a full-vocab drafter that ships no `d2t` (`vllm/model_executor/models/llama_eagle3.py`).
    """
    for p in c.rep.params:
        if p.status == P_HARMLESS:
            yield Hit(INFO, f"{p.name} is not in the checkpoint; {p.note}.")


@rule(
    "L012",
    "tensor silently cut or zero-padded to the engine's shape",
    severity=ERROR,
    failure_modes=(5, 6),
    fix="fix `config.json` so it describes these tensors (`intermediate_size`, heads, `head_dim`).",
)
def cut_or_padded(c: Context) -> Iterator[Hit]:
    """SGLang's linear weight loaders (`sglang/srt/layers/linear.py` `weight_loader`) `narrow()` a checkpoint
    tensor that is wider than the parameter along the tensor-parallel dimension, and in the releases modelled
    from 0.5.5 on (`pad_or_narrow_weight`, for gate_up/down projections) zero-pad one that is narrower — with
    no message. The server starts, but the loaded drafter is not the trained one and acceptance drops. Found
    by running SGLang's real `load_weights` (`tests/test_conformance_sglang.py`).
    """
    bent = [t for t in c.rep.tensors if t.status in (TRUNCATED, PADDED)]
    if bent:
        yield Hit(
            ERROR,
            f"{c.eng} loads {len(bent)} tensor(s) that do not fit by cutting or zero-padding them, silently: "
            + "; ".join(f"{t.name} {t.reason}" for t in bent[:3])
            + (" …" if len(bent) > 3 else "")
            + ". The loaded drafter is not the trained one.",
            "fix config.json so it describes these tensors (intermediate_size, heads, head_dim)",
        )


@rule(
    "L013",
    "trained bias the engine never applies",
    severity=ERROR,
    families=("eagle", "dflash", "dflash2", "dspark"),
    fix="serve with an engine release whose class has the bias, or fold it away and retrain without it.",
)
def lost_bias(c: Context) -> Iterator[Hit]:
    """A `.bias` tensor whose layer the engine loads, but builds without a bias: the loader ignores or skips the
    bias (vLLM's AutoWeightsLoader ignores unexpected `.bias` names; SGLang skips names it has no parameter for),
    so the drafter runs without a term it was trained with. An EAGLE-1 drafter trained with an `fc` bias loses it on
    vLLM, whose `llama_eagle.py` builds fc with `bias=False`; no layout changes that, so `convert` carries the tensor
    and says so. SGLang's `LlamaForCausalLMEagle` is the reverse case: fc always has a bias, and a checkpoint without
    one (the published research weights, sgl-project/sglang #5773) leaves it at its random initialisation (L002's
    warning; `convert --engine sglang==…` writes zeros, what the drafter computed in training).
    For EAGLE-3 drafters C010 says the same from the config.
    """
    loaded = {t.name for t in c.rep.tensors if t.status == LOADED}
    lost = [t for t in c.rep.tensors if t.name.endswith(".bias") and t.status in (UNUSED, DROPPED) and t.name[:-5] + ".weight" in loaded]
    if lost:
        yield Hit(
            ERROR,
            f"{c.eng} builds {', '.join(t.name[:-5] for t in lost[:3])} without a bias: the trained "
            + ", ".join(t.name for t in lost[:3])
            + (" …" if len(lost) > 3 else "")
            + " never reach the model (ignored or skipped without an error).",
            f"no checkpoint layout makes {c.eng} apply it: serve with an engine release whose class builds this bias, or retrain without it",
        )


@rule(
    "L014",
    "launched with another speculative method than the drafter's family",
    severity=ERROR,
    families=("eagle", "peagle", "dflash", "dflash2", "dspark", "mtp", "causal_lm"),
    fix="launch with the method the drafter's class is built by (SGLang `--speculative-algorithm`, vLLM `method`); "
    "the finding's fix is the launch line with that method.",
)
def launch_method(c: Context) -> Iterator[Hit]:
    """With `--launch`: the engine builds the drafter class that the launch line's algorithm names (SGLang's
    `--speculative-algorithm`, vLLM's `--speculative-config` `method`), not the one the checkpoint's family needs.
    A DFlash drafter launched as EAGLE3, or an EAGLE-1 drafter launched as EAGLE3, is built as another network
    (or refused at start-up); a plain draft model launched as EAGLE runs through an EAGLE proposer. The method that
    builds each class is a row fact (`DraftClass.methods`; a plain draft model's: the release's DRAFT_MODEL row);
    what the release does with the wrong one, where read, is the class's `launch_checks` rows of code L014: SGLang's
    EAGLE3 worker asks an EAGLE-1 class for the hot-token ids only EAGLE-3 classes have (AttributeError at start-up,
    every release read); vLLM's `method: eagle3` renames an EAGLE-1 drafter's architecture to
    `Eagle3{arch}` (vllm/transformers_utils/configs/eagle.py), whose fc reads three target states. A line without a
    method runs the one the release infers (L015). The fix is the line itself with the right method.
    """
    methods = _class_methods(c)
    algo, how = _launch_method(c)
    if not (methods and algo and algo not in methods):
        return
    name = c.rep.cls.name if c.rep is not None else "a plain draft model"
    ns = {**c.rep.ns, "method": algo} if c.rep is not None else {"method": algo}
    what = [chk.message.format(**ns) for chk in _rows(c, "L014") if _holds(c, chk, ns)]
    yield Hit(
        ERROR,
        f"launched with {algo}{how} but {name} is built by {' / '.join(methods)} on {_eng(c)}: "
        + ("; ".join(what) if what else "the engine builds another drafter class from this checkpoint, or refuses it at start-up")
        + ".",
        right_line(c, methods[0]),
    )


@rule(
    "L015",
    "speculative method the engine infers from the draft",
    severity=INFO,
    families=("eagle3", "eagle", "peagle", "dflash", "dflash2", "dspark", "causal_lm"),
    fix="none needed when it is the drafter's method; name the method in the launch line all the same.",
)
def inferred_method(c: Context) -> Iterator[Hit]:
    """With `--launch` on vLLM: a speculative config without `method` (or with `method: draft_model`, which vLLM
    tests again) runs the method vLLM infers: `SpeculativeConfig.__post_init__` sets `draft_model`, then tests the
    draft path (lower-cased: `eagle-` → eagle, `eagle3` → eagle3, `dflash`, `dspark`), the draft's architectures
    (MuseGlimmerAssistantModel → dflash; Qwen3DSparkModel, Gemma4DSparkModel, … → dspark) and its model_type
    (medusa, mlp_speculator), first match wins (vllm/config/speculative.py @ 0.27.0, 0.29.0, 0.32.0; the tests per
    release are the engine's METHOD_INFERENCE rows). An EAGLE-3 drafter in a directory named `my-drafter` runs as a
    plain draft model; an EAGLE-1 drafter named `…EAGLE3-distill…` as EAGLE-3, whose fc never gets its input. This
    says which method the release will run; L014 (A004 for EAGLE-3) is the error when it is not the drafter's.
    """
    if c.launch is None or c.launch.draft is None:
        return
    eng = _place(c)
    if eng is None or eng[0] != c.launch.engine:
        return
    row = method_inference(*eng)
    named = c.launch.algorithm
    if row is None:
        if not named and eng[0] in METHOD_INFERENCE:
            yield Hit(
                INFO,
                f"no method named: {_eng(c)} infers one from the draft, but its inference was not read for this "
                f"release (read from {METHOD_INFERENCE[eng[0]][0].first}); name the method in the launch line",
            )
        return
    if named and named not in row.retests:
        return
    algo = infer_method(row, named, c.launch.draft, c.ckpt.config or {})
    said = f"method {named.lower()} is tested again" if named else "no method named"
    yield Hit(INFO, f"{said}: {_eng(c)} infers {algo} from the draft {c.launch.draft!r} ({row.cite})")


@rule(
    "L016",
    "P-EAGLE launched without parallel drafting, or on a runner that refuses it",
    severity=WARNING,
    families=("peagle",),
    fix='add "parallel_drafting": true to the speculative config and leave Model Runner V1 (no VLLM_USE_V2_MODEL_RUNNER=1); '
    "`specbridge launch` prints that line.",
)
def parallel_drafting(c: Context) -> Iterator[Hit]:
    """With `--launch` on vLLM: a P-EAGLE drafter is an EAGLE-3 drafter trained to fill several mask slots in one
    forward (speculators_model_type `peagle`, a `mask_hidden` tensor, a mask token). vLLM drafts that way only with
    `parallel_drafting: true` in the speculative config; its speculators translation writes it (method eagle3 plus
    parallel_drafting) only when the drafter itself is served as the model (`vllm serve DRAFT`,
    vllm/transformers_utils/configs/speculators/base.py and transformers_utils/config.py maybe_override_with_speculators,
    0.27.0, 0.29.0, 0.32.0). Given through `--speculative-config` without it, the drafter runs as plain EAGLE-3, one
    token per forward, `mask_hidden` unused: it serves, slower than it was trained to. Model Runner V2 does not
    support parallel drafting for EAGLE: VLLM_USE_V2_MODEL_RUNNER=1 with it is refused at start-up
    (vllm/config/vllm.py). The rows are the P-EAGLE classes' `launch_checks` of code L016.
    """
    if c.launch is None or c.rep is None or c.launch.engine != c.rep.engine:
        return
    algo, _ = _launch_method(c)
    if algo is None or algo not in c.rep.cls.methods:
        return
    row = LAUNCHERS[c.rep.engine]
    runner = next((r for r, env in row.runner_env.items() if c.launch.env.get(env.split("=", 1)[0]) == env.split("=", 1)[1]), None)
    ns = {**c.rep.ns, "method": algo, "parallel": bool(c.launch.parallel_drafting), "runner": runner, "steps": c.launch.steps}
    for chk in _rows(c, "L016"):
        if _holds(c, chk, ns):
            yield Hit(
                ERROR if chk.severity == "error" else WARNING,
                f"{_eng(c)}: " + chk.message.format(**ns),
                right_line(c, algo) + (f" (without {row.runner_env[runner]})" if runner else ""),
            )


def _class_methods(c: Context) -> tuple[str, ...]:
    if c.rep is not None:
        return c.rep.cls.methods
    row = c.draft_place.row if c.draft_place is not None else None
    return (row.method.upper(),) if row is not None and row.method else ()


def _place(c: Context) -> tuple[str, str] | None:
    if c.rep is not None:
        return c.rep.engine, c.rep.version
    if c.draft_place is not None:
        return c.draft_place.engine, c.draft_place.version
    return None


def _eng(c: Context) -> str:
    e = _place(c)
    return f"{e[0]} {e[1]}" if e else "the engine"


def _rows(c: Context, code: str):
    return [chk for chk in c.rep.cls.launch_checks if chk.code == code] if c.rep is not None else []


def _holds(c: Context, chk, ns: dict) -> bool:
    with row_context(lambda: f"{row_origin(c.rep.engine, c.rep.cls)}: launch check {chk.when!r}"):
        return bool(value_or(chk.when, ns, False))  # the config's or the line's values cannot decide: it does not hold


def right_line(c: Context, method: str) -> str:
    """The fix: the launch line with the method that builds the drafter's class (and, on vLLM, the family's further
    speculative-config keys: P-EAGLE's parallel_drafting)."""
    fam = LAUNCHERS[c.launch.engine].families.get(c.family)
    extra = fam.spec_extra if fam is not None and method.lower() == (fam.spec_method or "").lower() else ()
    try:
        line = corrected_line(c.launch, method, extra)
    except (ValueError, KeyError):
        return f'launch with {method} (SGLang: --speculative-algorithm {method}; vLLM: "method": "{method.lower()}")'
    eng = _place(c)
    row = method_inference(*eng) if eng is not None and eng[0] == c.launch.engine and c.launch.draft else None
    hit = inference_test(row, c.launch.draft, c.ckpt.config or {}) if row is not None and method in row.retests else None
    if hit is not None and hit[2] != method:  # the named method is tested again, and this draft fails the test
        return (
            f"{eng[0]} {eng[1]} tests {method.lower()} against the draft as well and the draft's {hit[0]} matches "
            f"{hit[1]!r} ({hit[2]}): "
            + (
                "serve the draft from a path without it (a copy or a link), with: "
                if hit[0] == "path"
                else "change that in its config, then: "
            )
            + line
        )
    return f"launch with {method}: {line}"


def _launch_method(c: Context) -> tuple[str | None, str]:
    """The method the launch line runs: named, or inferred the way the engine release's METHOD_INFERENCE row says
    (vLLM: from the draft's path, architectures and model_type; an explicit draft_model is tested again)."""
    if c.launch is None:
        return None, ""
    named = c.launch.algorithm
    eng = _place(c)
    same = eng is not None and eng[0] == c.launch.engine and c.launch.draft is not None
    row = method_inference(*eng) if same else None
    if row is None or (named and named not in row.retests):
        return named, ""
    algo = infer_method(row, named, c.launch.draft, c.ckpt.config or {})
    if algo == named:
        return named, ""
    said = f"method {named.lower()}, which" if named else "no method given:"
    return algo, f" ({said} {eng[0]} {eng[1]} infers it from the draft {c.launch.draft!r})"
