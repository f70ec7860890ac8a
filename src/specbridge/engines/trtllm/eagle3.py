"""TensorRT-LLM's EAGLE-3 rows (ERAS, CAPTURE): how the PyTorch backend builds and loads an EAGLE-3 drafter.

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
"""

from __future__ import annotations

from ..common import LLAMA_DERIVE, LLAMA_FIELDS, STACK_LLAMA, llama_decoder
from ..spec import (
    CaptureRule,
    Derive,
    Dispatch,
    DraftClass,
    Drop,
    FamilyRange,
    Field,
    Param,
    Prefix,
    Read,
    RenameRegex,
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
    FamilyRange(
        engine="trtllm",
        family="eagle3",
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
    FamilyRange(
        engine="trtllm",
        family="eagle3",
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
