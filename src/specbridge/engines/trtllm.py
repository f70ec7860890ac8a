"""TensorRT-LLM (PyTorch backend): how it builds and loads an EAGLE-3 drafter.

Never run. Read at NVIDIA/TensorRT-LLM@00679c66 and @b35ac1b6 (1.2.0rc2) `tensorrt_llm/_torch/models/modeling_speculative.py`,
the launch-side config (`llmapi/llm_args.py`) at tags 1.0.0, 1.1.0 and 1.2.0rc2.post1 (the era's `reads`), and
NVIDIA/Model-Optimizer@a2fbac7b `modelopt/torch/export/plugins/hf_spec_export.py` (its producer). Less is verified here
than for SGLang/vLLM: where the source was not read (unknown-name handling), the table says "assumed".
"""

from __future__ import annotations

from .common import LLAMA_DERIVE, LLAMA_FIELDS, STACK_LLAMA, llama_decoder
from .spec import CaptureRule, Derive, Dispatch, DraftClass, Drop, Era, Field, Param, Prefix, Read, RenameRegex

F = "tensorrt_llm/_torch/models/modeling_speculative.py @ 00679c66"

EAGLE3_CLASS = DraftClass(
    name="Eagle3ForCausalLM",
    file=F,
    fields=LLAMA_FIELDS
    + (
        Field("Vd_raw", ("draft_vocab_size",), None),
        Field("n_aux", ("len:eagle_config.eagle_aux_hidden_state_layer_ids",), 3),
    ),
    derive=LLAMA_DERIVE + (Derive("Vd", "Vd_raw if Vd_raw is not None else V"),),
    params=(
        # embed_tokens exists only when the draft is narrower/wider than the target
        Param("model.embed_tokens.weight", ("V", "H"), when="Ht != H", role="embed"),
        Param("model.fc.weight", ("H", "Ht*n_aux"), role="fc"),
        Param("model.input_norm.weight", ("Ht*n_aux",), when="norm_before_fc", role="fc"),
        Param("model.fc_norm.{j}.weight", ("Ht",), when="fc_norm", role="fc"),
        Param("model.norm.weight", ("H",), role="norm"),
        Param("lm_head.weight", ("Vd", "H"), share="head", role="head"),
        Param("d2t", ("Vd",), when="Vd != V", role="vocab map"),
    )
    + llama_decoder("model.midlayer.", per_layer=False),
    loader=(
        Drop("t2d", why="TensorRT-LLM has no t2d", cite=F),
        Drop("embed_tokens", why="the target's embedding is used when hidden sizes match", when="Ht == H", cite=F),
        RenameRegex(pattern=r"^layers\.0\.", new="midlayer.", cite=f"{F} load_weights"),
        Prefix("model.", unless="lm_head", cite=f"{F} (model. prefix for all but lm_head)"),
        RenameRegex(pattern=r"^model\.d2t$", new="d2t", cite=f"{F} (d2t is a top-level int32 parameter)"),
    )
    + STACK_LLAMA,
    unknown="skip",
    unknown_message="assumed skipped (TensorRT-LLM's handling of unknown names was not verified)",
    share_embed="'target'",
    share_head="'target' if not has_head else 'own'",
    share_cite=F,
    notes=("d2t is stored as int32", "missing draft_vocab_size defaults to vocab_size with a warning"),
)

ERAS = (
    Era(
        engine="trtllm",
        name="PyTorch backend Eagle3ForCausalLM",
        first="1.0.0",
        last=None,
        native_layout="trtllm",  # convert --engine writes this layout (layouts/table.py)
        versions_read=("1.2",),
        dispatch=Dispatch(
            "trtllm",
            {"*": "Eagle3ForCausalLM"},
            "Eagle3ForCausalLM",
            cite=f"{F}: the class is chosen by the speculative config (EAGLE3 + target arch), "
            "the draft config is read as a flat HF config (assumed: speculators configs are not translated)",
        ),
        classes={"Eagle3ForCausalLM": EAGLE3_CLASS},
        begins="assumed: never run (no TensorRT-LLM wheel installs here: PyPI holds stub sdists only). The loader "
        "(modeling_speculative.py) was read at two commits: b35ac1b6, whose tensorrt_llm/version.py says 1.2.0rc2, and "
        "00679c66 (release not established). At three release tags (1.0.0, 1.1.0, 1.2.0rc2.post1) only the launch-side "
        "EAGLE-3 config (llmapi/llm_args.py, as rendered in the project's versioned docs) could be read: the index holds "
        "no modeling_speculative.py at a tag commit (v1.2.0rc2 = 31116825, v1.1.0rc4 = 62b564ac per "
        "triton-inference-server/tensorrtllm_backend PRs #819 and #796) and the repository (2.5 GB) is over the 500 MiB "
        "snapshot limit, so what each tag's loader does is inferred from the commits on either side",
        reads=(
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
                release="1.2.0rc2.post1 (tag)",
                file="tensorrt_llm/llmapi/llm_args.py (gh-pages 1.2.0rc2.post1/_modules/…/llm_args.html @ b735cce5)",
                shows="the same capture settings (eagle3_layers_to_capture, num_capture_layers else 3); EagleDecodingConfig now "
                "asserts max_draft_len is given and adds static/dynamic draft trees",
            ),
            Read(
                release="commit b35ac1b6 (version.py: 1.2.0rc2)",
                file="tensorrt_llm/_torch/models/modeling_speculative.py",
                shows="Eagle3DraftModel: fc only when num_capture_layers > 1 (bias=config.bias), midlayer a ModuleList "
                "(midlayer.N.*) when num_hidden_layers > 1, d2t int32 only when draft_vocab_size != vocab_size, "
                "embed_tokens only when target_hidden_size != hidden_size, lm_head from the target unless the "
                "checkpoint has one; no input_norm / fc_norm / norm_output yet",
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
