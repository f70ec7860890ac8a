"""C rules: the drafter's config against the target's and the launch command, and its architecture
variant flags against what the engine version's class reads."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ..checkpoint.target import rope_of
from ..engines.expr import evaluate
from ..engines.launch import max_draft_tokens
from ..engines.registry import LAUNCHERS
from ..families.fit import FIT_FAMILIES
from ..families.table import BY_NAME
from .context import Context
from .findings import ERROR, INFO, WARNING
from .registry import Hit, rule


@rule(
    "C001",
    "draft context shorter than the served context",
    severity=WARNING,
    failure_modes=(23,),
    fix="cap the served context, or train/convert the drafter for the full length.",
)
def short_context(c: Context) -> Iterator[Hit]:
    """The draft's `max_position_embeddings` is below the served context (the launch's context length, else the
    target's `max_position_embeddings`). Drafts degrade past that many tokens; vLLM 0.24 crashed with an index
    assert there.
    """
    t, L, cfg = c.target, c.launch, c.d.cfg
    served = (L.context_length if L and L.context_length else None) or (t.max_position_embeddings if t else None)
    dmax = cfg.get("max_position_embeddings") if type(cfg.get("max_position_embeddings")) is int else None
    if served and dmax and dmax < served:
        yield Hit(
            WARNING,
            f"draft max_position_embeddings {dmax} < served context {served}: drafts degrade past {dmax} tokens "
            "(vLLM 0.24 crashed with an index assert there).",
            "cap the served context, or train/convert the drafter for the full length",
        )


@rule(
    "C002",
    "RoPE settings differ from the target's",
    severity=WARNING,
    failure_modes=(22,),
    fix="confirm the drafter was trained with this RoPE, and write the training run's RoPE settings into `config.json` if the export lost them.",
)
def rope_differs(c: Context) -> Iterator[Hit]:
    """The draft's `rope_theta`, or a non-default `rope_type`, differs from the target's. A drafter attends with
    the positions it was trained with; a RoPE setting lost in export (transformers 5 moved `rope_theta` into
    `rope_parameters`) lowers acceptance, more so on long contexts.
    """
    if c.target is None:
        return
    dr, tr = rope_of(c.d.cfg), c.target.rope
    if dr.get("rope_theta") and tr.get("rope_theta") and float(dr["rope_theta"]) != float(tr["rope_theta"]):
        yield Hit(
            WARNING,
            f"draft rope_theta {dr['rope_theta']} ≠ target rope_theta {tr['rope_theta']}.",
            "confirm the drafter was trained with this RoPE (transformers 5 moved rope_theta into rope_parameters)",
        )
    if dr.get("rope_type") not in (None, "default") and dr.get("rope_type") != tr.get("rope_type"):
        yield Hit(WARNING, f"draft rope_type {dr['rope_type']!r} ≠ target's {tr.get('rope_type')!r}.")


@rule(
    "C003",
    "fp16 drafter with a bf16 target",
    severity=WARNING,
    failure_modes=(28,),
    fix="serve the drafter in bfloat16.",
    families=("eagle3", *(f for f in FIT_FAMILIES if BY_NAME[f].checker != "head")),  # an MTP head is the target's
)
def fp16_with_bf16(c: Context) -> Iterator[Hit]:
    """The draft config is float16 and the target bfloat16: fp16 overflows on degenerate draft branches, giving NaN
    logits (sgl-project/sglang PR #27883). The dtype of a drafter of every family with a target of its own (EAGLE-3,
    DFlash, DFlash2, DSpark, EAGLE-1/2, Medusa; an MTP head is the target's own checkpoint).
    """
    if c.target is None:
        return
    ddt = str(c.d.cfg.get("torch_dtype") or c.d.cfg.get("dtype") or "").lower()
    tdt = str(c.target.dtype or "").lower()
    if "float16" in ddt and "bfloat16" not in ddt and "bfloat16" in tdt:
        yield Hit(
            WARNING,
            "draft dtype float16 with a bfloat16 target: fp16 overflows on degenerate draft branches (NaN logits).",
            "serve the drafter in bfloat16",
        )


def _quantization(c: Context) -> dict | None:
    q = c.target.quantization if c.target else None
    return q if isinstance(q, dict) else None


@rule(
    "C004",
    "quantized target, unquantized drafter",
    severity=WARNING,
    failure_modes=(26,),
    fix="give the draft its own (unquantized) setting, e.g. `--speculative-draft-model-quantization unquant` on SGLang.",
)
def quantized_target(c: Context) -> Iterator[Hit]:
    """The target has a quantization config and the drafter none. SGLang copies `--quantization` to the draft unless
    told otherwise, and some vLLM releases built the draft with the verifier's quant config (vllm-project/vllm
    PRs #25883, #26590): the unquantized drafter's weights are then read as quantized and it fails or drafts
    garbage. An error for an SGLang launch with `--quantization` and no draft setting; a warning otherwise.
    """
    q, L = _quantization(c), c.launch
    if q and "quantization_config" not in c.ckpt.config:
        copies = L is not None and LAUNCHERS[L.engine].copies_quantization
        sev = ERROR if (copies and L.quantization and not L.draft_quantization) else WARNING
        yield Hit(
            sev,
            f"the target is quantized ({q.get('quant_method', '?')}) and the drafter is not: SGLang copies --quantization "
            "to the draft unless told otherwise; some vLLM releases built the draft with the verifier's quant config.",
            "give the draft its own (unquantized) setting, e.g. --speculative-draft-model-quantization unquant on SGLang",
        )


@rule(
    "C005",
    "rotated target",
    severity=WARNING,
    failure_modes=(27,),
    fix="measure offline acceptance on the deployed target (`specbridge eval`).",
)
def rotated_target(c: Context) -> Iterator[Hit]:
    """The target's quantization is rotation-based (QuaRot/SpinQuant/Hadamard): its hidden states live in another
    basis than the drafter saw in training, so the aux states feeding `fc` are not what it learned and
    acceptance can collapse with no error.
    """
    q = _quantization(c)
    if q and any(k in str(q).lower() for k in ("quarot", "spinquant", "rotation", "hadamard")):
        yield Hit(
            WARNING,
            "the target is rotated (QuaRot/SpinQuant-style): its hidden states live in another basis than the drafter saw.",
            "measure offline acceptance on the deployed target (specbridge eval)",
        )


@rule(
    "C006",
    "draft path missing or equal to the target",
    severity=ERROR,
    failure_modes=(37,),
    fix='pass `--speculative-draft-model-path` (SGLang) / `"model"` in `--speculative-config` (vLLM), pointing at the drafter checkpoint.',
)
def draft_path(c: Context) -> Iterator[Hit]:
    """With `--launch`: the command names no draft model, or the target as the draft. SGLang then loads the target
    as the draft (its weights twice) and crashes (sgl-project/sglang issue #36528).
    """
    L = c.launch
    if L is None:
        return
    if not L.draft:
        yield Hit(
            ERROR,
            "the launch names no draft model path: SGLang then loads the target as the draft (weights twice) and crashes.",
            'pass --speculative-draft-model-path (SGLang) / "model" in --speculative-config (vLLM)',
        )
    elif c.target and L.target and (Path(L.draft) == Path(L.target) or L.draft == L.target):
        yield Hit(ERROR, "the draft path is the target path.", "point the draft path at the drafter checkpoint")


@rule(
    "C007",
    "draft sliding window the engine ignores",
    severity=WARNING,
    failure_modes=(24,),
    fix="if the drafter was trained with full attention, remove the sliding-window settings from its `config.json`; otherwise measure what the engine's full attention costs with `specbridge eval`.",
)
def sliding_window(c: Context) -> Iterator[Hit]:
    """The draft config asks for sliding-window attention (`sliding_window`, or non-full `layer_types`). vLLM
    builds the draft attention from the verifier's settings and ignores it, so the drafter runs with other
    attention than it was trained with.
    """
    cfg = c.d.cfg
    sw, lt = cfg.get("sliding_window"), cfg.get("layer_types")
    if (sw and cfg.get("use_sliding_window", True)) or (isinstance(lt, list) and any(x != "full_attention" for x in lt)):
        yield Hit(
            WARNING,
            "the draft config asks for sliding-window attention: vLLM builds the draft attention from the verifier's settings and ignores it.",
        )


@rule(
    "C008",
    "launch flags the engine adjusts or rejects",
    severity=ERROR,
    failure_modes=(30,),
    fix="change the flag as the message says: `--speculative-num-draft-tokens` = steps + 1 for topk 1, at most topk × steps + 1 otherwise; topk 1 or another attention backend with fa3; `num_speculative_tokens` in vLLM's `--speculative-config`.",
)
def launch_flags(c: Context) -> Iterator[Hit]:
    """With `--launch`, the engine's own checks on the speculative flags: SGLang with `--speculative-eagle-topk 1`
    adjusts `--speculative-num-draft-tokens` to num_steps + 1 (warning); with topk > 1 it rejects more draft
    tokens than the tree's topk × steps + 1 nodes, and `--attention-backend fa3` supports only topk 1 for EAGLE
    (sgl-project/sglang issue #5491); vLLM rejects a speculative config without `num_speculative_tokens`
    ("A speculative model was provided, but num_speculative_tokens was not provided"). Errors fail the launch.
    """
    L = c.launch
    if L is None:
        return
    row = LAUNCHERS[L.engine]  # the checks this engine's argument parsing makes (its LAUNCH row)
    if L.topk is not None and L.steps is not None:
        if row.topk1_draft_tokens and L.topk == 1 and L.draft_tokens is not None:
            want = evaluate(row.topk1_draft_tokens, {"steps": L.steps, "topk": L.topk})
            if L.draft_tokens != want:
                yield Hit(
                    WARNING,
                    f"topk 1 with --speculative-num-draft-tokens {L.draft_tokens}: SGLang adjusts it to num_steps + 1 = {want}.",
                    f"--speculative-num-draft-tokens {want}",
                )
        if row.tree_bound and L.topk > 1 and L.draft_tokens is not None and L.draft_tokens > max_draft_tokens(L.steps, L.topk):
            yield Hit(ERROR, f"--speculative-num-draft-tokens {L.draft_tokens} exceeds the tree's {L.topk}×{L.steps}+1 nodes.")
        if row.fa3_topk1_only and L.topk > 1 and (L.attention_backend or "").lower() == "fa3":
            yield Hit(
                ERROR,
                "--attention-backend fa3 supports only --speculative-eagle-topk 1 for EAGLE (sglang #5491).",
                "use topk 1 or another backend",
            )
    if row.requires_steps and L.algorithm and not L.steps and "speculators_config" not in c.ckpt.config and "n_predict" not in c.d.cfg:
        yield Hit(ERROR, row.requires_steps)


@rule(
    "C009",
    "draft tensor parallelism ignored",
    severity=WARNING,
    failure_modes=(29,),
    fix="set `draft_tensor_parallel_size` to 1 or to the target's tensor-parallel size.",
)
def draft_tp(c: Context) -> Iterator[Hit]:
    """The launch sets `draft_tensor_parallel_size` to neither 1 nor the target's TP; several vLLM releases ignore
    it and run the draft at the target's TP (vllm-project/vllm issues #31345, #31398).
    """
    L = c.launch
    if L and L.draft_tp is not None and L.draft_tp not in (1, L.tp or 1):
        yield Hit(
            WARNING, f"draft_tensor_parallel_size {L.draft_tp} is neither 1 nor the target TP {L.tp or 1}; several vLLM releases ignore it."
        )


@rule(
    "C010",
    "fc.bias without the bias flag",
    severity=ERROR,
    failure_modes=(38,),
    fix='set `"bias": true` where the engine reads it, or retrain without the bias.',
)
def fc_bias_flag(c: Context) -> Iterator[Hit]:
    """`fc.bias` is in the checkpoint but `config.json` has no `bias` flag: engines build `fc` without a bias and
    ignore (vLLM) or drop (SGLang) it, so the drafter runs without a trained term.
    """
    if c.d.has("fc.bias") and not c.d.cfg.get("bias"):
        yield Hit(
            ERROR,
            "fc.bias is in the checkpoint but config.json has no bias flag: engines build fc without a bias and ignore (vLLM) or drop (SGLang) it.",
            'set "bias": true where the engine reads it, or retrain without the bias',
        )


# which flags each engine version's EAGLE-3 class reads: the era row's `variants` (src/specbridge/engines/*.py)


def variant_flags_on(c: Context) -> set[str]:
    """The non-default architecture flags this drafter was trained with."""
    cfg = c.d.cfg
    on = {f for f in ("norm_before_fc", "fc_norm", "norm_output", "use_aux_norm") if cfg.get(f) is True}
    if isinstance(cfg.get("eagle_config"), dict) and cfg["eagle_config"].get("norm_before_fc"):
        on.add("norm_before_fc")
    if "use_aux_norm" in on:
        on.discard("use_aux_norm")
        on.add("fc_norm")
    # norm_before_residual: speculators' default is true, vLLM's plain-config default false
    nbr = cfg.get("norm_before_residual")
    if nbr is True or (nbr is None and c.d.config_style == "speculators"):
        on.add("norm_before_residual")
    return on


@rule(
    "C011",
    "architecture variant flag the engine version does not read",
    severity=ERROR,
    failure_modes=(21,),
    fix="use an engine version that implements the flag; for `norm_before_residual` on SGLang, train with `norm_before_residual` false for SGLang, or serve with vLLM (which reads the flag).",
)
def unread_variant(c: Context) -> Iterator[Hit]:
    """The drafter turns on an architecture variant (`norm_before_fc`, `fc_norm`/`use_aux_norm`, `norm_output`,
    `norm_before_residual`) that this engine version's EAGLE-3 class does not read, so it runs as a different
    network than it was trained as (an error). Which flags each release reads is its era row's `variants`
    (`src/specbridge/engines/*.py`, read in each release's wheel): vLLM reads `norm_before_residual` from 0.10.1,
    `norm_before_fc` from 0.18, `fc_norm`/`norm_output` from 0.22; SGLang reads `fc_norm`/`norm_output` from
    0.5.12 and `norm_before_fc` from 0.5.17. For
    `norm_before_residual`: speculators trains with it true; vLLM's plain-config default is false and SGLang's
    `llama_eagle3` does not read it (`sglang/srt/models/llama_eagle3.py`, every wheel read from 0.4.6.post5 on), so a
    speculators drafter served by SGLang runs its residual in the other order — a warning (not confirmed at
    run time; `specbridge eval --engine sglang` measures the cost). Information when a speculators config leaves
    `norm_before_residual` unset: vLLM's translation defaults it to true, and a converter writing a plain config
    must write it explicitly.
    """
    known = c.rep.era.variants
    if known is None:
        return
    for f in sorted(variant_flags_on(c) - known):
        sglang_nbr = f in c.rep.era.variants_unconfirmed  # SGLang's norm_before_residual: read, never measured
        yield Hit(
            WARNING if sglang_nbr else ERROR,
            f"the drafter uses {f} = true but {c.eng}'s EAGLE-3 class does not read it: the drafter runs as a different network than it was trained as"
            + (
                " (SGLang's llama_eagle3.py takes the residual before hidden_norm, always: `residual = hidden_states` in "
                "LlamaDecoderLayer.forward; specbridge eval --engine sglang measures the cost)"
                if sglang_nbr
                else ""
            )
            + ".",
            "train with norm_before_residual false for SGLang, or serve with vLLM (which reads the flag)"
            if sglang_nbr
            else "use an engine version that implements it (see docs/rules.md#c011)",
        )
    if c.d.config_style == "speculators" and c.d.cfg.get("norm_before_residual") is None:
        yield Hit(
            INFO,
            "norm_before_residual is unset: vLLM's speculators translation defaults it to true; a converter writing a plain "
            "config must write it explicitly.",
        )
