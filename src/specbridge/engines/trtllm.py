"""TensorRT-LLM (PyTorch backend): how it builds and loads an EAGLE-3 drafter.

Never run (no TensorRT-LLM wheel installs here). Two eras, split where the read source parts:

- 1.0 – 1.2: `tensorrt_llm/_torch/models/modeling_speculative.py` read at NVIDIA/TensorRT-LLM@b35ac1b6, whose
  `tensorrt_llm/version.py` says 1.2.0rc2; the module-walking weight loader (`_torch/models/modeling_utils.py`) read
  at NVIDIA/TensorRT-LLM@000a01de, whose `version.py` and `examples/constraints.txt` say 1.0.0rc4; the launch-side
  config (`llmapi/llm_args.py`) at tags 1.0.0, 1.1.0 and 1.2.0rc2.post1. `load_weights` renames nothing but the
  `model.` prefix: a `layers.0.*` checkpoint matches no parameter.
- 1.3 on (approximate): read at NVIDIA/TensorRT-LLM@00679c66 (release not established) and at two fork copies of
  the same file (ltalal/TensorRT-LLM@40731343, QiJune/TensorRT-LLM@6174b2c9, releases not established), which first
  rename `layers.N.*` to `midlayer[.N].*` and build `input_norm` for `norm_before_fc`.

NVIDIA/Model-Optimizer@a2fbac7b `modelopt/torch/export/plugins/hf_spec_export.py` is the producer. Where the source
was not read, the rows say "assumed".

DFlash (FAMILY_RANGES, end of file): DFlashForCausalLM from 1.3.0 (1.3.0rc14 is the first pre-release with
DFlashDecodingConfig), read from source, never run.
"""

from __future__ import annotations

from dataclasses import replace

from .common import LLAMA_DERIVE, LLAMA_FIELDS, STACK_LLAMA, llama_decoder
from .spec import (
    CaptureRule,
    Derive,
    Dispatch,
    DraftClass,
    Drop,
    Era,
    FamilyLaunch,
    FamilyRange,
    Field,
    LaunchCheck,
    Launcher,
    Param,
    Prefix,
    Raise,
    Read,
    RenameRegex,
    SpecFile,
)

F = "tensorrt_llm/_torch/models/modeling_speculative.py @ 00679c66"
F12 = "tensorrt_llm/_torch/models/modeling_speculative.py @ b35ac1b6 (1.2.0rc2)"
U10 = "tensorrt_llm/_torch/models/modeling_utils.py @ 000a01de (1.0.0rc4)"

_FIELDS = LLAMA_FIELDS + (
    Field("Vd_raw", ("draft_vocab_size",), None),
    Field("n_aux", ("len:eagle_config.eagle_aux_hidden_state_layer_ids",), 3),
)
_DERIVE = LLAMA_DERIVE + (Derive("Vd", "Vd_raw if Vd_raw is not None else V"),)


def _params(norms: bool) -> tuple[Param, ...]:
    """Eagle3DraftModel's parameters; `norms`: the later class's input_norm (norm_before_fc) and per-aux fc_norm."""
    return (
        (
            # embed_tokens exists only when the draft is narrower/wider than the target
            Param("model.embed_tokens.weight", ("V", "H"), when="Ht != H", role="embed"),
            Param("model.fc.weight", ("H", "Ht*n_aux"), role="fc"),
        )
        + (
            (
                Param("model.input_norm.weight", ("Ht*n_aux",), when="norm_before_fc", role="fc"),
                Param("model.fc_norm.{j}.weight", ("Ht",), when="fc_norm", role="fc"),
            )
            if norms
            else ()
        )
        + (
            Param("model.norm.weight", ("H",), role="norm"),
            Param("lm_head.weight", ("Vd", "H"), share="head", role="head"),
            Param("d2t", ("Vd",), when="Vd != V", role="vocab map"),
        )
        + llama_decoder("model.midlayer.", per_layer=False)
    )


def _loader(cite: str, rename_layers: bool):
    return (
        (
            Drop("t2d", why="TensorRT-LLM has no t2d", cite=cite),
            Drop("embed_tokens", why="the target's embedding is used when hidden sizes match", when="Ht == H", cite=cite),
        )
        + ((RenameRegex(pattern=r"^layers\.0\.", new="midlayer.", cite=f"{cite} load_weights"),) if rename_layers else ())
        + (
            Prefix("model.", unless="lm_head", cite=f"{cite} (model. prefix for all but lm_head)"),
            RenameRegex(pattern=r"^model\.d2t$", new="d2t", cite=f"{cite} (d2t is an int32 parameter of the draft model)"),
        )
        + STACK_LLAMA
    )


# 1.0 - 1.2: read at b35ac1b6 (1.2.0rc2). load_weights only prefixes `model.` (every name without lm_head; a name
# with lm_head makes the drafter keep its own head); there is no layers.N -> midlayer rename, no input_norm/fc_norm/
# norm_output, and Eagle3DecoderLayer takes its residual before hidden_norm (no norm_before_residual).
EAGLE3_CLASS_12 = DraftClass(
    name="Eagle3ForCausalLM",
    file=F12,
    fields=_FIELDS,
    derive=_DERIVE,
    params=_params(norms=False),
    loader=_loader(F12, rename_layers=False),
    unknown="skip",
    unknown_message="skipped silently: the loader walks the model's modules and reads only the names under each one's "
    "prefix, so a name under no module is never read (modeling_utils.py read at 1.0.0rc4; not run)",
    share_embed="'target'",
    share_head="'target' if not has_head else 'own'",
    share_cite=F12,
    notes=(
        "d2t is an int32 parameter, built only when draft_vocab_size != vocab_size",
        "a config without draft_vocab_size: not read how 1.2 treats it (assumed: vocab_size)",
    ),
)

EAGLE3_CLASS = DraftClass(
    name="Eagle3ForCausalLM",
    file=F,
    fields=_FIELDS,
    derive=_DERIVE,
    params=_params(norms=True),
    loader=_loader(F, rename_layers=True),
    unknown="skip",
    unknown_message="assumed skipped (TensorRT-LLM's handling of unknown names was not verified after 1.0.0rc4)",
    share_embed="'target'",
    share_head="'target' if not has_head else 'own'",
    share_cite=F,
    notes=("d2t is stored as int32", "missing draft_vocab_size defaults to vocab_size with a warning"),
)

_DISPATCH = Dispatch(
    "trtllm",
    {"*": "Eagle3ForCausalLM"},
    "Eagle3ForCausalLM",
    cite="tensorrt_llm/_torch/models/modeling_speculative.py: the class is chosen by the speculative config (EAGLE3 + "
    "target arch), the draft config is read as a flat HF config (assumed: speculators configs are not translated)",
)

ERAS = (
    Era(
        engine="trtllm",
        name="PyTorch backend Eagle3ForCausalLM without the layers.N rename",
        first="1.0.0",
        last="1.2",
        native_layout="trtllm",  # convert --engine writes this layout (layouts/table.py)
        versions_read=("1.2",),
        dispatch=_DISPATCH,
        classes={"Eagle3ForCausalLM": EAGLE3_CLASS_12},
        begins="assumed: never run (no TensorRT-LLM wheel installs here: PyPI holds stub sdists only), and the first "
        "release with EAGLE-3 on the PyTorch backend modelled. Loader source pinned to a release by the version.py "
        "stored at the same commit: modeling_speculative.py at b35ac1b6 (1.2.0rc2) and modeling_utils.py at 000a01de "
        "(1.0.0rc4); the 1.0.0, 1.1.0 and 1.2.0 final loaders were not read (the index holds no copy at their tag "
        "commits and the repository is over the snapshot limit); 1.0 and 1.1 are predicted as 1.2.0rc2",
        reads=(
            Read(
                release="1.0.0rc4 (commit 000a01de: its version.py and examples/constraints.txt say 1.0.0rc4)",
                file="tensorrt_llm/_torch/models/modeling_utils.py (_load_weights_impl, _load_weights_impl_v2)",
                shows="the loader walks the model's modules; each module with parameters takes the checkpoint names under "
                "its own dotted name (filter_weights: a plain prefix test, the prefix stripped); a name under no module is "
                "never looked at, so unknown names are skipped silently; a module without its own load_weights indexes "
                "those names by parameter name (a missing one is a KeyError) on the plain path, or hands them to the "
                "weight mapper's handle_manual_copy on the mapper path (not read at this commit); skip_modules (lm_head "
                "here) is left alone. Unverified: what Linear/Embedding.load_weights do with an empty dict; the table "
                "keeps reporting unfilled parameters as missing, not as a raise",
            ),
            Read(
                release="1.0.0 (tag)",
                file="tensorrt_llm/llmapi/llm_args.py (NVIDIA/TensorRT-LLM gh-pages 1.0.0/_modules/…/llm_args.html @ 090dc649)",
                shows="EagleDecodingConfig has eagle3_one_model (default True) and no eagle3_layers_to_capture / "
                "num_capture_layers: the number of captured target layers is not configurable (three). Unverified: the "
                "1.0.0 loader itself (an older stored modeling_speculative.py, commit not recorded, builds fc as "
                "Linear(hidden_size_in * 3) always, one midlayer, d2t int64)",
            ),
            Read(
                release="1.1.0 (tag)",
                file="tensorrt_llm/llmapi/llm_args.py (gh-pages 1.1.0/_modules/…/llm_args.html @ 8660c119)",
                shows="adds eagle3_layers_to_capture: Optional[Set[int]]; num_capture_layers = its length, else 3. fc's input "
                "width (target_hidden_size × num_capture_layers) is set by the launch's speculative config, not by the "
                "draft's config.json: a drafter trained on k ≠ 3 aux states needs eagle3_layers_to_capture at launch. "
                "Unverified: whether the draft's eagle_config ids are read at all (this table assumes they are)",
            ),
            Read(
                release="1.1 (release notes)",
                file="docs/source/release-notes.md (NVIDIA/TensorRT-LLM @ 001eaece)",
                shows="the 1.1 notes list 'multi-layer Eagle support' (at b35ac1b6 midlayer is a list for num_hidden_layers > 1); "
                "only single-layer drafters are modelled here",
            ),
            Read(
                release="1.2.0rc2 (commit b35ac1b6: its version.py says 1.2.0rc2)",
                file="tensorrt_llm/_torch/models/modeling_speculative.py (Eagle3DraftModel, Eagle3ForCausalLM)",
                shows="load_weights prefixes model. to every name without lm_head and renames nothing else: a layers.0.* "
                "checkpoint (speculators/HF naming) matches no parameter and its decoder is not loaded (the table: "
                "layers.* unread, the midlayer missing); a name containing lm_head makes the drafter keep its own head, "
                "else lm_head (and embed_tokens when target_hidden_size == hidden_size) come from the target after loading; "
                "fc only when num_capture_layers > 1, width target_hidden_size × num_capture_layers from the launch config, "
                "bias=config.bias; midlayer a list (midlayer.N.*) when num_hidden_layers > 1; d2t int32 only when "
                "draft_vocab_size != vocab_size; no t2d; no input_norm / fc_norm / norm_output, and the decoder layer takes "
                "its residual before hidden_norm (norm_before_residual is not read)",
            ),
            Read(
                release="1.2.0rc2.post1 (tag)",
                file="tensorrt_llm/llmapi/llm_args.py (gh-pages 1.2.0rc2.post1/_modules/…/llm_args.html @ b735cce5)",
                shows="the same capture settings (eagle3_layers_to_capture, num_capture_layers else 3); EagleDecodingConfig now "
                "asserts max_draft_len is given and adds static/dynamic draft trees",
            ),
            Read(
                release="fork DylanChen-NV/TensorRT-LLM @ 91489706 (release not established)",
                file="tensorrt_llm/_torch/models/modeling_speculative.py",
                shows="Eagle3DraftModel and Eagle3ForCausalLM as at b35ac1b6 (no layers.N rename, no input_norm)",
            ),
        ),
        # read at 1.2.0rc2: the class reads none of the variant flags (a drafter trained with one runs as another network)
        variants=frozenset(),
        notes=("only single-layer drafters are modelled here (multi-layer uses midlayer.N.*)",),
    ),
    Era(
        engine="trtllm",
        name="PyTorch backend Eagle3ForCausalLM",
        first="1.3.0",
        last=None,
        native_layout="trtllm",  # convert --engine writes this layout (layouts/table.py)
        versions_read=("1.3",),
        # no 1.3 source was read; the commits read (below) are after 1.2.0rc2, their releases not established
        placeholders=("1.3",),
        dispatch=_DISPATCH,
        classes={"Eagle3ForCausalLM": EAGLE3_CLASS},
        begins="approximate: after 1.2.0rc2 (b35ac1b6 has no layers.N rename) and at or before commit 00679c66 (after "
        "PR #14988, merged 2026-06-05); which release first renames layers.N.* to midlayer[.N].* was not established "
        "(the 1.2.0 and 1.2.1 loaders were not read; they are predicted with the 1.2.0rc2 era): 1.3 is a placeholder, "
        "no 1.3 source was read. Never run",
        reads=(
            Read(
                release="fork ltalal/TensorRT-LLM @ 40731343 (release not established)",
                file="tensorrt_llm/_torch/models/modeling_speculative.py",
                shows="load_weights first renames layers.0.* to midlayer.* (single-layer drafters) or layers.N.* to "
                "midlayer.N.*, then prefixes model. as before; input_norm (width target_hidden_size × num_capture_layers) "
                "when eagle_config.norm_before_fc; a missing draft_vocab_size defaults to vocab_size with a warning "
                "(as NVIDIA/TensorRT-LLM PR #10124 describes); MLA drafters; no fc_norm yet, so the rename predates PR #14988",
            ),
            Read(
                release="fork QiJune/TensorRT-LLM @ 6174b2c9 (release not established)",
                file="tensorrt_llm/_torch/models/modeling_speculative.py",
                shows="the same Eagle3DraftModel as ltalal @ 40731343 (input_norm, int32 d2t only for a reduced vocabulary, "
                "embed_tokens only when target_hidden_size differs)",
            ),
            Read(
                release="commit 00679c66 (release not established)",
                file="tensorrt_llm/_torch/models/modeling_speculative.py",
                shows="the rows of this table; post-norm and per-aux fc_norm came with NVIDIA/TensorRT-LLM PR #14988 (merged 2026-06-05)",
            ),
        ),
        # as before the era rows carried them: the class reads all four (norm_before_residual's layer order not verified)
        variants=frozenset({"norm_before_fc", "fc_norm", "norm_output", "norm_before_residual"}),
        notes=("only single-layer drafters are modelled here (multi-layer uses midlayer.N.*)",),
    ),
)

CAPTURE = (
    CaptureRule(
        first="1.0.0",
        last=None,
        # assumed, not verified: the draft config's eagle_config ids are what the launch's eagle3_layers_to_capture
        # (llm_args.py, from 1.1.0) is set from; the engine default is {1, N//2-1, N-4} (output-of-layer ids, the
        # eagle3_layers_to_capture description in a later llm_args.py)
        ids_from=("eagle_config",),
        id_labels={"eagle_config": "eagle_config ids (assumed)", "default": "engine default (1, N//2-1, N-4) output-of-layer"},
        shift=1,
        boundaries="as-given",
        cite=f"{F} (capture at the end of each layer)",
        support_unknown="TensorRT-LLM target capture support is not tabled here",
    ),
)


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
TDF_WORKER = "tensorrt_llm/_torch/speculative/dflash.py @ 00679c66"
TDF_DOCS = "docs features/speculative-decoding.md @ 1.3.0rc27 (gh-pages 7568f407)"
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


FAMILY_RANGES = (
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


# --- DSpark (decoding_type DSpark): GQADSparkForCausalLM -------------------------------------------------------------
# Read, never run. DSparkDecodingConfig (decoding_type DSpark, spec_dec_mode DSPARK, pytorch backend only) is in the
# llm_args of the 1.3.0rc24 documentation build (gh-pages 32b086cd; the earliest release read that has it: 1.3.0rc20's
# copy was not searched to the class and earlier ones were not read for it, so the first pre-release with DSpark is not
# established), in 1.3.0rc26's API index and in the 1.3.0rc27, 1.4.0rc1 and 1.4.0rc4 references. It came with
# NVIDIA/TensorRT-LLM PR #15808 ("Add DeepSeek DSpark speculative decoding"). The loader was read in
# tensorrt_llm/_torch/models/modeling_dspark.py at 008b54fe and in an earlier stored copy (commit not recorded), both of
# no established release: a standalone drafter (a Qwen3DSparkModel checkpoint) is GQADSparkForCausalLM, DFlash's class
# (backbone, fc, hidden_norm, load_weights remap, embed_tokens and lm_head from the target) plus the DSpark heads.
TDS = "tensorrt_llm/_torch/models/modeling_dspark.py"
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


FAMILY_RANGES += (
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


# --- the trtllm-serve line: `trtllm-serve MODEL --config FILE`, the speculative settings in FILE ---------------------
# `--config` (preferred) and `--extra_llm_api_options` (its alias) name a YAML file whose speculative_config section
# is a *DecodingConfig: decoding_type picks it (Eagle3 with Eagle as an alias, MTP, DFlash, DSpark, …), max_draft_len is
# the draft length, speculative_model the drafter (speculative_model_dir its alias). Read in the 1.3.0rc27 docs
# (features/speculative-decoding.md "Usage with trtllm-bench and trtllm-serve", _includes/note_sections.rst
# config-flag-alias) and the llm_args of the releases above.
TRT_SERVE_ARGV = ("trtllm-serve", "{target}", "--config", "{config}")
TRT_DOCS = "docs features/speculative-decoding.md @ 1.3.0rc27 (trtllm-serve --config, decoding_type, speculative_model_dir alias)"
LAUNCH = Launcher(
    engine="trtllm",
    program="trtllm-serve",
    flags={"--tp_size": "tp", "--max_seq_len": "context_length"},
    argv=TRT_SERVE_ARGV,
    cite=f"{TRT_DOCS}; docs _includes/note_sections.rst @ 1.3.0rc27 (--config, alias --extra_llm_api_options)",
    target_after="trtllm-serve",
    # EagleDecodingConfig asserts max_draft_len is given (llm_args.py @ 1.2.0rc2.post1)
    requires_steps="TensorRT-LLM needs speculative_config.max_draft_len in the --config file (the decoding config asserts it is given).",
    spec_file_flags=("--config", "--extra_llm_api_options"),
    spec_file=SpecFile(
        section="speculative_config",
        method_key="decoding_type",
        steps_key="max_draft_len",
        # speculative_model_dir: the 1.0–1.2 name, an alias of speculative_model in 1.3 (written for every release)
        draft_keys=("speculative_model_dir", "speculative_model"),
        name="speculative_config.yaml",
        cite=TRT_DOCS,
    ),
    # decoding_type Eagle: EagleDecodingConfig (EAGLE-3) in 1.0–1.2, the backward-compatible alias of Eagle3 in 1.3
    eagle3_method="Eagle",
    method_aliases={"EAGLE": "EAGLE3"},
    mtp_argv=TRT_SERVE_ARGV,
    mtp_method="MTP",
    families={
        # the draft block is max_draft_len + 1 (TDF_WORKER): the mask slots are max_draft_len
        "dflash": FamilyLaunch(
            family="dflash",
            argv=TRT_SERVE_ARGV,
            steps="block - 1",
            cite=f"{TDF_WORKER} (block_size = max_draft_len + 1 when the draft has none); {TDF_DOCS}",
            spec_method="DFlash",
        ),
        # shift_label (default on): block_size == max_draft_len, every slot a prediction
        "dspark": FamilyLaunch(
            family="dspark",
            argv=TRT_SERVE_ARGV,
            steps="block",
            cite=f"{TDS} @ 008b54fe _init_dspark_heads; DSparkDecodingConfig (1.3.0rc24 llm_args)",
            spec_method="DSpark",
        ),
    },
    steps_flag="speculative_config.max_draft_len:",
    chain_only=True,
)

# --- Medusa: the TensorRT engine backend only ---------------------------------------------------------------------------
# tensorrt_llm/models/medusa/{config,model,weight}.py (MedusaForCausalLm, load_medusa_hf) build Medusa heads into a
# TensorRT engine (examples/medusa/convert_checkpoint.py); the PyTorch backend modelled here has no Medusa
# (tensorrt_llm/_torch/speculative/: eagle3, mtp, ngram, draft_target, dflash, dspark, pard, … no medusa module)
FAMILY_RANGES += (
    FamilyRange(
        engine="trtllm",
        family="medusa",
        first="1.0.0",
        last=None,
        dispatch=Dispatch("trtllm", {}, "", cite="tensorrt_llm/_torch/speculative/ (no medusa module)"),
        classes={},
        begins="Medusa is built only by the TensorRT engine backend (tensorrt_llm/models/medusa/), not the PyTorch backend",
        unmodelled="TensorRT-LLM builds Medusa only on its TensorRT engine backend (tensorrt_llm/models/medusa/model.py, "
        "weight.py load_medusa_hf, after examples/medusa/convert_checkpoint.py); its PyTorch backend, the one specbridge "
        "models, has no Medusa (tensorrt_llm/_torch/speculative/ has no medusa module)",
        reads=(),
    ),
)


# --- P-EAGLE: TensorRT-LLM has none --------------------------------------------------------------------------------------
# Read from the repository's stored copies (no release installed): tensorrt_llm/_torch/speculative/ holds eagle3, mtp,
# ngram, draft_target, dflash, dspark, pard, pearl, sa_worker, suffix, … and no P-EAGLE module; no stored TensorRT-LLM
# file found by a search names PEagle, peagle, parallel_drafting or speculators_model_type. Its parallel drafting is PARD
# (decoding_type PARD: llmapi/llm_args.py PARDDecodingConfig, _torch/speculative/pard.py PARDWorker; NVIDIA/TensorRT-LLM
# #11438; listed in the 1.3.0rc13 documentation build): "target-independent: doesn't use target model hidden states",
# a draft LM fed [accepted tokens, mask tokens], with no fc over captured target states and no mask_hidden, so a P-EAGLE
# head (EAGLE-3's fc over target states plus mask_hidden) is no PARD drafter.
FAMILY_RANGES += (
    FamilyRange(
        engine="trtllm",
        family="peagle",
        first="1.0.0",
        last=None,
        dispatch=Dispatch("trtllm", {}, "", cite="tensorrt_llm/_torch/speculative/ (no P-EAGLE module)"),
        classes={},
        begins="no P-EAGLE class in the PyTorch backend's speculative modules (read from the repository, no release run)",
        absent="tensorrt_llm/_torch/speculative/ (eagle3, mtp, ngram, draft_target, dflash, dspark, pard, pearl, sa, "
        "suffix, …) has no P-EAGLE module and no TensorRT-LLM file found names peagle, parallel_drafting, mask_hidden or "
        "speculators_model_type; its parallel drafting, PARD (decoding_type PARD, PARDDecodingConfig in "
        "tensorrt_llm/llmapi/llm_args.py, _torch/speculative/pard.py; NVIDIA/TensorRT-LLM#11438, listed from 1.3.0rc13), "
        "is target-independent: a draft LM fed mask tokens, with no fc over target hidden states and no mask_hidden, so "
        "a P-EAGLE head is no PARD drafter; as decoding_type Eagle3 it would be an EAGLE-3 drafter drafting one token per "
        "forward, mask_hidden unused",
    ),
)
