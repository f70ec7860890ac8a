"""P-EAGLE on SGLang: none (an absent range)."""

from __future__ import annotations

from ..spec import (
    Dispatch,
    FamilyRange,
)

# --- P-EAGLE: SGLang has none -------------------------------------------------------------------------------------------
# No file of the 0.4.8.post1 … 0.5.23 wheels names peagle, parallel_drafting, mask_hidden or speculators_model_type (the
# only "Speculators" is a docstring of dflash.py's Laguna class); SpeculativeAlgorithm (spec_info.py) has no parallel
# EAGLE; the feature request is open (sgl-project/sglang#23171). What SGLang does with such a drafter: get_config reads it
# with transformers' AutoConfig (sglang/srt/utils/hf_transformers/config.py @ 0.5.23), which refuses a speculators config
# (no model_type: run with the conformance env's transformers 5.19); and architectures[0] is no SGLang class (the
# conformance harness, 0.4.8.post1 and 0.5.23: no module of sglang/srt/models exports PEagleDraftModel), so
# resolve_transformers_arch raises. Renamed LlamaForCausalLMEagle3 over a flattened config, 0.5.23's llama_eagle3 loads
# it as an EAGLE-3 drafter and skips mask_hidden (and a Qwen3 drafter's q_norm/k_norm) without a word (same run).
SGL_PEAGLE_READ = ("0.4.8.post1", "0.5.1.post3", "0.5.2", "0.5.11", "0.5.16", "0.5.19", "0.5.20", "0.5.23")
RANGES = (
    FamilyRange(
        engine="sglang",
        family="peagle",
        first="0.4.8",
        last=None,
        dispatch=Dispatch("sglang", {}, "", cite="sglang/srt/speculative/spec_info.py SpeculativeAlgorithm; sglang/srt/models EntryClass"),
        classes={},
        begins="no P-EAGLE class, no parallel drafting and no speculators-config reader in any wheel read",
        versions_read=SGL_PEAGLE_READ,
        absent="no file of the "
        f"{', '.join(SGL_PEAGLE_READ)} wheels names peagle, parallel_drafting, mask_hidden or speculators_model_type, and "
        "SpeculativeAlgorithm has no parallel EAGLE (sgl-project/sglang#23171, open); SGLang itself refuses the drafter: "
        "its config has no model_type ('ValueError: Unrecognized model in DRAFT. Should have a `model_type` key in its "
        "config.json', transformers' AutoConfig in sglang/srt/utils/hf_transformers/config.py get_config) and no SGLang "
        "model exports PEagleDraftModel, PEagleSpeculator or Peagle*ForCausalLM ('Cannot find model module. … is not a "
        "registered model in the Transformers library', sglang/srt/model_loader/utils.py resolve_transformers_arch); "
        "renamed LlamaForCausalLMEagle3 it loads as an EAGLE-3 drafter, mask_hidden skipped silently, drafting one "
        "token per forward instead of the block it was trained for",
    ),
)
