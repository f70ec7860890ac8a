"""vLLM's P-EAGLE rows (method eagle3 + parallel_drafting): the EAGLE-3 classes with the mask_hidden buffer, and
RANGES, P-EAGLE's release ranges.
"""

from __future__ import annotations

from ...record import replace
from ..spec import Buffer, Dispatch, DraftClass, FamilyRange, Field, LaunchCheck, Raise, all_agreed
from .common import CFG, REG, F
from .eagle3 import SPEC_REQUIRED, ZOO_CONF, translation
from .eagle3_classes import AT_30, Q3, QWEN3_CLASS, QWEN3_D2T_ALWAYS, V25_CLASS, V32_CLASS

# --- P-EAGLE (method eagle3 + parallel_drafting): the EAGLE-3 classes with the mask_hidden buffer ---------------------
# vLLM 0.27.0 … 0.32.0 (every wheel read): speculators_model_type "peagle" is translated to method eagle3 with
# parallel_drafting true (configs/speculators/base.py build_vllm_speculative_config), architectures Peagle{Llama,Qwen3}
# ForCausalLM by the transformer_layer_config's model_type, pard_token = mask_token_id (algos.py update_peagle: a
# KeyError without it), norm_before_residual defaulting to False (EAGLE-3's translation defaults it to True). With
# parallel drafting the class registers mask_hidden [1, fc input] and load_weights copies the checkpoint's into it.
SPEC_BASE = "vllm/transformers_utils/configs/speculators/base.py"
PEAGLE_AT = "0.27.0 … 0.32.0"
PEAGLE_READ = ("0.27.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0")
PEAGLE_TOKEN = Field("pd_token", ("mask_token_id", "pard_token", "ptd_token_id", "dflash_config.mask_token_id"), None)
NO_MASK_HIDDEN = Raise(
    "not has_mask_hidden",
    "ValueError: mask_hidden not found in weights but model is configured for parallel drafting. Please provide "
    "mask_hidden in the weights.",
    f"{F} and {Q3} Eagle3*ForCausalLM.load_weights (use_parallel_drafting; every release read {PEAGLE_AT})",
)
NO_PD_TOKEN = Raise(
    "pd_token is None",
    "ValueError: For parallel drafting, the draft model config must have `dflash_config.mask_token_id`, `mask_token_id`, "
    "`dspark_noise_token_id`, `pard_token`, or `ptd_token_id` specified in its config.json.",
    f"vllm/v1/spec_decode/llm_base_proposer.py _init_parallel_drafting_params @ 0.32.0 (a speculators config without "
    f"mask_token_id fails earlier: KeyError 'mask_token_id' in {CFG.split(' (')[0]} update_peagle)",
)
MASK_HIDDEN_BUFFER = Buffer(
    "mask_hidden",
    into="mask_hidden",
    why="parallel drafting: copied into the mask_hidden buffer (mask_hidden.copy_(w.view(1, -1)): as many values as fc's input)",
    cite=f"{F} load_weights (use_parallel_drafting)",
)
# What a P-EAGLE launch line does (code L016): parallel_drafting is a SpeculativeConfig field, False unless the line
# sets it (only `vllm serve DRAFT`, the speculators auto-detection, sets it from speculators_model_type "peagle"); Model
# Runner V2 refuses it for EAGLE (VllmConfig._get_v2_model_runner_unsupported_features: "parallel drafting for EAGLE
# speculative decoding"; chosen by VLLM_USE_V2_MODEL_RUNNER=1 it raises, left to the default V1 is kept)
PEAGLE_LAUNCH = (
    LaunchCheck(
        "method == 'EAGLE3' and not parallel",
        "warning",
        'the speculative config has no "parallel_drafting": true, so vLLM runs the P-EAGLE drafter as a plain EAGLE-3 one: '
        "one forward per drafted token instead of one parallel pass over the mask slots, mask_hidden never used "
        "(vLLM sets parallel_drafting itself only when the drafter is served as the model, `vllm serve DRAFT`)",
        f"{SPEC_BASE} @ 0.27.0, 0.29.0, 0.32.0 (peagle → parallel_drafting True, only through maybe_override_with_speculators); "
        "vllm/config/speculative.py (parallel_drafting: bool = False)",
        code="L016",
    ),
    LaunchCheck(
        "parallel and runner == 'V2'",
        "error",
        "ValueError: Model Runner V2 does not yet support: parallel drafting for EAGLE speculative decoding "
        "(VLLM_USE_V2_MODEL_RUNNER=1 with parallel_drafting)",
        "vllm/config/vllm.py @ 0.27.0, 0.29.0, 0.32.0 (_get_v2_model_runner_unsupported_features; use_v2_model_runner raises "
        "when V2 is asked for)",
        code="L016",
    ),
)


def _parallel(cls: DraftClass, file: str, at: str = AT_30) -> DraftClass:
    """The EAGLE-3 class as vLLM builds it with speculative_config.parallel_drafting: mask_hidden is a buffer its loader
    fills (not dropped), and a checkpoint without it, or a config without the masked slots' token, raises."""
    loader = tuple(MASK_HIDDEN_BUFFER if (st.op == "drop" and st.a == "mask_hidden") else st for st in cls.loader)
    assert loader != cls.loader, "the EAGLE-3 loader drops mask_hidden: the parallel class fills it instead"
    return replace(
        cls,
        file=f"{file} @ {at} (parallel_drafting)",
        fields=cls.fields + (PEAGLE_TOKEN,),
        loader=loader,
        raises=cls.raises + (NO_MASK_HIDDEN, NO_PD_TOKEN),
        methods=("EAGLE3",),
        launch_checks=PEAGLE_LAUNCH,
        notes=cls.notes + ("P-EAGLE: num_speculative_tokens - 1 extra query slots per request (parallel drafting)",),
    )


PEAGLE_LLAMA = _parallel(V32_CLASS, F)
PEAGLE_QWEN3 = _parallel(QWEN3_CLASS, Q3)
# 0.27.0 … 0.29: draft_id_to_target_id is always built (zeros = identity when unfilled), as in llama_eagle3.py's era
PEAGLE_LLAMA_27 = _parallel(V25_CLASS, F, "0.27.0 … 0.29.0")
PEAGLE_QWEN3_27 = _parallel(QWEN3_D2T_ALWAYS, Q3, "0.27.0 … 0.29.0")


def _peagle_dispatch() -> Dispatch:
    return Dispatch(
        "vllm",
        {
            "PEagleDraftModel": "Eagle3LlamaForCausalLM",
            "PeagleLlamaForCausalLM": "Eagle3LlamaForCausalLM",
            "PeagleQwen3ForCausalLM": "Eagle3Qwen3ForCausalLM",
        },
        "Eagle3LlamaForCausalLM",
        speculators=True,
        speculators_required=SPEC_REQUIRED,
        speculators_arch_by_model_type={"llama": "PeagleLlamaForCausalLM", "qwen3": "PeagleQwen3ForCausalLM"},
        speculators_defaults={"norm_before_residual": False},
        **translation("PEagle"),  # update_peagle's own words
        cite=f"{REG} @ {PEAGLE_AT}; {CFG.split(' (')[0]} update_peagle; {SPEC_BASE} (peagle → eagle3 + parallel_drafting)",
        # a plain config.json goes through EAGLEConfig with method eagle3, which prefixes Eagle3 to a name that
        # neither starts nor ends with it: only the speculators translation reaches the Peagle* entries
        rewrite_prefix="Eagle3",
        rewrite_note="vLLM rewrites architectures {arch!r} → {rewritten!r} for method eagle3 (a plain config.json; "
        "a speculators config with speculators_model_type 'peagle' keeps the Peagle* name)",
        unknown_message="ValueError: Model architectures {archs} are not supported for method eagle3 (vllm registry: "
        "{arch!r} unknown; P-EAGLE loads from a speculators config with speculators_model_type 'peagle')",
    )


RANGES: tuple[FamilyRange, ...] = (
    FamilyRange(
        engine="vllm",
        family="peagle",
        first="0.27.0",
        last="0.29",
        dispatch=_peagle_dispatch(),
        classes={"Eagle3LlamaForCausalLM": PEAGLE_LLAMA_27, "Eagle3Qwen3ForCausalLM": PEAGLE_QWEN3_27},
        begins=f"the peagle speculators translation, parallel_drafting and the mask_hidden buffer are in every wheel read "
        f"({', '.join(PEAGLE_READ)}); 0.27.0 … 0.29.0 always build draft_id_to_target_id (earlier releases not read)",
        versions_read=("0.27.0", "0.29.0"),
        runs=all_agreed(ZOO_CONF, "2026-12-01", 2, "0.27.0"),
    ),
    FamilyRange(
        engine="vllm",
        family="peagle",
        first="0.30.0",
        last=None,
        dispatch=_peagle_dispatch(),
        classes={"Eagle3LlamaForCausalLM": PEAGLE_LLAMA, "Eagle3Qwen3ForCausalLM": PEAGLE_QWEN3},
        begins=f"{F} and {Q3} build draft_id_to_target_id only for a reduced vocabulary: first in the 0.30.0 wheel",
        versions_read=("0.30.0", "0.31.0", "0.32.0"),
        runs=all_agreed(ZOO_CONF, "2026-12-01", 2, "0.32.0"),
    ),
)
