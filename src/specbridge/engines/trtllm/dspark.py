"""TensorRT-LLM's DSpark rows (decoding_type DSpark): GQADSparkForCausalLM, DFlash's class plus the DSpark heads."""

from __future__ import annotations

from ...record import replace
from ..spec import (
    Derive,
    Dispatch,
    DraftClass,
    Drop,
    FamilyRange,
    Field,
    LaunchCheck,
    Param,
    Raise,
    Read,
    RenameRegex,
)
from .common import TDS
from .dflash import _trt_dflash_class

# --- DSpark (decoding_type DSpark): GQADSparkForCausalLM -------------------------------------------------------------
# Read, never run. DSparkDecodingConfig (decoding_type DSpark, spec_dec_mode DSPARK, pytorch backend only) is in the
# llm_args of the 1.3.0rc24 documentation build (gh-pages 32b086cd; the earliest release read that has it: 1.3.0rc20's
# copy was not searched to the class and earlier ones were not read for it, so the first pre-release with DSpark is not
# established), in 1.3.0rc26's API index and in the 1.3.0rc27, 1.4.0rc1 and 1.4.0rc4 references. It came with
# NVIDIA/TensorRT-LLM PR #15808 ("Add DeepSeek DSpark speculative decoding"). The loader was read in
# tensorrt_llm/_torch/models/modeling_dspark.py at 008b54fe and in an earlier stored copy (commit not recorded), both of
# no established release: a standalone drafter (a Qwen3DSparkModel checkpoint) is GQADSparkForCausalLM, DFlash's class
# (backbone, fc, hidden_norm, load_weights remap, embed_tokens and lm_head from the target) plus the DSpark heads.
TDS_READ = f"{TDS} @ 008b54fe (release not established; read, not run)"
TDS_CITE = f"{TDS} @ 008b54fe _DSparkHeadMixin (_init_dspark_heads, _take_dspark_head_weights)"
# resolve_dspark_head_config (modeling_dflash.py): dspark_config, then dflash_config, then top-level dspark_<key>, <key>
_HEAD_KEYS = lambda k: (f"dspark_config.{k}", f"dflash_config.{k}", f"dspark_{k}", k)  # noqa: E731
TRT_DSPARK_FIELDS = (
    # assumed, not read: where a DSpark config's target layers are found (DeepSeek's Qwen3 drafters write them at the
    # top level); fc itself is built from the tensor's shape, so this only sets the width the captured states must have
    Field(
        "n_ids",
        (
            "len:dflash_config.target_layer_ids",
            "len:dspark_config.target_layer_ids",
            "len:dspark_target_layer_ids",
            "len:target_layer_ids",
        ),
        None,
    ),
    Field("rank", _HEAD_KEYS("markov_rank"), 0),
    Field("mht", _HEAD_KEYS("markov_head_type"), "vanilla", kind="any"),
    Field("causal", _HEAD_KEYS("causal"), False, kind="bool"),
)
# _init_dspark_heads: str(resolve_dspark_head_config(cfg, "markov_head_type") or "vanilla").lower(), at 008b54fe and in
# the earlier copy (GQADSparkForCausalLM.__init__): any case of vanilla passes, an empty value is vanilla
TRT_DSPARK_DERIVE = (Derive("mht_l", "lower(mht) if mht else 'vanilla'"),)
TRT_DSPARK_RAISES = (
    Raise(
        "rank > 0 and mht_l != 'vanilla'",
        "ValueError: DSpark drafter declares a markov_head_type other than 'vanilla'; only 'vanilla' is supported "
        "(gated/rnn heads need per-step hidden features). (TensorRT-LLM lower-cases the value first: 'Vanilla' passes)",
        f"{TDS_CITE} (str(… or 'vanilla').lower())",
    ),
    Raise(
        "causal",
        "ValueError: DSpark drafter sets causal=true; the block decode only supports the non-causal DSpark convention.",
        f"{TDS_CITE}",
    ),
)
# max_draft_len against the trained block: the shift_label layout (default on) drafts a whole block from the anchor
# slot, block_size == max_draft_len for both published drafters (the _init_dspark_heads comment); what the worker does
# with a different value was not read
TRT_DSPARK_LAUNCH = (
    LaunchCheck(
        "steps is not None and block is not None and steps < block",
        "warning",
        "max_draft_len {steps} drafts {steps} of the {block} positions of the drafter's trained block (block_size "
        "{block}): each step accepts at most {steps} + 1 tokens; accept lengths published for the drafter were measured "
        "with the whole block",
        f"{TDS} @ 008b54fe _init_dspark_heads (shift_label: block_size == max_draft_len)",
        code="D005",
    ),
    LaunchCheck(
        "steps is not None and block is not None and steps > block",
        "warning",
        "max_draft_len {steps} is above the drafter's trained block (block_size {block}): the published drafters set "
        "block_size == max_draft_len; what the DSpark worker does past the block was not read (it may refuse at "
        "start-up, as DFlash's does)",
        f"{TDS} @ 008b54fe _init_dspark_heads",
        code="D005",
    ),
)


def _trt_dspark_class() -> DraftClass:
    """GQADSparkForCausalLM: DFlashForCausalLM (same backbone resolution, load_weights remap and sharing) plus the
    Markov head ([vocab, markov_rank] tensors kept as loaded, no module) and the confidence head's tensors (loaded, not
    used). The head tensors are taken out before DFlash's remap, under either spelling."""
    base = _trt_dflash_class()
    return replace(
        base,
        name="GQADSparkForCausalLM",
        file=TDS_READ,
        fields=tuple(f for f in base.fields if f.name != "n_ids") + TRT_DSPARK_FIELDS,
        derive=base.derive + TRT_DSPARK_DERIVE,
        params=base.params
        + (
            # shape checked against (config.vocab_size, markov_rank): a draft vocabulary head of another width raises
            Param("markov_head.markov_w1.weight", ("V", "rank"), when="rank > 0", role="markov head"),
            Param("markov_head.markov_w2.weight", ("V", "rank"), when="rank > 0", role="markov head"),
        ),
        loader=(
            # _DSPARK_HEAD_WEIGHT_ALIASES: the bare spellings are the nested ones
            RenameRegex(pattern=r"^markov_w([12])\.weight$", new=r"markov_head.markov_w\1.weight", cite=TDS_CITE),
            Drop(
                "confidence_head.",
                why="loaded as tensors but unused: confidence-scheduled verification is not implemented (drafting always "
                "proposes max_draft_len)",
                cite=TDS_CITE,
            ),
            Drop("confidence_proj.", why="the confidence head's bare spelling: loaded, unused", cite=TDS_CITE),
        )
        # DFlash's remap, the head names left out of its model. prefix (they are taken before it)
        + tuple(
            RenameRegex(pattern=r"^(?!fc\.weight$|hidden_norm\.weight$|model\.|markov_head\.)", new=st.b, cite=st.cite)
            if isinstance(st, RenameRegex) and st.a.startswith("^(?!fc")
            else st
            for st in base.loader
        ),
        unknown_under="markov_head.",
        unknown_under_message="ValueError: DSpark drafter ships markov_w1/markov_w2 but markov_rank resolved to 0. The "
        "checkpoint's head switches were not found in dspark_config, dflash_config, or at the top level; loading it would "
        "drop the Markov head silently.",
        raises=base.raises + TRT_DSPARK_RAISES,
        methods=("DSPARK",),  # speculative_config.decoding_type: DSpark (DSparkDecodingConfig)
        launch_checks=TRT_DSPARK_LAUNCH,
        share_cite=f"{TDS} @ 008b54fe (GQADSparkForCausalLM keeps DFlashForCausalLM.load_weights_from_target_model: "
        "embed_tokens and lm_head from the target)",
        notes=base.notes
        + (
            "markov_rank > 0 with markov_w1 or markov_w2 missing raises ValueError ('DSpark drafter declares markov_rank=… "
            "but the checkpoint is missing …'); a shape other than (vocab_size, markov_rank) raises ValueError",
            "the confidence head is loaded and unused: drafting always proposes max_draft_len tokens",
            "the first form (1.3.0rc24's DSparkDecodingConfig) documents markov_rank as read from the draft config's "
            "dspark_markov_rank; which spellings that loader resolved was not read",
        ),
    )


RANGES = (
    FamilyRange(
        engine="trtllm",
        family="dspark",
        first="1.3.0",
        last=None,
        dispatch=Dispatch(
            "trtllm",
            {"*": "GQADSparkForCausalLM"},
            "GQADSparkForCausalLM",
            cite=f"{TDS} @ 008b54fe _build_dspark_draft (register_draft_model(DSPARK)): a drafter embedded in the target "
            "checkpoint builds DSv4DSparkForCausalLM, an MLA config MLADSparkForCausalLM, any other GQADSparkForCausalLM",
        ),
        classes={"GQADSparkForCausalLM": _trt_dspark_class()},
        begins="approximate: DSparkDecodingConfig is in 1.3.0rc24's llm_args (documentation build, gh-pages 32b086cd), "
        "the earliest release read that has it; whether 1.3.0rc15–rc23 have it was not established, and 1.3.0rc1–rc23 "
        "are placed with 1.3.0 (a pre-release is read as the release it precedes: R003). The loader was read at commits "
        "of no established release; never run",
        versions_read=("1.3.0rc24", "1.3.0rc26", "1.3.0rc27", "1.4.0rc1"),
        reads=(
            Read(
                release="1.3.0rc24 (documentation build, gh-pages 32b086cd)",
                file="tensorrt_llm/llmapi/llm_args.py (1.3.0rc24/_modules/tensorrt_llm/llmapi/llm_args.html)",
                shows="DSparkDecodingConfig(markov_rank: if None read from the draft config's dspark_markov_rank, 0 "
                "disables the head; markov_head_type vanilla | gated | rnn; decoding_type 'DSpark'); confidence-based "
                "drafting not enabled; max_total_draft_tokens = max_draft_len; tokens_per_gen_step max_draft_len + 1; "
                "supports_backend pytorch only; spec_dec_mode DSPARK",
            ),
            Read(
                release="1.3.0rc26 (documentation build, gh-pages f2bb6484)",
                file="_sources/llm-api/reference.rst.txt",
                shows="the API index lists DSparkDecodingConfig after DFlashDecodingConfig",
            ),
            Read(
                release="1.3.0rc27, 1.4.0rc1, 1.4.0rc4 (documentation builds)",
                file="llm-api/reference/DSparkDecodingConfig.html",
                shows="DSparkDecodingConfig(max_draft_len, speculative_model, mask_token_id, target_layer_ids, block_size, "
                "markov_rank, markov_head_type, attention_backend; 1.4.0rc1 adds moe_backend and spec_dec_variant, "
                "1.4.0rc4 the confidence scheduling fields)",
            ),
            Read(
                release="commit 008b54fe (release not established) and an earlier stored copy (commit not recorded)",
                file=TDS,
                shows="_build_dspark_draft: embedded (DeepSeek-V4 mtp.* inside the target) -> DSv4DSparkForCausalLM, MLA "
                "config -> MLADSparkForCausalLM, else GQADSparkForCausalLM(DFlashForCausalLM); the head switches resolved "
                "from dspark_config, dflash_config, dspark_<key>, <key>; markov_w1/markov_w2 [vocab, rank] taken before "
                "the DFlash remap (nested or bare names), shape-checked, missing or unexpected ones raise; non-vanilla "
                "Markov heads and causal=true raise; confidence_proj loaded, unused; the earlier copy has the same head "
                "set without the mixin",
            ),
        ),
        unmodelled_archs={
            "K3DSparkModel": f"{TDS} MLADSparkForCausalLM (an MLA drafter backbone, K3DsparkForCausalLM)",
            "DSparkDraftModel": f"{TDS} DSv4DSparkForCausalLM (the draft inside a DeepSeek-V4 target checkpoint)",
        },
    ),
)
