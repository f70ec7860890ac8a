"""P-EAGLE on TensorRT-LLM: none (an absent range)."""

from __future__ import annotations

from ..spec import (
    Dispatch,
    FamilyRange,
)

# --- P-EAGLE: TensorRT-LLM has none --------------------------------------------------------------------------------------
# Read from the repository's stored copies (no release installed): tensorrt_llm/_torch/speculative/ holds eagle3, mtp,
# ngram, draft_target, dflash, dspark, pard, pearl, sa_worker, suffix, … and no P-EAGLE module; no stored TensorRT-LLM
# file found by a search names PEagle, peagle, parallel_drafting or speculators_model_type. Its parallel drafting is PARD
# (decoding_type PARD: llmapi/llm_args.py PARDDecodingConfig, _torch/speculative/pard.py PARDWorker; NVIDIA/TensorRT-LLM
# #11438; listed in the 1.3.0rc13 documentation build): "target-independent: doesn't use target model hidden states",
# a draft LM fed [accepted tokens, mask tokens], with no fc over captured target states and no mask_hidden, so a P-EAGLE
# head (EAGLE-3's fc over target states plus mask_hidden) is no PARD drafter.
RANGES = (
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
