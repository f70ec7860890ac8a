"""TensorRT-LLM's DFlash rows (decoding_type DFlash): DFlashForCausalLM from 1.3.0 (1.3.0rc14 is the first pre-release
with DFlashDecodingConfig), read from source, never run. dspark.py's class builds on its class."""

from __future__ import annotations

from ..common import LLAMA_DERIVE, LLAMA_FIELDS, STACK_LLAMA, llama_decoder
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
from .common import TDF_DOCS, TDF_WORKER

# --- DFlash (decoding_type DFlash): DFlashForCausalLM -------------------------------------------------------------------
# Read, never run (no TensorRT-LLM wheel installs here, and none of the 1.3/1.4 pre-releases is on PyPI). The loader was
# read in four stored copies whose release tag is not established (the repository is over the snapshot limit and the
# index holds tensorrt_llm/version.py at one commit only): DFlashForCausalLM inside modeling_speculative.py (the first
# form, PR #12794 "Support DFlash in one-model spec dec", merged April 2026, after the 1.2 release notes, which have no
# DFlash) and tensorrt_llm/_torch/models/modeling_dflash.py at 009d8fa4 and two later copies (DSpark/Laguna additions).
# Every copy has the same load_weights, the same backbone resolution and the same sharing from the target. The launch
# side (DFlashDecodingConfig, decoding_type DFlash) was read in the module source of the 1.3.0rc13 (none), 1.3.0rc14
# (first), 1.3.0rc16 documentation builds and in the 1.3.0rc27 and 1.4.0rc1 documentation.
TDF = "tensorrt_llm/_torch/models/modeling_dflash.py"
TDF_FIRST = "tensorrt_llm/_torch/models/modeling_speculative.py (DFlashForCausalLM, first form)"
TRT_DFLASH_FIELDS = LLAMA_FIELDS + (
    # DFlashDecodingConfig.target_layer_ids at launch wins; else the draft's dflash_config.target_layer_ids
    Field("n_ids", ("len:dflash_config.target_layer_ids",), None),
    # dflash_config.mask_token_id, else a top-level mask_token_id, else vocab_size (DFlashForCausalLM.__init__)
    Field("mask_id", ("dflash_config.mask_token_id", "mask_token_id"), None),
)
TRT_DFLASH_DERIVE = LLAMA_DERIVE + (Derive("n_fc", "n_ids if n_ids is not None else L"),)
# no mask token in the draft config: DFlashForCausalLM takes vocab_size, one past the last row of the (target's)
# embedding the mask slots are looked up in; the worker uses it unless the launch gives DFlashDecodingConfig.mask_token_id
NO_MASK_ID_TRT = Raise(
    "mask_id is None",
    "no dflash_config.mask_token_id or mask_token_id: DFlashForCausalLM falls back to vocab_size, one past the target's "
    "embedding, and the mask slots are looked up there at the first draft step (read, not run: an out-of-range index on "
    "an unsharded embedding); give the trained mask token in dflash_config.mask_token_id or DFlashDecodingConfig.mask_token_id",
    "tensorrt_llm/_torch/models/modeling_dflash.py @ 009d8fa4 and its first form in modeling_speculative.py "
    "(DFlashForCausalLM.__init__: dflash_config.get('mask_token_id', getattr(config, 'mask_token_id', vocab_size)))",
)


# What the DFlash worker does with max_draft_len (TDF_WORKER _lazy_init_ctx_buffers): the draft block is max_draft_len + 1
# (the anchor and max_draft_len mask slots), block_size comes from the draft's config, else max_draft_len + 1, and a
# block wider than the checkpoint's block_size raises at start-up
TRT_DFLASH_LAUNCH = (
    LaunchCheck(
        "steps is not None and block is not None and steps + 1 > block",
        "error",
        "ValueError: DFlash checkpoint was trained with block_size={block}; max_draft_len {steps} needs a block of "
        "{steps} + 1. Lower max_draft_len",
        f"{TDF_WORKER} _lazy_init_ctx_buffers",
        code="D006",
    ),
    LaunchCheck(
        "steps is not None and block is not None and steps + 1 < block",
        "warning",
        "max_draft_len {steps} fills {steps} of the {full} mask slots the drafter was trained on (block_size {block}): "
        "each step accepts at most {steps} + 1 tokens; accept lengths published for the drafter were measured with the "
        "whole block",
        f"{TDF_WORKER} (the draft block is max_draft_len + 1)",
        code="D005",
    ),
)


def _trt_dflash_class() -> DraftClass:
    """DFlashForCausalLM: a plain target-family backbone (architectures[0] if registered, else model_type's
    `<ModelType>ForCausalLM`: Qwen3ForCausalLM for a z-lab checkpoint) holding the decoder layers and the final norm,
    plus fc and hidden_norm built from the checkpoint's own tensors; embed_tokens and lm_head are the target's."""
    cite = f"{TDF} @ 009d8fa4; {TDF_FIRST} (same load_weights; releases not established)"
    return DraftClass(
        name="DFlashForCausalLM",
        file=f"{TDF} @ 009d8fa4 (release not established; read, not run)",
        fields=TRT_DFLASH_FIELDS,
        derive=TRT_DFLASH_DERIVE,
        params=(
            # the backbone's own embedding and head, replaced by the target's after loading
            Param("model.embed_tokens.weight", ("V", "H"), share="embed", role="embed"),
            Param("lm_head.weight", ("V", "H"), share="head", role="head"),
            # nn.Linear(fc.shape[1], fc.shape[0]) / nn.RMSNorm(hidden_norm.shape[0]) built from the tensors themselves
            Param("fc.weight", ("H", "Ht*n_fc"), role="fc"),
            Param("hidden_norm.weight", ("H",), role="fc"),
            Param("model.norm.weight", ("H",), role="norm"),
        )
        + llama_decoder("model.layers.{i}.", per_layer=True, hidden_norm_when="False", qkv_bias_when="attention_bias", qkv_in="H")
        + (
            Param("model.layers.{i}.self_attn.q_norm.weight", ("hd",), per_layer=True, role="decoder"),
            Param("model.layers.{i}.self_attn.k_norm.weight", ("hd",), per_layer=True, role="decoder"),
        ),
        loader=(
            Drop(
                "embed_tokens",
                why="load_weights_from_target_model replaces the draft's embedding with the target's (a shipped one is overwritten)",
                cite=cite,
            ),
            Drop(
                "lm_head",
                why="load_weights_from_target_model replaces the draft's head with the target's (a shipped one is never used)",
                cite=cite,
            ),
            Drop("rotary_emb.inv_freq", why="rotary caches are recomputed", cite=cite),
            # fc.weight and hidden_norm.weight are kept as written; norm.weight -> model.norm.weight; every other name
            # without model. gets it
            RenameRegex(pattern=r"^(?!fc\.weight$|hidden_norm\.weight$|model\.)", new="model.", cite=f"{cite} load_weights remap"),
        )
        + STACK_LLAMA,
        unknown="skip",
        unknown_message="{name}: matches no module of the backbone; skipped silently (load_weights passes "
        "allow_partial_loading=True to the module-walking loader, which reads only names under a module: "
        "modeling_utils.py read at 1.0.0rc4; read, not run)",
        missing="silent",
        raises=(NO_MASK_ID_TRT,),
        share_embed="'target'",
        share_head="'target'",
        share_cite=f"{cite} load_weights_from_target_model (embed_tokens and lm_head taken from the target, always)",
        methods=("DFLASH",),  # speculative_config.decoding_type: DFlash (DFlashDecodingConfig)
        launch_checks=TRT_DFLASH_LAUNCH,
        notes=(
            "fc and hidden_norm are built from the tensors' own shapes (nn.Linear / nn.RMSNorm): a width that disagrees "
            "with the captured target layers fails at the first draft step (a matmul shape error), not at load; a "
            "missing fc.weight or hidden_norm.weight leaves no fc / hidden_norm attribute (AttributeError at the first "
            "draft step)",
            "mask token: DFlashDecodingConfig.mask_token_id, else dflash_config.mask_token_id, else a top-level "
            "mask_token_id, else vocab_size (one past the target's embedding rows); the mask slots are embedded by the "
            "target's embed_tokens[mask_token_id]: no mask_embedding.pt side file and no mask_hidden are read (a "
            "mask_hidden tensor is skipped silently, not asserted as in vLLM)",
            "target layers: DFlashDecodingConfig.target_layer_ids, else dflash_config.target_layer_ids; each id is the "
            "output of that 0-based target layer (maybe_capture_hidden_states adds the residual: "
            f"{TDF_WORKER})",
            "block size: the draft's top-level block_size, else max_draft_len + 1; a draft block wider than the "
            "checkpoint's block_size raises ValueError at start-up ('DFlash checkpoint was trained with block_size=… "
            f"Lower max_draft_len …', {TDF_WORKER} _lazy_init_ctx_buffers)",
            "an architectures[0] no TensorRT-LLM class registers falls back to model_type's <ModelType>ForCausalLM; a "
            "model_type with no such class raises RuntimeError while the drafter is built (not modelled here)",
        ),
    )


def _trt_dflash_dispatch() -> Dispatch:
    return Dispatch(
        "trtllm",
        {"*": "DFlashForCausalLM"},
        "DFlashForCausalLM",
        cite=f"{TDF_FIRST} get_draft_model: spec_dec_mode.is_dflash() builds DFlashForCausalLM whatever architectures "
        "says (the backbone inside it is resolved from architectures[0], else model_type)",
    )


RANGES = (
    FamilyRange(
        engine="trtllm",
        family="dflash",
        first="1.3.0",
        last=None,
        dispatch=_trt_dflash_dispatch(),
        classes={"DFlashForCausalLM": _trt_dflash_class()},
        begins="DFlashDecodingConfig (decoding_type DFlash, spec_dec_mode DFLASH) is first in 1.3.0rc14's llm_args and absent "
        "from 1.3.0rc13's (the module source of each release's documentation build); it came with NVIDIA/TensorRT-LLM "
        "PR #12794 (April 2026), and the 1.2 release notes have no DFlash. 1.3.0rc1–rc13 are placed with 1.3.0 too (a "
        "pre-release is read as the release it precedes: R003 says so). The loader itself was read at commits of no "
        "established release; never run",
        versions_read=("1.3.0rc14", "1.3.0rc16", "1.3.0rc27", "1.4.0rc1"),
        reads=(
            Read(
                release="first form (commit not recorded; after PR #12794)",
                file=TDF_FIRST,
                shows="get_draft_model builds DFlashForCausalLM for spec_dec_mode DFlash; its backbone is "
                "get_model_architecture(draft config), falling back on RuntimeError to model_type's "
                "<ModelType>ForCausalLM ('DFlashDraftModel' is not registered: a qwen3 drafter builds Qwen3ForCausalLM); "
                "load_weights keeps fc.weight and hidden_norm.weight, maps norm.weight to model.norm.weight, prefixes "
                "model. to every other name without it, builds fc / hidden_norm from those tensors' shapes and hands "
                "the rest to the backbone with allow_partial_loading=True; load_weights_from_target_model takes "
                "embed_tokens and lm_head from the target; mask_token_id from dflash_config, else mask_token_id, else "
                "vocab_size; target_layer_ids from dflash_config; block_size from the top-level config",
            ),
            Read(
                release="commit 009d8fa4 and two later copies (releases not established)",
                file=TDF,
                shows="the same load_weights, fallback and sharing, moved to its own file; adds a fused "
                "self_attn.qkv_proj split (Laguna checkpoints), DFlashLagunaForCausalLM for any architecture naming "
                "Laguna, an attention_backend (VANILLA / TRTLLM, later FA4), and DSpark drafters under their own "
                "decoding_type DSpark (a DSpark config under DFlash raises ValueError)",
            ),
            Read(
                release="commit 00679c66 (release not established)",
                file=TDF_WORKER,
                shows="DFlashSpecMetadata captures hidden_states + residual (the output of each listed 0-based target "
                "layer); the worker resolves block_size from the draft, else max_draft_len + 1, and raises ValueError "
                "when the draft block is wider than the checkpoint's block_size",
            ),
            Read(
                release="1.3.0rc13 (documentation build, gh-pages 0fa00422)",
                file="tensorrt_llm/llmapi/llm_args.py (1.3.0rc13/_modules/tensorrt_llm/llmapi/llm_args.html)",
                shows="PARDDecodingConfig is followed by AutoDecodingConfig: no DFlashDecodingConfig, and the feature docs "
                "list decoding types MTP, Eagle3, NGram, DraftTarget, PARD, SA",
            ),
            Read(
                release="1.3.0rc14 (documentation build, gh-pages c502768c)",
                file="tensorrt_llm/llmapi/llm_args.py (1.3.0rc14/_modules/tensorrt_llm/llmapi/llm_args.html)",
                shows="DFlashDecodingConfig with spec_dec_mode DFLASH, supports_backend pytorch only, tokens_per_gen_step "
                "2 × max_draft_len: the first release with DFlash",
            ),
            Read(
                release="1.3.0rc16 (documentation build, gh-pages 4fa826a6)",
                file="tensorrt_llm/llmapi/llm_args.py (1.3.0rc16/_modules/tensorrt_llm/llmapi/llm_args.html)",
                shows="DFlashDecodingConfig(mask_token_id: if None read from dflash_config.mask_token_id; target_layer_ids: "
                "if None read from dflash_config.target_layer_ids; decoding_type 'DFlash'); tokens_per_gen_step now "
                "max_draft_len + 1; no attention_backend yet",
            ),
            Read(
                release="1.3.0rc27 (documentation build)",
                file=TDF_DOCS,
                shows="DFlashDecodingConfig(max_draft_len, speculative_model, mask_token_id, target_layer_ids, "
                "attention_backend VANILLA | TRTLLM | FA4); YAML speculative_config.decoding_type: DFlash for "
                "trtllm-serve / trtllm-bench --config; no DFlash2 and no DSpark decoding_type documented",
            ),
            Read(
                release="1.4.0rc1 (documentation build)",
                file="nvidia.github.io/TensorRT-LLM/1.4.0rc1/llm-api/reference/DFlashDecodingConfig.html",
                shows="the same fields plus spec_dec_variant, context_recompute_tail, skip_ctx_buffer_budget_check and moe_backend",
            ),
        ),
        unmodelled_archs={"DFlashLagunaForCausalLM": f"{TDF} DFlashLagunaForCausalLM (later copies; any architecture naming Laguna)"},
    ),
)
